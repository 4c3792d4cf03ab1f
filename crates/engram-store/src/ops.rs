//! The operations that change or describe memories: remember, reinforce, correct, forget,
//! restore, purge, link, pin, show, stats. Each runs in one `IMMEDIATE` transaction, checks
//! its input before writing anything, and says what it did.

use crate::storage::rows::{LinkWeight as SetOrAdd, LinkWrite};
use crate::store::{add_event, index_text, load_in, resolve_in};
use crate::{Result, Store, rooms};
use engram_core::dynamics;
use engram_core::limits;
use engram_core::memory::IdRef;
use engram_core::resolve::Decision;
use engram_core::{EventKind, InputError, Kind, LinkKind, Memory, MemoryId, Millis, Tier};
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What to remember. Only `content` is required.
#[derive(Debug, Clone, Default)]
pub struct RememberRequest {
    pub content: String,
    pub title: Option<String>,
    pub kind: Option<Kind>,
    /// 0–1; the configured default when absent.
    pub importance: Option<f64>,
    pub tags: Vec<String>,
    /// Explicit room; else resolved from `cwd`; else `common`.
    pub room: Option<String>,
    /// The caller's working directory, for room resolution.
    pub cwd: Option<PathBuf>,
    pub topic_key: Option<String>,
    pub pinned: bool,
    /// Which client or hook wrote it; `unknown` when absent.
    pub source: Option<String>,
    pub session_id: Option<String>,
    /// A JSON object; `{}` when absent.
    pub metadata: Option<serde_json::Value>,
    /// Memories this one relates to: each gets an `explicit` link from the new memory.
    pub related: Vec<IdRef>,
    /// Words that describe the memory's surroundings (the conversation turn before it, the
    /// task it came from): searched with the memory but not part of its content. Kept in
    /// `metadata.context`.
    pub context: Option<String>,
    /// When the memory happened, for imports and replays (default: now). Its create event
    /// is dated then, so activation reflects its real age.
    pub created_at: Option<Millis>,
    /// Resolve against similar memories (default: the `resolve` setting). Exact repeats
    /// and topic keys apply either way.
    pub resolve: Option<bool>,
    /// May resolution retire a memory this write contradicts (default yes)? `false` leaves
    /// the conflict pending as a judgment with the old memory as a candidate (seed C's
    /// protocol: the agent judges with `mem_judge`).
    pub supersede: Option<bool>,
}

/// Fields to change in [`Store::update`]; `None` keeps the current value.
#[derive(Debug, Clone, Default)]
pub struct MemoryUpdate {
    pub content: Option<String>,
    pub title: Option<String>,
    pub importance: Option<f64>,
    pub kind: Option<Kind>,
    pub topic_key: Option<String>,
}

/// What `remember` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RememberAction {
    /// A new memory was stored.
    Created,
    /// The same or nearly the same content already lived in the room; it was reinforced.
    Reinforced,
    /// A close memory took the new information; its prior text is kept as a revision.
    Merged,
    /// A new memory was stored and replaced the memories it contradicts (`touched`).
    Superseded,
    /// The memory with the same `topic_key` took the new text (prior text as a revision).
    Updated,
}

