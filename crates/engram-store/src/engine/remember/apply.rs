//! Applying a write plan: the rows `remember` writes, in one write transaction (SQLite's
//! `BEGIN IMMEDIATE`), in DESIGN.md's order: an exact repeat reinforces, a topic key
//! updates its memory, the plan's absorbing memory (if still active) reinforces or merges,
//! else a new memory is created, linked and supersedes. No decision is made here beyond
//! what the rows say now (a memory gone or retired since the plan was made is skipped).
//!
//! Everything goes through [`Tx`]: the closure may be run again by a backend that retries
//! (see `storage/mod.rs`), so it computes nothing slow and draws nothing random that must
//! stay the same; the vectors and the new memory's uid arrive from before it.

use super::Gathered;
use super::prepare::Prepared;
use crate::ops::{rand_bits, review_after};
use crate::resolution::ConflictCandidate;
use crate::storage::rows::{Evidence, LinkWrite, MemoryPatch, NewEvent, NewMemory};
use crate::storage::{Tx, require_id, require_memory};
use crate::{RememberAction, RememberOutcome, Result, Store};
use engram_core::memory::IdRef;
use engram_core::plan::{self, Absorb, MergeNow, WritePlan};
use engram_core::{EventKind, LinkKind, Memory, MemoryId, Millis, Tier, dynamics};

/// What the write transaction needs besides the request and the plan: numbers from the
/// settings and the uid a new memory would take (drawn once, so a retry writes the same).
struct Ctx<'a> {
    w: &'a Prepared,
    g: &'a Gathered,
    weight: f64,
    create_weight: f64,
    uid: &'a str,
    now: Millis,
}

impl Store {
    /// Writes the plan: the first of repeat, topic update, absorb and create that applies.
    pub(super) fn apply_remember(
        &mut self,
        w: &Prepared,
        g: &Gathered,
        now: Millis,
    ) -> Result<RememberOutcome> {
        let at = w.req.created_at.unwrap_or(now);
        let uid = ulid::Ulid::from_parts(at.max(0) as u64, rand_bits()).to_string();
        let c = Ctx {
            w,
            g,
            weight: self.config.reinforce_weight,
            create_weight: dynamics::create_weight(w.importance, &self.config.actr),
            uid: &uid,
            now,
        };
        self.write(|tx| {
            let mut related_ids = Vec::with_capacity(w.req.related.len());
            for r in &w.req.related {
                let id = require_id(tx, r, "ids")?;
                if !related_ids.contains(&id) {
                    related_ids.push(id);
                }
            }
            if let Some(out) = repeat(tx, &c)? {
                return Ok(out);
            }
            if let Some(out) = topic_update(tx, &c)? {
                return Ok(out);
            }
            if let Some(out) = absorb(tx, &c)? {
                return Ok(out);
            }
            create(tx, &c, &related_ids)
        })
    }
}

/// The outcome with nothing but the action and the memory it landed on.
fn outcome(w: &Prepared, action: RememberAction, id: MemoryId, uid: String) -> RememberOutcome {
    RememberOutcome {
        action,
        id,
        uid,
        room: w.room.clone(),
        touched: vec![],
        parts: vec![],
        candidates: vec![],
        conflict: None,
        revision: None,
        redacted: w.redacted.clone(),
        why: None,
    }
}

fn event(
    tx: &mut dyn Tx,
    memory_id: MemoryId,
    kind: EventKind,
    weight: f64,
    at: Millis,
    session_id: Option<&str>,
    detail: Option<&str>,
) -> Result<()> {
    tx.append_event(&NewEvent {
        memory_id,
        kind,
        weight,
        at,
        session_id,
        detail,
    })
}

