//! [`SqliteBackend`]: the storage interface over one SQLite file. It owns the connection
//! and what only SQLite needs beside it: the in-memory vector index (exact scan, or HNSW
//! past `ann_threshold`, kept up by `index_upkeep.rs`), whether this process builds that
//! index in the background, and the file's path (where the HNSW file is saved).

use super::Conn;
use super::vector_index::VectorIndex;
use crate::Result;
use crate::storage::candidates::{CandidateSource, Filter};
use crate::storage::rows::{Health, VectorModel};
use crate::storage::{Backend, Tx};
use engram_core::scoring::{Candidates, Edge};
use engram_core::text::QueryPlan;
use engram_core::{Config, MemoryId};
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The SQLite backend: one connection (WAL, `BEGIN IMMEDIATE` writers), the vector index
/// of the loaded model, and the settings it reads (`bm25_scale`, the `ann_*` keys).
pub struct SqliteBackend {
    pub(crate) conn: Connection,
    /// The database file; the HNSW index is saved beside it.
    #[cfg_attr(not(feature = "ann"), allow(dead_code))]
    pub(crate) path: PathBuf,
    pub(crate) config: Config,
    /// Vectors of the current model, loaded on first use and refreshed incrementally.
    pub(crate) index: Option<VectorIndex>,
    /// Whether this process builds the HNSW index in the background once the store is
    /// large enough (servers; see [`crate::Store::set_background_index`]).
    pub(crate) background_index: bool,
}

impl SqliteBackend {
    /// Opens or creates the database at `path`, migrates it, and sets a seed C database
    /// found there aside (returning the backup's path; the store imports its rows).
    pub(crate) fn open(path: &Path, config: &Config) -> Result<(SqliteBackend, Option<PathBuf>)> {
        let (conn, backup) = super::db::open_converting(path)?;
        Ok((SqliteBackend::over(conn, path, config), backup))
    }

    /// [`SqliteBackend::open`] without a `Store` around it (no seed C import): for running
    /// the same trait calls on two backends and comparing them (`tests/postgres.rs`).
    pub fn open_bare(path: &Path, config: &Config) -> Result<SqliteBackend> {
        Ok(SqliteBackend::open(path, config)?.0)
    }

    /// A backend over a connection already open and migrated.
    pub(crate) fn over(conn: Connection, path: &Path, config: &Config) -> SqliteBackend {
        SqliteBackend {
            conn,
            path: path.to_path_buf(),
            config: config.clone(),
            index: None,
            background_index: false,
        }
    }
}

impl Conn for SqliteBackend {
    fn conn(&self) -> &Connection {
        &self.conn
    }
}

impl Backend for SqliteBackend {
    /// Granted always: one person's processes share maintenance's schedule through `meta`,
    /// and their writers queue on the file's lock.
    fn try_exclusive(&self, _job: crate::storage::Job) -> Result<crate::storage::JobLock> {
        Ok(crate::storage::JobLock::free())
    }

    fn schema_supported(&self) -> i64 {
        crate::SCHEMA_VERSION
    }

    fn write(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        super::write(&mut self.conn, f)
    }

    fn set_durable(&mut self, durable: bool) -> Result<()> {
        super::set_full_sync(&self.conn, durable)
    }

    fn prepare_vectors(&mut self, model: Option<VectorModel<'_>>) -> Result<bool> {
        self.refresh_index(model)?;
        Ok(self.index.as_ref().is_some_and(|i| i.len() > 0))
    }

    fn forget_vectors(&mut self) {
        self.index = None;
    }

    fn vector_search(&self, model: VectorModel<'_>) -> &'static str {
        if self.hnsw_in_use(model.model, model.dim) {
            "hnsw"
        } else {
            "exact"
        }
    }

    fn vector_search_state(&self) -> Option<(usize, bool)> {
        self.index.as_ref().map(|i| (i.len(), i.approximate()))
    }

    fn copy_to(&self, target: &Path) -> Result<()> {
        super::db::vacuum_into(&self.conn, target)
    }

    fn health(&self) -> Result<Health> {
        self.read_health()
    }

    fn sqlite(&mut self) -> Option<&mut SqliteBackend> {
        Some(self)
    }

    fn sqlite_ref(&self) -> Option<&SqliteBackend> {
        Some(self)
    }
}

impl CandidateSource for SqliteBackend {
    fn lexical(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates> {
        self.candidates().lexical(plan, filter, k, extra_substrings)
    }

    fn coverage(
        &self,
        plan: &QueryPlan,
        ids: &[MemoryId],
        partial: bool,
    ) -> Result<HashMap<MemoryId, f64>> {
        self.candidates().coverage(plan, ids, partial)
    }

    fn vector(&self, query: &[f32], filter: &Filter, k: usize) -> Result<Candidates> {
        self.candidates().vector(query, filter, k)
    }

    fn cosines(&self, query: &[f32], ids: &[MemoryId]) -> Result<HashMap<MemoryId, f64>> {
        self.candidates().cosines(query, ids)
    }

    fn vectors(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<f32>>> {
        self.candidates().vectors(ids)
    }

    fn links_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>> {
        self.candidates().links_around(seeds, hops, filter)
    }
}
