//! Export and import: engram's own JSONL format (full fidelity), and the raw insert path
//! every importer and the vault's reindex share.
//!
//! Imports never go through `remember`: a memory arrives with its uid, dates, tier and
//! history, and is stored as it is (no duplicate or similarity resolution). Everything is
//! idempotent by uid: a memory already present is skipped together with its events and
//! revisions, so importing the same file twice changes nothing.

use crate::storage::rows::{NewEvent, NewMemory, RowKey, Section, StoredRow};
use crate::storage::{Reads, Tx};
use crate::{Error, Result, Store};
use engram_core::dynamics::ActrParams;
use engram_core::memory::IdRef;
use engram_core::redact;
use engram_core::{EventKind, InputError, Memory, MemoryId, Millis, Tier, limits};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Write};

mod export;
mod import;
mod jsonl;

pub(crate) use import::{CHUNK_MEMORIES, Counted, Sink};
pub use jsonl::read_jsonl;
pub(crate) use jsonl::{Chunk, capped_lines};

/// The version of engram's export format written in the header line.
pub const EXPORT_FORMAT_VERSION: i64 = 1;

// The rows of the format are the storage boundary's own plain rows (memories named by
// uid here, by id there: `LinkRow` and `JudgmentRow` default to uids).
pub use crate::storage::rows::{
    EventRow, JudgmentRow, LinkRow, PromptRow, RevisionRow, SessionRow,
};

/// A memory to import with its history. `events: None` seeds one `create` event at
/// `created_at` (sources without an event log).
#[derive(Debug, Clone)]
pub struct ImportedMemory {
    pub memory: Memory,
    pub review_after: Option<Millis>,
    pub events: Option<Vec<EventRow>>,
    pub revisions: Vec<RevisionRow>,
    /// Writes folded into the memory ([`crate::evidence`]).
    pub evidence: Vec<crate::evidence::Evidence>,
    /// Keep `memory.id` when that id is free in the target store.
    pub keep_id: bool,
}

impl ImportedMemory {
    pub fn new(memory: Memory) -> ImportedMemory {
        ImportedMemory {
            memory,
            review_after: None,
            events: None,
            revisions: Vec::new(),
            evidence: Vec::new(),
            keep_id: false,
        }
    }
}

/// Everything one import brings, in the order it is applied.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub memories: Vec<ImportedMemory>,
    pub links: Vec<LinkRow>,
    pub sessions: Vec<SessionRow>,
    pub prompts: Vec<PromptRow>,
    pub judgments: Vec<JudgmentRow>,
    /// Problems met while reading the source (the item was skipped), at most
    /// [`MAX_WARNINGS`] of them word for word.
    pub warnings: Vec<String>,
    /// How many more warnings there were than `warnings` keeps.
    pub warnings_omitted: usize,
}

/// Warnings kept word for word by one import; the rest are only counted, so a file of
/// millions of bad lines is read in flat memory.
pub const MAX_WARNINGS: usize = 100;

fn bounded_push(list: &mut Vec<String>, omitted: &mut usize, w: String) {
    if list.len() < MAX_WARNINGS {
        list.push(w);
    } else {
        *omitted += 1;
    }
}

impl Batch {
    /// Records a problem with the source, keeping at most [`MAX_WARNINGS`] word for word.
    pub fn warn(&mut self, w: String) {
        bounded_push(&mut self.warnings, &mut self.warnings_omitted, w);
    }
}

/// What an import did, by record type.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    pub created: BTreeMap<&'static str, usize>,
    pub skipped: BTreeMap<&'static str, usize>,
    /// At most [`MAX_WARNINGS`] warnings word for word; `warnings_omitted` counts the rest.
    pub warnings: Vec<String>,
    pub warnings_omitted: usize,
    /// Memories given a vector of the loaded model after the import (the CLI embeds what it
    /// imported, so recall by meaning finds it at once); `None` when nothing was embedded
    /// here (no model, or `--no-embed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedded: Option<usize>,
}

