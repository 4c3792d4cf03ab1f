//! Recall: the engine's read path, and the recall-hit log.
//!
//! One loop for every mode: `engram_core::recall_plan` names the pass to run (fast, deep,
//! exhaustive: which memories, how many candidates, whether to spread over links) and
//! whether a weak result deepens; this file asks the candidate sources
//! ([`CandidateSource`]) for what the pass names, loads the candidates' rows and event
//! traces, and lets `engram_core::ranking` fuse, score and order them. It never ranks by
//! itself.
//!
//! * `fast`: active memories (episodes only when asked for by kind), ranked by
//!   `w_rel·relevance + w_act·activation + w_imp·importance`. When the best *raw* score
//!   (absolute relevance) is below `deep_score_threshold`, fast deepens by itself.
//! * `deep`: also archived and superseded memories and every kind; the direct hits seed
//!   spreading activation over links (depth `max_hops`, decay `hop_decay`), which adds
//!   associated memories that share no word with the query. A superseded hit names its
//!   successor. When even deep is weak, exhaustive is tried and kept if it finds better.
//! * `exhaustive`: every memory outside the trash, by relevance alone, with a substring
//!   scan for partial words and a larger candidate cap.

use crate::storage::candidates::CandidateSource;
use crate::storage::rows::NewEvent;
use crate::{Result, Store};
use engram_core::dynamics;
use engram_core::embed::Calibration;
use engram_core::limits;
use engram_core::ranking::{self, Ranked, RankedHit, Sources, Standing};
use engram_core::recall_plan::{self, Next, Outcome, Pass, Scope};
use engram_core::relevance;
pub use engram_core::relevance::Match;
use engram_core::scoring;
use engram_core::text::QueryPlan;
use engram_core::{EventKind, InputError, Kind, Memory, MemoryId, Tier};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

pub use engram_core::recall_plan::{Mode, Via};

mod standing;

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
    /// Seed A's similarity floors (`engram_core::relevance::seed_a_floor`): with a query
    /// vector, only hits whose cosine reaches the first floor, or the second when none
    /// does; applied before the limit. Hits without a vector yet are kept (a memory written
    /// a moment ago is not lost to them); without a model there is no cosine to judge by.
    pub min_similarity: Option<[f64; 2]>,
    /// A long text stored in parts is one hit: a later part's hit names its first part
    /// (once, where its best part ranked), whose content is the whole text. Seeds A and C
    /// kept such a text as one row.
    pub whole_records: bool,
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
            min_similarity: None,
            whole_records: false,
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
    /// Relevance on the absolute scale (`engram_core::relevance`): the larger of coverage
    /// and the calibrated cosine, whatever else was among the candidates.
    pub absolute: f64,
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
    /// Active memories of this room that set the same subject's slot to another value
    /// (`engram_core::conflicts`), ascending; the newer of them is shown first. They may
    /// lie beyond the limit. Empty (and not serialised) when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conflicts_with: Vec<MemoryId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecallResult {
    pub hits: Vec<Hit>,
    /// How well the best hit matched on the absolute scale: `good`, `weak` or `none`
    /// (`engram_core::relevance::verdict`), so "nothing matched well" can be said.
    #[serde(rename = "match")]
    pub matched: Match,
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

/// A pass's ranking and the rows of the memories its hits name.
struct Gathered {
    ranked: Ranked,
    memories: HashMap<MemoryId, Memory>,
}

