//! Recall: candidates, ranking, modes, and the recall-hit log.
//!
//! * `fast`: active memories (episodes only when asked for by kind), lexical candidates,
//!   ranked by `w_rel·relevance + w_act·activation + w_imp·importance` with relevance
//!   min-max normalised over the candidates. When the best *raw* score (unnormalised
//!   relevance) is below `deep_score_threshold`, fast deepens by itself.
//! * `deep`: also archived and superseded memories and every kind; the direct hits seed
//!   spreading activation over links (depth `max_hops`, decay `hop_decay`), which adds
//!   associated memories that share no word with the query. A superseded hit names its
//!   successor. When even deep is weak, exhaustive is tried and kept if it finds better.
//! * `exhaustive`: every memory outside the trash, by relevance alone, with a substring
//!   scan for partial words; no candidate cap.

use crate::search::Filter;
use crate::store::add_event;
use crate::{Result, Store};
use engram_core::dynamics;
use engram_core::limits;
use engram_core::scoring::{self, Edge};
use engram_core::{EventKind, InputError, Kind, Memory, MemoryId, Tier};
use rusqlite::TransactionBehavior;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

/// How hard recall looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Fast,
    Deep,
    Exhaustive,
}

impl Mode {
    pub fn parse(raw: &str) -> Result<Mode, InputError> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "fast" => Ok(Mode::Fast),
            "deep" => Ok(Mode::Deep),
            "exhaustive" => Ok(Mode::Exhaustive),
            _ => Err(InputError::new(
                "mode",
                format!("{raw:?} is not a recall mode; use fast, deep or exhaustive"),
            )),
        }
    }
}

/// How a hit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// It matched the query.
    Direct,
    /// It was reached over links from a memory that matched.
    Associative,
    /// An exhaustive scan found it.
    Exhaustive,
}

#[derive(Debug, Clone)]
pub struct RecallRequest {
    pub query: String,
    pub mode: Mode,
    pub limit: usize,
    /// Only these kinds (any kind in deep and exhaustive, all but episodes in fast, when empty).
    pub kinds: Vec<Kind>,
    /// Explicit room, or `*` for all rooms; else resolved from `cwd`.
    pub room: Option<String>,
    pub cwd: Option<PathBuf>,
    /// Log a recall-hit event for every returned hit (default true).
    pub record_hits: bool,
    pub session_id: Option<String>,
    /// Pack hits, best first, until their content would exceed this many tokens (about
    /// four bytes each); the result says how many were used and how many hits were left out.
    pub token_budget: Option<usize>,
    /// Recall what was true at this time: memories created by then and not yet superseded
    /// (superseded ones included when they were still valid then). Default: now.
    pub as_of: Option<engram_core::Millis>,
    /// Fast recall includes superseded memories too (each names its successor).
    pub include_superseded: bool,
    /// Only hits holding at least this share of the query's terms (`coverage`), applied
    /// before the limit: seed C's `match_mode: all` (every word must match) asks for 0.999.
    pub min_coverage: Option<f64>,
}

impl RecallRequest {
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            mode: Mode::Fast,
            limit: 5,
            kinds: Vec::new(),
            room: None,
            cwd: None,
            record_hits: true,
            session_id: None,
            token_budget: None,
            as_of: None,
            include_superseded: false,
            min_coverage: None,
        }
    }
}

