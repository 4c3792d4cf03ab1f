//! The SQLite backend: the storage interface ([`crate::storage`]) over one rusqlite
//! connection, and every SQL statement the engine's operations need.
//!
//! One module owns each table's rows: [`memories`] (the one column list and row mapper),
//! [`events`], [`links`], [`revisions`] (revisions and judgments), [`sessions`] (sessions
//! and prompts), [`evidence`], [`fulltext`] (the two FTS5 tables), [`embeddings`] (the
//! vectors). The candidate sources recall asks through [`crate::storage::candidates`] are
//! [`candidates`] over `lexical` (FTS5 channels and coverage), `vector_search` and
//! `vector_index` (the in-memory index and its HNSW form, `ann`, kept up by
//! `index_upkeep`) and `graph` (the link walk). The `changes` table is
//! written by triggers (see `db.rs`), so no write path here can forget the vault.
//!
//! A write transaction is `BEGIN IMMEDIATE`: the writer takes the lock up front and waits
//! (the busy timeout) instead of failing on a read-to-write upgrade, so SQLite never needs
//! the retry the interface allows.

#[cfg(feature = "ann")]
pub(crate) mod ann;
mod backend;
pub(crate) mod backup_file;
pub(crate) mod candidates;
pub(crate) mod db;
pub(crate) mod embeddings;
pub(crate) mod events;
pub(crate) mod evidence;
mod filter;
pub(crate) mod fulltext;
mod graph;
pub mod health;
mod index_upkeep;
mod lexical;
pub(crate) mod links;
pub(crate) mod maintenance;
pub(crate) mod memories;
pub(crate) mod revisions;
pub mod seed_c;
pub(crate) mod sessions;
mod tables;
mod team;
mod vault_files;
mod vector_index;
mod vector_search;

pub use backend::SqliteBackend;
pub(crate) use vector_index::forget_saved_index;

use crate::Result;
use crate::storage::rows::*;
use crate::storage::{Reads, Tx};
use engram_core::dynamics::Trace;
use engram_core::memory::IdRef;
use engram_core::{LinkKind, Memory, MemoryId, Millis};
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::collections::{BTreeMap, HashMap};

/// A write transaction on the SQLite backend.
pub(crate) struct SqliteTx<'c> {
    tx: Transaction<'c>,
}

/// What the reads run on: the connection itself, or an open transaction.
pub(crate) trait Conn {
    fn conn(&self) -> &Connection;
}

impl Conn for Connection {
    fn conn(&self) -> &Connection {
        self
    }
}

impl Conn for SqliteTx<'_> {
    fn conn(&self) -> &Connection {
        &self.tx
    }
}

/// Runs `f` in one `BEGIN IMMEDIATE` transaction of `conn` and commits it.
pub(crate) fn write(
    conn: &mut Connection,
    f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>,
) -> Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut t = SqliteTx { tx };
    f(&mut t)?;
    t.tx.commit()?;
    Ok(())
}

/// Switches commit durability: `synchronous = FULL` (every commit is on disk when it
/// returns) or `NORMAL` (WAL stays consistent; a power cut may lose the last commits).
pub(crate) fn set_full_sync(conn: &Connection, full: bool) -> Result<()> {
    conn.execute_batch(if full {
        "PRAGMA synchronous = FULL"
    } else {
        "PRAGMA synchronous = NORMAL"
    })?;
    Ok(())
}