/// An exact repeat (whitespace and case aside) of an active memory reinforces it.
fn repeat(tx: &mut dyn Tx, c: &Ctx<'_>) -> Result<Option<RememberOutcome>> {
    let w = c.w;
    let Some(id) = tx.active_duplicate(&w.room, w.content())? else {
        return Ok(None);
    };
    let m = require_memory(tx, &IdRef::Id(id), "id")?;
    if !super::repeat_allowed(w, &m) {
        return Ok(None);
    }
    // The same text under another title, or from another source, still brings words and
    // an attribution the memory lacks: kept as evidence, as a reinforce of a paraphrase is.
    let new_title = w
        .req
        .title
        .as_ref()
        .filter(|t| m.title.as_ref() != Some(*t));
    let new_source = w.req.source.as_ref().filter(|s| **s != m.source);
    if new_title.is_some() || new_source.is_some() {
        tx.add_evidence(
            id,
            &Evidence {
                content: w.content().to_string(),
                title: w.req.title.clone(),
                source: w.req.source.clone().unwrap_or_else(|| "unknown".into()),
                session_id: w.req.session_id.clone(),
                action: plan::evidence_action(false).into(),
                at: w.req.created_at.unwrap_or(c.now),
            },
        )?;
    }
    event(
        tx,
        id,
        EventKind::Reinforce,
        c.weight,
        c.now,
        w.session(),
        Some("duplicate remember"),
    )?;
    tx.patch_memory(id, &MemoryPatch::touch(c.now))?;
    Ok(Some(outcome(w, RememberAction::Reinforced, id, m.uid)))
}

/// C's topic upsert: the topic's latest memory in the room takes the new text (the old
/// one kept as a revision).
fn topic_update(tx: &mut dyn Tx, c: &Ctx<'_>) -> Result<Option<RememberOutcome>> {
    let w = c.w;
    let Some(key) = &w.topic_key else {
        return Ok(None);
    };
    let Some(id) = tx.topic_memory(key, &w.room)? else {
        return Ok(None);
    };
    let m = require_memory(tx, &IdRef::Id(id), "topic_key")?;
    tx.add_revision(&m, "topic_update", c.now, w.session())?;
    let title = w.req.title.clone().or_else(|| m.title.clone());
    let all_tags = plan::union_tags(&m.tags, &w.tags);
    let imp = w
        .req
        .importance
        .map(|_| w.importance)
        .unwrap_or(m.importance);
    tx.patch_memory(
        id,
        &MemoryPatch {
            content: Some(w.content().to_string()),
            title: Some(title.clone()),
            kind: Some(w.kind),
            importance: Some(imp),
            tags: Some(all_tags.clone()),
            tier: Some(Tier::Active),
            updated_at: Some(c.now),
            // A write without a session keeps the memory's.
            session_id: w.req.session_id.clone().map(Some),
            ..Default::default()
        },
    )?;
    tx.index_text(
        id,
        title.as_deref(),
        w.content(),
        &all_tags,
        w.req.context.as_deref(),
    )?;
    replace_embedding(tx, id, &c.g.vector)?;
    event(
        tx,
        id,
        EventKind::Update,
        c.weight,
        c.now,
        w.session(),
        Some("topic update"),
    )?;
    let revisions = tx.revision_count(id)?;
    let mut out = outcome(w, RememberAction::Updated, id, m.uid);
    out.revision = Some(revisions + 1);
    Ok(Some(out))
}

