//! The write plan: what one `remember` does to the room, decided from facts the store
//! gathered, before any row is written.
//!
//! [`crate::resolve::decide`] judges the new text against *one* neighbour; this module
//! combines those verdicts over every neighbour into one [`WritePlan`]: which memories the
//! write supersedes (at most [`MAX_SUPERSEDED`]), which single memory absorbs it (reinforce
//! or merge), which neighbours are offered for judgment and which get semantic links, and
//! the `why` sentence. Keeping the combination here, pure and table-tested, lets the store
//! only gather inputs and apply the plan, and lets a second storage backend reuse every
//! decision unchanged.
//!
//! Exact repeats and topic keys are not planned: they are lookups the store makes inside
//! its write transaction and they win over any plan (DESIGN.md's order: repeat, topic,
//! then the plan's absorb, else a new memory).

use crate::contradiction::Conflict;
use crate::resolve::{self, Bands, Decision, Similarity};
use crate::{Kind, MemoryId, limits, subject};

/// At most this many memories are superseded by one write; further contradicted
/// neighbours are offered for judgment instead.
pub const MAX_SUPERSEDED: usize = 3;

/// At most this many related memories become judgment candidates of one write.
pub const MAX_CANDIDATES: usize = 3;

/// Kinds that are records of a moment, never merged into or superseded by later writes:
/// episodes, handoffs and progress entries (the latest progress entry per feature is its
/// state already).
pub fn participates(kind: Kind) -> bool {
    !matches!(kind, Kind::Episode | Kind::Handoff | Kind::Progress)
}

/// Whether a write is resolved against its neighbours at all: not when its content is
/// already known in the room (an exact repeat), not under a topic key (the topic's memory
/// takes it), not when resolution is off for it, and not for records of a moment.
pub fn resolves(known: bool, has_topic_key: bool, resolve_on: bool, kind: Kind) -> bool {
    !known && !has_topic_key && resolve_on && participates(kind)
}

/// The new write as the planner reads it.
#[derive(Debug, Clone, Copy)]
pub struct Incoming<'a> {
    /// The content after redaction.
    pub content: &'a str,
    pub kind: Kind,
    /// `false` when the caller judges conflicts itself (seed C's protocol): contradicted
    /// memories stay, offered as judgment candidates.
    pub may_supersede: bool,
    /// `false` when the caller's protocol knows only duplicates and new memories (seed
    /// B's: a near-duplicate reinforces, anything else is created): a text that would be
    /// merged into a memory is created beside it, linked and offered instead.
    pub may_merge: bool,
    /// `Some(title)`: only a memory with this title and the write's kind may take the
    /// write as a repeat (seed C's dedupe key is content, title and type: the same text
    /// saved under another title is another observation); any other near copy is created
    /// beside it and offered for judgment. `None`: any near copy reinforces.
    pub fold_only_titled: Option<&'a str>,
}

/// One active memory near the new text, as the store found it.
#[derive(Debug, Clone, Copy)]
pub struct NeighbourFacts<'a> {
    pub id: MemoryId,
    pub content: &'a str,
    pub kind: Kind,
    pub sim: Similarity,
    /// One number to order by and to weight links with: the stronger measure, 0–1.
    pub closeness: f64,
    pub title: Option<&'a str>,
}

impl Incoming<'_> {
    /// Whether neighbour `n` may take this write as a repeat ([`Incoming::fold_only_titled`]).
    pub fn may_fold_into(&self, n: &NeighbourFacts<'_>) -> bool {
        self.fold_only_titled
            .is_none_or(|t| n.kind == self.kind && n.title.is_some_and(|nt| same_title(nt, t)))
    }
}

