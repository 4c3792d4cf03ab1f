//! Export and import: engram's own JSONL format (full fidelity), and the raw insert path
//! every importer and the vault's reindex share.
//!
//! Imports never go through `remember`: a memory arrives with its uid, dates, tier and
//! history, and is stored as it is (no duplicate or similarity resolution). Everything is
//! idempotent by uid: a memory already present is skipped together with its events and
//! revisions, so importing the same file twice changes nothing.

use crate::storage::rows::NewMemory;
use crate::store::{MEMORY_COLUMNS, add_event, index_text, row_to_memory};
use crate::{Error, Result, Store};
use engram_core::dynamics::ActrParams;
use engram_core::redact;
use engram_core::{EventKind, InputError, LinkKind, Memory, MemoryId, Millis, Tier, limits};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Write};

mod export;
mod import;
mod jsonl;

pub(crate) use jsonl::capped_lines;
pub use jsonl::read_jsonl;

/// The version of engram's export format written in the header line.
pub const EXPORT_FORMAT_VERSION: i64 = 1;

/// One event of a memory's log, as exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRow {
    pub kind: String,
    pub weight: f64,
    #[serde(with = "engram_core::time::rfc3339")]
    pub at: Millis,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub detail: Option<String>,
}

/// A previous text of a memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RevisionRow {
    pub content: String,
    #[serde(default)]
    pub title: Option<String>,
    pub kind: String,
    pub importance: f64,
    #[serde(default)]
    pub tags: Vec<String>,
    pub reason: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub at: Millis,
    #[serde(default)]
    pub session_id: Option<String>,
}

/// A link between two memories named by uid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkRow {
    pub src: String,
    pub dst: String,
    pub kind: LinkKind,
    pub weight: f64,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    #[serde(with = "engram_core::time::rfc3339")]
    pub updated_at: Millis,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRow {
    pub id: String,
    pub room: String,
    #[serde(default)]
    pub directory: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(with = "engram_core::time::rfc3339")]
    pub started_at: Millis,
    #[serde(default, with = "engram_core::time::rfc3339_opt")]
    pub ended_at: Option<Millis>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub outcome: Option<String>,
    #[serde(default, with = "engram_core::time::rfc3339_opt")]
    pub outcome_at: Option<Millis>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptRow {
    #[serde(default)]
    pub session_id: Option<String>,
    pub room: String,
    pub content: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgmentRow {
    pub uid: String,
    pub src: String,
    pub dst: String,
    #[serde(default)]
    pub relation: Option<String>,
    pub status: String,
    #[serde(default)]
    pub score: Option<f64>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub actor: Option<String>,
    #[serde(default)]
    pub actor_kind: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    #[serde(with = "engram_core::time::rfc3339")]
    pub updated_at: Millis,
}

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
    /// Problems met while reading the source (the item was skipped).
    pub warnings: Vec<String>,
}

/// What an import did, by record type.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    pub created: BTreeMap<&'static str, usize>,
    pub skipped: BTreeMap<&'static str, usize>,
    pub warnings: Vec<String>,
}

impl ImportReport {
    fn created(&mut self, what: &'static str) {
        *self.created.entry(what).or_default() += 1;
    }
    fn skipped(&mut self, what: &'static str) {
        *self.skipped.entry(what).or_default() += 1;
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

/// Checks and normalises a memory to import; the error names the field.
pub(crate) fn check_memory(m: &mut Memory) -> Result<(), InputError> {
    limits::check_content("content", &m.content)?;
    // Imports and vault files are paths in like any other: no secret reaches the row, the
    // index or a vault file name.
    redact::redact_in_place(&mut m.content);
    redact::redact_opt(&mut m.title);
    redact::redact_json(&mut m.metadata);
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

/// Inserts a full memory as given (uid, dates, tier), indexes its text, and seeds a
/// `create` event when `seed_event`. Returns `None` when the uid is already stored.
pub(crate) fn insert_memory(
    conn: &Connection,
    m: &Memory,
    review_after: Option<Millis>,
    keep_id: bool,
    seed_event: bool,
    actr: &ActrParams,
) -> Result<Option<MemoryId>> {
    let mut m = m.clone();
    check_memory(&mut m)?;
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM memories WHERE uid = ?1)",
        [&m.uid],
        |r| r.get(0),
    )?;
    if exists {
        return Ok(None);
    }
    let id_free = keep_id
        && m.id > 0
        && !conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM memories WHERE id = ?1)",
            [m.id],
            |r| r.get::<_, bool>(0),
        )?;
    let id: Option<i64> = id_free.then_some(m.id);
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
    };
    let id = crate::sqlite::memories::insert_with_id(conn, id, &row)?;
    index_text(
        conn,
        id,
        m.title.as_deref(),
        &m.content,
        &m.tags,
        m.metadata.get("context").and_then(|c| c.as_str()),
    )?;
    if seed_event {
        add_event(
            conn,
            id,
            EventKind::Create,
            engram_core::dynamics::create_weight(m.importance, actr),
            m.created_at,
            m.session_id.as_deref(),
            None,
        )?;
    }
    Ok(Some(id))
}

fn id_of(conn: &Connection, uid: &str) -> Result<Option<MemoryId>> {
    Ok(conn
        .prepare_cached("SELECT id FROM memories WHERE uid = ?1")?
        .query_row([uid.to_ascii_uppercase()], |r| r.get(0))
        .optional()?)
}

fn uid_of(conn: &Connection, id: MemoryId) -> Result<String> {
    Ok(conn
        .prepare_cached("SELECT uid FROM memories WHERE id = ?1")?
        .query_row([id], |r| r.get(0))?)
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
    }
}
