//! The candidate sources: how recall (and resolution's neighbour search) asks a backend
//! which memories might answer a query, without knowing how the backend indexes them.
//!
//! Six questions, each a batch over plain data: lexical candidates for a query plan,
//! the query coverage of a set of ids, vector candidates for a query vector, exact cosines
//! for a set of ids, the stored vectors of a set of ids, and the links within a few hops of a set of seeds. Every one takes
//! the [`Filter`] (tiers, kinds, rooms, `as_of`) as data, so a backend renders it in its
//! own query language; every one answers a whole candidate list in one call, so a
//! networked backend pays one round trip per question, not one per candidate.
//!
//! The trait is synchronous and object-safe (recall holds a `&dyn CandidateSource`): the
//! engine is synchronous, and a networked backend blocks on its pool inside the call.
//!
//! The SQLite backend (`crate::sqlite::candidates`) answers lexical questions from FTS5
//! (a word index, a trigram index, a `LIKE` scan for what they cannot see) and vector
//! questions from an in-memory index of the loaded model's vectors (exact scan, or HNSW
//! past `ann_threshold`), refreshed from the `embeddings` table before each recall.
//!
//! A PostgreSQL backend implements the same six: `lexical` as a `tsvector` match ranked
//! by `ts_rank_cd` (the word channel, GIN-indexed) plus `pg_trgm` similarity (the gram and
//! substring channels), scaled into `[0, 1]` and fused by the same noisy-or; `coverage` as
//! one query per candidate list counting the plan's terms with `@@` and `ILIKE`; `vector`
//! as `ORDER BY embedding <=> $1 LIMIT k` on a pgvector HNSW index with the filter in the
//! `WHERE` clause (pgvector's iterative scan widens the search as a filter rejects rows);
//! `cosines` as `1 − (embedding <=> $1)` for `id = ANY($2)`, from the stored full-precision
//! vectors; `vectors` as the same rows' `embedding` column; `links_around` as a recursive CTE over `links` joined to both ends' rows.

use crate::Result;
use engram_core::MemoryId;
use engram_core::scoring::{Candidates, Edge};
use engram_core::text::QueryPlan;
use std::collections::HashMap;

pub use engram_core::recall_plan::Filter;

/// Where recall's candidates come from.
pub trait CandidateSource {
    /// Lexical candidates for `plan`: `(id, relevance in [0, 1])`, best first, at most `k`.
    /// `extra_substrings` are matched as substrings too (exhaustive recall's partial words).
    fn lexical(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates>;

    /// The share of the query's terms each of `ids` holds, in `[0, 1]` (ids holding none
    /// may be absent). With `partial`, a word also counts inside a longer word.
    fn coverage(
        &self,
        plan: &QueryPlan,
        ids: &[MemoryId],
        partial: bool,
    ) -> Result<HashMap<MemoryId, f64>>;

    /// The `k` memories allowed by `filter` whose vectors (of the loaded model) are nearest
    /// to `query`: `(id, cosine)`, best first. Empty when the backend holds no vectors of it.
    fn vector(&self, query: &[f32], filter: &Filter, k: usize) -> Result<Candidates>;

    /// The exact cosine of `query` with the stored vector of each of `ids` that has one
    /// (never an approximate index's copy: these cosines decide thresholds).
    fn cosines(&self, query: &[f32], ids: &[MemoryId]) -> Result<HashMap<MemoryId, f64>>;

    /// The stored vectors (of the loaded model) of each of `ids` that has one, exact
    /// (consolidation compares memories with each other, not with a query).
    fn vectors(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<f32>>>;

    /// The links within `hops` of `seeds` that spreading activation walks, as undirected
    /// edges (the strongest weight when both directions exist); links whose ends the
    /// filter's tiers or rooms exclude are left out, so activation never passes them.
    fn links_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>>;
}
