//! Export and import: engram's own JSONL format (full fidelity), and the raw insert path
//! every importer and the vault's reindex share.
//!
//! Imports never go through `remember`: a memory arrives with its uid, dates, tier and
//! history, and is stored as it is (no duplicate or similarity resolution). Everything is
//! idempotent by uid: a memory already present is skipped together with its events and
//! revisions, so importing the same file twice changes nothing.

use crate::store::{MEMORY_COLUMNS, add_event, index_text, row_to_memory};
use crate::{Error, Result, Store};
use engram_core::dynamics::ActrParams;
use engram_core::redact;
use engram_core::{EventKind, InputError, LinkKind, Memory, MemoryId, Millis, Tier, limits};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Write};

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
    conn.prepare_cached(
        "INSERT INTO memories (id, uid, content, title, kind, importance, tags, room, topic_key, pinned, tier,
                               created_at, updated_at, valid_from, valid_to, source, session_id, metadata,
                               content_hash, review_after)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
    )?
    .execute(params![
        id,
        m.uid,
        m.content,
        m.title,
        m.kind.as_str(),
        m.importance,
        serde_json::to_string(&m.tags).expect("tags serialise"),
        m.room,
        m.topic_key,
        m.pinned as i64,
        m.tier.as_str(),
        m.created_at,
        m.updated_at,
        m.valid_from,
        m.valid_to,
        m.source,
        m.session_id,
        m.metadata.to_string(),
        crate::ops::content_hash(&m.content),
        review_after,
    ])?;
    let id = conn.last_insert_rowid();
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

