//! The store's half of write-path resolution: finding a new text's neighbours, and the
//! row writes that reinforce, merge, supersede and relate (revisions, judgments, semantic
//! links). The decisions themselves are pure: `engram_core::resolve` and
//! `engram_core::contradiction`.

use crate::search::Filter;
use crate::store::MEMORY_COLUMNS;
use crate::{Result, Store};
use engram_core::resolve::{self, Similarity};
use engram_core::{Kind, Memory, MemoryId, Millis, Tier};
use rusqlite::{Connection, params};
use serde::Serialize;
use std::collections::HashMap;

/// Kinds that are records of a moment, never merged into or superseded by later writes:
/// episodes, handoffs and progress entries (the latest progress entry per feature is its
/// state already).
pub fn participates(kind: Kind) -> bool {
    !matches!(kind, Kind::Episode | Kind::Handoff | Kind::Progress)
}

/// An active memory near a new text.
#[derive(Debug, Clone)]
pub(crate) struct Neighbour {
    pub memory: Memory,
    pub sim: Similarity,
    /// One number to order by: the stronger of the two measures, on a 0–1 scale.
    pub closeness: f64,
}

/// A memory offered to the agent to judge against the one just written.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictCandidate {
    pub id: MemoryId,
    pub title: Option<String>,
    pub kind: Kind,
    /// The first 200 characters of its content.
    pub excerpt: String,
    pub score: f64,
    /// Pass it to `judge` with a verdict.
    pub judgment_id: String,
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

/// Keeps the text a memory had before a change.
pub(crate) fn write_revision(
    conn: &Connection,
    m: &Memory,
    reason: &str,
    at: Millis,
    session_id: Option<&str>,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        m.id,
        m.content,
        m.title,
        m.kind.as_str(),
        m.importance,
        serde_json::to_string(&m.tags).expect("tags serialise"),
        reason,
        at,
        session_id
    ])?;
    Ok(())
}

/// Opens (or finds) the pending judgment between `src` and `dst`; returns its id.
pub(crate) fn pending_judgment(
    conn: &Connection,
    src: MemoryId,
    dst: MemoryId,
    score: f64,
    session_id: Option<&str>,
    now: Millis,
) -> Result<String> {
    let existing: Option<String> = conn
        .query_row(
            "SELECT uid FROM judgments WHERE src = ?1 AND dst = ?2",
            params![src, dst],
            |r| r.get(0),
        )
        .ok();
    if let Some(uid) = existing {
        return Ok(uid);
    }
    let uid = format!("rel-{:016x}", crate::ops::random_u64());
    conn.execute(
        "INSERT INTO judgments (uid, src, dst, status, score, session_id, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?6)",
        params![uid, src, dst, score, session_id, now],
    )?;
    Ok(uid)
}

/// Loads one memory inside a transaction, by id, if it exists.
pub(crate) fn load_by_id(conn: &Connection, id: MemoryId) -> Result<Option<Memory>> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"
        ))?
        .query_row([id], crate::store::row_to_memory)
        .optional()?)
}
