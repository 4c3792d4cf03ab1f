//! Applying a write plan: the rows `remember` writes, in one `IMMEDIATE` transaction, in
//! DESIGN.md's order: an exact repeat reinforces, a topic key updates its memory, the
//! plan's absorbing memory (if still active) reinforces or merges, else a new memory is
//! created, linked and supersedes. No decision is made here beyond what the rows say now
//! (a memory gone or retired since the plan was made is skipped).
//!
//! The SQL statements of the write path that have no row owner yet sit here together, so
//! they move to the storage backend's row owners in one place.

use super::Gathered;
use super::prepare::Prepared;
use crate::ops::{content_hash, link_in, rand_bits, review_after};
use crate::resolution::ConflictCandidate;
use crate::store::{add_event, index_text, load_in, resolve_in};
use crate::{RememberAction, RememberOutcome, Result, Store};
use engram_core::memory::IdRef;
use engram_core::plan::{self, Absorb, WritePlan};
use engram_core::{EventKind, LinkKind, Memory, MemoryId, Millis, Tier, dynamics};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// Whether the room already holds this content as an active memory (the fast check
/// before embedding; the transaction checks again).
pub(super) fn known(conn: &Connection, hash: &str, room: &str) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM memories WHERE content_hash = ?1 AND room = ?2 AND tier = 'active')",
        params![hash, room],
        |r| r.get(0),
    )?)
}

/// Notes when the last batch was written (`meta.last_batch_write`).
pub(super) fn record_batch_write(conn: &Connection, now: Millis) -> Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('last_batch_write', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [now.to_string()],
    )?;
    Ok(())
}

impl Store {
    /// Writes the plan: the first of repeat, topic update, absorb and create that applies.
    pub(super) fn apply_remember(
        &mut self,
        w: &Prepared,
        g: &Gathered,
        now: Millis,
    ) -> Result<RememberOutcome> {
        let weight = self.config.reinforce_weight;
        let create_weight = dynamics::create_weight(w.importance, &self.config.actr);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut related_ids = Vec::with_capacity(w.req.related.len());
        for r in &w.req.related {
            let id = resolve_in(&tx, r, "ids")?;
            if !related_ids.contains(&id) {
                related_ids.push(id);
            }
        }
        let out = match repeat(&tx, w, weight, now)? {
            Some(out) => out,
            None => match topic_update(&tx, w, g, weight, now)? {
                Some(out) => out,
                None => match absorb(&tx, w, &g.plan, &g.merged_vector, weight, now)? {
                    Some(out) => out,
                    None => create(&tx, w, g, &related_ids, create_weight, now)?,
                },
            },
        };
        tx.commit()?;
        Ok(out)
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
        candidates: vec![],
        conflict: None,
        revision: None,
        redacted: w.redacted.clone(),
        why: None,
    }
}

/// An exact repeat (whitespace and case aside) of an active memory reinforces it.
fn repeat(
    tx: &Connection,
    w: &Prepared,
    weight: f64,
    now: Millis,
) -> Result<Option<RememberOutcome>> {
    let Some(id) = find_duplicate(tx, &w.hash, &w.room, w.content())? else {
        return Ok(None);
    };
    let uid: String = tx.query_row("SELECT uid FROM memories WHERE id = ?1", [id], |r| r.get(0))?;
    add_event(
        tx,
        id,
        EventKind::Reinforce,
        weight,
        now,
        w.session(),
        Some("duplicate remember"),
    )?;
    touch(tx, id, now)?;
    Ok(Some(outcome(w, RememberAction::Reinforced, id, uid)))
}

/// C's topic upsert: the topic's latest memory in the room takes the new text (the old
/// one kept as a revision).
fn topic_update(
    tx: &Connection,
    w: &Prepared,
    g: &Gathered,
    weight: f64,
    now: Millis,
) -> Result<Option<RememberOutcome>> {
    let Some(key) = &w.topic_key else {
        return Ok(None);
    };
    let current: Option<MemoryId> = tx
        .query_row(
            "SELECT id FROM memories WHERE topic_key = ?1 AND room = ?2 AND tier IN ('active', 'archived')
             ORDER BY updated_at DESC, id DESC LIMIT 1",
            params![key, w.room],
            |r| r.get(0),
        )
        .optional()?;
    let Some(id) = current else {
        return Ok(None);
    };
    let m = load_in(tx, &IdRef::Id(id), "topic_key")?;
    crate::resolution::write_revision(tx, &m, "topic_update", now, w.session())?;
    let title = w.req.title.clone().or_else(|| m.title.clone());
    let all_tags = plan::union_tags(&m.tags, &w.tags);
    let imp = w
        .req
        .importance
        .map(|_| w.importance)
        .unwrap_or(m.importance);
    tx.execute(
        "UPDATE memories SET content = ?2, title = ?3, kind = ?4, importance = ?5, tags = ?6, tier = 'active',
         content_hash = ?7, updated_at = ?8, session_id = COALESCE(?9, session_id) WHERE id = ?1",
        params![
            id,
            w.content(),
            title,
            w.kind.as_str(),
            imp,
            serde_json::to_string(&all_tags).expect("tags serialise"),
            w.hash,
            now,
            w.req.session_id
        ],
    )?;
    index_text(
        tx,
        id,
        title.as_deref(),
        w.content(),
        &all_tags,
        w.req.context.as_deref(),
    )?;
    replace_embedding(tx, id, &g.vector)?;
    add_event(
        tx,
        id,
        EventKind::Update,
        weight,
        now,
        w.session(),
        Some("topic update"),
    )?;
    let revisions = revision_count(tx, id)?;
    let mut out = outcome(w, RememberAction::Updated, id, m.uid);
    out.revision = Some(revisions + 1);
    Ok(Some(out))
}