impl ImportReport {
    fn created(&mut self, what: &'static str) {
        *self.created.entry(what).or_default() += 1;
    }
    fn skipped(&mut self, what: &'static str) {
        *self.skipped.entry(what).or_default() += 1;
    }
    /// Records a warning, keeping at most [`MAX_WARNINGS`] word for word.
    pub fn warn(&mut self, w: String) {
        bounded_push(&mut self.warnings, &mut self.warnings_omitted, w);
    }
    /// Moves a read chunk's warnings into the report, still bounded.
    fn take_warnings(&mut self, b: &mut Batch) {
        for w in b.warnings.drain(..) {
            self.warn(w);
        }
        self.warnings_omitted += std::mem::take(&mut b.warnings_omitted);
    }
    /// Whether the source gave nothing to import: no record created or already present,
    /// and at least one problem reported (a file of nothing but bad lines).
    pub fn nothing_readable(&self) -> bool {
        self.created.values().all(|n| *n == 0)
            && self.skipped.values().all(|n| *n == 0)
            && !(self.warnings.is_empty() && self.warnings_omitted == 0)
    }
    pub fn created_count(&self, what: &str) -> usize {
        self.created.get(what).copied().unwrap_or(0)
    }
    pub fn skipped_count(&self, what: &str) -> usize {
        self.skipped.get(what).copied().unwrap_or(0)
    }
}

/// What an export wrote, by record type.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExportReport {
    pub written: BTreeMap<&'static str, usize>,
}

/// A ULID that is the same every time for the same `key`: importers derive uids from the
/// source's own ids so a second import recognises what the first one brought.
pub fn derived_uid(at: Millis, key: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(key.as_bytes());
    let mut bits: u128 = 0;
    for b in &d[..10] {
        bits = (bits << 8) | u128::from(*b);
    }
    ulid::Ulid::from_parts(at.clamp(0, (1 << 48) - 1) as u64, bits).to_string()
}

/// Redacts the records of an import beside its memories (those go through
/// [`check_memory`]): sessions, prompts, links' notes, judgments, and each memory's events,
/// revisions and evidence. Every way in redacts; a source's history is a way in too.
pub(crate) fn redact_records(batch: &mut Batch) {
    use redact::{redact_in_place as text, redact_names as names, redact_opt as opt};
    for s in &mut batch.sessions {
        names(
            [&mut s.id, &mut s.room]
                .into_iter()
                .chain(s.source.as_mut()),
        );
        opt(&mut s.directory);
        opt(&mut s.summary);
        opt(&mut s.outcome);
    }
    for p in &mut batch.prompts {
        names([&mut p.room].into_iter().chain(p.session_id.as_mut()));
        text(&mut p.content);
    }
    for l in &mut batch.links {
        opt(&mut l.note);
    }
    for j in &mut batch.judgments {
        opt(&mut j.reason);
        opt(&mut j.evidence);
        opt(&mut j.relation);
    }
    for im in &mut batch.memories {
        // The whole text, before an over-limit one is split into parts (`check_memory`
        // redacts each stored part again, which then finds nothing new).
        text(&mut im.memory.content);
        for e in im.events.iter_mut().flatten() {
            names(e.session_id.as_mut());
            opt(&mut e.detail);
        }
        for r in &mut im.revisions {
            text(&mut r.content);
            opt(&mut r.title);
            text(&mut r.reason);
            names(r.session_id.iter_mut().chain(r.tags.iter_mut()));
        }
        for e in &mut im.evidence {
            text(&mut e.content);
            opt(&mut e.title);
            names([&mut e.source].into_iter().chain(e.session_id.as_mut()));
        }
    }
}

