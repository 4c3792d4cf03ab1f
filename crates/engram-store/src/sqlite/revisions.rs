//! The one owner of `revisions` (a memory's earlier texts) and `judgments` (C's verdicts
//! on pairs of memories, pending until judged): the two records of how memories relate
//! over time.

use crate::Result;
use crate::storage::rows::{Judgment, JudgmentRow, Revision, RevisionRow, Verdict};
use engram_core::{Memory, MemoryId, Millis};
use rusqlite::{Connection, OptionalExtension, params};

/// Keeps the text a memory had before a change.
pub(crate) fn add(
    conn: &Connection,
    m: &Memory,
    reason: &str,
    at: Millis,
    session_id: Option<&str>,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        m.id,
        m.content,
        m.title,
        m.kind.as_str(),
        m.importance,
        serde_json::to_string(&m.tags).expect("tags serialise"),
        reason,
        at,
        session_id
    ])?;
    Ok(())
}

/// A memory's earlier texts, oldest first, numbered from 1.
pub(crate) fn of(conn: &Connection, id: MemoryId) -> Result<Vec<Revision>> {
    let mut stmt = conn.prepare_cached(
        "SELECT content, title, kind, importance, reason, at, session_id FROM revisions WHERE memory_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([id], |r| {
        Ok(Revision {
            number: 0,
            content: r.get(0)?,
            title: r.get(1)?,
            kind: r.get(2)?,
            importance: r.get(3)?,
            reason: r.get(4)?,
            at: r.get(5)?,
            session_id: r.get(6)?,
        })
    })?;
    let mut out: Vec<Revision> = rows.collect::<rusqlite::Result<_>>()?;
    for (i, r) in out.iter_mut().enumerate() {
        r.number = i as u64 + 1;
    }
    Ok(out)
}

pub(crate) fn count(conn: &Connection, id: MemoryId) -> Result<u64> {
    Ok(conn
        .prepare_cached("SELECT count(*) FROM revisions WHERE memory_id = ?1")?
        .query_row([id], |r| r.get::<_, i64>(0))? as u64)
}

/// The columns [`judgment_from_row`] reads.
pub(crate) const JUDGMENT_COLUMNS: &str = "uid, src, dst, relation, status, score, reason, evidence, confidence, actor, actor_kind, model, session_id, created_at, updated_at";

pub(crate) fn judgment_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Judgment> {
    Ok(Judgment {
        judgment_id: r.get(0)?,
        src: r.get(1)?,
        dst: r.get(2)?,
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
    })
}

pub(crate) fn judgment(conn: &Connection, uid: &str) -> Result<Option<Judgment>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {JUDGMENT_COLUMNS} FROM judgments WHERE uid = ?1"
        ))?
        .query_row([uid], judgment_from_row)
        .optional()?)
}

pub(crate) fn judgments_of(conn: &Connection, id: MemoryId) -> Result<Vec<Judgment>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {JUDGMENT_COLUMNS} FROM judgments WHERE src = ?1 OR dst = ?1 ORDER BY updated_at DESC, id DESC LIMIT 50"
    ))?;
    let rows = stmt.query_map([id], judgment_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Opens (or finds) the pending judgment between `src` and `dst`; returns its uid.
pub(crate) fn pending(
    conn: &Connection,
    src: MemoryId,
    dst: MemoryId,
    score: f64,
    session_id: Option<&str>,
    now: Millis,
) -> Result<String> {
    let existing: Option<String> = conn
        .query_row(
            "SELECT uid FROM judgments WHERE src = ?1 AND dst = ?2",
            params![src, dst],
            |r| r.get(0),
        )
        .ok();
    if let Some(uid) = existing {
        return Ok(uid);
    }
    let uid = format!("rel-{:016x}", crate::ops::random_u64());
    conn.execute(
        "INSERT INTO judgments (uid, src, dst, status, score, session_id, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?6)",
        params![uid, src, dst, score, session_id, now],
    )?;
    Ok(uid)
}

/// Records a verdict; `false` when no judgment has its uid.
pub(crate) fn record_verdict(
    conn: &Connection,
    v: &Verdict,
    relation: &str,
    confidence: f64,
    now: Millis,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE judgments SET relation = ?2, status = 'judged', reason = ?3, evidence = ?4, confidence = ?5,
         actor = ?6, actor_kind = ?7, model = ?8, session_id = COALESCE(?9, session_id), updated_at = ?10
         WHERE uid = ?1",
        params![
            v.judgment_id,
            relation,
            v.reason,
            v.evidence,
            confidence,
            v.actor.as_deref().unwrap_or("agent"),
            v.actor_kind.as_deref().unwrap_or("agent"),
            v.model,
            v.session_id,
            now
        ],
    )?;
    Ok(n > 0)
}

