//! The one owner of `sessions` and `prompts` rows: a session's start, end, summary and
//! outcome, and the prompts it saw.

use crate::Result;
use crate::storage::rows::{RoomInfo, SessionInfo, SessionWrite};
use rusqlite::{Connection, OptionalExtension, params};

pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<SessionInfo>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, room, directory, started_at, ended_at, summary, outcome FROM sessions WHERE id = ?1",
        )?
        .query_row([id], |r| {
            Ok(SessionInfo {
                id: r.get(0)?,
                room: r.get(1)?,
                directory: r.get(2)?,
                started_at: r.get(3)?,
                ended_at: r.get(4)?,
                summary: r.get(5)?,
                outcome: r.get(6)?,
            })
        })
        .optional()?)
}

pub(crate) fn outcome(conn: &Connection, id: &str) -> Result<Option<Option<String>>> {
    Ok(conn
        .prepare_cached("SELECT outcome FROM sessions WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

/// One step of a session's life; `false` when an `End` found no session.
pub(crate) fn write(conn: &Connection, w: &SessionWrite<'_>) -> Result<bool> {
    let n = match *w {
        SessionWrite::Start {
            id,
            room,
            directory,
            source,
            at,
        } => conn.execute(
            "INSERT INTO sessions (id, room, directory, source, started_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (id) DO NOTHING",
            params![id, room, directory, source, at],
        )?,
        SessionWrite::End { id, summary, at } => conn.execute(
            "UPDATE sessions SET ended_at = ?2, summary = coalesce(?3, summary) WHERE id = ?1",
            params![id, at, summary],
        )?,
        SessionWrite::Handoff {
            id,
            room,
            summary,
            at,
        } => conn.execute(
            "INSERT INTO sessions (id, room, started_at, ended_at, summary) VALUES (?1, ?2, ?3, ?3, ?4)
             ON CONFLICT (id) DO UPDATE SET ended_at = coalesce(sessions.ended_at, ?3), summary = ?4",
            params![id, room, at, summary],
        )?,
        SessionWrite::Outcome {
            id,
            room,
            outcome,
            at,
        } => conn.execute(
            "INSERT INTO sessions (id, room, started_at, outcome, outcome_at) VALUES (?1, ?2, ?3, ?4, ?3)
             ON CONFLICT (id) DO UPDATE SET outcome = ?4, outcome_at = ?3",
            params![id, room, at, outcome],
        )?,
    };
    Ok(n > 0 || !matches!(w, SessionWrite::End { .. }))
}

pub(crate) fn add_prompt(
    conn: &Connection,
    session_id: Option<&str>,
    room: &str,
    content: &str,
    at: i64,
) -> Result<i64> {
    conn.execute(
        "INSERT INTO prompts (session_id, room, content, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![session_id, room, content, at],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Every room with its counts of memories (outside the trash), sessions and prompts.
pub(crate) fn rooms(conn: &Connection) -> Result<Vec<RoomInfo>> {
    let mut stmt = conn.prepare(
        "SELECT r.room,
                (SELECT count(*) FROM memories m WHERE m.room = r.room AND m.tier != 'trash'),
                (SELECT count(*) FROM sessions s WHERE s.room = r.room),
                (SELECT count(*) FROM prompts p WHERE p.room = r.room)
         FROM (SELECT room FROM memories UNION SELECT room FROM sessions UNION SELECT room FROM prompts) r
         ORDER BY r.room",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(RoomInfo {
            name: r.get(0)?,
            memories: r.get::<_, i64>(1)? as u64,
            sessions: r.get::<_, i64>(2)? as u64,
            prompts: r.get::<_, i64>(3)? as u64,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
