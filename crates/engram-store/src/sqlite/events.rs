//! The one owner of `events` rows: a memory's log (create, reinforce, recall hits,
//! updates, corrections), appended and never rewritten; purge deletes a memory's whole log.

use crate::Result;
use crate::storage::rows::{DetailMatch, EventView, NewEvent};
use engram_core::dynamics::Trace;
use engram_core::{EventKind, MemoryId, Millis};
use rusqlite::{Connection, OptionalExtension, params};
use std::collections::{BTreeMap, HashMap};

pub(crate) fn append(conn: &Connection, e: &NewEvent<'_>) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO events (memory_id, kind, weight, at, session_id, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        e.memory_id,
        e.kind.as_str(),
        e.weight,
        e.at,
        e.session_id,
        e.detail
    ])?;
    Ok(())
}

/// Positive-weight events per memory, 500 ids to a statement.
pub(crate) fn traces(conn: &Connection, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<Trace>>> {
    let mut out: HashMap<MemoryId, Vec<Trace>> = HashMap::new();
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT memory_id, at, weight, kind FROM events WHERE memory_id IN ({}) AND weight > 0",
            super::memories::placeholders(chunk.len())
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(chunk), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                Trace {
                    at: r.get(1)?,
                    weight: r.get(2)?,
                    kind: EventKind::parse(&r.get::<_, String>(3)?).unwrap_or(EventKind::Update),
                },
            ))
        })?;
        for row in rows {
            let (id, t) = row?;
            out.entry(id).or_default().push(t);
        }
    }
    Ok(out)
}

pub(crate) fn counts(conn: &Connection, id: MemoryId) -> Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    let mut stmt = conn
        .prepare_cached("SELECT kind, count(*) FROM events WHERE memory_id = ?1 GROUP BY kind")?;
    for row in stmt.query_map([id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))? {
        let (k, n) = row?;
        out.insert(k, n as u64);
    }
    Ok(out)
}

pub(crate) fn recent(conn: &Connection, id: MemoryId, limit: usize) -> Result<Vec<EventView>> {
    let mut stmt = conn.prepare_cached(
        "SELECT kind, weight, at, session_id, detail FROM events WHERE memory_id = ?1 ORDER BY at DESC, id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![id, limit as i64], |r| {
        Ok(EventView {
            kind: r.get(0)?,
            weight: r.get(1)?,
            at: r.get(2)?,
            session_id: r.get(3)?,
            detail: r.get(4)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn last_detail(
    conn: &Connection,
    id: MemoryId,
    m: DetailMatch<'_>,
) -> Result<Option<(String, Millis)>> {
    let like = match m {
        DetailMatch::Prefix(p) => format!("{p}%"),
        DetailMatch::Contains(p) => format!("%{p}%"),
    };
    Ok(conn
        .prepare_cached(
            "SELECT detail, at FROM events WHERE memory_id = ?1 AND detail LIKE ?2 ORDER BY at DESC, id DESC LIMIT 1",
        )?
        .query_row(params![id, like], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .optional()?)
}

pub(crate) fn count_of(conn: &Connection, id: MemoryId) -> Result<u64> {
    Ok(conn
        .prepare_cached("SELECT count(*) FROM events WHERE memory_id = ?1")?
        .query_row([id], |r| r.get::<_, i64>(0))? as u64)
}

pub(crate) fn delete_of(conn: &Connection, id: MemoryId) -> Result<()> {
    conn.prepare_cached("DELETE FROM events WHERE memory_id = ?1")?
        .execute([id])?;
    Ok(())
}

/// Memories recalled in a session, with their importance.
pub(crate) fn recalled_in_session(
    conn: &Connection,
    session_id: &str,
) -> Result<Vec<(MemoryId, f64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT m.id, m.importance FROM events e JOIN memories m ON m.id = e.memory_id
         WHERE e.session_id = ?1 AND e.kind = 'recall_hit' ORDER BY m.id",
    )?;
    let rows = stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How many failed sessions recalled a memory.
pub(crate) fn failed_sessions_recalling(conn: &Connection, id: MemoryId) -> Result<u64> {
    Ok(conn
        .prepare_cached(
            "SELECT count(DISTINCT s.id) FROM events e JOIN sessions s ON s.id = e.session_id
             WHERE e.memory_id = ?1 AND e.kind = 'recall_hit' AND s.outcome = 'failure'",
        )?
        .query_row([id], |r| r.get::<_, i64>(0))? as u64)
}

/// Recall hits per UTC day since `since`.
pub(crate) fn recall_hits_per_day(conn: &Connection, since: Millis) -> Result<Vec<(i64, u64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT at / ?2, count(*) FROM events WHERE kind = 'recall_hit' AND at >= ?1 GROUP BY 1",
    )?;
    let rows = stmt.query_map(params![since, engram_core::DAY_MS], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u64))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Events of the memories after `after`, by memory then id, whole memories to a page of
/// at least `limit` rows (see [`crate::storage::rows::RowKey::Memory`]).
pub(crate) fn page(
    conn: &Connection,
    after: MemoryId,
    limit: usize,
) -> Result<Vec<(MemoryId, crate::storage::rows::EventRow)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT memory_id, kind, weight, at, session_id, detail FROM events
         WHERE memory_id > ?1 AND memory_id <= coalesce(
             (SELECT memory_id FROM events WHERE memory_id > ?1 ORDER BY memory_id LIMIT 1 OFFSET ?2),
             9223372036854775807)
         ORDER BY memory_id, id",
    )?;
    let rows = stmt.query_map(params![after, limit.max(1) as i64 - 1], |r| {
        Ok((
            r.get(0)?,
            crate::storage::rows::EventRow {
                kind: r.get(1)?,
                weight: r.get(2)?,
                at: r.get(3)?,
                session_id: r.get(4)?,
                detail: r.get(5)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Appends an event as given (an import: the kind was checked by the caller).
pub(crate) fn insert_row(
    conn: &Connection,
    memory_id: MemoryId,
    e: &crate::storage::rows::EventRow,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO events (memory_id, kind, weight, at, session_id, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![memory_id, e.kind, e.weight, e.at, e.session_id, e.detail])?;
    Ok(())
}
