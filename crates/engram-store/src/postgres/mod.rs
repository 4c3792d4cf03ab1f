//! The PostgreSQL backend: the storage interface ([`crate::storage`]) over a pool of
//! synchronous `postgres` connections, with pgvector for vectors and full-text search plus
//! `pg_trgm` for words and CJK text. Every SQL statement it runs lives in this folder.
//!
//! Why the synchronous client and r2d2: the engine is synchronous and servers call it from
//! `spawn_blocking`, so a blocking client fits without a runtime of its own; `postgres` is
//! the maintained blocking face of `tokio-postgres`, and `r2d2_postgres` (by the same
//! author) is the small pool made for it. `sqlx` or `deadpool` would bring an async runtime
//! into every call.
//!
//! One module owns each table's rows, as in `sqlite/`: [`memories`], [`events`], [`links`],
//! [`revisions`] (revisions and judgments), [`sessions`] (sessions and prompts),
//! [`evidence`], [`fulltext`] (`memory_text`: the `tsvector` and the CJK runs),
//! [`embeddings`] (pgvector), [`maintenance`] (`meta`, `maintenance_runs`, `changes`).
//! [`candidates`] answers recall's questions ([`crate::storage::candidates`]).
//!
//! A write is one `SERIALIZABLE` transaction: two writers that read and change related
//! rows (resolution's reinforce, merge, supersede) cannot both commit on stale reads; the
//! loser gets SQLSTATE 40001 (or 40P01 on a deadlock) and [`Backend::write`] runs its
//! closure again, a bounded number of times, so a client never sees it.

pub mod candidates;
pub(crate) mod db;
mod embeddings;
mod events;
mod evidence;
mod filter;
mod fulltext;
mod jobs;
mod lexical;
mod links;
mod maintenance;
mod memories;
mod reads;
mod revisions;
mod sessions;
mod tables;
mod team;
mod vault_files;

pub use candidates::PgCandidates;

use crate::storage::candidates::{CandidateSource, Filter};
use crate::storage::rows::*;
use crate::storage::{Backend, Tx};
use crate::{Error, Result};
use engram_core::scoring::{Candidates, Edge};
use engram_core::text::QueryPlan;
use engram_core::{LinkKind, Memory, MemoryId, Millis};
use postgres::types::ToSql;
use postgres::{Client, IsolationLevel, Row, Transaction};
use r2d2_postgres::PostgresConnectionManager;
use r2d2_postgres::r2d2;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

/// The parameters of one statement.
pub(crate) type Params<'a> = [&'a (dyn ToSql + Sync)];

/// How many times a write transaction runs before a serialisation failure is reported.
/// Under load the losers are many: 32 clients writing related memories through two
/// servers (`engram bench load`, 16 writers at once) lost 12 attempts in a row on about
/// 3 % of their writes, so the bound is generous and the pauses spread out (see
/// [`retry_pause_ms`]).
pub const WRITE_ATTEMPTS: usize = 40;

/// Attempts a write makes freely before it takes the write lock for each further one.
pub(crate) const RACE_ATTEMPTS: usize = 3;

/// The pause before attempt `attempt + 1`, in ms: "full jitter" (a random share of an
/// exponentially growing window, capped at 250 ms), so racers that collided once spread
/// apart instead of colliding again in step.
fn retry_pause_ms(attempt: usize) -> u64 {
    let window = (2u64 << attempt.min(7)).min(250);
    1 + crate::ops::random_u64() % window
}

/// What statements run on: a pooled connection or an open transaction. Object-safe, so
/// each row module is written once for both.
pub(crate) trait Db {
    fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>>;
    fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64>;
}

impl Db for Client {
    fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>> {
        Ok(Client::query(self, sql, params)?)
    }
    fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64> {
        Ok(Client::execute(self, sql, params)?)
    }
}

impl Db for Transaction<'_> {
    fn query(&mut self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>> {
        Ok(Transaction::query(self, sql, params)?)
    }
    fn execute(&mut self, sql: &str, params: &Params<'_>) -> Result<u64> {
        Ok(Transaction::execute(self, sql, params)?)
    }
}

/// The first row of a query, if any.
pub(crate) fn opt(db: &mut dyn Db, sql: &str, params: &Params<'_>) -> Result<Option<Row>> {
    Ok(db.query(sql, params)?.into_iter().next())
}