/// Titles equal after trimming and case folding (C compared them as typed; a stray space
/// or capital letter makes no new observation here).
pub fn same_title(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// The memory that takes the write instead of a new one.
#[derive(Debug, Clone, PartialEq)]
pub struct Absorb {
    pub target: MemoryId,
    /// `Some(text)`: merge, the memory's content becomes `text`; `None`: reinforce.
    pub merged: Option<String>,
}

/// What one write does, decided before the transaction. The store applies it: an absorb
/// whose target is still active wins; otherwise a new memory is created, linked to
/// `links`, superseding `supersede` (those still active), with judgments opened from
/// `related`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WritePlan {
    /// Memories the new one replaces, nearest first, each with the contradiction found.
    pub supersede: Vec<(MemoryId, Conflict)>,
    pub absorb: Option<Absorb>,
    /// Memories to offer for judgment, with their closeness, in order.
    pub related: Vec<(MemoryId, f64)>,
    /// Neighbours that get semantic links (both ways) from a new memory, with closeness.
    pub links: Vec<(MemoryId, f64)>,
    /// What resolution read against the nearest neighbour and why the action followed.
    pub why: Option<String>,
}

impl WritePlan {
    /// The judgment candidates for the memory the write landed on: the related memories
    /// other than `target` itself, at most [`MAX_CANDIDATES`].
    pub fn judgments(&self, target: MemoryId) -> Vec<(MemoryId, f64)> {
        self.related
            .iter()
            .copied()
            .filter(|r| r.0 != target)
            .take(MAX_CANDIDATES)
            .collect()
    }
}

/// Combines the per-neighbour verdicts into one plan. `neighbours` come closest first;
/// `max_links` caps the semantic links (the `max_semantic_links` setting).
pub fn plan(
    incoming: Incoming<'_>,
    neighbours: &[NeighbourFacts<'_>],
    bands: &Bands,
    max_links: usize,
) -> WritePlan {
    let mut p = WritePlan::default();
    let reading = subject::read(incoming.content);
    for n in neighbours {
        let d = resolve::decide(
            n.content,
            incoming.content,
            n.sim,
            bands,
            n.kind == incoming.kind,
        );
        if p.why.is_none() {
            p.why = Some(resolve::why(&d, n.id, n.content, incoming.content, n.sim));
        }
        if !matches!(d, Decision::Unrelated) {
            p.links.push((n.id, n.closeness));
        }
        match d {
            // One write retires one memory of a slot; a second only when both name the
            // write's own subject and slot (the rest are offered to judge, never retired).
            Decision::Supersede { conflict }
                if p.supersede.is_empty()
                    || (p.supersede.len() < MAX_SUPERSEDED
                        && subject::same_subject_and_slot(&subject::read(n.content), &reading)) =>
            {
                p.supersede.push((n.id, conflict))
            }
            // Under seed C's key a near copy with another title is its own memory.
            Decision::Reinforce | Decision::Merge { .. } if !incoming.may_fold_into(n) => {
                if p.related.is_empty() && p.absorb.is_none() {
                    p.why = p
                        .why
                        .map(|w| format!("{w}; kept apart: #{} has another title or kind", n.id));
                }
                p.related.push((n.id, n.closeness));
            }
            Decision::Reinforce if p.absorb.is_none() => {
                p.absorb = Some(Absorb {
                    target: n.id,
                    merged: None,
                })
            }
            // A merge that would outgrow the content limit stores the text apart.
            Decision::Merge { text }
                if incoming.may_merge
                    && p.absorb.is_none()
                    && limits::check_content("content", &text).is_ok() =>
            {
                p.absorb = Some(Absorb {
                    target: n.id,
                    merged: Some(text),
                })
            }
            Decision::Unrelated => {}
            _ => p.related.push((n.id, n.closeness)),
        }
    }
    // A caller that judges conflicts itself gets them as candidates instead.
    if !incoming.may_supersede {
        if !p.supersede.is_empty() {
            p.why = p
                .why
                .map(|w| format!("left for judgment (this caller judges conflicts): {w}"));
        }
        for (id, _) in p.supersede.drain(..) {
            let closeness = neighbours
                .iter()
                .find(|n| n.id == id)
                .map_or(0.0, |n| n.closeness);
            p.related.push((id, closeness));
        }
    }
    // The latest truth wins over a merge.
    if !p.supersede.is_empty()
        && let Some(a) = p.absorb.take()
    {
        p.related.push((a.target, 0.0));
    }
    p.links.truncate(max_links);
    p
}

/// What a planned merge writes once the write transaction sees the memory's content.
#[derive(Debug, Clone, PartialEq)]
pub enum MergeNow {
    /// The memory's content becomes this text.
    Write(String),
    /// The current content already says what the write adds: strengthen it.
    Reinforce,
    /// The merge would outgrow the content limit: store the write as a new memory.
    Apart,
}

/// The merge to write when the memory's content is `current` in the write transaction.
/// The plan built `planned` from the content read before it; another writer may have
/// merged in between (eight agents adding details at once). A planned text always holds
/// every term of the content it was built from, so one that misses some of `current`'s
/// terms was built from an older text: the merge is rebuilt from `current`, so no
/// writer's words leave the active content.
pub fn merge_now(current: &str, planned: &str, incoming: &str) -> MergeNow {
    if resolve::terms(current).is_subset(&resolve::terms(planned)) {
        return MergeNow::Write(planned.to_string());
    }
    // The plan already judged the write worth merging: any word the current text lacks
    // is kept (against the newer text it may add a single one).
    if resolve::terms(incoming).is_subset(&resolve::terms(current)) {
        return MergeNow::Reinforce;
    }
    let text = resolve::compose(current, incoming);
    if limits::check_content("content", &text).is_ok() {
        MergeNow::Write(text)
    } else {
        MergeNow::Apart
    }
}

/// The memory's tags followed by the new ones it lacks.
pub fn union_tags(old: &[String], new: &[String]) -> Vec<String> {
    let mut all = old.to_vec();
    for t in new {
        if !all.contains(t) {
            all.push(t.clone());
        }
    }
    all
}

/// The word an absorbed write's evidence row records.
pub fn evidence_action(merged: bool) -> &'static str {
    if merged { "merge" } else { "reinforce" }
}

