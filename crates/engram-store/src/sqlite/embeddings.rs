//! The `embeddings` table: one vector per memory (little-endian f32, tagged with its
//! model and dimension, under a growing `seq` other processes follow), the loaded encoder,
//! and the background re-embedding of memories that lack a vector of it.

use crate::{Result, Store};
use engram_core::MemoryId;
use engram_core::embed::Embedder;
use rusqlite::params;
use std::sync::Arc;

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

/// Where a store stands with its embedding model.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EmbeddingStatus {
    /// The loaded model, if any.
    pub model: Option<String>,
    pub dim: Option<usize>,
    /// Memories outside the trash with a vector of the loaded model.
    pub embedded: u64,
    /// Memories outside the trash without one (new since the model loaded, or written
    /// under another model); filled in the background by a long-running server.
    pub missing: u64,
    /// How vectors are searched: `exact` (a scan) or `hnsw` (the approximate index, loaded
    /// or saved for this model).
    pub vector_index: &'static str,
}

impl Store {
    /// Sets (or clears) the sentence encoder. Recall uses vectors of this model only.
    pub fn set_embedder(&mut self, e: Option<Arc<dyn Embedder>>) {
        let same = match (&self.embedder, &e) {
            (Some(a), Some(b)) => a.model_id() == b.model_id() && a.dim() == b.dim(),
            _ => false,
        };
        if !same {
            self.index = None;
        }
        self.embedder = e;
    }

    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Embeds one document with the loaded model, if any. A failure is logged as no vector:
    /// the memory is stored and found lexically, and re-embedded later.
    pub(crate) fn embed_document(&self, text: &str) -> Option<(String, Vec<f32>)> {
        let e = self.embedder.as_ref()?;
        if let Some(v) = self.prepared.get(text) {
            return Some((e.model_id().to_string(), v.clone()));
        }
        match e.embed_documents(&[text]) {
            Ok(mut v) if v.len() == 1 && v[0].len() == e.dim() => {
                Some((e.model_id().to_string(), v.remove(0)))
            }
            _ => None,
        }
    }

    /// Memories outside the trash with an id above `after` that lack a vector of the
    /// loaded model, in id order, with the text to embed. Walk with the last id returned.
    pub fn missing_embeddings(
        &self,
        after: MemoryId,
        limit: usize,
    ) -> Result<Vec<(MemoryId, String)>> {
        let Some(e) = &self.embedder else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.id, coalesce(m.title || char(10), '') || m.content FROM memories m
             WHERE m.id > ?3 AND m.tier != 'trash'
               AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = m.id AND e.model = ?1 AND e.dim = ?2)
             ORDER BY m.id LIMIT ?4",
        )?;
        let rows = stmt.query_map(
            params![e.model_id(), e.dim() as i64, after, limit as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores vectors computed elsewhere (the background re-embedder) for `model`; vectors
    /// whose length is not `dim` are skipped.
    pub fn put_embeddings(
        &mut self,
        model: &str,
        dim: usize,
        vectors: &[(MemoryId, Vec<f32>)],
    ) -> Result<usize> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut n = 0;
        for (id, v) in vectors.iter().filter(|(_, v)| v.len() == dim) {
            n += write_embedding(&tx, *id, model, v)?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Embeds every memory that lacks a vector of the loaded model, in batches of 32;
    /// returns how many were written. One pass: a memory whose embedding fails is skipped.
    /// For the CLI and tests; a server does this in the background without holding the store.
    pub fn embed_missing(&mut self, mut progress: impl FnMut(usize)) -> Result<usize> {
        let Some(e) = self.embedder.clone() else {
            return Ok(0);
        };
        let mut after = 0;
        let mut done = 0;
        loop {
            let todo = self.missing_embeddings(after, 256)?;
            let Some(last) = todo.last().map(|t| t.0) else {
                return Ok(done);
            };
            after = last;
            for chunk in todo.chunks(32) {
                let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
                let Ok(vecs) = e.embed_documents(&texts) else {
                    continue;
                };
                let pairs: Vec<(MemoryId, Vec<f32>)> =
                    chunk.iter().map(|(id, _)| *id).zip(vecs).collect();
                let n = self.put_embeddings(e.model_id(), e.dim(), &pairs)?;
                done += n;
                progress(n);
            }
        }
    }

    pub fn embedding_status(&self) -> Result<EmbeddingStatus> {
        let Some(e) = &self.embedder else {
            return Ok(EmbeddingStatus {
                model: None,
                dim: None,
                embedded: 0,
                missing: 0,
                vector_index: "exact",
            });
        };
        let total: i64 = self.conn.query_row(
            "SELECT count(*) FROM memories WHERE tier != 'trash'",
            [],
            |r| r.get(0),
        )?;
        let embedded: i64 = self.conn.query_row(
            "SELECT count(*) FROM embeddings e JOIN memories m ON m.id = e.memory_id WHERE m.tier != 'trash' AND e.model = ?1 AND e.dim = ?2",
            params![e.model_id(), e.dim() as i64],
            |r| r.get(0),
        )?;
        Ok(EmbeddingStatus {
            model: Some(e.model_id().to_string()),
            dim: Some(e.dim()),
            embedded: embedded as u64,
            missing: (total - embedded).max(0) as u64,
            vector_index: if self.hnsw_in_use(e.model_id(), e.dim()) {
                "hnsw"
            } else {
                "exact"
            },
        })
    }

    /// Whether this store searches `model`'s vectors through the HNSW index (loaded, or
    /// saved and fitting when nothing is loaded yet).
    fn hnsw_in_use(&self, model: &str, dim: usize) -> bool {
        match &self.index {
            Some(i) => i.approximate(),
            #[cfg(feature = "ann")]
            None => {
                self.config.ann_threshold > 0
                    && super::ann::saved_meta(&self.path).is_some_and(|m| {
                        m.model == model
                            && m.dim == dim
                            && m.quantization == self.config.ann_quantization
                    })
            }
            #[cfg(not(feature = "ann"))]
            None => {
                let _ = (model, dim);
                false
            }
        }
    }
}
