//! Seed B's Markdown folder: the vault format engram's own vault extends.

use super::*;

/// `home`: the store's home, where B's `index.db` sits when B's folder is elsewhere.
pub(super) fn read_b(dir: &Path, home: Option<&Path>, now: Millis) -> Result<Batch> {
    if !dir.is_dir() {
        return Err(bad_file(
            dir,
            "not a folder (seed B's memories are a folder of Markdown files)",
        ));
    }
    let mut batch = Batch::default();
    let (files, links) = vault::walk_all(dir)?;
    for rel in links {
        batch.warn(format!(
            "{}: a symbolic link; not followed, skipped",
            dir.join(rel).display()
        ));
    }
    let mut parsed = Vec::new();
    let mut stems: HashMap<String, String> = HashMap::new();
    for rel in &files {
        let full = dir.join(rel);
        let cap = engram_core::limits::MAX_MARKDOWN_FILE_BYTES;
        if let Ok(meta) = std::fs::metadata(&full)
            && meta.len() > cap
        {
            batch.warn(format!(
                "{}: {} bytes, over the limit of {} MiB for one Markdown file; skipped",
                full.display(),
                meta.len(),
                cap >> 20
            ));
            continue;
        }
        let text = match std::fs::read_to_string(&full) {
            Ok(t) => t,
            Err(e) => {
                batch.warn(format!("{}: {e}; skipped", full.display()));
                continue;
            }
        };
        match frontmatter::parse(&text).and_then(|d| vault::record_from_doc(&d)) {
            Ok(mut r) => {
                r.content = r.content.trim().to_string();
                let created = r.created_at.unwrap_or(now);
                let uid = r
                    .uid
                    .clone()
                    .map(|u| u.trim().to_ascii_uppercase())
                    .filter(|u| ulid::Ulid::from_string(u).is_ok())
                    .unwrap_or_else(|| derived_uid(created, &format!("b:{rel}")));
                stems.insert(vault::stem_of(rel).to_string(), uid.clone());
                parsed.push((rel.clone(), uid, r));
            }
            Err(e) => batch.warn(format!(
                "{}:{}: {}; skipped",
                full.display(),
                e.line,
                e.message
            )),
        }
    }
    for (rel, uid, r) in parsed {
        let in_trash = rel.starts_with(&format!("{}/", vault::TRASH_DIR));
        let mut m = vault::memory_from_record(&r, uid.clone(), now, 0.5, in_trash);
        if r.source.is_none() {
            m.source = "b".into();
        }
        m.id = 0;
        for l in r.links.iter().flatten() {
            let dst = if ulid::Ulid::from_string(&l.target).is_ok() && l.target.len() == 26 {
                Some(l.target.to_ascii_uppercase())
            } else {
                stems.get(&l.target).cloned()
            };
            match dst {
                Some(d) => batch.links.push(LinkRow {
                    src: uid.clone(),
                    dst: d,
                    kind: l.kind,
                    weight: l.weight,
                    created_at: m.created_at,
                    updated_at: m.created_at,
                    note: None,
                }),
                None => batch.warn(format!(
                    "{rel}: link [[{}]] names no memory; ignored",
                    l.target
                )),
            }
        }
        batch.memories.push(ImportedMemory::new(m));
    }
    // B's usage history and its links live in its index, not in the files.
    if let Some(db) = super::seed_b_index::find_index(dir, home) {
        let index = super::seed_b_index::read_index(&db, &mut batch)?;
        super::seed_b_index::apply(index, &mut batch);
    }
    Ok(batch)
}
