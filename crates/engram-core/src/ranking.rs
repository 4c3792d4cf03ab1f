//! Recall's ranking, written once for every mode: how the candidate sources fuse into one
//! relevance, how a session lifts its own memories, how relevance, activation and
//! importance order the hits, how associations join, and how exhaustive recall orders by
//! relevance alone. Pure: the engine gathers candidates, coverage, cosines and each
//! memory's standing, and attaches the memories to the ids this module orders.

use crate::embed::Calibration;
use crate::recall_plan::Via;
use crate::relevance;
use crate::scoring::{self, Reached};
use crate::{Config, MemoryId};
use std::collections::{HashMap, HashSet};

/// One candidate's relevance, before activation and importance join.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub id: MemoryId,
    /// Relevance as it enters the final score.
    pub relevance: f64,
    /// The query-independent strength the deepening thresholds compare: the larger of
    /// coverage and the model-calibrated cosine.
    pub absolute: f64,
    pub coverage: f64,
    pub cosine: Option<f64>,
}

/// What the candidate sources returned for one pass, with the measures taken on them.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    /// Lexical candidates, `(id, relevance)`, best first.
    pub lexical: &'a [(MemoryId, f64)],
    /// Vector candidates, `(id, cosine)`, best first.
    pub vector: &'a [(MemoryId, f64)],
    /// Share of the query's terms each candidate holds.
    pub coverage: &'a HashMap<MemoryId, f64>,
    /// Each candidate's exact cosine with the query vector (empty without one).
    pub cosines: &'a HashMap<MemoryId, f64>,
    /// Whether the query has a vector.
    pub query_vector: bool,
    /// The loaded model's calibration.
    pub calibration: Option<Calibration>,
}

/// A memory's standing apart from the query: what the final score needs besides relevance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing<'a> {
    pub activation: f64,
    pub importance: f64,
    pub session: Option<&'a str>,
    /// Who said it, when it records an utterance (`speaker::speaker_of`).
    pub speaker: Option<&'a str>,
}

/// One ranked hit, by id; the engine attaches the memory.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedHit {
    pub id: MemoryId,
    pub score: f64,
    pub relevance: f64,
    /// Relevance on the absolute scale (`relevance::absolute`), apart from the candidates.
    pub absolute: f64,
    pub activation: f64,
    pub coverage: f64,
    pub cosine: Option<f64>,
    pub via: Via,
    /// For associative hits: the ids from the matching memory to this one.
    pub path: Option<Vec<MemoryId>>,
}

/// Hits in order, plus what the deepening plan compares.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ranked {
    pub hits: Vec<RankedHit>,
    pub best_raw: f64,
    pub best_relevance: f64,
    /// Candidates considered before the limit.
    pub candidates: usize,
}

/// The candidates of a pass: lexical ones in their order, then vector-only ones.
pub fn candidate_ids(lexical: &[(MemoryId, f64)], vector: &[(MemoryId, f64)]) -> Vec<MemoryId> {
    let mut ids: Vec<MemoryId> = lexical.iter().map(|c| c.0).collect();
    let seen: HashSet<MemoryId> = ids.iter().copied().collect();
    ids.extend(vector.iter().map(|c| c.0).filter(|id| !seen.contains(id)));
    ids
}

