//! Rows into files: the `changes` log drained into the vault in bounded steps
//! (`sync_step`, all at once for `reindex`: `sync_in`; `pending_in` counts what is left), one memory's
//! file written or moved (`write_memory`), and the status of the folder against what
//! engram last saw (`status_in`).

use super::*;
use crate::storage::rows::{RowKey, Section, StoredRow, VaultFileWrite};
use crate::storage::{Reads, Tx};

/// Writes one memory's file where it belongs, moving it if its folder changed.
pub(super) fn write_memory(
    tx: &mut dyn Tx,
    root: &Path,
    format: VaultFormat,
    m: &Memory,
    now: Millis,
    report: &mut SyncReport,
) -> Result<()> {
    let b = format == VaultFormat::B;
    let mut links = Vec::new();
    for l in tx.links_from(m.id)? {
        if let Some(d) = load_by_id(tx, l.dst)? {
            // B's files link by the memory's id; engram's by file name (Obsidian's way).
            let target = if b { d.uid.clone() } else { stem_for(tx, &d)? };
            links.push((target, l.kind, l.weight));
        }
    }
    let existing: Vec<(String, String, i64, i64)> = tx
        .vault_files(Some(&m.uid))?
        .into_iter()
        .map(|f| (f.path, f.hash, f.size, f.mtime))
        .collect();
    let stem = existing
        .first()
        .map(|(p, ..)| stem_of(p).to_string())
        .unwrap_or_else(|| if b { seed_b::new_stem(m) } else { new_stem(m) });
    let folder = if b {
        seed_b::folder_for(m)
    } else {
        folder_for(m)
    };
    let rel = format!("{folder}/{stem}.md");
    let text = if b {
        seed_b::render(m, &links)
    } else {
        render(m, &links)
    };
    let text = add_evidence(text, &tx.evidence(m.id)?);
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
            add_revision(tx, m, &body, "vault_conflict", now)?;
            report.conflicts += 1;
        }
    }
    let full = root.join(&rel);
    // A file engram will not or cannot write is skipped, named, and the sync goes on.
    let skip = |report: &mut SyncReport, e: Error| {
        report.skipped.push(VaultWarning {
            path: full.clone(),
            line: 0,
            message: format!("not written ({e}); memory {} stays in the database", m.uid),
        });
    };
    if let Some(link) = link_in_path(root, &rel) {
        skip(report, refuse_link(&link));
        return Ok(());
    }
    let unchanged = existing
        .iter()
        .any(|(p, h, ..)| *p == rel && *h == sha256_hex(text.as_bytes()))
        && full.is_file();
    if !unchanged {
        if let Err(e) = write_file(&full, text.as_bytes()) {
            skip(report, e);
            return Ok(());
        }
        report.written += 1;
    }
    record_file(tx, root, &rel, &m.uid, &sha256_hex(text.as_bytes()))?;
    for (p, ..) in &existing {
        if *p != rel {
            remove_file(root, p)?;
            forget_file(tx, p)?;
            report.removed += 1;
        }
    }
    Ok(())
}

/// Change log entries read per page.
const CHANGES_PAGE: usize = 1000;

/// One step of draining the change log into the vault, in its own transaction: the whole
/// vault the first time (or when it moved), else at most [`CHANGES_PAGE`] change entries,
/// the cursor (`meta.vault_seq`) moved past them. Returns whether the log is drained. A
/// sync interrupted between steps keeps what its steps wrote; the next goes on from there.
pub(super) fn sync_step(
    tx: &mut dyn Tx,
    root: &Path,
    format: VaultFormat,
    now: Millis,
) -> Result<(SyncReport, bool)> {
    let mut report = SyncReport::default();
    let root_str = root.to_string_lossy().into_owned();
    let recorded_root = meta_get(tx, "vault_root")?;
    let cursor = meta_get(tx, "vault_seq")?.and_then(|s| s.parse::<i64>().ok());
    let top = max_seq(tx)?;
    let full = cursor.is_none() || recorded_root.as_deref() != Some(root_str.as_str());
    let mut upto = top;
    if full {
        if recorded_root.as_deref() != Some(root_str.as_str()) {
            tx.write_vault_file(&VaultFileWrite::ForgetAll)?;
        }
        let mut after: Option<RowKey> = None;
        loop {
            let page = tx.rows_after(Section::Memories, after.as_ref(), CHANGES_PAGE)?;
            for row in page.rows {
                if let StoredRow::Memory { memory, .. } = row {
                    write_memory(tx, root, format, &memory, now, &mut report)?;
                }
            }
            match page.next {
                Some(k) => after = Some(k),
                None => break,
            }
        }
    } else {
        let page = tx.changes(cursor.unwrap_or(0), top, CHANGES_PAGE)?;
        if let Some(last) = page.last() {
            upto = last.seq;
        }
        let mut changed: BTreeMap<MemoryId, Option<String>> = BTreeMap::new();
        for c in page {
            let e = changed.entry(c.memory_id).or_default();
            if c.uid.is_some() {
                *e = c.uid;
            }
        }
        for (id, uid) in changed {
            match load_by_id(tx, id)? {
                Some(m) => write_memory(tx, root, format, &m, now, &mut report)?,
                None => {
                    // Purged: its file goes (the only delete the vault does).
                    let Some(uid) = uid else { continue };
                    for f in tx.vault_files(Some(&uid))? {
                        remove_file(root, &f.path)?;
                        forget_file(tx, &f.path)?;
                        report.removed += 1;
                    }
                }
            }
        }
    }
    meta_set(tx, "vault_seq", &upto.to_string())?;
    meta_set(tx, "vault_root", &root_str)?;
    Ok((report, upto >= top))
}

/// Drains the whole change log in one transaction: `reindex` needs the files current
/// before it reads them back.
pub(super) fn sync_in(
    tx: &mut dyn Tx,
    root: &Path,
    format: VaultFormat,
    now: Millis,
) -> Result<SyncReport> {
    let mut report = SyncReport::default();
    loop {
        let (step, drained) = sync_step(tx, root, format, now)?;
        report.absorb(step);
        if drained {
            return Ok(report);
        }
    }
}

/// How many change entries the vault has not written yet (every memory when it was never
/// written or moved), for a progress line and `doctor`.
pub(super) fn pending_in(r: &dyn Reads, root: &Path) -> Result<u64> {
    let cursor = meta_get(r, "vault_seq")?.and_then(|s| s.parse::<i64>().ok());
    let moved = meta_get(r, "vault_root")?.as_deref() != Some(&*root.to_string_lossy());
    Ok(match cursor {
        Some(c) if !moved => u64::try_from(max_seq(r)? - c).unwrap_or(0),
        _ => r
            .tally(crate::storage::rows::Tally::MemoriesByTier)?
            .values()
            .sum(),
    })
}

pub(super) fn status_in(r: &dyn Reads, root: &Path) -> Result<VaultStatus> {
    let rec = recorded(r)?;
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
