//! [`Reads`] through a viewer, written once by macro for the backend ([`Visible`]) and its
//! write transactions ([`VisibleTx`]): a straight pass without a viewer, filtered with one
//! (see the module above for what each kind of answer does).

use super::tx::VisibleTx;
use super::{Visible, fill, may_see_prompt, may_see_session, private_room, subtract};
use crate::Result;
use crate::storage::Reads;
use crate::storage::rows::*;
use engram_core::dynamics::Trace;
use engram_core::memory::IdRef;
use engram_core::{Memory, MemoryId, Millis, Tier};
use std::collections::{BTreeMap, HashMap, HashSet};

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
                let Some(v) = v else { return Ok(days) };
                // The moments the hidden memories added to the counted days.
                let mut moments = Vec::new();
                match what {
                    Daily::Created => moments.extend(v.hidden.values().map(|m| m.created_at)),
                    Daily::RecallHits => {
                        for id in v.hidden.keys() {
                            let events = i.recent_events(*id, usize::MAX >> 1)?;
                            moments.extend(
                                events
                                    .iter()
                                    .filter(|e| e.kind == "recall_hit")
                                    .map(|e| e.at),
                            );
                        }
                    }
                }
                for at in moments.into_iter().filter(|at| *at >= since) {
                    let day = at / engram_core::DAY_MS;
                    if let Some(d) = days.iter_mut().find(|d| d.0 == day) {
                        d.1 = d.1.saturating_sub(1);
                    }
                }
                days.retain(|d| d.1 > 0);
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

            // A session of a private room is its owner's alone: for anyone else it does
            // not exist (as a missing id). The lists below leave private rooms' sessions out.
            fn session(&self, id: &str) -> Result<Option<SessionInfo>> {
                let (i, v) = self.parts();
                let s = i.session(id)?;
                match (s, v) {
                    (Some(s), Some(v)) if !may_see_session(i, v, &s)? => Ok(None),
                    (s, _) => Ok(s),
                }
            }
            fn owner(&self, what: Owned<'_>) -> Result<Option<String>> {
                self.parts().0.owner(what)
            }
            fn session_outcome(&self, id: &str) -> Result<Option<Option<String>>> {
                let (i, v) = self.parts();
                if v.is_some() && self.session(id)?.is_none() {
                    return Ok(None);
                }
                i.session_outcome(id)
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
                    // A private room's sessions and prompts count for their owner only.
                    for r in rooms.iter_mut().filter(|r| private_room(&r.name)) {
                        r.sessions = 0;
                        r.prompts = 0;
                    }
                    for s in i.all_sessions()?.iter().filter(|s| private_room(&s.room)) {
                        if may_see_session(i, v, s)?
                            && let Some(r) = rooms.iter_mut().find(|r| r.name == s.room)
                        {
                            r.sessions += 1;
                        }
                    }
                    for p in i.all_prompts()?.iter().filter(|p| private_room(&p.room)) {
                        if may_see_prompt(i, v, p)?
                            && let Some(r) = rooms.iter_mut().find(|r| r.name == p.room)
                        {
                            r.prompts += 1;
                        }
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
                match self.parts() {
                    (i, None) => i.recent_sessions(room, limit),
                    (i, Some(v)) => fill(
                        limit,
                        |n| i.recent_sessions(room, n),
                        |s| may_see_session(i, v, s),
                    ),
                }
            }
            fn sessions_by_start(&self, limit: usize) -> Result<Vec<SessionInfo>> {
                match self.parts() {
                    (i, None) => i.sessions_by_start(limit),
                    (i, Some(v)) => fill(
                        limit,
                        |n| i.sessions_by_start(n),
                        |s| may_see_session(i, v, s),
                    ),
                }
            }
            fn all_sessions(&self) -> Result<Vec<SessionInfo>> {
                let (i, v) = self.parts();
                let all = i.all_sessions()?;
                let Some(v) = v else { return Ok(all) };
                let mut kept = Vec::with_capacity(all.len());
                for s in all {
                    if may_see_session(i, v, &s)? {
                        kept.push(s);
                    }
                }
                Ok(kept)
            }
            fn open_session_since(&self, room: &str) -> Result<Option<Millis>> {
                match self.parts() {
                    (_, Some(_)) if private_room(room) => Ok(None),
                    (i, _) => i.open_session_since(room),
                }
            }
            fn prompts(
                &self,
                room: Option<&str>,
                query: Option<&str>,
                limit: usize,
            ) -> Result<Vec<PromptInfo>> {
                match self.parts() {
                    (i, None) => i.prompts(room, query, limit),
                    (i, Some(v)) => fill(
                        limit,
                        |n| i.prompts(room, query, n),
                        |p| may_see_prompt(i, v, p),
                    ),
                }
            }
            fn all_prompts(&self) -> Result<Vec<PromptInfo>> {
                let (i, v) = self.parts();
                let all = i.all_prompts()?;
                let Some(v) = v else { return Ok(all) };
                let mut kept = Vec::with_capacity(all.len());
                for p in all {
                    if may_see_prompt(i, v, &p)? {
                        kept.push(p);
                    }
                }
                Ok(kept)
            }

            fn schema_version(&self) -> Result<i64> {
                self.parts().0.schema_version()
            }
            fn meta(&self, key: &str) -> Result<Option<String>> {
                self.parts().0.meta(key)
            }
            fn maintenance_runs(&self, limit: usize) -> Result<Vec<String>> {
                let (i, v) = self.parts();
                let runs = i.maintenance_runs(limit)?;
                Ok(match v {
                    None => runs,
                    Some(v) => runs.iter().map(|r| super::scrub_run(r, v)).collect(),
                })
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
            fn vector_sets_of(&self, ids: &[MemoryId]) -> Result<Vec<VectorSet>> {
                self.parts().0.vector_sets_of(ids)
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