impl Store {
    /// Stores everything in `batch` in one transaction, skipping what is already there.
    /// `progress(done, total)` is called as memories are stored.
    pub fn import_batch(
        &mut self,
        mut batch: Batch,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ImportReport> {
        // Over-limit content from a source is stored in parts, never refused or cut.
        crate::parts::split_long_imports(&mut batch);
        let actr = self.config.actr;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut report = ImportReport {
            warnings: batch.warnings,
            ..Default::default()
        };
        let total = batch.memories.len() as u64;
        for (i, im) in batch.memories.into_iter().enumerate() {
            if i % 64 == 0 {
                progress(i as u64, total);
            }
            let label = im.memory.uid.clone();
            match insert_memory(
                &tx,
                &im.memory,
                im.review_after,
                im.keep_id,
                im.events.is_none(),
                &actr,
            ) {
                Ok(Some(id)) => {
                    report.created("memories");
                    for e in im.events.iter().flatten() {
                        let Some(kind) = EventKind::parse(&e.kind) else {
                            report
                                .warnings
                                .push(format!("memory {label}: unknown event kind {:?}", e.kind));
                            continue;
                        };
                        add_event(
                            &tx,
                            id,
                            kind,
                            e.weight,
                            e.at,
                            e.session_id.as_deref(),
                            e.detail.as_deref(),
                        )?;
                        report.created("events");
                    }
                    for r in &im.revisions {
                        tx.prepare_cached(
                            "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                        )?
                        .execute(params![
                            id,
                            redact::redact(&r.content).0,
                            r.title.as_deref().map(|t| redact::redact(t).0),
                            r.kind,
                            r.importance,
                            serde_json::to_string(&r.tags).expect("tags serialise"),
                            r.reason,
                            r.at,
                            r.session_id
                        ])?;
                        report.created("revisions");
                    }
                    for e in &im.evidence {
                        crate::evidence::insert(&tx, id, e)?;
                        report.created("evidence");
                    }
                }
                Ok(None) => {
                    report.skipped("memories");
                    let n = im.events.as_ref().map_or(0, Vec::len);
                    if n > 0 {
                        *report.skipped.entry("events").or_default() += n;
                    }
                    if !im.evidence.is_empty() {
                        *report.skipped.entry("evidence").or_default() += im.evidence.len();
                    }
                    if !im.revisions.is_empty() {
                        *report.skipped.entry("revisions").or_default() += im.revisions.len();
                    }
                }
                Err(Error::Input(e)) => {
                    report.skipped("memories");
                    report.warnings.push(format!("memory {label}: {e}"));
                }
                Err(e) => return Err(e),
            }
        }
        progress(total, total);
        for l in &batch.links {
            let (Some(src), Some(dst)) = (id_of(&tx, &l.src)?, id_of(&tx, &l.dst)?) else {
                report.skipped("links");
                report.warnings.push(format!(
                    "link {} -> {}: a memory it names is not in the store",
                    l.src, l.dst
                ));
                continue;
            };
            if src == dst {
                report.skipped("links");
                continue;
            }
            let n = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO links (src, dst, kind, weight, created_at, updated_at, note)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )?
                .execute(params![
                    src,
                    dst,
                    l.kind.as_str(),
                    l.weight.clamp(0.0, 1.0),
                    l.created_at,
                    l.updated_at,
                    l.note
                ])?;
            if n > 0 {
                report.created("links");
            } else {
                report.skipped("links");
            }
        }
        for s in &batch.sessions {
            let n = tx.execute(
                "INSERT OR IGNORE INTO sessions (id, room, directory, source, started_at, ended_at, summary, outcome, outcome_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    s.id,
                    s.room,
                    s.directory,
                    s.source,
                    s.started_at,
                    s.ended_at,
                    s.summary,
                    s.outcome,
                    s.outcome_at
                ],
            )?;
            if n > 0 {
                report.created("sessions");
            } else {
                report.skipped("sessions");
            }
        }
        for p in &batch.prompts {
            let exists: bool = tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM prompts WHERE session_id IS ?1 AND created_at = ?2 AND content = ?3)",
                params![p.session_id, p.created_at, p.content],
                |r| r.get(0),
            )?;
            if exists {
                report.skipped("prompts");
                continue;
            }
            tx.execute(
                "INSERT INTO prompts (session_id, room, content, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![p.session_id, p.room, redact::redact(&p.content).0, p.created_at],
            )?;
            report.created("prompts");
        }
        for j in &batch.judgments {
            let (Some(src), Some(dst)) = (id_of(&tx, &j.src)?, id_of(&tx, &j.dst)?) else {
                report.skipped("judgments");
                continue;
            };
            let n = tx.execute(
                "INSERT OR IGNORE INTO judgments (uid, src, dst, relation, status, score, reason, evidence, confidence,
                                                 actor, actor_kind, model, session_id, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                params![
                    j.uid,
                    src,
                    dst,
                    j.relation,
                    j.status,
                    j.score,
                    j.reason,
                    j.evidence,
                    j.confidence,
                    j.actor,
                    j.actor_kind,
                    j.model,
                    j.session_id,
                    j.created_at,
                    j.updated_at
                ],
            )?;
            if n > 0 {
                report.created("judgments");
            } else {
                report.skipped("judgments");
            }
        }
        tx.commit()?;
        Ok(report)
    }

    /// Writes the whole store as JSONL: a header line, then one object per line with a
    /// `type` (memory, revision, evidence, event, link, session, prompt, judgment).
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<ExportReport> {
        let io = |source: std::io::Error| Error::Io {
            path: "export".into(),
            source,
        };
        let mut report = ExportReport::default();
        let mut line = |v: serde_json::Value, what: &'static str| -> Result<()> {
            serde_json::to_writer(&mut *out, &v).map_err(|e| io(e.into()))?;
            out.write_all(b"\n").map_err(io)?;
            if what != "header" {
                *report.written.entry(what).or_default() += 1;
            }
            Ok(())
        };
        line(
            serde_json::json!({
                "type": "header",
                "format": "engram-export",
                "version": EXPORT_FORMAT_VERSION,
                "schema": crate::SCHEMA_VERSION,
                "exported_at": engram_core::time::format(self.now()),
            }),
            "header",
        )?;
        let conn = &self.conn;
        let mut uids: HashMap<MemoryId, String> = HashMap::new();
        {
            let mut stmt = conn.prepare(&format!(
                "SELECT {MEMORY_COLUMNS}, review_after FROM memories ORDER BY id"
            ))?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let m = row_to_memory(r)?;
                let review: Option<Millis> = r.get(18)?;
                uids.insert(m.id, m.uid.clone());
                let mut v = serde_json::to_value(&m).expect("memories serialise");
                let o = v.as_object_mut().expect("an object");
                o.insert("type".into(), "memory".into());
                o.insert(
                    "review_after".into(),
                    review.map_or(serde_json::Value::Null, |t| {
                        engram_core::time::format(t).into()
                    }),
                );
                line(v, "memories")?;
            }
        }
        let uid = |id: MemoryId| -> Result<String> {
            match uids.get(&id) {
                Some(u) => Ok(u.clone()),
                None => uid_of(conn, id),
            }
        };
        {
            let mut stmt = conn.prepare(
                "SELECT memory_id, content, title, kind, importance, tags, reason, at, session_id FROM revisions ORDER BY memory_id, id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let tags: String = r.get(5)?;
                let row = RevisionRow {
                    content: r.get(1)?,
                    title: r.get(2)?,
                    kind: r.get(3)?,
                    importance: r.get(4)?,
                    tags: serde_json::from_str(&tags).unwrap_or_default(),
                    reason: r.get(6)?,
                    at: r.get(7)?,
                    session_id: r.get(8)?,
                };
                let mut v = serde_json::to_value(&row).expect("serialises");
                v["type"] = "revision".into();
                v["memory"] = uid(r.get(0)?)?.into();
                line(v, "revisions")?;
            }
        }
        {
            let mut stmt = conn.prepare(
                "SELECT memory_id, content, title, source, session_id, action, at FROM evidence ORDER BY memory_id, id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let row = crate::evidence::Evidence {
                    content: r.get(1)?,
                    title: r.get(2)?,
                    source: r.get(3)?,
                    session_id: r.get(4)?,
                    action: r.get(5)?,
                    at: r.get(6)?,
                };
                let mut v = serde_json::to_value(&row).expect("serialises");
                v["type"] = "evidence".into();
                v["memory"] = uid(r.get(0)?)?.into();
                line(v, "evidence")?;
            }
        }
        {
            let mut stmt = conn.prepare(
                "SELECT memory_id, kind, weight, at, session_id, detail FROM events ORDER BY memory_id, id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let row = EventRow {
                    kind: r.get(1)?,
                    weight: r.get(2)?,
                    at: r.get(3)?,
                    session_id: r.get(4)?,
                    detail: r.get(5)?,
                };
                let mut v = serde_json::to_value(&row).expect("serialises");
                v["type"] = "event".into();
                v["memory"] = uid(r.get(0)?)?.into();
                line(v, "events")?;
            }
        }
        {
            let mut stmt = conn.prepare(
                "SELECT src, dst, kind, weight, created_at, updated_at, note FROM links ORDER BY src, dst, kind",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let kind: String = r.get(2)?;
                let row = LinkRow {
                    src: uid(r.get(0)?)?,
                    dst: uid(r.get(1)?)?,
                    kind: LinkKind::parse(&kind)?,
                    weight: r.get(3)?,
                    created_at: r.get(4)?,
                    updated_at: r.get(5)?,
                    note: r.get(6)?,
                };
                let mut v = serde_json::to_value(&row).expect("serialises");
                v["type"] = "link".into();
                line(v, "links")?;
            }
        }
        {
            let mut stmt = conn.prepare(
                "SELECT id, room, directory, source, started_at, ended_at, summary, outcome, outcome_at FROM sessions ORDER BY started_at, id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let row = SessionRow {
                    id: r.get(0)?,
                    room: r.get(1)?,
                    directory: r.get(2)?,
                    source: r.get(3)?,
                    started_at: r.get(4)?,
                    ended_at: r.get(5)?,
                    summary: r.get(6)?,
                    outcome: r.get(7)?,
                    outcome_at: r.get(8)?,
                };
                let mut v = serde_json::to_value(&row).expect("serialises");
                v["type"] = "session".into();
                line(v, "sessions")?;
            }
        }
        {
            let mut stmt = conn
                .prepare("SELECT session_id, room, content, created_at FROM prompts ORDER BY id")?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let row = PromptRow {
                    session_id: r.get(0)?,
                    room: r.get(1)?,
                    content: r.get(2)?,
                    created_at: r.get(3)?,
                };
                let mut v = serde_json::to_value(&row).expect("serialises");
                v["type"] = "prompt".into();
                line(v, "prompts")?;
            }
        }
        {
            let mut stmt = conn.prepare(
                "SELECT uid, src, dst, relation, status, score, reason, evidence, confidence, actor, actor_kind, model,
                        session_id, created_at, updated_at FROM judgments ORDER BY id",
            )?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                let row = JudgmentRow {
                    uid: r.get(0)?,
                    src: uid(r.get(1)?)?,
                    dst: uid(r.get(2)?)?,
                    relation: r.get(3)?,
                    status: r.get(4)?,
                    score: r.get(5)?,
                    reason: r.get(6)?,
                    evidence: r.get(7)?,
                    confidence: r.get(8)?,
                    actor: r.get(9)?,
                    actor_kind: r.get(10)?,
                    model: r.get(11)?,
                    session_id: r.get(12)?,
                    created_at: r.get(13)?,
                    updated_at: r.get(14)?,
                };
                let mut v = serde_json::to_value(&row).expect("serialises");
                v["type"] = "judgment".into();
                line(v, "judgments")?;
            }
        }
        out.flush().map_err(io)?;
        Ok(report)
    }
}