/// The plan's absorbing memory, if it is still active, reinforces or takes the merged
/// text; the write's own words are kept as evidence on it.
fn absorb(
    tx: &Connection,
    w: &Prepared,
    p: &WritePlan,
    merged_vector: &Option<(String, Vec<f32>)>,
    weight: f64,
    now: Millis,
) -> Result<Option<RememberOutcome>> {
    let Some(Absorb { target, merged }) = &p.absorb else {
        return Ok(None);
    };
    let Some(m) = crate::resolution::load_by_id(tx, *target)? else {
        return Ok(None);
    };
    if m.tier != Tier::Active {
        return Ok(None);
    }
    let action = match merged {
        Some(text) => {
            merge_into(tx, w, &m, text, merged_vector, now)?;
            RememberAction::Merged
        }
        None => {
            touch(tx, m.id, now)?;
            RememberAction::Reinforced
        }
    };
    let is_merge = action == RememberAction::Merged;
    crate::evidence::write(
        tx,
        m.id,
        &m.content,
        &crate::evidence::Evidence {
            content: w.content().to_string(),
            title: w.req.title.clone(),
            source: w.req.source.clone().unwrap_or_else(|| "unknown".into()),
            session_id: w.req.session_id.clone(),
            action: plan::evidence_action(is_merge).into(),
            at: w.req.created_at.unwrap_or(now),
        },
    )?;
    add_event(
        tx,
        m.id,
        EventKind::Reinforce,
        weight,
        now,
        w.session(),
        Some(&plan::absorb_event_detail(is_merge, p.why.as_deref())),
    )?;
    let candidates = open_judgments(tx, m.id, p, w.session(), now)?;
    let revisions = revision_count(tx, m.id)?;
    let mut out = outcome(w, action, m.id, m.uid);
    out.candidates = candidates;
    out.why = p.why.clone();
    if is_merge {
        out.revision = Some(revisions + 1);
    }
    Ok(Some(out))
}

/// `m` takes the merged `text` (its prior text kept as a revision) and the write's tags.
fn merge_into(
    tx: &Connection,
    w: &Prepared,
    m: &Memory,
    text: &str,
    merged_vector: &Option<(String, Vec<f32>)>,
    now: Millis,
) -> Result<()> {
    crate::resolution::write_revision(tx, m, "merge", now, w.session())?;
    let all_tags = plan::union_tags(&m.tags, &w.tags);
    tx.execute(
        "UPDATE memories SET content = ?2, tags = ?3, importance = max(importance, ?4),
         content_hash = ?5, updated_at = ?6 WHERE id = ?1",
        params![
            m.id,
            text,
            serde_json::to_string(&all_tags).expect("tags serialise"),
            w.importance,
            content_hash(text),
            now
        ],
    )?;
    index_text(
        tx,
        m.id,
        m.title.as_deref(),
        text,
        &all_tags,
        m.metadata.get("context").and_then(|c| c.as_str()),
    )?;
    replace_embedding(tx, m.id, merged_vector)
}

