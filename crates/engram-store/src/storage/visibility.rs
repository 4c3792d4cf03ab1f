//! Who sees what on a team server: the one place visibility is enforced.
//!
//! [`Visible`] wraps the store's backend and implements the whole storage interface
//! ([`Reads`], [`Tx`], [`CandidateSource`], [`Backend`]) over it. With no viewer (local
//! use, the server's own admin commands) every call passes straight through. With a
//! [`Viewer`] (a team user's call, set by `Store::as_viewer` for exactly that call) every
//! answer leaves out the memories the viewer may not see, as if they did not exist:
//!
//! * rows are checked with the core rule (`engram_core::team::visible_to`), and ids
//!   against the viewer's hidden set (`Reads::private_of_others`, read once per call);
//! * candidate searches get the hidden ids in their [`Filter`] (`Filter::hidden`), so the
//!   backend's own query skips them and a top-`k` is still `k` visible memories; link walks,
//!   coverage and cosines drop them;
//! * limited lists ask the backend for `limit + hidden` rows and cut after filtering, so
//!   a page is as full as it would be without the hidden rows;
//! * counts (`live_count`, tallies, rooms, days) subtract the hidden rows they counted;
//! * links, events, revisions, evidence and judgments of a hidden memory are empty, and a
//!   link or judgment whose other end is hidden is left out;
//! * writes stamp the viewer as the new memory's author, and a write aimed at a hidden
//!   id fails as "not found", exactly like a missing one.
//!
//! Because every engine operation reaches storage only through `Store::reads`,
//! `Store::write` and `Store::candidates`, and those three are this wrapper, no
//! operation can forget the rule: a new `Reads` method does not compile until it is
//! written here too.

use super::candidates::{CandidateSource, Filter};
use super::rows::*;
use super::{Backend, Reads, Tx};
use crate::{Error, Result};
use engram_core::dynamics::Trace;
use engram_core::memory::IdRef;
use engram_core::scoring::{Candidates, Edge};
use engram_core::text::QueryPlan;
use engram_core::{LinkKind, Memory, MemoryId, Millis, Tier};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// A team user for the span of one call, with the memories they may not see.
#[derive(Debug, Clone)]
pub struct Viewer {
    pub name: String,
    /// Other users' private memories (and private ones without an author), by id.
    hidden: HashMap<MemoryId, Memory>,
}

impl Viewer {
    /// Reads `name`'s hidden set from the store as it is now.
    pub fn load(r: &dyn Reads, name: &str) -> Result<Viewer> {
        let hidden = r
            .private_of_others(name)?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        Ok(Viewer {
            name: name.to_string(),
            hidden,
        })
    }

    fn sees(&self, m: &Memory) -> bool {
        !self.hidden.contains_key(&m.id) && engram_core::team::visible_to(Some(&self.name), m)
    }

    fn sees_id(&self, id: MemoryId) -> bool {
        !self.hidden.contains_key(&id)
    }

    fn hidden_ids(&self) -> Vec<MemoryId> {
        let mut ids: Vec<MemoryId> = self.hidden.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Hidden memories outside the trash.
    fn live(&self) -> impl Iterator<Item = &Memory> {
        self.hidden.values().filter(|m| m.tier != Tier::Trash)
    }

    /// How many more rows to ask for so that `limit` visible ones survive the filter.
    fn widen(&self, limit: usize) -> usize {
        limit.saturating_add(self.hidden.len())
    }

    fn filter_memories(&self, mut v: Vec<Memory>, limit: usize) -> Vec<Memory> {
        v.retain(|m| self.sees(m));
        v.truncate(limit);
        v
    }

    fn filter(&self, f: &Filter) -> Filter {
        let mut f = f.clone();
        f.hidden.extend(self.hidden_ids());
        f
    }

    fn link_ok(&self, l: &LinkView) -> bool {
        self.sees_id(l.src) && self.sees_id(l.dst)
    }

    fn judgment_ok(&self, j: &Judgment) -> bool {
        self.sees_id(j.src) && self.sees_id(j.dst)
    }

    fn row_ok(&self, row: &StoredRow) -> bool {
        match row {
            StoredRow::Memory { memory, .. } => self.sees(memory),
            StoredRow::Revision { memory_id, .. }
            | StoredRow::Evidence { memory_id, .. }
            | StoredRow::Event { memory_id, .. } => self.sees_id(*memory_id),
            StoredRow::Link(l) => self.sees_id(l.src) && self.sees_id(l.dst),
            StoredRow::Judgment(j) => self.sees_id(j.src) && self.sees_id(j.dst),
            StoredRow::Session(_) | StoredRow::Prompt(_) => true,
        }
    }

    /// A write aimed at a hidden memory fails as a missing one would.
    fn check_write(&self, id: MemoryId) -> Result<()> {
        if self.sees_id(id) {
            Ok(())
        } else {
            Err(Error::not_found("id", format!("#{id}")))
        }
    }
}

fn subtract(counts: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    if let Some(c) = counts.get_mut(key) {
        *c = c.saturating_sub(n);
        if *c == 0 {
            counts.remove(key);
        }
    }
}

/// The storage the engine sees: the backend, filtered for the viewer when there is one.
pub struct Visible {
    inner: Box<dyn Backend>,
    viewer: Option<Viewer>,
}

impl Visible {
    pub fn new(inner: Box<dyn Backend>) -> Visible {
        Visible {
            inner,
            viewer: None,
        }
    }

