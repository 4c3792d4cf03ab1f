//! Read time backs up write time. When `remember` was unsure (it stored a write beside
//! an older memory and offered the pair to judge), both stay active, and a recall could
//! put the stale fact first. Here, among the hits a recall (or the briefing) returns,
//! active memories of one room that set the same subject's same slot to other values
//! ([`subject::same_slot_other_value`]) are *conflicting*: the newer is shown above the
//! older and each names the others. Pure: the engine hands in the hits in ranked order
//! with their texts and times, and applies the order and the names this module returns.
//!
//! Only the places the conflicting hits already hold are reassigned, newest first:
//! unrelated hits never move, and a hit never rises above where its group's best-ranked
//! member stood. Nothing is hidden: the older keeps its place in the list below the newer.

use crate::subject::{self, Reading};
use crate::{MemoryId, Millis};
use std::collections::HashMap;

/// One hit as the conflict check needs it.
#[derive(Debug, Clone, Copy)]
pub struct Stated<'a> {
    pub id: MemoryId,
    /// The memory's content; its first sentence is read.
    pub text: &'a str,
    /// The room: "the project uses Jest" in one room and "… Vitest" in another are two
    /// projects.
    pub room: &'a str,
    /// When the statement became true (`valid_from`): the later one is the newer.
    pub at: Millis,
    /// Only active memories conflict: a superseded one already names its successor
    /// (`ranking::successors_first`), an archived one is not current.
    pub active: bool,
}

impl<'a> Stated<'a> {
    /// A memory as the check reads it. An episode (a turn of a conversation, as said
    /// then) records what was said, not what is true now: it never conflicts, so a chat
    /// log's many first-person turns are not reordered by date. Nor does a handoff: each
    /// records where one session stood (tester-a: every handoff conflicted with the rest).
    pub fn of(m: &'a crate::Memory) -> Stated<'a> {
        Stated {
            id: m.id,
            text: &m.content,
            room: &m.room,
            at: m.valid_from,
            active: m.tier == crate::Tier::Active
                && !matches!(m.kind, crate::Kind::Episode | crate::Kind::Handoff),
        }
    }
}

/// What [`newer_first`] decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Resolved {
    /// Indices into the input, in the order to show.
    pub order: Vec<usize>,
    /// For each input index: the ids of the hits it conflicts with, ascending.
    pub conflicts_with: Vec<Vec<MemoryId>>,
}

/// Whether two statements conflict: one room, one subject's one slot, other values, and
/// no identifier outside the values that tells them apart ("release v1.4.2's notes" and
/// "release v1.5.0's notes" are two releases).
pub fn conflict(a: &Stated<'_>, ra: &Reading, b: &Stated<'_>, rb: &Reading) -> bool {
    a.active
        && b.active
        && a.id != b.id
        && a.room == b.room
        && subject::same_slot_other_value(ra, rb)
        && !crate::contradiction::numbers_differ(
            &subject::without_value(a.text, ra),
            &subject::without_value(b.text, rb),
        )
}

/// Whether two memories state one subject's one slot with other values ([`conflict`]),
/// for callers that hold two memories rather than a ranked list: consolidation never folds
/// such a pair into one, whatever their words share ("My editor is Vim" / "… Helix").
pub fn memories_conflict(a: &crate::Memory, b: &crate::Memory) -> bool {
    let (sa, sb) = (Stated::of(a), Stated::of(b));
    conflict(&sa, &subject::read(sa.text), &sb, &subject::read(sb.text))
}

/// Orders conflicting hits newest first within the places they hold and names, for each
/// hit, the others it conflicts with. `hits` is in ranked order. Hits that conflict
/// through a third one (Jest, then Vitest, then Jest again) form one group, ordered by
/// time alone; ties keep the higher id (written later) first.
pub fn newer_first(hits: &[Stated<'_>]) -> Resolved {
    let readings: Vec<Reading> = hits.iter().map(|h| subject::read(h.text)).collect();
    // Only readings with one slot can conflict: compare within each slot's bucket.
    let mut buckets: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, r) in readings.iter().enumerate() {
        if let (true, Some(key)) = (hits[i].active, subject::slot_key(r)) {
            buckets.entry(key).or_default().push(i);
        }
    }
    let mut conflicts_with: Vec<Vec<MemoryId>> = vec![Vec::new(); hits.len()];
    let mut group: Vec<usize> = (0..hits.len()).collect();
    for members in buckets.values() {
        for (k, &i) in members.iter().enumerate() {
            for &j in &members[k + 1..] {
                if conflict(&hits[i], &readings[i], &hits[j], &readings[j]) {
                    conflicts_with[i].push(hits[j].id);
                    conflicts_with[j].push(hits[i].id);
                    join(&mut group, i, j);
                }
            }
        }
    }
    for ids in &mut conflicts_with {
        ids.sort_unstable();
        ids.dedup();
    }
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, ids) in conflicts_with.iter().enumerate() {
        if !ids.is_empty() {
            groups.entry(root(&mut group, i)).or_default().push(i);
        }
    }
    let mut order: Vec<usize> = (0..hits.len()).collect();
    for mut members in groups.into_values() {
        // `members` is ascending: the places the group holds, best-ranked first.
        let places = members.clone();
        members.sort_by_key(|&x| std::cmp::Reverse((hits[x].at, hits[x].id)));
        for (place, member) in places.into_iter().zip(members) {
            order[place] = member;
        }
    }
    Resolved {
        order,
        conflicts_with,
    }
}

/// The current facts among `hits` (in ranked order), for the briefing: [`newer_first`]'s
/// order without each hit that conflicts with a newer one, each kept hit with the older
/// ones it conflicts with. `(index into hits, older ids ascending)`.
pub fn current(hits: &[Stated<'_>]) -> Vec<(usize, Vec<MemoryId>)> {
    let resolved = newer_first(hits);
    let when: HashMap<MemoryId, (Millis, MemoryId)> =
        hits.iter().map(|h| (h.id, (h.at, h.id))).collect();
    resolved
        .order
        .into_iter()
        .filter_map(|i| {
            let me = (hits[i].at, hits[i].id);
            let others = &resolved.conflicts_with[i];
            let newer = |id: &MemoryId| when.get(id).is_some_and(|w| *w > me);
            (!others.iter().any(newer)).then(|| (i, others.clone()))
        })
        .collect()
}

fn root(group: &mut [usize], mut i: usize) -> usize {
    while group[i] != i {
        group[i] = group[group[i]];
        i = group[i];
    }
    i
}

fn join(group: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (root(group, a), root(group, b));
    if ra != rb {
        group[ra.max(rb)] = ra.min(rb);
    }
}

#[cfg(test)]
#[path = "conflicts_tests.rs"]
mod tests;
