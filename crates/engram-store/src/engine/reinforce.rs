//! `reinforce`: memories that helped get a reinforce event, and every pair reinforced
//! together a stronger co-recall link.

use crate::ops::ReinforceOutcome;
use crate::storage::require_id;
use crate::storage::rows::{LinkWeight, LinkWrite, NewEvent};
use crate::{Result, Store};
use engram_core::memory::IdRef;
use engram_core::{EventKind, InputError, LinkKind, MemoryId, limits};

impl Store {
    /// Marks memories as having helped: each gets a `reinforce` event of weight
    /// `reinforce_weight × clamp(strength)`, and every pair reinforced together gets its
    /// `co_recall` link strengthened (Hebbian), both directions. Unknown ids refuse the call.
    pub fn reinforce(
        &mut self,
        ids: &[IdRef],
        strength: f64,
        session_id: Option<&str>,
    ) -> Result<ReinforceOutcome> {
        if ids.is_empty() {
            return Err(InputError::new("ids", "give at least one memory id").into());
        }
        if ids.len() > limits::MAX_IDS_PER_CALL {
            return Err(InputError::new(
                "ids",
                format!(
                    "has {} ids, the limit is {}",
                    ids.len(),
                    limits::MAX_IDS_PER_CALL
                ),
            )
            .into());
        }
        if !strength.is_finite() {
            return Err(InputError::new("strength", "must be a finite number").into());
        }
        let session_id = session_id.map(engram_core::redact::stored_name);
        let session_id = session_id.as_deref();
        let c = &self.config;
        let weight =
            c.reinforce_weight * strength.clamp(c.reinforce_strength_min, c.reinforce_strength_max);
        let (inc, cap) = (c.colink_increment, c.colink_max);
        let now = self.now();
        let (resolved, pairs) = self.write(|tx| {
            let mut resolved: Vec<MemoryId> = Vec::new();
            for r in ids {
                let id = require_id(tx, r, "ids")?;
                if !resolved.contains(&id) {
                    resolved.push(id);
                }
            }
            for &id in &resolved {
                tx.append_event(&NewEvent {
                    memory_id: id,
                    kind: EventKind::Reinforce,
                    weight,
                    at: now,
                    session_id,
                    detail: None,
                })?;
            }
            let mut pairs = Vec::new();
            for (i, &a) in resolved.iter().enumerate() {
                for &b in &resolved[i + 1..] {
                    for (src, dst) in [(a, b), (b, a)] {
                        tx.upsert_link(&LinkWrite {
                            src,
                            dst,
                            kind: LinkKind::CoRecall,
                            weight: inc,
                            mode: LinkWeight::Add,
                            cap,
                            at: now,
                        })?;
                    }
                    pairs.push([a, b]);
                }
            }
            Ok((resolved, pairs))
        })?;
        Ok(ReinforceOutcome {
            reinforced: resolved,
            weight,
            co_recall_links: pairs,
        })
    }
}