/// Checks and normalises a memory to import; the error names the field.
pub(crate) fn check_memory(m: &mut Memory) -> Result<(), InputError> {
    limits::check_content("content", &m.content)?;
    // Imports and vault files are paths in like any other: no secret reaches the row, the
    // index or a vault file name.
    let mut together = redact::Together::new();
    together.text(&mut m.content);
    m.title.iter_mut().for_each(|t| together.text(t));
    together.json(&mut m.metadata);
    together.finish(
        std::iter::once(&mut m.content).chain(m.title.iter_mut()),
        [&mut m.metadata],
    );
    redact::redact_names(
        [m.topic_key.as_mut(), m.session_id.as_mut()]
            .into_iter()
            .flatten()
            .chain([&mut m.source, &mut m.room])
            .chain(m.tags.iter_mut()),
    );
    if m.content.trim().is_empty() {
        return Err(InputError::new("content", "must not be empty"));
    }
    if let Some(t) = &m.title {
        limits::check_len("title", t, limits::MAX_TITLE_BYTES)?;
    }
    m.tags = limits::normalize_tags(&m.tags)?;
    m.room = engram_core::room::normalize_room(&m.room)?;
    if ulid::Ulid::from_string(&m.uid).is_err() {
        return Err(InputError::new("uid", format!("{:?} is not a ULID", m.uid)));
    }
    m.uid = m.uid.to_ascii_uppercase();
    if !(0.0..=1.0).contains(&m.importance) {
        return Err(InputError::new(
            "importance",
            format!("{} is outside 0–1", m.importance),
        ));
    }
    if m.metadata.is_null() {
        m.metadata = serde_json::json!({});
    }
    limits::check_metadata(&m.metadata)?;
    for (field, v) in [("topic_key", &m.topic_key), ("session_id", &m.session_id)] {
        if let Some(s) = v {
            limits::check_name(field, s)?;
        }
    }
    limits::check_name("source", &m.source)?;
    Ok(())
}

/// Inserts a full memory as given (uid, dates, tier), indexes its text, and, when
/// `seed_at` names the time of this import (the source brought no usage history), seeds
/// the traces of [`engram_core::dynamics::seed_traces`]: its creation and an `import`
/// access, so maintenance does not read missing usage data as disuse. Returns `None` when
/// the uid is already stored.
pub(crate) fn insert_memory(
    tx: &mut dyn Tx,
    m: &Memory,
    review_after: Option<Millis>,
    keep_id: bool,
    seed_at: Option<Millis>,
    actr: &ActrParams,
) -> Result<Option<MemoryId>> {
    let mut m = m.clone();
    check_memory(&mut m)?;
    if tx.memory_id(&IdRef::Uid(m.uid.clone()))?.is_some() {
        return Ok(None);
    }
    let id_free = keep_id && m.id > 0 && !tx.memory_exists(m.id)?;
    let row = NewMemory {
        uid: m.uid.clone(),
        content: m.content.clone(),
        title: m.title.clone(),
        kind: m.kind,
        importance: m.importance,
        tags: m.tags.clone(),
        room: m.room.clone(),
        topic_key: m.topic_key.clone(),
        pinned: m.pinned,
        tier: m.tier,
        created_at: m.created_at,
        updated_at: m.updated_at,
        valid_from: m.valid_from,
        valid_to: m.valid_to,
        source: m.source.clone(),
        session_id: m.session_id.clone(),
        metadata: m.metadata.clone(),
        review_after,
        author: m.author.clone(),
    };
    let id = if id_free {
        tx.insert_memory_with_id(m.id, &row)?
    } else {
        tx.insert_memory(&row)?
    };
    tx.index_text(
        id,
        m.title.as_deref(),
        &m.content,
        &m.tags,
        m.metadata.get("context").and_then(|c| c.as_str()),
    )?;
    if let Some(imported_at) = seed_at {
        for t in engram_core::dynamics::seed_traces(m.created_at, imported_at, m.importance, actr) {
            tx.append_event(&NewEvent {
                memory_id: id,
                kind: t.kind,
                weight: t.weight,
                at: t.at,
                session_id: m.session_id.as_deref(),
                detail: None,
            })?;
        }
    }
    Ok(Some(id))
}

/// The id a uid names (uids are stored upper-case).
fn id_of(r: &dyn Reads, uid: &str) -> Result<Option<MemoryId>> {
    r.memory_id(&IdRef::Uid(uid.to_ascii_uppercase()))
}

/// A memory with engram's defaults, for importers that fill in what their source has.
pub fn blank_memory(uid: String, content: String, at: Millis) -> Memory {
    Memory {
        id: 0,
        uid,
        content,
        title: None,
        kind: engram_core::Kind::Fact,
        importance: 0.5,
        tags: Vec::new(),
        room: engram_core::room::COMMON.to_string(),
        topic_key: None,
        pinned: false,
        tier: Tier::Active,
        created_at: at,
        updated_at: at,
        valid_from: at,
        valid_to: None,
        source: "import".to_string(),
        session_id: None,
        metadata: serde_json::json!({}),
        author: None,
    }
}
