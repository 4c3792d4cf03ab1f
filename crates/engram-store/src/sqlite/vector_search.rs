//! The vector candidate source over the in-memory index: nearest vectors under a filter
//! (a small room scored exactly, a large one overfetched and checked on rows), and exact
//! cosines, read from the database when the HNSW index holds (possibly quantised) copies.

use super::candidates::SqliteCandidates;
use super::embeddings::from_blob;
use super::filter::filter_sql;
use super::memories::placeholders;
use super::vector_index::EXACT_SUBSET_MAX;
use crate::Result;
use crate::storage::candidates::Filter;
use engram_core::MemoryId;
use engram_core::embed::dot;
use rusqlite::params;
use std::collections::{HashMap, HashSet};

impl SqliteCandidates<'_> {
    /// The query's cosine with a memory's vector, when both exist.
    pub(crate) fn cosine_with(&self, query: &[f32], id: MemoryId) -> Option<f32> {
        self.vector_of(id).map(|v| dot(query, &v))
    }

    /// The query's cosine with each of `ids` that has a vector: one database read for the
    /// lot when the HNSW index holds the vectors (see [`SqliteCandidates::vector_of`]).
    pub(crate) fn cosines_with(&self, query: &[f32], ids: &[MemoryId]) -> HashMap<MemoryId, f32> {
        let Some(index) = &self.index else {
            return HashMap::new();
        };
        if !index.approximate() {
            return ids
                .iter()
                .filter_map(|id| Some((*id, self.cosine_with(query, *id)?)))
                .collect();
        }
        let mut out = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let sql = format!(
                "SELECT memory_id, vector FROM embeddings WHERE model = ? AND dim = ? AND memory_id IN ({})",
                placeholders(chunk.len())
            );
            let params = [
                rusqlite::types::Value::Text(index.model.clone()),
                rusqlite::types::Value::Integer(index.dim as i64),
            ]
            .into_iter()
            .chain(chunk.iter().map(|id| rusqlite::types::Value::Integer(*id)));
            let Ok(mut stmt) = self.conn.prepare_cached(&sql) else {
                continue;
            };
            let Ok(rows) = stmt.query_map(rusqlite::params_from_iter(params), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
            }) else {
                continue;
            };
            for (id, blob) in rows.flatten() {
                out.insert(id, dot(query, &from_blob(&blob)));
            }
        }
        out
    }

    /// A memory's vector of the loaded model, if there is one. Exact: with the HNSW index
    /// (which may hold vectors quantised) it is read from the database, so resolution and
    /// consolidation thresholds see the same cosines at any store size.
    pub(crate) fn vector_of(&self, id: MemoryId) -> Option<Vec<f32>> {
        let index = self.index.as_ref()?;
        match index.flat_vector(id) {
            Some(v) => Some(v.to_vec()),
            None if index.approximate() => self.stored_vector(id),
            None => None,
        }
    }

    /// A memory's f32 vector of the loaded model, from the database.
    fn stored_vector(&self, id: MemoryId) -> Option<Vec<f32>> {
        let index = self.index.as_ref()?;
        self.conn
            .prepare_cached(
                "SELECT vector FROM embeddings WHERE memory_id = ?1 AND model = ?2 AND dim = ?3",
            )
            .ok()?
            .query_row(params![id, index.model, index.dim as i64], |r| {
                r.get::<_, Vec<u8>>(0)
            })
            .ok()
            .map(|b| from_blob(&b))
    }

    /// The `k` memories allowed by `filter` nearest to `query`: `(id, cosine)`, best first.
    /// Overfetches and filters on the memories' rows, widening until `k` pass.
    pub(crate) fn vector_candidates(
        &self,
        query: &[f32],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<(MemoryId, f64)>> {
        let Some(index) = &self.index else {
            return Ok(Vec::new());
        };
        let total = index.len();
        if total == 0 || query.len() != index.dim {
            return Ok(Vec::new());
        }
        // With a room or tag filter, score only the memories the filter allows (one
        // indexed query), so a small room (or the few tagged memories) in a large store
        // neither misses its matches nor loads everything. A large room in an HNSW index
        // is searched unfiltered instead and checked on rows (cheaper than listing it).
        let (cond, params) = filter_sql(filter);
        let mut allowed: Option<HashSet<MemoryId>> = None;
        if filter.rooms.is_some() || filter.tag.is_some() {
            let small = !index.approximate()
                || {
                    let n: i64 = self
                    .conn
                    .prepare_cached(&format!(
                        "SELECT count(*) FROM (SELECT 1 FROM memories m WHERE 1 = 1{cond} LIMIT {})",
                        EXACT_SUBSET_MAX + 1
                    ))?
                    .query_row(rusqlite::params_from_iter(&params), |r| r.get(0))?;
                    n as usize <= EXACT_SUBSET_MAX
                };
            if small {
                let mut stmt = self
                    .conn
                    .prepare_cached(&format!("SELECT m.id FROM memories m WHERE 1 = 1{cond}"))?;
                let ids =
                    stmt.query_map(rusqlite::params_from_iter(&params), |r| r.get::<_, i64>(0))?;
                allowed = Some(ids.collect::<rusqlite::Result<_>>()?);
            }
        }
        if let Some(a) = &allowed {
            // Everything in the set passes the filter already.
            return Ok(index
                .search(query, Some(a), k)?
                .into_iter()
                .map(|(id, c)| (id, f64::from(c)))
                .collect());
        }
        let mut want = k + k / 2 + 8;
        loop {
            let top = index.search(query, None, want)?;
            let passing =
                self.passing(&top.iter().map(|t| t.0).collect::<Vec<_>>(), &cond, &params)?;
            let kept: Vec<(MemoryId, f64)> = top
                .iter()
                .filter(|(id, _)| passing.contains(id))
                .take(k)
                .map(|(id, c)| (*id, f64::from(*c)))
                .collect();
            if kept.len() >= k || top.len() < want || want >= total {
                return Ok(kept);
            }
            want = (want * 8).min(total);
        }
    }

    /// Which of `ids` pass a filter's SQL condition.
    fn passing(
        &self,
        ids: &[MemoryId],
        cond: &str,
        params: &[rusqlite::types::Value],
    ) -> Result<HashSet<MemoryId>> {
        let mut out = HashSet::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let sql = format!(
                "SELECT m.id FROM memories m WHERE m.id IN ({}){cond}",
                placeholders(chunk.len())
            );
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let all = chunk
                .iter()
                .map(|id| rusqlite::types::Value::Integer(*id))
                .chain(params.iter().cloned());
            for id in stmt.query_map(rusqlite::params_from_iter(all), |r| r.get::<_, i64>(0))? {
                out.insert(id?);
            }
        }
        Ok(out)
    }
}