/// A count (or any one `bigint`) from a query that returns exactly one row.
pub(crate) fn count(db: &mut dyn Db, sql: &str, params: &Params<'_>) -> Result<u64> {
    let row = opt(db, sql, params)?.expect("an aggregate returns one row");
    Ok(row.get::<_, i64>(0).max(0) as u64)
}

/// A PostgreSQL store: a pool of connections to one database.
pub struct PgBackend {
    pool: r2d2::Pool<PostgresConnectionManager<postgres::NoTls>>,
    /// `host:port/db`, for messages (never the password).
    target: String,
    /// How to connect, for the connections that hold a job's lock (`jobs.rs`).
    config: postgres::Config,
    /// The loaded model whose vectors recall searches (set by `prepare_vectors`).
    model: Option<(String, usize)>,
    /// Whether commits wait for the write-ahead log on disk (`synchronous_commit`).
    durable: bool,
}

impl std::fmt::Debug for PgBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgBackend")
            .field("target", &self.target)
            .finish()
    }
}

/// A write transaction on the PostgreSQL backend. Reads take `&self`, so the transaction
/// sits in a `RefCell`; nothing here holds a borrow across calls.
pub struct PgTx<'c> {
    tx: RefCell<Transaction<'c>>,
}

/// Runs one read against whatever a [`Reads`](crate::storage::Reads) implementor holds.
pub(crate) trait WithDb {
    fn with<R>(&self, f: impl FnOnce(&mut dyn Db) -> Result<R>) -> Result<R>;
}

impl WithDb for PgBackend {
    fn with<R>(&self, f: impl FnOnce(&mut dyn Db) -> Result<R>) -> Result<R> {
        let mut client = self.client()?;
        f(&mut *client).map_err(|e| self.lost(e))
    }
}

impl WithDb for PgTx<'_> {
    fn with<R>(&self, f: impl FnOnce(&mut dyn Db) -> Result<R>) -> Result<R> {
        f(&mut *self.tx.borrow_mut())
    }
}

impl PgBackend {
    /// A [`crate::Store`] on the database at `url` (opened and migrated here); `path` is
    /// where the files beside the store are found from (see [`crate::Store::open_with`]).
    pub fn open_store(url: &str, config: engram_core::Config, path: &Path) -> Result<crate::Store> {
        crate::Store::open_with(Box::new(PgBackend::open(url)?), config, path)
    }

    /// Opens a pool on `url` (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB`) and brings the
    /// schema up to date. A wrong or unreachable URL fails here, naming host and database.
    pub fn open(url: &str) -> Result<PgBackend> {
        db::open(url)
    }

    /// The host, port and database this backend talks to.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Recall's candidate sources, with the vectors of `model` (none: lexical only).
    pub fn candidates(&self, model: Option<&str>) -> PgCandidates<'_> {
        PgCandidates {
            backend: self,
            model: model.map(str::to_string),
        }
    }

    /// A backend over a pool already made and migrated (see `db.rs`).
    pub(crate) fn over(
        pool: r2d2::Pool<PostgresConnectionManager<postgres::NoTls>>,
        target: String,
        config: postgres::Config,
    ) -> PgBackend {
        PgBackend {
            pool,
            target,
            config,
            model: None,
            durable: true,
        }
    }

    /// The candidate sources with the model `prepare_vectors` set.
    fn current(&self) -> PgCandidates<'_> {
        self.candidates(self.model.as_ref().map(|(m, _)| m.as_str()))
    }

    pub(crate) fn client(
        &self,
    ) -> Result<r2d2::PooledConnection<PostgresConnectionManager<postgres::NoTls>>> {
        self.pool.get().map_err(|e| Error::Unavailable {
            target: self.target.clone(),
            message: e.to_string(),
        })
    }

    /// A closed connection becomes [`Error::Unavailable`], naming the database.
    fn lost(&self, e: Error) -> Error {
        match e {
            Error::Postgres(pe) if pe.is_closed() => Error::Unavailable {
                target: self.target.clone(),
                message: format!("the connection was lost ({pe})"),
            },
            other => other,
        }
    }

    fn write_once(&self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        let mut client = self.client()?;
        let mut tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::Serializable)
            .start()?;
        if !self.durable {
            tx.batch_execute("SET LOCAL synchronous_commit = off")?;
        }
        let mut t = PgTx {
            tx: RefCell::new(tx),
        };
        f(&mut t)?;
        t.tx.into_inner().commit()?;
        Ok(())
    }
}

