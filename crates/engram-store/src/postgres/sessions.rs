//! The one owner of `sessions` and `prompts` rows on PostgreSQL.

use super::{Db, opt};
use crate::Result;
use crate::storage::rows::{Owned, PromptInfo, RoomInfo, SessionInfo, SessionWrite};
use postgres::Row;

const COLUMNS: &str = "id, room, directory, started_at, ended_at, summary, outcome";

fn from_row(r: &Row) -> SessionInfo {
    SessionInfo {
        id: r.get(0),
        room: r.get(1),
        directory: r.get(2),
        started_at: r.get(3),
        ended_at: r.get(4),
        summary: r.get(5),
        outcome: r.get(6),
    }
}

fn sessions(rows: Vec<Row>) -> Vec<SessionInfo> {
    rows.iter().map(from_row).collect()
}

pub(crate) fn get(db: &mut dyn Db, id: &str) -> Result<Option<SessionInfo>> {
    Ok(opt(
        db,
        &format!("SELECT {COLUMNS} FROM sessions WHERE id = $1"),
        &[&id],
    )?
    .as_ref()
    .map(from_row))
}

/// Sessions by latest activity: the end, the newest memory, or the start. Ties by id in
/// byte order, as SQLite sorts text.
pub(crate) fn recent(
    db: &mut dyn Db,
    room: Option<&str>,
    limit: usize,
) -> Result<Vec<SessionInfo>> {
    Ok(sessions(db.query(
        "SELECT s.id, s.room, s.directory, s.started_at, s.ended_at, s.summary, s.outcome
         FROM sessions s
         WHERE $1::text IS NULL OR s.room = $1
         ORDER BY greatest(coalesce(s.ended_at, 0), s.started_at,
                  coalesce((SELECT max(m.created_at) FROM memories m WHERE m.session_id = s.id), 0)) DESC,
                  s.id COLLATE \"C\"
         LIMIT $2",
        &[&room, &(limit as i64)],
    )?))
}

pub(crate) fn by_start(db: &mut dyn Db, limit: usize) -> Result<Vec<SessionInfo>> {
    Ok(sessions(db.query(
        &format!("SELECT {COLUMNS} FROM sessions ORDER BY started_at DESC LIMIT $1"),
        &[&(limit as i64)],
    )?))
}

pub(crate) fn all(db: &mut dyn Db) -> Result<Vec<SessionInfo>> {
    Ok(sessions(db.query(
        &format!("SELECT {COLUMNS} FROM sessions ORDER BY started_at, id COLLATE \"C\""),
        &[],
    )?))
}

pub(crate) fn open_since(db: &mut dyn Db, room: &str) -> Result<Option<i64>> {
    Ok(opt(
        db,
        "SELECT max(started_at) FROM sessions WHERE room = $1 AND ended_at IS NULL",
        &[&room],
    )?
    .and_then(|r| r.get(0)))
}

fn prompt_row(r: &Row) -> PromptInfo {
    PromptInfo {
        id: r.get(0),
        session_id: r.get(1),
        room: r.get(2),
        content: r.get(3),
        created_at: r.get(4),
    }
}

/// Prompts newest first; with `query`, those containing it, ASCII case aside and literally
/// (`strpos` has no pattern characters; `lower` folds more than ASCII, which only widens
/// the match for non-ASCII letters).
pub(crate) fn prompts(
    db: &mut dyn Db,
    room: Option<&str>,
    query: Option<&str>,
    limit: usize,
) -> Result<Vec<PromptInfo>> {
    Ok(db
        .query(
            "SELECT id, session_id, room, content, created_at FROM prompts
             WHERE ($1::text IS NULL OR room = $1) AND ($2::text IS NULL OR strpos(lower(content), lower($2)) > 0)
             ORDER BY created_at DESC, id DESC LIMIT $3",
            &[&room, &query, &(limit as i64)],
        )?
        .iter()
        .map(prompt_row)
        .collect())
}

pub(crate) fn all_prompts(db: &mut dyn Db) -> Result<Vec<PromptInfo>> {
    Ok(db
        .query(
            "SELECT id, session_id, room, content, created_at FROM prompts ORDER BY id",
            &[],
        )?
        .iter()
        .map(prompt_row)
        .collect())
}

pub(crate) fn delete_prompt(db: &mut dyn Db, id: i64) -> Result<bool> {
    Ok(db.execute("DELETE FROM prompts WHERE id = $1", &[&id])? > 0)
}

