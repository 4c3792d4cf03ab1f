//! A backup's database file, SQLite's side: reading what it holds (`integrity_check`, the
//! schema version, its memories) and copying it into a live store through SQLite's online
//! backup API. `files/backup.rs` keeps the folder, the vault and the messages.
//!
//! Only the SQLite backend writes a backup file ([`crate::storage::Backend::copy_to`]); a
//! server database is backed up with its own tool, so a backup folder always holds a
//! SQLite file.

use crate::{Error, Result, db};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `(schema version, memories)` of a backup file opened read-only, or why it is unusable.
pub(crate) fn read(db_file: &Path) -> Result<std::result::Result<(i64, i64), String>> {
    let conn = Connection::open_with_flags(
        db_file,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let check: std::result::Result<Vec<String>, rusqlite::Error> = (|| {
        let mut st = conn.prepare("PRAGMA integrity_check")?;
        st.query_map([], |r| r.get::<_, String>(0))?.collect()
    })();
    match check {
        Ok(rows) if rows == ["ok"] => {}
        Ok(rows) => return Ok(Err(format!("integrity_check: {}", rows.join("; ")))),
        Err(e) => return Ok(Err(e.to_string())),
    }
    let version: i64 = match conn.query_row("PRAGMA user_version", [], |r| r.get(0)) {
        Ok(v) => v,
        Err(e) => return Ok(Err(e.to_string())),
    };
    if version < 1 {
        return Ok(Ok((version, 0)));
    }
    match conn.query_row("SELECT count(*) FROM memories", [], |r| r.get(0)) {
        Ok(n) => Ok(Ok((version, n))),
        Err(e) => Ok(Err(e.to_string())),
    }
}

/// Copies the backup file `source_db` into the store at `db_path`: refuses a store that
/// holds memories unless `force`, keeps such a store at `keep` first, renews the store's
/// generation and drops the saved vector index. Returns (where the replaced store was
/// kept, the memories restored).
pub(crate) fn copy_in(
    db_path: &Path,
    source_db: &Path,
    force: bool,
    keep: &Path,
) -> Result<(Option<PathBuf>, i64)> {
    let mut live = db::open(db_path)?;
    let existing: i64 = live.query_row("SELECT count(*) FROM memories", [], |r| r.get(0))?;
    if existing > 0 && !force {
        return Err(engram_core::InputError::new(
            "force",
            format!(
                "the store at {} holds {existing} memories; pass --force to replace it (it is kept as engram.db.before-restore-<timestamp>)",
                db_path.display()
            ),
        )
        .into());
    }
    let previous_db = if existing > 0 {
        db::vacuum_into(&live, keep)?;
        crate::fsutil::make_private(keep).map_err(|source| Error::io(keep, source))?;
        Some(keep.to_path_buf())
    } else {
        None
    };
    super::forget_saved_index(db_path);
    {
        let src = Connection::open_with_flags(
            source_db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        let b = rusqlite::backup::Backup::new(&src, &mut live)?;
        // One step: the destination stays write-locked for the whole copy (other writers
        // wait on the busy timeout), and the source is read in one snapshot.
        let started = std::time::Instant::now();
        loop {
            match b.step(-1)? {
                rusqlite::backup::StepResult::Done => break,
                _ if started.elapsed() > db::BUSY_TIMEOUT => {
                    return Err(Error::Db(rusqlite::Error::SqliteFailure(
                        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
                        Some("the store stayed locked by another process".into()),
                    )));
                }
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
    drop(live);
    // An older backup is brought up to this build's schema.
    let live = db::open(db_path)?;
    live.execute(
        "INSERT INTO meta (key, value) VALUES ('store_generation', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [format!("{:x}", crate::fsutil::unique())],
    )?;
    let memories: i64 = live.query_row("SELECT count(*) FROM memories", [], |r| r.get(0))?;
    drop(live);
    // A saved vector index described the replaced store (removed before the copy too,
    // for a reader in between); a new generation makes any index still held in memory by
    // a running server refuse to save over it as this store's.
    super::forget_saved_index(db_path);
    Ok((previous_db, memories))
}
