//! The one owner of `embeddings` rows on PostgreSQL: one pgvector vector per memory,
//! tagged with its model and dimension; a rewrite takes a new `seq`, as in SQLite.

use super::Db;
use crate::Result;
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
