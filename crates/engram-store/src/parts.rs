//! Capture paths (hooks, importers, replayed conversations) write what they were given,
//! however long: text over the content limit becomes linked parts of one record instead of
//! an error. An agent's own `remember` keeps the clear limit error: it can shorten its text.

use crate::{RememberOutcome, RememberRequest, Result, Store};
use engram_core::limits::MAX_CONTENT_BYTES;
use engram_core::memory::IdRef;

impl Store {
    /// [`remember`](Self::remember) for a capture path: content within the limit is one
    /// memory as usual; longer content is split at paragraph, line or word breaks
    /// ([`engram_core::parts::split`]) into parts that together are exactly the text.
    /// The first part carries the request (title, context, resolution); every later part
    /// is stored without resolution (parts of one text must not merge into each other),
    /// with the same room, kind, session, date, source and tags, an `explicit` link to the
    /// first part, and `metadata.part` / `metadata.parts` / `metadata.part_of` (the first
    /// part's uid). The outcome is the first part's, with the later parts in `parts`.
    pub fn remember_capture(&mut self, mut req: RememberRequest) -> Result<RememberOutcome> {
        if req.content.len() <= MAX_CONTENT_BYTES {
            return self.remember(req);
        }
        // The whole text is redacted before it is split: a secret cut across two parts,
        // or a copy of one in a later part, would pass each part's own redaction.
        let fired = engram_core::redact::redact_in_place(&mut req.content);
        let pieces: Vec<String> = engram_core::parts::split(&req.content, MAX_CONTENT_BYTES)
            .into_iter()
            .map(str::to_string)
            .collect();
        let n = pieces.len();
        let with_part = |meta: &Option<serde_json::Value>, i: usize, of: Option<&str>| {
            let mut m = meta.clone().unwrap_or_else(|| serde_json::json!({}));
            if let Some(o) = m.as_object_mut() {
                o.insert("part".into(), (i + 1).into());
                o.insert("parts".into(), n.into());
                if let Some(uid) = of {
                    o.insert("part_of".into(), uid.into());
                }
            }
            m
        };
        let mut first_req = req.clone();
        first_req.content = pieces[0].clone();
        first_req.metadata = Some(with_part(&req.metadata, 0, None));
        let mut first = self.remember(first_req)?;
        for (i, piece) in pieces.into_iter().enumerate().skip(1) {
            let part = RememberRequest {
                content: piece,
                title: None,
                context: None,
                related: vec![IdRef::Id(first.id)],
                resolve: Some(false),
                topic_key: None,
                metadata: Some(with_part(&req.metadata, i, Some(&first.uid))),
                ..req.clone()
            };
            let out = self.remember(part)?;
            first.parts.push(out.id);
        }
        engram_core::redact::merge(&mut first.redacted, fired);
        Ok(first)
    }
}

