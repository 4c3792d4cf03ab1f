//! Standing instructions' own places in a recall result (`engram_core::standing`): the
//! tagged memories nearest to the query, asked of the candidate sources with the request's
//! own filter plus the tag, take the places after the best hit when they pass
//! `standing_min_relevance`. The decision is the core's; this file only asks and places.

use super::Hit;
use crate::{Result, Store};
use engram_core::MemoryId;
use engram_core::ranking::RankedHit;
use engram_core::recall_plan::{Filter, Via};
use engram_core::relevance;
use engram_core::standing;
use engram_core::text::QueryPlan;
use std::collections::HashMap;

/// Standing candidates asked for per place: the nearest few, so one that the filter's
/// rows or the gate reject leaves others to choose from.
const CANDIDATES_PER_PLACE: usize = 4;

impl Store {
    /// Gives applicable standing instructions their places in `hits` (at most `limit` in
    /// all), right after the best hit, when the query asks for help or work
    /// ([`standing::asks_for_help`]); the weakest topical hits make room when the result
    /// is full.
    pub(super) fn give_standing_places(
        &self,
        query: &str,
        filter: &Filter,
        plan: &QueryPlan,
        qvec: Option<&[f32]>,
        limit: usize,
        hits: &mut Vec<Hit>,
    ) -> Result<()> {
        let places = self.config.standing_places;
        if places == 0 || limit < 2 || !standing::asks_for_help(query) {
            return Ok(());
        }
        let mut filter = filter.clone();
        filter.tag = Some(standing::TAG.to_string());
        let candidates = self.standing_candidates(&filter, plan, qvec, places)?;
        let present: Vec<MemoryId> = hits.iter().map(|h| h.memory.id).collect();
        let ranked: Vec<(MemoryId, f64)> = candidates.iter().map(|c| (c.id, c.absolute)).collect();
        let chosen = standing::places(
            &ranked,
            &present,
            limit,
            places,
            self.config.standing_min_relevance,
        );
        if chosen.is_empty() {
            return Ok(());
        }
        let mut rows = self.memories_by_id(&chosen)?;
        let activation: HashMap<MemoryId, f64> = self
            .standings(&chosen, &rows)?
            .into_iter()
            .map(|(id, s)| (id, s.activation))
            .collect();
        // `places` never chooses every place, so at least one topical hit stays: the best
        // answers the question and keeps the first place; the instructions on how to
        // answer come right after it, whatever the limit.
        hits.truncate(limit - chosen.len());
        let floor = hits.first().map(|h| h.score);
        let at = hits.len().min(1);
        let placed: Vec<Hit> = candidates
            .into_iter()
            .filter(|c| chosen.contains(&c.id))
            .filter_map(|c| {
                let memory = rows.remove(&c.id)?;
                let act = activation.get(&c.id).copied().unwrap_or(0.0);
                Some(standing_hit(memory, &c, act, floor))
            })
            .collect();
        hits.splice(at..at, placed);
        Ok(())
    }

    /// The tagged memories nearest to the query, best first: by vector with a model (their
    /// absolute relevance the larger of coverage and the calibrated cosine), else lexically.
    fn standing_candidates(
        &self,
        filter: &Filter,
        plan: &QueryPlan,
        qvec: Option<&[f32]>,
        places: usize,
    ) -> Result<Vec<Candidate>> {
        let src = self.candidates();
        let k = places * CANDIDATES_PER_PLACE;
        let cal = self.calibration();
        let cosines: HashMap<MemoryId, f64> = match (qvec, cal) {
            (Some(q), Some(_)) => src.vector(q, filter, k)?.into_iter().collect(),
            _ => HashMap::new(),
        };
        let mut ids: Vec<MemoryId> = cosines.keys().copied().collect();
        if plan.has_content() {
            for (id, _) in src.lexical(plan, filter, k, &[])? {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        let coverage = src.coverage(plan, &ids, false)?;
        let mut out: Vec<Candidate> = ids
            .into_iter()
            .map(|id| {
                let cov = coverage.get(&id).copied().unwrap_or(0.0);
                let cos = cosines.get(&id).copied();
                Candidate {
                    id,
                    coverage: cov,
                    cosine: cos,
                    absolute: relevance::absolute(cov, cos, cal),
                }
            })
            .collect();
        out.sort_by(|a, b| b.absolute.total_cmp(&a.absolute).then(a.id.cmp(&b.id)));
        Ok(out)
    }
}

/// A standing memory near the query.
struct Candidate {
    id: MemoryId,
    coverage: f64,
    cosine: Option<f64>,
    absolute: f64,
}

/// The hit of a standing memory: its relevance as measured, its score no higher than the
/// best hit's (the one it follows).
fn standing_hit(
    memory: engram_core::Memory,
    c: &Candidate,
    activation: f64,
    floor: Option<f64>,
) -> Hit {
    let ranked = RankedHit {
        id: c.id,
        score: floor.map_or(c.absolute, |f| f.min(c.absolute)),
        relevance: c.absolute,
        absolute: c.absolute,
        activation,
        coverage: c.coverage,
        cosine: c.cosine,
        via: Via::Standing,
        path: None,
    };
    let mut hit = Hit::new(ranked, memory);
    hit.note = Some("standing instruction".to_string());
    hit
}
