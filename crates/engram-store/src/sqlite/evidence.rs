//! The one owner of `evidence` rows: writes folded into another memory (reinforce,
//! merge), each with its own words, title, source, session and time.

use crate::Result;
use crate::storage::rows::Evidence;
use engram_core::MemoryId;
use rusqlite::{Connection, params};

pub(crate) fn insert(conn: &Connection, memory_id: MemoryId, e: &Evidence) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO evidence (memory_id, content, title, source, session_id, action, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        memory_id,
        e.content,
        e.title,
        e.source,
        e.session_id,
        e.action,
        e.at
    ])?;
    Ok(())
}

/// A memory's evidence, oldest first.
pub(crate) fn of(conn: &Connection, memory_id: MemoryId) -> Result<Vec<Evidence>> {
    let mut stmt = conn.prepare_cached(
        "SELECT content, title, source, session_id, action, at FROM evidence WHERE memory_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([memory_id], |r| {
        Ok(Evidence {
            content: r.get(0)?,
            title: r.get(1)?,
            source: r.get(2)?,
            session_id: r.get(3)?,
            action: r.get(4)?,
            at: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Evidence of the memories after `after`, by memory then id, whole memories to a page.
pub(crate) fn page(
    conn: &Connection,
    after: MemoryId,
    limit: usize,
) -> Result<Vec<(MemoryId, Evidence)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT memory_id, content, title, source, session_id, action, at FROM evidence
         WHERE memory_id > ?1 AND memory_id <= coalesce(
             (SELECT memory_id FROM evidence WHERE memory_id > ?1 ORDER BY memory_id LIMIT 1 OFFSET ?2),
             9223372036854775807)
         ORDER BY memory_id, id",
    )?;
    let rows = stmt.query_map(params![after, limit.max(1) as i64 - 1], |r| {
        Ok((
            r.get(0)?,
            Evidence {
                content: r.get(1)?,
                title: r.get(2)?,
                source: r.get(3)?,
                session_id: r.get(4)?,
                action: r.get(5)?,
                at: r.get(6)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
