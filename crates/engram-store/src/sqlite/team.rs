//! The owner of `team_users` (a team server's people and their token hashes) and the
//! one query behind visibility: the memories private to someone other than a viewer.

use super::memories::{COLUMNS, from_row};
use crate::Result;
use crate::storage::rows::TeamUser;
use rusqlite::{Connection, OptionalExtension, params};

/// The memory rows `viewer` may not see: private by `engram_core::team::is_private` (the
/// `private` room and its `private/…` sub-rooms, preferences) and written by someone else
/// (or by no one: a local write). Kept in step with the core rule by
/// `tests/team_visibility.rs`, on both backends. Its first term is the partial index
/// `memories_private`'s own condition, word for word, so the index is read, not every row.
pub(crate) const PRIVATE_OF_OTHERS: &str =
    "(room = 'private' OR substr(room, 1, 8) = 'private/' OR kind = 'preference')
     AND (author IS NULL OR author <> ?1)";

pub(crate) fn private_of_others(
    conn: &Connection,
    viewer: &str,
) -> Result<Vec<engram_core::Memory>> {
    let sql = format!("SELECT {COLUMNS} FROM memories WHERE {PRIVATE_OF_OTHERS}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([viewer], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn users(conn: &Connection) -> Result<Vec<TeamUser>> {
    let mut stmt = conn.prepare_cached(
        "SELECT name, created_at, token_hash IS NOT NULL, token_changed_at FROM team_users ORDER BY name",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(TeamUser {
            name: r.get(0)?,
            created_at: r.get(1)?,
            active: r.get(2)?,
            token_changed_at: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn user_by_token(conn: &Connection, token_hash: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT name FROM team_users WHERE token_hash = ?1")?
        .query_row([token_hash], |r| r.get(0))
        .optional()?)
}

/// `false` when the name is taken.
pub(crate) fn add_user(conn: &Connection, name: &str, token_hash: &str, at: i64) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "INSERT INTO team_users (name, token_hash, created_at, token_changed_at)
             VALUES (?1, ?2, ?3, ?3) ON CONFLICT (name) DO NOTHING",
        )?
        .execute(params![name, token_hash, at])?
        == 1)
}

/// `false` when there is no such user.
pub(crate) fn set_token(
    conn: &Connection,
    name: &str,
    token_hash: Option<&str>,
    at: i64,
) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "UPDATE team_users SET token_hash = ?2, token_changed_at = ?3 WHERE name = ?1",
        )?
        .execute(params![name, token_hash, at])?
        == 1)
}
