//! Changing a memory in place: `update` (the previous text kept as a revision), `link`,
//! and pinning.

use crate::ops::{LinkOutcome, MemoryUpdate, check_optional_name, embed_text};
use crate::storage::require_memory;
use crate::storage::rows::{LinkWrite, MemoryPatch, NewEvent};
use crate::{Error, Result, Store};
use engram_core::memory::IdRef;
use engram_core::{EventKind, InputError, LinkKind, Memory, Tier, limits};

impl Store {
    /// Rewrites a memory in place (seed A's `update_memory`, C's `mem_update`). The previous
    /// text, title and importance are kept as a revision, so nothing is lost; the full-text
    /// index is rebuilt.
    pub fn update(&mut self, id: &IdRef, mut change: MemoryUpdate) -> Result<Memory> {
        let mut together = engram_core::redact::Together::new();
        change.content.iter_mut().for_each(|t| together.text(t));
        change.title.iter_mut().for_each(|t| together.text(t));
        together.finish(change.content.iter_mut().chain(change.title.iter_mut()), []);
        if let Some(c) = &change.content {
            limits::check_content("content", c)?;
        }
        if let Some(t) = &change.title {
            limits::check_len("title", t, limits::MAX_TITLE_BYTES)?;
        }
        if let Some(i) = change.importance {
            engram_core::importance::from_number(i, false)?;
        }
        check_optional_name("topic_key", &change.topic_key)?;
        if change.content.is_none()
            && change.title.is_none()
            && change.importance.is_none()
            && change.kind.is_none()
            && change.topic_key.is_none()
        {
            return Err(InputError::new(
                "content",
                "give at least one of content, title, importance, kind, topic_key",
            )
            .into());
        }
        let now = self.now();
        let (mid, title, content) = self.write(|tx| {
            let m = require_memory(tx, id, "id")?;
            if m.tier == Tier::Trash {
                return Err(InputError::new(
                    "id",
                    format!("#{} is in the trash; restore it first", m.id),
                )
                .into());
            }
            // An update of a retired memory would change a row no search shows: the
            // caller means the memory that replaced it (seed A's REPLACE kept the id).
            if m.tier == Tier::Superseded {
                let hint = tx
                    .successor(m.id)?
                    .map(|s| {
                        format!(
                            "; update #{s}, which replaced it, or unsupersede #{} first",
                            m.id
                        )
                    })
                    .unwrap_or_default();
                return Err(InputError::new("id", format!("#{} is superseded{hint}", m.id)).into());
            }
            let content = change.content.clone().unwrap_or_else(|| m.content.clone());
            let title = change.title.clone().or_else(|| m.title.clone());
            tx.add_revision(&m, "update", now, None)?;
            tx.patch_memory(
                m.id,
                &MemoryPatch {
                    content: Some(content.clone()),
                    title: Some(title.clone()),
                    importance: Some(change.importance.unwrap_or(m.importance)),
                    kind: Some(change.kind.unwrap_or(m.kind)),
                    topic_key: Some(change.topic_key.clone().or_else(|| m.topic_key.clone())),
                    updated_at: Some(now),
                    ..Default::default()
                },
            )?;
            tx.index_text(
                m.id,
                title.as_deref(),
                &content,
                &m.tags,
                m.metadata.get("context").and_then(|c| c.as_str()),
            )?;
            // The old vector no longer describes the text; the new one is written after
            // commit (embedding is slow: never inside the write lock).
            tx.set_embedding(m.id, None)?;
            tx.append_event(&NewEvent {
                memory_id: m.id,
                kind: EventKind::Update,
                weight: 1.0,
                at: now,
                session_id: None,
                detail: Some("updated"),
            })?;
            Ok((m.id, title, content))
        })?;
        if let Some((model, v)) = self.embed_document(&embed_text(title.as_deref(), &content)) {
            self.write(|tx| tx.set_embedding(mid, Some((&model, &v))))?;
        }
        // New content replaces a long text's whole: its later parts held the old text's
        // rest, so they go to the trash (restorable; tester-a: the old tail stayed in
        // recall). Only a content change does this.
        if change.content.is_some() {
            let first = self.get(&IdRef::Id(mid))?;
            for p in self.later_parts(&first)? {
                self.forget(&IdRef::Id(p.id))?;
            }
        }
        self.get(&IdRef::Id(mid))
    }

    /// Adds or updates a typed link `src → dst` (weight 0–1, default 1).
    pub fn link(
        &mut self,
        src: &IdRef,
        dst: &IdRef,
        kind: LinkKind,
        weight: Option<f64>,
    ) -> Result<LinkOutcome> {
        let weight = weight.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&weight) {
            return Err(InputError::new(
                "weight",
                format!("is {weight}, it must be between 0 and 1"),
            )
            .into());
        }
        let s = self.resolve_id(src)?;
        let d = self.resolve_id(dst).map_err(|e| match e {
            Error::NotFound { reference, .. } => Error::NotFound {
                field: "dst",
                reference,
            },
            other => other,
        })?;
        if s == d {
            return Err(InputError::new("dst", "a memory cannot link to itself").into());
        }
        let now = self.now();
        self.write(|tx| tx.upsert_link(&LinkWrite::set(s, d, kind, weight, now)))?;
        Ok(LinkOutcome {
            src: s,
            dst: d,
            kind,
            weight,
        })
    }

    /// Pins or unpins a memory. Pinned memories lead every briefing.
    pub fn set_pinned(&mut self, id: &IdRef, pinned: bool) -> Result<Memory> {
        let m = self.get(id)?;
        let now = self.now();
        self.write(|tx| {
            tx.patch_memory(
                m.id,
                &MemoryPatch {
                    pinned: Some(pinned),
                    ..MemoryPatch::touch(now)
                },
            )
        })?;
        self.get(&IdRef::Id(m.id))
    }
}
