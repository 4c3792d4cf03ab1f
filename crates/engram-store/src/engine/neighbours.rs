//! A new text's neighbours: the active memories of its room closest to it, lexically and by
//! vector, each with both similarity measures. `remember` plans over them
//! ([`engram_core::plan`]); maintenance's consolidation pairs memories with them.

use crate::storage::candidates::Filter;
use crate::{Result, Store};
use engram_core::plan::NeighbourFacts;
use engram_core::resolve::{self, Similarity};
use engram_core::{Kind, Memory, MemoryId, Tier};
use std::collections::HashMap;

/// An active memory near a new text.
#[derive(Debug, Clone)]
pub(crate) struct Neighbour {
    pub memory: Memory,
    pub sim: Similarity,
    /// One number to order by: the stronger of the two measures, on a 0–1 scale.
    pub closeness: f64,
}

/// How many neighbours are looked at per write.
const NEIGHBOURS: usize = 10;
/// A query built from a long memory uses its beginning only.
const QUERY_CHARS: usize = 2000;

impl Store {
    /// The active memories of `room` most similar to `text` (lexically, and by vector when
    /// `vector` is given), closest first. Only `kinds` when given; otherwise records
    /// (episodes, handoffs, progress) are left out.
    pub(crate) fn neighbours(
        &mut self,
        text: &str,
        vector: Option<&[f32]>,
        room: &str,
        exclude: Option<MemoryId>,
        kinds: Option<&[Kind]>,
    ) -> Result<Vec<Neighbour>> {
        let filter = Filter {
            tiers: vec![Tier::Active],
            kinds: kinds.map(<[Kind]>::to_vec),
            exclude_kinds: if kinds.is_some() {
                vec![]
            } else {
                vec![Kind::Episode, Kind::Handoff, Kind::Progress]
            },
            rooms: Some(vec![room.to_string()]),
            valid_at: None,
            hidden: vec![],
            tag: None,
        };
        let head: String = text.chars().take(QUERY_CHARS).collect();
        let plan = engram_core::text::plan_query(&head);
        let mut ids: Vec<MemoryId> = Vec::new();
        if !plan.is_empty() {
            for (id, _) in self.lexical_candidates(&plan, &filter, NEIGHBOURS, &[])? {
                ids.push(id);
            }
        }
        let mut cosines: HashMap<MemoryId, f64> = HashMap::new();
        if let Some(v) = vector {
            self.refresh_index()?;
            for (id, c) in self.vector_candidates(v, &filter, NEIGHBOURS)? {
                cosines.insert(id, c);
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        ids.retain(|id| Some(*id) != exclude);
        let cal = self
            .embedder
            .as_ref()
            .map(|e| engram_core::embed::calibration(e.model_id()));
        let new_terms = resolve::terms(text);
        // An English-only model puts CJK text at near-random points: its cosines would
        // only add noise there.
        let new_cjk = engram_core::text::mostly_cjk(text);
        let mut out: Vec<Neighbour> = Vec::new();
        for m in self.load_many(&ids)? {
            let old_terms = resolve::terms(&m.content);
            let lexical = resolve::jaccard(&new_terms, &old_terms);
            let contained = resolve::containment(&old_terms, &new_terms);
            let cosine = match (vector, cosines.get(&m.id)) {
                (_, Some(c)) => Some(*c),
                (Some(v), None) => self.cosine_with(v, m.id).map(f64::from),
                _ => None,
            };
            let cosine = cosine.filter(|_| {
                cal.is_some_and(|c| c.multilingual)
                    || !(new_cjk || engram_core::text::mostly_cjk(&m.content))
            });
            let cal_cos = match (cosine, &cal) {
                (Some(c), Some(cal)) => resolve::calibrated(c, cal) / 2.0,
                _ => 0.0,
            };
            out.push(Neighbour {
                closeness: lexical.max(cal_cos),
                sim: Similarity {
                    lexical,
                    contained,
                    cosine: cosine
                        .zip(cal.as_ref())
                        .map(|(c, cal)| resolve::calibrated(c, cal)),
                },
                memory: m,
            });
        }
        out.sort_by(|a, b| {
            b.closeness
                .total_cmp(&a.closeness)
                .then(a.memory.id.cmp(&b.memory.id))
        });
        Ok(out)
    }
}

impl Neighbour {
    /// What the write planner reads of this neighbour.
    pub(crate) fn facts(&self) -> NeighbourFacts<'_> {
        NeighbourFacts {
            id: self.memory.id,
            content: &self.memory.content,
            kind: self.memory.kind,
            sim: self.sim,
            closeness: self.closeness,
            title: self.memory.title.as_deref(),
        }
    }
}