/// The plan's absorbing memory, if it is still active, reinforces or takes the merged
/// text; the write's own words are kept as evidence on it.
fn absorb(tx: &mut dyn Tx, c: &Ctx<'_>) -> Result<Option<RememberOutcome>> {
    let (w, p) = (c.w, &c.g.plan);
    let Some(Absorb { target, merged }) = &p.absorb else {
        return Ok(None);
    };
    let Some(m) = tx.memory(&IdRef::Id(*target))? else {
        return Ok(None);
    };
    if m.tier != Tier::Active {
        return Ok(None);
    }
    // The plan merged into the text read before this transaction; another writer may
    // have merged since, so the merge is rebuilt from the content as it is now.
    let merged = match merged {
        Some(planned) => match plan::merge_now(&m.content, planned, w.content()) {
            MergeNow::Write(text) => Some(text),
            MergeNow::Reinforce => None,
            MergeNow::Apart => return Ok(None),
        },
        None => None,
    };
    let action = match &merged {
        Some(text) => {
            merge_into(tx, c, &m, text)?;
            RememberAction::Merged
        }
        None => {
            tx.patch_memory(m.id, &MemoryPatch::touch(c.now))?;
            RememberAction::Reinforced
        }
    };
    let is_merge = action == RememberAction::Merged;
    let evidence = Evidence {
        content: w.content().to_string(),
        title: w.req.title.clone(),
        source: w.req.source.clone().unwrap_or_else(|| "unknown".into()),
        session_id: w.req.session_id.clone(),
        action: plan::evidence_action(is_merge).into(),
        at: w.req.created_at.unwrap_or(c.now),
    };
    // A write that says exactly what the memory says leaves no evidence: its words are
    // the memory's words.
    let norm = engram_core::text::normalize_for_dedup;
    if norm(&m.content) != norm(&evidence.content) || evidence.title.is_some() {
        tx.add_evidence(m.id, &evidence)?;
    }
    event(
        tx,
        m.id,
        EventKind::Reinforce,
        c.weight,
        c.now,
        w.session(),
        Some(&plan::absorb_event_detail(is_merge, p.why.as_deref())),
    )?;
    let candidates = open_judgments(tx, m.id, p, w.session(), c.now)?;
    let revisions = tx.revision_count(m.id)?;
    let mut out = outcome(w, action, m.id, m.uid);
    out.candidates = candidates;
    out.why = p.why.clone();
    if is_merge {
        out.revision = Some(revisions + 1);
    }
    Ok(Some(out))
}

/// `m` takes the merged `text` (its prior text kept as a revision) and the write's tags.
fn merge_into(tx: &mut dyn Tx, c: &Ctx<'_>, m: &Memory, text: &str) -> Result<()> {
    let w = c.w;
    tx.add_revision(m, "merge", c.now, w.session())?;
    let all_tags = plan::union_tags(&m.tags, &w.tags);
    tx.patch_memory(
        m.id,
        &MemoryPatch {
            content: Some(text.to_string()),
            tags: Some(all_tags.clone()),
            importance: Some(m.importance.max(w.importance)),
            updated_at: Some(c.now),
            ..Default::default()
        },
    )?;
    tx.index_text(
        m.id,
        m.title.as_deref(),
        text,
        &all_tags,
        m.metadata.get("context").and_then(|c| c.as_str()),
    )?;
    replace_embedding(tx, m.id, &c.g.merged_vector)
}