/// One recalled memory and why it ranked where it did.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    #[serde(flatten)]
    pub memory: Memory,
    /// The final score hits are ordered by.
    pub score: f64,
    /// Relevance to the query as it entered the score (normalised over the candidates).
    pub relevance: f64,
    /// Activation now, under the configured dynamics.
    pub activation: f64,
    /// Share of the query's terms the memory holds (0 for memories reached over links).
    pub coverage: f64,
    /// Cosine between the query and the memory, when a model is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
    pub via: Via,
    /// For associative hits: the ids from the matching memory to this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<MemoryId>>,
    /// For superseded hits: the memory that replaced this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<MemoryId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecallResult {
    pub hits: Vec<Hit>,
    /// The mode that produced the hits.
    pub mode: Mode,
    pub requested_mode: Mode,
    /// Whether a weak result made recall look harder than asked.
    pub auto_deepened: bool,
    /// The rooms searched (`None`: all).
    pub rooms: Option<Vec<String>>,
    /// Candidates considered before the limit.
    pub candidates: usize,
    /// With a token budget: the budget, the tokens the returned hits use, and how many
    /// hits within the limit were left out to respect it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_budget: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_used: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub omitted_for_budget: Option<usize>,
}

/// Exhaustive recall ranks at most this many lexical matches (best first), so a query that
/// matches half of a large store stays bounded in time and memory.
pub const EXHAUSTIVE_MAX_CANDIDATES: usize = 2000;

/// Hits ranked, plus the best raw score (for the auto-deepen decision) and best relevance.
struct Ranked {
    hits: Vec<Hit>,
    best_raw: f64,
    best_relevance: f64,
    candidates: usize,
}

impl Store {
    /// Recalls memories for a query. Returned hits are logged as recall hits unless
    /// `record_hits` is false.
    pub fn recall(&mut self, req: &RecallRequest) -> Result<RecallResult> {
        if req.query.trim().is_empty() {
            return Err(InputError::new("query", "must not be empty").into());
        }
        limits::check_len("query", &req.query, limits::MAX_QUERY_BYTES)?;
        limits::check_limit(req.limit)?;
        if let Some(s) = &req.session_id {
            limits::check_name("session_id", s)?;
        }
        let scope = crate::rooms::scope(&self.config, req.room.as_deref(), req.cwd.as_deref())?;
        let rooms = scope.rooms();
        let kinds = (!req.kinds.is_empty()).then(|| req.kinds.clone());

        // The query's vector, when a model is loaded and the store has vectors of it.
        self.refresh_index()?;
        let qvec: Option<Vec<f32>> = match &self.embedder {
            Some(e) if self.index.as_ref().is_some_and(|i| i.len() > 0) => {
                e.embed_query(&req.query).ok()
            }
            _ => None,
        };
        let qv = qvec.as_deref();
        let ranked_fast;
        let (mut ranked, mode, auto) = match req.mode {
            Mode::Fast => {
                ranked_fast = self.fast(req, &kinds, &rooms, qv)?;
                if ranked_fast.best_raw < self.config.deep_score_threshold {
                    let (r, m) = self.deep_then_maybe_exhaustive(req, &kinds, &rooms, qv)?;
                    (r, m, true)
                } else {
                    (ranked_fast, Mode::Fast, false)
                }
            }
            Mode::Deep => {
                let (r, m) = self.deep_then_maybe_exhaustive(req, &kinds, &rooms, qv)?;
                let auto = m != Mode::Deep;
                (r, m, auto)
            }
            Mode::Exhaustive => (
                self.exhaustive(req, &kinds, &rooms, qv)?,
                Mode::Exhaustive,
                false,
            ),
        };
        if let Some(at) = req.as_of {
            // Associations reached over links are checked here.
            ranked
                .hits
                .retain(|h| crate::search::valid_at(&h.memory, at));
        }
        if let Some(min) = req.min_coverage {
            ranked.hits.retain(|h| h.coverage >= min);
        }
        ranked.hits.truncate(req.limit);
        let mut tokens_used = None;
        let mut omitted = None;
        if let Some(budget) = req.token_budget {
            if budget == 0 {
                return Err(InputError::new("token_budget", "must be at least 1").into());
            }
            let mut used = 0;
            let mut keep = 0;
            for h in &ranked.hits {
                let t = engram_core::hub::estimate_tokens(&h.memory.content);
                if used + t > budget {
                    break;
                }
                used += t;
                keep += 1;
            }
            omitted = Some(ranked.hits.len() - keep);
            ranked.hits.truncate(keep);
            tokens_used = Some(used);
        }
        for hit in &mut ranked.hits {
            if hit.memory.tier == Tier::Superseded {
                hit.superseded_by = self.successor_of(hit.memory.id)?;
                hit.note = Some(match hit.superseded_by {
                    Some(s) => format!("superseded: replaced by #{s}"),
                    None => "superseded".to_string(),
                });
            } else if hit.memory.tier == Tier::Archived {
                hit.note = Some("archived".to_string());
            }
        }
        if req.record_hits && !ranked.hits.is_empty() {
            let now = self.now();
            let w = self.config.recall_hit_weight;
            // Recall hits are bookkeeping, not something a client asked to keep: a power cut
            // may only forget the last hits.
            let session = req.session_id.as_deref();
            self.without_fsync(|s| s.log_hits(&ranked.hits, now, w, session))??;
        }
        Ok(RecallResult {
            hits: ranked.hits,
            mode,
            requested_mode: req.mode,
            auto_deepened: auto,
            rooms,
            candidates: ranked.candidates,
            token_budget: req.token_budget,
            tokens_used,
            omitted_for_budget: omitted,
        })
    }

