//! C's review lifecycle (`review_after` by kind) and judgments: the agent's verdicts on
//! pairs of related memories (`judge`, `compare`) and what each verdict does to the store.

use crate::maintain::{Judgment, RELATIONS, ReviewItem, Verdict};
use crate::storage::rows::{LinkWrite, MemoryPatch, NewEvent};
use crate::storage::{Tx, require_memory};
use crate::{Result, Store};
use engram_core::memory::IdRef;
use engram_core::{EventKind, InputError, LinkKind, MemoryId, Millis, Tier};

impl Store {
    /// C's review list: active memories whose review date has passed, oldest due first.
    pub fn review_list(&self, room: Option<&str>, limit: usize) -> Result<Vec<ReviewItem>> {
        self.reads().due_for_review(room, self.now(), limit)
    }

    /// C's `mark_reviewed`: the memory is current; its next review is due after the same
    /// period again. Returns the new date (none for kinds without reviews).
    pub fn mark_reviewed(&mut self, id: &IdRef) -> Result<Option<Millis>> {
        let now = self.now();
        self.write(|tx| {
            let m = require_memory(tx, id, "id")?;
            let next = crate::ops::review_after(m.kind, now);
            tx.patch_memory(
                m.id,
                &MemoryPatch {
                    review_after: Some(next),
                    ..Default::default()
                },
            )?;
            tx.append_event(&NewEvent {
                memory_id: m.id,
                kind: EventKind::Reinforce,
                weight: 0.5,
                at: now,
                session_id: None,
                detail: Some("reviewed"),
            })?;
            Ok(next)
        })
    }

    /// Records a verdict on a pending judgment (C's `mem_judge`).
    pub fn judge(&mut self, verdict: Verdict) -> Result<Judgment> {
        let relation = check_relation(&verdict.relation)?;
        let confidence = verdict.confidence.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&confidence) {
            return Err(InputError::new(
                "confidence",
                format!("is {confidence}, it must be between 0 and 1"),
            )
            .into());
        }
        for (field, v) in [("reason", &verdict.reason), ("evidence", &verdict.evidence)] {
            if let Some(v) = v {
                engram_core::limits::check_len(field, v, engram_core::limits::MAX_TITLE_BYTES)?;
            }
        }
        let now = self.now();
        self.write(|tx| {
            let Some(j) = tx.judgment(&verdict.judgment_id)? else {
                return Err(crate::Error::not_found(
                    "judgment_id",
                    verdict.judgment_id.clone(),
                ));
            };
            tx.record_verdict(&verdict, relation, now)?;
            apply_relation(tx, j.src, j.dst, relation, now)
        })?;
        self.judgment(&verdict.judgment_id)
    }

    /// C's `mem_compare`: a verdict on two memories without a pending judgment; creates
    /// or overwrites the pair's judgment. Returns it.
    pub fn compare(&mut self, a: &IdRef, b: &IdRef, verdict: Verdict) -> Result<Judgment> {
        let (src, dst) = (self.resolve_id(a)?, self.resolve_id(b)?);
        if src == dst {
            return Err(InputError::new("memory_id_b", "must differ from memory_id_a").into());
        }
        let now = self.now();
        let uid = self.write(|tx| tx.pending_judgment(src, dst, 0.0, None, now))?;
        self.judge(Verdict {
            judgment_id: uid,
            actor: verdict.actor.or(Some("engram".into())),
            actor_kind: verdict.actor_kind.or(Some("system".into())),
            ..verdict
        })
    }

    /// One judgment by id.
    pub fn judgment(&self, uid: &str) -> Result<Judgment> {
        self.reads()
            .judgment(uid)?
            .ok_or_else(|| crate::Error::not_found("judgment_id", uid.to_string()))
    }

    /// C's review date of a memory (decisions, preferences), if it has one: C's search
    /// marks a memory past it `state: needs_review`.
    pub fn review_after(&self, id: MemoryId) -> Result<Option<Millis>> {
        self.reads().review_after(id)
    }

    /// Judgments touching a memory, newest first.
    pub fn judgments_of(&self, id: MemoryId) -> Result<Vec<Judgment>> {
        self.reads().judgments_of(id)
    }
}

fn check_relation(raw: &str) -> Result<&'static str, InputError> {
    let r = raw.trim().to_ascii_lowercase().replace('-', "_");
    RELATIONS.iter().find(|x| **x == r).copied().ok_or_else(|| {
        InputError::new(
            "relation",
            format!(
                "{raw:?} is not a verdict; use one of {}",
                RELATIONS.join(", ")
            ),
        )
    })
}

/// What a verdict does to the store: a link of its kind; `supersedes` also ends the
/// validity of `dst`.
fn apply_relation(
    tx: &mut dyn Tx,
    src: MemoryId,
    dst: MemoryId,
    relation: &str,
    now: Millis,
) -> Result<()> {
    let kind = match relation {
        "not_conflict" => return Ok(()),
        "supersedes" => LinkKind::Supersedes,
        "conflicts_with" => LinkKind::ConflictsWith,
        "compatible" => LinkKind::Compatible,
        "scoped" => LinkKind::Scoped,
        _ => LinkKind::Related,
    };
    tx.upsert_link(&LinkWrite::set(src, dst, kind, 1.0, now))?;
    if relation == "supersedes" {
        let superseded = tx.patch_memory(
            dst,
            &MemoryPatch {
                if_tier: Some(Tier::Active),
                ..MemoryPatch::superseded(now)
            },
        )?;
        if superseded {
            tx.append_event(&NewEvent {
                memory_id: dst,
                kind: EventKind::Correction,
                weight: 0.0,
                at: now,
                session_id: None,
                detail: Some(&format!("superseded by #{src} (judged)")),
            })?;
        }
    }
    Ok(())
}
