//! The one owner of `vault_files` on PostgreSQL, and the reader of the `changes` log the
//! triggers of `db.rs` fill (which feeds the vault).

use super::{Db, opt};
use crate::Result;
use crate::storage::rows::{Change, VaultFile, VaultFileWrite};

pub(crate) fn files(db: &mut dyn Db, uid: Option<&str>) -> Result<Vec<VaultFile>> {
    let rows = match uid {
        None => db.query("SELECT path, uid, hash, size, mtime FROM vault_files", &[])?,
        Some(uid) => db.query(
            "SELECT path, uid, hash, size, mtime FROM vault_files WHERE uid = $1 ORDER BY path COLLATE \"C\"",
            &[&uid],
        )?,
    };
    Ok(rows
        .iter()
        .map(|r| VaultFile {
            path: r.get(0),
            uid: r.get(1),
            hash: r.get(2),
            size: r.get(3),
            mtime: r.get(4),
        })
        .collect())
}

pub(crate) fn write(db: &mut dyn Db, w: &VaultFileWrite<'_>) -> Result<()> {
    match w {
        VaultFileWrite::Record(f) => db.execute(
            "INSERT INTO vault_files (path, uid, hash, size, mtime) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (path) DO UPDATE SET uid = excluded.uid, hash = excluded.hash, size = excluded.size, mtime = excluded.mtime",
            &[&f.path, &f.uid, &f.hash, &f.size, &f.mtime],
        )?,
        VaultFileWrite::MarkForRewrite { path, uid } => db.execute(
            "INSERT INTO vault_files (path, uid, hash, size, mtime) VALUES ($1, $2, '', -1, -1)
             ON CONFLICT (path) DO UPDATE SET uid = excluded.uid",
            &[path, uid],
        )?,
        VaultFileWrite::Forget { path } => {
            db.execute("DELETE FROM vault_files WHERE path = $1", &[path])?
        }
        VaultFileWrite::ForgetAll => db.execute("DELETE FROM vault_files", &[])?,
    };
    Ok(())
}

pub(crate) fn last_change(db: &mut dyn Db) -> Result<i64> {
    Ok(opt(db, "SELECT coalesce(max(seq), 0) FROM changes", &[])?.map_or(0, |r| r.get(0)))
}

pub(crate) fn changes(db: &mut dyn Db, after: i64, upto: i64, limit: usize) -> Result<Vec<Change>> {
    Ok(db
        .query(
            "SELECT seq, memory_id, uid FROM changes WHERE seq > $1 AND seq <= $2 ORDER BY seq LIMIT $3",
            &[&after, &upto, &(limit as i64)],
        )?
        .iter()
        .map(|r| Change {
            seq: r.get(0),
            memory_id: r.get(1),
            uid: r.get(2),
        })
        .collect())
}