impl Hit {
    fn new(h: RankedHit, memory: Memory) -> Hit {
        Hit {
            memory,
            score: h.score,
            relevance: h.relevance,
            absolute: h.absolute,
            activation: h.activation,
            coverage: h.coverage,
            cosine: h.cosine,
            via: h.via,
            path: h.path,
            superseded_by: None,
            conflicts_with: Vec::new(),
            note: None,
        }
    }
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
        let rooms =
            crate::rooms::scope(&self.config, req.room.as_deref(), req.cwd.as_deref())?.rooms();
        // The query's vector, when a model is loaded and the store has vectors of it.
        let has_vectors = self.refresh_index()?;
        let qvec: Option<Vec<f32>> = match &self.embedder {
            Some(e) if has_vectors => e.embed_query(&req.query).ok(),
            _ => None,
        };
        let scope = Scope {
            query: &req.query,
            kinds: (!req.kinds.is_empty()).then(|| req.kinds.clone()),
            rooms: rooms.clone(),
            as_of: req.as_of,
            include_superseded: req.include_superseded,
        };
        let (mode, Gathered { ranked, memories }) =
            self.plan_and_run(req.mode, &scope, qvec.as_deref(), req.limit)?;
        let floor = match (req.min_similarity, self.calibration(), &qvec) {
            (Some(floors), Some(cal), Some(_)) => {
                let cosines: Vec<f64> = ranked.hits.iter().filter_map(|h| h.cosine).collect();
                Some(engram_core::relevance::seed_a_floor(&cosines, floors, cal))
            }
            _ => None,
        };
        let mut kept: Vec<(RankedHit, &Memory)> = Vec::new();
        for h in ranked.hits {
            let Some(m) = memories.get(&h.id) else {
                continue;
            };
            // Associations reached over links are checked here.
            if req.as_of.is_some_and(|at| !recall_plan::valid_at(m, at)) {
                continue;
            }
            // C's "every word" search: applied before the limit, so a client asking for
            // ten gets ten that hold every word, not ten filtered down.
            if req.min_coverage.is_some_and(|min| h.coverage < min) {
                continue;
            }
            if floor.is_some_and(|f| h.cosine.is_some_and(|c| c < f)) {
                continue;
            }
            // The conflict check reads each hit's statement: the limit and a window past
            // it (where a newer memory may wait to take an older one's place) suffice.
            if kept.len() == req.limit.saturating_mul(3) {
                break;
            }
            kept.push((h, m));
        }
        // A summary or an ordering asks for the topic across sessions: one hit per session
        // takes the places first (`engram_core::coverage`).
        if self.config.coverage_spread && engram_core::coverage::asks_for_coverage(&req.query) {
            let sessions: Vec<Option<&str>> =
                kept.iter().map(|(_, m)| m.session_id.as_deref()).collect();
            let order = engram_core::coverage::spread(&sessions, req.limit);
            drop(sessions);
            let mut slots: Vec<Option<(RankedHit, &Memory)>> = kept.into_iter().map(Some).collect();
            kept = order.into_iter().filter_map(|i| slots[i].take()).collect();
        }
        // Before the limit: a newer conflicting memory ranked just past it still takes
        // the older one's place.
        let mut hits: Vec<Hit> = newer_first(kept, req.limit);
        // Applicable standing instructions take their own places, from the fast pass's
        // filter (active memories of the request's rooms and kinds, as of its time).
        let standing_filter = recall_plan::pass(Mode::Fast, &scope, &self.config).filter;
        let plan = engram_core::text::plan_query(&req.query);
        self.give_standing_places(
            &req.query,
            &standing_filter,
            &plan,
            qvec.as_deref(),
            req.limit,
            &mut hits,
        )?;
        let mut tokens_used = None;
        let mut omitted = None;
        if let Some(budget) = req.token_budget {
            if budget == 0 {
                return Err(InputError::new("token_budget", "must be at least 1").into());
            }
            let tokens = hits
                .iter()
                .map(|h| engram_core::hub::estimate_tokens(&h.memory.content));
            let (keep, used) = recall_plan::within_budget(tokens, budget);
            omitted = Some(hits.len() - keep);
            hits.truncate(keep);
            tokens_used = Some(used);
        }
        for hit in &mut hits {
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
        let mut hits = successors_first(hits);
        if req.whole_records {
            hits = self.whole_records(hits)?;
        }
        let best = hits.iter().map(|h| h.absolute).reduce(f64::max);
        let matched = relevance::verdict(best, qvec.is_some(), plan.has_content());
        if req.record_hits && !hits.is_empty() {
            let now = self.now();
            let w = self.config.recall_hit_weight;
            // Recall hits are bookkeeping, not something a client asked to keep: a power cut
            // may only forget the last hits.
            // Stored as every write stores a name (`redact_names`).
            let session = req
                .session_id
                .as_deref()
                .map(engram_core::redact::stored_name);
            let session = session.as_deref();
            self.without_fsync(|s| s.log_hits(&hits, now, w, session))??;
        }
        Ok(RecallResult {
            hits,
            matched,
            mode,
            requested_mode: req.mode,
            auto_deepened: mode != req.mode,
            rooms,
            candidates: ranked.candidates,
            token_budget: req.token_budget,
            tokens_used,
            omitted_for_budget: omitted,
        })
    }

