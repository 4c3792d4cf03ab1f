//! Files back into rows: [`Store::reindex_vault`] and the start-of-process check read hand
//! edits, new, moved and deleted files (and a whole lost database) back, in one write
//! transaction, in four passes over one [`Pass`]: read what changed, apply each file, set
//! the links files list, then settle the files that are gone.

use super::*;
use crate::storage::Tx;

/// What one reindex carries from pass to pass.
struct Pass<'a> {
    tx: &'a mut dyn Tx,
    root: &'a Path,
    format: VaultFormat,
    /// The store's home (where seed B's `index.db` may sit).
    home: &'a Path,
    now: Millis,
    default_importance: f64,
    actr: engram_core::dynamics::ActrParams,
    report: ReindexReport,
    /// Which uid each stem names, for links: the files engram knows, then those read now.
    stems: HashMap<String, String>,
    /// Uids a file holds (unchanged, or applied here): a second file with one is a copy.
    claimed: HashSet<String>,
    /// Memories whose file is written again from the row at the end.
    rerender: Vec<MemoryId>,
    /// Folders that [`Pass::clean_name`] moved files into.
    moved_into: Vec<PathBuf>,
    /// Links each applied file lists: (source memory, file, links, which kinds it speaks for).
    link_todo: Vec<(MemoryId, PathBuf, Vec<LinkRef>, record::LinksScope)>,
    /// Seed B's usage history and links by B's id (its `index.db` beside the vault), read
    /// at the first file restored with an id (`None` until then).
    b_history: Option<crate::importers::SeedBHistory>,
    /// Memories restored from a file with an id, by uid: their id and creation time.
    restored: HashMap<String, (MemoryId, Millis)>,
}

/// A B memory's events as rows (`create` first: [`crate::importers::seed_b_with_create`]).
fn b_history_rows(
    id: MemoryId,
    m: &engram_core::Memory,
    events: Vec<crate::files::transfer::EventRow>,
    actr: &engram_core::dynamics::ActrParams,
) -> Vec<crate::storage::rows::StoredRow> {
    crate::importers::seed_b_with_create(events, m, actr)
        .into_iter()
        .map(|row| crate::storage::rows::StoredRow::Event { memory_id: id, row })
        .collect()
}

/// A file read because it changed since engram last saw it: (relative path, hash, record).
type Changed = (String, String, FileRecord);

impl Store {
    /// [`reindex_vault`](Self::reindex_vault); with `trash_gone` false (the start-of-process
    /// check, which also runs before read-only commands), a memory whose file is gone stays
    /// where it is and the report counts it in `gone`: only `engram reindex` moves it.
    pub(super) fn reindex_vault_with(
        &mut self,
        progress: &mut dyn FnMut(u64, u64),
        trash_gone: bool,
    ) -> Result<ReindexReport> {
        if self.viewer().is_some() {
            // The vault holds every user's memories: reading it back (and its counts) is
            // the server's own work, never a team user's.
            return Err(crate::Error::Input(engram_core::InputError::new(
                "reindex",
                "reading the vault back covers every user's memories: run `engram vault reindex` on the server",
            )));
        }
        let Some(root) = self.vault_dir() else {
            return Ok(ReindexReport::default());
        };
        let now = self.now();
        let home = crate::files::home::Home::of_db(&self.path).root;
        let default_importance = self.config.default_importance;
        let actr = self.config.actr;
        let format = self.vault_format(&root);
        crate::db::create_private_dir(&root)?;
        // One transaction for the whole read-back; files are written inside it (the
        // rewritten ones), the same files on a re-run.
        let report = self.write(|tx| {
            let synced = sync_in(tx, &root, format, now)?;
            let rec = recorded(tx)?;
            let (files, links) = walk_all(&root)?;
            let total = files.len() as u64;
            let mut pass = Pass {
                tx,
                root: &root,
                format,
                home: &home,
                now,
                default_importance,
                actr,
                report: ReindexReport {
                    synced,
                    files: files.len(),
                    ..Default::default()
                },
                stems: rec
                    .iter()
                    .map(|(p, r)| (stem_of(p).to_string(), r.uid.clone()))
                    .collect(),
                claimed: HashSet::new(),
                rerender: Vec::new(),
                link_todo: Vec::new(),
                moved_into: Vec::new(),
                b_history: None,
                restored: HashMap::new(),
            };
            for rel in links {
                pass.report.warnings.push(VaultWarning {
                    path: root.join(&rel),
                    line: 0,
                    message: "is a symbolic link inside the vault; not followed, so nothing behind it is read (replace it with a real folder or file)".into(),
                });
            }
            let todo = pass.read_changed(&files, &rec, progress)?;
            for (rel, hash, r) in &todo {
                pass.apply_file(rel, hash, r)?;
            }
            pass.apply_links()?;
            pass.apply_b_links()?;
            pass.settle_gone(&files, &rec, trash_gone)?;
            let report = pass.finish()?;
            progress(total, total);
            Ok(report)
        })?;
        Ok(report)
    }
}

