//! The rows write-path resolution leaves besides memories: revisions (a memory's prior
//! text) and pending judgments, and the candidates a write offers to judge. Finding the
//! neighbours is `engine/neighbours.rs`; the decisions are pure (`engram_core::plan`,
//! `engram_core::resolve`, `engram_core::contradiction`); `engine/remember` applies them.

use crate::Result;
use crate::store::MEMORY_COLUMNS;
use engram_core::{Kind, Memory, MemoryId, Millis};
use rusqlite::{Connection, params};
use serde::Serialize;

/// Which kinds take part in resolution: decided in the core.
pub use engram_core::plan::participates;

/// A memory offered to the agent to judge against the one just written.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictCandidate {
    pub id: MemoryId,
    pub title: Option<String>,
    pub kind: Kind,
    /// The first 200 characters of its content.
    pub excerpt: String,
    pub score: f64,
    /// Pass it to `judge` with a verdict.
    pub judgment_id: String,
}

/// Keeps the text a memory had before a change.
pub(crate) fn write_revision(
    conn: &Connection,
    m: &Memory,
    reason: &str,
    at: Millis,
    session_id: Option<&str>,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        m.id,
        m.content,
        m.title,
        m.kind.as_str(),
        m.importance,
        serde_json::to_string(&m.tags).expect("tags serialise"),
        reason,
        at,
        session_id
    ])?;
    Ok(())
}

/// Opens (or finds) the pending judgment between `src` and `dst`; returns its id.
pub(crate) fn pending_judgment(
    conn: &Connection,
    src: MemoryId,
    dst: MemoryId,
    score: f64,
    session_id: Option<&str>,
    now: Millis,
) -> Result<String> {
    let existing: Option<String> = conn
        .query_row(
            "SELECT uid FROM judgments WHERE src = ?1 AND dst = ?2",
            params![src, dst],
            |r| r.get(0),
        )
        .ok();
    if let Some(uid) = existing {
        return Ok(uid);
    }
    let uid = format!("rel-{:016x}", crate::ops::random_u64());
    conn.execute(
        "INSERT INTO judgments (uid, src, dst, status, score, session_id, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?6)",
        params![uid, src, dst, score, session_id, now],
    )?;
    Ok(uid)
}

/// Loads one memory inside a transaction, by id, if it exists.
pub(crate) fn load_by_id(conn: &Connection, id: MemoryId) -> Result<Option<Memory>> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"
        ))?
        .query_row([id], crate::store::row_to_memory)
        .optional()?)
}
