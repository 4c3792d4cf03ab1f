//! The one owner of `embeddings` rows on PostgreSQL: one pgvector vector per memory,
//! tagged with its model and dimension; a rewrite takes a new `seq`, as in SQLite.

use super::Db;
use crate::Result;
use crate::storage::rows::{VectorModel, VectorSet};
use engram_core::MemoryId;
use pgvector::Vector;

/// Writes a memory's vector, replacing any earlier one. Does nothing if the memory is gone.
pub(crate) fn write(db: &mut dyn Db, id: MemoryId, model: &str, v: &[f32]) -> Result<()> {
    delete(db, id)?;
    db.execute(
        "INSERT INTO embeddings (memory_id, model, dim, embedding)
         SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM memories WHERE id = $1)",
        &[&id, &model, &(v.len() as i32), &Vector::from(v.to_vec())],
    )?;
    Ok(())
}

pub(crate) fn delete(db: &mut dyn Db, id: MemoryId) -> Result<()> {
    db.execute("DELETE FROM embeddings WHERE memory_id = $1", &[&id])?;
    Ok(())
}

/// Memories outside the trash above `after` lacking a vector of `model`, by id, with the
/// text to embed (the title's line, then the content).
pub(crate) fn missing(
    db: &mut dyn Db,
    model: VectorModel<'_>,
    after: MemoryId,
    limit: usize,
) -> Result<Vec<(MemoryId, String)>> {
    Ok(db
        .query(
            "SELECT m.id, coalesce(m.title || chr(10), '') || m.content FROM memories m
             WHERE m.id > $3 AND m.tier != 'trash'
               AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = m.id AND e.model = $1 AND e.dim = $2)
             ORDER BY m.id LIMIT $4",
            &[&model.model, &(model.dim as i32), &after, &(limit as i64)],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
}

/// Whether any vector of `model` is stored (an index probe, not a count).
pub(crate) fn any(db: &mut dyn Db, model: VectorModel<'_>) -> Result<bool> {
    Ok(super::opt(
        db,
        "SELECT 1 FROM embeddings WHERE model = $1 AND dim = $2 LIMIT 1",
        &[&model.model, &(model.dim as i32)],
    )?
    .is_some())
}

/// How many memories outside the trash have a vector of `model`.
pub(crate) fn embedded_count(db: &mut dyn Db, model: VectorModel<'_>) -> Result<u64> {
    super::count(
        db,
        "SELECT count(*) FROM embeddings e JOIN memories m ON m.id = e.memory_id
         WHERE m.tier != 'trash' AND e.model = $1 AND e.dim = $2",
        &[&model.model, &(model.dim as i32)],
    )
}

/// Vectors held, by model and dimension.
pub(crate) fn sets(db: &mut dyn Db) -> Result<Vec<VectorSet>> {
    Ok(db
        .query(
            "SELECT model, dim, count(*) FROM embeddings GROUP BY model, dim ORDER BY model COLLATE \"C\", dim",
            &[],
        )?
        .iter()
        .map(|r| VectorSet {
            model: r.get(0),
            dim: r.get::<_, i32>(1) as usize,
            count: r.get::<_, i64>(2) as u64,
        })
        .collect())
}

/// The vectors held for `ids`, by model and dimension.
pub(crate) fn sets_of(db: &mut dyn Db, ids: &[MemoryId]) -> Result<Vec<VectorSet>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(db
        .query(
            "SELECT model, dim, count(*) FROM embeddings WHERE memory_id = ANY($1) GROUP BY model, dim",
            &[&ids],
        )?
        .iter()
        .map(|r| VectorSet {
            model: r.get(0),
            dim: r.get::<_, i32>(1) as usize,
            count: r.get::<_, i64>(2) as u64,
        })
        .collect())
}
