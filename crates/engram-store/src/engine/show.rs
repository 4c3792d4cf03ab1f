//! What the store says about memories without changing them: `show` (everything known
//! about one), `timeline`, `stats`, and the event traces the dynamics read.

use crate::ops::{MemoryDetail, Stats};
use crate::storage::rows::{DetailMatch, Revision, Side, Tally};
use crate::{Result, Store};
use engram_core::dynamics::{self, Trace};
use engram_core::memory::IdRef;
use engram_core::{Memory, MemoryId, Millis, Tier};
use std::collections::HashMap;

impl Store {
    /// A memory with its activation, event history, links and successor.
    pub fn show(&self, id: &IdRef) -> Result<MemoryDetail> {
        let memory = self.get(id)?;
        let db = self.reads();
        let traces = self
            .traces_of(&[memory.id])?
            .remove(&memory.id)
            .unwrap_or_default();
        let activation = dynamics::activation(
            self.config.dynamics,
            &traces,
            self.now(),
            memory.importance,
            memory.kind.decay_class(),
            &self.config.actr,
        );
        let superseded_by = self.successor_of(memory.id)?;
        let strength = dynamics::activation(
            engram_core::dynamics::DynamicsModel::Strength,
            &traces,
            self.now(),
            memory.importance,
            memory.kind.decay_class(),
            &self.config.actr,
        );
        let tier_reason = self.tier_reason(&memory, superseded_by, strength)?;
        Ok(MemoryDetail {
            event_counts: db.event_counts(memory.id)?,
            recent_events: db.recent_events(memory.id, 50)?,
            links: db.links_around(memory.id)?,
            review_after: db.review_after(memory.id)?,
            revisions: self.revisions_of(memory.id)?,
            judgments: self.judgments_of(memory.id)?,
            evidence: db.evidence(memory.id)?,
            memory,
            activation,
            superseded_by,
            strength,
            tier_reason,
        })
    }

    /// Counts by kind, tier and room; links by kind; events.
    pub fn stats(&self) -> Result<Stats> {
        let db = self.reads();
        let by_tier = db.tally(Tally::MemoriesByTier)?;
        let events_by_kind = db.tally(Tally::EventsByKind)?;
        let db_bytes = ["", "-wal"]
            .iter()
            .filter_map(|s| std::fs::metadata(format!("{}{s}", self.path().display())).ok())
            .map(|m| m.len())
            .sum();
        Ok(Stats {
            total_memories: by_tier.values().sum(),
            by_kind: db.tally(Tally::MemoriesByKind)?,
            by_room: db.tally(Tally::MemoriesByRoom)?,
            by_tier,
            links_by_kind: db.tally(Tally::LinksByKind)?,
            event_count: events_by_kind.values().sum(),
            events_by_kind,
            schema_version: db.schema_version()?,
            search: if self.embedder.is_some() {
                "hybrid"
            } else {
                "lexical"
            },
            embeddings: self.embedding_status()?,
            dynamics: self.config.dynamics,
            db_path: self.path().display().to_string(),
            db_bytes,
        })
    }

    /// Memories around `id` in time: those of its session when it has one, else of its room.
    pub fn timeline(
        &self,
        id: &IdRef,
        before: usize,
        after: usize,
    ) -> Result<(Vec<Memory>, Memory, Vec<Memory>)> {
        let m = self.get(id)?;
        let mut prev = self
            .reads()
            .memories_beside(&m, Side::Before, before.min(50))?;
        prev.reverse();
        let next = self
            .reads()
            .memories_beside(&m, Side::After, after.min(50))?;
        Ok((prev, m, next))
    }

    /// Event traces per memory, for the dynamics.
    pub(crate) fn traces_of(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<Trace>>> {
        self.reads().traces(ids)
    }

    /// A memory's earlier texts, oldest first.
    pub fn revisions_of(&self, id: MemoryId) -> Result<Vec<Revision>> {
        self.reads().revisions(id)
    }

    /// The memory that supersedes `id`, if any (newest first).
    pub(crate) fn successor_of(&self, id: MemoryId) -> Result<Option<MemoryId>> {
        self.reads().successor(id)
    }

    /// The memory that holds `id`'s statement now: `id` itself, or, when it was superseded,
    /// its successor's, followed to the end of the chain (at most 64 steps). Seed A replaced
    /// a contradicted row in place, so its clients keep using the first id.
    pub fn current_of(&self, id: MemoryId) -> Result<MemoryId> {
        let mut at = id;
        for _ in 0..64 {
            let m = self.get(&IdRef::Id(at))?;
            if m.tier != Tier::Superseded {
                return Ok(at);
            }
            match self.successor_of(at)? {
                Some(next) if next != at => at = next,
                _ => return Ok(at),
            }
        }
        Ok(at)
    }

    /// Why a memory is in its tier: the event that put it there.
    fn tier_reason(
        &self,
        m: &Memory,
        successor: Option<MemoryId>,
        strength: f64,
    ) -> Result<String> {
        let last = |p: DetailMatch<'_>| -> Result<Option<(String, Millis)>> {
            self.reads().last_event_detail(m.id, p)
        };
        let when = |t: Millis| engram_core::time::format(t);
        Ok(match m.tier {
            Tier::Active if m.pinned => "active and pinned: it leads every briefing".into(),
            Tier::Active if strength >= self.config.archive_strength => format!(
                "active: strength {strength:.3} is above the archive threshold {}",
                self.config.archive_strength
            ),
            // Maintenance has not run since the memory faded (or a neighbour protects it).
            Tier::Active => format!(
                "active, but its strength {strength:.3} is below the archive threshold {}: the next maintenance archives it unless it is recalled or linked to a strong memory first",
                self.config.archive_strength
            ),
            Tier::Superseded => {
                match last(DetailMatch::Prefix("superseded by"))?
                    .or(last(DetailMatch::Prefix("corrected by"))?)
                {
                    Some((d, t)) => format!("{d} (on {})", when(t)),
                    None => match successor {
                        Some(s) => format!("superseded by #{s}"),
                        None => "superseded".into(),
                    },
                }
            }
            Tier::Archived => last(DetailMatch::Contains("archived by maintenance"))?
                .or(last(DetailMatch::Prefix("consolidated into"))?)
                .map(|(d, t)| format!("archived: {d} on {}", when(t)))
                .unwrap_or_else(|| "archived".into()),
            Tier::Trash => {
                "in the trash: forgotten (restore brings it back; purge deletes it)".into()
            }
        })
    }
}
