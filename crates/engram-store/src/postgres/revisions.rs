//! The one owner of `revisions` (a memory's earlier texts) and `judgments` (verdicts on
//! pairs of memories) on PostgreSQL.

use super::{Db, count, opt};
use crate::Result;
use crate::storage::rows::{Judgment, Revision, Verdict};
use engram_core::{Memory, MemoryId, Millis};
use postgres::Row;

pub(crate) fn add(
    db: &mut dyn Db,
    m: &Memory,
    reason: &str,
    at: Millis,
    session_id: Option<&str>,
) -> Result<()> {
    db.execute(
        "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        &[
            &m.id,
            &m.content,
            &m.title,
            &m.kind.as_str(),
            &m.importance,
            &serde_json::to_string(&m.tags).expect("tags serialise"),
            &reason,
            &at,
            &session_id,
        ],
    )?;
    Ok(())
}

/// A memory's earlier texts, oldest first, numbered from 1.
pub(crate) fn of(db: &mut dyn Db, id: MemoryId) -> Result<Vec<Revision>> {
    Ok(db
        .query(
            "SELECT content, title, kind, importance, reason, at, session_id FROM revisions
             WHERE memory_id = $1 ORDER BY id",
            &[&id],
        )?
        .iter()
        .enumerate()
        .map(|(i, r)| Revision {
            number: i as u64 + 1,
            content: r.get(0),
            title: r.get(1),
            kind: r.get(2),
            importance: r.get(3),
            reason: r.get(4),
            at: r.get(5),
            session_id: r.get(6),
        })
        .collect())
}

pub(crate) fn count_of(db: &mut dyn Db, id: MemoryId) -> Result<u64> {
    count(
        db,
        "SELECT count(*) FROM revisions WHERE memory_id = $1",
        &[&id],
    )
}

/// The columns [`judgment_from_row`] reads (on the judgments alias `j`).
const JUDGMENT_COLUMNS: &str = "j.uid, j.src, j.dst, j.relation, j.status, j.score, j.reason, j.evidence, \
     j.confidence, j.actor, j.actor_kind, j.model, j.session_id, j.created_at, j.updated_at";

fn judgment_from_row(r: &Row) -> Judgment {
    Judgment {
        judgment_id: r.get(0),
        src: r.get(1),
        dst: r.get(2),
        relation: r.get(3),
        status: r.get(4),
        score: r.get(5),
        reason: r.get(6),
        evidence: r.get(7),
        confidence: r.get(8),
        actor: r.get(9),
        actor_kind: r.get(10),
        model: r.get(11),
        session_id: r.get(12),
        created_at: r.get(13),
        updated_at: r.get(14),
    }
}

fn judgments(rows: Vec<Row>) -> Vec<Judgment> {
    rows.iter().map(judgment_from_row).collect()
}

pub(crate) fn judgment(db: &mut dyn Db, uid: &str) -> Result<Option<Judgment>> {
    Ok(opt(
        db,
        &format!("SELECT {JUDGMENT_COLUMNS} FROM judgments j WHERE j.uid = $1"),
        &[&uid],
    )?
    .as_ref()
    .map(judgment_from_row))
}

pub(crate) fn judgments_of(db: &mut dyn Db, id: MemoryId) -> Result<Vec<Judgment>> {
    Ok(judgments(db.query(
        &format!(
            "SELECT {JUDGMENT_COLUMNS} FROM judgments j WHERE j.src = $1 OR j.dst = $1
             ORDER BY j.updated_at DESC, j.id DESC LIMIT 50"
        ),
        &[&id],
    )?))
}

/// Opens (or finds) the pending judgment between `src` and `dst`; returns its uid. Two
/// writers opening the same pair at once: the unique `(src, dst)` makes one insert a
/// no-op, and the row is read back either way.
pub(crate) fn pending(
    db: &mut dyn Db,
    src: MemoryId,
    dst: MemoryId,
    score: f64,
    session_id: Option<&str>,
    now: Millis,
) -> Result<String> {
    if let Some(r) = opt(
        db,
        "SELECT uid FROM judgments WHERE src = $1 AND dst = $2",
        &[&src, &dst],
    )? {
        return Ok(r.get(0));
    }
    let uid = format!("rel-{:016x}", crate::ops::random_u64());
    db.execute(
        "INSERT INTO judgments (uid, src, dst, status, score, session_id, created_at, updated_at)
         VALUES ($1, $2, $3, 'pending', $4, $5, $6, $6) ON CONFLICT (src, dst) DO NOTHING",
        &[&uid, &src, &dst, &score, &session_id, &now],
    )?;
    let row = opt(
        db,
        "SELECT uid FROM judgments WHERE src = $1 AND dst = $2",
        &[&src, &dst],
    )?;
    Ok(row.map(|r| r.get(0)).unwrap_or(uid))
}

pub(crate) fn record_verdict(
    db: &mut dyn Db,
    v: &Verdict,
    relation: &str,
    confidence: f64,
    now: Millis,
) -> Result<bool> {
    let n = db.execute(
        "UPDATE judgments SET relation = $2, status = 'judged', reason = $3, evidence = $4, confidence = $5,
         actor = $6, actor_kind = $7, model = $8, session_id = COALESCE($9, session_id), updated_at = $10
         WHERE uid = $1",
        &[
            &v.judgment_id,
            &relation,
            &v.reason,
            &v.evidence,
            &confidence,
            &v.actor.as_deref().unwrap_or("agent"),
            &v.actor_kind.as_deref().unwrap_or("agent"),
            &v.model,
            &v.session_id,
            &now,
        ],
    )?;
    Ok(n > 0)
}

pub(crate) fn judgments_in(
    db: &mut dyn Db,
    room: Option<&str>,
    status: Option<&str>,
    limit: usize,
) -> Result<Vec<Judgment>> {
    Ok(judgments(db.query(
        &format!(
            "SELECT {JUDGMENT_COLUMNS} FROM judgments j JOIN memories m ON m.id = j.src
             WHERE ($1::text IS NULL OR m.room = $1) AND ($2::text IS NULL OR j.status = $2)
             ORDER BY j.updated_at DESC, j.id DESC LIMIT $3"
        ),
        &[&room, &status, &(limit as i64)],
    )?))
}

pub(crate) fn pending_judgments(db: &mut dyn Db, limit: usize) -> Result<Vec<Judgment>> {
    Ok(judgments(db.query(
        &format!(
            "SELECT {JUDGMENT_COLUMNS} FROM judgments j WHERE j.status = 'pending'
             ORDER BY j.updated_at DESC, j.id DESC LIMIT $1"
        ),
        &[&(limit as i64)],
    )?))
}