/// The detail of the reinforce event an absorbing memory gets (`explain` shows it).
pub fn absorb_event_detail(merged: bool, why: Option<&str>) -> String {
    let what = if merged {
        "merged a similar remember"
    } else {
        "similar remember"
    };
    format!("{what}: {}", why.unwrap_or(""))
}

/// The detail of the correction event a superseded memory gets.
pub fn superseded_detail(by: MemoryId, conflict: &Conflict) -> String {
    format!("superseded by #{by}: {}", conflict.cue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contradiction::ConflictKind;

    /// A neighbour with the given measures (`contained` 0 unless said).
    fn n<'a>(id: MemoryId, content: &'a str, lexical: f64, closeness: f64) -> NeighbourFacts<'a> {
        NeighbourFacts {
            id,
            content,
            kind: Kind::Fact,
            sim: Similarity {
                lexical,
                contained: 0.0,
                cosine: None,
            },
            closeness,
            title: None,
        }
    }

    fn contained(mut f: NeighbourFacts<'_>, c: f64) -> NeighbourFacts<'_> {
        f.sim.contained = c;
        f
    }

    fn fact(content: &str) -> Incoming<'_> {
        Incoming {
            content,
            kind: Kind::Fact,
            may_supersede: true,
            may_merge: true,
            fold_only_titled: None,
        }
    }

    fn run(incoming: Incoming<'_>, neighbours: &[NeighbourFacts<'_>]) -> WritePlan {
        plan(incoming, neighbours, &Bands::default(), 5)
    }

    fn ids(v: &[(MemoryId, f64)]) -> Vec<MemoryId> {
        v.iter().map(|r| r.0).collect()
    }

    fn superseded(p: &WritePlan) -> Vec<MemoryId> {
        p.supersede.iter().map(|s| s.0).collect()
    }

    const DB_OLD: &str = "The project database is PostgreSQL.";
    const DB_NEW: &str = "We switched from PostgreSQL to SQLite for the project database.";

    /// One row per situation: the neighbours the store found and the plan expected.
    struct Row {
        name: &'static str,
        incoming: Incoming<'static>,
        neighbours: Vec<NeighbourFacts<'static>>,
        supersede: Vec<MemoryId>,
        absorb: Option<(MemoryId, bool)>,
        related: Vec<MemoryId>,
        links: Vec<MemoryId>,
        why_starts: Option<&'static str>,
    }

    /// Absorbing rows: nothing near, a repeat, an elaboration.
    fn absorbing_rows() -> Vec<Row> {
        vec![
            Row {
                name: "no neighbours: a new memory, nothing compared",
                incoming: fact("Deploys use Docker."),
                neighbours: vec![],
                supersede: vec![],
                absorb: None,
                related: vec![],
                links: vec![],
                why_starts: None,
            },
            Row {
                name: "near repeat reinforces the nearest",
                incoming: fact("The API uses JWT tokens!"),
                neighbours: vec![n(7, "The API uses JWT tokens.", 1.0, 1.0)],
                supersede: vec![],
                absorb: Some((7, false)),
                related: vec![],
                links: vec![7],
                why_starts: Some("repeats #7 in other words"),
            },
            Row {
                name: "an elaboration merges",
                incoming: fact(
                    "The API uses JWT tokens. They expire after fifteen minutes and refresh silently.",
                ),
                neighbours: vec![contained(n(3, "The API uses JWT tokens.", 0.7, 0.7), 1.0)],
                supersede: vec![],
                absorb: Some((3, true)),
                related: vec![],
                links: vec![3],
                why_starts: Some("adds detail to #3"),
            },
            Row {
                name: "a caller that never merges gets the elaboration beside, offered",
                incoming: Incoming {
                    may_merge: false,
                    fold_only_titled: None,
                    ..fact(
                        "The API uses JWT tokens. They expire after fifteen minutes and refresh silently.",
                    )
                },
                neighbours: vec![contained(n(3, "The API uses JWT tokens.", 0.7, 0.7), 1.0)],
                supersede: vec![],
                absorb: None,
                related: vec![3],
                links: vec![3],
                why_starts: Some("adds detail to #3"),
            },
        ]
    }

    #[test]
    fn one_write_retires_one_memory_of_other_subjects_at_most() {
        let olds = [
            "Project Falcon uses PostgreSQL.",
            "Project Osprey uses PostgreSQL.",
            "Project Kestrel uses PostgreSQL.",
        ];
        let ns: Vec<_> = olds
            .iter()
            .enumerate()
            .map(|(i, c)| n(i as MemoryId + 1, c, 0.4, 0.9 - i as f64 / 10.0))
            .collect();
        let p = plan(
            fact("The Heron prototype moved from PostgreSQL to SQLite."),
            &ns,
            &Bands::default(),
            5,
        );
        assert!(p.supersede.len() <= 1, "{:?}", p.supersede);
        // Every contradicted memory not retired is offered to judge.
        assert_eq!(p.supersede.len() + p.related.len(), 3, "{p:?}");
    }

    #[test]
    fn a_merge_planned_on_an_older_text_is_rebuilt_from_the_current_one() {
        let base = "The nightly deploy runs on Fridays from the main branch";
        let mine = "The nightly deploy runs on Fridays from the main branch, checked by amber";
        let planned = resolve::merge_text(base, mine).unwrap();
        // Nobody wrote in between: the planned text stands.
        assert_eq!(
            merge_now(base, &planned, mine),
            MergeNow::Write(planned.clone())
        );
        // Another writer merged "birch" first: both details end in the content.
        let current = format!("{base}\n\nchecked by birch and birchbot");
        match merge_now(&current, &planned, mine) {
            MergeNow::Write(t) => assert!(t.contains("birchbot") && t.contains("amber"), "{t}"),
            other => panic!("{other:?}"),
        }
        // The current text already holds the write's words: a reinforce.
        let holds = format!("{mine} and birch");
        assert_eq!(merge_now(&holds, &planned, mine), MergeNow::Reinforce);
        // Rebuilt past the content limit: stored apart, never cut.
        let long = format!("{base} {}", "word ".repeat(limits::MAX_CONTENT_BYTES / 5));
        assert_eq!(merge_now(&long, &planned, mine), MergeNow::Apart);
    }

    /// Superseding rows: one, several, over an absorb, and the caller that judges itself.
    fn superseding_rows() -> Vec<Row> {
        vec![
            Row {
                name: "a contradiction supersedes one",
                incoming: fact(DB_NEW),
                neighbours: vec![n(4, DB_OLD, 0.5, 0.5)],
                supersede: vec![4],
                absorb: None,
                related: vec![],
                links: vec![4],
                why_starts: Some("replaces #4: ChangeOfState"),
            },
            Row {
                name: "a change whose slot is unread retires one memory, offers the rest",
                incoming: fact(DB_NEW),
                neighbours: vec![n(1, DB_OLD, 0.5, 0.9), n(2, DB_OLD, 0.5, 0.8)],
                supersede: vec![1],
                absorb: None,
                related: vec![2],
                links: vec![1, 2],
                why_starts: Some("replaces #1"),
            },
            Row {
                name: "supersede several of one subject and slot: three at most, the fourth is offered",
                incoming: fact("The project database is now SQLite."),
                neighbours: vec![
                    n(1, DB_OLD, 0.5, 0.9),
                    n(2, DB_OLD, 0.5, 0.8),
                    n(3, DB_OLD, 0.5, 0.7),
                    n(4, DB_OLD, 0.5, 0.6),
                ],
                supersede: vec![1, 2, 3],
                absorb: None,
                related: vec![4],
                links: vec![1, 2, 3, 4],
                why_starts: Some("replaces #1"),
            },
            Row {
                name: "the latest truth wins over a reinforce",
                incoming: fact(DB_NEW),
                neighbours: vec![
                    n(
                        9,
                        "We switched from PostgreSQL to SQLite for the project database!",
                        1.0,
                        1.0,
                    ),
                    n(4, DB_OLD, 0.5, 0.5),
                ],
                supersede: vec![4],
                absorb: None,
                related: vec![9],
                links: vec![9, 4],
                why_starts: Some("repeats #9"),
            },
            Row {
                name: "compat-c: the caller judges, conflicts become candidates",
                incoming: Incoming {
                    may_supersede: false,
                    may_merge: true,
                    fold_only_titled: None,
                    ..fact(DB_NEW)
                },
                neighbours: vec![n(4, DB_OLD, 0.5, 0.5)],
                supersede: vec![],
                absorb: None,
                related: vec![4],
                links: vec![4],
                why_starts: Some("left for judgment (this caller judges conflicts): replaces #4"),
            },
        ]
    }

    /// Rows that store a new memory beside its neighbours.
    fn relating_rows() -> Vec<Row> {
        vec![
            Row {
                name: "compat-c without a conflict: why unchanged",
                incoming: Incoming {
                    may_supersede: false,
                    may_merge: true,
                    fold_only_titled: None,
                    ..fact("Docker images are built in CI.")
                },
                neighbours: vec![n(5, "Deploys use Docker.", 0.35, 0.35)],
                supersede: vec![],
                absorb: None,
                related: vec![5],
                links: vec![5],
                why_starts: Some("related to #5"),
            },
            Row {
                name: "identifier guard: other ids are another thing, related not merged",
                incoming: fact("Invoice INV-1002 was paid by bank transfer."),
                neighbours: vec![n(
                    6,
                    "Invoice INV-1001 was paid by bank transfer.",
                    0.7,
                    0.7,
                )],
                supersede: vec![],
                absorb: None,
                related: vec![6],
                links: vec![6],
                why_starts: Some("about another thing than #6: its identifiers differ"),
            },
            Row {
                name: "related neighbours link and are offered; unrelated ones neither",
                incoming: fact("Docker images are built in CI."),
                neighbours: vec![
                    n(5, "Deploys use Docker.", 0.35, 0.35),
                    n(8, "Lunch is at noon.", 0.0, 0.0),
                ],
                supersede: vec![],
                absorb: None,
                related: vec![5],
                links: vec![5],
                why_starts: Some("related to #5 but neither"),
            },
            Row {
                name: "only unrelated: why names the nearest, nothing linked",
                incoming: fact("Docker images are built in CI."),
                neighbours: vec![n(8, "Lunch is at noon.", 0.05, 0.05)],
                supersede: vec![],
                absorb: None,
                related: vec![],
                links: vec![],
                why_starts: Some("nothing close enough (nearest #8)"),
            },
            Row {
                name: "a second repeat is offered, not absorbed",
                incoming: fact("The API uses JWT tokens!"),
                neighbours: vec![
                    n(1, "The API uses JWT tokens.", 1.0, 1.0),
                    n(2, "The API uses JWT tokens?", 1.0, 0.9),
                ],
                supersede: vec![],
                absorb: Some((1, false)),
                related: vec![2],
                links: vec![1, 2],
                why_starts: Some("repeats #1"),
            },
            Row {
                name: "under C's key a near copy titled otherwise is kept apart",
                incoming: Incoming {
                    fold_only_titled: Some("Auth tokens"),
                    ..fact("The API uses JWT tokens!")
                },
                neighbours: vec![
                    NeighbourFacts {
                        title: Some("Login flow"),
                        ..n(1, "The API uses JWT tokens.", 1.0, 1.0)
                    },
                    NeighbourFacts {
                        title: Some(" auth TOKENS"),
                        ..n(2, "The API uses JWT tokens.", 1.0, 0.9)
                    },
                ],
                supersede: vec![],
                absorb: Some((2, false)),
                related: vec![1],
                links: vec![1, 2],
                why_starts: Some("repeats #1"),
            },
            Row {
                name: "another kind never absorbs",
                incoming: Incoming {
                    kind: Kind::Decision,
                    ..fact("The API uses JWT tokens!")
                },
                neighbours: vec![n(1, "The API uses JWT tokens.", 1.0, 1.0)],
                supersede: vec![],
                absorb: None,
                related: vec![1],
                links: vec![1],
                why_starts: Some("related to #1"),
            },
        ]
    }

    #[test]
    fn plans_match_the_table() {
        let rows = [absorbing_rows(), superseding_rows(), relating_rows()];
        for row in rows.into_iter().flatten() {
            let p = run(row.incoming, &row.neighbours);
            assert_eq!(superseded(&p), row.supersede, "{}: supersede", row.name);
            assert_eq!(
                p.absorb.as_ref().map(|a| (a.target, a.merged.is_some())),
                row.absorb,
                "{}: absorb",
                row.name
            );
            assert_eq!(ids(&p.related), row.related, "{}: related", row.name);
            assert_eq!(ids(&p.links), row.links, "{}: links", row.name);
            match (row.why_starts, &p.why) {
                (None, None) => {}
                (Some(w), Some(got)) => assert!(got.starts_with(w), "{}: why {got}", row.name),
                (w, got) => panic!("{}: why {got:?}, expected {w:?}", row.name),
            }
        }
    }

    #[test]
    fn supersession_keeps_the_conflict_and_the_absorbed_is_offered_at_zero() {
        let p = run(
            fact(DB_NEW),
            &[
                n(
                    9,
                    "We switched from PostgreSQL to SQLite for the project database!",
                    1.0,
                    1.0,
                ),
                n(4, DB_OLD, 0.5, 0.5),
            ],
        );
        assert_eq!(p.supersede[0].1.kind, ConflictKind::ChangeOfState);
        assert_eq!(p.related, vec![(9, 0.0)]);
    }

    #[test]
    fn compat_c_candidates_keep_their_closeness() {
        let p = run(
            Incoming {
                may_supersede: false,
                may_merge: true,
                fold_only_titled: None,
                ..fact(DB_NEW)
            },
            &[n(4, DB_OLD, 0.5, 0.42)],
        );
        assert_eq!(p.related, vec![(4, 0.42)]);
    }

    #[test]
    fn a_merge_over_the_content_limit_stores_the_text_apart() {
        // Appending would pass the content limit: the neighbour is related instead.
        let filler = "lorem ipsum dolor sit amet ".repeat(limits::MAX_CONTENT_BYTES / 50);
        let old: &'static str = Box::leak(format!("alpha beta gamma {filler}").into_boxed_str());
        let new: &'static str =
            Box::leak(format!("{filler} delta epsilon zeta eta theta").into_boxed_str());
        let p = run(fact(new), &[contained(n(2, old, 0.7, 0.7), 0.95)]);
        assert_eq!(p.absorb, None);
        assert_eq!(ids(&p.related), vec![2]);
        assert!(p.why.unwrap().starts_with("adds detail to #2"));
    }

    #[test]
    fn links_are_capped() {
        let neighbours: Vec<_> = (1..=8)
            .map(|i| n(i, "Deploys use Docker.", 0.35, 0.35))
            .collect();
        let p = plan(
            fact("Docker images are built in CI."),
            &neighbours,
            &Bands::default(),
            5,
        );
        assert_eq!(ids(&p.links), vec![1, 2, 3, 4, 5]);
        assert_eq!(p.related.len(), 8);
    }

    #[test]
    fn judgments_skip_the_target_and_stop_at_three() {
        let p = WritePlan {
            related: vec![(1, 0.5), (2, 0.4), (3, 0.3), (4, 0.2), (5, 0.1)],
            ..WritePlan::default()
        };
        assert_eq!(ids(&p.judgments(2)), vec![1, 3, 4]);
        assert_eq!(ids(&p.judgments(99)), vec![1, 2, 3]);
    }

    #[test]
    fn what_is_resolved_at_all() {
        // (known, topic key, resolve on, kind) → resolved?
        let rows = [
            (false, false, true, Kind::Fact, true),
            (true, false, true, Kind::Fact, false),
            (false, true, true, Kind::Fact, false),
            (false, false, false, Kind::Fact, false),
            (false, false, true, Kind::Episode, false),
            (false, false, true, Kind::Handoff, false),
            (false, false, true, Kind::Progress, false),
            (false, false, true, Kind::Decision, true),
        ];
        for (known, topic, on, kind, want) in rows {
            assert_eq!(
                resolves(known, topic, on, kind),
                want,
                "{known} {topic} {on} {kind:?}"
            );
        }
    }

    #[test]
    fn texts() {
        assert_eq!(
            union_tags(&["a".into(), "b".into()], &["b".into(), "c".into()]),
            vec!["a", "b", "c"]
        );
        assert_eq!(evidence_action(true), "merge");
        assert_eq!(evidence_action(false), "reinforce");
        assert_eq!(
            absorb_event_detail(true, Some("adds detail to #3")),
            "merged a similar remember: adds detail to #3"
        );
        assert_eq!(absorb_event_detail(false, None), "similar remember: ");
        let c = Conflict {
            kind: ConflictKind::ValueChange,
            cue: "5 → 3".into(),
            named: false,
        };
        assert_eq!(superseded_detail(12, &c), "superseded by #12: 5 → 3");
    }
}
