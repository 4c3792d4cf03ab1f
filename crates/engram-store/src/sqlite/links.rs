//! The one owner of `links` rows: typed, weighted edges between memories (explicit,
//! semantic, co-recall, supersedes, derived-from, the judged relations).

use crate::Result;
use crate::storage::rows::{LinkRow, LinkView, LinkWeight, LinkWrite};
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

/// The links that start at `id`, by destination then kind.
pub(crate) fn from(conn: &Connection, id: MemoryId) -> Result<Vec<LinkView>> {
    let mut stmt = conn
        .prepare_cached("SELECT dst, kind, weight FROM links WHERE src = ?1 ORDER BY dst, kind")?;
    let mut links = Vec::new();
    for row in stmt.query_map([id], |r| Ok((r.get(0)?, r.get::<_, String>(1)?, r.get(2)?)))? {
        let (dst, kind, weight) = row?;
        if let Ok(kind) = LinkKind::parse(&kind) {
            links.push(LinkView {
                src: id,
                dst,
                kind,
                weight,
            });
        }
    }
    Ok(links)
}

/// Deletes one link; whether there was one.
pub(crate) fn delete(
    conn: &Connection,
    src: MemoryId,
    dst: MemoryId,
    kind: LinkKind,
) -> Result<bool> {
    Ok(conn
        .prepare_cached("DELETE FROM links WHERE src = ?1 AND dst = ?2 AND kind = ?3")?
        .execute(params![src, dst, kind.as_str()])?
        > 0)
}

/// Links after `(src, dst, kind)`, in that order (export).
pub(crate) fn page(
    conn: &Connection,
    after: Option<(MemoryId, MemoryId, &str)>,
    limit: usize,
) -> Result<Vec<LinkRow<MemoryId>>> {
    let (s, d, k) = after.unwrap_or((MemoryId::MIN, MemoryId::MIN, ""));
    let mut stmt = conn.prepare_cached(
        "SELECT src, dst, kind, weight, created_at, updated_at, note FROM links
         WHERE (src, dst, kind) > (?1, ?2, ?3) ORDER BY src, dst, kind LIMIT ?4",
    )?;
    let mut out = Vec::new();
    let rows = stmt.query_map(params![s, d, k, limit as i64], |r| {
        Ok((
            r.get::<_, MemoryId>(0)?,
            r.get::<_, MemoryId>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, f64>(3)?,
            r.get::<_, i64>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, Option<String>>(6)?,
        ))
    })?;
    for row in rows {
        let (src, dst, kind, weight, created_at, updated_at, note) = row?;
        out.push(LinkRow {
            src,
            dst,
            kind: LinkKind::parse(&kind)?,
            weight,
            created_at,
            updated_at,
            note,
        });
    }
    Ok(out)
}

/// Inserts a link as given unless one of its kind joins the same two; whether it was stored.
pub(crate) fn insert_row(conn: &Connection, l: &LinkRow<MemoryId>) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "INSERT OR IGNORE INTO links (src, dst, kind, weight, created_at, updated_at, note)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            l.src,
            l.dst,
            l.kind.as_str(),
            l.weight,
            l.created_at,
            l.updated_at,
            l.note
        ])?
        > 0)
}
