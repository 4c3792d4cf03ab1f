//! The vault's own rows and its few writes of others': `vault_files` (what engram last
//! wrote or read at each path), the `meta` cursor over the `changes` log, and a hand edit
//! applied to `memories`, `revisions` and `links`. Every SQL statement of the vault is here
//! (or in `sync.rs`'s drain of `changes`), so a row owner can take them over in one place.

use super::*;
use crate::storage::rows::MemoryPatch;

/// What engram last wrote or read at a path.
pub(super) struct Recorded {
    pub(super) uid: String,
    pub(super) hash: String,
    pub(super) size: i64,
    pub(super) mtime: i64,
}

pub(super) fn recorded(conn: &Connection) -> Result<HashMap<String, Recorded>> {
    let mut stmt = conn.prepare("SELECT path, uid, hash, size, mtime FROM vault_files")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            Recorded {
                uid: r.get(1)?,
                hash: r.get(2)?,
                size: r.get(3)?,
                mtime: r.get(4)?,
            },
        ))
    })?;
    let mut out = HashMap::new();
    for r in rows {
        let (p, rec) = r?;
        out.insert(p, rec);
    }
    Ok(out)
}

pub(super) fn record_file(
    conn: &Connection,
    root: &Path,
    rel: &str,
    uid: &str,
    hash: &str,
) -> Result<()> {
    let meta = std::fs::metadata(root.join(rel)).map_err(io_err(&root.join(rel)))?;
    conn.prepare_cached(
        "INSERT INTO vault_files (path, uid, hash, size, mtime) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (path) DO UPDATE SET uid = excluded.uid, hash = excluded.hash, size = excluded.size, mtime = excluded.mtime",
    )?
    .execute(params![rel, uid, hash, meta.len() as i64, mtime_ns(&meta)])?;
    Ok(())
}

pub(super) fn meta_get(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

pub(super) fn meta_set(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

pub(super) fn max_seq(conn: &Connection) -> Result<i64> {
    Ok(
        conn.query_row("SELECT coalesce(max(seq), 0) FROM changes", [], |r| {
            r.get(0)
        })?,
    )
}

pub(super) fn load_by_id(conn: &Connection, id: MemoryId) -> Result<Option<Memory>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"
        ))?
        .query_row([id], row_to_memory)
        .optional()?)
}

/// The file stem a memory has (its current file) or will get.
pub(super) fn stem_for(conn: &Connection, m: &Memory) -> Result<String> {
    let path: Option<String> = conn
        .prepare_cached("SELECT path FROM vault_files WHERE uid = ?1 ORDER BY path LIMIT 1")?
        .query_row([&m.uid], |r| r.get(0))
        .optional()?;
    Ok(match path {
        Some(p) => stem_of(&p).to_string(),
        None => new_stem(m),
    })
}

pub(super) fn add_revision(
    conn: &Connection,
    m: &Memory,
    content: &str,
    reason: &str,
    at: Millis,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, NULL)",
    )?
    .execute(params![
        m.id,
        content,
        m.title,
        m.kind.as_str(),
        m.importance,
        serde_json::to_string(&m.tags).expect("tags serialise"),
        reason,
        at
    ])?;
    Ok(())
}

/// Whether two memories differ in anything a file states (not `updated_at` or `id`).
pub(super) fn differs(a: &Memory, b: &Memory) -> bool {
    a.content != b.content
        || a.title != b.title
        || a.kind != b.kind
        || (a.importance - b.importance).abs() > 1e-9
        || a.tags != b.tags
        || a.room != b.room
        || a.topic_key != b.topic_key
        || a.pinned != b.pinned
        || a.tier != b.tier
        || a.source != b.source
        || a.session_id != b.session_id
        || a.created_at != b.created_at
        || a.valid_from != b.valid_from
        || a.valid_to != b.valid_to
        || a.metadata != b.metadata
}