/// The recorded owner of a session or prompt (see [`Owned`]).
pub(crate) fn owner(db: &mut dyn Db, what: Owned<'_>) -> Result<Option<String>> {
    let row = match what {
        Owned::Session(id) => opt(db, "SELECT author FROM sessions WHERE id = $1", &[&id])?,
        Owned::Prompt(id) => opt(db, "SELECT author FROM prompts WHERE id = $1", &[&id])?,
    };
    Ok(row.and_then(|r| r.get(0)))
}

/// Sets the owner of a session or prompt that has none.
pub(crate) fn set_owner(db: &mut dyn Db, what: Owned<'_>, user: &str) -> Result<()> {
    match what {
        Owned::Session(id) => db.execute(
            "UPDATE sessions SET author = $1 WHERE id = $2 AND author IS NULL",
            &[&user, &id],
        )?,
        Owned::Prompt(id) => db.execute(
            "UPDATE prompts SET author = $1 WHERE id = $2 AND author IS NULL",
            &[&user, &id],
        )?,
    };
    Ok(())
}

pub(crate) fn outcome(db: &mut dyn Db, id: &str) -> Result<Option<Option<String>>> {
    Ok(opt(db, "SELECT outcome FROM sessions WHERE id = $1", &[&id])?.map(|r| r.get(0)))
}

/// One step of a session's life; `false` when an `End` found no session.
pub(crate) fn write(db: &mut dyn Db, w: &SessionWrite<'_>) -> Result<bool> {
    let n = match *w {
        SessionWrite::Start {
            id,
            room,
            directory,
            source,
            at,
        } => db.execute(
            "INSERT INTO sessions (id, room, directory, source, started_at) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (id) DO NOTHING",
            &[&id, &room, &directory, &source, &at],
        )?,
        SessionWrite::End { id, summary, at } => db.execute(
            "UPDATE sessions SET ended_at = $2, summary = coalesce($3, summary) WHERE id = $1",
            &[&id, &at, &summary],
        )?,
        SessionWrite::Handoff {
            id,
            room,
            summary,
            at,
        } => db.execute(
            "INSERT INTO sessions (id, room, started_at, ended_at, summary) VALUES ($1, $2, $3, $3, $4)
             ON CONFLICT (id) DO UPDATE SET ended_at = coalesce(sessions.ended_at, $3), summary = $4",
            &[&id, &room, &at, &summary],
        )?,
        SessionWrite::Outcome {
            id,
            room,
            outcome,
            at,
        } => db.execute(
            "INSERT INTO sessions (id, room, started_at, outcome, outcome_at) VALUES ($1, $2, $3, $4, $3)
             ON CONFLICT (id) DO UPDATE SET outcome = $4, outcome_at = $3",
            &[&id, &room, &at, &outcome],
        )?,
    };
    Ok(n > 0 || !matches!(w, SessionWrite::End { .. }))
}

pub(crate) fn add_prompt(
    db: &mut dyn Db,
    session_id: Option<&str>,
    room: &str,
    content: &str,
    at: i64,
) -> Result<i64> {
    let row = opt(
        db,
        "INSERT INTO prompts (session_id, room, content, created_at) VALUES ($1, $2, $3, $4) RETURNING id",
        &[&session_id, &room, &content, &at],
    )?;
    Ok(row.expect("INSERT … RETURNING returns the row").get(0))
}

pub(crate) fn rooms(db: &mut dyn Db) -> Result<Vec<RoomInfo>> {
    Ok(db
        .query(
            "SELECT r.room,
                    (SELECT count(*) FROM memories m WHERE m.room = r.room AND m.tier != 'trash'),
                    (SELECT count(*) FROM sessions s WHERE s.room = r.room),
                    (SELECT count(*) FROM prompts p WHERE p.room = r.room)
             FROM (SELECT room FROM memories UNION SELECT room FROM sessions UNION SELECT room FROM prompts) r
             ORDER BY r.room COLLATE \"C\"",
            &[],
        )?
        .iter()
        .map(|r| RoomInfo {
            name: r.get(0),
            memories: r.get::<_, i64>(1) as u64,
            sessions: r.get::<_, i64>(2) as u64,
            prompts: r.get::<_, i64>(3) as u64,
        })
        .collect())
}
