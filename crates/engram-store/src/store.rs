//! The [`Store`]: one storage backend (`Box<dyn Backend>`), its configuration, a clock and
//! the loaded encoder; the doors the operations go through (`reads`, `write`,
//! `candidates`), and the SQLite-only features reached through `Backend::sqlite`.

use crate::Result;
use crate::sqlite::SqliteBackend;
use crate::storage::candidates::{CandidateSource, Filter};
use crate::storage::rows::{Health, VectorModel};
use crate::storage::visibility::{Viewer, Visible};
use crate::storage::{Backend, Reads, Tx};
use engram_core::memory::IdRef;
use engram_core::scoring::Candidates;
use engram_core::text::QueryPlan;
use engram_core::{Config, Memory, MemoryId, Millis};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where "now" comes from. Tests substitute a fixed or advancing clock to exercise decay.
pub type Clock = Arc<dyn Fn() -> Millis + Send + Sync>;

/// The wall clock, in Unix milliseconds.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as Millis)
            .unwrap_or(0)
    })
}

/// An open engram store: a storage backend, its configuration, a clock and the loaded
/// encoder. Writes take `&mut self`; share one across threads behind a mutex, or open one
/// per process: SQLite's WAL and the busy timeout let many processes share a file.
pub struct Store {
    /// The database: SQLite ([`Store::open`]) or any other [`Backend`] ([`Store::open_with`]),
    /// seen through the visibility layer (a team user's call sees only what they may).
    pub(crate) backend: Visible,
    pub(crate) config: Config,
    pub(crate) clock: Clock,
    /// The database file, or for a server database the path its files beside it (the
    /// vault, hooks state) are found from ([`crate::files::home::Home::of_db`]).
    pub(crate) path: PathBuf,
    /// The sentence encoder, when a model is loaded; recall is lexical without one.
    pub(crate) embedder: Option<Arc<dyn engram_core::embed::Embedder>>,
    /// Vectors computed ahead by [`Store::remember_batch`], by the text they embed.
    pub(crate) prepared: std::collections::HashMap<String, Vec<f32>>,
}