/// A new memory: inserted, indexed, embedded, linked (explicitly to `related_ids`,
/// semantically to the plan's links), superseding the plan's contradicted memories that
/// are still active, with judgments opened on the related ones.
fn create(
    tx: &Connection,
    w: &Prepared,
    g: &Gathered,
    related_ids: &[MemoryId],
    create_weight: f64,
    now: Millis,
) -> Result<RememberOutcome> {
    let p = &g.plan;
    let at = w.req.created_at.unwrap_or(now);
    let uid = ulid::Ulid::from_parts(at.max(0) as u64, rand_bits()).to_string();
    let id = insert_memory(tx, w, &uid, at)?;
    index_text(
        tx,
        id,
        w.req.title.as_deref(),
        w.content(),
        &w.tags,
        w.req.context.as_deref(),
    )?;
    if let Some((model, v)) = &g.vector {
        crate::vectors::write_embedding(tx, id, model, v)?;
    }
    add_event(
        tx,
        id,
        EventKind::Create,
        create_weight,
        at,
        w.session(),
        p.why.as_deref(),
    )?;
    for &dst in related_ids {
        link_in(tx, id, dst, LinkKind::Explicit, 1.0, now)?;
    }
    // Seed A's graph: the closest neighbours get semantic links both ways, weight
    // closeness × 0.5.
    for &(dst, closeness) in &p.links {
        // Neighbours were read before the transaction; one may be gone since.
        if !crate::store::exists(tx, dst)? {
            continue;
        }
        let weight = closeness * 0.5;
        link_in(tx, id, dst, LinkKind::Semantic, weight, now)?;
        link_in(tx, dst, id, LinkKind::Semantic, weight, now)?;
    }
    let mut touched = related_ids.to_vec();
    let mut conflict = None;
    for (old, c) in &p.supersede {
        if !supersede(tx, *old, id, c, w.session(), now)? {
            continue;
        }
        touched.push(*old);
        conflict.get_or_insert_with(|| c.clone());
    }
    let candidates = open_judgments(tx, id, p, w.session(), now)?;
    let action = if conflict.is_some() {
        RememberAction::Superseded
    } else {
        RememberAction::Created
    };
    let mut out = outcome(w, action, id, uid);
    out.touched = touched;
    out.conflict = conflict;
    out.candidates = candidates;
    out.why = p.why.clone();
    Ok(out)
}

/// The new memory's row; returns its id.
fn insert_memory(tx: &Connection, w: &Prepared, uid: &str, at: Millis) -> Result<MemoryId> {
    tx.execute(
        "INSERT INTO memories (uid, content, title, kind, importance, tags, room, topic_key, pinned, tier,
                               created_at, updated_at, valid_from, valid_to, source, session_id, metadata, content_hash,
                               review_after)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'active', ?10, ?10, ?10, NULL, ?11, ?12, ?13, ?14, ?15)",
        params![
            uid,
            w.content(),
            w.req.title,
            w.kind.as_str(),
            w.importance,
            serde_json::to_string(&w.tags).expect("tags serialise"),
            w.room,
            w.topic_key,
            w.req.pinned as i64,
            at,
            w.req.source.as_deref().unwrap_or("unknown"),
            w.req.session_id,
            w.metadata.to_string(),
            w.hash,
            review_after(w.kind, at),
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Retires `old` in favour of `by` if it is still active: tier `superseded`, valid until
/// now, a correction event saying why, a `supersedes` link. Returns whether it did.
fn supersede(
    tx: &Connection,
    old: MemoryId,
    by: MemoryId,
    c: &engram_core::contradiction::Conflict,
    session: Option<&str>,
    now: Millis,
) -> Result<bool> {
    let still_active: bool = tx
        .query_row(
            "SELECT tier = 'active' FROM memories WHERE id = ?1",
            [old],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(false);
    if !still_active {
        return Ok(false);
    }
    tx.execute(
        "UPDATE memories SET tier = 'superseded', valid_to = ?2, updated_at = ?2 WHERE id = ?1",
        params![old, now],
    )?;
    add_event(
        tx,
        old,
        EventKind::Correction,
        0.0,
        now,
        session,
        Some(&plan::superseded_detail(by, c)),
    )?;
    link_in(tx, by, old, LinkKind::Supersedes, 1.0, now)?;
    Ok(true)
}

/// The active memory in `room` whose content equals `content` (whitespace and case aside).
fn find_duplicate(
    tx: &Connection,
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

/// Marks a memory as just written to (`updated_at`).
fn touch(tx: &Connection, id: MemoryId, now: Millis) -> Result<()> {
    tx.execute(
        "UPDATE memories SET updated_at = ?2 WHERE id = ?1",
        params![id, now],
    )?;
    Ok(())
}

/// Drops a memory's vector and stores `vector` (when the model gave one) for its new text.
fn replace_embedding(
    tx: &Connection,
    id: MemoryId,
    vector: &Option<(String, Vec<f32>)>,
) -> Result<()> {
    tx.execute("DELETE FROM embeddings WHERE memory_id = ?1", [id])?;
    if let Some((model, v)) = vector {
        crate::vectors::write_embedding(tx, id, model, v)?;
    }
    Ok(())
}

fn revision_count(tx: &Connection, id: MemoryId) -> Result<u64> {
    Ok(tx.query_row(
        "SELECT count(*) FROM revisions WHERE memory_id = ?1",
        [id],
        |r| r.get::<_, i64>(0),
    )? as u64)
}

/// Pending judgments between `id` and the plan's related memories (at most three), as
/// candidates; a memory gone since the plan was made is skipped.
fn open_judgments(
    tx: &Connection,
    id: MemoryId,
    p: &WritePlan,
    session_id: Option<&str>,
    now: Millis,
) -> Result<Vec<ConflictCandidate>> {
    let mut out = Vec::new();
    for (other, score) in p.judgments(id) {
        let Some(m) = crate::resolution::load_by_id(tx, other)? else {
            continue;
        };
        let judgment_id =
            crate::resolution::pending_judgment(tx, id, other, score, session_id, now)?;
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
