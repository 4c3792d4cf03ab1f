//! The vector candidate source: one embedding per memory in SQLite (little-endian f32,
//! tagged with its model), searched in memory by an exact scan.
//!
//! The index holds the vectors of the current model only: vectors of another model (after
//! `engram model use`) are ignored until re-embedded, so a dimension mismatch never fails a
//! recall. Other processes' writes are picked up through the table's growing `seq`.
//! An exact scan of 10k × 384 floats takes about a millisecond; an ANN index for very large
//! stores is future work (see the README).

use crate::search::Filter;
use crate::{Result, Store};
use engram_core::embed::{Embedder, dot};
use engram_core::{Memory, MemoryId};
use rusqlite::params;
use std::collections::HashMap;
use std::sync::Arc;

/// Vectors of one model, flat.
pub(crate) struct VectorIndex {
    model: String,
    dim: usize,
    last_seq: i64,
    ids: Vec<MemoryId>,
    pos: HashMap<MemoryId, usize>,
    data: Vec<f32>,
}

impl VectorIndex {
    fn new(model: &str, dim: usize) -> Self {
        VectorIndex {
            model: model.to_string(),
            dim,
            last_seq: 0,
            ids: Vec::new(),
            pos: HashMap::new(),
            data: Vec::new(),
        }
    }

    fn put(&mut self, id: MemoryId, v: &[f32]) {
        if v.len() != self.dim {
            return;
        }
        match self.pos.get(&id) {
            Some(&p) => self.data[p * self.dim..(p + 1) * self.dim].copy_from_slice(v),
            None => {
                self.pos.insert(id, self.ids.len());
                self.ids.push(id);
                self.data.extend_from_slice(v);
            }
        }
    }

    pub fn get(&self, id: MemoryId) -> Option<&[f32]> {
        self.pos
            .get(&id)
            .map(|&p| &self.data[p * self.dim..(p + 1) * self.dim])
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }
}

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

pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_blob(b: &[u8]) -> Vec<f32> {
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
        match e.embed_documents(&[text]) {
            Ok(mut v) if v.len() == 1 && v[0].len() == e.dim() => {
                Some((e.model_id().to_string(), v.remove(0)))
            }
            _ => None,
        }
    }

    /// Loads vectors written since the last look (by this or another process).
    pub(crate) fn refresh_index(&mut self) -> Result<()> {
        let Some(e) = &self.embedder else {
            self.index = None;
            return Ok(());
        };
        let (model, dim) = (e.model_id().to_string(), e.dim());
        let index = self
            .index
            .get_or_insert_with(|| VectorIndex::new(&model, dim));
        let mut stmt = self
            .conn
            .prepare_cached("SELECT seq, memory_id, vector FROM embeddings WHERE seq > ?1 AND model = ?2 AND dim = ?3 ORDER BY seq")?;
        let rows = stmt.query_map(
            params![index.last_seq, index.model, index.dim as i64],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            },
        )?;
        for row in rows {
            let (seq, id, blob) = row?;
            index.put(id, &from_blob(&blob));
            index.last_seq = index.last_seq.max(seq);
        }
        Ok(())
    }

    /// The query's cosine with a memory's vector, when both exist.
    pub(crate) fn cosine_with(&self, query: &[f32], id: MemoryId) -> Option<f32> {
        self.index.as_ref()?.get(id).map(|v| dot(query, v))
    }

    /// The `k` memories allowed by `filter` nearest to `query`: `(id, cosine)`, best first.
    /// Exact scan; overfetches and filters on the memories' rows.
    pub(crate) fn vector_candidates(
        &self,
        query: &[f32],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<(MemoryId, f64)>> {
        let Some(index) = &self.index else {
            return Ok(Vec::new());
        };
        if index.len() == 0 || query.len() != index.dim {
            return Ok(Vec::new());
        }
        // With a room filter, score only that room's memories (one indexed query), so a
        // small room in a large store neither misses its matches nor loads everything.
        let allowed: Option<std::collections::HashSet<MemoryId>> = match &filter.rooms {
            Some(rooms) => {
                let sql = format!(
                    "SELECT id FROM memories WHERE room IN ({}) AND tier != 'trash'",
                    crate::store::placeholders(rooms.len())
                );
                let mut stmt = self.conn.prepare_cached(&sql)?;
                let ids =
                    stmt.query_map(rusqlite::params_from_iter(rooms), |r| r.get::<_, i64>(0))?;
                Some(ids.collect::<rusqlite::Result<_>>()?)
            }
            None => None,
        };
        let mut scored: Vec<(MemoryId, f32)> = index
            .ids
            .iter()
            .enumerate()
            .filter(|(_, id)| allowed.as_ref().is_none_or(|a| a.contains(id)))
            .map(|(i, id)| {
                (
                    *id,
                    dot(query, &index.data[i * index.dim..(i + 1) * index.dim]),
                )
            })
            .collect();
        if scored.is_empty() {
            return Ok(Vec::new());
        }
        let mut want = (k * 8).max(64);
        loop {
            let take = want.min(scored.len());
            let nth = take.saturating_sub(1).min(scored.len() - 1);
            scored.select_nth_unstable_by(nth, |a, b| b.1.total_cmp(&a.1));
            let mut top: Vec<(MemoryId, f32)> = scored[..take].to_vec();
            top.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let rows: HashMap<MemoryId, Memory> = self
                .load_many(&top.iter().map(|t| t.0).collect::<Vec<_>>())?
                .into_iter()
                .map(|m| (m.id, m))
                .collect();
            let kept: Vec<(MemoryId, f64)> = top
                .iter()
                .filter(|(id, _)| rows.get(id).is_some_and(|m| filter.allows(m)))
                .take(k)
                .map(|(id, c)| (*id, f64::from(*c)))
                .collect();
            if kept.len() >= k || take == scored.len() {
                return Ok(kept);
            }
            want *= 8;
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
        })
    }
}
