//! The storage interface: everything the engine asks of a database, and nothing more.
//!
//! The engine (remember, reinforce, correct, forget/restore/purge, link, pin, show, the
//! hub and sessions, judgments, …) talks to storage only through these traits; the SQLite
//! implementation is `crate::sqlite`, and every SQL statement lives there. The next
//! backend is PostgreSQL with pgvector behind a connection pool (issue 18), so the
//! interface is shaped for a networked database as much as for a file:
//!
//! * **Synchronous.** The engine is synchronous and servers already call it from
//!   `spawn_blocking`; a PostgreSQL backend blocks on its pool there. An async interface
//!   would colour every operation and every surface for no gain on SQLite.
//! * **Object-safe.** No generic methods, no `Self` by value: a `Store` can hold a
//!   `Box<dyn Backend>` chosen at run time from a path or a `postgres://` URL.
//! * **Reads apart from writes.** [`Reads`] is what any connection can answer; a write
//!   happens only inside [`Backend::write`], on a [`Tx`] (which can also read, so a write
//!   checks and changes in one transaction, as `forget` and `purge` must).
//! * **One write transaction, retryable.** `Backend::write` runs its closure inside one
//!   transaction and may run it *again* (PostgreSQL's serialisation failures and
//!   deadlocks are retried, not reported), hence `FnMut`: the closure must have no effect
//!   outside the transaction, so anything slow or external (embedding a text, reading a
//!   file) happens before it, and results leave through captured variables only after
//!   it returned. SQLite's transaction is `BEGIN IMMEDIATE` and never needs the retry.
//! * **Batching.** Methods that a query loop would call per id take many ids
//!   ([`Reads::memories`], [`Reads::traces`]), so a networked store answers in one round
//!   trip, not N.
//! * **Plain data.** Only `engram-core` types and the row structs of [`rows`] cross the
//!   boundary: no driver rows, no SQL fragments (a query's shape is an enum such as
//!   [`rows::ActiveOrder`] that each backend translates).
//!
//! The lexical and vector candidate sources (FTS5 and the vector scan/HNSW index here;
//! `tsvector`/GIN and pgvector there) are a trait of their own beside these
//! (`storage/candidates.rs`, the recall side); `Backend` requires it.
//!
//! How a PostgreSQL backend answers each part: `Reads` as plain `SELECT`s on a pooled
//! connection (batched ones with `= ANY($1)`); `Backend::write` as one transaction at
//! `SERIALIZABLE` (or `REPEATABLE READ`) re-run on `40001`/`40P01`; `rows_after` as keyset
//! pages (`WHERE (memory_id, id) > …`, never `OFFSET`); `insert_rows` as
//! `INSERT … ON CONFLICT DO NOTHING` (one multi-row statement per kind);
//! `insert_memory_with_id` followed by `setval` on the id sequence; the change log as a
//! table its own triggers fill, as SQLite's do; `set_durable` as `synchronous_commit`;
//! `prepare_vectors` as a check that vectors of the model exist (pgvector's HNSW index is
//! always current, so there is nothing to load); `copy_to` as an error naming `pg_dump`;
//! `health` from `pg_stat` counts and the schema version (no FTS row gaps: its text index
//! is a generated column of the memory row); `sqlite()` as `None`.
//!
//! Whole tables cross in pages ([`Reads::rows_after`] with a [`rows::RowKey`], never an
//! offset) and go back in batches ([`Tx::insert_rows`]), so an export or import of a large
//! store over a network is a few hundred round trips, not one per row.

pub mod candidates;
pub mod rows;
pub mod visibility;