    /// One recall-hit event per hit, in one transaction.
    fn log_hits(
        &mut self,
        hits: &[Hit],
        now: engram_core::Millis,
        w: f64,
        session: Option<&str>,
    ) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        for hit in hits {
            // Another process may have purged it (or restored a backup) since it was
            // read: log hits only for memories that are still there.
            if crate::store::exists(&tx, hit.memory.id)? {
                add_event(
                    &tx,
                    hit.memory.id,
                    EventKind::RecallHit,
                    w,
                    now,
                    session,
                    None,
                )?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn deep_then_maybe_exhaustive(
        &self,
        req: &RecallRequest,
        kinds: &Option<Vec<Kind>>,
        rooms: &Option<Vec<String>>,
        qvec: Option<&[f32]>,
    ) -> Result<(Ranked, Mode)> {
        let deep = self.deep(req, kinds, rooms, qvec)?;
        if deep.best_raw < self.config.exhaustive_score_threshold {
            let ex = self.exhaustive(req, kinds, rooms, qvec)?;
            if ex.best_relevance > deep.best_relevance {
                return Ok((ex, Mode::Exhaustive));
            }
        }
        Ok((deep, Mode::Deep))
    }

    fn fast(
        &self,
        req: &RecallRequest,
        kinds: &Option<Vec<Kind>>,
        rooms: &Option<Vec<String>>,
        qvec: Option<&[f32]>,
    ) -> Result<Ranked> {
        let tiers = if req.as_of.is_some() || req.include_superseded {
            vec![Tier::Active, Tier::Superseded]
        } else {
            vec![Tier::Active]
        };
        let filter = Filter {
            tiers,
            kinds: kinds.clone(),
            exclude_kinds: if kinds.is_none() {
                vec![Kind::Episode]
            } else {
                vec![]
            },
            rooms: rooms.clone(),
            valid_at: req.as_of,
        };
        let plan = engram_core::text::plan_query(&req.query);
        let cands = self.lexical_candidates(&plan, &filter, self.config.candidate_k, &[])?;
        self.rank(
            &plan,
            &cands,
            &self.vector_source(qvec, &filter)?,
            qvec,
            Via::Direct,
        )
    }

    fn deep(
        &self,
        req: &RecallRequest,
        kinds: &Option<Vec<Kind>>,
        rooms: &Option<Vec<String>>,
        qvec: Option<&[f32]>,
    ) -> Result<Ranked> {
        let filter = Filter::outside_trash(kinds, rooms).valid_at(req.as_of);
        let plan = engram_core::text::plan_query(&req.query);
        let cands = self.lexical_candidates(&plan, &filter, self.config.candidate_k, &[])?;
        let mut direct = self.rank(
            &plan,
            &cands,
            &self.vector_source(qvec, &filter)?,
            qvec,
            Via::Direct,
        )?;
        if self.config.max_hops == 0 || direct.hits.is_empty() {
            return Ok(direct);
        }
        // Seeds: the best direct hits, carrying their ranking relevance (scaled to the best
        // candidate) into the graph, so an associated memory never outranks its seed.
        let seeds: Vec<(MemoryId, f64)> = direct
            .hits
            .iter()
            .take(req.limit.max(5))
            .map(|h| (h.memory.id, h.relevance))
            .collect();
        let seed_ids: Vec<MemoryId> = seeds.iter().map(|s| s.0).collect();
        let edges = self.edges_around(&seed_ids, self.config.max_hops, &filter)?;
        let reached = scoring::spread(&seeds, &edges, self.config.max_hops, self.config.hop_decay);
        let known: HashSet<MemoryId> = direct.hits.iter().map(|h| h.memory.id).collect();
        let new_ids: Vec<MemoryId> = reached
            .keys()
            .copied()
            .filter(|id| !known.contains(id))
            .collect();
        if new_ids.is_empty() {
            return Ok(direct);
        }
        let memories: Vec<Memory> = self
            .load_many(&new_ids)?
            .into_iter()
            .filter(|m| filter.allows(m))
            .collect();
        let traces = self.traces_of(&memories.iter().map(|m| m.id).collect::<Vec<_>>())?;
        let now = self.now();
        let w = self.config.weights();
        for m in memories {
            let r = &reached[&m.id];
            let act =
                self.activation_of(&m, traces.get(&m.id).map(Vec::as_slice).unwrap_or(&[]), now);
            let score = scoring::final_score(&w, r.score, act, m.importance);
            direct.hits.push(Hit {
                score,
                relevance: r.score,
                activation: act,
                coverage: 0.0,
                cosine: qvec.and_then(|q| self.cosine_with(q, m.id)).map(f64::from),
                via: Via::Associative,
                path: Some(r.path.clone()),
                superseded_by: None,
                note: None,
                memory: m,
            });
        }
        direct.hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.memory.id.cmp(&b.memory.id))
        });
        Ok(direct)
    }

    fn exhaustive(
        &self,
        req: &RecallRequest,
        kinds: &Option<Vec<Kind>>,
        rooms: &Option<Vec<String>>,
        qvec: Option<&[f32]>,
    ) -> Result<Ranked> {
        let filter = Filter::outside_trash(kinds, rooms).valid_at(req.as_of);
        let plan = engram_core::text::plan_query(&req.query);
        let partial: Vec<String> = engram_core::text::split(&req.query)
            .words
            .into_iter()
            .filter(|w| w.chars().count() >= 3)
            .take(engram_core::text::MAX_QUERY_TERMS)
            .collect();
        let mut cands =
            self.lexical_candidates(&plan, &filter, EXHAUSTIVE_MAX_CANDIDATES, &partial)?;
        // With a model, meaning counts too: relevance is the larger of the lexical match and
        // the calibrated cosine.
        let cal = self
            .embedder
            .as_ref()
            .map(|e| engram_core::embed::calibration(e.model_id()));
        if let (Some(q), Some(cal)) = (qvec, cal) {
            let mut by_id: HashMap<MemoryId, f64> = cands.iter().copied().collect();
            for (id, _) in self.vector_candidates(q, &filter, EXHAUSTIVE_MAX_CANDIDATES / 10)? {
                by_id.entry(id).or_insert(0.0);
            }
            let ids: Vec<MemoryId> = by_id.keys().copied().collect();
            let cosines = self.cosines_with(q, &ids);
            for (id, rel) in by_id.iter_mut() {
                if let Some(c) = cosines.get(id) {
                    *rel = rel.max(cal.scale(*c));
                }
            }
            cands = by_id.into_iter().collect();
        }
        let floor = self.config.exhaustive_min_relevance;
        let kept: Vec<(MemoryId, f64)> = cands.into_iter().filter(|c| c.1 >= floor).collect();
        let memories = self.load_many(&kept.iter().map(|c| c.0).collect::<Vec<_>>())?;
        let by_id: HashMap<MemoryId, Memory> = memories.into_iter().map(|m| (m.id, m)).collect();
        let kept_ids: Vec<MemoryId> = kept.iter().map(|c| c.0).collect();
        let traces = self.traces_of(&kept_ids)?;
        let coverage = self.coverage(&plan, &kept_ids, true)?;
        let now = self.now();
        let mut hits: Vec<Hit> = Vec::with_capacity(kept.len());
        for (id, rel) in &kept {
            let Some(m) = by_id.get(id) else { continue };
            let act = self.activation_of(m, traces.get(id).map(Vec::as_slice).unwrap_or(&[]), now);
            hits.push(Hit {
                score: *rel,
                relevance: *rel,
                activation: act,
                coverage: coverage.get(id).copied().unwrap_or(0.0),
                cosine: qvec.and_then(|q| self.cosine_with(q, *id)).map(f64::from),
                via: Via::Exhaustive,
                path: None,
                superseded_by: None,
                note: None,
                memory: m.clone(),
            });
        }
        hits.sort_by(|a, b| {
            b.relevance
                .total_cmp(&a.relevance)
                .then(b.activation.total_cmp(&a.activation))
                .then(a.memory.id.cmp(&b.memory.id))
        });
        let best = hits
            .iter()
            .map(|h| match (h.cosine, cal) {
                (Some(c), Some(cal)) => h.coverage.max(cal.scale(c as f32)),
                _ => h.coverage,
            })
            .fold(0.0, f64::max);
        Ok(Ranked {
            candidates: hits.len(),
            hits,
            best_raw: best,
            best_relevance: best,
        })
    }

    /// Vector candidates for a filter, when there is a query vector.
    fn vector_source(&self, qvec: Option<&[f32]>, filter: &Filter) -> Result<Vec<(MemoryId, f64)>> {
        match qvec {
            Some(q) => self.vector_candidates(q, filter, self.config.candidate_k),
            None => Ok(Vec::new()),
        }
    }

    /// Relevance of each candidate (lexical ∪ vector), in candidate order.
    ///
    /// Lexical part: BM25 relevance scaled to the best candidate, blended with query
    /// coverage (`coverage_weight`). With a query vector, the cosine joins by `fusion`:
    /// `weighted` (default) adds `w_lexical`·lexical + (1 − `w_lexical`)·cosine min-max
    /// normalised over the candidates (the benchmark's best), `max` takes the larger of the
    /// lexical part and the calibrated cosine (B), `rrf` fuses the two rankings.
    /// `absolute` is the query-independent strength used by the auto-deepen thresholds:
    /// the larger of coverage and the model-calibrated cosine.
    fn relevances(
        &self,
        plan: &engram_core::text::QueryPlan,
        lex: &[(MemoryId, f64)],
        vec: &[(MemoryId, f64)],
        qvec: Option<&[f32]>,
    ) -> Result<Vec<Scored>> {
        let mut ids: Vec<MemoryId> = lex.iter().map(|c| c.0).collect();
        let seen: HashSet<MemoryId> = ids.iter().copied().collect();
        ids.extend(vec.iter().map(|c| c.0).filter(|id| !seen.contains(id)));
        let lex_norm = scoring::normalize_relevances(
            &lex.iter().map(|c| c.1).collect::<Vec<_>>(),
            self.config.relevance_norm_floor,
        );
        let lex_map: HashMap<MemoryId, f64> = lex.iter().map(|c| c.0).zip(lex_norm).collect();
        let coverage = self.coverage(plan, &ids, false)?;
        let cw = self.config.coverage_weight;
        // How much of the query the lexical channel found at best: when even its best match
        // holds a quarter of the query's words, its candidates should not outweigh meaning.
        let lexical_confidence = if qvec.is_some() {
            lex.iter()
                .map(|c| coverage.get(&c.0).copied().unwrap_or(0.0))
                .fold(0.0, f64::max)
        } else {
            1.0
        };
        let cal = self
            .embedder
            .as_ref()
            .map(|e| engram_core::embed::calibration(e.model_id()));
        let by_id = qvec.map(|q| self.cosines_with(q, &ids)).unwrap_or_default();
        let cosines: Vec<Option<f64>> = ids
            .iter()
            .map(|id| by_id.get(id).copied().map(f64::from))
            .collect();
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
            let cov = coverage.get(id).copied().unwrap_or(0.0);
            let lexical = lexical_confidence
                * ((1.0 - cw) * lex_map.get(id).copied().unwrap_or(0.0) + cw * cov);
            let (relevance, absolute) = match (cosines[i], cal) {
                (Some(c), Some(cal)) => {
                    let calibrated = cal.scale(c as f32);
                    let rel = match self.config.fusion {
                        scoring::Fusion::Weighted => {
                            let wl = self.config.w_lexical;
                            let v = if spread {
                                ((c - cmin) / span).clamp(0.0, 1.0)
                            } else {
                                calibrated
                            };
                            wl * lexical + (1.0 - wl) * v
                        }
                        scoring::Fusion::Max => lexical.max(calibrated),
                        scoring::Fusion::Rrf => {
                            let k = self.config.rrf_k;
                            let r = |p: Option<usize>| {
                                p.map(|p| 1.0 / (k + p as f64 + 1.0)).unwrap_or(0.0)
                            };
                            (r(rrf_rank(lex, *id)) + r(rrf_rank(vec, *id))) * (k + 1.0) / 2.0
                        }
                    };
                    (rel, cov.max(calibrated))
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
        Ok(out)
    }

    /// Memories of one session (or episode) lift each other: each candidate's relevance
    /// moves toward the mean of the three best relevances among the candidates of its
    /// session, by `w_session` (0 turns it off). A question is usually about one
    /// conversation or task; a strong match there makes its neighbours likelier too.
    fn session_prior(&self, scored: &mut [Scored], by_id: &HashMap<MemoryId, Memory>) {
        let ws = self.config.w_session;
        if ws <= 0.0 {
            return;
        }
        let mut groups: HashMap<&str, Vec<f64>> = HashMap::new();
        for c in scored.iter() {
            if let Some(s) = by_id.get(&c.id).and_then(|m| m.session_id.as_deref()) {
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
            if let Some(mean) = by_id
                .get(&c.id)
                .and_then(|m| m.session_id.as_deref())
                .and_then(|s| means.get(s))
            {
                c.relevance = (c.relevance + ws * mean) / (1.0 + ws);
            }
        }
    }

    /// Ranks candidates by the final score. The best *raw* score, for the auto-deepen
    /// decision, uses each candidate's absolute relevance (coverage or calibrated cosine):
    /// BM25 alone is tiny in a small store, whatever the match.
    fn rank(
        &self,
        plan: &engram_core::text::QueryPlan,
        lex: &[(MemoryId, f64)],
        vec: &[(MemoryId, f64)],
        qvec: Option<&[f32]>,
        via: Via,
    ) -> Result<Ranked> {
        let mut scored = self.relevances(plan, lex, vec, qvec)?;
        let ids: Vec<MemoryId> = scored.iter().map(|c| c.id).collect();
        let by_id: HashMap<MemoryId, Memory> = self
            .load_many(&ids)?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        self.session_prior(&mut scored, &by_id);
        let traces = self.traces_of(&ids)?;
        let now = self.now();
        let w = self.config.weights();
        let mut best_raw: f64 = 0.0;
        let mut best_relevance: f64 = 0.0;
        let mut hits = Vec::with_capacity(scored.len());
        for c in &scored {
            let Some(m) = by_id.get(&c.id) else { continue };
            let act =
                self.activation_of(m, traces.get(&c.id).map(Vec::as_slice).unwrap_or(&[]), now);
            best_raw = best_raw.max(scoring::final_score(&w, c.absolute, act, m.importance));
            best_relevance = best_relevance.max(c.absolute);
            hits.push(Hit {
                score: scoring::final_score(&w, c.relevance, act, m.importance),
                relevance: c.relevance,
                activation: act,
                coverage: c.coverage,
                cosine: c.cosine,
                via,
                path: None,
                superseded_by: None,
                note: None,
                memory: m.clone(),
            });
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.memory.id.cmp(&b.memory.id))
        });
        Ok(Ranked {
            candidates: hits.len(),
            hits,
            best_raw,
            best_relevance,
        })
    }

    fn activation_of(
        &self,
        m: &Memory,
        traces: &[dynamics::Trace],
        now: engram_core::Millis,
    ) -> f64 {
        dynamics::activation(
            self.config.dynamics,
            traces,
            now,
            m.importance,
            m.kind.decay_class(),
            &self.config.actr,
        )
    }

    /// Links within `hops` of `seeds` that spreading activation walks, as undirected edges
    /// (the strongest weight when both directions exist). Edges to memories the filter
    /// excludes (the trash, other rooms) are dropped, so activation never passes through them.
    fn edges_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>> {
        let mut seen: HashSet<MemoryId> = seeds.iter().copied().collect();
        let mut frontier: Vec<MemoryId> = seeds.to_vec();
        let mut edges: HashMap<(MemoryId, MemoryId), f64> = HashMap::new();
        for _ in 0..hops {
            if frontier.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for chunk in frontier.chunks(400) {
                let ph = crate::store::placeholders(chunk.len());
                let sql = format!(
                    "SELECT l.src, l.dst, l.kind, l.weight, a.tier, a.room, b.tier, b.room FROM links l \
                     JOIN memories a ON a.id = l.src JOIN memories b ON b.id = l.dst \
                     WHERE l.src IN ({ph}) OR l.dst IN ({ph})"
                );
                let mut stmt = self.conn.prepare_cached(&sql)?;
                let params: Vec<i64> = chunk.iter().chain(chunk.iter()).copied().collect();
                let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
                    Ok(LinkRow {
                        a: r.get(0)?,
                        b: r.get(1)?,
                        kind: r.get(2)?,
                        weight: r.get(3)?,
                        ends: [(r.get(4)?, r.get(5)?), (r.get(6)?, r.get(7)?)],
                    })
                })?;
                for row in rows {
                    let l = row?;
                    let walkable = engram_core::LinkKind::parse(&l.kind).is_ok_and(|k| k.spreads())
                        && l.ends
                            .iter()
                            .all(|(tier, room)| filter.allows_tier_room(tier, room));
                    if !walkable {
                        continue;
                    }
                    let key = (l.a.min(l.b), l.a.max(l.b));
                    let e = edges.entry(key).or_insert(0.0);
                    *e = e.max(l.weight);
                    for n in [l.a, l.b] {
                        if seen.insert(n) {
                            next.push(n);
                        }
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
}

/// One candidate's relevance, before activation and importance join.
struct Scored {
    id: MemoryId,
    relevance: f64,
    absolute: f64,
    coverage: f64,
    cosine: Option<f64>,
}

/// One link as the graph walk reads it, with the tier and room of both ends.
struct LinkRow {
    a: MemoryId,
    b: MemoryId,
    kind: String,
    weight: f64,
    ends: [(String, String); 2],
}
