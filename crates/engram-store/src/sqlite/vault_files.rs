//! The one owner of `vault_files` (what engram last wrote or read at each vault path) and
//! the reader of the `changes` log the triggers of `db.rs` fill, which feeds the vault.

use crate::Result;
use crate::storage::rows::{Change, VaultFile, VaultFileWrite};
use engram_core::MemoryId;
use rusqlite::{Connection, params};

pub(crate) fn files(conn: &Connection, uid: Option<&str>) -> Result<Vec<VaultFile>> {
    let map = |r: &rusqlite::Row<'_>| {
        Ok(VaultFile {
            path: r.get(0)?,
            uid: r.get(1)?,
            hash: r.get(2)?,
            size: r.get(3)?,
            mtime: r.get(4)?,
        })
    };
    Ok(match uid {
        None => conn
            .prepare_cached("SELECT path, uid, hash, size, mtime FROM vault_files")?
            .query_map([], map)?
            .collect::<rusqlite::Result<_>>()?,
        Some(uid) => conn
            .prepare_cached(
                "SELECT path, uid, hash, size, mtime FROM vault_files WHERE uid = ?1 ORDER BY path",
            )?
            .query_map([uid], map)?
            .collect::<rusqlite::Result<_>>()?,
    })
}

pub(crate) fn write(conn: &Connection, w: &VaultFileWrite<'_>) -> Result<()> {
    match w {
        VaultFileWrite::Record(f) => {
            conn.prepare_cached(
                "INSERT INTO vault_files (path, uid, hash, size, mtime) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (path) DO UPDATE SET uid = excluded.uid, hash = excluded.hash, size = excluded.size, mtime = excluded.mtime",
            )?
            .execute(params![f.path, f.uid, f.hash, f.size, f.mtime])?;
        }
        VaultFileWrite::MarkForRewrite { path, uid } => {
            conn.prepare_cached(
                "INSERT INTO vault_files (path, uid, hash, size, mtime) VALUES (?1, ?2, '', -1, -1)
                 ON CONFLICT (path) DO UPDATE SET uid = excluded.uid",
            )?
            .execute(params![path, uid])?;
        }
        VaultFileWrite::Forget { path } => {
            conn.prepare_cached("DELETE FROM vault_files WHERE path = ?1")?
                .execute([path])?;
        }
        VaultFileWrite::ForgetAll => {
            conn.execute("DELETE FROM vault_files", [])?;
        }
    }
    Ok(())
}

pub(crate) fn last_change(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT coalesce(max(seq), 0) FROM changes")?
        .query_row([], |r| r.get(0))?)
}

pub(crate) fn changes(
    conn: &Connection,
    after: i64,
    upto: i64,
    limit: usize,
) -> Result<Vec<Change>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, memory_id, uid FROM changes WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![after, upto, limit as i64], |r| {
        Ok(Change {
            seq: r.get(0)?,
            memory_id: r.get::<_, MemoryId>(1)?,
            uid: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
