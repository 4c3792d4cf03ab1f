//! The PostgreSQL backend's candidate sources ([`CandidateSource`]): lexical channels
//! ([`super::lexical`]), pgvector's nearest neighbours, exact cosines and the link walk.
//!
//! Vectors: `ORDER BY embedding <=> query` on the HNSW index (384 dimensions; others scan),
//! with the filter in the `WHERE` clause and `hnsw.iterative_scan` on (see `db.rs`), so a
//! filter that rejects rows widens the search instead of returning fewer. The cosines
//! returned are computed here from the stored full-precision vectors with the same `dot`
//! the SQLite backend uses (the vectors are unit length), so thresholds see the same
//! numbers on both backends.

use super::filter::{Args, filter_sql};
use super::{Db, PgBackend, WithDb};
use crate::Result;
use crate::storage::candidates::{CandidateSource, Filter};
use engram_core::MemoryId;
use engram_core::embed::dot;
use engram_core::scoring::{Candidates, Edge, sort_desc};
use engram_core::text::QueryPlan;
use pgvector::Vector;
use std::collections::{HashMap, HashSet};

/// Recall's questions against one PostgreSQL store, with the vectors of `model`.
pub struct PgCandidates<'a> {
    pub(crate) backend: &'a PgBackend,
    /// The loaded encoder's model id; `None`: no vector questions are answered.
    pub(crate) model: Option<String>,
}

impl CandidateSource for PgCandidates<'_> {
    fn lexical(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates> {
        self.backend
            .with(|db| super::lexical::lexical_candidates(db, plan, filter, k, extra_substrings))
    }

    fn coverage(
        &self,
        plan: &QueryPlan,
        ids: &[MemoryId],
        partial: bool,
    ) -> Result<HashMap<MemoryId, f64>> {
        self.backend
            .with(|db| super::lexical::coverage(db, plan, ids, partial))
    }

    fn vector(&self, query: &[f32], filter: &Filter, k: usize) -> Result<Candidates> {
        let Some(model) = &self.model else {
            return Ok(Vec::new());
        };
        if query.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        self.backend.with(|db| nearest(db, model, query, filter, k))
    }

    fn cosines(&self, query: &[f32], ids: &[MemoryId]) -> Result<HashMap<MemoryId, f64>> {
        let Some(model) = &self.model else {
            return Ok(HashMap::new());
        };
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let dim = query.len() as i32;
        self.backend.with(|db| {
            Ok(db
                .query(
                    "SELECT memory_id, embedding FROM embeddings
                     WHERE model = $1 AND dim = $2 AND memory_id = ANY($3)",
                    &[model, &dim, &ids],
                )?
                .iter()
                .map(|r| {
                    let v: Vector = r.get(1);
                    (r.get(0), f64::from(dot(query, v.as_slice())))
                })
                .collect())
        })
    }

    fn vectors(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<f32>>> {
        let Some(model) = &self.model else {
            return Ok(HashMap::new());
        };
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        self.backend.with(|db| {
            Ok(db
                .query(
                    "SELECT memory_id, embedding FROM embeddings WHERE model = $1 AND memory_id = ANY($2)",
                    &[model, &ids],
                )?
                .iter()
                .map(|r| (r.get(0), r.get::<_, Vector>(1).to_vec()))
                .collect())
        })
    }

    fn links_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>> {
        self.backend
            .with(|db| edges_around(db, seeds, hops, filter))
    }
}

/// The `k` nearest vectors of `model` that the filter allows, best first.
fn nearest(
    db: &mut dyn Db,
    model: &str,
    query: &[f32],
    filter: &Filter,
    k: usize,
) -> Result<Candidates> {
    let dim = query.len();
    let mut args = Args::default();
    let m = args.push(model.to_string());
    let q = args.push(Vector::from(query.to_vec()));
    let f = filter_sql(filter, &mut args);
    let limit = args.push(k as i64);
    // The dimension is written out (a number, not text) and the cast names it, so the
    // planner can match the HNSW index's expression and its `dim = 384` predicate.
    let sql = format!(
        "SELECT e.memory_id, e.embedding FROM embeddings e JOIN memories m ON m.id = e.memory_id
         WHERE e.model = {m} AND e.dim = {dim}{f}
         ORDER BY e.embedding::vector({dim}) <=> {q}::vector({dim}) LIMIT {limit}"
    );
    let mut out: Candidates = db
        .query(&sql, &args.refs())?
        .iter()
        .map(|r| {
            let v: Vector = r.get(1);
            (r.get(0), f64::from(dot(query, v.as_slice())))
        })
        .collect();
    sort_desc(&mut out);
    Ok(out)
}

/// Links within `hops` of `seeds`, walked hop by hop (one statement per hop over the
/// whole frontier) exactly as the SQLite backend walks them: undirected, the strongest
/// weight of both directions, only kinds that spread, only ends the filter allows.
fn edges_around(
    db: &mut dyn Db,
    seeds: &[MemoryId],
    hops: usize,
    filter: &Filter,
) -> Result<Vec<Edge>> {
    let mut seen: HashSet<MemoryId> = seeds.iter().copied().collect();
    let mut frontier: Vec<MemoryId> = seeds.to_vec();
    let mut edges: HashMap<(MemoryId, MemoryId), f64> = HashMap::new();
    for _ in 0..hops {
        if frontier.is_empty() {
            break;
        }
        let mut next = Vec::new();
        let rows = db.query(
            "SELECT l.src, l.dst, l.kind, l.weight, a.tier, a.room, b.tier, b.room FROM links l
             JOIN memories a ON a.id = l.src JOIN memories b ON b.id = l.dst
             WHERE l.src = ANY($1) OR l.dst = ANY($1)",
            &[&frontier],
        )?;
        for r in &rows {
            let (a, b): (MemoryId, MemoryId) = (r.get(0), r.get(1));
            let walkable = engram_core::LinkKind::parse(r.get::<_, &str>(2))
                .is_ok_and(|k| k.spreads())
                && filter.allows_tier_room(r.get(4), r.get(5))
                && filter.allows_tier_room(r.get(6), r.get(7));
            if !walkable {
                continue;
            }
            let e = edges.entry((a.min(b), a.max(b))).or_insert(0.0);
            *e = e.max(r.get::<_, f64>(3));
            for n in [a, b] {
                if seen.insert(n) {
                    next.push(n);
                }
            }
        }
        frontier = next;
    }
    Ok(edges
        .into_iter()
        .map(|((a, b), weight)| Edge { a, b, weight })
        .collect())
}