impl Store {
    /// The later parts of a long text stored in parts ([`Store::remember_capture`], long
    /// imports), in order; empty for a memory that is one whole text.
    pub fn later_parts(&self, first: &engram_core::Memory) -> Result<Vec<engram_core::Memory>> {
        if first
            .metadata
            .get("parts")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(1)
            < 2
            || is_later_part(first)
        {
            return Ok(Vec::new());
        }
        let ids: Vec<engram_core::MemoryId> = self
            .reads()
            .links_around(first.id)?
            .into_iter()
            .filter(|l| l.kind == engram_core::LinkKind::Explicit && l.dst == first.id)
            .map(|l| l.src)
            .collect();
        let part = |m: &engram_core::Memory| {
            m.metadata
                .get("part")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        let mut parts: Vec<engram_core::Memory> = self
            .reads()
            .memories(&ids)?
            .into_iter()
            .filter(|m| m.tier != engram_core::Tier::Trash && part_of(m) == Some(&first.uid))
            .collect();
        parts.sort_by_key(part);
        Ok(parts)
    }

    /// A memory's whole text: its own, with its later parts after it when it is the first
    /// part of a long text (the pieces concatenate to exactly the text stored).
    pub fn whole_content(&self, m: &engram_core::Memory) -> Result<String> {
        let mut text = m.content.clone();
        for p in self.later_parts(m)? {
            text.push_str(&p.content);
        }
        Ok(text)
    }

    /// The first part of the long text `m` is a later part of, if it is one.
    pub fn first_part(&self, m: &engram_core::Memory) -> Result<Option<engram_core::Memory>> {
        match part_of(m) {
            Some(uid) => self.reads().memory(&IdRef::Uid(uid.to_string())),
            None => Ok(None),
        }
    }

    /// [`save_prompt`](Self::save_prompt) for a capture path (the prompt hook): a prompt
    /// over the content limit is redacted whole, then saved as consecutive prompts of the
    /// session that together are exactly its text. Returns their ids, in order.
    pub fn save_prompt_capture(
        &mut self,
        prompt: &str,
        session_id: Option<&str>,
        origin: &crate::hub::Origin,
    ) -> Result<Vec<i64>> {
        if prompt.len() <= MAX_CONTENT_BYTES {
            return Ok(vec![self.save_prompt(prompt, session_id, origin)?]);
        }
        let clean = engram_core::redact::redact(prompt).0;
        engram_core::parts::split(&clean, MAX_CONTENT_BYTES)
            .into_iter()
            .map(|piece| self.save_prompt(piece, session_id, origin))
            .collect()
    }
}

/// Imports are capture paths too: a memory whose content is over the limit becomes parts
/// before the batch is stored. Part 1 keeps the memory's uid, history and revisions; part
/// `i` gets a uid derived from the memory's (`derived_uid(created_at, "<uid>/part<i>")`,
/// so a re-import recognises it), a fresh create event, the part keys in its metadata and
/// an `explicit` link to part 1.
pub(crate) fn split_long_imports(batch: &mut crate::Batch) {
    let mut out = Vec::with_capacity(batch.memories.len());
    // The later parts go after every whole record, without a source id of their own: a
    // source's ids are kept where free, and a part taking the next one would shift every
    // later record's id (tester-a: A's ids after a 100 KB memory were off by one).
    let mut later_parts = Vec::new();
    for im in std::mem::take(&mut batch.memories) {
        if im.memory.content.len() <= MAX_CONTENT_BYTES {
            out.push(im);
            continue;
        }
        let pieces: Vec<String> = engram_core::parts::split(&im.memory.content, MAX_CONTENT_BYTES)
            .into_iter()
            .map(str::to_string)
            .collect();
        let n = pieces.len();
        let first_uid = im.memory.uid.clone();
        let mark = |m: &mut engram_core::Memory, i: usize| {
            if !m.metadata.is_object() {
                m.metadata = serde_json::json!({});
            }
            if let Some(o) = m.metadata.as_object_mut() {
                o.insert("part".into(), (i + 1).into());
                o.insert("parts".into(), n.into());
                if i > 0 {
                    o.insert("part_of".into(), first_uid.clone().into());
                    o.remove(engram_core::limits::CONTEXT_KEY);
                }
            }
        };
        for (i, piece) in pieces.into_iter().enumerate() {
            let mut m = im.memory.clone();
            m.content = piece;
            mark(&mut m, i);
            if i == 0 {
                out.push(crate::transfer::ImportedMemory {
                    memory: m,
                    ..im.clone()
                });
                continue;
            }
            m.uid =
                crate::transfer::derived_uid(m.created_at, &format!("{first_uid}/part{}", i + 1));
            m.title = None;
            m.topic_key = None;
            m.id = 0;
            batch.links.push(crate::transfer::LinkRow {
                src: m.uid.clone(),
                dst: first_uid.clone(),
                kind: engram_core::LinkKind::Explicit,
                weight: 1.0,
                created_at: m.created_at,
                updated_at: m.created_at,
                note: Some("part of one long text".into()),
            });
            later_parts.push(crate::transfer::ImportedMemory::new(m));
        }
    }
    out.extend(later_parts);
    batch.memories = out;
}

/// Whether two memories are parts of one long text (one the other's first part, or both
/// later parts of the same first).
pub(crate) fn one_record(a: &engram_core::Memory, b: &engram_core::Memory) -> bool {
    let (pa, pb) = (part_of(a), part_of(b));
    pa == Some(b.uid.as_str()) || pb == Some(a.uid.as_str()) || (pa.is_some() && pa == pb)
}

/// The uid of the first part, for a later part of a long text (`metadata.part_of`).
fn part_of(m: &engram_core::Memory) -> Option<&str> {
    m.metadata
        .get("part_of")
        .and_then(serde_json::Value::as_str)
}

/// Whether an imported record is a later part of a long text ([`split_long_imports`]).
pub(crate) fn is_later_part(m: &engram_core::Memory) -> bool {
    part_of(m).is_some()
}
