//! Ranking: how relevance, activation and importance combine, how candidate lists fuse,
//! and how activation spreads over links in deep recall.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Weights of the final score. Defaults are seed B's 0.6 / 0.25 / 0.15.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    pub relevance: f64,
    pub activation: f64,
    pub importance: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            relevance: 0.6,
            activation: 0.25,
            importance: 0.15,
        }
    }
}

/// `w_rel·relevance + w_act·activation + w_imp·importance`; all inputs in `[0, 1]`.
pub fn final_score(w: &Weights, relevance: f64, activation: f64, importance: f64) -> f64 {
    w.relevance * relevance + w.activation * activation + w.importance * importance
}

/// Scales relevances for ranking so the best candidate gets 1 and the rest keep their
/// ratio to it: `r / max(best, floor)`. The floor (B: 0.10) stops a set of uniformly weak
/// matches from being inflated to full relevance.
///
/// B normalises min-max instead, which gives the weakest candidate 0 even when it matches
/// well, and a lone candidate 0 always; ratio scaling keeps "how much worse than the best".
pub fn normalize_relevances(values: &[f64], floor: f64) -> Vec<f64> {
    let max = values.iter().copied().fold(0.0_f64, f64::max);
    let denom = max.max(floor).max(1e-9);
    values.iter().map(|v| (v / denom).clamp(0.0, 1.0)).collect()
}

/// Lexical relevance from an FTS5 bm25 score (negative; lower is better):
/// `1 − e^{bm25 / scale}` (B used scale 1, which saturates near 1 in a large store).
pub fn bm25_relevance(bm25: f64, scale: f64) -> f64 {
    if bm25 < 0.0 {
        1.0 - (bm25 / scale.max(1e-9)).exp()
    } else {
        0.0
    }
}

/// Relevance for a substring match found without an index (LIKE fallback): B's pseudo-bm25
/// `−ln(1 + N/df)` gives `N / (N + df)`: rarer strings are more telling.
pub fn like_relevance(total_docs: usize, doc_freq: usize) -> f64 {
    let n = total_docs.max(1) as f64;
    n / (n + doc_freq.max(1) as f64)
}

/// How candidate lists from several sources (lexical now, vector later) become one relevance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    /// B's rule: the best relevance any source gives.
    #[default]
    Max,
    /// A weighted sum of per-query min-max-normalised source scores (A, and the bench's best).
    Weighted,
    /// Reciprocal rank fusion, `Σ 1/(k + rank)`, rescaled so the best possible is 1.
    Rrf,
}

/// One source's candidates: `(id, relevance in [0, 1])`, best first.
pub type Candidates = Vec<(i64, f64)>;

/// Sorts `(id, score)` by score descending, ties by id ascending (older first), so ranking is deterministic.
pub fn sort_desc(v: &mut [(i64, f64)]) {
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
}

/// An undirected weighted edge as spreading activation sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub a: i64,
    pub b: i64,
    pub weight: f64,
}

/// A node reached by spreading activation: its best score and the path that gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reached {
    pub score: f64,
    /// Ids from the seed to this node, both included.
    pub path: Vec<i64>,
}

/// Spreads seed scores over edges for `hops` steps: each hop carries
/// `score · clamp(weight, 0, 1) · hop_decay`, and a node keeps the best score that reaches it
/// (B's rule). Seeds are in the result with their own scores and one-element paths.
pub fn spread(
    seeds: &[(i64, f64)],
    edges: &[Edge],
    hops: usize,
    hop_decay: f64,
) -> HashMap<i64, Reached> {
    let mut adj: HashMap<i64, Vec<(i64, f64)>> = HashMap::new();
    for e in edges {
        let w = e.weight.clamp(0.0, 1.0);
        adj.entry(e.a).or_default().push((e.b, w));
        adj.entry(e.b).or_default().push((e.a, w));
    }
    let mut best: HashMap<i64, Reached> = HashMap::new();
    for &(id, s) in seeds {
        let better = best.get(&id).is_none_or(|r| s > r.score);
        if better {
            best.insert(
                id,
                Reached {
                    score: s,
                    path: vec![id],
                },
            );
        }
    }
    let mut frontier: Vec<i64> = best.keys().copied().collect();
    frontier.sort_unstable();
    for _ in 0..hops {
        // Scores as they stood when this hop began, so one hop never travels two edges.
        let snapshot: Vec<(i64, Reached)> = frontier
            .iter()
            .filter_map(|n| best.get(n).map(|r| (*n, r.clone())))
            .collect();
        let mut next: Vec<i64> = Vec::new();
        for (node, from) in &snapshot {
            for &(nb, w) in adj.get(node).map(Vec::as_slice).unwrap_or(&[]) {
                let s = from.score * w * hop_decay;
                if s <= 0.0 || from.path.contains(&nb) {
                    continue;
                }
                if best.get(&nb).is_none_or(|r| s > r.score) {
                    let mut path = from.path.clone();
                    path.push(nb);
                    best.insert(nb, Reached { score: s, path });
                    next.push(nb);
                }
            }
        }
        next.sort_unstable();
        next.dedup();
        frontier = next;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_score_uses_b_weights() {
        let w = Weights::default();
        assert!((final_score(&w, 1.0, 1.0, 1.0) - 1.0).abs() < 1e-12);
        assert!((final_score(&w, 0.5, 0.4, 0.2) - (0.3 + 0.1 + 0.03)).abs() < 1e-12);
    }

    #[test]
    fn normalisation_keeps_ratios_and_floors_weak_sets() {
        let n = normalize_relevances(&[0.25, 0.5], 0.10);
        assert_eq!(n, vec![0.5, 1.0]);
        assert_eq!(
            normalize_relevances(&[0.7], 0.10),
            vec![1.0],
            "a lone match is fully relevant"
        );
        let weak = normalize_relevances(&[0.02, 0.05], 0.10);
        assert!(
            (weak[1] - 0.5).abs() < 1e-12,
            "weak sets are not inflated past the floor"
        );
        assert!(normalize_relevances(&[], 0.1).is_empty());
    }

    #[test]
    fn lexical_relevance_shapes() {
        assert_eq!(bm25_relevance(0.0, 1.0), 0.0);
        assert!(bm25_relevance(-5.0, 10.0) > bm25_relevance(-1.0, 10.0));
        assert!(like_relevance(100, 1) > like_relevance(100, 50));
        assert!((like_relevance(100, 100) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn spread_two_hops_with_decay_keeps_best_path() {
        let edges = [
            Edge {
                a: 1,
                b: 2,
                weight: 1.0,
            },
            Edge {
                a: 2,
                b: 3,
                weight: 0.5,
            },
            Edge {
                a: 3,
                b: 4,
                weight: 1.0,
            },
            Edge {
                a: 1,
                b: 3,
                weight: 0.1,
            },
        ];
        let r = spread(&[(1, 1.0)], &edges, 2, 0.7);
        assert!((r[&2].score - 0.7).abs() < 1e-12);
        // 1→2→3 gives 0.7·0.5·0.7 = 0.245, better than 1→3 directly (0.07).
        assert!((r[&3].score - 0.245).abs() < 1e-12);
        assert_eq!(r[&3].path, vec![1, 2, 3]);
        // Depth 2 only: 4 is three hops away via the best path, but 1→3→4 is two hops.
        assert!((r[&4].score - 0.07 * 0.7).abs() < 1e-12);
        let none = spread(&[(1, 1.0)], &edges, 0, 0.7);
        assert_eq!(none.len(), 1);
    }
}