/// Relevance of each candidate (lexical ∪ vector), in [`candidate_ids`] order.
///
/// Lexical part: BM25 relevance scaled to the best candidate, blended with query
/// coverage (`coverage_weight`). With a query vector, the cosine joins by `fusion`:
/// `weighted` adds `w_lexical`·lexical + (1 − `w_lexical`)·cosine min-max normalised over
/// the candidates (the benchmark's best), `max` takes the larger of the lexical part and
/// the calibrated cosine (B), `rrf` fuses the two rankings.
pub fn fuse(cfg: &Config, s: &Sources<'_>) -> Vec<Scored> {
    let ids = candidate_ids(s.lexical, s.vector);
    let lex_norm = scoring::normalize_relevances(
        &s.lexical.iter().map(|c| c.1).collect::<Vec<_>>(),
        cfg.relevance_norm_floor,
    );
    let lex_map: HashMap<MemoryId, f64> = s.lexical.iter().map(|c| c.0).zip(lex_norm).collect();
    let cw = cfg.coverage_weight;
    // How much of the query the lexical channel found at best: when even its best match
    // holds a quarter of the query's words, its candidates should not outweigh meaning.
    let lexical_confidence = if s.query_vector {
        s.lexical
            .iter()
            .map(|c| s.coverage.get(&c.0).copied().unwrap_or(0.0))
            .fold(0.0, f64::max)
    } else {
        1.0
    };
    let cosines: Vec<Option<f64>> = ids.iter().map(|id| s.cosines.get(id).copied()).collect();
    let (cmin, cmax) = cosines
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
            (lo.min(*c), hi.max(*c))
        });
    let span = (cmax - cmin).max(0.05);
    // Min-max needs a spread to mean anything: with one cosine, or all alike, fall back
    // to the model-calibrated cosine.
    let spread = cosines.iter().flatten().count() >= 2 && cmax - cmin >= 0.05;
    let rrf_rank = |list: &[(MemoryId, f64)], id: MemoryId| list.iter().position(|c| c.0 == id);
    let mut out = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let cov = s.coverage.get(id).copied().unwrap_or(0.0);
        let lexical =
            lexical_confidence * ((1.0 - cw) * lex_map.get(id).copied().unwrap_or(0.0) + cw * cov);
        let (relevance, absolute) = match (cosines[i], s.calibration) {
            (Some(c), Some(cal)) => {
                let calibrated = cal.scale(c as f32);
                let rel = match cfg.fusion {
                    scoring::Fusion::Weighted => {
                        let wl = cfg.w_lexical;
                        let v = if spread {
                            ((c - cmin) / span).clamp(0.0, 1.0)
                        } else {
                            calibrated
                        };
                        wl * lexical + (1.0 - wl) * v
                    }
                    scoring::Fusion::Max => lexical.max(calibrated),
                    scoring::Fusion::Rrf => {
                        let k = cfg.rrf_k;
                        let r =
                            |p: Option<usize>| p.map(|p| 1.0 / (k + p as f64 + 1.0)).unwrap_or(0.0);
                        (r(rrf_rank(s.lexical, *id)) + r(rrf_rank(s.vector, *id))) * (k + 1.0) / 2.0
                    }
                };
                (rel, relevance::absolute(cov, Some(c), Some(cal)))
            }
            _ => (lexical, cov),
        };
        out.push(Scored {
            id: *id,
            relevance,
            absolute,
            coverage: cov,
            cosine: cosines[i],
        });
    }
    out
}

/// Memories of one session (or episode) lift each other: each candidate's relevance
/// moves toward the mean of the three best relevances among the candidates of its
/// session, by `w_session` (0 turns it off). A question is usually about one
/// conversation or task; a strong match there makes its neighbours likelier too.
pub fn session_prior(scored: &mut [Scored], standings: &HashMap<MemoryId, Standing<'_>>, ws: f64) {
    if ws <= 0.0 {
        return;
    }
    let session = |id: &MemoryId| standings.get(id).and_then(|s| s.session);
    let mut groups: HashMap<&str, Vec<f64>> = HashMap::new();
    for c in scored.iter() {
        if let Some(s) = session(&c.id) {
            groups.entry(s).or_default().push(c.relevance);
        }
    }
    let means: HashMap<&str, f64> = groups
        .into_iter()
        .map(|(s, mut v)| {
            v.sort_by(|a, b| b.total_cmp(a));
            let top = &v[..v.len().min(3)];
            (s, top.iter().sum::<f64>() / top.len() as f64)
        })
        .collect();
    for c in scored.iter_mut() {
        if let Some(mean) = session(&c.id).and_then(|s| means.get(s)) {
            c.relevance = (c.relevance + ws * mean) / (1.0 + ws);
        }
    }
}

