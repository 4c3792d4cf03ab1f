//! The one owner of `maintenance_runs` (what each run did), `meta` (key/value settings of
//! the store: cursors, last run times) and the pruning of `changes`, the trigger-fed log
//! the vault drains.

use crate::Result;
use rusqlite::{Connection, OptionalExtension, params};

pub(crate) fn log_run(
    conn: &Connection,
    started: i64,
    finished: i64,
    dry_run: bool,
    report: &str,
) -> Result<()> {
    conn.execute(
        "INSERT INTO maintenance_runs (started_at, finished_at, dry_run, report) VALUES (?1, ?2, ?3, ?4)",
        params![started, finished, dry_run as i64, report],
    )?;
    Ok(())
}

/// The logged reports, newest first.
pub(crate) fn runs(conn: &Connection, limit: usize) -> Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT report FROM maintenance_runs ORDER BY id DESC LIMIT ?1")?;
    let rows = stmt.query_map([limit as i64], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Drops the change log, all of it or what the vault has already written.
pub(crate) fn prune_changes(conn: &Connection, all: bool) -> Result<()> {
    if all {
        conn.execute("DELETE FROM changes", [])?;
    } else {
        conn.execute(
            "DELETE FROM changes WHERE seq <= COALESCE(
                (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'vault_seq'), 0)",
            [],
        )?;
    }
    Ok(())
}

pub(crate) fn meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([key], |r| r.get(0))
        .optional()?)
}

pub(crate) fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO meta (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )?
    .execute([key, value])?;
    Ok(())
}

/// Moves every memory, session and prompt of room `from` into `to`; returns how many
/// memories moved.
pub(crate) fn move_room(conn: &Connection, from: &str, to: &str) -> Result<u64> {
    let moved = super::memories::move_room(conn, from, to)?;
    conn.execute(
        "UPDATE sessions SET room = ?2 WHERE room = ?1",
        params![from, to],
    )?;
    conn.execute(
        "UPDATE prompts SET room = ?2 WHERE room = ?1",
        params![from, to],
    )?;
    Ok(moved)
}