    /// Runs the passes the deepening plan asks for and returns the one it keeps.
    fn plan_and_run(
        &self,
        requested: Mode,
        scope: &Scope<'_>,
        qvec: Option<&[f32]>,
        limit: usize,
    ) -> Result<(Mode, Gathered)> {
        let src = self.candidates();
        let plan = engram_core::text::plan_query(scope.query);
        let asked = engram_core::speaker::asked(scope.query);
        let mut done: Vec<(Mode, Outcome)> = Vec::new();
        let mut passes: Vec<Gathered> = Vec::new();
        loop {
            match recall_plan::next(requested, &self.config, &done) {
                Next::Run(mode) => {
                    let pass = recall_plan::pass(mode, scope, &self.config);
                    let g = self.run_pass(src, &pass, &plan, &asked, qvec, limit)?;
                    let outcome = Outcome {
                        best_raw: g.ranked.best_raw,
                        best_relevance: g.ranked.best_relevance,
                    };
                    done.push((mode, outcome));
                    passes.push(g);
                }
                Next::Keep(i) => return Ok((done[i].0, passes.swap_remove(i))),
            }
        }
    }

    /// One pass: exhaustive ranks by relevance alone; fast and deep rank the direct
    /// candidates and, when the pass spreads, add what the links reach.
    fn run_pass(
        &self,
        src: &dyn CandidateSource,
        pass: &Pass,
        plan: &QueryPlan,
        asked: &engram_core::speaker::Asked,
        qvec: Option<&[f32]>,
        limit: usize,
    ) -> Result<Gathered> {
        if pass.mode == Mode::Exhaustive {
            return self.exhaustive_pass(src, pass, plan, qvec);
        }
        let mut g = self.direct_pass(src, pass, plan, asked, qvec)?;
        if pass.spread_hops > 0 && !g.ranked.hits.is_empty() {
            self.spread(src, pass, qvec, limit, &mut g)?;
        }
        Ok(g)
    }

    /// Lexical and vector candidates, fused, lifted by their sessions and ranked.
    fn direct_pass(
        &self,
        src: &dyn CandidateSource,
        pass: &Pass,
        plan: &QueryPlan,
        asked: &engram_core::speaker::Asked,
        qvec: Option<&[f32]>,
    ) -> Result<Gathered> {
        let lexical = src.lexical(plan, &pass.filter, pass.lexical_k, &pass.partial_words)?;
        let vector = match qvec {
            Some(q) => src.vector(q, &pass.filter, pass.vector_k)?,
            None => Vec::new(),
        };
        let ids = ranking::candidate_ids(&lexical, &vector);
        let coverage = src.coverage(plan, &ids, false)?;
        let cosines = match qvec {
            Some(q) => src.cosines(q, &ids)?,
            None => HashMap::new(),
        };
        let sources = Sources {
            lexical: &lexical,
            vector: &vector,
            coverage: &coverage,
            cosines: &cosines,
            query_vector: qvec.is_some(),
            calibration: self.calibration(),
        };
        let scored = ranking::fuse(&self.config, &sources);
        let memories = self.memories_by_id(&ids)?;
        let standings = self.standings(&ids, &memories)?;
        let ranked = ranking::rank_direct(&self.config, scored, &standings, asked);
        drop(standings);
        Ok(Gathered { ranked, memories })
    }