/// Whether an error is a serialisation failure or a deadlock: the transaction lost a race
/// and running it again is the remedy.
pub(crate) fn is_retryable(e: &Error) -> bool {
    use postgres::error::SqlState;
    match e {
        Error::Postgres(pe) => pe.code().is_some_and(|c| {
            *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
        }),
        _ => false,
    }
}

impl PgBackend {
    /// [`Backend::write`]: one transaction, run again on a serialisation failure.
    fn write_retrying(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            // A write that keeps losing stops racing: it waits its turn among the writes
            // that lost as often, so under heavy contention on the same rows they run one
            // at a time (and win) instead of exhausting their attempts.
            let turn = if attempt > RACE_ATTEMPTS {
                Some(jobs::lock_writes(&self.config, &self.target)?)
            } else {
                None
            };
            match self.write_once(f) {
                // The lock is let go before any pause, and a write that held it goes again
                // at once (it lost only to a write that never waited).
                Err(e) if is_retryable(&e) && attempt < WRITE_ATTEMPTS => {
                    if turn.is_none() {
                        let ms = retry_pause_ms(attempt);
                        std::thread::sleep(std::time::Duration::from_millis(ms));
                    }
                    drop(turn);
                }
                other => return other.map_err(|e| self.lost(e)),
            }
        }
    }
}

impl Backend for PgBackend {
    fn write(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        self.write_retrying(f)
    }

    fn set_durable(&mut self, durable: bool) -> Result<()> {
        self.durable = durable;
        Ok(())
    }

    /// pgvector's index is always current: nothing to load, only the model to remember.
    fn prepare_vectors(&mut self, model: Option<VectorModel<'_>>) -> Result<bool> {
        self.model = model.map(|m| (m.model.to_string(), m.dim));
        match model {
            Some(m) => self.with(|db| embeddings::any(db, m)),
            None => Ok(false),
        }
    }

    fn forget_vectors(&mut self) {
        self.model = None;
    }

