//! The Markdown vault: every memory is also a file, `ENGRAM_HOME/memories/<kind>/…md`, with
//! YAML front matter that holds every field needed to rebuild it, and its links as
//! `[[wikilinks]]` so Obsidian draws the graph.
//!
//! The vault follows the database through the trigger-fed `changes` table: [`Store::sync_vault`]
//! writes the files of the memories changed since its cursor (`meta.vault_seq`), so no write
//! path needs to know the vault exists. The other direction is [`Store::reindex_vault`]: files
//! edited, added, moved or deleted by hand (or by another machine through a synced folder)
//! flow back into the database. `vault_files` remembers each file's hash, size and
//! modification time as engram last saw it; a file that no longer matches was changed
//! outside engram.
//!
//! Layout: `<kind>/YYYYMMDD-<slug>-<uid>.md`, episodes under `episode/YYYY/MM/`, the trash
//! under `_trash/`. A file keeps its name for life (Obsidian links by name), even when the
//! memory's text changes; it moves only when its kind or tier does.

use crate::files::frontmatter::{self, Document, ParseError, Value, quote};
use crate::files::fsutil;
use crate::files::home::Home;
use crate::files::transfer::{check_memory, insert_memory};
use crate::{Error, Result, Store};
use engram_core::config::{IndexCheck, VaultFormat};
use engram_core::redact;
use engram_core::{EventKind, Kind, LinkKind, Memory, MemoryId, Millis, Tier, time};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

mod folder;
mod record;
mod reindex;
mod render;
mod rows;
mod sync;

use folder::*;
use rows::*;
use sync::*;

pub(crate) use folder::{clean_stray_temporaries, link_in_path, stem_of, walk, walk_all};
pub use record::{
    FileRecord, LinkRef, apply_record, memory_from_record, parse_kind, record_from_doc,
};
pub use render::{add_evidence, folder_for, new_stem, render, render_with_evidence, seed_b};

/// The trash folder's name.
pub const TRASH_DIR: &str = "_trash";

/// A file that could not be read, with the line at fault (0 when it is the whole file).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VaultWarning {
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for VaultWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
        } else {
            write!(f, "{}: {}", self.path.display(), self.message)
        }
    }
}

/// What a sync wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SyncReport {
    pub written: usize,
    pub removed: usize,
    /// Files changed by hand that a database change overwrote; their text was kept as a
    /// revision (`vault_conflict`).
    pub conflicts: usize,
    /// Files not written, each named with why (a symbolic link in its path, a write that
    /// failed): one bad file never stops the sync of the others, and the next sync tries it
    /// again only when its memory changes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<VaultWarning>,
}

/// What a reindex did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReindexReport {
    pub files: usize,
    pub unchanged: usize,
    /// Files with no uid (or a uid another file holds): new memories, uid written back.
    pub created: usize,
    /// Files whose uid the database did not know (a restore after losing the database).
    pub restored: usize,
    /// Files edited by hand: their memory was updated.
    pub updated: usize,
    /// Memories whose file was deleted by hand: moved to the trash.
    pub trashed: usize,
    /// Memories whose file is gone, left in their tier because this was the start-of-process
    /// check (which read-only commands run too), not `engram reindex`.
    pub gone: usize,
    pub links_changed: usize,
    pub synced: SyncReport,
    pub warnings: Vec<VaultWarning>,
}

/// How the vault's files compare with what engram last wrote or read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VaultStatus {
    pub files: usize,
    /// Files new, changed or gone since engram last saw them.
    pub changed: usize,
    pub gone: usize,
}

impl VaultStatus {
    pub fn is_clean(&self) -> bool {
        self.changed == 0 && self.gone == 0
    }
}

impl SyncReport {
    /// Adds one step's counts and skipped files.
    fn absorb(&mut self, step: SyncReport) {
        self.written += step.written;
        self.removed += step.removed;
        self.conflicts += step.conflicts;
        self.skipped.extend(step.skipped);
    }
}

/// The files a sync skipped, named (the first five) with why, as one warning.
fn skipped_message(report: &SyncReport) -> Option<String> {
    let n = report.skipped.len();
    let named: Vec<String> = report
        .skipped
        .iter()
        .take(5)
        .map(|w| w.to_string())
        .collect();
    (n > 0).then(|| match n {
        1..=5 => format!("vault: {}", named.join("; ")),
        _ => format!(
            "vault: {}; and {} more not written",
            named.join("; "),
            n - 5
        ),
    })
}

impl Store {
    /// The vault's folder, or `None` when the vault is off. A relative `vault_dir` is taken
    /// from the folder the database is in ([`Home::of_db`], the one rule every surface uses).
    pub fn vault_dir(&self) -> Option<PathBuf> {
        Home::of_db(self.path()).vault(&self.config)
    }

