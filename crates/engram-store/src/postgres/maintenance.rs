//! The one owner of `maintenance_runs`, `meta` and the pruning of `changes` on PostgreSQL.

use super::{Db, opt};
use crate::Result;

pub(crate) fn log_run(
    db: &mut dyn Db,
    started: i64,
    finished: i64,
    dry_run: bool,
    report: &str,
) -> Result<()> {
    db.execute(
        "INSERT INTO maintenance_runs (started_at, finished_at, dry_run, report) VALUES ($1, $2, $3, $4)",
        &[&started, &finished, &dry_run, &report],
    )?;
    Ok(())
}

pub(crate) fn runs(db: &mut dyn Db, limit: usize) -> Result<Vec<String>> {
    Ok(db
        .query(
            "SELECT report FROM maintenance_runs ORDER BY id DESC LIMIT $1",
            &[&(limit as i64)],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub(crate) fn prune_changes(db: &mut dyn Db, all: bool) -> Result<()> {
    if all {
        db.execute("DELETE FROM changes", &[])?;
    } else {
        db.execute(
            "DELETE FROM changes WHERE seq <= COALESCE(
                (SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'vault_seq'), 0)",
            &[],
        )?;
    }
    Ok(())
}

pub(crate) fn meta(db: &mut dyn Db, key: &str) -> Result<Option<String>> {
    Ok(opt(db, "SELECT value FROM meta WHERE key = $1", &[&key])?.map(|r| r.get(0)))
}

pub(crate) fn set_meta(db: &mut dyn Db, key: &str, value: &str) -> Result<()> {
    db.execute(
        "INSERT INTO meta (key, value) VALUES ($1, $2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        &[&key, &value],
    )?;
    Ok(())
}

pub(crate) fn schema_version(db: &mut dyn Db) -> Result<i64> {
    Ok(meta(db, "schema_version")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// Moves every memory, session and prompt of room `from` into `to`; returns how many
/// memories moved.
pub(crate) fn move_room(db: &mut dyn Db, from: &str, to: &str) -> Result<u64> {
    let moved = super::memories::move_room(db, from, to)?;
    db.execute(
        "UPDATE sessions SET room = $2 WHERE room = $1",
        &[&from, &to],
    )?;
    db.execute(
        "UPDATE prompts SET room = $2 WHERE room = $1",
        &[&from, &to],
    )?;
    Ok(moved)
}