#[derive(Debug, Clone, Serialize)]
pub struct RememberOutcome {
    pub action: RememberAction,
    /// The memory the content landed on.
    pub id: MemoryId,
    pub uid: String,
    pub room: String,
    /// Other memories the write touched: linked to explicitly, or superseded.
    pub touched: Vec<MemoryId>,
    /// Related memories (at most 3) the agent may judge against this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<crate::resolution::ConflictCandidate>,
    /// Why the superseded memories were replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<engram_core::contradiction::Conflict>,
    /// After a merge or topic update: the memory's revision number (1 = never revised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// Secrets removed before storing, by rule.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<engram_core::redact::Redaction>,
    /// What resolution read against the nearest memory and why the action followed
    /// (absent when nothing was compared: exact repeats, topic keys, resolution off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReinforceOutcome {
    pub reinforced: Vec<MemoryId>,
    /// The event weight each received.
    pub weight: f64,
    /// Co-recall links strengthened, as `[a, b]` pairs.
    pub co_recall_links: Vec<[MemoryId; 2]>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CorrectOutcome {
    pub new_id: MemoryId,
    pub old_id: MemoryId,
    pub status: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct TierChange {
    pub id: MemoryId,
    pub from: Tier,
    pub to: Tier,
}

#[derive(Debug, Clone, Serialize)]
pub struct PurgeOutcome {
    pub id: MemoryId,
    pub uid: String,
    pub events_removed: usize,
    pub links_removed: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkOutcome {
    pub src: MemoryId,
    pub dst: MemoryId,
    pub kind: LinkKind,
    pub weight: f64,
}

pub use crate::storage::rows::{EventView, LinkView};

/// Everything known about one memory.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryDetail {
    pub memory: Memory,
    /// Activation now, under the configured dynamics.
    pub activation: f64,
    pub event_counts: BTreeMap<String, u64>,
    /// The newest events, newest first (at most 50).
    pub recent_events: Vec<EventView>,
    pub links: Vec<LinkView>,
    /// The memory that replaced this one, if it was superseded or corrected.
    pub superseded_by: Option<MemoryId>,
    /// Seed A's strength now (what maintenance archives by).
    pub strength: f64,
    /// Why the memory sits in its tier, in words.
    pub tier_reason: String,
    /// C's review date, for decisions and preferences.
    #[serde(with = "engram_core::time::rfc3339_opt")]
    pub review_after: Option<Millis>,
    /// Earlier texts, oldest first (topic updates, merges, edits, consolidations).
    pub revisions: Vec<Revision>,
    /// Verdicts, pending or judged, on this memory and related ones.
    pub judgments: Vec<crate::maintain::Judgment>,
    /// Writes folded into this memory (reinforce, merge), each with its own words, title,
    /// source and time, oldest first.
    pub evidence: Vec<crate::evidence::Evidence>,
}

pub use crate::storage::rows::Revision;

#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// Memories in every tier (B's name).
    pub total_memories: u64,
    pub by_kind: BTreeMap<String, u64>,
    pub by_tier: BTreeMap<String, u64>,
    pub by_room: BTreeMap<String, u64>,
    pub links_by_kind: BTreeMap<String, u64>,
    pub event_count: u64,
    pub events_by_kind: BTreeMap<String, u64>,
    pub schema_version: i64,
    /// `lexical`, or `hybrid` when an embedding model is loaded.
    pub search: &'static str,
    /// The model and how many memories it has embedded.
    pub embeddings: crate::vectors::EmbeddingStatus,
    pub dynamics: engram_core::dynamics::DynamicsModel,
    pub db_path: String,
    pub db_bytes: u64,
}

/// The text a memory's vector is computed from: its title, then its content.
pub(crate) fn embed_text(title: Option<&str>, content: &str) -> String {
    match title {
        Some(t) if !t.trim().is_empty() => format!("{t}\n{content}"),
        _ => content.to_string(),
    }
}

pub(crate) use crate::sqlite::memories::content_hash;

fn merge_redactions(
    into: &mut Vec<engram_core::redact::Redaction>,
    more: Vec<engram_core::redact::Redaction>,
) {
    for r in more {
        match into.iter_mut().find(|x| x.kind == r.kind) {
            Some(x) => x.count += r.count,
            None => into.push(r),
        }
    }
}

/// The active memory in `room` whose content equals `content` (whitespace and case aside).
fn find_duplicate(
    tx: &rusqlite::Connection,
    hash: &str,
    room: &str,
    content: &str,
) -> Result<Option<MemoryId>> {
    let normalized = engram_core::text::normalize_for_dedup(content);
    let mut stmt = tx.prepare_cached(
        "SELECT id, content FROM memories WHERE content_hash = ?1 AND room = ?2 AND tier = 'active' ORDER BY id",
    )?;
    let rows = stmt.query_map(params![hash, room], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (id, c) = row?;
        if engram_core::text::normalize_for_dedup(&c) == normalized {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// The memory's tags followed by the new ones it lacks.
fn union_tags(old: &[String], new: &[String]) -> Vec<String> {
    let mut all = old.to_vec();
    for t in new {
        if !all.contains(t) {
            all.push(t.clone());
        }
    }
    all
}

fn revision_count(tx: &rusqlite::Connection, id: MemoryId) -> Result<u64> {
    crate::sqlite::revisions::count(tx, id)
}

/// C's review dates: decisions are due for review after six months, preferences after
/// three; other kinds never.
pub(crate) fn review_after(kind: Kind, from: Millis) -> Option<Millis> {
    const MONTH: Millis = 2_629_746_000; // 30.436875 days
    match kind {
        Kind::Decision => Some(from + 6 * MONTH),
        Kind::Preference => Some(from + 3 * MONTH),
        _ => None,
    }
}

/// Pending judgments between `id` and each related memory (at most three), as candidates.
fn open_judgments(
    tx: &rusqlite::Connection,
    id: MemoryId,
    related: &[(MemoryId, f64)],
    session_id: Option<&str>,
    now: Millis,
) -> Result<Vec<crate::resolution::ConflictCandidate>> {
    let mut out = Vec::new();
    for &(other, score) in related.iter().filter(|r| r.0 != id).take(3) {
        let Some(m) = crate::resolution::load_by_id(tx, other)? else {
            continue;
        };
        let judgment_id =
            crate::resolution::pending_judgment(tx, id, other, score, session_id, now)?;
        out.push(crate::resolution::ConflictCandidate {
            id: other,
            title: m.title.clone(),
            kind: m.kind,
            excerpt: m.content.chars().take(200).collect(),
            score: (score * 1000.0).round() / 1000.0,
            judgment_id,
        });
    }
    Ok(out)
}

pub(crate) fn check_optional_name(
    field: &'static str,
    v: &Option<String>,
) -> Result<(), InputError> {
    match v {
        Some(s) => limits::check_name(field, s),
        None => Ok(()),
    }
}

impl Store {
    /// Stores a memory, resolving it against what the room already holds (DESIGN.md's
    /// order): an exact repeat reinforces; a `topic_key` updates that topic's memory (the
    /// previous text kept as a revision); otherwise the nearest active memories decide:
    /// a contradiction supersedes them, a near-repeat reinforces, a close text that adds
    /// information merges, anything else is new. Secrets are redacted first.
    /// Remembers several memories in order, as [`remember`](Self::remember) would one by
    /// one, but embeds their texts together first: a batched forward pass costs far less
    /// per text than one pass each. For imports, benchmarks and bulk writers; each request
    /// succeeds or fails on its own. The outer error means the batch's commits could not
    /// be synced to disk (they are in the database, but a power cut could lose them);
    /// repeating the batch is safe: known texts reinforce instead of duplicating.
    pub fn remember_batch(
        &mut self,
        reqs: Vec<RememberRequest>,
    ) -> Result<Vec<Result<RememberOutcome>>> {
        if let Some(e) = self.embedder.clone() {
            let texts: Vec<String> = reqs
                .iter()
                .map(|r| {
                    let clean = |t: &str| engram_core::redact::redact(t).0;
                    embed_text(r.title.as_deref().map(clean).as_deref(), &clean(&r.content))
                })
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            if let Ok(vectors) = e.embed_documents(&refs) {
                self.prepared = texts.into_iter().zip(vectors).collect();
            }
        }
        // One fsync for the whole batch instead of one per memory: the commits in between
        // skip it (WAL stays consistent), and a last commit under FULL syncs the log, which
        // makes every earlier commit durable before this returns.
        let out: Vec<Result<RememberOutcome>> =
            self.without_fsync(|s| reqs.into_iter().map(|r| s.remember(r)).collect())?;
        self.prepared.clear();
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES ('last_batch_write', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [self.now().to_string()],
        )?;
        Ok(out)
    }

    pub fn remember(&mut self, mut req: RememberRequest) -> Result<RememberOutcome> {
        limits::check_content("content", &req.content)?;
        if let Some(t) = &req.title {
            limits::check_len("title", t, limits::MAX_TITLE_BYTES)?;
        }
        let tags = limits::normalize_tags(&req.tags)?;
        check_optional_name("topic_key", &req.topic_key)?;
        check_optional_name("source", &req.source)?;
        check_optional_name("session_id", &req.session_id)?;
        if let Some(c) = &req.context {
            limits::check_len("context", c, limits::MAX_CONTENT_BYTES)?;
        }
        // Secrets never reach the database, the index or the model.
        let mut redacted = Vec::new();
        for text in [
            Some(&mut req.content),
            req.title.as_mut(),
            req.context.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            let (clean, fired) = engram_core::redact::redact(text);
            if !fired.is_empty() {
                *text = clean;
                merge_redactions(&mut redacted, fired);
            }
        }
        if req.content.trim().is_empty() {
            return Err(InputError::new("content", "must not be empty").into());
        }
        let mut metadata = req
            .metadata
            .clone()
            .unwrap_or_else(|| serde_json::json!({}));
        if let Some(c) = &req.context
            && let Some(o) = metadata.as_object_mut()
        {
            o.insert("context".into(), serde_json::json!(c));
        }
        if let Some(t) = req.created_at
            && t < 0
        {
            return Err(InputError::new("created_at", "must not be before 1970").into());
        }
        merge_redactions(
            &mut redacted,
            engram_core::redact::redact_json(&mut metadata),
        );
        limits::check_metadata(&metadata)?;
        let mut importance = req.importance.unwrap_or(self.config.default_importance);
        engram_core::importance::from_number(importance, false)?;
        if tags.iter().any(|t| t.eq_ignore_ascii_case("correction")) {
            importance = importance.max(self.config.correction_min_importance);
        }
        if req.room.as_deref().map(str::trim) == Some(engram_core::room::ALL) {
            return Err(InputError::new(
                "room",
                "`*` searches every room but cannot hold a memory; name one room",
            )
            .into());
        }
        let topic_key = req
            .topic_key
            .as_deref()
            .map(engram_core::topic::normalize_topic_key)
            .filter(|k| !k.is_empty());
        let (room, _) = rooms::resolve(&self.config, req.room.as_deref(), req.cwd.as_deref())?;
        let kind = req.kind.unwrap_or(Kind::Fact);
        let content = req.content.clone();
        let hash = content_hash(&content);
        let now = self.now();
        // Embedding and the neighbour search are the slow part: do them before taking the
        // write lock, and skip them when the content is already known (checked again
        // inside the transaction).
        let known: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM memories WHERE content_hash = ?1 AND room = ?2 AND tier = 'active')",
            params![hash, room],
            |r| r.get(0),
        )?;
        let vector = if known {
            None
        } else {
            self.embed_document(&embed_text(req.title.as_deref(), &content))
        };
        let resolving = !known
            && topic_key.is_none()
            && req.resolve.unwrap_or(self.config.resolve)
            && crate::resolution::participates(kind);
        let neighbours = if resolving {
            self.neighbours(
                &content,
                vector.as_ref().map(|v| v.1.as_slice()),
                &room,
                None,
                None,
            )?
        } else {
            Vec::new()
        };
        let bands = self.config.resolution;
        let mut supersede: Vec<(MemoryId, engram_core::contradiction::Conflict)> = Vec::new();
        let mut absorb: Option<(MemoryId, Option<String>)> = None;
        let mut related: Vec<(MemoryId, f64)> = Vec::new();
        let mut linkable: Vec<(MemoryId, f64)> = Vec::new();
        let mut why: Option<String> = None;
        for n in &neighbours {
            let d = engram_core::resolve::decide(
                &n.memory.content,
                &content,
                n.sim,
                &bands,
                n.memory.kind == kind,
            );
            if why.is_none() {
                why = Some(engram_core::resolve::why(
                    &d,
                    n.memory.id,
                    &n.memory.content,
                    &content,
                    n.sim,
                ));
            }
            if !matches!(d, Decision::Unrelated) {
                linkable.push((n.memory.id, n.closeness));
            }
            match d {
                Decision::Supersede { conflict } if supersede.len() < 3 => {
                    supersede.push((n.memory.id, conflict))
                }
                Decision::Reinforce if absorb.is_none() => absorb = Some((n.memory.id, None)),
                // A merge that would outgrow the content limit stores the text apart.
                Decision::Merge { text }
                    if absorb.is_none() && limits::check_content("content", &text).is_ok() =>
                {
                    absorb = Some((n.memory.id, Some(text)))
                }
                Decision::Unrelated => {}
                _ => related.push((n.memory.id, n.closeness)),
            }
        }
        // A caller that judges conflicts itself gets them as candidates instead.
        if req.supersede == Some(false) {
            if !supersede.is_empty() {
                why = why.map(|w| format!("left for judgment (this caller judges conflicts): {w}"));
            }
            for (id, _) in supersede.drain(..) {
                let closeness = neighbours
                    .iter()
                    .find(|n| n.memory.id == id)
                    .map_or(0.0, |n| n.closeness);
                related.push((id, closeness));
            }
        }
        // The latest truth wins over a merge.
        if !supersede.is_empty()
            && let Some((id, _)) = absorb.take()
        {
            related.push((id, 0.0));
        }
        let merged_vector = match &absorb {
            Some((_, Some(text))) => self.embed_document(text),
            _ => None,
        };

        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut related_ids = Vec::with_capacity(req.related.len());
        for r in &req.related {
            let id = resolve_in(&tx, r, "ids")?;
            if !related_ids.contains(&id) {
                related_ids.push(id);
            }
        }
        let base = |action, id, uid| RememberOutcome {
            action,
            id,
            uid,
            room: room.clone(),
            touched: vec![],
            candidates: vec![],
            conflict: None,
            revision: None,
            redacted: redacted.clone(),
            why: None,
        };
        if let Some(id) = find_duplicate(&tx, &hash, &room, &content)? {
            let uid: String =
                tx.query_row("SELECT uid FROM memories WHERE id = ?1", [id], |r| r.get(0))?;
            add_event(
                &tx,
                id,
                EventKind::Reinforce,
                self.config.reinforce_weight,
                now,
                req.session_id.as_deref(),
                Some("duplicate remember"),
            )?;
            tx.execute(
                "UPDATE memories SET updated_at = ?2 WHERE id = ?1",
                params![id, now],
            )?;
            tx.commit()?;
            return Ok(base(RememberAction::Reinforced, id, uid));
        }

        // C's topic upsert: the topic's latest memory in the room takes the new text.
        if let Some(key) = &topic_key {
            let current: Option<MemoryId> = tx
                .query_row(
                    "SELECT id FROM memories WHERE topic_key = ?1 AND room = ?2 AND tier IN ('active', 'archived')
                     ORDER BY updated_at DESC, id DESC LIMIT 1",
                    params![key, room],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(id) = current {
                let m = load_in(&tx, &IdRef::Id(id), "topic_key")?;
                crate::resolution::write_revision(
                    &tx,
                    &m,
                    "topic_update",
                    now,
                    req.session_id.as_deref(),
                )?;
                let title = req.title.clone().or_else(|| m.title.clone());
                let all_tags = union_tags(&m.tags, &tags);
                let imp = req.importance.map(|_| importance).unwrap_or(m.importance);
                tx.execute(
                    "UPDATE memories SET content = ?2, title = ?3, kind = ?4, importance = ?5, tags = ?6, tier = 'active',
                     content_hash = ?7, updated_at = ?8, session_id = COALESCE(?9, session_id) WHERE id = ?1",
                    params![
                        id,
                        content,
                        title,
                        kind.as_str(),
                        imp,
                        serde_json::to_string(&all_tags).expect("tags serialise"),
                        hash,
                        now,
                        req.session_id
                    ],
                )?;
                index_text(
                    &tx,
                    id,
                    title.as_deref(),
                    &content,
                    &all_tags,
                    req.context.as_deref(),
                )?;
                tx.execute("DELETE FROM embeddings WHERE memory_id = ?1", [id])?;
                if let Some((model, v)) = &vector {
                    crate::vectors::write_embedding(&tx, id, model, v)?;
                }
                add_event(
                    &tx,
                    id,
                    EventKind::Update,
                    self.config.reinforce_weight,
                    now,
                    req.session_id.as_deref(),
                    Some("topic update"),
                )?;
                let revisions = revision_count(&tx, id)?;
                tx.commit()?;
                let mut out = base(RememberAction::Updated, id, m.uid);
                out.revision = Some(revisions + 1);
                return Ok(out);
            }
        }

        // Reinforce or merge into the nearest memory, if it is still active.
        if let Some((target, merged)) = &absorb
            && let Some(m) = crate::resolution::load_by_id(&tx, *target)?
            && m.tier == Tier::Active
        {
            let action = match merged {
                Some(text) => {
                    crate::resolution::write_revision(
                        &tx,
                        &m,
                        "merge",
                        now,
                        req.session_id.as_deref(),
                    )?;
                    let all_tags = union_tags(&m.tags, &tags);
                    tx.execute(
                        "UPDATE memories SET content = ?2, tags = ?3, importance = max(importance, ?4),
                         content_hash = ?5, updated_at = ?6 WHERE id = ?1",
                        params![
                            m.id,
                            text,
                            serde_json::to_string(&all_tags).expect("tags serialise"),
                            importance,
                            content_hash(text),
                            now
                        ],
                    )?;
                    index_text(
                        &tx,
                        m.id,
                        m.title.as_deref(),
                        text,
                        &all_tags,
                        m.metadata.get("context").and_then(|c| c.as_str()),
                    )?;
                    tx.execute("DELETE FROM embeddings WHERE memory_id = ?1", [m.id])?;
                    if let Some((model, v)) = &merged_vector {
                        crate::vectors::write_embedding(&tx, m.id, model, v)?;
                    }
                    RememberAction::Merged
                }
                None => {
                    tx.execute(
                        "UPDATE memories SET updated_at = ?2 WHERE id = ?1",
                        params![m.id, now],
                    )?;
                    RememberAction::Reinforced
                }
            };
            crate::evidence::write(
                &tx,
                m.id,
                &m.content,
                &crate::evidence::Evidence {
                    content: content.clone(),
                    title: req.title.clone(),
                    source: req.source.clone().unwrap_or_else(|| "unknown".into()),
                    session_id: req.session_id.clone(),
                    action: match action {
                        RememberAction::Merged => "merge",
                        _ => "reinforce",
                    }
                    .into(),
                    at: req.created_at.unwrap_or(now),
                },
            )?;
            add_event(
                &tx,
                m.id,
                EventKind::Reinforce,
                self.config.reinforce_weight,
                now,
                req.session_id.as_deref(),
                Some(&format!(
                    "{}: {}",
                    match action {
                        RememberAction::Merged => "merged a similar remember",
                        _ => "similar remember",
                    },
                    why.as_deref().unwrap_or("")
                )),
            )?;
            let candidates = open_judgments(&tx, m.id, &related, req.session_id.as_deref(), now)?;
            let revisions = revision_count(&tx, m.id)?;
            tx.commit()?;
            let mut out = base(action, m.id, m.uid);
            out.candidates = candidates;
            out.why = why;
            if action == RememberAction::Merged {
                out.revision = Some(revisions + 1);
            }
            return Ok(out);
        }

        let at = req.created_at.unwrap_or(now);
        let uid = ulid::Ulid::from_parts(at.max(0) as u64, rand_bits()).to_string();
        tx.execute(
            "INSERT INTO memories (uid, content, title, kind, importance, tags, room, topic_key, pinned, tier,
                                   created_at, updated_at, valid_from, valid_to, source, session_id, metadata, content_hash,
                                   review_after)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'active', ?10, ?10, ?10, NULL, ?11, ?12, ?13, ?14, ?15)",
            params![
                uid,
                content,
                req.title,
                kind.as_str(),
                importance,
                serde_json::to_string(&tags).expect("tags serialise"),
                room,
                topic_key,
                req.pinned as i64,
                at,
                req.source.as_deref().unwrap_or("unknown"),
                req.session_id,
                metadata.to_string(),
                hash,
                review_after(kind, at),
            ],
        )?;
        let id = tx.last_insert_rowid();
        index_text(
            &tx,
            id,
            req.title.as_deref(),
            &content,
            &tags,
            req.context.as_deref(),
        )?;
        if let Some((model, v)) = &vector {
            crate::vectors::write_embedding(&tx, id, model, v)?;
        }
        let w = dynamics::create_weight(importance, &self.config.actr);
        add_event(
            &tx,
            id,
            EventKind::Create,
            w,
            at,
            req.session_id.as_deref(),
            why.as_deref(),
        )?;
        for &dst in &related_ids {
            upsert_link(
                &tx,
                id,
                dst,
                LinkKind::Explicit,
                1.0,
                SetOrAdd::Set,
                1.0,
                now,
            )?;
        }
        // Seed A's graph: the closest neighbours get semantic links both ways, weight
        // closeness × 0.5 (an existing link grows by a tenth of that instead).
        for &(dst, closeness) in linkable.iter().take(self.config.max_semantic_links) {
            // Neighbours were read before the transaction; one may be gone since.
            if !crate::store::exists(&tx, dst)? {
                continue;
            }
            let w = closeness * 0.5;
            upsert_link(&tx, id, dst, LinkKind::Semantic, w, SetOrAdd::Set, 1.0, now)?;
            upsert_link(&tx, dst, id, LinkKind::Semantic, w, SetOrAdd::Set, 1.0, now)?;
        }
        let mut touched = related_ids.clone();
        let mut conflict = None;
        for (old, c) in &supersede {
            let still_active: bool = tx
                .query_row(
                    "SELECT tier = 'active' FROM memories WHERE id = ?1",
                    [old],
                    |r| r.get(0),
                )
                .optional()?
                .unwrap_or(false);
            if !still_active {
                continue;
            }
            tx.execute(
                "UPDATE memories SET tier = 'superseded', valid_to = ?2, updated_at = ?2 WHERE id = ?1",
                params![old, now],
            )?;
            add_event(
                &tx,
                *old,
                EventKind::Correction,
                0.0,
                now,
                req.session_id.as_deref(),
                Some(&format!("superseded by #{id}: {}", c.cue)),
            )?;
            upsert_link(
                &tx,
                id,
                *old,
                LinkKind::Supersedes,
                1.0,
                SetOrAdd::Set,
                1.0,
                now,
            )?;
            touched.push(*old);
            conflict.get_or_insert_with(|| c.clone());
        }
        let candidates = open_judgments(&tx, id, &related, req.session_id.as_deref(), now)?;
        tx.commit()?;
        let action = if conflict.is_some() {
            RememberAction::Superseded
        } else {
            RememberAction::Created
        };
        let mut out = base(action, id, uid);
        out.touched = touched;
        out.conflict = conflict;
        out.candidates = candidates;
        out.why = why;
        Ok(out)
    }
}

#[allow(clippy::too_many_arguments)]
fn upsert_link(
    conn: &rusqlite::Connection,
    src: MemoryId,
    dst: MemoryId,
    kind: LinkKind,
    weight: f64,
    mode: SetOrAdd,
    cap: f64,
    at: Millis,
) -> Result<()> {
    crate::sqlite::links::upsert(
        conn,
        &LinkWrite {
            src,
            dst,
            kind,
            weight,
            mode,
            cap,
            at,
        },
    )
}

/// 80 random bits for a ULID, from the standard library's per-process random hasher keys
/// mixed with a counter: unique enough without another dependency.
/// 64 random bits (judgment ids).
pub(crate) fn random_u64() -> u64 {
    rand_bits() as u64
}

pub(crate) fn rand_bits() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut a = std::collections::hash_map::RandomState::new().build_hasher();
    a.write_u64(n);
    let mut b = std::collections::hash_map::RandomState::new().build_hasher();
    b.write_u64(n ^ 0x9e37_79b9_7f4a_7c15);
    ((u128::from(a.finish()) << 64) | u128::from(b.finish())) & ((1u128 << 80) - 1)
}
