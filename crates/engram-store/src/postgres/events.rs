//! The one owner of `events` rows on PostgreSQL: a memory's log, appended and never
//! rewritten (purge deletes it with the memory, by cascade).

use super::{Db, count, opt};
use crate::Result;
use crate::storage::rows::{DetailMatch, EventView, NewEvent};
use engram_core::dynamics::Trace;
use engram_core::{EventKind, MemoryId, Millis};
use std::collections::{BTreeMap, HashMap};

pub(crate) fn append(db: &mut dyn Db, e: &NewEvent<'_>) -> Result<()> {
    db.execute(
        "INSERT INTO events (memory_id, kind, weight, at, session_id, detail) VALUES ($1, $2, $3, $4, $5, $6)",
        &[&e.memory_id, &e.kind.as_str(), &e.weight, &e.at, &e.session_id, &e.detail],
    )?;
    Ok(())
}

/// Positive-weight events of many memories, in one statement (in insertion order, as
/// SQLite reads them).
pub(crate) fn traces(db: &mut dyn Db, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<Trace>>> {
    let mut out: HashMap<MemoryId, Vec<Trace>> = HashMap::new();
    if ids.is_empty() {
        return Ok(out);
    }
    for r in db.query(
        "SELECT memory_id, at, weight, kind FROM events WHERE memory_id = ANY($1) AND weight > 0 ORDER BY id",
        &[&ids],
    )? {
        out.entry(r.get(0)).or_default().push(Trace {
            at: r.get(1),
            weight: r.get(2),
            kind: EventKind::parse(r.get::<_, &str>(3)).unwrap_or(EventKind::Update),
        });
    }
    Ok(out)
}

pub(crate) fn counts(db: &mut dyn Db, id: MemoryId) -> Result<BTreeMap<String, u64>> {
    Ok(db
        .query(
            "SELECT kind, count(*) FROM events WHERE memory_id = $1 GROUP BY kind",
            &[&id],
        )?
        .iter()
        .map(|r| (r.get(0), r.get::<_, i64>(1) as u64))
        .collect())
}

pub(crate) fn recent(db: &mut dyn Db, id: MemoryId, limit: usize) -> Result<Vec<EventView>> {
    Ok(db
        .query(
            "SELECT kind, weight, at, session_id, detail FROM events WHERE memory_id = $1
             ORDER BY at DESC, id DESC LIMIT $2",
            &[&id, &(limit as i64)],
        )?
        .iter()
        .map(|r| EventView {
            kind: r.get(0),
            weight: r.get(1),
            at: r.get(2),
            session_id: r.get(3),
            detail: r.get(4),
        })
        .collect())
}

/// SQLite's `LIKE` is case-insensitive for ASCII and has no escape here; `ILIKE` with the
/// same pattern matches the same details (it also folds non-ASCII case).
pub(crate) fn last_detail(
    db: &mut dyn Db,
    id: MemoryId,
    m: DetailMatch<'_>,
) -> Result<Option<(String, Millis)>> {
    let like = match m {
        DetailMatch::Prefix(p) => format!("{p}%"),
        DetailMatch::Contains(p) => format!("%{p}%"),
    };
    Ok(opt(
        db,
        "SELECT detail, at FROM events WHERE memory_id = $1 AND detail ILIKE $2 ESCAPE ''
         ORDER BY at DESC, id DESC LIMIT 1",
        &[&id, &like],
    )?
    .map(|r| (r.get(0), r.get(1))))
}

pub(crate) fn count_of(db: &mut dyn Db, id: MemoryId) -> Result<u64> {
    count(
        db,
        "SELECT count(*) FROM events WHERE memory_id = $1",
        &[&id],
    )
}

pub(crate) fn recalled_in_session(
    db: &mut dyn Db,
    session_id: &str,
) -> Result<Vec<(MemoryId, f64)>> {
    Ok(db
        .query(
            "SELECT DISTINCT m.id, m.importance FROM events e JOIN memories m ON m.id = e.memory_id
             WHERE e.session_id = $1 AND e.kind = 'recall_hit' ORDER BY m.id",
            &[&session_id],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
}

pub(crate) fn failed_sessions_recalling(db: &mut dyn Db, id: MemoryId) -> Result<u64> {
    count(
        db,
        "SELECT count(DISTINCT s.id) FROM events e JOIN sessions s ON s.id = e.session_id
         WHERE e.memory_id = $1 AND e.kind = 'recall_hit' AND s.outcome = 'failure'",
        &[&id],
    )
}

pub(crate) fn recall_hits_per_day(db: &mut dyn Db, since: Millis) -> Result<Vec<(i64, u64)>> {
    super::memories::per_day(
        db,
        "SELECT at / $2, count(*) FROM events WHERE kind = 'recall_hit' AND at >= $1 GROUP BY 1",
        since,
    )
}