    /// Deep recall's associations: activation spread from the best direct hits over the
    /// links the pass's filter allows, the memories reached joined to the hits.
    fn spread(
        &self,
        src: &dyn CandidateSource,
        pass: &Pass,
        qvec: Option<&[f32]>,
        limit: usize,
        g: &mut Gathered,
    ) -> Result<()> {
        let seeds = ranking::seeds(&g.ranked, limit);
        let seed_ids: Vec<MemoryId> = seeds.iter().map(|s| s.0).collect();
        let edges = src.links_around(&seed_ids, pass.spread_hops, &pass.filter)?;
        let reached = scoring::spread(&seeds, &edges, pass.spread_hops, self.config.hop_decay);
        let new_ids = ranking::newly_reached(&g.ranked, &reached);
        if new_ids.is_empty() {
            return Ok(());
        }
        let found: Vec<Memory> = self
            .load_many(&new_ids)?
            .into_iter()
            .filter(|m| pass.filter.allows(m))
            .collect();
        let ids: Vec<MemoryId> = found.iter().map(|m| m.id).collect();
        let found: HashMap<MemoryId, Memory> = found.into_iter().map(|m| (m.id, m)).collect();
        let standings = self.standings(&ids, &found)?;
        let cosines = match qvec {
            Some(q) => src.cosines(q, &ids)?,
            None => HashMap::new(),
        };
        let cal = self.calibration();
        ranking::add_associative(
            &self.config,
            &mut g.ranked,
            &reached,
            &standings,
            &cosines,
            cal,
        );
        drop(standings);
        g.memories.extend(found);
        Ok(())
    }

    /// Exhaustive recall: lexical matches with partial words (and, with a model, the
    /// vector candidates), by relevance alone.
    fn exhaustive_pass(
        &self,
        src: &dyn CandidateSource,
        pass: &Pass,
        plan: &QueryPlan,
        qvec: Option<&[f32]>,
    ) -> Result<Gathered> {
        let lexical = src.lexical(plan, &pass.filter, pass.lexical_k, &pass.partial_words)?;
        let cal = self.calibration();
        // With a model, meaning counts too: relevance is the larger of the lexical match and
        // the calibrated cosine.
        let (vector, cosines, model) = match (qvec, cal) {
            (Some(q), Some(cal)) => {
                let vector = src.vector(q, &pass.filter, pass.vector_k)?;
                let ids = ranking::candidate_ids(&lexical, &vector);
                (vector, src.cosines(q, &ids)?, Some(cal))
            }
            _ => (Vec::new(), HashMap::new(), None),
        };
        let kept = ranking::exhaustive_relevances(
            &lexical,
            &vector,
            model.map(|c| (&cosines, c)),
            self.config.exhaustive_min_relevance,
        );
        let kept_ids: Vec<MemoryId> = kept.iter().map(|c| c.0).collect();
        let memories = self.memories_by_id(&kept_ids)?;
        let standings = self.standings(&kept_ids, &memories)?;
        // A term found only inside a longer word is a lead, not a match: it counts half.
        let whole = src.coverage(plan, &kept_ids, false)?;
        let partial = src.coverage(plan, &kept_ids, true)?;
        let coverage: HashMap<MemoryId, f64> = partial
            .iter()
            .map(|(id, p)| {
                let w = whole.get(id).copied().unwrap_or(0.0);
                (*id, engram_core::relevance::with_fragments(w, *p))
            })
            .collect();
        let ranked = ranking::rank_exhaustive(&kept, &standings, &coverage, &cosines, cal);
        drop(standings);
        Ok(Gathered { ranked, memories })
    }

    /// The loaded model's calibration, when a model is loaded.
    fn calibration(&self) -> Option<Calibration> {
        self.embedder
            .as_ref()
            .map(|e| engram_core::embed::calibration(e.model_id()))
    }

