//! The one owner of `links` rows on PostgreSQL: typed, weighted edges between memories.

use super::{Db, count, opt};
use crate::Result;
use crate::storage::rows::{LinkView, LinkWeight, LinkWrite};
use engram_core::{LinkKind, MemoryId};
use postgres::Row;

/// Inserts a link or updates its weight (set or grown), capped.
pub(crate) fn upsert(db: &mut dyn Db, l: &LinkWrite) -> Result<()> {
    let sql = match l.mode {
        LinkWeight::Set => {
            "INSERT INTO links (src, dst, kind, weight, created_at, updated_at) VALUES ($1, $2, $3, least($4::float8, $5::float8), $6, $6)
             ON CONFLICT (src, dst, kind) DO UPDATE SET weight = least(excluded.weight, $5::float8), updated_at = $6"
        }
        LinkWeight::Add => {
            "INSERT INTO links (src, dst, kind, weight, created_at, updated_at) VALUES ($1, $2, $3, least($4::float8, $5::float8), $6, $6)
             ON CONFLICT (src, dst, kind) DO UPDATE SET weight = least(links.weight + $4::float8, $5::float8), updated_at = $6"
        }
    };
    db.execute(
        sql,
        &[&l.src, &l.dst, &l.kind.as_str(), &l.weight, &l.cap, &l.at],
    )?;
    Ok(())
}

/// Link rows as `show` lists them; a kind this build does not know is skipped.
fn views(rows: Vec<Row>) -> Vec<LinkView> {
    rows.iter()
        .filter_map(|r| {
            Some(LinkView {
                src: r.get(0),
                dst: r.get(1),
                kind: LinkKind::parse(r.get::<_, &str>(2)).ok()?,
                weight: r.get(3),
            })
        })
        .collect()
}

/// `ORDER BY kind` compares bytes (`COLLATE "C"`), as SQLite's default collation does.
pub(crate) fn around(db: &mut dyn Db, id: MemoryId) -> Result<Vec<LinkView>> {
    Ok(views(db.query(
        "SELECT src, dst, kind, weight FROM links WHERE src = $1 OR dst = $1
         ORDER BY kind COLLATE \"C\", src, dst",
        &[&id],
    )?))
}

pub(crate) fn count_around(db: &mut dyn Db, id: MemoryId) -> Result<u64> {
    count(
        db,
        "SELECT count(*) FROM links WHERE src = $1 OR dst = $1",
        &[&id],
    )
}

pub(crate) fn successor(db: &mut dyn Db, id: MemoryId) -> Result<Option<MemoryId>> {
    Ok(opt(
        db,
        "SELECT src FROM links WHERE dst = $1 AND kind = 'supersedes' ORDER BY created_at DESC, src DESC LIMIT 1",
        &[&id],
    )?
    .map(|r| r.get(0)))
}

/// Active memories linked to `id`, either way, ascending (as SQLite's `UNION` returns them).
pub(crate) fn active_neighbours(db: &mut dyn Db, id: MemoryId) -> Result<Vec<MemoryId>> {
    Ok(db
        .query(
            "SELECT l.dst FROM links l JOIN memories m ON m.id = l.dst WHERE l.src = $1 AND m.tier = 'active'
             UNION SELECT l.src FROM links l JOIN memories m ON m.id = l.src WHERE l.dst = $1 AND m.tier = 'active'
             ORDER BY 1",
            &[&id],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Every link with both ends in `ids`, in key order (SQLite's table order).
pub(crate) fn among(db: &mut dyn Db, ids: &[MemoryId]) -> Result<Vec<LinkView>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(views(db.query(
        "SELECT src, dst, kind, weight FROM links WHERE src = ANY($1) AND dst = ANY($1)
         ORDER BY src, dst, kind COLLATE \"C\"",
        &[&ids],
    )?))
}

/// The links that start at `id`, by destination then kind.
pub(crate) fn from(db: &mut dyn Db, id: MemoryId) -> Result<Vec<LinkView>> {
    Ok(views(db.query(
        "SELECT src, dst, kind, weight FROM links WHERE src = $1 ORDER BY dst, kind COLLATE \"C\"",
        &[&id],
    )?))
}

/// Deletes one link; whether there was one.
pub(crate) fn delete(
    db: &mut dyn Db,
    src: MemoryId,
    dst: MemoryId,
    kind: LinkKind,
) -> Result<bool> {
    Ok(db.execute(
        "DELETE FROM links WHERE src = $1 AND dst = $2 AND kind = $3",
        &[&src, &dst, &kind.as_str()],
    )? > 0)
}

/// Deletes every link from or to a memory (a purge, before its row goes).
pub(crate) fn delete_around(db: &mut dyn Db, id: MemoryId) -> Result<()> {
    db.execute("DELETE FROM links WHERE src = $1 OR dst = $1", &[&id])?;
    Ok(())
}
