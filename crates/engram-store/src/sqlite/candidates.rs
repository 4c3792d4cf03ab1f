//! The SQLite backend's candidate sources ([`CandidateSource`]): FTS5 and substring scans
//! ([`super::lexical`]), the in-memory vector index ([`super::vector_search`]) and the
//! link walk ([`super::graph`]), over one borrowed connection.

use super::vector_index::VectorIndex;
use crate::storage::candidates::{CandidateSource, Filter};
use crate::{Result, Store};
use engram_core::MemoryId;
use engram_core::scoring::{Candidates, Edge};
use engram_core::text::QueryPlan;
use rusqlite::Connection;
use std::collections::HashMap;

/// The candidate sources of one open store: its connection and its vector index (the
/// loaded model's vectors as of the last [`Store::refresh_index`]).
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

    fn links_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>> {
        self.edges_around(seeds, hops, filter)
    }
}

impl Store {
    /// This store's candidate sources, as they stand (call [`Store::refresh_index`] first
    /// for other processes' vectors).
    pub(crate) fn candidates(&self) -> SqliteCandidates<'_> {
        SqliteCandidates {
            conn: &self.conn,
            index: self.index.as_ref(),
            bm25_scale: self.config.bm25_scale,
        }
    }

    /// Lexical candidates (see [`CandidateSource::lexical`]), for resolution's neighbours.
    pub(crate) fn lexical_candidates(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates> {
        self.candidates().lexical(plan, filter, k, extra_substrings)
    }

    /// Vector candidates (see [`CandidateSource::vector`]), for resolution's neighbours.
    pub(crate) fn vector_candidates(
        &self,
        query: &[f32],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<(MemoryId, f64)>> {
        self.candidates().vector_candidates(query, filter, k)
    }

    /// The query's cosine with a memory's vector, when both exist.
    pub(crate) fn cosine_with(&self, query: &[f32], id: MemoryId) -> Option<f32> {
        self.candidates().cosine_with(query, id)
    }

    /// A memory's exact vector of the loaded model, if there is one (consolidation).
    pub(crate) fn vector_of(&self, id: MemoryId) -> Option<Vec<f32>> {
        self.candidates().vector_of(id)
    }
}
