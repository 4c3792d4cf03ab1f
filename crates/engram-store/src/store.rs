//! The [`Store`]: one open database, its configuration and a clock, plus the row-level
//! helpers the operations share.

use crate::storage::rows::NewEvent;
use crate::storage::{Reads, Tx};
use crate::{Result, db};
use engram_core::memory::IdRef;
use engram_core::{Config, EventKind, Memory, MemoryId, Millis};
use rusqlite::Connection;
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

/// An open engram store. Writes take `&mut self`; share one across threads behind a mutex,
/// or open one per process: SQLite's WAL and the busy timeout let many processes share a file.
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) config: Config,
    pub(crate) clock: Clock,
    pub(crate) path: PathBuf,
    /// The sentence encoder, when a model is loaded; recall is lexical without one.
    pub(crate) embedder: Option<Arc<dyn engram_core::embed::Embedder>>,
    /// Vectors of the current model, loaded on first use and refreshed incrementally.
    pub(crate) index: Option<crate::sqlite::VectorIndex>,
    /// Whether this process builds the HNSW index in the background once the store is
    /// large enough (servers; see [`Store::set_background_index`]).
    pub(crate) background_index: bool,
    /// Vectors computed ahead by [`Store::remember_batch`], by the text they embed.
    pub(crate) prepared: std::collections::HashMap<String, Vec<f32>>,
}

impl Store {
    /// Runs `f` with commits that skip the fsync (`synchronous = NORMAL`: WAL stays
    /// consistent, a power cut may lose the last commits), then restores FULL. For writes
    /// no client asked to keep (recall hits) and for batches that sync once at the end.
    /// FULL is restored even when `f` panics: a server that survives a panicking call keeps
    /// its store and must not go on committing without fsyncs.
    pub(crate) fn without_fsync<T>(&mut self, f: impl FnOnce(&mut Store) -> T) -> Result<T> {
        crate::sqlite::set_full_sync(&self.conn, false)?;
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)));
        let restored = crate::sqlite::set_full_sync(&self.conn, true);
        match out {
            Ok(out) => {
                restored?;
                Ok(out)
            }
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Opens or creates the database at `path` and migrates it.
    pub fn open(path: &Path, config: Config) -> Result<Store> {
        config.validate()?;
        let (conn, backup) = db::open_converting(path)?;
        let mut store = Store {
            conn,
            config,
            clock: system_clock(),
            path: path.to_path_buf(),
            embedder: None,
            index: None,
            background_index: false,
            prepared: Default::default(),
        };
        if let Some(c) = store.import_seed_c(backup)? {
            // Said on stderr: stdout may be an MCP stream or a hook's JSON.
            eprintln!("{}", c.summary(path));
            for w in &c.warnings {
                eprintln!("engram: seed C: {w}");
            }
        }
        Ok(store)
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
        &self.conn
    }

    /// Runs `f` in one write transaction of the storage backend (see
    /// [`Backend::write`](crate::storage::Backend::write): `f` may run more than once).
    pub(crate) fn write<T>(&mut self, f: impl FnMut(&mut dyn Tx) -> Result<T>) -> Result<T> {
        crate::storage::write(&mut self.conn, f)
    }
}

/// Loads a memory inside a transaction; unknown ids are reported against `field`.
pub(crate) fn load_in(conn: &Connection, r: &IdRef, field: &'static str) -> Result<Memory> {
    crate::storage::require_memory(conn, r, field)
}

// The row owners, under the names the write path, the vault and import still use (they
// move to the storage interface with their own slices of issue 17).
pub(crate) use crate::sqlite::memories::{
    COLUMNS as MEMORY_COLUMNS, exists, from_row as row_to_memory, placeholders,
};

/// Appends one event to a memory's log.
pub(crate) fn add_event(
    conn: &Connection,
    memory_id: MemoryId,
    kind: EventKind,
    weight: f64,
    at: Millis,
    session_id: Option<&str>,
    detail: Option<&str>,
) -> Result<()> {
    crate::sqlite::events::append(
        conn,
        &NewEvent {
            memory_id,
            kind,
            weight,
            at,
            session_id,
            detail,
        },
    )
}

/// Writes both full-text rows of a memory (replacing any earlier ones).
pub(crate) fn index_text(
    conn: &Connection,
    id: MemoryId,
    title: Option<&str>,
    content: &str,
    tags: &[String],
    context: Option<&str>,
) -> Result<()> {
    crate::sqlite::fulltext::index(conn, id, title, content, tags, context)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synchronous(s: &Store) -> i64 {
        s.conn
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