    /// The rows of `ids` that still exist, by id.
    fn memories_by_id(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Memory>> {
        Ok(self
            .load_many(ids)?
            .into_iter()
            .map(|m| (m.id, m))
            .collect())
    }

    /// Hits of a long text's later parts name its first part instead (once, where the
    /// best of them ranked), and a first part's content is the whole text.
    fn whole_records(&self, hits: Vec<Hit>) -> Result<Vec<Hit>> {
        let mut out: Vec<Hit> = Vec::with_capacity(hits.len());
        for mut h in hits {
            if let Some(first) = self.first_part(&h.memory)? {
                h.memory = first;
            }
            if out.iter().any(|o| o.memory.id == h.memory.id) {
                continue;
            }
            h.memory.content = self.whole_content(&h.memory)?;
            out.push(h);
        }
        Ok(out)
    }

    /// A memory's activation now, as recall scores it (seed A's `strength` of a memory
    /// shown outside a ranking, such as the handoff `recall_memory` puts first).
    pub fn activation_now(&self, m: &Memory) -> Result<f64> {
        let memories: HashMap<MemoryId, Memory> = [(m.id, m.clone())].into();
        Ok(self
            .standings(&[m.id], &memories)?
            .get(&m.id)
            .map_or(0.0, |s| s.activation))
    }

    /// Each loaded memory's standing now: activation from its event traces under the
    /// configured dynamics, importance, session. `ids` orders the trace reads.
    fn standings<'m>(
        &self,
        ids: &[MemoryId],
        memories: &'m HashMap<MemoryId, Memory>,
    ) -> Result<HashMap<MemoryId, Standing<'m>>> {
        let traces = self.traces_of(ids)?;
        let now = self.now();
        Ok(memories
            .iter()
            .map(|(id, m)| {
                let t = traces.get(id).map(Vec::as_slice).unwrap_or(&[]);
                let activation = dynamics::activation(
                    self.config.dynamics,
                    t,
                    now,
                    m.importance,
                    m.kind.decay_class(),
                    &self.config.actr,
                );
                let standing = Standing {
                    activation,
                    importance: m.importance,
                    session: m.session_id.as_deref(),
                    speaker: engram_core::speaker::speaker_of(m.kind, &m.content, &m.metadata),
                };
                (*id, standing)
            })
            .collect())
    }

    /// One recall-hit event per hit, in one transaction.
    fn log_hits(
        &mut self,
        hits: &[Hit],
        now: engram_core::Millis,
        w: f64,
        session: Option<&str>,
    ) -> Result<()> {
        self.write(|tx| {
            for hit in hits {
                // Another process may have purged it (or restored a backup) since it was
                // read: log hits only for memories that are still there.
                if tx.memory_exists(hit.memory.id)? {
                    tx.append_event(&NewEvent {
                        memory_id: hit.memory.id,
                        kind: EventKind::RecallHit,
                        weight: w,
                        at: now,
                        session_id: session,
                        detail: None,
                    })?;
                }
            }
            Ok(())
        })
    }
}

/// A superseded hit never shows above its successor when both came back (deep and as-of
/// recall return both; the older may be the closer match in words).
fn successors_first(hits: Vec<Hit>) -> Vec<Hit> {
    let pairs: Vec<_> = hits
        .iter()
        .map(|h| (h.memory.id, h.superseded_by))
        .collect();
    let order = engram_core::ranking::successors_first(&pairs);
    let mut slots: Vec<Option<Hit>> = hits.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Conflicting active hits ordered newer first within the places they hold, each naming
/// the others (`engram_core::conflicts::newer_first`); every other hit keeps its place.
/// The first `limit` of them become hits.
fn newer_first(kept: Vec<(RankedHit, &Memory)>, limit: usize) -> Vec<Hit> {
    let stated: Vec<engram_core::conflicts::Stated<'_>> = kept
        .iter()
        .map(|(_, m)| engram_core::conflicts::Stated::of(m))
        .collect();
    let resolved = engram_core::conflicts::newer_first(&stated);
    drop(stated);
    let mut slots: Vec<Option<(RankedHit, &Memory)>> = kept.into_iter().map(Some).collect();
    resolved
        .order
        .into_iter()
        .filter_map(|i| {
            let (h, m) = slots[i].take()?;
            let mut hit = Hit::new(h, m.clone());
            hit.conflicts_with = resolved.conflicts_with[i].clone();
            Some(hit)
        })
        .take(limit)
        .collect()
}