impl<T: Conn> Reads for T {
    fn memory_id(&self, r: &IdRef) -> Result<Option<MemoryId>> {
        memories::id_of(self.conn(), r)
    }
    fn memory(&self, r: &IdRef) -> Result<Option<Memory>> {
        memories::by_ref(self.conn(), r)
    }
    fn memories(&self, ids: &[MemoryId]) -> Result<Vec<Memory>> {
        memories::many(self.conn(), ids)
    }
    fn memory_exists(&self, id: MemoryId) -> Result<bool> {
        memories::exists(self.conn(), id)
    }
    fn review_after(&self, id: MemoryId) -> Result<Option<Millis>> {
        memories::review_after(self.conn(), id)
    }
    fn due_for_review(
        &self,
        room: Option<&str>,
        now: Millis,
        limit: usize,
    ) -> Result<Vec<ReviewItem>> {
        memories::due_for_review(self.conn(), room, now, limit)
    }
    fn memories_beside(&self, anchor: &Memory, side: Side, limit: usize) -> Result<Vec<Memory>> {
        memories::beside(self.conn(), anchor, side, limit)
    }
    fn active_memories(&self, q: &ActiveQuery<'_>) -> Result<Vec<Memory>> {
        memories::active(self.conn(), q)
    }
    fn component_failures(&self, room: &str, component: &str, limit: usize) -> Result<Vec<Memory>> {
        memories::component_failures(self.conn(), room, component, limit)
    }
    fn active_rooms(&self) -> Result<Vec<String>> {
        memories::active_rooms(self.conn())
    }
    fn unpinned_in_room(&self, room: &str, limit: usize) -> Result<Vec<Memory>> {
        memories::unpinned_in_room(self.conn(), room, limit)
    }
    fn unpinned_ids(&self) -> Result<Vec<MemoryId>> {
        memories::unpinned_ids(self.conn())
    }
    fn recent_memories(&self, room: Option<&str>, limit: usize) -> Result<Vec<Memory>> {
        memories::recent(self.conn(), room, limit)
    }
    fn live_memories(&self) -> Result<Vec<Memory>> {
        memories::all_live(self.conn())
    }
    fn session_memory_count(&self, session_id: &str) -> Result<u64> {
        memories::count_in_session(self.conn(), session_id)
    }
    fn newest_in_room(&self, room: &str) -> Result<Option<Millis>> {
        memories::newest_in_room(self.conn(), room)
    }
    fn active_duplicate(&self, room: &str, content: &str) -> Result<Option<MemoryId>> {
        memories::active_duplicate(self.conn(), room, content)
    }
    fn topic_memory(&self, topic_key: &str, room: &str) -> Result<Option<MemoryId>> {
        memories::topic_memory(self.conn(), topic_key, room)
    }
    fn list_memories(&self, q: &ListQuery<'_>) -> Result<Vec<Memory>> {
        memories::list(self.conn(), q)
    }
    fn live_count(&self, room: Option<&str>) -> Result<u64> {
        memories::live_count(self.conn(), room)
    }
    fn daily_counts(&self, what: Daily, since: Millis) -> Result<Vec<(i64, u64)>> {
        match what {
            Daily::Created => memories::created_per_day(self.conn(), since),
            Daily::RecallHits => events::recall_hits_per_day(self.conn(), since),
        }
    }
    fn tally(&self, t: Tally) -> Result<BTreeMap<String, u64>> {
        let sql = match t {
            Tally::MemoriesByTier => "SELECT tier, count(*) FROM memories GROUP BY tier",
            Tally::MemoriesByKind => "SELECT kind, count(*) FROM memories GROUP BY kind",
            Tally::MemoriesByRoom => "SELECT room, count(*) FROM memories GROUP BY room",
            Tally::LinksByKind => "SELECT kind, count(*) FROM links GROUP BY kind",
            Tally::EventsByKind => "SELECT kind, count(*) FROM events GROUP BY kind",
        };
        let mut stmt = self.conn().prepare(sql)?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
    fn traces(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<Trace>>> {
        events::traces(self.conn(), ids)
    }
    fn event_counts(&self, id: MemoryId) -> Result<BTreeMap<String, u64>> {
        events::counts(self.conn(), id)
    }
    fn recent_events(&self, id: MemoryId, limit: usize) -> Result<Vec<EventView>> {
        events::recent(self.conn(), id, limit)
    }
    fn last_event_detail(
        &self,
        id: MemoryId,
        m: DetailMatch<'_>,
    ) -> Result<Option<(String, Millis)>> {
        events::last_detail(self.conn(), id, m)
    }
    fn event_count(&self, id: MemoryId) -> Result<u64> {
        events::count_of(self.conn(), id)
    }
    fn links_around(&self, id: MemoryId) -> Result<Vec<LinkView>> {
        links::around(self.conn(), id)
    }
    fn link_count(&self, id: MemoryId) -> Result<u64> {
        links::count_around(self.conn(), id)
    }
    fn active_neighbours(&self, id: MemoryId) -> Result<Vec<MemoryId>> {
        links::active_neighbours(self.conn(), id)
    }
    fn links_among(&self, ids: &[MemoryId]) -> Result<Vec<LinkView>> {
        links::among(self.conn(), ids)
    }
    fn successor(&self, id: MemoryId) -> Result<Option<MemoryId>> {
        links::successor(self.conn(), id)
    }
    fn revisions(&self, id: MemoryId) -> Result<Vec<Revision>> {
        revisions::of(self.conn(), id)
    }
    fn revision_count(&self, id: MemoryId) -> Result<u64> {
        revisions::count(self.conn(), id)
    }
    fn evidence(&self, id: MemoryId) -> Result<Vec<Evidence>> {
        evidence::of(self.conn(), id)
    }
    fn judgment(&self, uid: &str) -> Result<Option<Judgment>> {
        revisions::judgment(self.conn(), uid)
    }
    fn pending_judgments(&self, limit: usize) -> Result<Vec<Judgment>> {
        revisions::pending_judgments(self.conn(), limit)
    }
    fn judgments_of(&self, id: MemoryId) -> Result<Vec<Judgment>> {
        revisions::judgments_of(self.conn(), id)
    }
    fn judgments_in(
        &self,
        room: Option<&str>,
        status: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Judgment>> {
        revisions::judgments_in(self.conn(), room, status, limit)
    }
    fn recent_sessions(&self, room: Option<&str>, limit: usize) -> Result<Vec<SessionInfo>> {
        sessions::recent(self.conn(), room, limit)
    }
    fn sessions_by_start(&self, limit: usize) -> Result<Vec<SessionInfo>> {
        sessions::by_start(self.conn(), limit)
    }
    fn all_sessions(&self) -> Result<Vec<SessionInfo>> {
        sessions::all(self.conn())
    }
    fn open_session_since(&self, room: &str) -> Result<Option<Millis>> {
        sessions::open_since(self.conn(), room)
    }
    fn prompts(
        &self,
        room: Option<&str>,
        query: Option<&str>,
        limit: usize,
    ) -> Result<Vec<PromptInfo>> {
        sessions::prompts(self.conn(), room, query, limit)
    }
    fn all_prompts(&self) -> Result<Vec<PromptInfo>> {
        sessions::all_prompts(self.conn())
    }
    fn session(&self, id: &str) -> Result<Option<SessionInfo>> {
        sessions::get(self.conn(), id)
    }
    fn owner(&self, what: Owned<'_>) -> Result<Option<String>> {
        sessions::owner(self.conn(), what)
    }
    fn session_outcome(&self, id: &str) -> Result<Option<Option<String>>> {
        sessions::outcome(self.conn(), id)
    }
    fn recalled_in_session(&self, session_id: &str) -> Result<Vec<(MemoryId, f64)>> {
        events::recalled_in_session(self.conn(), session_id)
    }
    fn failed_sessions_recalling(&self, id: MemoryId) -> Result<u64> {
        events::failed_sessions_recalling(self.conn(), id)
    }
    fn rooms(&self) -> Result<Vec<RoomInfo>> {
        sessions::rooms(self.conn())
    }
    fn schema_version(&self) -> Result<i64> {
        Ok(self
            .conn()
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }
    fn meta(&self, key: &str) -> Result<Option<String>> {
        maintenance::meta(self.conn(), key)
    }
    fn maintenance_runs(&self, limit: usize) -> Result<Vec<String>> {
        maintenance::runs(self.conn(), limit)
    }
    fn old_episodes(&self, before: Millis, rooms: &[String]) -> Result<u64> {
        memories::old_episodes(self.conn(), before, rooms)
    }
    fn rows_after(
        &self,
        section: Section,
        after: Option<&RowKey>,
        limit: usize,
    ) -> Result<RowPage> {
        tables::rows_after(self.conn(), section, after, limit)
    }
    fn links_from(&self, id: MemoryId) -> Result<Vec<LinkView>> {
        links::from(self.conn(), id)
    }
    fn last_change(&self) -> Result<i64> {
        vault_files::last_change(self.conn())
    }
    fn changes(&self, after: i64, upto: i64, limit: usize) -> Result<Vec<Change>> {
        vault_files::changes(self.conn(), after, upto, limit)
    }
    fn vault_files(&self, uid: Option<&str>) -> Result<Vec<VaultFile>> {
        vault_files::files(self.conn(), uid)
    }
    fn missing_embeddings(
        &self,
        model: VectorModel<'_>,
        after: MemoryId,
        limit: usize,
    ) -> Result<Vec<(MemoryId, String)>> {
        embeddings::missing(self.conn(), model, after, limit)
    }
    fn embedded_count(&self, model: VectorModel<'_>) -> Result<u64> {
        embeddings::embedded_count(self.conn(), model)
    }
    fn vector_sets_of(&self, ids: &[MemoryId]) -> Result<Vec<VectorSet>> {
        embeddings::sets_of(self.conn(), ids)
    }
    fn team_users(&self) -> Result<Vec<TeamUser>> {
        team::users(self.conn())
    }
    fn team_user_by_token(&self, token_hash: &str) -> Result<Option<String>> {
        team::user_by_token(self.conn(), token_hash)
    }
    fn private_of_others(&self, viewer: &str) -> Result<Vec<Memory>> {
        team::private_of_others(self.conn(), viewer)
    }
}

impl Tx for SqliteTx<'_> {
    fn insert_memory(&mut self, m: &NewMemory) -> Result<MemoryId> {
        memories::insert(&self.tx, m)
    }
    fn patch_memory(&mut self, id: MemoryId, patch: &MemoryPatch) -> Result<bool> {
        memories::patch(&self.tx, id, patch)
    }
    fn delete_memory(&mut self, id: MemoryId) -> Result<()> {
        events::delete_of(&self.tx, id)?;
        links::delete_around(&self.tx, id)?;
        fulltext::remove(&self.tx, id)?;
        memories::delete(&self.tx, id)
    }
    fn index_text(
        &mut self,
        id: MemoryId,
        title: Option<&str>,
        content: &str,
        tags: &[String],
        context: Option<&str>,
    ) -> Result<()> {
        fulltext::index(&self.tx, id, title, content, tags, context)
    }
    fn set_embedding(&mut self, id: MemoryId, vector: Option<(&str, &[f32])>) -> Result<()> {
        match vector {
            Some((model, v)) => {
                embeddings::write_embedding(&self.tx, id, model, v)?;
            }
            None => embeddings::delete(&self.tx, id)?,
        }
        Ok(())
    }
    fn append_event(&mut self, e: &NewEvent<'_>) -> Result<()> {
        events::append(&self.tx, e)
    }
    fn upsert_link(&mut self, l: &LinkWrite) -> Result<()> {
        links::upsert(&self.tx, l)
    }
    fn add_revision(
        &mut self,
        m: &Memory,
        reason: &str,
        at: Millis,
        session_id: Option<&str>,
    ) -> Result<()> {
        revisions::add(&self.tx, m, reason, at, session_id)
    }
    fn add_evidence(&mut self, memory_id: MemoryId, e: &Evidence) -> Result<()> {
        evidence::insert(&self.tx, memory_id, e)
    }
    fn pending_judgment(
        &mut self,
        src: MemoryId,
        dst: MemoryId,
        score: f64,
        session_id: Option<&str>,
        at: Millis,
    ) -> Result<String> {
        revisions::pending(&self.tx, src, dst, score, session_id, at)
    }
    fn record_verdict(&mut self, v: &Verdict, relation: &str, at: Millis) -> Result<bool> {
        revisions::record_verdict(&self.tx, v, relation, v.confidence.unwrap_or(1.0), at)
    }
    fn write_session(&mut self, w: &SessionWrite<'_>) -> Result<bool> {
        sessions::write(&self.tx, w)
    }
    fn add_prompt(
        &mut self,
        session_id: Option<&str>,
        room: &str,
        content: &str,
        at: Millis,
    ) -> Result<i64> {
        sessions::add_prompt(&self.tx, session_id, room, content, at)
    }
    fn delete_prompt(&mut self, id: i64) -> Result<bool> {
        sessions::delete_prompt(&self.tx, id)
    }
    fn set_owner(&mut self, what: Owned<'_>, user: &str) -> Result<()> {
        sessions::set_owner(&self.tx, what, user)
    }
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        maintenance::set_meta(&self.tx, key, value)
    }
    fn move_room(&mut self, from: &str, to: &str) -> Result<u64> {
        maintenance::move_room(&self.tx, from, to)
    }
    fn log_maintenance(
        &mut self,
        started: Millis,
        finished: Millis,
        dry_run: bool,
        report: &str,
    ) -> Result<()> {
        maintenance::log_run(&self.tx, started, finished, dry_run, report)
    }
    fn prune_changes(&mut self, all: bool) -> Result<()> {
        maintenance::prune_changes(&self.tx, all)
    }
    fn insert_memory_with_id(&mut self, id: MemoryId, m: &NewMemory) -> Result<MemoryId> {
        memories::insert_with_id(&self.tx, Some(id), m)
    }
    fn insert_rows(&mut self, rows: &[StoredRow]) -> Result<Vec<bool>> {
        tables::insert_rows(&self.tx, rows)
    }
    fn delete_link(&mut self, src: MemoryId, dst: MemoryId, kind: LinkKind) -> Result<bool> {
        links::delete(&self.tx, src, dst, kind)
    }
    fn write_vault_file(&mut self, w: &VaultFileWrite<'_>) -> Result<()> {
        vault_files::write(&self.tx, w)
    }
    fn add_team_user(&mut self, name: &str, token_hash: &str, at: Millis) -> Result<bool> {
        team::add_user(&self.tx, name, token_hash, at)
    }
    fn set_team_token(&mut self, name: &str, token_hash: Option<&str>, at: Millis) -> Result<bool> {
        team::set_token(&self.tx, name, token_hash, at)
    }
}