/// Judgments with `status` (any when `None`) whose source memory is in `room` (every
/// room when `None`), newest first.
pub(crate) fn judgments_in(
    conn: &Connection,
    room: Option<&str>,
    status: Option<&str>,
    limit: usize,
) -> Result<Vec<Judgment>> {
    let mut stmt = conn.prepare_cached(
        "SELECT j.uid, j.src, j.dst, j.relation, j.status, j.score, j.reason, j.evidence, j.confidence,
                j.actor, j.actor_kind, j.model, j.session_id, j.created_at, j.updated_at
         FROM judgments j JOIN memories m ON m.id = j.src
         WHERE (?1 IS NULL OR m.room = ?1) AND (?2 IS NULL OR j.status = ?2)
         ORDER BY j.updated_at DESC, j.id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![room, status, limit as i64], judgment_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Judgments still waiting for a verdict, newest first.
pub(crate) fn pending_judgments(conn: &Connection, limit: usize) -> Result<Vec<Judgment>> {
    let mut stmt = conn.prepare(
        "SELECT uid, src, dst, relation, status, score, reason, evidence, confidence, actor, actor_kind, model, session_id, created_at, updated_at
         FROM judgments WHERE status = 'pending' ORDER BY updated_at DESC, id DESC LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit as i64], judgment_from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Revisions of the memories after `after`, by memory then id, whole memories to a page.
pub(crate) fn page(
    conn: &Connection,
    after: MemoryId,
    limit: usize,
) -> Result<Vec<(MemoryId, RevisionRow)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT memory_id, content, title, kind, importance, tags, reason, at, session_id FROM revisions
         WHERE memory_id > ?1 AND memory_id <= coalesce(
             (SELECT memory_id FROM revisions WHERE memory_id > ?1 ORDER BY memory_id LIMIT 1 OFFSET ?2),
             9223372036854775807)
         ORDER BY memory_id, id",
    )?;
    let rows = stmt.query_map(params![after, limit.max(1) as i64 - 1], |r| {
        let tags: String = r.get(5)?;
        Ok((
            r.get(0)?,
            RevisionRow {
                content: r.get(1)?,
                title: r.get(2)?,
                kind: r.get(3)?,
                importance: r.get(4)?,
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                reason: r.get(6)?,
                at: r.get(7)?,
                session_id: r.get(8)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Inserts a revision as given (an import).
pub(crate) fn insert_row(conn: &Connection, memory_id: MemoryId, r: &RevisionRow) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        memory_id,
        r.content,
        r.title,
        r.kind,
        r.importance,
        serde_json::to_string(&r.tags).expect("tags serialise"),
        r.reason,
        r.at,
        r.session_id
    ])?;
    Ok(())
}

/// Judgments after id `after`, by id, whole rows (export).
pub(crate) fn judgment_page(
    conn: &Connection,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, JudgmentRow<MemoryId>)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, uid, src, dst, relation, status, score, reason, evidence, confidence, actor, actor_kind,
                model, session_id, created_at, updated_at FROM judgments WHERE id > ?1 ORDER BY id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit as i64], |r| {
        Ok((
            r.get(0)?,
            JudgmentRow {
                uid: r.get(1)?,
                src: r.get(2)?,
                dst: r.get(3)?,
                relation: r.get(4)?,
                status: r.get(5)?,
                score: r.get(6)?,
                reason: r.get(7)?,
                evidence: r.get(8)?,
                confidence: r.get(9)?,
                actor: r.get(10)?,
                actor_kind: r.get(11)?,
                model: r.get(12)?,
                session_id: r.get(13)?,
                created_at: r.get(14)?,
                updated_at: r.get(15)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Inserts a judgment as given unless its uid is there; whether it was stored.
pub(crate) fn insert_judgment_row(conn: &Connection, j: &JudgmentRow<MemoryId>) -> Result<bool> {
    let n = conn.prepare_cached(
        "INSERT OR IGNORE INTO judgments (uid, src, dst, relation, status, score, reason, evidence, confidence,
                                         actor, actor_kind, model, session_id, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?
    .execute(params![
        j.uid,
        j.src,
        j.dst,
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
    ])?;
    Ok(n > 0)
}