/// Stores a hand edit: the previous text becomes a revision (`vault_edit`).
pub(super) fn update_from_file(
    conn: &Connection,
    old: &Memory,
    new: &Memory,
    now: Millis,
) -> Result<()> {
    let mut new = new.clone();
    check_memory(&mut new)?;
    let text_changed = old.content != new.content || old.title != new.title;
    if text_changed
        || old.kind != new.kind
        || old.importance != new.importance
        || old.tags != new.tags
    {
        add_revision(conn, old, &old.content, "vault_edit", now)?;
    }
    crate::sqlite::memories::patch(
        conn,
        old.id,
        &MemoryPatch {
            content: Some(new.content.clone()),
            title: Some(new.title.clone()),
            kind: Some(new.kind),
            importance: Some(new.importance),
            tags: Some(new.tags.clone()),
            room: Some(new.room.clone()),
            topic_key: Some(new.topic_key.clone()),
            pinned: Some(new.pinned),
            tier: Some(new.tier),
            created_at: Some(new.created_at),
            valid_from: Some(new.valid_from),
            valid_to: Some(new.valid_to),
            source: Some(new.source.clone()),
            session_id: Some(new.session_id.clone()),
            metadata: Some(new.metadata.clone()),
            updated_at: Some(now),
            ..Default::default()
        },
    )?;
    index_text(
        conn,
        old.id,
        new.title.as_deref(),
        &new.content,
        &new.tags,
        new.metadata.get("context").and_then(|c| c.as_str()),
    )?;
    if text_changed {
        conn.execute("DELETE FROM embeddings WHERE memory_id = ?1", [old.id])?;
    }
    add_event(
        conn,
        old.id,
        EventKind::Update,
        1.0,
        now,
        None,
        Some("vault edit"),
    )?;
    Ok(())
}

/// Makes a memory's outgoing links what its file lists. Returns whether anything changed.
pub(super) fn set_links(
    conn: &Connection,
    src: MemoryId,
    want: &[(MemoryId, LinkKind, f64)],
    now: Millis,
) -> Result<bool> {
    let have: Vec<(MemoryId, String, f64)> = conn
        .prepare_cached("SELECT dst, kind, weight FROM links WHERE src = ?1")?
        .query_map([src], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let same = have.len() == want.len()
        && want.iter().all(|(d, k, w)| {
            have.iter()
                .any(|(hd, hk, hw)| hd == d && hk == k.as_str() && (hw - w).abs() < 5e-4)
        });
    if same {
        return Ok(false);
    }
    for (d, k, _) in &have {
        if !want.iter().any(|(wd, wk, _)| wd == d && wk.as_str() == k) {
            conn.execute(
                "DELETE FROM links WHERE src = ?1 AND dst = ?2 AND kind = ?3",
                params![src, d, k],
            )?;
        }
    }
    for (d, k, w) in want {
        let unchanged = have
            .iter()
            .any(|(hd, hk, hw)| hd == d && hk == k.as_str() && (hw - w).abs() < 5e-4);
        if unchanged {
            continue;
        }
        conn.execute(
            "INSERT INTO links (src, dst, kind, weight, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
             ON CONFLICT (src, dst, kind) DO UPDATE SET weight = excluded.weight, updated_at = excluded.updated_at",
            params![src, d, k.as_str(), w, now],
        )?;
    }
    Ok(true)
}

/// The uid of a memory just stored.
pub(super) fn memory_uid(conn: &Connection, id: MemoryId) -> Result<String> {
    Ok(
        conn.query_row("SELECT uid FROM memories WHERE id = ?1", [id], |row| {
            row.get(0)
        })?,
    )
}

/// The memory a uid names, if any.
pub(super) fn memory_id_of(conn: &Connection, uid: &str) -> Result<Option<MemoryId>> {
    Ok(conn
        .query_row("SELECT id FROM memories WHERE uid = ?1", [uid], |r| {
            r.get(0)
        })
        .optional()?)
}

/// Records a path as holding `uid` with no hash, so the next write replaces the file (the
/// uid goes back into it, or a redacted secret leaves the disk).
pub(super) fn mark_for_rewrite(conn: &Connection, rel: &str, uid: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO vault_files (path, uid, hash, size, mtime) VALUES (?1, ?2, '', -1, -1)
         ON CONFLICT (path) DO UPDATE SET uid = excluded.uid",
        params![rel, uid],
    )?;
    Ok(())
}

/// Drops what engram recorded about a path.
pub(super) fn forget_file(conn: &Connection, rel: &str) -> Result<()> {
    conn.execute("DELETE FROM vault_files WHERE path = ?1", [rel])?;
    Ok(())
}

/// Sends a memory whose file was deleted by hand to the trash.
pub(super) fn move_to_trash(conn: &Connection, id: MemoryId, now: Millis) -> Result<()> {
    crate::sqlite::memories::patch(conn, id, &MemoryPatch::tier(Tier::Trash, now))?;
    Ok(())
}
