//! The one owner of `evidence` rows on PostgreSQL: writes folded into another memory.

use super::Db;
use crate::Result;
use crate::storage::rows::Evidence;
use engram_core::MemoryId;

pub(crate) fn insert(db: &mut dyn Db, memory_id: MemoryId, e: &Evidence) -> Result<()> {
    db.execute(
        "INSERT INTO evidence (memory_id, content, title, source, session_id, action, at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &memory_id,
            &e.content,
            &e.title,
            &e.source,
            &e.session_id,
            &e.action,
            &e.at,
        ],
    )?;
    Ok(())
}

/// A memory's evidence, oldest first.
pub(crate) fn of(db: &mut dyn Db, memory_id: MemoryId) -> Result<Vec<Evidence>> {
    Ok(db
        .query(
            "SELECT content, title, source, session_id, action, at FROM evidence WHERE memory_id = $1 ORDER BY id",
            &[&memory_id],
        )?
        .iter()
        .map(|r| Evidence {
            content: r.get(0),
            title: r.get(1),
            source: r.get(2),
            session_id: r.get(3),
            action: r.get(4),
            at: r.get(5),
        })
        .collect())
}
