//! `correct` (seed B's correction flow): a new memory holds the corrected text and
//! supersedes the old one, which stays as history.

use crate::ops::{CorrectOutcome, rand_bits};
use crate::storage::require_memory;
use crate::storage::rows::{LinkWrite, MemoryPatch, NewEvent, NewMemory};
use crate::{Result, Store};
use engram_core::memory::IdRef;
use engram_core::{EventKind, InputError, LinkKind, Tier, dynamics, limits};

impl Store {
    /// B's correction flow: a new memory holds the corrected content (the record in metadata),
    /// with the old memory's kind, room and tags (plus `correction`) and importance at least
    /// `correction_min_importance`; the old memory is superseded (`valid_to` = now) and linked.
    pub fn correct(
        &mut self,
        id: &IdRef,
        corrected: &str,
        reason: &str,
        source: Option<&str>,
    ) -> Result<CorrectOutcome> {
        limits::check_content("content", corrected)?;
        limits::check_len("reason", reason, limits::MAX_TITLE_BYTES)?;
        if let Some(s) = source {
            limits::check_name("source", s)?;
        }
        let corrected = &engram_core::redact::redact(corrected).0;
        let reason = &engram_core::redact::redact(reason).0;
        let now = self.now();
        let vector = self.embed_document(corrected);
        let min_importance = self.config.correction_min_importance;
        let actr = self.config.actr;
        // Drawn once, outside the transaction: a retried transaction writes the same uid.
        let uid = ulid::Ulid::from_parts(now.max(0) as u64, rand_bits()).to_string();
        let (new_id, old_id) = self.write(|tx| {
            let old = require_memory(tx, id, "id")?;
            check_correctable(tx, &old)?;
            // A correction that changes nothing would retire a true memory for a copy of
            // itself (the UI's form starts from the current text).
            if engram_core::text::normalize_for_dedup(corrected)
                == engram_core::text::normalize_for_dedup(&old.content)
            {
                return Err(InputError::new(
                    "content",
                    format!(
                        "is #{}'s current text; a correction must change it (use edit to keep it and change its title or importance)",
                        old.id
                    ),
                )
                .into());
            }
            // Only the corrected text is content. The record (which memory, why) is the
            // metadata, the old memory's correction event and the `supersedes` link, which
            // the vault renders as a link to the old memory's file: pasting the old text
            // here made it match searches for the wrong fact and show in every briefing.
            let content = corrected.to_string();
            let mut tags = old.tags.clone();
            if !tags.iter().any(|t| t == "correction") {
                tags.push("correction".into());
            }
            let importance = old.importance.max(min_importance);
            let new_id = tx.insert_memory(&NewMemory {
                uid: uid.clone(),
                content: content.clone(),
                title: old.title.clone(),
                kind: old.kind,
                importance,
                tags: tags.clone(),
                room: old.room.clone(),
                topic_key: old.topic_key.clone(),
                pinned: old.pinned,
                tier: Tier::Active,
                created_at: now,
                updated_at: now,
                valid_from: now,
                valid_to: None,
                source: source.unwrap_or("unknown").to_string(),
                session_id: None,
                metadata: serde_json::json!({ "corrects": old.uid, "reason": reason }),
                review_after: None,
                // Stamped with the caller by the visibility layer.
                author: None,
            })?;
            tx.index_text(
                new_id,
                old.title.as_deref(),
                &content,
                &tags,
                old.metadata.get("context").and_then(|c| c.as_str()),
            )?;
            if let Some((model, v)) = &vector {
                tx.set_embedding(new_id, Some((model, v)))?;
            }
            tx.append_event(&NewEvent {
                memory_id: new_id,
                kind: EventKind::Create,
                weight: dynamics::create_weight(importance, &actr),
                at: now,
                session_id: None,
                detail: None,
            })?;
            tx.append_event(&NewEvent {
                memory_id: old.id,
                kind: EventKind::Correction,
                weight: 0.0,
                at: now,
                session_id: None,
                detail: Some(&format!("corrected by #{new_id}: {reason}")),
            })?;
            tx.patch_memory(old.id, &MemoryPatch::superseded(now))?;
            tx.upsert_link(&LinkWrite::set(
                new_id,
                old.id,
                LinkKind::Supersedes,
                1.0,
                now,
            ))?;
            Ok((new_id, old.id))
        })?;
        Ok(CorrectOutcome {
            new_id,
            old_id,
            status: "corrected",
        })
    }
}

/// Only an active or archived memory can be corrected: one in the trash is restored first,
/// a superseded one's successor is the one to correct.
fn check_correctable(tx: &dyn crate::storage::Tx, old: &engram_core::Memory) -> Result<()> {
    match old.tier {
        Tier::Trash => Err(InputError::new(
            "id",
            format!(
                "#{} is in the trash; restore it before correcting it",
                old.id
            ),
        )
        .into()),
        Tier::Superseded => {
            let hint = tx
                .successor(old.id)?
                .map(|s| format!("; correct #{s} instead"))
                .unwrap_or_default();
            Err(InputError::new("id", format!("#{} is already superseded{hint}", old.id)).into())
        }
        Tier::Active | Tier::Archived => Ok(()),
    }
}
