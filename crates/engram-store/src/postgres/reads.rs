//! [`Reads`] for the pool (each read on a pooled connection, autocommit) and for a write
//! transaction (its own writes visible), written once as a macro over [`WithDb`].

use super::{PgBackend, PgTx, WithDb};
use super::{
    embeddings, events, evidence, links, maintenance, memories, revisions, sessions, tables, team,
    vault_files,
};
use crate::Result;
use crate::storage::Reads;
use crate::storage::rows::*;
use engram_core::dynamics::Trace;
use engram_core::memory::IdRef;
use engram_core::{Memory, MemoryId, Millis};
use std::collections::{BTreeMap, HashMap};

fn tally_sql(t: Tally) -> &'static str {
    match t {
        Tally::MemoriesByTier => "SELECT tier, count(*) FROM memories GROUP BY tier",
        Tally::MemoriesByKind => "SELECT kind, count(*) FROM memories GROUP BY kind",
        Tally::MemoriesByRoom => "SELECT room, count(*) FROM memories GROUP BY room",
        Tally::LinksByKind => "SELECT kind, count(*) FROM links GROUP BY kind",
        Tally::EventsByKind => "SELECT kind, count(*) FROM events GROUP BY kind",
    }
}

macro_rules! pg_reads {
    ($t:ty) => {
        impl Reads for $t {
            fn memory_id(&self, r: &IdRef) -> Result<Option<MemoryId>> {
                self.with(|db| memories::id_of(db, r))
            }
            fn memory(&self, r: &IdRef) -> Result<Option<Memory>> {
                self.with(|db| memories::by_ref(db, r))
            }
            fn memories(&self, ids: &[MemoryId]) -> Result<Vec<Memory>> {
                self.with(|db| memories::many(db, ids))
            }
            fn memory_exists(&self, id: MemoryId) -> Result<bool> {
                self.with(|db| memories::exists(db, id))
            }
            fn review_after(&self, id: MemoryId) -> Result<Option<Millis>> {
                self.with(|db| memories::review_after(db, id))
            }
            fn due_for_review(
                &self,
                room: Option<&str>,
                now: Millis,
                limit: usize,
            ) -> Result<Vec<ReviewItem>> {
                self.with(|db| memories::due_for_review(db, room, now, limit))
            }
            fn memories_beside(
                &self,
                anchor: &Memory,
                side: Side,
                limit: usize,
            ) -> Result<Vec<Memory>> {
                self.with(|db| memories::beside(db, anchor, side, limit))
            }
            fn active_memories(&self, q: &ActiveQuery<'_>) -> Result<Vec<Memory>> {
                self.with(|db| memories::active(db, q))
            }
            fn component_failures(
                &self,
                room: &str,
                component: &str,
                limit: usize,
            ) -> Result<Vec<Memory>> {
                self.with(|db| memories::component_failures(db, room, component, limit))
            }
            fn active_rooms(&self) -> Result<Vec<String>> {
                self.with(memories::active_rooms)
            }
            fn unpinned_in_room(&self, room: &str, limit: usize) -> Result<Vec<Memory>> {
                self.with(|db| memories::unpinned_in_room(db, room, limit))
            }
            fn unpinned_ids(&self) -> Result<Vec<MemoryId>> {
                self.with(memories::unpinned_ids)
            }
            fn recent_memories(&self, room: Option<&str>, limit: usize) -> Result<Vec<Memory>> {
                self.with(|db| memories::recent(db, room, limit))
            }
            fn live_memories(&self) -> Result<Vec<Memory>> {
                self.with(memories::all_live)
            }
            fn session_memory_count(&self, session_id: &str) -> Result<u64> {
                self.with(|db| memories::count_in_session(db, session_id))
            }
            fn newest_in_room(&self, room: &str) -> Result<Option<Millis>> {
                self.with(|db| memories::newest_in_room(db, room))
            }
            fn active_duplicate(&self, room: &str, content: &str) -> Result<Option<MemoryId>> {
                self.with(|db| memories::active_duplicate(db, room, content))
            }
            fn topic_memory(&self, topic_key: &str, room: &str) -> Result<Option<MemoryId>> {
                self.with(|db| memories::topic_memory(db, topic_key, room))
            }
            fn list_memories(&self, q: &ListQuery<'_>) -> Result<Vec<Memory>> {
                self.with(|db| memories::list(db, q))
            }
            fn live_count(&self, room: Option<&str>) -> Result<u64> {
                self.with(|db| memories::live_count(db, room))
            }
            fn daily_counts(&self, what: Daily, since: Millis) -> Result<Vec<(i64, u64)>> {
                self.with(|db| match what {
                    Daily::Created => memories::created_per_day(db, since),
                    Daily::RecallHits => events::recall_hits_per_day(db, since),
                })
            }
            fn tally(&self, t: Tally) -> Result<BTreeMap<String, u64>> {
                self.with(|db| {
                    Ok(db
                        .query(tally_sql(t), &[])?
                        .iter()
                        .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
                        .collect())
                })
            }
            fn traces(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<Trace>>> {
                self.with(|db| events::traces(db, ids))
            }
            fn event_counts(&self, id: MemoryId) -> Result<BTreeMap<String, u64>> {
                self.with(|db| events::counts(db, id))
            }
            fn recent_events(&self, id: MemoryId, limit: usize) -> Result<Vec<EventView>> {
                self.with(|db| events::recent(db, id, limit))
            }
            fn last_event_detail(
                &self,
                id: MemoryId,
                m: DetailMatch<'_>,
            ) -> Result<Option<(String, Millis)>> {
                self.with(|db| events::last_detail(db, id, m))
            }
            fn event_count(&self, id: MemoryId) -> Result<u64> {
                self.with(|db| events::count_of(db, id))
            }
            fn links_around(&self, id: MemoryId) -> Result<Vec<LinkView>> {
                self.with(|db| links::around(db, id))
            }
            fn link_count(&self, id: MemoryId) -> Result<u64> {
                self.with(|db| links::count_around(db, id))
            }
            fn active_neighbours(&self, id: MemoryId) -> Result<Vec<MemoryId>> {
                self.with(|db| links::active_neighbours(db, id))
            }
            fn links_among(&self, ids: &[MemoryId]) -> Result<Vec<LinkView>> {
                self.with(|db| links::among(db, ids))
            }
            fn successor(&self, id: MemoryId) -> Result<Option<MemoryId>> {
                self.with(|db| links::successor(db, id))
            }
            fn revisions(&self, id: MemoryId) -> Result<Vec<Revision>> {
                self.with(|db| revisions::of(db, id))
            }
            fn revision_count(&self, id: MemoryId) -> Result<u64> {
                self.with(|db| revisions::count_of(db, id))
            }
            fn evidence(&self, id: MemoryId) -> Result<Vec<Evidence>> {
                self.with(|db| evidence::of(db, id))
            }
            fn judgment(&self, uid: &str) -> Result<Option<Judgment>> {
                self.with(|db| revisions::judgment(db, uid))
            }
            fn pending_judgments(&self, limit: usize) -> Result<Vec<Judgment>> {
                self.with(|db| revisions::pending_judgments(db, limit))
            }
            fn judgments_of(&self, id: MemoryId) -> Result<Vec<Judgment>> {
                self.with(|db| revisions::judgments_of(db, id))
            }
            fn judgments_in(
                &self,
                room: Option<&str>,
                status: Option<&str>,
                limit: usize,
            ) -> Result<Vec<Judgment>> {
                self.with(|db| revisions::judgments_in(db, room, status, limit))
            }
            fn session(&self, id: &str) -> Result<Option<SessionInfo>> {
                self.with(|db| sessions::get(db, id))
            }
            fn owner(&self, what: Owned<'_>) -> Result<Option<String>> {
                self.with(|db| sessions::owner(db, what))
            }
            fn session_outcome(&self, id: &str) -> Result<Option<Option<String>>> {
                self.with(|db| sessions::outcome(db, id))
            }
            fn recalled_in_session(&self, session_id: &str) -> Result<Vec<(MemoryId, f64)>> {
                self.with(|db| events::recalled_in_session(db, session_id))
            }
            fn failed_sessions_recalling(&self, id: MemoryId) -> Result<u64> {
                self.with(|db| events::failed_sessions_recalling(db, id))
            }
            fn rooms(&self) -> Result<Vec<RoomInfo>> {
                self.with(sessions::rooms)
            }
            fn recent_sessions(
                &self,
                room: Option<&str>,
                limit: usize,
            ) -> Result<Vec<SessionInfo>> {
                self.with(|db| sessions::recent(db, room, limit))
            }
            fn sessions_by_start(&self, limit: usize) -> Result<Vec<SessionInfo>> {
                self.with(|db| sessions::by_start(db, limit))
            }
            fn all_sessions(&self) -> Result<Vec<SessionInfo>> {
                self.with(sessions::all)
            }
            fn open_session_since(&self, room: &str) -> Result<Option<Millis>> {
                self.with(|db| sessions::open_since(db, room))
            }
            fn prompts(
                &self,
                room: Option<&str>,
                query: Option<&str>,
                limit: usize,
            ) -> Result<Vec<PromptInfo>> {
                self.with(|db| sessions::prompts(db, room, query, limit))
            }
            fn all_prompts(&self) -> Result<Vec<PromptInfo>> {
                self.with(sessions::all_prompts)
            }
            fn schema_version(&self) -> Result<i64> {
                self.with(maintenance::schema_version)
            }
            fn meta(&self, key: &str) -> Result<Option<String>> {
                self.with(|db| maintenance::meta(db, key))
            }
            fn maintenance_runs(&self, limit: usize) -> Result<Vec<String>> {
                self.with(|db| maintenance::runs(db, limit))
            }
            fn old_episodes(&self, before: Millis, rooms: &[String]) -> Result<u64> {
                self.with(|db| memories::old_episodes(db, before, rooms))
            }
            fn rows_after(
                &self,
                section: Section,
                after: Option<&RowKey>,
                limit: usize,
            ) -> Result<RowPage> {
                self.with(|db| tables::rows_after(db, section, after, limit))
            }
            fn links_from(&self, id: MemoryId) -> Result<Vec<LinkView>> {
                self.with(|db| links::from(db, id))
            }
            fn last_change(&self) -> Result<i64> {
                self.with(vault_files::last_change)
            }
            fn changes(&self, after: i64, upto: i64, limit: usize) -> Result<Vec<Change>> {
                self.with(|db| vault_files::changes(db, after, upto, limit))
            }
            fn vault_files(&self, uid: Option<&str>) -> Result<Vec<VaultFile>> {
                self.with(|db| vault_files::files(db, uid))
            }
            fn missing_embeddings(
                &self,
                model: VectorModel<'_>,
                after: MemoryId,
                limit: usize,
            ) -> Result<Vec<(MemoryId, String)>> {
                self.with(|db| embeddings::missing(db, model, after, limit))
            }
            fn embedded_count(&self, model: VectorModel<'_>) -> Result<u64> {
                self.with(|db| embeddings::embedded_count(db, model))
            }
            fn vector_sets_of(&self, ids: &[MemoryId]) -> Result<Vec<VectorSet>> {
                self.with(|db| embeddings::sets_of(db, ids))
            }
            fn team_users(&self) -> Result<Vec<TeamUser>> {
                self.with(team::users)
            }
            fn team_user_by_token(&self, token_hash: &str) -> Result<Option<String>> {
                self.with(|db| team::user_by_token(db, token_hash))
            }
            fn private_of_others(&self, viewer: &str) -> Result<Vec<Memory>> {
                self.with(|db| team::private_of_others(db, viewer))
            }
        }
    };
}

pg_reads!(PgBackend);
pg_reads!(PgTx<'_>);