impl Pass<'_> {
    /// Reads the files whose size, time or hash differs from what engram recorded; the
    /// others only claim their uid. Files that do not parse become warnings.
    fn read_changed(
        &mut self,
        files: &[String],
        rec: &HashMap<String, Recorded>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<Vec<Changed>> {
        let total = files.len() as u64;
        let mut todo = Vec::new();
        for (i, rel) in files.iter().enumerate() {
            if i % 64 == 0 {
                progress(i as u64, total);
            }
            let full = self.root.join(rel);
            let meta = std::fs::metadata(&full).map_err(io_err(&full))?;
            if let Some(r) = rec.get(rel)
                && meta.len() as i64 == r.size
                && mtime_ns(&meta) == r.mtime
            {
                self.report.unchanged += 1;
                self.claimed.insert(r.uid.clone());
                continue;
            }
            let cap = engram_core::limits::MAX_MARKDOWN_FILE_BYTES;
            if meta.len() > cap {
                // Skipped, not deleted: its memory (if it has one) stays as it was.
                if let Some(r) = rec.get(rel) {
                    self.claimed.insert(r.uid.clone());
                }
                self.report.warnings.push(VaultWarning {
                    path: full.clone(),
                    line: 0,
                    message: format!(
                        "{} bytes, over the limit of {} MiB for one Markdown file; not read",
                        meta.len(),
                        cap >> 20
                    ),
                });
                continue;
            }
            let bytes = std::fs::read(&full).map_err(io_err(&full))?;
            let hash = sha256_hex(&bytes);
            if let Some(r) = rec.get(rel)
                && r.hash == hash
            {
                record_file(self.tx, self.root, rel, &r.uid, &hash)?;
                self.report.unchanged += 1;
                self.claimed.insert(r.uid.clone());
                continue;
            }
            let parsed = std::str::from_utf8(&bytes)
                .map_err(|_| ParseError::new(0, "the file is not UTF-8 text"))
                .and_then(frontmatter::parse)
                .and_then(|d| record_from_doc(&d));
            match parsed {
                Ok(r) => {
                    if let Some(u) = &r.uid {
                        self.stems
                            .insert(stem_of(rel).to_string(), u.to_ascii_uppercase());
                    }
                    todo.push((rel.clone(), hash, r));
                }
                Err(e) => self.report.warnings.push(VaultWarning {
                    path: full,
                    line: e.line,
                    message: format!("{}; file skipped", e.message),
                }),
            }
        }
        Ok(todo)
    }

    /// Applies one changed file: an edit updates its memory, a uid the store lacks is
    /// restored, a file with no uid (or a uid another file holds: a copy) is a new memory.
    fn apply_file(&mut self, rel: &str, hash: &str, r: &FileRecord) -> Result<()> {
        let full = self.root.join(rel);
        let in_trash = rel.starts_with(&format!("{TRASH_DIR}/"));
        let uid = r
            .uid
            .as_ref()
            .map(|u| u.trim().to_ascii_uppercase())
            .filter(|u| ulid::Ulid::from_string(u).is_ok())
            .filter(|u| !self.claimed.contains(u));
        if r.uid
            .as_ref()
            .is_some_and(|u| ulid::Ulid::from_string(u.trim()).is_err())
        {
            self.report.warnings.push(VaultWarning {
                path: full.clone(),
                line: 0,
                message: "`uid` is not a ULID; the file becomes a new memory".into(),
            });
        }
        match self.store_file(uid, r, in_trash) {
            Ok((id, write_back)) => self.applied(rel, hash, r, full, id, write_back),
            Err(Error::Input(e)) => {
                self.report.warnings.push(VaultWarning {
                    path: full,
                    line: 0,
                    message: format!("{e}; file skipped"),
                });
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The row a file's record becomes: (memory id, whether the uid goes back to the file).
    fn store_file(
        &mut self,
        uid: Option<String>,
        r: &FileRecord,
        in_trash: bool,
    ) -> Result<(MemoryId, bool)> {
        let now = self.now;
        let tx = &mut *self.tx;
        let existing = match &uid {
            Some(u) => crate::storage::require_memory(
                &*tx,
                &engram_core::memory::IdRef::Uid(u.clone()),
                "uid",
            )
            .ok(),
            None => None,
        };
        match (&uid, existing) {
            (Some(_), Some(old)) => {
                let new = apply_record(r, old.clone(), in_trash);
                if differs(&old, &new) {
                    update_from_file(tx, &old, &new, now).map(|_| {
                        self.report.updated += 1;
                        (old.id, false)
                    })
                } else {
                    Ok((old.id, false))
                }
            }
            (Some(u), None) => {
                let m = memory_from_record(r, u.clone(), now, self.default_importance, in_trash);
                let (root, home) = (self.root, self.home);
                let history = self
                    .b_history
                    .get_or_insert_with(|| crate::importers::seed_b_history(root, home))
                    .events
                    .remove(&u.to_ascii_uppercase());
                let seed = history.is_none().then_some(now);
                let id = insert_memory(tx, &m, None, true, seed, &self.actr)?;
                if let Some(id) = id {
                    self.restored
                        .insert(u.to_ascii_uppercase(), (id, m.created_at));
                    if let Some(events) = history {
                        tx.insert_rows(&b_history_rows(id, &m, events, &self.actr))?;
                    }
                }
                self.report.restored += 1;
                Ok((id.unwrap_or(0), false))
            }
            (None, _) => {
                let at = r.created_at.unwrap_or(now);
                let u =
                    ulid::Ulid::from_parts(at.max(0) as u64, crate::ops::rand_bits()).to_string();
                let m = memory_from_record(r, u, now, self.default_importance, in_trash);
                insert_memory(tx, &m, None, false, Some(now), &self.actr).map(|id| {
                    self.report.created += 1;
                    (id.unwrap_or(0), true)
                })
            }
        }
    }

    /// B's index links between memories restored in this pass, dated by the later of
    /// their two memories; a link the files listed too is kept once.
    fn apply_b_links(&mut self) -> Result<()> {
        let Some(history) = self.b_history.take() else {
            return Ok(());
        };
        if let Some(index) = &history.index {
            for message in history.warnings {
                self.report.warnings.push(VaultWarning {
                    path: index.clone(),
                    line: 0,
                    message,
                });
            }
        }
        let rows: Vec<_> = history
            .links
            .into_iter()
            .filter_map(|l| {
                let (src, a) = *self.restored.get(&l.src)?;
                let (dst, b) = *self.restored.get(&l.dst)?;
                (src != dst).then(|| {
                    crate::storage::rows::StoredRow::Link(crate::storage::rows::LinkRow {
                        src,
                        dst,
                        kind: l.kind,
                        weight: l.weight.clamp(0.0, 1.0),
                        created_at: a.max(b),
                        updated_at: a.max(b),
                        note: l.note,
                    })
                })
            })
            .collect();
        self.tx.insert_rows(&rows)?;
        Ok(())
    }

    /// Records a stored file: its uid is claimed, and the file is either recorded as read
    /// or marked to be written again (a uid to write back, a secret to take off the disk).
    fn applied(
        &mut self,
        rel: &str,
        hash: &str,
        r: &FileRecord,
        full: PathBuf,
        id: MemoryId,
        write_back: bool,
    ) -> Result<()> {
        let uid = memory_uid(self.tx, id)?;
        self.claimed.insert(uid.clone());
        let renamed = self.clean_name(rel)?;
        let rel = renamed.as_deref().unwrap_or(rel);
        self.stems.insert(stem_of(rel).to_string(), uid.clone());
        // A secret typed into the file (or its name) was redacted on the way in: the file
        // is rewritten from the clean row too, so the secret leaves the disk.
        let had_secret = renamed.is_some()
            || !redact::redact(&r.content).1.is_empty()
            || r.title
                .as_deref()
                .is_some_and(|t| !redact::redact(t).1.is_empty());
        if write_back || had_secret {
            // The uid goes back into the file, at the path the user chose.
            mark_for_rewrite(self.tx, rel, &uid)?;
            self.rerender.push(id);
        } else {
            record_file(self.tx, self.root, rel, &uid, hash)?;
        }
        if let Some(links) = &r.links {
            self.link_todo
                .push((id, full, links.clone(), r.links_scope));
        }
        Ok(())
    }

    /// A file whose name holds a secret (a token typed into a file name by hand) is
    /// renamed to the redacted name, so the secret leaves the disk's names as it leaves
    /// the rows. `None`: the name is clean (or the clean name is taken, which is warned).
    fn clean_name(&mut self, rel: &str) -> Result<Option<String>> {
        let (clean, found) = redact::redact(rel);
        if found.is_empty() {
            return Ok(None);
        }
        let (from, to) = (self.root.join(rel), self.root.join(&clean));
        if to.exists() {
            self.report.warnings.push(VaultWarning {
                path: to,
                line: 0,
                message: "a file with a secret in its name could not take its redacted name, which another file has; rename it by hand".into(),
            });
            return Ok(None);
        }
        // The secret may be in a folder's name: the file moves to the clean folder, and the
        // folders it leaves empty go.
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::rename(&from, &to).map_err(|source| Error::Io {
            path: from.clone(),
            source,
        })?;
        remove_empty_folders(self.root, from.parent());
        if let Some(parent) = to.parent() {
            self.moved_into.push(parent.to_path_buf());
        }
        forget_file(self.tx, rel)?;
        Ok(Some(clean))
    }

    /// Makes each applied file's memory link what the file lists; a link that names no
    /// memory is a warning.
    fn apply_links(&mut self) -> Result<()> {
        for (src, path, links, scope) in std::mem::take(&mut self.link_todo) {
            let mut want = Vec::new();
            for l in links {
                let uid = if ulid::Ulid::from_string(&l.target).is_ok() && l.target.len() == 26 {
                    Some(l.target.to_ascii_uppercase())
                } else {
                    self.stems
                        .get(&l.target)
                        .cloned()
                        .or_else(|| uid_in_stem(&l.target))
                };
                let dst: Option<MemoryId> = match &uid {
                    Some(u) => memory_id_of(self.tx, u)?,
                    None => None,
                };
                match dst {
                    Some(d) if d != src => {
                        if !want.iter().any(|(wd, wk, _)| *wd == d && *wk == l.kind) {
                            want.push((d, l.kind, l.weight));
                        }
                    }
                    Some(_) => {}
                    None => self.report.warnings.push(VaultWarning {
                        path: path.clone(),
                        line: l.line,
                        message: format!("link [[{}]] names no memory; ignored", l.target),
                    }),
                }
            }
            if set_links(self.tx, src, &want, scope, self.now)? {
                self.report.links_changed += 1;
            }
        }
        Ok(())
    }

    /// Files engram wrote that are gone. If the whole vault is gone, write it again;
    /// otherwise a memory whose file was deleted by hand goes to the trash.
    fn settle_gone(
        &mut self,
        files: &[String],
        rec: &HashMap<String, Recorded>,
        trash_gone: bool,
    ) -> Result<()> {
        let seen: HashSet<&str> = files.iter().map(String::as_str).collect();
        let gone: Vec<(&String, &Recorded)> = rec
            .iter()
            .filter(|(p, _)| !seen.contains(p.as_str()))
            .collect();
        let wiped = files.is_empty() && !gone.is_empty();
        for (p, r) in gone {
            // Behind a link: not deleted, just not followed. Left as it is, and said.
            if let Some(link) = link_in_path(self.root, p) {
                self.report.warnings.push(VaultWarning {
                    path: link,
                    line: 0,
                    message: "is a symbolic link; engram does not follow links out of the vault, \
                              so the files behind it are left alone and their memories kept"
                        .into(),
                });
                continue;
            }
            if !trash_gone && !wiped && !self.claimed.contains(&r.uid) {
                self.report.gone += 1;
                continue;
            }
            forget_file(self.tx, p)?;
            if self.claimed.contains(&r.uid) {
                continue; // moved by hand: its new path was recorded above
            }
            let Some(m) = crate::storage::require_memory(
                &*self.tx,
                &engram_core::memory::IdRef::Uid(r.uid.clone()),
                "uid",
            )
            .ok() else {
                continue;
            };
            if !wiped && m.tier != Tier::Trash {
                move_to_trash(self.tx, m.id, self.now)?;
                self.report.trashed += 1;
            }
            self.rerender.push(m.id);
        }
        Ok(())
    }

    /// Writes the marked files again from their rows and moves the cursor past what this
    /// reindex changed (the files are its source: nothing to write back).
    fn finish(mut self) -> Result<ReindexReport> {
        let mut sync = SyncReport::default();
        self.rerender.sort_unstable();
        self.rerender.dedup();
        for id in std::mem::take(&mut self.rerender) {
            if let Some(m) = load_by_id(self.tx, id)? {
                write_memory(self.tx, self.root, self.format, &m, self.now, &mut sync)?;
            }
        }
        self.report.synced.written += sync.written;
        self.report.synced.removed += sync.removed;
        // A file renamed out of a secret's folder may have been written again in its kind's
        // folder: the clean folder it passed through goes when it is left empty.
        for dir in std::mem::take(&mut self.moved_into) {
            remove_empty_folders(self.root, Some(&dir));
        }
        let top = max_seq(self.tx)?;
        meta_set(self.tx, "vault_seq", &top.to_string())?;
        Ok(self.report)
    }
}

/// Removes `dir` and the folders above it that are empty, up to (not including) the vault
/// root; stops at the first that is not empty.
fn remove_empty_folders(root: &Path, dir: Option<&Path>) {
    let mut dir = dir;
    while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}
