//! Rows into files: the `changes` log drained into the vault (`sync_in`), one memory's
//! file written or moved (`write_memory`), and the status of the folder against what
//! engram last saw (`status_in`).

use super::*;

/// Writes one memory's file where it belongs, moving it if its folder changed.
pub(super) fn write_memory(
    conn: &Connection,
    root: &Path,
    m: &Memory,
    now: Millis,
    report: &mut SyncReport,
) -> Result<()> {
    let mut links = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT l.dst, l.kind, l.weight FROM links l WHERE l.src = ?1 ORDER BY l.dst, l.kind",
        )?;
        let rows = stmt.query_map([m.id], |r| {
            Ok((
                r.get::<_, MemoryId>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, f64>(2)?,
            ))
        })?;
        for row in rows {
            let (dst, kind, w) = row?;
            let Ok(kind) = LinkKind::parse(&kind) else {
                continue;
            };
            if let Some(d) = load_by_id(conn, dst)? {
                links.push((stem_for(conn, &d)?, kind, w));
            }
        }
    }
    let existing: Vec<(String, String, i64, i64)> = {
        let mut stmt = conn.prepare_cached(
            "SELECT path, hash, size, mtime FROM vault_files WHERE uid = ?1 ORDER BY path",
        )?;
        stmt.query_map([&m.uid], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let stem = existing
        .first()
        .map(|(p, ..)| stem_of(p).to_string())
        .unwrap_or_else(|| new_stem(m));
    let rel = format!("{}/{}.md", folder_for(m), stem);
    let text = render_with_evidence(m, &links, &crate::evidence::of(conn, m.id)?);
    // A file changed by hand since engram wrote it, now overwritten by a database change:
    // keep its text as a revision, so nothing typed is lost.
    for (p, hash, size, mtime) in &existing {
        let full = root.join(p);
        let Ok(meta) = std::fs::metadata(&full) else {
            continue;
        };
        if meta.len() as i64 == *size && mtime_ns(&meta) == *mtime {
            continue;
        }
        let Ok(bytes) = std::fs::read(&full) else {
            continue;
        };
        if sha256_hex(&bytes) == *hash {
            continue;
        }
        if let Ok(doc) = frontmatter::parse(&String::from_utf8_lossy(&bytes))
            && let body = redact::redact(&doc.body).0
            && body != m.content
            && !body.trim().is_empty()
        {
            add_revision(conn, m, &body, "vault_conflict", now)?;
            report.conflicts += 1;
        }
    }
    if let Some(link) = link_in_path(root, &rel) {
        return Err(refuse_link(&link));
    }
    let full = root.join(&rel);
    let unchanged = existing
        .iter()
        .any(|(p, h, ..)| *p == rel && *h == sha256_hex(text.as_bytes()))
        && full.is_file();
    if !unchanged {
        write_file(&full, text.as_bytes())?;
        report.written += 1;
    }
    record_file(conn, root, &rel, &m.uid, &sha256_hex(text.as_bytes()))?;
    for (p, ..) in &existing {
        if *p != rel {
            remove_file(root, p)?;
            conn.execute("DELETE FROM vault_files WHERE path = ?1", [p])?;
            report.removed += 1;
        }
    }
    Ok(())
}

/// Drains the change log into the vault. With `full`, every memory is written.
pub(super) fn sync_in(conn: &Connection, root: &Path, now: Millis) -> Result<SyncReport> {
    let mut report = SyncReport::default();
    let root_str = root.to_string_lossy().into_owned();
    let recorded_root = meta_get(conn, "vault_root")?;
    let cursor = meta_get(conn, "vault_seq")?.and_then(|s| s.parse::<i64>().ok());
    let top = max_seq(conn)?;
    let full = cursor.is_none() || recorded_root.as_deref() != Some(root_str.as_str());
    if full {
        if recorded_root.as_deref() != Some(root_str.as_str()) {
            conn.execute("DELETE FROM vault_files", [])?;
        }
        let ids: Vec<MemoryId> = conn
            .prepare("SELECT id FROM memories ORDER BY id")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        for id in ids {
            if let Some(m) = load_by_id(conn, id)? {
                write_memory(conn, root, &m, now, &mut report)?;
            }
        }
    } else {
        let cursor = cursor.unwrap_or(0);
        let mut changed: BTreeMap<MemoryId, Option<String>> = BTreeMap::new();
        {
            let mut stmt = conn.prepare(
                "SELECT memory_id, uid FROM changes WHERE seq > ?1 AND seq <= ?2 ORDER BY seq",
            )?;
            let rows = stmt.query_map([cursor, top], |r| {
                Ok((r.get::<_, MemoryId>(0)?, r.get::<_, Option<String>>(1)?))
            })?;
            for row in rows {
                let (id, uid) = row?;
                let e = changed.entry(id).or_default();
                if uid.is_some() {
                    *e = uid;
                }
            }
        }
        for (id, uid) in changed {
            match load_by_id(conn, id)? {
                Some(m) => write_memory(conn, root, &m, now, &mut report)?,
                None => {
                    // Purged: its file goes (the only delete the vault does).
                    let Some(uid) = uid else { continue };
                    let paths: Vec<String> = conn
                        .prepare("SELECT path FROM vault_files WHERE uid = ?1")?
                        .query_map([&uid], |r| r.get(0))?
                        .collect::<rusqlite::Result<_>>()?;
                    for p in paths {
                        remove_file(root, &p)?;
                        conn.execute("DELETE FROM vault_files WHERE path = ?1", [&p])?;
                        report.removed += 1;
                    }
                }
            }
        }
    }
    meta_set(conn, "vault_seq", &top.to_string())?;
    meta_set(conn, "vault_root", &root_str)?;
    Ok(report)
}

pub(super) fn status_in(conn: &Connection, root: &Path) -> Result<VaultStatus> {
    let rec = recorded(conn)?;
    let files = walk(root)?;
    let mut st = VaultStatus {
        files: files.len(),
        ..Default::default()
    };
    let mut seen = HashSet::new();
    for rel in &files {
        seen.insert(rel.as_str());
        let Some(r) = rec.get(rel) else {
            st.changed += 1;
            continue;
        };
        match std::fs::metadata(root.join(rel)) {
            Ok(meta) if meta.len() as i64 == r.size && mtime_ns(&meta) == r.mtime => {}
            _ => st.changed += 1,
        }
    }
    st.gone = rec
        .keys()
        .filter(|p| !seen.contains(p.as_str()) && link_in_path(root, p).is_none())
        .count();
    Ok(st)
}