    /// Sets (or with `None` clears) the viewer. Callers go through `Store::as_viewer`,
    /// which clears it again whatever the call returned.
    pub fn set_viewer(&mut self, viewer: Option<Viewer>) {
        self.viewer = viewer;
    }

    pub fn viewer(&self) -> Option<&Viewer> {
        self.viewer.as_ref()
    }

    /// The backend itself, unfiltered (loading a viewer's hidden set).
    pub fn unfiltered(&self) -> &dyn Reads {
        &*self.inner
    }

    fn parts(&self) -> (&dyn Reads, Option<&Viewer>) {
        (&*self.inner, self.viewer.as_ref())
    }

    fn hidden_embedded(&self, v: &Viewer) -> u64 {
        self.inner
            .vectors(&v.hidden_ids())
            .map(|m| m.len() as u64)
            .unwrap_or(0)
    }
}

/// A write transaction seen through a viewer.
struct VisibleTx<'a> {
    tx: &'a mut dyn Tx,
    viewer: Option<&'a Viewer>,
}

impl VisibleTx<'_> {
    fn parts(&self) -> (&dyn Reads, Option<&Viewer>) {
        (&*self.tx, self.viewer)
    }

    fn hidden_embedded(&self, _v: &Viewer) -> u64 {
        0
    }

    fn check(&self, id: MemoryId) -> Result<()> {
        self.viewer.map_or(Ok(()), |v| v.check_write(id))
    }

    fn stamped(&self, m: &NewMemory) -> NewMemory {
        let mut m = m.clone();
        if m.author.is_none() {
            m.author = self.viewer.map(|v| v.name.clone());
        }
        m
    }
}