use crate::Result;
use candidates::CandidateSource;
use engram_core::dynamics::Trace;
use engram_core::memory::IdRef;
use engram_core::{LinkKind, Memory, MemoryId, Millis};
use rows::*;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// What any connection can answer. Every method reads committed data (or, on a [`Tx`],
/// the transaction's own writes too).
pub trait Reads {
    // --- memories ---
    /// The id a reference names, in any tier.
    fn memory_id(&self, r: &IdRef) -> Result<Option<MemoryId>>;
    /// One memory by reference, in any tier.
    fn memory(&self, r: &IdRef) -> Result<Option<Memory>>;
    /// Many memories by id in one batch, in no particular order; unknown ids are skipped.
    fn memories(&self, ids: &[MemoryId]) -> Result<Vec<Memory>>;
    fn memory_exists(&self, id: MemoryId) -> Result<bool>;
    /// C's review date of a memory (not part of [`Memory`]).
    fn review_after(&self, id: MemoryId) -> Result<Option<Millis>>;
    /// Active memories due for review at `now` (in `room`, or all), oldest due first.
    fn due_for_review(
        &self,
        room: Option<&str>,
        now: Millis,
        limit: usize,
    ) -> Result<Vec<ReviewItem>>;
    /// Memories beside `anchor` in id order, outside the trash, nearest first: those of
    /// its session when it has one, else of its room.
    fn memories_beside(&self, anchor: &Memory, side: Side, limit: usize) -> Result<Vec<Memory>>;
    /// Active memories of some kinds and rooms (the hub's and the briefing's lists).
    fn active_memories(&self, q: &ActiveQuery<'_>) -> Result<Vec<Memory>>;
    /// Failures and fixes of a component in a room outside the trash, newest first.
    fn component_failures(&self, room: &str, component: &str, limit: usize) -> Result<Vec<Memory>>;
    /// Every room that holds an active memory, by name.
    fn active_rooms(&self) -> Result<Vec<String>>;
    /// Active, unpinned memories of a room, oldest first (maintenance's clusters).
    fn unpinned_in_room(&self, room: &str, limit: usize) -> Result<Vec<Memory>>;
    /// Ids of every active, unpinned memory, ascending (maintenance's archive pass).
    fn unpinned_ids(&self) -> Result<Vec<MemoryId>>;
    /// Memories of `room` (every room when `None`) outside the trash, newest first.
    fn recent_memories(&self, room: Option<&str>, limit: usize) -> Result<Vec<Memory>>;
    /// Every memory outside the trash, oldest first (C's export).
    fn live_memories(&self) -> Result<Vec<Memory>>;
    /// How many memories a session holds (outside the trash).
    fn session_memory_count(&self, session_id: &str) -> Result<u64>;
    /// When the newest memory of a room was created.
    fn newest_in_room(&self, room: &str) -> Result<Option<Millis>>;
    /// The oldest active memory of `room` whose content equals `content`, whitespace and
    /// case aside (remember's exact repeat; the backend keeps whatever index makes it fast).
    fn active_duplicate(&self, room: &str, content: &str) -> Result<Option<MemoryId>>;
    /// The memory of a topic in `room` that a topic-keyed write updates: the most recently
    /// updated one that is active or archived.
    fn topic_memory(&self, topic_key: &str, room: &str) -> Result<Option<MemoryId>>;
    /// Memories matching a browsing list's filters, newest first (created, then id).
    fn list_memories(&self, q: &ListQuery<'_>) -> Result<Vec<Memory>>;
    /// How many memories lie outside the trash, in `room` or in all.
    fn live_count(&self, room: Option<&str>) -> Result<u64>;
    /// Per UTC day (days since the epoch) from `since` on, how many of `what` there are;
    /// days with none are absent.
    fn daily_counts(&self, what: Daily, since: Millis) -> Result<Vec<(i64, u64)>>;
    /// Row counts of a table grouped by one column.
    fn tally(&self, t: Tally) -> Result<BTreeMap<String, u64>>;

    // --- events ---
    /// The positive-weight events of many memories, for the dynamics, in one batch.
    fn traces(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<Trace>>>;
    /// A memory's events counted by kind.
    fn event_counts(&self, id: MemoryId) -> Result<BTreeMap<String, u64>>;
    /// A memory's newest events, newest first.
    fn recent_events(&self, id: MemoryId, limit: usize) -> Result<Vec<EventView>>;
    /// The detail and time of a memory's newest event whose detail matches.
    fn last_event_detail(
        &self,
        id: MemoryId,
        m: DetailMatch<'_>,
    ) -> Result<Option<(String, Millis)>>;
    fn event_count(&self, id: MemoryId) -> Result<u64>;

    // --- links ---
    /// Links from or to a memory, by kind, then source, then target.
    fn links_around(&self, id: MemoryId) -> Result<Vec<LinkView>>;
    /// How many links start or end at a memory.
    fn link_count(&self, id: MemoryId) -> Result<u64>;
    /// Active memories linked to `id`, either way (A's chain protection).
    fn active_neighbours(&self, id: MemoryId) -> Result<Vec<MemoryId>>;
    /// Every link whose two ends are both in `ids` (the graph among a page of memories).
    fn links_among(&self, ids: &[MemoryId]) -> Result<Vec<LinkView>>;
    /// The newest memory that supersedes `id`.
    fn successor(&self, id: MemoryId) -> Result<Option<MemoryId>>;

    // --- revisions, evidence, judgments ---
    /// A memory's earlier texts, oldest first, numbered from 1.
    fn revisions(&self, id: MemoryId) -> Result<Vec<Revision>>;
    fn revision_count(&self, id: MemoryId) -> Result<u64>;
    /// Writes folded into a memory, oldest first.
    fn evidence(&self, id: MemoryId) -> Result<Vec<Evidence>>;
    fn judgment(&self, uid: &str) -> Result<Option<Judgment>>;
    /// Judgments still waiting for a verdict, in every room, newest first.
    fn pending_judgments(&self, limit: usize) -> Result<Vec<Judgment>>;
    /// Judgments touching a memory, newest first (at most 50).
    fn judgments_of(&self, id: MemoryId) -> Result<Vec<Judgment>>;
    /// Judgments with `status` (any when `None`) whose source memory is in `room` (every
    /// room when `None`), newest first.
    fn judgments_in(
        &self,
        room: Option<&str>,
        status: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Judgment>>;

    // --- sessions and prompts ---
    fn session(&self, id: &str) -> Result<Option<SessionInfo>>;
    /// The team user who started the session or saved the prompt; `None` when nobody is
    /// recorded (one person's store, a row from before migration 9 / 3) or there is no row.
    fn owner(&self, what: Owned<'_>) -> Result<Option<String>>;
    /// `None`: no such session; `Some(None)`: a session without an outcome yet.
    fn session_outcome(&self, id: &str) -> Result<Option<Option<String>>>;
    /// Memories recalled in a session, with their importance, by id.
    fn recalled_in_session(&self, session_id: &str) -> Result<Vec<(MemoryId, f64)>>;
    /// How many failed sessions recalled a memory.
    fn failed_sessions_recalling(&self, id: MemoryId) -> Result<u64>;
    /// Every room with its memories (outside the trash), sessions and prompts.
    fn rooms(&self) -> Result<Vec<RoomInfo>>;
    /// Sessions of `room` (every room when `None`), by latest activity: the session's
    /// end, its newest memory, or its start.
    fn recent_sessions(&self, room: Option<&str>, limit: usize) -> Result<Vec<SessionInfo>>;
    /// Sessions by start, newest first.
    fn sessions_by_start(&self, limit: usize) -> Result<Vec<SessionInfo>>;
    /// Every session, oldest first.
    fn all_sessions(&self) -> Result<Vec<SessionInfo>>;
    /// The start of the newest session of `room` that has not ended.
    fn open_session_since(&self, room: &str) -> Result<Option<Millis>>;
    /// Prompts of `room` (every room when `None`), newest first; with `query`, only
    /// those containing it (ASCII case aside, literally: no character is a pattern).
    fn prompts(
        &self,
        room: Option<&str>,
        query: Option<&str>,
        limit: usize,
    ) -> Result<Vec<PromptInfo>>;
    /// Every prompt, oldest first.
    fn all_prompts(&self) -> Result<Vec<PromptInfo>>;

    // --- meta and maintenance ---
    fn schema_version(&self) -> Result<i64>;
    /// A value of the store's key/value table.
    fn meta(&self, key: &str) -> Result<Option<String>>;
    /// The logged maintenance reports (JSON), newest first.
    fn maintenance_runs(&self, limit: usize) -> Result<Vec<String>>;
    /// Active episodes created before `before`, in `rooms` (every room when empty): the
    /// consolidation nudge's count.
    fn old_episodes(&self, before: Millis, rooms: &[String]) -> Result<u64>;

    // --- whole tables (export, the vault's full sync), the change log, vault records ---
    /// The rows of `section` after `after` (from the start when `None`), in the section's
    /// order, about `limit` per page (see [`RowKey`] for the one case a page runs over).
    /// Export streams a whole store through this, one round trip per page.
    fn rows_after(&self, section: Section, after: Option<&RowKey>, limit: usize)
    -> Result<RowPage>;
    /// The links that start at a memory, by destination, then kind (its vault file's list).
    fn links_from(&self, id: MemoryId) -> Result<Vec<LinkView>>;
    /// The `seq` of the newest entry of the change log that feeds the vault (0 when empty).
    /// Every write of a memory row or of its outgoing links adds an entry, in the same
    /// transaction (SQLite: triggers; PostgreSQL: triggers or the row owners).
    fn last_change(&self) -> Result<i64>;
    /// Change log entries with `after < seq <= upto`, by `seq`, at most `limit`.
    fn changes(&self, after: i64, upto: i64, limit: usize) -> Result<Vec<Change>>;
    /// The vault's file records: every one (`uid` `None`, in no particular order) or those
    /// holding one uid, by path.
    fn vault_files(&self, uid: Option<&str>) -> Result<Vec<VaultFile>>;

    // --- vectors (the bookkeeping; searching them is [`CandidateSource`]'s) ---
    /// Memories outside the trash with an id above `after` lacking a vector of `model`, in
    /// id order, at most `limit`, each with the text to embed (the title's line, then the
    /// content). Walk with the last id returned.
    fn missing_embeddings(
        &self,
        model: VectorModel<'_>,
        after: MemoryId,
        limit: usize,
    ) -> Result<Vec<(MemoryId, String)>>;
    /// How many memories outside the trash have a vector of `model`.
    fn embedded_count(&self, model: VectorModel<'_>) -> Result<u64>;
    /// The vectors held for `ids`, by model and dimension: what a team user's `doctor`
    /// leaves out of [`Health::vectors`] for the memories hidden from them.
    fn vector_sets_of(&self, ids: &[MemoryId]) -> Result<Vec<VectorSet>>;

    // --- a team server's people (`team_users`) and visibility ---
    /// Every user, by name.
    fn team_users(&self) -> Result<Vec<TeamUser>>;
    /// The user whose current (not revoked) token has this SHA-256 (hex).
    fn team_user_by_token(&self, token_hash: &str) -> Result<Option<String>>;
    /// Every memory, in any tier, that `viewer` may not see: private
    /// (`engram_core::team::is_private`) and not written by them. The visibility layer
    /// (`storage::visibility`) hides exactly these.
    fn private_of_others(&self, viewer: &str) -> Result<Vec<Memory>>;
}

/// One write transaction. Everything written is committed together when the closure
/// given to [`Backend::write`] returns `Ok`, and nothing is when it returns an error.
pub trait Tx: Reads {
    /// Inserts a memory row (not its text index, events or links); returns its id.
    fn insert_memory(&mut self, m: &NewMemory) -> Result<MemoryId>;
    /// Changes some columns of a memory; `false` when no row matched (unknown id, or
    /// not in `patch.if_tier`).
    fn patch_memory(&mut self, id: MemoryId, patch: &MemoryPatch) -> Result<bool>;
    /// Deletes a memory for good, with its events, links and text index rows.
    fn delete_memory(&mut self, id: MemoryId) -> Result<()>;
    /// (Re)writes a memory's full-text rows from its title, content, search context and
    /// tags.
    fn index_text(
        &mut self,
        id: MemoryId,
        title: Option<&str>,
        content: &str,
        tags: &[String],
        context: Option<&str>,
    ) -> Result<()>;
    /// Replaces a memory's vector (`None` drops it: it no longer describes the text).
    fn set_embedding(&mut self, id: MemoryId, vector: Option<(&str, &[f32])>) -> Result<()>;
    fn append_event(&mut self, e: &NewEvent<'_>) -> Result<()>;
    fn upsert_link(&mut self, l: &LinkWrite) -> Result<()>;
    /// Keeps the text `m` has now as a revision.
    fn add_revision(
        &mut self,
        m: &Memory,
        reason: &str,
        at: Millis,
        session_id: Option<&str>,
    ) -> Result<()>;
    fn add_evidence(&mut self, memory_id: MemoryId, e: &Evidence) -> Result<()>;
    /// Opens (or finds) the pending judgment between `src` and `dst`; returns its uid.
    fn pending_judgment(
        &mut self,
        src: MemoryId,
        dst: MemoryId,
        score: f64,
        session_id: Option<&str>,
        at: Millis,
    ) -> Result<String>;
    /// Records a verdict on a judgment; `false` when no judgment has that uid.
    fn record_verdict(&mut self, v: &Verdict, relation: &str, at: Millis) -> Result<bool>;
    /// `false` when an `End` found no session.
    fn write_session(&mut self, w: &SessionWrite<'_>) -> Result<bool>;
    /// Records `user` as the owner of a session or prompt that has none yet (an owner, once
    /// set, never changes).
    fn set_owner(&mut self, what: Owned<'_>, user: &str) -> Result<()>;
    /// Stores a prompt a session saw; returns its id.
    fn add_prompt(
        &mut self,
        session_id: Option<&str>,
        room: &str,
        content: &str,
        at: Millis,
    ) -> Result<i64>;
    /// Deletes one prompt; `false` when there was none.
    fn delete_prompt(&mut self, id: i64) -> Result<bool>;
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()>;
    /// Moves every memory, session and prompt of room `from` into `to`; returns how many
    /// memories moved.
    fn move_room(&mut self, from: &str, to: &str) -> Result<u64>;
    /// Logs one maintenance run's report (JSON).
    fn log_maintenance(
        &mut self,
        started: Millis,
        finished: Millis,
        dry_run: bool,
        report: &str,
    ) -> Result<()>;
    /// Trims the change log that feeds the vault: all of it (`all`, no vault), or what
    /// the vault has already written.
    fn prune_changes(&mut self, all: bool) -> Result<()>;

    // --- import and the vault's read-back: rows as given ---
    /// Inserts a memory row under an id the caller chose (an import keeping a source's
    /// ids); the id must be free. A backend with an id sequence moves it past the id.
    fn insert_memory_with_id(&mut self, id: MemoryId, m: &NewMemory) -> Result<MemoryId>;
    /// Inserts rows as given (an import), in order; for each, whether it was stored.
    /// Links, sessions and judgments already present (same source, destination and kind;
    /// same id; same uid) and prompts already present (same session, time and text) are
    /// left as they are (`false`); revisions, evidence and events are always added.
    /// Memory rows are not accepted here ([`Tx::insert_memory`]).
    fn insert_rows(&mut self, rows: &[StoredRow]) -> Result<Vec<bool>>;
    /// Deletes one link; `false` when there was none.
    fn delete_link(&mut self, src: MemoryId, dst: MemoryId, kind: LinkKind) -> Result<bool>;
    /// Changes the vault's file records.
    fn write_vault_file(&mut self, w: &VaultFileWrite<'_>) -> Result<()>;

    /// Adds a team user holding the token with this SHA-256; `false` when the name is taken.
    fn add_team_user(&mut self, name: &str, token_hash: &str, at: Millis) -> Result<bool>;
    /// Replaces a user's token hash (`None`: revoked); `false` when there is no such user.
    fn set_team_token(&mut self, name: &str, token_hash: Option<&str>, at: Millis) -> Result<bool>;
}

/// A database the engine can run on: its reads, its candidate sources, one write
/// transaction at a time, and what the store asks of the database as a whole (durability,
/// keeping vector search current, a consistent copy, health).
///
/// `Store` holds a `Box<dyn Backend>`; [`crate::Store::open`] makes the SQLite one, and
/// [`crate::Store::open_with`] takes any other.
pub trait Backend: Reads + CandidateSource + Send {
    /// Runs `f` in one write transaction and commits it; may run `f` more than once
    /// (see the module's notes), so `f` has no effects outside the transaction.
    fn write(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()>;

    /// Whether commits wait until the data is on disk (`true`, the default) or may skip
    /// it (`false`: for writes nobody asked to keep, such as recall hits, and batches that
    /// sync once at the end; a crash may lose the last commits but never corrupts). SQLite:
    /// `synchronous = FULL / NORMAL`; PostgreSQL: `synchronous_commit = on / off`.
    fn set_durable(&mut self, durable: bool) -> Result<()>;

    /// Brings vector search up to date for `model` before a recall or a neighbour search
    /// (`None`: no model is loaded, vector candidates stay empty). SQLite loads the vectors
    /// other processes wrote into its in-memory index and looks after its HNSW file; a
    /// PostgreSQL backend has nothing to do (pgvector's index is always current). Returns
    /// whether any vector of `model` can be searched (recall embeds the query only then).
    fn prepare_vectors(&mut self, model: Option<VectorModel<'_>>) -> Result<bool>;
    /// The loaded model changed: drop what is held in memory about the old one's vectors.
    fn forget_vectors(&mut self) {}
    /// How vectors of `model` are searched: `"hnsw"` (an approximate index) or `"exact"`.
    fn vector_search(&self, model: VectorModel<'_>) -> &'static str;
    /// The vector search as this process holds it: how many vectors, and whether through
    /// an approximate index. `None` before the first [`Backend::prepare_vectors`] with a
    /// model (and on backends that hold nothing in memory).
    fn vector_search_state(&self) -> Option<(usize, bool)> {
        None
    }

    /// Writes a consistent copy of the whole database to `target`, a new file (SQLite:
    /// `VACUUM INTO`). A server database answers with an error naming its own tool
    /// (`pg_dump`): a file copy is not how such a database is backed up.
    fn copy_to(&self, target: &Path) -> Result<()>;
    /// Reads the store's health for `doctor` (nothing is repaired).
    fn health(&self) -> Result<Health>;

    /// Takes, without waiting, the lock that lets one process of the many on this
    /// database run `job` (maintenance, the background embedding fill), or answers
    /// [`crate::Error::Busy`] (naming the database) when another process holds it. The
    /// lock lasts as long as the returned [`JobLock`]; a process that dies releases it
    /// with its connection. SQLite grants it always: one person's processes already share
    /// maintenance's schedule through `meta`, and its writers queue on the file's lock.
    ///
    /// No default: a wrapper (the visibility layer) that forgot to pass it on would grant
    /// every job to every server without a word.
    fn try_exclusive(&self, job: Job) -> Result<JobLock>;

    /// The schema version this backend's code migrates a database to: its own number (each
    /// backend numbers its migrations on its own), so a test or `doctor` compares
    /// [`Reads::schema_version`] with this, never with another backend's. No default, for
    /// the reason [`Backend::try_exclusive`] has none.
    fn schema_supported(&self) -> i64;

    /// The SQLite backend itself, for the features only it has: seed C's in-place
    /// conversion, the HNSW build command and its agreement diagnostic, the background
    /// index build. Every other backend answers `None` (and those features say so).
    fn sqlite(&mut self) -> Option<&mut crate::sqlite::SqliteBackend> {
        None
    }
    /// [`Backend::sqlite`], read-only.
    fn sqlite_ref(&self) -> Option<&crate::sqlite::SqliteBackend> {
        None
    }
}

/// A job that one process at a time runs on a shared database ([`Backend::try_exclusive`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// `maintain` and `consolidate_now`: consolidation, archiving, the run log.
    Maintenance,
    /// A server's background fill of the vectors its model lacks.
    Backfill,
}

impl Job {
    /// How messages name the job.
    pub fn name(self) -> &'static str {
        match self {
            Job::Maintenance => "maintenance",
            Job::Backfill => "the background embedding fill",
        }
    }
}

/// A held [`Job`] lock; dropping it releases the lock (a PostgreSQL backend holds it on a
/// connection of its own, closed on drop, so no pooled connection ever keeps it).
pub struct JobLock(#[allow(dead_code)] Option<Box<dyn Send>>);

impl JobLock {
    /// A lock that holds nothing: the backend needs none.
    pub fn free() -> JobLock {
        JobLock(None)
    }

    /// A lock held for as long as `holder` lives.
    pub fn held_by(holder: Box<dyn Send>) -> JobLock {
        JobLock(Some(holder))
    }
}

impl std::fmt::Debug for JobLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "JobLock(held)"
        } else {
            "JobLock(free)"
        })
    }
}

/// [`Backend::write`] for a closure that returns a value.
pub fn write<T>(
    backend: &mut dyn Backend,
    mut f: impl FnMut(&mut dyn Tx) -> Result<T>,
) -> Result<T> {
    let mut out = None;
    backend.write(&mut |tx| {
        out = Some(f(tx)?);
        Ok(())
    })?;
    Ok(out.expect("a committed write transaction ran its closure"))
}

/// A reference that must name a memory; an unknown one is reported against `field`.
pub fn require_memory<R: Reads + ?Sized>(r: &R, id: &IdRef, field: &'static str) -> Result<Memory> {
    r.memory(id)?
        .ok_or_else(|| crate::Error::not_found(field, describe(id)))
}

/// The id a reference names; an unknown one is reported against `field`.
pub fn require_id<R: Reads + ?Sized>(r: &R, id: &IdRef, field: &'static str) -> Result<MemoryId> {
    r.memory_id(id)?
        .ok_or_else(|| crate::Error::not_found(field, describe(id)))
}

fn describe(r: &IdRef) -> String {
    match r {
        IdRef::Id(id) => format!("#{id}"),
        IdRef::Uid(uid) => uid.clone(),
    }
}