    /// The layout the vault at `root` is written in: the configured one, or with `auto`
    /// seed B's when the folder holds B's folders (`preferences/`, `projects/`,
    /// `episodes/`: engram's own are singular), else engram's.
    pub fn vault_format(&self, root: &Path) -> VaultFormat {
        match self.config.vault_format {
            VaultFormat::Auto => {
                let b = ["preferences", "projects", "episodes"]
                    .iter()
                    .any(|d| root.join(d).is_dir());
                if b {
                    VaultFormat::B
                } else {
                    VaultFormat::Engram
                }
            }
            f => f,
        }
    }

    /// Writes the files of every memory changed since the last sync (all of them the first
    /// time, or when the vault moved). Call after any write; cheap when nothing changed.
    pub fn sync_vault(&mut self) -> Result<SyncReport> {
        self.sync_vault_with(&mut |_, _| {})
    }

    /// How many changes the vault has not written yet (0 when the vault is off).
    pub fn vault_pending(&self) -> Result<u64> {
        match self.vault_dir() {
            Some(root) => pending_in(self.reads(), &root),
            None => Ok(0),
        }
    }

    /// [`Store::sync_vault`] in steps of one transaction each (`sync_step`), calling
    /// `progress(done, total)` in change entries after each: a large backlog (after a big
    /// import) is visible, and one interrupted keeps the steps it finished, so the next
    /// process does not start it over.
    pub fn sync_vault_with(&mut self, progress: &mut dyn FnMut(u64, u64)) -> Result<SyncReport> {
        let Some(root) = self.vault_dir() else {
            return Ok(SyncReport::default());
        };
        let cursor = meta_get(self.reads(), "vault_seq")?.and_then(|s| s.parse::<i64>().ok());
        if cursor.is_some()
            && cursor == Some(max_seq(self.reads())?)
            && meta_get(self.reads(), "vault_root")?.as_deref() == Some(&*root.to_string_lossy())
        {
            return Ok(SyncReport::default());
        }
        let now = self.now();
        crate::db::create_private_dir(&root)?;
        let total = pending_in(self.reads(), &root)?;
        let format = self.vault_format(&root);
        let mut report = SyncReport::default();
        loop {
            // The files are written inside the transaction (the cursor moves with them). A
            // backend that re-runs it writes the same files again: the folder ends as after
            // one run, and the report is the committed run's.
            let (step, drained) = self.write(|tx| sync_step(tx, &root, format, now))?;
            report.absorb(step);
            let left = pending_in(self.reads(), &root)?;
            progress(total.saturating_sub(left), total);
            if drained {
                return Ok(report);
            }
        }
    }

    /// How the vault's files compare with what engram last wrote or read (no file is read).
    pub fn vault_status(&self) -> Result<VaultStatus> {
        match self.vault_dir() {
            Some(root) => status_in(self.reads(), &root),
            None => Ok(VaultStatus::default()),
        }
    }

    /// The start-of-process check (B's `startup_index_check`): writes pending changes, then
    /// with `auto` reads files changed outside engram, with `warn` returns a message about
    /// them, with `off` does not look. Returns the reindex report when one ran.
    pub fn vault_startup(
        &mut self,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(Option<ReindexReport>, Option<String>)> {
        let Some(root) = self.vault_dir() else {
            return Ok((None, None));
        };
        clean_stray_temporaries(&root);
        let skipped = skipped_message(&self.sync_vault_with(progress)?);
        if self.config.startup_index_check == IndexCheck::Off {
            return Ok((None, skipped));
        }
        let st = self.vault_status()?;
        if st.is_clean() {
            return Ok((None, skipped));
        }
        let (report, message) = match self.config.startup_index_check {
            IndexCheck::Auto => {
                let report = self.reindex_vault_with(progress, false)?;
                let message = (report.gone > 0).then(|| {
                    format!(
                        "{}: {} file(s) gone outside engram; their memories stay until `engram reindex` moves them to the trash",
                        root.display(),
                        report.gone
                    )
                });
                (Some(report), message)
            }
            _ => (
                None,
                Some(format!(
                    "{}: {} file(s) changed and {} gone outside engram; run `engram reindex` to read them",
                    root.display(),
                    st.changed,
                    st.gone
                )),
            ),
        };
        let message = match (skipped, message) {
            (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
            (a, b) => a.or(b),
        };
        Ok((report, message))
    }

    /// Reads the vault back into the database: new files become memories (their uid is
    /// written back), edited files update theirs (the previous text kept as a revision),
    /// files deleted by hand send their memory to the trash, and after a lost database every
    /// memory comes back with its uid, dates and links. Files that do not parse are reported
    /// and left alone.
    pub fn reindex_vault(&mut self, progress: &mut dyn FnMut(u64, u64)) -> Result<ReindexReport> {
        self.reindex_vault_with(progress, true)
    }
}