/// `Reads` for a type with `parts()` (the inner reads and the viewer): a straight pass
/// without a viewer, filtered with one. Written once for the backend and its transactions.
macro_rules! visible_reads {
    ($t:ty) => {
        impl Reads for $t {
            fn memory_id(&self, r: &IdRef) -> Result<Option<MemoryId>> {
                match self.parts() {
                    (i, None) => i.memory_id(r),
                    (i, Some(v)) => Ok(i.memory(r)?.filter(|m| v.sees(m)).map(|m| m.id)),
                }
            }
            fn memory(&self, r: &IdRef) -> Result<Option<Memory>> {
                let (i, v) = self.parts();
                Ok(i.memory(r)?.filter(|m| v.is_none_or(|v| v.sees(m))))
            }
            fn memories(&self, ids: &[MemoryId]) -> Result<Vec<Memory>> {
                match self.parts() {
                    (i, None) => i.memories(ids),
                    (i, Some(v)) => Ok(v.filter_memories(i.memories(ids)?, usize::MAX)),
                }
            }
            fn memory_exists(&self, id: MemoryId) -> Result<bool> {
                Ok(self.memory(&IdRef::Id(id))?.is_some())
            }
            fn review_after(&self, id: MemoryId) -> Result<Option<Millis>> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(None),
                    (i, _) => i.review_after(id),
                }
            }
            fn due_for_review(
                &self,
                room: Option<&str>,
                now: Millis,
                limit: usize,
            ) -> Result<Vec<ReviewItem>> {
                match self.parts() {
                    (i, None) => i.due_for_review(room, now, limit),
                    (i, Some(v)) => {
                        let mut out = i.due_for_review(room, now, v.widen(limit))?;
                        out.retain(|r| v.sees_id(r.id));
                        out.truncate(limit);
                        Ok(out)
                    }
                }
            }
            fn memories_beside(
                &self,
                anchor: &Memory,
                side: Side,
                limit: usize,
            ) -> Result<Vec<Memory>> {
                match self.parts() {
                    (i, None) => i.memories_beside(anchor, side, limit),
                    (_, Some(v)) if !v.sees(anchor) => Ok(vec![]),
                    (i, Some(v)) => Ok(
                        v.filter_memories(i.memories_beside(anchor, side, v.widen(limit))?, limit)
                    ),
                }
            }
            fn active_memories(&self, q: &ActiveQuery<'_>) -> Result<Vec<Memory>> {
                match self.parts() {
                    (i, None) => i.active_memories(q),
                    (i, Some(v)) => {
                        let wide = ActiveQuery {
                            limit: v.widen(q.limit),
                            ..*q
                        };
                        Ok(v.filter_memories(i.active_memories(&wide)?, q.limit))
                    }
                }
            }
            fn component_failures(
                &self,
                room: &str,
                component: &str,
                limit: usize,
            ) -> Result<Vec<Memory>> {
                match self.parts() {
                    (i, None) => i.component_failures(room, component, limit),
                    (i, Some(v)) => Ok(v.filter_memories(
                        i.component_failures(room, component, v.widen(limit))?,
                        limit,
                    )),
                }
            }
            fn active_rooms(&self) -> Result<Vec<String>> {
                let (i, v) = self.parts();
                let rooms = i.active_rooms()?;
                let Some(v) = v else { return Ok(rooms) };
                let mut out = Vec::with_capacity(rooms.len());
                for room in rooms {
                    let hidden = v.live().filter(|m| m.room == room).count() as u64;
                    if hidden == 0 || i.live_count(Some(&room))? > hidden {
                        out.push(room);
                    }
                }
                Ok(out)
            }
            fn unpinned_in_room(&self, room: &str, limit: usize) -> Result<Vec<Memory>> {
                match self.parts() {
                    (i, None) => i.unpinned_in_room(room, limit),
                    (i, Some(v)) => {
                        Ok(v.filter_memories(i.unpinned_in_room(room, v.widen(limit))?, limit))
                    }
                }
            }
            fn unpinned_ids(&self) -> Result<Vec<MemoryId>> {
                let (i, v) = self.parts();
                let mut ids = i.unpinned_ids()?;
                if let Some(v) = v {
                    ids.retain(|id| v.sees_id(*id));
                }
                Ok(ids)
            }
            fn recent_memories(&self, room: Option<&str>, limit: usize) -> Result<Vec<Memory>> {
                match self.parts() {
                    (i, None) => i.recent_memories(room, limit),
                    (i, Some(v)) => {
                        Ok(v.filter_memories(i.recent_memories(room, v.widen(limit))?, limit))
                    }
                }
            }
            fn live_memories(&self) -> Result<Vec<Memory>> {
                match self.parts() {
                    (i, None) => i.live_memories(),
                    (i, Some(v)) => Ok(v.filter_memories(i.live_memories()?, usize::MAX)),
                }
            }
            fn session_memory_count(&self, session_id: &str) -> Result<u64> {
                let (i, v) = self.parts();
                let n = i.session_memory_count(session_id)?;
                Ok(v.map_or(n, |v| {
                    let h = v
                        .live()
                        .filter(|m| m.session_id.as_deref() == Some(session_id))
                        .count() as u64;
                    n.saturating_sub(h)
                }))
            }
            fn newest_in_room(&self, room: &str) -> Result<Option<Millis>> {
                match self.parts() {
                    (i, None) => i.newest_in_room(room),
                    (i, Some(v)) if !v.hidden.values().any(|m| m.room == room) => {
                        i.newest_in_room(room)
                    }
                    (i, Some(v)) => Ok(v
                        .filter_memories(i.recent_memories(Some(room), v.widen(1))?, 1)
                        .first()
                        .map(|m| m.created_at)),
                }
            }
            fn active_duplicate(&self, room: &str, content: &str) -> Result<Option<MemoryId>> {
                let (i, v) = self.parts();
                Ok(i.active_duplicate(room, content)?
                    .filter(|id| v.is_none_or(|v| v.sees_id(*id))))
            }
            fn topic_memory(&self, topic_key: &str, room: &str) -> Result<Option<MemoryId>> {
                let (i, v) = self.parts();
                Ok(i.topic_memory(topic_key, room)?
                    .filter(|id| v.is_none_or(|v| v.sees_id(*id))))
            }
            fn list_memories(&self, q: &ListQuery<'_>) -> Result<Vec<Memory>> {
                match self.parts() {
                    (i, None) => i.list_memories(q),
                    (i, Some(v)) => {
                        let wide = ListQuery {
                            limit: v.widen(q.limit),
                            ..*q
                        };
                        Ok(v.filter_memories(i.list_memories(&wide)?, q.limit))
                    }
                }
            }
            fn live_count(&self, room: Option<&str>) -> Result<u64> {
                let (i, v) = self.parts();
                let n = i.live_count(room)?;
                Ok(v.map_or(n, |v| {
                    let h = v
                        .live()
                        .filter(|m| room.is_none_or(|r| m.room == r))
                        .count() as u64;
                    n.saturating_sub(h)
                }))
            }
            fn daily_counts(&self, what: Daily, since: Millis) -> Result<Vec<(i64, u64)>> {
                let (i, v) = self.parts();
                let mut days = i.daily_counts(what, since)?;
                if let (Some(v), Daily::Created) = (v, what) {
                    for m in v.live().filter(|m| m.created_at >= since) {
                        let day = m.created_at.div_euclid(86_400_000);
                        if let Some(d) = days.iter_mut().find(|d| d.0 == day) {
                            d.1 = d.1.saturating_sub(1);
                        }
                    }
                    days.retain(|d| d.1 > 0);
                }
                Ok(days)
            }
            fn tally(&self, t: Tally) -> Result<BTreeMap<String, u64>> {
                let (i, v) = self.parts();
                let mut counts = i.tally(t)?;
                let Some(v) = v else { return Ok(counts) };
                match t {
                    Tally::MemoriesByTier | Tally::MemoriesByKind | Tally::MemoriesByRoom => {
                        for m in v.hidden.values() {
                            let key = match t {
                                Tally::MemoriesByTier => m.tier.as_str().to_string(),
                                Tally::MemoriesByKind => m.kind.as_str().to_string(),
                                _ => m.room.clone(),
                            };
                            subtract(&mut counts, &key, 1);
                        }
                    }
                    Tally::LinksByKind => {
                        let mut seen = HashSet::new();
                        for id in v.hidden.keys() {
                            for l in i.links_around(*id)? {
                                if seen.insert((l.src, l.dst, l.kind.as_str())) {
                                    subtract(&mut counts, l.kind.as_str(), 1);
                                }
                            }
                        }
                    }
                    Tally::EventsByKind => {
                        for id in v.hidden.keys() {
                            for (kind, n) in i.event_counts(*id)? {
                                subtract(&mut counts, &kind, n);
                            }
                        }
                    }
                }
                Ok(counts)
            }

            fn traces(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<Trace>>> {
                let (i, v) = self.parts();
                let mut t = i.traces(ids)?;
                if let Some(v) = v {
                    t.retain(|id, _| v.sees_id(*id));
                }
                Ok(t)
            }
            fn event_counts(&self, id: MemoryId) -> Result<BTreeMap<String, u64>> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(BTreeMap::new()),
                    (i, _) => i.event_counts(id),
                }
            }
            fn recent_events(&self, id: MemoryId, limit: usize) -> Result<Vec<EventView>> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(vec![]),
                    (i, _) => i.recent_events(id, limit),
                }
            }
            fn last_event_detail(
                &self,
                id: MemoryId,
                m: DetailMatch<'_>,
            ) -> Result<Option<(String, Millis)>> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(None),
                    (i, _) => i.last_event_detail(id, m),
                }
            }
            fn event_count(&self, id: MemoryId) -> Result<u64> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(0),
                    (i, _) => i.event_count(id),
                }
            }

            fn links_around(&self, id: MemoryId) -> Result<Vec<LinkView>> {
                match self.parts() {
                    (i, None) => i.links_around(id),
                    (_, Some(v)) if !v.sees_id(id) => Ok(vec![]),
                    (i, Some(v)) => {
                        let mut l = i.links_around(id)?;
                        l.retain(|l| v.link_ok(l));
                        Ok(l)
                    }
                }
            }
            fn link_count(&self, id: MemoryId) -> Result<u64> {
                match self.parts() {
                    (i, None) => i.link_count(id),
                    _ => Ok(Reads::links_around(self, id)?.len() as u64),
                }
            }
            fn active_neighbours(&self, id: MemoryId) -> Result<Vec<MemoryId>> {
                match self.parts() {
                    (i, None) => i.active_neighbours(id),
                    (_, Some(v)) if !v.sees_id(id) => Ok(vec![]),
                    (i, Some(v)) => {
                        let mut n = i.active_neighbours(id)?;
                        n.retain(|id| v.sees_id(*id));
                        Ok(n)
                    }
                }
            }
            fn links_among(&self, ids: &[MemoryId]) -> Result<Vec<LinkView>> {
                match self.parts() {
                    (i, None) => i.links_among(ids),
                    (i, Some(v)) => {
                        let ids: Vec<MemoryId> =
                            ids.iter().copied().filter(|id| v.sees_id(*id)).collect();
                        let mut l = i.links_among(&ids)?;
                        l.retain(|l| v.link_ok(l));
                        Ok(l)
                    }
                }
            }
            fn successor(&self, id: MemoryId) -> Result<Option<MemoryId>> {
                match self.parts() {
                    (i, None) => i.successor(id),
                    (_, Some(v)) if !v.sees_id(id) => Ok(None),
                    (i, Some(v)) => Ok(i.successor(id)?.filter(|s| v.sees_id(*s))),
                }
            }

            fn revisions(&self, id: MemoryId) -> Result<Vec<Revision>> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(vec![]),
                    (i, _) => i.revisions(id),
                }
            }
            fn revision_count(&self, id: MemoryId) -> Result<u64> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(0),
                    (i, _) => i.revision_count(id),
                }
            }
            fn evidence(&self, id: MemoryId) -> Result<Vec<Evidence>> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(vec![]),
                    (i, _) => i.evidence(id),
                }
            }
            fn judgment(&self, uid: &str) -> Result<Option<Judgment>> {
                let (i, v) = self.parts();
                Ok(i.judgment(uid)?
                    .filter(|j| v.is_none_or(|v| v.judgment_ok(j))))
            }
            fn pending_judgments(&self, limit: usize) -> Result<Vec<Judgment>> {
                match self.parts() {
                    (i, None) => i.pending_judgments(limit),
                    (i, Some(v)) => {
                        let mut j = i.pending_judgments(v.widen(limit))?;
                        j.retain(|j| v.judgment_ok(j));
                        j.truncate(limit);
                        Ok(j)
                    }
                }
            }
            fn judgments_of(&self, id: MemoryId) -> Result<Vec<Judgment>> {
                match self.parts() {
                    (i, None) => i.judgments_of(id),
                    (_, Some(v)) if !v.sees_id(id) => Ok(vec![]),
                    (i, Some(v)) => {
                        let mut j = i.judgments_of(id)?;
                        j.retain(|j| v.judgment_ok(j));
                        Ok(j)
                    }
                }
            }
            fn judgments_in(
                &self,
                room: Option<&str>,
                status: Option<&str>,
                limit: usize,
            ) -> Result<Vec<Judgment>> {
                match self.parts() {
                    (i, None) => i.judgments_in(room, status, limit),
                    (i, Some(v)) => {
                        let mut j = i.judgments_in(room, status, v.widen(limit))?;
                        j.retain(|j| v.judgment_ok(j));
                        j.truncate(limit);
                        Ok(j)
                    }
                }
            }

            fn session(&self, id: &str) -> Result<Option<SessionInfo>> {
                self.parts().0.session(id)
            }
            fn session_outcome(&self, id: &str) -> Result<Option<Option<String>>> {
                self.parts().0.session_outcome(id)
            }
            fn recalled_in_session(&self, session_id: &str) -> Result<Vec<(MemoryId, f64)>> {
                let (i, v) = self.parts();
                let mut r = i.recalled_in_session(session_id)?;
                if let Some(v) = v {
                    r.retain(|(id, _)| v.sees_id(*id));
                }
                Ok(r)
            }
            fn failed_sessions_recalling(&self, id: MemoryId) -> Result<u64> {
                match self.parts() {
                    (_, Some(v)) if !v.sees_id(id) => Ok(0),
                    (i, _) => i.failed_sessions_recalling(id),
                }
            }
            fn rooms(&self) -> Result<Vec<RoomInfo>> {
                let (i, v) = self.parts();
                let mut rooms = i.rooms()?;
                if let Some(v) = v {
                    for r in rooms.iter_mut() {
                        let h = v.live().filter(|m| m.room == r.name).count() as u64;
                        r.memories = r.memories.saturating_sub(h);
                    }
                    rooms.retain(|r| r.memories + r.sessions + r.prompts > 0);
                }
                Ok(rooms)
            }
            fn recent_sessions(
                &self,
                room: Option<&str>,
                limit: usize,
            ) -> Result<Vec<SessionInfo>> {
                self.parts().0.recent_sessions(room, limit)
            }
            fn sessions_by_start(&self, limit: usize) -> Result<Vec<SessionInfo>> {
                self.parts().0.sessions_by_start(limit)
            }
            fn all_sessions(&self) -> Result<Vec<SessionInfo>> {
                self.parts().0.all_sessions()
            }
            fn open_session_since(&self, room: &str) -> Result<Option<Millis>> {
                self.parts().0.open_session_since(room)
            }
            fn prompts(
                &self,
                room: Option<&str>,
                query: Option<&str>,
                limit: usize,
            ) -> Result<Vec<PromptInfo>> {
                self.parts().0.prompts(room, query, limit)
            }
            fn all_prompts(&self) -> Result<Vec<PromptInfo>> {
                self.parts().0.all_prompts()
            }

            fn schema_version(&self) -> Result<i64> {
                self.parts().0.schema_version()
            }
            fn meta(&self, key: &str) -> Result<Option<String>> {
                self.parts().0.meta(key)
            }
            fn maintenance_runs(&self, limit: usize) -> Result<Vec<String>> {
                self.parts().0.maintenance_runs(limit)
            }
            fn old_episodes(&self, before: Millis, rooms: &[String]) -> Result<u64> {
                let (i, v) = self.parts();
                let n = i.old_episodes(before, rooms)?;
                Ok(v.map_or(n, |v| {
                    let h = v
                        .hidden
                        .values()
                        .filter(|m| {
                            m.tier == Tier::Active
                                && m.kind == engram_core::Kind::Episode
                                && m.created_at < before
                                && (rooms.is_empty() || rooms.contains(&m.room))
                        })
                        .count() as u64;
                    n.saturating_sub(h)
                }))
            }

            fn rows_after(
                &self,
                section: Section,
                after: Option<&RowKey>,
                limit: usize,
            ) -> Result<RowPage> {
                let (i, v) = self.parts();
                let mut page = i.rows_after(section, after, limit)?;
                if let Some(v) = v {
                    page.rows.retain(|r| v.row_ok(r));
                }
                Ok(page)
            }
            fn links_from(&self, id: MemoryId) -> Result<Vec<LinkView>> {
                match self.parts() {
                    (i, None) => i.links_from(id),
                    (_, Some(v)) if !v.sees_id(id) => Ok(vec![]),
                    (i, Some(v)) => {
                        let mut l = i.links_from(id)?;
                        l.retain(|l| v.link_ok(l));
                        Ok(l)
                    }
                }
            }
            fn last_change(&self) -> Result<i64> {
                self.parts().0.last_change()
            }
            fn changes(&self, after: i64, upto: i64, limit: usize) -> Result<Vec<Change>> {
                self.parts().0.changes(after, upto, limit)
            }
            fn vault_files(&self, uid: Option<&str>) -> Result<Vec<VaultFile>> {
                self.parts().0.vault_files(uid)
            }
            fn missing_embeddings(
                &self,
                model: VectorModel<'_>,
                after: MemoryId,
                limit: usize,
            ) -> Result<Vec<(MemoryId, String)>> {
                self.parts().0.missing_embeddings(model, after, limit)
            }
            fn embedded_count(&self, model: VectorModel<'_>) -> Result<u64> {
                let (i, v) = self.parts();
                let n = i.embedded_count(model)?;
                Ok(v.map_or(n, |v| n.saturating_sub(self.hidden_embedded(v))))
            }
            fn team_users(&self) -> Result<Vec<TeamUser>> {
                self.parts().0.team_users()
            }
            fn team_user_by_token(&self, token_hash: &str) -> Result<Option<String>> {
                self.parts().0.team_user_by_token(token_hash)
            }
            fn private_of_others(&self, viewer: &str) -> Result<Vec<Memory>> {
                self.parts().0.private_of_others(viewer)
            }
        }
    };
}