impl Store {
    /// Runs `f` with commits that skip the fsync ([`Backend::set_durable`]`(false)`: a
    /// crash may lose the last commits, never corrupt), then restores durable commits. For
    /// writes no client asked to keep (recall hits) and for batches that sync once at the
    /// end. Durability is restored even when `f` panics: a server that survives a panicking
    /// call keeps its store and must not go on committing without fsyncs.
    pub(crate) fn without_fsync<T>(&mut self, f: impl FnOnce(&mut Store) -> T) -> Result<T> {
        self.backend.set_durable(false)?;
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)));
        let restored = self.backend.set_durable(true);
        match out {
            Ok(out) => {
                restored?;
                Ok(out)
            }
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Opens or creates the SQLite database at `path` and migrates it (a seed C database
    /// found there is converted in place first).
    pub fn open(path: &Path, config: Config) -> Result<Store> {
        config.validate()?;
        let (backend, backup) = SqliteBackend::open(path, &config)?;
        let mut store = Store::open_with(Box::new(backend), config, path)?;
        if let Some(c) = store.import_seed_c(backup)? {
            // Said on stderr: stdout may be an MCP stream or a hook's JSON.
            eprintln!("{}", c.summary(path));
            for w in &c.warnings {
                eprintln!("engram: seed C: {w}");
            }
        }
        Ok(store)
    }

    /// A store over any backend, already opened and migrated by its own constructor (a
    /// PostgreSQL pool, say). `path` is where the files beside the database are found from:
    /// the vault and the other paths of [`crate::files::home::Home::of_db`] are taken from
    /// its folder, as for a SQLite file there.
    pub fn open_with(backend: Box<dyn Backend>, config: Config, path: &Path) -> Result<Store> {
        config.validate()?;
        Ok(Store {
            backend: Visible::new(backend),
            config,
            clock: system_clock(),
            path: path.to_path_buf(),
            embedder: None,
            prepared: Default::default(),
        })
    }

    /// Runs `f` as team user `user` sees the store (`None`: as the server itself, which
    /// sees everything): other users' private memories do not exist for it, and what it
    /// writes is theirs. The viewer is cleared again however `f` ends, panics included, so
    /// a server that survives a failed call never serves the next one as the wrong user.
    pub fn as_viewer<T>(
        &mut self,
        user: Option<&str>,
        f: impl FnOnce(&mut Store) -> T,
    ) -> Result<T> {
        let Some(name) = user else {
            return Ok(f(self));
        };
        let viewer = Viewer::load(self.backend.unfiltered(), name)?;
        self.backend.set_viewer(Some(viewer));
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)));
        self.backend.set_viewer(None);
        match out {
            Ok(out) => Ok(out),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// The team user the current call runs as, if any.
    pub fn viewer(&self) -> Option<&str> {
        self.backend.viewer().map(|v| v.name.as_str())
    }

    /// Replaces the clock (tests, simulations, benchmarks).
    pub fn with_clock(mut self, clock: Clock) -> Store {
        self.clock = clock;
        self
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn now(&self) -> Millis {
        (self.clock)()
    }

    /// Resolves an id reference to an existing memory's id (any tier).
    pub fn resolve_id(&self, r: &IdRef) -> Result<MemoryId> {
        crate::storage::require_id(self.reads(), r, "id")
    }

    /// Loads a memory by reference.
    pub fn get(&self, r: &IdRef) -> Result<Memory> {
        crate::storage::require_memory(self.reads(), r, "id")
    }

    pub(crate) fn load_many(&self, ids: &[MemoryId]) -> Result<Vec<Memory>> {
        self.reads().memories(ids)
    }

    /// The storage the engine reads through.
    pub(crate) fn reads(&self) -> &dyn Reads {
        &self.backend
    }

    /// The candidate sources recall and resolution ask, as they stand (call
    /// [`Store::refresh_index`] first for other processes' vectors).
    pub(crate) fn candidates(&self) -> &dyn CandidateSource {
        &self.backend
    }

    /// Runs `f` in one write transaction of the storage backend (see
    /// [`Backend::write`](crate::storage::Backend::write): `f` may run more than once).
    pub(crate) fn write<T>(&mut self, f: impl FnMut(&mut dyn Tx) -> Result<T>) -> Result<T> {
        crate::storage::write(&mut self.backend, f)
    }

    /// Reads the store's health (`doctor`). On SQLite it costs a full scan of the file
    /// (`quick_check`).
    pub fn health(&self) -> Result<Health> {
        self.backend.health()
    }

    /// Active episodes created before `before` (Unix ms), in `rooms` (all rooms when empty).
    pub fn count_old_episodes(&self, before: Millis, rooms: &[String]) -> Result<u64> {
        self.reads().old_episodes(before, rooms)
    }

    /// Lexical candidates (see [`CandidateSource::lexical`]), for resolution's neighbours.
    pub(crate) fn lexical_candidates(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates> {
        self.candidates().lexical(plan, filter, k, extra_substrings)
    }

    /// Vector candidates (see [`CandidateSource::vector`]), for resolution's neighbours.
    pub(crate) fn vector_candidates(
        &self,
        query: &[f32],
        filter: &Filter,
        k: usize,
    ) -> Result<Candidates> {
        self.candidates().vector(query, filter, k)
    }

    /// The query's cosine with a memory's vector, when both exist.
    pub(crate) fn cosine_with(&self, query: &[f32], id: MemoryId) -> Option<f32> {
        let c = self.candidates().cosines(query, &[id]).ok()?;
        c.get(&id).map(|c| *c as f32)
    }

    /// A memory's exact vector of the loaded model, if there is one (consolidation).
    pub(crate) fn vector_of(&self, id: MemoryId) -> Option<Vec<f32>> {
        self.candidates().vectors(&[id]).ok()?.remove(&id)
    }

    /// Lets this store build the HNSW index in a background thread once the threshold is
    /// crossed (long-running servers). Short-lived processes leave it off: they use a saved
    /// index when there is one and scan exactly otherwise. SQLite only (other backends keep
    /// their vector index in the database).
    pub fn set_background_index(&mut self, on: bool) {
        if let Some(s) = self.backend.sqlite() {
            s.set_background_index(on);
        }
    }

    /// Builds and saves the HNSW index now if the store has at least `ann_threshold` vectors
    /// of the loaded model (`engram reindex`); returns how many it indexed, `None` when the
    /// store is below the threshold, has no model, the build lacks the `ann` feature, or the
    /// backend is not SQLite (whose database keeps its own index).
    pub fn build_vector_index(&mut self) -> Result<Option<usize>> {
        let model = self.embedder.clone();
        let model = model.as_ref().map(|e| VectorModel {
            model: e.model_id(),
            dim: e.dim(),
        });
        match self.backend.sqlite() {
            Some(s) => s.build_vector_index(model),
            None => Ok(None),
        }
    }

    /// How often the index's top `k` for each query agree with an exact scan of every
    /// stored vector (recall@k of the HNSW index, 1.0 for the exact scan): a diagnostic for
    /// `engram bench`, reading all vectors once. SQLite only (`None` elsewhere).
    pub fn vector_index_agreement(
        &mut self,
        queries: &[Vec<f32>],
        k: usize,
    ) -> Result<Option<f64>> {
        let model = self.embedder.clone();
        let model = model.as_ref().map(|e| VectorModel {
            model: e.model_id(),
            dim: e.dim(),
        });
        match self.backend.sqlite() {
            Some(s) => s.vector_index_agreement(model, queries, k),
            None => Ok(None),
        }
    }

    /// How the loaded model's vectors are searched: `(vectors, approximate)`.
    pub fn vector_search_state(&self) -> Option<(usize, bool)> {
        self.backend.vector_search_state()
    }

    /// The lock that lets one process of many on a shared database run `job`
    /// ([`Backend::try_exclusive`]): [`crate::Error::Busy`] when another holds it. Hold the
    /// returned lock for as long as the job runs.
    pub fn exclusive(&self, job: crate::storage::Job) -> Result<crate::storage::JobLock> {
        self.backend.try_exclusive(job)
    }

    /// The schema version this store's backend migrates to ([`Backend::schema_supported`]):
    /// what [`crate::Stats::schema_version`] reads once the store is open.
    pub fn schema_supported(&self) -> i64 {
        self.backend.schema_supported()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synchronous(s: &Store) -> i64 {
        s.backend
            .sqlite_ref()
            .unwrap()
            .conn
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn without_fsync_restores_full_sync_even_after_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(&dir.path().join("engram.db"), Config::default()).unwrap();
        const NORMAL: i64 = 1;
        const FULL: i64 = 2;
        assert_eq!(synchronous(&s), FULL);
        let inside = s.without_fsync(|s| synchronous(s)).unwrap();
        assert_eq!((inside, synchronous(&s)), (NORMAL, FULL));
        // A server catches a panicking call and keeps its store: it must not go on
        // committing without fsyncs.
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            s.without_fsync(|_| panic!("a bug mid-batch"))
        }));
        assert!(caught.is_err());
        assert_eq!(synchronous(&s), FULL);
    }
}
