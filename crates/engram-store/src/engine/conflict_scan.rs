//! Seed C's `conflicts scan` and `conflicts stats` over a store that already holds its
//! memories: pairs the write path would have offered for judgment had each memory been
//! written now, and the judgments' counts. A store converted from C, imported, or written
//! with resolution off gets its pending pairs this way; the agent judges them
//! (`mem_judge`), as C's protocol says.

use crate::storage::rows::{ActiveOrder, ActiveQuery};
use crate::{Result, Store};
use engram_core::plan::{self, Incoming, NeighbourFacts};
use engram_core::{Kind, Memory, MemoryId};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

/// At most this many memories of a room are scanned in one run.
pub const SCAN_MAX_MEMORIES: usize = 100_000;

/// A pair the scan found: `src` would have been offered `dst` to judge.
#[derive(Debug, Clone, Serialize)]
pub struct ScanPair {
    pub src: MemoryId,
    pub dst: MemoryId,
    pub score: f64,
    /// The pending judgment opened for it (with `apply`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judgment_id: Option<String>,
}

/// What a scan found and did.
#[derive(Debug, Clone, Serialize)]
pub struct ScanReport {
    pub scanned: usize,
    /// Pairs not judged yet, in the order found (at most `max_insert`).
    pub pairs: Vec<ScanPair>,
    /// Pairs past `max_insert`, not listed or opened.
    pub more: usize,
    pub applied: bool,
}

/// Judgments counted by status and by relation (C's `conflicts stats`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct JudgmentStats {
    pub total: usize,
    pub by_status: BTreeMap<String, usize>,
    pub by_relation: BTreeMap<String, usize>,
}

impl Store {
    /// Plans each active memory of `room` (every room when `None`) against its
    /// neighbours, lexically as C's scan did, with supersession off: the related
    /// memories are the pairs its write would have offered for judgment. Pairs that have
    /// a judgment already (either way round) are left out. With `apply`, a pending
    /// judgment is opened for each of the first `max_insert`; without, nothing is written.
    pub fn scan_conflicts(
        &mut self,
        room: Option<&str>,
        apply: bool,
        max_insert: usize,
    ) -> Result<ScanReport> {
        let rooms = room.map(|r| vec![r.to_string()]);
        let kinds: Vec<Kind> = Kind::ALL
            .iter()
            .copied()
            .filter(|k| plan::participates(*k))
            .collect();
        let memories = self.reads().active_memories(&ActiveQuery {
            kinds: &kinds,
            rooms: rooms.as_deref(),
            pinned_only: false,
            order: ActiveOrder::Id,
            limit: SCAN_MAX_MEMORIES,
        })?;
        let mut seen: HashSet<(MemoryId, MemoryId)> = HashSet::new();
        let mut found = Vec::new();
        for m in &memories {
            for (dst, score) in self.would_offer(m)? {
                let key = (m.id.min(dst), m.id.max(dst));
                if seen.insert(key) && !self.judged(m.id, dst)? {
                    found.push(ScanPair {
                        src: m.id,
                        dst,
                        score: (score * 1000.0).round() / 1000.0,
                        judgment_id: None,
                    });
                }
            }
        }
        let more = found.len().saturating_sub(max_insert);
        found.truncate(max_insert);
        if apply && !found.is_empty() {
            let now = self.now();
            self.write(|tx| {
                for p in found.iter_mut() {
                    p.judgment_id = Some(tx.pending_judgment(p.src, p.dst, p.score, None, now)?);
                }
                Ok(())
            })?;
        }
        Ok(ScanReport {
            scanned: memories.len(),
            pairs: found,
            more,
            applied: apply,
        })
    }

    /// The memories `m`'s write would offer for judgment, were it written now.
    fn would_offer(&mut self, m: &Memory) -> Result<Vec<(MemoryId, f64)>> {
        let neighbours = self.neighbours(&m.content, None, &m.room, Some(m.id), None)?;
        let facts: Vec<NeighbourFacts<'_>> = neighbours.iter().map(|n| n.facts()).collect();
        let incoming = Incoming {
            content: &m.content,
            kind: m.kind,
            may_supersede: false,
            may_merge: false,
            fold_only_titled: None,
        };
        let p = plan::plan(
            incoming,
            &facts,
            &self.config.resolution,
            self.config.max_semantic_links,
        );
        Ok(p.judgments(m.id))
    }

    /// Whether any judgment joins `a` and `b`.
    fn judged(&self, a: MemoryId, b: MemoryId) -> Result<bool> {
        Ok(self
            .reads()
            .judgments_of(a)?
            .iter()
            .any(|j| (j.src == a && j.dst == b) || (j.src == b && j.dst == a)))
    }

    /// Every judgment whose source memory is in `room` (every room when `None`), counted.
    pub fn judgment_stats(&self, room: Option<&str>) -> Result<JudgmentStats> {
        let all = self.reads().judgments_in(room, None, SCAN_MAX_MEMORIES)?;
        let mut s = JudgmentStats {
            total: all.len(),
            ..Default::default()
        };
        for j in all {
            *s.by_status.entry(j.status).or_default() += 1;
            let relation = j.relation.unwrap_or_else(|| "pending".into());
            *s.by_relation.entry(relation).or_default() += 1;
        }
        Ok(s)
    }
}
