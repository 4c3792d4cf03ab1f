//! The one owner of `sessions` and `prompts` rows: a session's start, end, summary and
//! outcome, and the prompts it saw.

use crate::Result;
use crate::storage::rows::{
    Owned, PromptInfo, PromptRow, RoomInfo, SessionInfo, SessionRow, SessionWrite,
};
use engram_core::Millis;
use rusqlite::{Connection, OptionalExtension, params};

/// The columns [`from_row`] reads.
pub(crate) const COLUMNS: &str = "id, room, directory, started_at, ended_at, summary, outcome";

/// A session from a row of [`COLUMNS`].
pub(crate) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionInfo> {
    Ok(SessionInfo {
        id: r.get(0)?,
        room: r.get(1)?,
        directory: r.get(2)?,
        started_at: r.get(3)?,
        ended_at: r.get(4)?,
        summary: r.get(5)?,
        outcome: r.get(6)?,
    })
}

pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<SessionInfo>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?)
}

/// Sessions of `room` (every room when `None`), by latest activity: the session's end,
/// its newest memory, or its start.
pub(crate) fn recent(
    conn: &Connection,
    room: Option<&str>,
    limit: usize,
) -> Result<Vec<SessionInfo>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.room, s.directory, s.started_at, s.ended_at, s.summary, s.outcome
         FROM sessions s
         WHERE ?1 IS NULL OR s.room = ?1
         ORDER BY max(coalesce(s.ended_at, 0), s.started_at,
                      coalesce((SELECT max(m.created_at) FROM memories m WHERE m.session_id = s.id), 0)) DESC,
                  s.id
         LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![room, limit as i64], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Sessions by start, newest first.
pub(crate) fn by_start(conn: &Connection, limit: usize) -> Result<Vec<SessionInfo>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM sessions ORDER BY started_at DESC LIMIT ?1"
    ))?;
    let rows = stmt.query_map([limit as i64], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every session, oldest first.
pub(crate) fn all(conn: &Connection) -> Result<Vec<SessionInfo>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM sessions ORDER BY started_at, id"
    ))?;
    let rows = stmt.query_map([], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The start of the newest session of `room` that has not ended.
pub(crate) fn open_since(conn: &Connection, room: &str) -> Result<Option<i64>> {
    Ok(conn.query_row(
        "SELECT max(started_at) FROM sessions WHERE room = ?1 AND ended_at IS NULL",
        [room],
        |r| r.get(0),
    )?)
}

fn prompt_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PromptInfo> {
    Ok(PromptInfo {
        id: r.get(0)?,
        session_id: r.get(1)?,
        room: r.get(2)?,
        content: r.get(3)?,
        created_at: r.get(4)?,
    })
}

/// Prompts of `room` (every room when `None`) newest first; only those containing
/// `query` (ASCII case aside, literally) when given.
pub(crate) fn prompts(
    conn: &Connection,
    room: Option<&str>,
    query: Option<&str>,
    limit: usize,
) -> Result<Vec<PromptInfo>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, session_id, room, content, created_at FROM prompts
         WHERE (?1 IS NULL OR room = ?1) AND (?2 IS NULL OR instr(lower(content), lower(?2)) > 0)
         ORDER BY created_at DESC, id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![room, query, limit as i64], prompt_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every prompt, oldest first.
pub(crate) fn all_prompts(conn: &Connection) -> Result<Vec<PromptInfo>> {
    let mut stmt =
        conn.prepare("SELECT id, session_id, room, content, created_at FROM prompts ORDER BY id")?;
    let rows = stmt.query_map([], prompt_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn delete_prompt(conn: &Connection, id: i64) -> Result<bool> {
    Ok(conn.execute("DELETE FROM prompts WHERE id = ?1", [id])? > 0)
}

/// The recorded owner of a session or prompt (see [`Owned`]).
pub(crate) fn owner(conn: &Connection, what: Owned<'_>) -> Result<Option<String>> {
    let found: Option<Option<String>> = match what {
        Owned::Session(id) => conn
            .prepare_cached("SELECT author FROM sessions WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?,
        Owned::Prompt(id) => conn
            .prepare_cached("SELECT author FROM prompts WHERE id = ?1")?
            .query_row([id], |r| r.get(0))
            .optional()?,
    };
    Ok(found.flatten())
}

/// Sets the owner of a session or prompt that has none.
pub(crate) fn set_owner(conn: &Connection, what: Owned<'_>, user: &str) -> Result<()> {
    match what {
        Owned::Session(id) => conn.execute(
            "UPDATE sessions SET author = ?1 WHERE id = ?2 AND author IS NULL",
            params![user, id],
        )?,
        Owned::Prompt(id) => conn.execute(
            "UPDATE prompts SET author = ?1 WHERE id = ?2 AND author IS NULL",
            params![user, id],
        )?,
    };
    Ok(())
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

/// Sessions after `(started_at, id)`, in that order, whole rows (export).
pub(crate) fn page(
    conn: &Connection,
    after: Option<(Millis, &str)>,
    limit: usize,
) -> Result<Vec<SessionRow>> {
    let (t, id) = after.unwrap_or((Millis::MIN, ""));
    let mut stmt = conn.prepare_cached(
        "SELECT id, room, directory, source, started_at, ended_at, summary, outcome, outcome_at, author
         FROM sessions WHERE (started_at, id) > (?1, ?2) ORDER BY started_at, id LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![t, id, limit as i64], |r| {
        Ok(SessionRow {
            id: r.get(0)?,
            room: r.get(1)?,
            directory: r.get(2)?,
            source: r.get(3)?,
            started_at: r.get(4)?,
            ended_at: r.get(5)?,
            summary: r.get(6)?,
            outcome: r.get(7)?,
            outcome_at: r.get(8)?,
            author: r.get(9)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Inserts a session as given unless its id is there; whether it was stored.
pub(crate) fn insert_row(conn: &Connection, s: &SessionRow) -> Result<bool> {
    Ok(conn.prepare_cached(
        "INSERT OR IGNORE INTO sessions (id, room, directory, source, started_at, ended_at, summary, outcome, outcome_at, author)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        s.id,
        s.room,
        s.directory,
        s.source,
        s.started_at,
        s.ended_at,
        s.summary,
        s.outcome,
        s.outcome_at,
        s.author
    ])? > 0)
}

/// Prompts after id `after`, by id (export).
pub(crate) fn prompt_page(
    conn: &Connection,
    after: i64,
    limit: usize,
) -> Result<Vec<(i64, PromptRow)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, session_id, room, content, created_at, author FROM prompts WHERE id > ?1 ORDER BY id LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit as i64], |r| {
        Ok((
            r.get(0)?,
            PromptRow {
                session_id: r.get(1)?,
                room: r.get(2)?,
                content: r.get(3)?,
                created_at: r.get(4)?,
                author: r.get(5)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Inserts a prompt as given unless one with the same session, time and text is there.
pub(crate) fn insert_prompt_row(conn: &Connection, p: &PromptRow) -> Result<bool> {
    let exists: bool = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM prompts WHERE session_id IS ?1 AND created_at = ?2 AND content = ?3)",
    )?
    .query_row(params![p.session_id, p.created_at, p.content], |r| r.get(0))?;
    if exists {
        return Ok(false);
    }
    conn.prepare_cached(
        "INSERT INTO prompts (session_id, room, content, created_at, author) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![p.session_id, p.room, p.content, p.created_at, p.author])?;
    Ok(true)
}
