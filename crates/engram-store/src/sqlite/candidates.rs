//! The SQLite backend's candidate sources ([`CandidateSource`]): FTS5 and substring scans
//! ([`super::lexical`]), the in-memory vector index ([`super::vector_search`]) and the
//! link walk ([`super::graph`]), over one borrowed connection.

use super::vector_index::VectorIndex;
use crate::Result;
use crate::storage::candidates::{CandidateSource, Filter};
use engram_core::MemoryId;
use engram_core::scoring::{Candidates, Edge};
use engram_core::text::QueryPlan;
use rusqlite::Connection;
use std::collections::HashMap;

/// The candidate sources of one open store: its connection and its vector index (the
/// loaded model's vectors as of the last refresh).
pub(crate) struct SqliteCandidates<'a> {
    pub(crate) conn: &'a Connection,
    pub(crate) index: Option<&'a VectorIndex>,
    pub(crate) bm25_scale: f64,
}

impl CandidateSource for SqliteCandidates<'_> {
    fn lexical(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates> {
        super::lexical::lexical_candidates(
            self.conn,
            self.bm25_scale,
            plan,
            filter,
            k,
            extra_substrings,
        )
    }

    fn coverage(
        &self,
        plan: &QueryPlan,
        ids: &[MemoryId],
        partial: bool,
    ) -> Result<HashMap<MemoryId, f64>> {
        super::lexical::coverage(self.conn, plan, ids, partial)
    }

    fn vector(&self, query: &[f32], filter: &Filter, k: usize) -> Result<Candidates> {
        self.vector_candidates(query, filter, k)
    }

    /// Never fails: a vector that cannot be read counts as missing, as it always has.
    fn cosines(&self, query: &[f32], ids: &[MemoryId]) -> Result<HashMap<MemoryId, f64>> {
        Ok(self
            .cosines_with(query, ids)
            .into_iter()
            .map(|(id, c)| (id, f64::from(c)))
            .collect())
    }

    fn vectors(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<f32>>> {
        Ok(ids
            .iter()
            .filter_map(|id| Some((*id, self.vector_of(*id)?)))
            .collect())
    }

    fn links_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>> {
        self.edges_around(seeds, hops, filter)
    }
}

impl super::SqliteBackend {
    /// This backend's candidate sources, as they stand (refresh the index first for other
    /// processes' vectors).
    pub(crate) fn candidates(&self) -> SqliteCandidates<'_> {
        SqliteCandidates {
            conn: &self.conn,
            index: self.index.as_ref(),
            bm25_scale: self.config.bm25_scale,
        }
    }
}