/// Reads one line of at most `cap` bytes into `buf` (without the newline), streaming: an
/// endless line (`/dev/zero`) fails at `cap` instead of filling memory. Returns false at the
/// end of input. `line_no` is the line being read, for the error.
pub(crate) fn read_capped_line(
    input: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
    line_no: usize,
) -> Result<bool> {
    buf.clear();
    let io = |source| Error::Io {
        path: "import".into(),
        source,
    };
    loop {
        let chunk = input.fill_buf().map_err(io)?;
        if chunk.is_empty() {
            return Ok(!buf.is_empty());
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > cap {
            return Err(InputError::new(
                "file",
                format!(
                    "line {line_no} is longer than the import limit of {cap} bytes per line (one record per line); nothing was imported"
                ),
            )
            .into());
        }
        buf.extend_from_slice(&chunk[..take]);
        input.consume(take + usize::from(done));
        if done {
            return Ok(true);
        }
    }
}

/// The lines of a JSON-lines input, each capped at [`limits::MAX_IMPORT_LINE_BYTES`]; a line
/// that is not UTF-8 comes back as an empty string after a warning-free lossy decode.
pub(crate) fn capped_lines(input: &mut dyn BufRead) -> impl Iterator<Item = Result<String>> + '_ {
    let mut line_no = 0usize;
    let mut buf = Vec::new();
    std::iter::from_fn(move || {
        line_no += 1;
        match read_capped_line(input, &mut buf, limits::MAX_IMPORT_LINE_BYTES, line_no) {
            Ok(true) => Some(Ok(String::from_utf8_lossy(&buf).into_owned())),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    })
}

/// Reads engram's JSONL export into a batch. A line that does not parse is a warning
/// naming its line number; a header of a newer format version is an error.
pub fn read_jsonl(input: &mut dyn BufRead) -> Result<Batch> {
    let mut batch = Batch::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut line_no = 0usize;
    for line in capped_lines(input) {
        let buf = line?;
        line_no += 1;
        let t = buf.trim();
        if t.is_empty() {
            continue;
        }
        let v: serde_json::Value = match serde_json::from_str(t) {
            Ok(v) => v,
            Err(e) => {
                batch
                    .warnings
                    .push(format!("line {line_no}: not JSON ({e}); skipped"));
                continue;
            }
        };
        let ty = v
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .to_string();
        let warn = |batch: &mut Batch, e: String| {
            batch
                .warnings
                .push(format!("line {line_no}: {ty}: {e}; skipped"));
        };
        match ty.as_str() {
            "header" => {
                let version = v.get("version").and_then(|x| x.as_i64()).unwrap_or(0);
                if version > EXPORT_FORMAT_VERSION {
                    return Err(InputError::new(
                        "file",
                        format!(
                            "export format version {version} is newer than this engram reads ({EXPORT_FORMAT_VERSION}); upgrade engram"
                        ),
                    )
                    .into());
                }
            }
            "memory" => match serde_json::from_value::<Memory>(v.clone()) {
                Ok(m) => {
                    let review_after = v
                        .get("review_after")
                        .and_then(|r| r.as_str())
                        .and_then(engram_core::time::parse);
                    index.insert(m.uid.clone(), batch.memories.len());
                    batch.memories.push(ImportedMemory {
                        memory: m,
                        review_after,
                        events: Some(Vec::new()),
                        revisions: Vec::new(),
                        evidence: Vec::new(),
                        keep_id: true,
                    });
                }
                Err(e) => warn(&mut batch, e.to_string()),
            },
            "event" | "revision" | "evidence" => {
                let Some(i) = v
                    .get("memory")
                    .and_then(|m| m.as_str())
                    .and_then(|u| index.get(u))
                    .copied()
                else {
                    warn(&mut batch, "names no memory of this file".into());
                    continue;
                };
                if ty == "event" {
                    match serde_json::from_value::<EventRow>(v) {
                        Ok(e) => batch.memories[i].events.get_or_insert_default().push(e),
                        Err(e) => warn(&mut batch, e.to_string()),
                    }
                } else if ty == "evidence" {
                    match serde_json::from_value::<crate::evidence::Evidence>(v) {
                        Ok(e) => batch.memories[i].evidence.push(e),
                        Err(e) => warn(&mut batch, e.to_string()),
                    }
                } else {
                    match serde_json::from_value::<RevisionRow>(v) {
                        Ok(r) => batch.memories[i].revisions.push(r),
                        Err(e) => warn(&mut batch, e.to_string()),
                    }
                }
            }
            "link" => match serde_json::from_value::<LinkRow>(v) {
                Ok(l) => batch.links.push(l),
                Err(e) => warn(&mut batch, e.to_string()),
            },
            "session" => match serde_json::from_value::<SessionRow>(v) {
                Ok(s) => batch.sessions.push(s),
                Err(e) => warn(&mut batch, e.to_string()),
            },
            "prompt" => match serde_json::from_value::<PromptRow>(v) {
                Ok(p) => batch.prompts.push(p),
                Err(e) => warn(&mut batch, e.to_string()),
            },
            "judgment" => match serde_json::from_value::<JudgmentRow>(v) {
                Ok(j) => batch.judgments.push(j),
                Err(e) => warn(&mut batch, e.to_string()),
            },
            other => batch
                .warnings
                .push(format!("line {line_no}: unknown type {other:?}; skipped")),
        }
    }
    Ok(batch)
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