visible_reads!(Visible);
visible_reads!(VisibleTx<'_>);

impl Tx for VisibleTx<'_> {
    fn insert_memory(&mut self, m: &NewMemory) -> Result<MemoryId> {
        let m = self.stamped(m);
        self.tx.insert_memory(&m)
    }
    fn patch_memory(&mut self, id: MemoryId, patch: &MemoryPatch) -> Result<bool> {
        if self.viewer.is_some_and(|v| !v.sees_id(id)) {
            return Ok(false);
        }
        self.tx.patch_memory(id, patch)
    }
    fn delete_memory(&mut self, id: MemoryId) -> Result<()> {
        self.check(id)?;
        self.tx.delete_memory(id)
    }
    fn index_text(
        &mut self,
        id: MemoryId,
        title: Option<&str>,
        content: &str,
        tags: &[String],
        context: Option<&str>,
    ) -> Result<()> {
        self.check(id)?;
        self.tx.index_text(id, title, content, tags, context)
    }
    fn set_embedding(&mut self, id: MemoryId, vector: Option<(&str, &[f32])>) -> Result<()> {
        self.check(id)?;
        self.tx.set_embedding(id, vector)
    }
    fn append_event(&mut self, e: &NewEvent<'_>) -> Result<()> {
        self.check(e.memory_id)?;
        self.tx.append_event(e)
    }
    fn upsert_link(&mut self, l: &LinkWrite) -> Result<()> {
        self.check(l.src)?;
        self.check(l.dst)?;
        self.tx.upsert_link(l)
    }
    fn add_revision(
        &mut self,
        m: &Memory,
        reason: &str,
        at: Millis,
        session_id: Option<&str>,
    ) -> Result<()> {
        self.check(m.id)?;
        self.tx.add_revision(m, reason, at, session_id)
    }
    fn add_evidence(&mut self, memory_id: MemoryId, e: &Evidence) -> Result<()> {
        self.check(memory_id)?;
        self.tx.add_evidence(memory_id, e)
    }
    fn pending_judgment(
        &mut self,
        src: MemoryId,
        dst: MemoryId,
        score: f64,
        session_id: Option<&str>,
        at: Millis,
    ) -> Result<String> {
        self.check(src)?;
        self.check(dst)?;
        self.tx.pending_judgment(src, dst, score, session_id, at)
    }
    fn record_verdict(&mut self, v: &Verdict, relation: &str, at: Millis) -> Result<bool> {
        if self.viewer.is_some() && self.judgment(&v.judgment_id)?.is_none() {
            return Ok(false);
        }
        self.tx.record_verdict(v, relation, at)
    }
    fn write_session(&mut self, w: &SessionWrite<'_>) -> Result<bool> {
        self.tx.write_session(w)
    }
    fn add_prompt(
        &mut self,
        session_id: Option<&str>,
        room: &str,
        content: &str,
        at: Millis,
    ) -> Result<i64> {
        self.tx.add_prompt(session_id, room, content, at)
    }
    fn delete_prompt(&mut self, id: i64) -> Result<bool> {
        self.tx.delete_prompt(id)
    }
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.tx.set_meta(key, value)
    }
    fn move_room(&mut self, from: &str, to: &str) -> Result<u64> {
        if self.viewer.is_some() {
            // Moving a room moves every user's memories in it, private ones included:
            // only the server's own admin (no viewer) may.
            return Err(Error::Input(engram_core::InputError::new(
                "room",
                "merging rooms moves every user's memories: run it on the server (`engram` without a team token)",
            )));
        }
        self.tx.move_room(from, to)
    }
    fn log_maintenance(
        &mut self,
        started: Millis,
        finished: Millis,
        dry_run: bool,
        report: &str,
    ) -> Result<()> {
        self.tx.log_maintenance(started, finished, dry_run, report)
    }
    fn prune_changes(&mut self, all: bool) -> Result<()> {
        self.tx.prune_changes(all)
    }
    fn insert_memory_with_id(&mut self, id: MemoryId, m: &NewMemory) -> Result<MemoryId> {
        let m = self.stamped(m);
        self.tx.insert_memory_with_id(id, &m)
    }
    fn insert_rows(&mut self, rows: &[StoredRow]) -> Result<Vec<bool>> {
        if let Some(v) = self.viewer
            && rows.iter().any(|r| !v.row_ok(r))
        {
            return Err(Error::not_found("id", "named by these rows"));
        }
        self.tx.insert_rows(rows)
    }
    fn delete_link(&mut self, src: MemoryId, dst: MemoryId, kind: LinkKind) -> Result<bool> {
        self.check(src)?;
        self.check(dst)?;
        self.tx.delete_link(src, dst, kind)
    }
    fn write_vault_file(&mut self, w: &VaultFileWrite<'_>) -> Result<()> {
        self.tx.write_vault_file(w)
    }
    fn add_team_user(&mut self, name: &str, token_hash: &str, at: Millis) -> Result<bool> {
        self.tx.add_team_user(name, token_hash, at)
    }
    fn set_team_token(&mut self, name: &str, token_hash: Option<&str>, at: Millis) -> Result<bool> {
        self.tx.set_team_token(name, token_hash, at)
    }
}

