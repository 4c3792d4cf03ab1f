//! The one owner of `links` rows: typed, weighted edges between memories (explicit,
//! semantic, co-recall, supersedes, derived-from, the judged relations).

use crate::Result;
use crate::storage::rows::{LinkView, LinkWeight, LinkWrite};
use engram_core::{LinkKind, MemoryId};
use rusqlite::{Connection, OptionalExtension, params};

/// Inserts a link or updates its weight (set or grown), capped.
pub(crate) fn upsert(conn: &Connection, l: &LinkWrite) -> Result<()> {
    let sql = match l.mode {
        LinkWeight::Set => {
            "INSERT INTO links (src, dst, kind, weight, created_at, updated_at) VALUES (?1, ?2, ?3, min(?4, ?5), ?6, ?6)
             ON CONFLICT (src, dst, kind) DO UPDATE SET weight = min(excluded.weight, ?5), updated_at = ?6"
        }
        LinkWeight::Add => {
            "INSERT INTO links (src, dst, kind, weight, created_at, updated_at) VALUES (?1, ?2, ?3, min(?4, ?5), ?6, ?6)
             ON CONFLICT (src, dst, kind) DO UPDATE SET weight = min(links.weight + ?4, ?5), updated_at = ?6"
        }
    };
    conn.prepare_cached(sql)?.execute(params![
        l.src,
        l.dst,
        l.kind.as_str(),
        l.weight,
        l.cap,
        l.at
    ])?;
    Ok(())
}

pub(crate) fn around(conn: &Connection, id: MemoryId) -> Result<Vec<LinkView>> {
    let mut stmt = conn.prepare_cached(
        "SELECT src, dst, kind, weight FROM links WHERE src = ?1 OR dst = ?1 ORDER BY kind, src, dst",
    )?;
    let mut links = Vec::new();
    for row in stmt.query_map([id], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?, r.get(3)?))
    })? {
        let (src, dst, kind, weight) = row?;
        if let Ok(kind) = LinkKind::parse(&kind) {
            links.push(LinkView {
                src,
                dst,
                kind,
                weight,
            });
        }
    }
    Ok(links)
}

pub(crate) fn count_around(conn: &Connection, id: MemoryId) -> Result<u64> {
    Ok(conn
        .prepare_cached("SELECT count(*) FROM links WHERE src = ?1 OR dst = ?1")?
        .query_row([id], |r| r.get::<_, i64>(0))? as u64)
}

pub(crate) fn delete_around(conn: &Connection, id: MemoryId) -> Result<()> {
    conn.prepare_cached("DELETE FROM links WHERE src = ?1 OR dst = ?1")?
        .execute([id])?;
    Ok(())
}

/// The newest memory that supersedes `id`.
pub(crate) fn successor(conn: &Connection, id: MemoryId) -> Result<Option<MemoryId>> {
    Ok(conn
        .prepare_cached(
            "SELECT src FROM links WHERE dst = ?1 AND kind = 'supersedes' ORDER BY created_at DESC, src DESC LIMIT 1",
        )?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

/// Active memories linked to `id`, either way.
pub(crate) fn active_neighbours(conn: &Connection, id: MemoryId) -> Result<Vec<MemoryId>> {
    let mut stmt = conn.prepare_cached(
        "SELECT l.dst FROM links l JOIN memories m ON m.id = l.dst WHERE l.src = ?1 AND m.tier = 'active'
         UNION SELECT l.src FROM links l JOIN memories m ON m.id = l.src WHERE l.dst = ?1 AND m.tier = 'active'",
    )?;
    let rows = stmt.query_map([id], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every link with both ends in `ids`, in table order; a kind this build does not know is
/// skipped.
pub(crate) fn among(conn: &Connection, ids: &[MemoryId]) -> Result<Vec<LinkView>> {
    let ids: std::collections::HashSet<MemoryId> = ids.iter().copied().collect();
    let mut stmt = conn.prepare("SELECT src, dst, kind, weight FROM links")?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?, r.get(3)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (src, dst, kind, weight) = row?;
        if ids.contains(&src)
            && ids.contains(&dst)
            && let Ok(kind) = LinkKind::parse(&kind)
        {
            out.push(LinkView {
                src,
                dst,
                kind,
                weight,
            });
        }
    }
    Ok(out)
}
