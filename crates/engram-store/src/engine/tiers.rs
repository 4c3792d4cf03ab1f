//! Moving a memory between tiers: `forget` (to the trash), `restore`, `unsupersede` (the
//! one-step undo of a supersession), and `purge`, the only hard delete.

use crate::evidence::Unsupersede;
use crate::ops::{PurgeOutcome, TierChange};
use crate::storage::require_memory;
use crate::storage::rows::{MemoryPatch, NewEvent};
use crate::{Result, Store};
use engram_core::memory::IdRef;
use engram_core::{EventKind, InputError, Memory, Tier};

impl Store {
    /// Moves a memory to the trash. It stays in the store (and out of every recall) until
    /// restored or purged.
    pub fn forget(&mut self, id: &IdRef) -> Result<TierChange> {
        self.change_tier(id, "forget", |m| {
            if m.tier == Tier::Trash {
                return Err(InputError::new(
                    "id",
                    format!("#{} is already in the trash", m.id),
                ));
            }
            Ok(Tier::Trash)
        })
    }

    /// Brings a memory back from the trash (or the archive): to `superseded` if something
    /// replaced it, else to `active`.
    pub fn restore(&mut self, id: &IdRef) -> Result<TierChange> {
        self.change_tier(id, "restore", |m| {
            let to = if m.valid_to.is_some() {
                Tier::Superseded
            } else {
                Tier::Active
            };
            if m.tier == Tier::Active || m.tier == to {
                return Err(InputError::new(
                    "id",
                    format!("#{} is {}; there is nothing to restore", m.id, m.tier),
                ));
            }
            Ok(to)
        })
    }

    /// Reads the memory and decides its new tier inside one write transaction, so another
    /// process cannot change it between the check and the write.
    fn change_tier(
        &mut self,
        id: &IdRef,
        why: &str,
        decide: impl Fn(&Memory) -> Result<Tier, InputError>,
    ) -> Result<TierChange> {
        let now = self.now();
        self.write(|tx| {
            let m = require_memory(tx, id, "id")?;
            let to = decide(&m)?;
            tx.patch_memory(m.id, &MemoryPatch::tier(to, now))?;
            tx.append_event(&NewEvent {
                memory_id: m.id,
                kind: EventKind::Update,
                weight: 0.0,
                at: now,
                session_id: None,
                detail: Some(&format!("{why}: {} -> {}", m.tier, to)),
            })?;
            Ok(TierChange {
                id: m.id,
                from: m.tier,
                to,
            })
        })
    }

    /// Undoes a supersession in one step: the memory is active and valid again, the event
    /// is logged, and the `supersedes` link is kept as history (so `explain` still shows
    /// what once replaced it). Refused for a memory that is not superseded.
    pub fn unsupersede(&mut self, id: &IdRef) -> Result<Unsupersede> {
        let now = self.now();
        self.write(|tx| {
            let m = require_memory(tx, id, "id")?;
            if m.tier != Tier::Superseded {
                return Err(InputError::new(
                    "id",
                    format!("#{} is {}, not superseded; nothing to undo", m.id, m.tier),
                )
                .into());
            }
            let by = tx.successor(m.id)?;
            tx.patch_memory(
                m.id,
                &MemoryPatch {
                    valid_to: Some(None),
                    ..MemoryPatch::tier(Tier::Active, now)
                },
            )?;
            let detail = match by {
                Some(s) => format!("unsupersede: active again beside #{s}"),
                None => "unsupersede: active again".to_string(),
            };
            tx.append_event(&NewEvent {
                memory_id: m.id,
                kind: EventKind::Update,
                weight: 0.0,
                at: now,
                session_id: None,
                detail: Some(&detail),
            })?;
            Ok(Unsupersede {
                id: m.id,
                uid: m.uid,
                superseded_by: by,
            })
        })
    }

    /// Deletes a memory for good, with its events, links and index rows: the only hard delete.
    /// Refused unless the memory is in the trash or `force` is set.
    pub fn purge(&mut self, id: &IdRef, force: bool) -> Result<PurgeOutcome> {
        self.write(|tx| {
            let m = require_memory(tx, id, "id")?;
            if m.tier != Tier::Trash && !force {
                return Err(InputError::new(
                    "id",
                    format!(
                        "#{} is {}, not in the trash; forget it first, or purge with force",
                        m.id, m.tier
                    ),
                )
                .into());
            }
            let events = tx.event_count(m.id)?;
            let links = tx.link_count(m.id)?;
            tx.delete_memory(m.id)?;
            Ok(PurgeOutcome {
                id: m.id,
                uid: m.uid,
                events_removed: events as usize,
                links_removed: links as usize,
            })
        })
    }
}