impl CandidateSource for Visible {
    fn lexical(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates> {
        match &self.viewer {
            None => self.inner.lexical(plan, filter, k, extra_substrings),
            Some(v) => self
                .inner
                .lexical(plan, &v.filter(filter), k, extra_substrings),
        }
    }
    fn coverage(
        &self,
        plan: &QueryPlan,
        ids: &[MemoryId],
        partial: bool,
    ) -> Result<HashMap<MemoryId, f64>> {
        let mut c = self.inner.coverage(plan, ids, partial)?;
        if let Some(v) = &self.viewer {
            c.retain(|id, _| v.sees_id(*id));
        }
        Ok(c)
    }
    fn vector(&self, query: &[f32], filter: &Filter, k: usize) -> Result<Candidates> {
        match &self.viewer {
            None => self.inner.vector(query, filter, k),
            Some(v) => self.inner.vector(query, &v.filter(filter), k),
        }
    }
    fn cosines(&self, query: &[f32], ids: &[MemoryId]) -> Result<HashMap<MemoryId, f64>> {
        let mut c = self.inner.cosines(query, ids)?;
        if let Some(v) = &self.viewer {
            c.retain(|id, _| v.sees_id(*id));
        }
        Ok(c)
    }
    fn vectors(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<f32>>> {
        let mut c = self.inner.vectors(ids)?;
        if let Some(v) = &self.viewer {
            c.retain(|id, _| v.sees_id(*id));
        }
        Ok(c)
    }
    fn links_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>> {
        let Some(v) = &self.viewer else {
            return CandidateSource::links_around(&*self.inner, seeds, hops, filter);
        };
        let seeds: Vec<MemoryId> = seeds.iter().copied().filter(|s| v.sees_id(*s)).collect();
        let mut edges =
            CandidateSource::links_around(&*self.inner, &seeds, hops, &v.filter(filter))?;
        edges.retain(|e| v.sees_id(e.a) && v.sees_id(e.b));
        Ok(edges)
    }
}

impl Backend for Visible {
    fn write(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        let viewer = self.viewer.as_ref();
        self.inner.write(&mut |tx| {
            let mut seen = VisibleTx { tx, viewer };
            f(&mut seen)
        })
    }
    fn set_durable(&mut self, durable: bool) -> Result<()> {
        self.inner.set_durable(durable)
    }
    fn prepare_vectors(&mut self, model: Option<VectorModel<'_>>) -> Result<bool> {
        self.inner.prepare_vectors(model)
    }
    fn forget_vectors(&mut self) {
        self.inner.forget_vectors()
    }
    fn vector_search(&self, model: VectorModel<'_>) -> &'static str {
        self.inner.vector_search(model)
    }
    fn vector_search_state(&self) -> Option<(usize, bool)> {
        self.inner.vector_search_state()
    }
    fn copy_to(&self, target: &Path) -> Result<()> {
        if self.viewer.is_some() {
            return Err(Error::Input(engram_core::InputError::new(
                "backup",
                "a copy of the database holds every user's memories: back it up on the server",
            )));
        }
        self.inner.copy_to(target)
    }
    fn health(&self) -> Result<Health> {
        self.inner.health()
    }
    fn sqlite(&mut self) -> Option<&mut crate::sqlite::SqliteBackend> {
        self.inner.sqlite()
    }
    fn sqlite_ref(&self) -> Option<&crate::sqlite::SqliteBackend> {
        self.inner.sqlite_ref()
    }
}
