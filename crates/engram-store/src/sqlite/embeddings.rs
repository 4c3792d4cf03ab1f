//! The one owner of the `embeddings` table: one vector per memory (little-endian f32,
//! tagged with its model and dimension, under a growing `seq` other processes follow), and
//! which memories lack a vector of a model.

use crate::Result;
use crate::storage::rows::{VectorModel, VectorSet};
use engram_core::MemoryId;
use rusqlite::params;

/// Writes a memory's vector, replacing any earlier one under a new `seq` (so other
/// processes see the change). Does nothing if the memory is gone.
pub(crate) fn write_embedding(
    conn: &rusqlite::Connection,
    id: MemoryId,
    model: &str,
    v: &[f32],
) -> Result<usize> {
    conn.prepare_cached("DELETE FROM embeddings WHERE memory_id = ?1")?
        .execute([id])?;
    Ok(conn
        .prepare_cached(
            "INSERT INTO embeddings (memory_id, model, dim, vector) SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?1)",
        )?
        .execute(params![id, model, v.len() as i64, to_blob(v)])?)
}

/// Memories outside the trash above `after` lacking a vector of `model`, by id, with the
/// text to embed.
pub(crate) fn missing(
    conn: &rusqlite::Connection,
    model: VectorModel<'_>,
    after: MemoryId,
    limit: usize,
) -> Result<Vec<(MemoryId, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.id, coalesce(m.title || char(10), '') || m.content FROM memories m
         WHERE m.id > ?3 AND m.tier != 'trash'
           AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = m.id AND e.model = ?1 AND e.dim = ?2)
         ORDER BY m.id LIMIT ?4",
    )?;
    let rows = stmt.query_map(
        params![model.model, model.dim as i64, after, limit as i64],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How many memories outside the trash have a vector of `model`.
pub(crate) fn embedded_count(conn: &rusqlite::Connection, model: VectorModel<'_>) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM embeddings e JOIN memories m ON m.id = e.memory_id WHERE m.tier != 'trash' AND e.model = ?1 AND e.dim = ?2",
        params![model.model, model.dim as i64],
        |r| r.get::<_, i64>(0),
    )? as u64)
}

/// Drops a memory's vector (it no longer describes the text).
pub(crate) fn delete(conn: &rusqlite::Connection, id: MemoryId) -> Result<()> {
    conn.prepare_cached("DELETE FROM embeddings WHERE memory_id = ?1")?
        .execute([id])?;
    Ok(())
}

pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// The vectors held for `ids`, by model and dimension (ordered as `health` orders them).
pub(crate) fn sets_of(conn: &rusqlite::Connection, ids: &[MemoryId]) -> Result<Vec<VectorSet>> {
    use rusqlite::OptionalExtension;
    let mut counts: std::collections::BTreeMap<(String, usize), u64> = Default::default();
    let mut stmt = conn.prepare_cached("SELECT model, dim FROM embeddings WHERE memory_id = ?1")?;
    for id in ids {
        let row: Option<(String, i64)> = stmt
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some((model, dim)) = row {
            *counts.entry((model, dim as usize)).or_default() += 1;
        }
    }
    Ok(counts
        .into_iter()
        .map(|((model, dim), count)| VectorSet { model, dim, count })
        .collect())
}