/// The speaker prior: when the question asks about one speaker among the candidates'
/// (`speaker::lifted`), what that speaker said gains `w_speaker` of relevance (0 turns it
/// off). "What did Caroline paint?" is answered by Caroline's turns; "the order in which I
/// brought up …" by the asker's own.
pub fn speaker_prior(
    scored: &mut [Scored],
    standings: &HashMap<MemoryId, Standing<'_>>,
    asked: &crate::speaker::Asked,
    w: f64,
) {
    if w <= 0.0 {
        return;
    }
    let speaker = |id: &MemoryId| standings.get(id).and_then(|s| s.speaker);
    let Some(who) = crate::speaker::lifted(asked, scored.iter().filter_map(|c| speaker(&c.id)))
    else {
        return;
    };
    for c in scored.iter_mut() {
        if speaker(&c.id).is_some_and(|s| s.to_lowercase() == who) {
            c.relevance += w;
        }
    }
}

/// Orders by score descending, ties by id ascending, so ranking is deterministic.
fn by_score(hits: &mut [RankedHit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
}

/// Ranks a pass's direct candidates by the final score, after the session and speaker priors.
/// Candidates without a standing (gone since the sources listed them) are left out. The
/// best *raw* score, for the deepening decision, uses each candidate's absolute relevance:
/// BM25 alone is tiny in a small store, whatever the match.
pub fn rank_direct(
    cfg: &Config,
    mut scored: Vec<Scored>,
    standings: &HashMap<MemoryId, Standing<'_>>,
    asked: &crate::speaker::Asked,
) -> Ranked {
    session_prior(&mut scored, standings, cfg.w_session);
    speaker_prior(&mut scored, standings, asked, cfg.w_speaker);
    let w = cfg.weights();
    let mut best_raw: f64 = 0.0;
    let mut best_relevance: f64 = 0.0;
    let mut hits = Vec::with_capacity(scored.len());
    for c in scored {
        let Some(st) = standings.get(&c.id) else {
            continue;
        };
        best_raw = best_raw.max(scoring::final_score(
            &w,
            c.absolute,
            st.activation,
            st.importance,
        ));
        best_relevance = best_relevance.max(c.absolute);
        hits.push(RankedHit {
            id: c.id,
            score: scoring::final_score(&w, c.relevance, st.activation, st.importance),
            relevance: c.relevance,
            absolute: c.absolute,
            activation: st.activation,
            coverage: c.coverage,
            cosine: c.cosine,
            via: Via::Direct,
            path: None,
        });
    }
    by_score(&mut hits);
    Ranked {
        candidates: hits.len(),
        hits,
        best_raw,
        best_relevance,
    }
}

/// The seeds of spreading activation: the best direct hits (at least five), carrying their
/// ranking relevance into the graph, so an associated memory never outranks its seed.
pub fn seeds(ranked: &Ranked, limit: usize) -> Vec<(MemoryId, f64)> {
    ranked
        .hits
        .iter()
        .take(limit.max(5))
        .map(|h| (h.id, h.relevance))
        .collect()
}

/// Memories spreading reached that are not hits already, in id order.
pub fn newly_reached(ranked: &Ranked, reached: &HashMap<MemoryId, Reached>) -> Vec<MemoryId> {
    let known: HashSet<MemoryId> = ranked.hits.iter().map(|h| h.id).collect();
    let mut ids: Vec<MemoryId> = reached
        .keys()
        .copied()
        .filter(|id| !known.contains(id))
        .collect();
    ids.sort_unstable();
    ids
}

/// Adds the associations spreading reached (those with a standing: loaded and allowed)
/// to the direct hits, scored by the activation that reached them, and re-orders. Their
/// absolute relevance is their own calibrated cosine (they share no word by design).
pub fn add_associative(
    cfg: &Config,
    ranked: &mut Ranked,
    reached: &HashMap<MemoryId, Reached>,
    standings: &HashMap<MemoryId, Standing<'_>>,
    cosines: &HashMap<MemoryId, f64>,
    calibration: Option<Calibration>,
) {
    let w = cfg.weights();
    let mut ids: Vec<&MemoryId> = standings.keys().collect();
    ids.sort_unstable();
    for id in ids {
        let (Some(r), Some(st)) = (reached.get(id), standings.get(id)) else {
            continue;
        };
        ranked.hits.push(RankedHit {
            id: *id,
            score: scoring::final_score(&w, r.score, st.activation, st.importance),
            relevance: r.score,
            absolute: relevance::absolute(0.0, cosines.get(id).copied(), calibration),
            activation: st.activation,
            coverage: 0.0,
            cosine: cosines.get(id).copied(),
            via: Via::Associative,
            path: Some(r.path.clone()),
        });
    }
    by_score(&mut ranked.hits);
}

/// Exhaustive relevances: the lexical match, or with a model the larger of it and the
/// calibrated cosine (vector candidates join at 0 lexical); those under `floor` are dropped.
pub fn exhaustive_relevances(
    lexical: &[(MemoryId, f64)],
    vector: &[(MemoryId, f64)],
    model: Option<(&HashMap<MemoryId, f64>, Calibration)>,
    floor: f64,
) -> Vec<(MemoryId, f64)> {
    let mut out: Vec<(MemoryId, f64)> = lexical.to_vec();
    if let Some((cosines, cal)) = model {
        let known: HashSet<MemoryId> = out.iter().map(|c| c.0).collect();
        out.extend(
            candidate_ids(&[], vector)
                .into_iter()
                .filter(|id| !known.contains(id))
                .map(|id| (id, 0.0)),
        );
        for (id, rel) in out.iter_mut() {
            if let Some(c) = cosines.get(id) {
                *rel = rel.max(cal.scale(*c as f32));
            }
        }
    }
    out.retain(|c| c.1 >= floor);
    out
}

/// Ranks exhaustive candidates by relevance alone (then activation, then id). Its best
/// relevance, for the deepening decision, is the larger of coverage and calibrated cosine.
pub fn rank_exhaustive(
    kept: &[(MemoryId, f64)],
    standings: &HashMap<MemoryId, Standing<'_>>,
    coverage: &HashMap<MemoryId, f64>,
    cosines: &HashMap<MemoryId, f64>,
    calibration: Option<Calibration>,
) -> Ranked {
    let mut hits: Vec<RankedHit> = Vec::with_capacity(kept.len());
    for (id, rel) in kept {
        let Some(st) = standings.get(id) else {
            continue;
        };
        let cov = coverage.get(id).copied().unwrap_or(0.0);
        let cosine = cosines.get(id).copied();
        hits.push(RankedHit {
            id: *id,
            score: *rel,
            relevance: *rel,
            absolute: relevance::absolute(cov, cosine, calibration),
            activation: st.activation,
            coverage: cov,
            cosine,
            via: Via::Exhaustive,
            path: None,
        });
    }
    hits.sort_by(|a, b| {
        b.relevance
            .total_cmp(&a.relevance)
            .then(b.activation.total_cmp(&a.activation))
            .then(a.id.cmp(&b.id))
    });
    let best = hits.iter().map(|h| h.absolute).fold(0.0, f64::max);
    Ranked {
        candidates: hits.len(),
        hits,
        best_raw: best,
        best_relevance: best,
    }
}

/// The order in which hits are shown once superseded ones name their successors: each
/// successor that is itself a hit moves up to just before the first memory it replaced,
/// so a deep or as-of recall never puts a retired fact above the one that replaced it
/// (the scores are kept: the older may well be the closer match in words). `hits` is
/// `(id, successor)` in ranked order; the result is indices into it. Chains order too
/// (`c` replaced `b` replaced `a`: `c, b, a`), and a cycle cannot loop.
pub fn successors_first(hits: &[(MemoryId, Option<MemoryId>)]) -> Vec<usize> {
    let pos: HashMap<MemoryId, usize> = hits.iter().enumerate().map(|(i, h)| (h.0, i)).collect();
    let mut order: Vec<usize> = (0..hits.len()).collect();
    // Repeated passes settle chains; each pass only moves a successor up, so at most
    // `len` passes are ever needed.
    for _ in 0..hits.len() {
        let mut moved = false;
        for at in 0..order.len() {
            let Some(succ) = hits[order[at]].1 else {
                continue;
            };
            let Some(&si) = pos.get(&succ) else { continue };
            let Some(s_at) = order.iter().position(|&i| i == si) else {
                continue;
            };
            if s_at > at {
                let s = order.remove(s_at);
                order.insert(at, s);
                moved = true;
                break;
            }
        }
        if !moved {
            break;
        }
    }
    order
}

#[cfg(test)]
#[path = "ranking_tests.rs"]
mod tests;