/// A new memory: inserted, indexed, embedded, linked (explicitly to `related_ids`,
/// semantically to the plan's links), superseding the plan's contradicted memories that
/// are still active, with judgments opened on the related ones.
fn create(tx: &mut dyn Tx, c: &Ctx<'_>, related_ids: &[MemoryId]) -> Result<RememberOutcome> {
    let (w, p, now) = (c.w, &c.g.plan, c.now);
    let at = w.req.created_at.unwrap_or(now);
    let id = tx.insert_memory(&NewMemory {
        uid: c.uid.to_string(),
        content: w.content().to_string(),
        title: w.req.title.clone(),
        kind: w.kind,
        importance: w.importance,
        tags: w.tags.clone(),
        room: w.room.clone(),
        topic_key: w.topic_key.clone(),
        pinned: w.req.pinned,
        tier: Tier::Active,
        created_at: at,
        updated_at: at,
        valid_from: at,
        valid_to: None,
        source: w.req.source.as_deref().unwrap_or("unknown").to_string(),
        session_id: w.req.session_id.clone(),
        metadata: w.metadata.clone(),
        review_after: review_after(w.kind, at),
        // Stamped with the caller by the visibility layer (`storage::visibility`).
        author: None,
    })?;
    tx.index_text(
        id,
        w.req.title.as_deref(),
        w.content(),
        &w.tags,
        w.req.context.as_deref(),
    )?;
    if let Some((model, v)) = &c.g.vector {
        tx.set_embedding(id, Some((model, v)))?;
    }
    event(
        tx,
        id,
        EventKind::Create,
        c.create_weight,
        at,
        w.session(),
        p.why.as_deref(),
    )?;
    for &dst in related_ids {
        tx.upsert_link(&LinkWrite::set(id, dst, LinkKind::Explicit, 1.0, now))?;
    }
    // Seed A's graph: the closest neighbours get semantic links both ways, weight
    // closeness × 0.5.
    for &(dst, closeness) in &p.links {
        // Neighbours were read before the transaction; one may be gone since.
        if !tx.memory_exists(dst)? {
            continue;
        }
        let weight = closeness * 0.5;
        tx.upsert_link(&LinkWrite::set(id, dst, LinkKind::Semantic, weight, now))?;
        tx.upsert_link(&LinkWrite::set(dst, id, LinkKind::Semantic, weight, now))?;
    }
    let mut touched = related_ids.to_vec();
    let mut conflict = None;
    for (old, cf) in &p.supersede {
        if !supersede(tx, *old, id, cf, w.session(), now)? {
            continue;
        }
        touched.push(*old);
        conflict.get_or_insert_with(|| cf.clone());
    }
    let candidates = open_judgments(tx, id, p, w.session(), now)?;
    let action = if conflict.is_some() {
        RememberAction::Superseded
    } else {
        RememberAction::Created
    };
    let mut out = outcome(w, action, id, c.uid.to_string());
    out.touched = touched;
    out.conflict = conflict;
    out.candidates = candidates;
    out.why = p.why.clone();
    Ok(out)
}

/// Retires `old` in favour of `by` if it is still active: tier `superseded`, valid until
/// now, a correction event saying why, a `supersedes` link. Returns whether it did.
fn supersede(
    tx: &mut dyn Tx,
    old: MemoryId,
    by: MemoryId,
    c: &engram_core::contradiction::Conflict,
    session: Option<&str>,
    now: Millis,
) -> Result<bool> {
    let retire = MemoryPatch {
        if_tier: Some(Tier::Active),
        ..MemoryPatch::superseded(now)
    };
    if !tx.patch_memory(old, &retire)? {
        return Ok(false);
    }
    event(
        tx,
        old,
        EventKind::Correction,
        0.0,
        now,
        session,
        Some(&plan::superseded_detail(by, c)),
    )?;
    tx.upsert_link(&LinkWrite::set(by, old, LinkKind::Supersedes, 1.0, now))?;
    Ok(true)
}

/// Drops a memory's vector and stores `vector` (when the model gave one) for its new text.
fn replace_embedding(
    tx: &mut dyn Tx,
    id: MemoryId,
    vector: &Option<(String, Vec<f32>)>,
) -> Result<()> {
    tx.set_embedding(id, None)?;
    if let Some((model, v)) = vector {
        tx.set_embedding(id, Some((model, v)))?;
    }
    Ok(())
}

/// Pending judgments between `id` and the plan's related memories (at most three), as
/// candidates; a memory gone since the plan was made is skipped.
fn open_judgments(
    tx: &mut dyn Tx,
    id: MemoryId,
    p: &WritePlan,
    session_id: Option<&str>,
    now: Millis,
) -> Result<Vec<ConflictCandidate>> {
    let mut out = Vec::new();
    for (other, score) in p.judgments(id) {
        let Some(m) = tx.memory(&IdRef::Id(other))? else {
            continue;
        };
        let judgment_id = tx.pending_judgment(id, other, score, session_id, now)?;
        out.push(ConflictCandidate {
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