    fn vector_search(&self, model: VectorModel<'_>) -> &'static str {
        if model.dim == db::HNSW_DIM {
            "hnsw"
        } else {
            "exact"
        }
    }

    /// A server database is copied with its own tools, not as a file.
    fn copy_to(&self, target: &Path) -> Result<()> {
        Err(Error::Config {
            path: target.to_path_buf(),
            message: format!(
                "a PostgreSQL store ({}) is not copied to a file: back it up with pg_dump and restore it with pg_restore",
                self.target
            ),
        })
    }

    fn health(&self) -> Result<Health> {
        self.with(db::health)
    }

    /// An advisory lock on a connection of its own (see `jobs.rs`).
    fn try_exclusive(&self, job: crate::storage::Job) -> Result<crate::storage::JobLock> {
        jobs::try_lock(&self.config, &self.target, job)
    }

    fn schema_supported(&self) -> i64 {
        db::MIGRATIONS.len() as i64
    }
}

impl CandidateSource for PgBackend {
    fn lexical(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates> {
        self.current().lexical(plan, filter, k, extra_substrings)
    }
    fn coverage(
        &self,
        plan: &QueryPlan,
        ids: &[MemoryId],
        partial: bool,
    ) -> Result<HashMap<MemoryId, f64>> {
        self.current().coverage(plan, ids, partial)
    }
    fn vector(&self, query: &[f32], filter: &Filter, k: usize) -> Result<Candidates> {
        self.current().vector(query, filter, k)
    }
    fn cosines(&self, query: &[f32], ids: &[MemoryId]) -> Result<HashMap<MemoryId, f64>> {
        self.current().cosines(query, ids)
    }
    fn vectors(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<f32>>> {
        self.current().vectors(ids)
    }
    fn links_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>> {
        self.current().links_around(seeds, hops, filter)
    }
}

impl Tx for PgTx<'_> {
    fn insert_memory_with_id(&mut self, id: MemoryId, m: &NewMemory) -> Result<MemoryId> {
        memories::insert_with_id(self.tx.get_mut(), id, m)
    }
    fn insert_rows(&mut self, rows: &[StoredRow]) -> Result<Vec<bool>> {
        tables::insert_rows(self.tx.get_mut(), rows)
    }
    fn delete_link(&mut self, src: MemoryId, dst: MemoryId, kind: LinkKind) -> Result<bool> {
        links::delete(self.tx.get_mut(), src, dst, kind)
    }
    fn write_vault_file(&mut self, w: &VaultFileWrite<'_>) -> Result<()> {
        vault_files::write(self.tx.get_mut(), w)
    }
    fn add_team_user(&mut self, name: &str, token_hash: &str, at: Millis) -> Result<bool> {
        team::add_user(self.tx.get_mut(), name, token_hash, at)
    }
    fn set_team_token(&mut self, name: &str, token_hash: Option<&str>, at: Millis) -> Result<bool> {
        team::set_token(self.tx.get_mut(), name, token_hash, at)
    }
    fn insert_memory(&mut self, m: &NewMemory) -> Result<MemoryId> {
        memories::insert(self.tx.get_mut(), m)
    }
    fn patch_memory(&mut self, id: MemoryId, patch: &MemoryPatch) -> Result<bool> {
        memories::patch(self.tx.get_mut(), id, patch)
    }
    /// Links go first, explicitly, so the change log records them before the row (as
    /// SQLite's does); events, text rows, vectors, revisions, evidence and judgments go
    /// with the row (`ON DELETE CASCADE`).
    fn delete_memory(&mut self, id: MemoryId) -> Result<()> {
        links::delete_around(self.tx.get_mut(), id)?;
        memories::delete(self.tx.get_mut(), id)
    }
    fn index_text(
        &mut self,
        id: MemoryId,
        title: Option<&str>,
        content: &str,
        tags: &[String],
        context: Option<&str>,
    ) -> Result<()> {
        fulltext::index(self.tx.get_mut(), id, title, content, tags, context)
    }
    fn set_embedding(&mut self, id: MemoryId, vector: Option<(&str, &[f32])>) -> Result<()> {
        match vector {
            Some((model, v)) => embeddings::write(self.tx.get_mut(), id, model, v),
            None => embeddings::delete(self.tx.get_mut(), id),
        }
    }
    fn append_event(&mut self, e: &NewEvent<'_>) -> Result<()> {
        events::append(self.tx.get_mut(), e)
    }
    fn upsert_link(&mut self, l: &LinkWrite) -> Result<()> {
        links::upsert(self.tx.get_mut(), l)
    }
    fn add_revision(
        &mut self,
        m: &Memory,
        reason: &str,
        at: Millis,
        session_id: Option<&str>,
    ) -> Result<()> {
        revisions::add(self.tx.get_mut(), m, reason, at, session_id)
    }
    fn add_evidence(&mut self, memory_id: MemoryId, e: &Evidence) -> Result<()> {
        evidence::insert(self.tx.get_mut(), memory_id, e)
    }
    fn pending_judgment(
        &mut self,
        src: MemoryId,
        dst: MemoryId,
        score: f64,
        session_id: Option<&str>,
        at: Millis,
    ) -> Result<String> {
        revisions::pending(self.tx.get_mut(), src, dst, score, session_id, at)
    }
    fn record_verdict(&mut self, v: &Verdict, relation: &str, at: Millis) -> Result<bool> {
        revisions::record_verdict(
            self.tx.get_mut(),
            v,
            relation,
            v.confidence.unwrap_or(1.0),
            at,
        )
    }
    fn write_session(&mut self, w: &SessionWrite<'_>) -> Result<bool> {
        sessions::write(self.tx.get_mut(), w)
    }
    fn add_prompt(
        &mut self,
        session_id: Option<&str>,
        room: &str,
        content: &str,
        at: Millis,
    ) -> Result<i64> {
        sessions::add_prompt(self.tx.get_mut(), session_id, room, content, at)
    }
    fn delete_prompt(&mut self, id: i64) -> Result<bool> {
        sessions::delete_prompt(self.tx.get_mut(), id)
    }
    fn set_owner(&mut self, what: Owned<'_>, user: &str) -> Result<()> {
        sessions::set_owner(self.tx.get_mut(), what, user)
    }
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        maintenance::set_meta(self.tx.get_mut(), key, value)
    }
    fn move_room(&mut self, from: &str, to: &str) -> Result<u64> {
        maintenance::move_room(self.tx.get_mut(), from, to)
    }
    fn log_maintenance(
        &mut self,
        started: Millis,
        finished: Millis,
        dry_run: bool,
        report: &str,
    ) -> Result<()> {
        maintenance::log_run(self.tx.get_mut(), started, finished, dry_run, report)
    }
    fn prune_changes(&mut self, all: bool) -> Result<()> {
        maintenance::prune_changes(self.tx.get_mut(), all)
    }
}
