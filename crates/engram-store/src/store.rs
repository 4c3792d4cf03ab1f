//! The [`Store`]: one open database, its configuration and a clock, plus the row-level
//! helpers the operations share.

use crate::{Error, Result, db};
use engram_core::memory::IdRef;
use engram_core::{Config, EventKind, Kind, Memory, MemoryId, Millis, Tier};
use rusqlite::{Connection, OptionalExtension, Row, params};
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
    pub(crate) index: Option<crate::vectors::VectorIndex>,
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
        self.conn.execute_batch("PRAGMA synchronous = NORMAL")?;
        let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)));
        let restored = self.conn.execute_batch("PRAGMA synchronous = FULL");
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
        resolve_in(&self.conn, r, "id")
    }

    /// Loads a memory by reference.
    pub fn get(&self, r: &IdRef) -> Result<Memory> {
        load_in(&self.conn, r, "id")
    }

    pub(crate) fn load_many(&self, ids: &[MemoryId]) -> Result<Vec<Memory>> {
        let mut out = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let sql = format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({})",
                placeholders(chunk.len())
            );
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let rows = stmt.query_map(rusqlite::params_from_iter(chunk), row_to_memory)?;
            for r in rows {
                out.push(r?);
            }
        }
        Ok(out)
    }
}

/// The id of a memory by reference, on any connection or transaction; an unknown id is
/// reported against `field`.
pub(crate) fn resolve_in(conn: &Connection, r: &IdRef, field: &'static str) -> Result<MemoryId> {
    let found: Option<i64> = match r {
        IdRef::Id(id) => conn
            .query_row("SELECT id FROM memories WHERE id = ?1", [id], |row| {
                row.get(0)
            })
            .optional()?,
        IdRef::Uid(uid) => conn
            .query_row("SELECT id FROM memories WHERE uid = ?1", [uid], |row| {
                row.get(0)
            })
            .optional()?,
    };
    found.ok_or_else(|| Error::not_found(field, describe(r)))
}

/// Loads a memory inside a transaction; unknown ids are reported against `field`.
pub(crate) fn load_in(conn: &Connection, r: &IdRef, field: &'static str) -> Result<Memory> {
    let sql = match r {
        IdRef::Id(_) => format!("SELECT {} FROM memories WHERE id = ?1", MEMORY_COLUMNS),
        IdRef::Uid(_) => format!("SELECT {} FROM memories WHERE uid = ?1", MEMORY_COLUMNS),
    };
    let found = match r {
        IdRef::Id(id) => conn.query_row(&sql, [id], row_to_memory).optional()?,
        IdRef::Uid(uid) => conn.query_row(&sql, [uid], row_to_memory).optional()?,
    };
    found.ok_or_else(|| Error::not_found(field, describe(r)))
}

fn describe(r: &IdRef) -> String {
    match r {
        IdRef::Id(id) => format!("#{id}"),
        IdRef::Uid(uid) => uid.clone(),
    }
}

pub(crate) const MEMORY_COLUMNS: &str = "id, uid, content, title, kind, importance, tags, room, topic_key, pinned, tier, \
     created_at, updated_at, valid_from, valid_to, source, session_id, metadata";

pub(crate) fn row_to_memory(row: &Row<'_>) -> rusqlite::Result<Memory> {
    let kind: String = row.get(4)?;
    let tier: String = row.get(10)?;
    let tags: String = row.get(6)?;
    let metadata: String = row.get(17)?;
    let bad = |col: usize, what: String| {
        rusqlite::Error::FromSqlConversionFailure(col, rusqlite::types::Type::Text, what.into())
    };
    Ok(Memory {
        id: row.get(0)?,
        uid: row.get(1)?,
        content: row.get(2)?,
        title: row.get(3)?,
        kind: Kind::parse(&kind).map_err(|e| bad(4, e.to_string()))?,
        importance: row.get(5)?,
        tags: serde_json::from_str(&tags).map_err(|e| bad(6, e.to_string()))?,
        room: row.get(7)?,
        topic_key: row.get(8)?,
        pinned: row.get::<_, i64>(9)? != 0,
        tier: Tier::parse(&tier).map_err(|e| bad(10, e.to_string()))?,
        created_at: row.get(11)?,
        updated_at: row.get(12)?,
        valid_from: row.get(13)?,
        valid_to: row.get(14)?,
        source: row.get(15)?,
        session_id: row.get(16)?,
        metadata: serde_json::from_str(&metadata).map_err(|e| bad(17, e.to_string()))?,
    })
}

/// `?, ?, ?` for `n` values.
pub(crate) fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// Whether a memory row exists (inside the caller's transaction).
pub(crate) fn exists(conn: &Connection, id: MemoryId) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM memories WHERE id = ?1)")?
        .query_row([id], |r| r.get(0))?)
}

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
    conn.prepare_cached(
        "INSERT INTO events (memory_id, kind, weight, at, session_id, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![memory_id, kind.as_str(), weight, at, session_id, detail])?;
    Ok(())
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
    let mut all = String::with_capacity(content.len() + 64);
    if let Some(t) = title {
        all.push_str(t);
        all.push('\n');
    }
    all.push_str(content);
    if let Some(c) = context {
        all.push('\n');
        all.push_str(c);
    }
    for t in tags {
        all.push('\n');
        all.push_str(t);
    }
    conn.prepare_cached("DELETE FROM fts_words WHERE rowid = ?1")?
        .execute([id])?;
    conn.prepare_cached("DELETE FROM fts_grams WHERE rowid = ?1")?
        .execute([id])?;
    let words = engram_core::text::word_index_text(&all);
    if !words.is_empty() {
        conn.prepare_cached("INSERT INTO fts_words (rowid, body) VALUES (?1, ?2)")?
            .execute(params![id, words])?;
    }
    let grams = engram_core::text::gram_index_text(&all);
    if !grams.is_empty() {
        conn.prepare_cached("INSERT INTO fts_grams (rowid, body) VALUES (?1, ?2)")?
            .execute(params![id, grams])?;
    }
    Ok(())
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
