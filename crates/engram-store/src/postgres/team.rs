//! The owner of `team_users` on PostgreSQL and the visibility query, as `sqlite/team.rs`.

use super::memories::{COLUMNS, from_row};
use super::{Db, opt};
use crate::Result;
use crate::storage::rows::TeamUser;

/// As SQLite's: private by `engram_core::team::is_private`, written by someone else.
const PRIVATE_OF_OTHERS: &str =
    "(room = 'private' OR substr(room, 1, 8) = 'private/' OR kind = 'preference')
     AND author IS DISTINCT FROM $1";

pub(crate) fn private_of_others(db: &mut dyn Db, viewer: &str) -> Result<Vec<engram_core::Memory>> {
    let sql = format!("SELECT {COLUMNS} FROM memories WHERE {PRIVATE_OF_OTHERS}");
    db.query(&sql, &[&viewer])?.iter().map(from_row).collect()
}

pub(crate) fn users(db: &mut dyn Db) -> Result<Vec<TeamUser>> {
    Ok(db
        .query(
            "SELECT name, created_at, token_hash IS NOT NULL, token_changed_at FROM team_users
             ORDER BY name COLLATE \"C\"",
            &[],
        )?
        .iter()
        .map(|r| TeamUser {
            name: r.get(0),
            created_at: r.get(1),
            active: r.get(2),
            token_changed_at: r.get(3),
        })
        .collect())
}

pub(crate) fn user_by_token(db: &mut dyn Db, token_hash: &str) -> Result<Option<String>> {
    Ok(opt(
        db,
        "SELECT name FROM team_users WHERE token_hash = $1",
        &[&token_hash],
    )?
    .map(|r| r.get(0)))
}

/// `false` when the name is taken.
pub(crate) fn add_user(db: &mut dyn Db, name: &str, token_hash: &str, at: i64) -> Result<bool> {
    Ok(db.execute(
        "INSERT INTO team_users (name, token_hash, created_at, token_changed_at)
         VALUES ($1, $2, $3, $3) ON CONFLICT (name) DO NOTHING",
        &[&name, &token_hash, &at],
    )? == 1)
}

/// `false` when there is no such user.
pub(crate) fn set_token(
    db: &mut dyn Db,
    name: &str,
    token_hash: Option<&str>,
    at: i64,
) -> Result<bool> {
    Ok(db.execute(
        "UPDATE team_users SET token_hash = $2, token_changed_at = $3 WHERE name = $1",
        &[&name, &token_hash, &at],
    )? == 1)
}
