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

use crate::frontmatter::{self, Document, ParseError, Value, quote};
use crate::store::{MEMORY_COLUMNS, add_event, index_text, row_to_memory};
use crate::transfer::{check_memory, insert_memory};
use crate::{Error, Result, Store};
use engram_core::config::{IndexCheck, Switch};
use engram_core::redact;
use engram_core::{EventKind, Kind, LinkKind, Memory, MemoryId, Millis, Tier, time};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

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

/// One memory as a vault file states it. Fields the file leaves out are `None`: an edit
/// that drops a key keeps the database's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileRecord {
    pub uid: Option<String>,
    pub id: Option<MemoryId>,
    pub title: Option<String>,
    pub kind: Option<Kind>,
    pub importance: Option<f64>,
    pub tier: Option<Tier>,
    pub room: Option<String>,
    pub tags: Option<Vec<String>>,
    pub topic_key: Option<Option<String>>,
    pub pinned: Option<bool>,
    pub source: Option<String>,
    pub session_id: Option<Option<String>>,
    pub created_at: Option<Millis>,
    pub updated_at: Option<Millis>,
    pub valid_from: Option<Millis>,
    pub valid_to: Option<Option<Millis>>,
    pub metadata: Option<serde_json::Value>,
    /// `None` when the file has no `links` key (the database's links stay).
    pub links: Option<Vec<LinkRef>>,
    pub content: String,
}

/// A `[[target|kind weight]]` link as written in a file.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRef {
    pub target: String,
    pub kind: LinkKind,
    pub weight: f64,
    pub line: usize,
}

fn perr(line: usize, key: &str, msg: impl std::fmt::Display) -> ParseError {
    ParseError::new(line, format!("`{key}`: {msg}"))
}

fn text_of(f: &frontmatter::Field) -> Result<Option<String>, ParseError> {
    match &f.value {
        Value::Null => Ok(None),
        v => v
            .as_text()
            .map(Some)
            .ok_or_else(|| perr(f.line, &f.key, "expected text")),
    }
}

fn time_of(f: &frontmatter::Field) -> Result<Option<Millis>, ParseError> {
    match text_of(f)? {
        None => Ok(None),
        Some(s) => time::parse(&s)
            .map(Some)
            .ok_or_else(|| perr(f.line, &f.key, format!("{s:?} is not a date"))),
    }
}

/// Parses a kind as the seeds wrote it in files (B's folder-style plurals included).
pub fn parse_kind(raw: &str) -> Option<Kind> {
    if let Ok(k) = Kind::parse(raw) {
        return Some(k);
    }
    let s = raw.trim().to_ascii_lowercase();
    let singular = s
        .strip_suffix("ies")
        .map(|b| format!("{b}y"))
        .or_else(|| s.strip_suffix('s').map(str::to_string))?;
    Kind::parse(&singular).ok()
}

/// Reads a wikilink (`[[target]]`, `[[target|kind 0.5]]`) or a bare uid.
fn link_ref(v: &Value, line: usize) -> Result<LinkRef, ParseError> {
    let Some(raw) = v.as_text() else {
        return Err(perr(
            line,
            "links",
            "each link must be text like \"[[name]]\"",
        ));
    };
    let inner = raw
        .trim()
        .strip_prefix("[[")
        .and_then(|r| r.strip_suffix("]]"))
        .unwrap_or(raw.trim());
    let (target, alias) = match inner.split_once('|') {
        Some((t, a)) => (t.trim(), Some(a.trim())),
        None => (inner.trim(), None),
    };
    let target = target.split('#').next().unwrap_or(target).trim();
    let target = target.strip_suffix(".md").unwrap_or(target);
    let target = target.rsplit('/').next().unwrap_or(target);
    if target.is_empty() {
        return Err(perr(line, "links", format!("{raw:?} names no file")));
    }
    let (mut kind, mut weight) = (LinkKind::Explicit, 1.0);
    if let Some(a) = alias {
        let mut parts = a.split_whitespace();
        if let Some(k) = parts.next() {
            // An alias that is no link kind is a display name Obsidian users may write.
            if let Ok(k) = LinkKind::parse(k) {
                kind = k;
                if let Some(w) = parts.next().and_then(|w| w.parse::<f64>().ok()) {
                    weight = w.clamp(0.0, 1.0);
                }
            }
        }
    }
    Ok(LinkRef {
        target: target.to_string(),
        kind,
        weight,
        line,
    })
}

/// Reads a parsed file into a record. `type` (seed B) is read as `kind`, and `id` as the
/// uid when it is a ULID (B's ids are); an integer importance is on B's 1–10 scale.
pub fn record_from_doc(doc: &Document) -> Result<FileRecord, ParseError> {
    let mut r = FileRecord {
        content: doc.body.clone(),
        ..Default::default()
    };
    for f in &doc.fields {
        let (k, line) = (f.key.as_str(), f.line);
        match k {
            "uid" => r.uid = text_of(f)?.filter(|s| !s.trim().is_empty()),
            "id" => match &f.value {
                Value::Int(i) => r.id = Some(*i),
                Value::Null => {}
                v => {
                    let s = v.as_text().unwrap_or_default();
                    if ulid::Ulid::from_string(s.trim()).is_ok() {
                        if r.uid.is_none() {
                            r.uid = Some(s.trim().to_string());
                        }
                    } else if let Ok(i) = s.trim().trim_start_matches('#').parse() {
                        r.id = Some(i);
                    }
                }
            },
            "title" => r.title = text_of(f)?,
            "kind" | "type" => {
                if k == "type" && doc.get("kind").is_some() {
                    continue;
                }
                if let Some(s) = text_of(f)? {
                    r.kind = Some(
                        parse_kind(&s)
                            .ok_or_else(|| perr(line, k, format!("{s:?} is not a known kind")))?,
                    );
                }
            }
            "importance" => {
                let v = match &f.value {
                    Value::Int(i) => engram_core::importance::from_number(*i as f64, true),
                    Value::Float(x) => engram_core::importance::from_number(*x, false),
                    Value::Null => continue,
                    _ => return Err(perr(line, k, "expected a number")),
                };
                r.importance = Some(v.map_err(|e| perr(line, k, e.message))?);
            }
            "tier" => {
                if let Some(s) = text_of(f)? {
                    r.tier = Some(Tier::parse(&s).map_err(|e| perr(line, k, e.message))?);
                }
            }
            "room" => r.room = text_of(f)?,
            "tags" => {
                r.tags = Some(match &f.value {
                    Value::Null => Vec::new(),
                    Value::List(items) => items
                        .iter()
                        .map(|i| {
                            i.as_text()
                                .ok_or_else(|| perr(line, k, "tags must be text"))
                        })
                        .collect::<Result<_, _>>()?,
                    v => vec![
                        v.as_text()
                            .ok_or_else(|| perr(line, k, "expected a list"))?,
                    ],
                })
            }
            "topic_key" => r.topic_key = Some(text_of(f)?),
            "pinned" => {
                r.pinned = Some(match &f.value {
                    Value::Bool(b) => *b,
                    Value::Null => false,
                    _ => return Err(perr(line, k, "expected true or false")),
                })
            }
            "source" => r.source = text_of(f)?,
            "session" | "session_id" => r.session_id = Some(text_of(f)?),
            "created" | "created_at" => r.created_at = time_of(f)?,
            "updated" | "updated_at" => r.updated_at = time_of(f)?,
            "valid_from" => r.valid_from = time_of(f)?,
            "valid_to" => r.valid_to = Some(time_of(f)?),
            "metadata" => {
                r.metadata = Some(match &f.value {
                    Value::Json(j) if j.is_object() => j.clone(),
                    Value::Null => serde_json::json!({}),
                    _ => return Err(perr(line, k, "expected a JSON object")),
                })
            }
            "links" => {
                r.links = Some(match &f.value {
                    Value::Null => Vec::new(),
                    Value::List(items) => items
                        .iter()
                        .map(|i| link_ref(i, line))
                        .collect::<Result<_, _>>()?,
                    v => vec![link_ref(v, line)?],
                })
            }
            // Anything else (Obsidian's aliases, cssclasses, a user's own keys) is left alone.
            _ => {}
        }
    }
    if r.content.trim().is_empty() {
        return Err(ParseError::new(
            0,
            "the file has no text below its front matter",
        ));
    }
    Ok(r)
}

/// Applies a file's fields onto a memory (fields the file leaves out keep their value).
/// `in_trash`: the file lies under `_trash/`.
pub fn apply_record(rec: &FileRecord, mut m: Memory, in_trash: bool) -> Memory {
    m.content = rec.content.clone();
    if rec.title.is_some() {
        m.title = rec.title.clone().filter(|t| !t.trim().is_empty());
    }
    if let Some(k) = rec.kind {
        m.kind = k;
    }
    if let Some(i) = rec.importance {
        m.importance = i;
    }
    m.tier = if in_trash {
        Tier::Trash
    } else {
        match rec.tier {
            Some(Tier::Trash) | None if m.tier == Tier::Trash => Tier::Active,
            Some(Tier::Trash) => Tier::Active,
            Some(t) => t,
            None => m.tier,
        }
    };
    if let Some(r) = &rec.room {
        m.room = r.clone();
    }
    if let Some(t) = &rec.tags {
        m.tags = t.clone();
    }
    if let Some(t) = &rec.topic_key {
        m.topic_key = t.clone();
    }
    if let Some(p) = rec.pinned {
        m.pinned = p;
    }
    if let Some(s) = &rec.source {
        m.source = s.clone();
    }
    if let Some(s) = &rec.session_id {
        m.session_id = s.clone();
    }
    if let Some(t) = rec.created_at {
        m.created_at = t;
    }
    if let Some(t) = rec.valid_from {
        m.valid_from = t;
    }
    if let Some(t) = rec.valid_to {
        m.valid_to = t;
    }
    if let Some(md) = &rec.metadata {
        m.metadata = md.clone();
    }
    m
}

/// A new memory from a file that names no memory the store holds.
pub fn memory_from_record(
    rec: &FileRecord,
    uid: String,
    now: Millis,
    default_importance: f64,
    in_trash: bool,
) -> Memory {
    let created = rec.created_at.unwrap_or(now);
    let base = Memory {
        id: rec.id.unwrap_or(0),
        uid,
        content: String::new(),
        title: None,
        kind: Kind::Fact,
        importance: default_importance,
        tags: Vec::new(),
        room: engram_core::room::COMMON.to_string(),
        topic_key: None,
        pinned: false,
        tier: Tier::Active,
        created_at: created,
        updated_at: rec.updated_at.unwrap_or(created),
        valid_from: created,
        valid_to: None,
        source: "vault".to_string(),
        session_id: None,
        metadata: serde_json::json!({}),
    };
    apply_record(rec, base, in_trash)
}

/// The folder a memory's file belongs in, relative to the vault root.
pub fn folder_for(m: &Memory) -> String {
    if m.tier == Tier::Trash {
        return TRASH_DIR.to_string();
    }
    if m.kind == Kind::Episode {
        let d = time::format(m.created_at);
        return format!("episode/{}/{}", &d[0..4], &d[5..7]);
    }
    m.kind.as_str().to_string()
}

/// A file name stem for a new file: `YYYYMMDD-<slug>-<uid>` (B's scheme, with the whole uid
/// so a link resolves even when the database is gone).
pub fn new_stem(m: &Memory) -> String {
    let d = time::format(m.created_at);
    let date = format!("{}{}{}", &d[0..4], &d[5..7], &d[8..10]);
    let first = m
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| {
            m.content
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
        });
    let mut slug = String::new();
    for c in first.trim().trim_start_matches('#').trim().chars() {
        if slug.chars().count() >= 40 {
            break;
        }
        if c.is_control() || "<>:\"/\\|?*#^[]".contains(c) {
            continue;
        }
        slug.push(if c.is_whitespace() { '-' } else { c });
    }
    let slug = slug.trim_matches(['-', '.']).to_string();
    let slug = if slug.is_empty() {
        "memory".into()
    } else {
        slug
    };
    format!("{date}-{slug}-{}", m.uid)
}

fn fmt_weight(w: f64) -> String {
    let s = format!("{w:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() { "0".into() } else { s.into() }
}

fn fmt_float(x: f64) -> String {
    let s = format!("{x}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// The text of a memory's file. `links`: (target file stem, kind, weight).
pub fn render(m: &Memory, links: &[(String, LinkKind, f64)]) -> String {
    let mut s = String::with_capacity(m.content.len() + 512);
    s.push_str("---\n");
    s.push_str(&format!("uid: {}\n", m.uid));
    s.push_str(&format!("id: {}\n", m.id));
    if let Some(t) = &m.title {
        s.push_str(&format!("title: {}\n", quote(t)));
    }
    s.push_str(&format!("kind: {}\n", m.kind));
    s.push_str(&format!("importance: {}\n", fmt_float(m.importance)));
    s.push_str(&format!("tier: {}\n", m.tier));
    s.push_str(&format!("room: {}\n", quote(&m.room)));
    let tags: Vec<String> = m.tags.iter().map(|t| quote(t)).collect();
    s.push_str(&format!("tags: [{}]\n", tags.join(", ")));
    if let Some(t) = &m.topic_key {
        s.push_str(&format!("topic_key: {}\n", quote(t)));
    }
    s.push_str(&format!("pinned: {}\n", m.pinned));
    s.push_str(&format!("source: {}\n", quote(&m.source)));
    if let Some(t) = &m.session_id {
        s.push_str(&format!("session: {}\n", quote(t)));
    }
    s.push_str(&format!("created: {}\n", time::format(m.created_at)));
    s.push_str(&format!("updated: {}\n", time::format(m.updated_at)));
    s.push_str(&format!("valid_from: {}\n", time::format(m.valid_from)));
    if let Some(t) = m.valid_to {
        s.push_str(&format!("valid_to: {}\n", time::format(t)));
    }
    if m.metadata.as_object().is_some_and(|o| !o.is_empty()) {
        s.push_str(&format!("metadata: {}\n", m.metadata));
    }
    if links.is_empty() {
        s.push_str("links: []\n");
    } else {
        s.push_str("links:\n");
        for (stem, kind, w) in links {
            let link = if *kind == LinkKind::Explicit && (*w - 1.0).abs() < 1e-9 {
                format!("[[{stem}]]")
            } else {
                format!("[[{stem}|{kind} {}]]", fmt_weight(*w))
            };
            s.push_str(&format!("  - {}\n", quote(&link)));
        }
    }
    s.push_str("---\n");
    s.push_str(&m.content);
    s.push('\n');
    s
}

/// [`render`] plus the writes folded into the memory, one quoted line each in the front
/// matter (`evidence:`), so the vault too holds every acknowledged word. Reindex leaves
/// the key alone; the database keeps the rows.
pub fn render_with_evidence(
    m: &Memory,
    links: &[(String, LinkKind, f64)],
    evidence: &[crate::evidence::Evidence],
) -> String {
    let text = render(m, links);
    if evidence.is_empty() {
        return text;
    }
    let mut lines = String::from("evidence:\n");
    for e in evidence {
        let title = e
            .title
            .as_ref()
            .map(|t| format!(" titled {t:?}"))
            .unwrap_or_default();
        let line = format!(
            "{} {} from {}{title}: {}",
            time::format(e.at),
            e.action,
            e.source,
            e.content
        );
        lines.push_str(&format!("  - {}\n", quote(&line)));
    }
    // Just before the closing `---` of the front matter.
    let end = text[4..].find("\n---\n").map_or(0, |i| i + 5);
    format!("{}{lines}{}", &text[..end], &text[end..])
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Writes a file atomically: a temporary file in the same folder, fsync, rename, fsync the
/// folder. The file is readable by its owner only.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    crate::db::create_private_dir(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| -> std::io::Result<()> {
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        #[cfg(unix)]
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io_err(path))
}

/// The first part of `rel` under `root` that is a symbolic link, if any. engram never writes
/// or reads through a link inside the vault: one that points out of the home would put
/// memories where the user does not look, and a scan that does not follow it would take its
/// files for deleted ones.
pub(crate) fn link_in_path(root: &Path, rel: &str) -> Option<PathBuf> {
    let mut p = root.to_path_buf();
    for part in rel.split('/').filter(|s| !s.is_empty()) {
        p.push(part);
        match std::fs::symlink_metadata(&p) {
            Ok(meta) if meta.file_type().is_symlink() => return Some(p),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

fn refuse_link(link: &Path) -> Error {
    Error::Io {
        path: link.to_path_buf(),
        source: std::io::Error::other(
            "is a symbolic link inside the vault; engram does not follow links out of the vault \
             (replace it with a real folder, or point `vault_dir` at the target)",
        ),
    }
}

/// Removes temporary files (`.<name>.tmp-<pid>-<n>`) that a killed process left in the
/// vault: those of a process that no longer runs, or older than an hour where that cannot
/// be told. Returns how many went.
pub(crate) fn clean_stray_temporaries(root: &Path) -> usize {
    let mut removed = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            if ft.is_dir() && !name.starts_with('.') {
                stack.push(entry.path());
                continue;
            }
            if !ft.is_file() || !name.starts_with('.') {
                continue;
            }
            let Some(pid) = temporary_pid(&name) else {
                continue;
            };
            if pid == std::process::id() {
                continue;
            }
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 3600);
            let proc_fs = Path::new("/proc/self").exists();
            let dead = proc_fs && !Path::new(&format!("/proc/{pid}")).exists();
            if (dead || old) && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// The process id in a `write_atomic` temporary's name.
fn temporary_pid(name: &str) -> Option<u32> {
    let (_, tail) = name.rsplit_once(".tmp-")?;
    let (pid, n) = tail.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// Every `.md` file under `root` (relative, `/`-separated), skipping hidden entries
/// (`.obsidian/`, temporary files).
pub(crate) fn walk(root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err(&dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err(&dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let ft = entry.file_type().map_err(io_err(&entry.path()))?;
            if ft.is_dir() {
                stack.push((entry.path(), child_rel));
            } else if ft.is_file() && name.ends_with(".md") {
                out.push(child_rel);
            }
        }
    }
    out.sort();
    Ok(out)
}

pub(crate) fn stem_of(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.strip_suffix(".md").unwrap_or(name)
}

/// The uid a file stem ends with, if any.
fn uid_in_stem(stem: &str) -> Option<String> {
    if stem.len() < 26 {
        return None;
    }
    let tail = &stem[stem.len() - 26..];
    ulid::Ulid::from_string(tail)
        .ok()
        .map(|_| tail.to_ascii_uppercase())
}

struct Recorded {
    uid: String,
    hash: String,
    size: i64,
    mtime: i64,
}

fn recorded(conn: &Connection) -> Result<HashMap<String, Recorded>> {
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

fn record_file(conn: &Connection, root: &Path, rel: &str, uid: &str, hash: &str) -> Result<()> {
    let meta = std::fs::metadata(root.join(rel)).map_err(io_err(&root.join(rel)))?;
    conn.prepare_cached(
        "INSERT INTO vault_files (path, uid, hash, size, mtime) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (path) DO UPDATE SET uid = excluded.uid, hash = excluded.hash, size = excluded.size, mtime = excluded.mtime",
    )?
    .execute(params![rel, uid, hash, meta.len() as i64, mtime_ns(&meta)])?;
    Ok(())
}

fn meta_get(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

fn meta_set(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

fn max_seq(conn: &Connection) -> Result<i64> {
    Ok(
        conn.query_row("SELECT coalesce(max(seq), 0) FROM changes", [], |r| {
            r.get(0)
        })?,
    )
}

fn load_by_id(conn: &Connection, id: MemoryId) -> Result<Option<Memory>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?1"
        ))?
        .query_row([id], row_to_memory)
        .optional()?)
}

/// The file stem a memory has (its current file) or will get.
fn stem_for(conn: &Connection, m: &Memory) -> Result<String> {
    let path: Option<String> = conn
        .prepare_cached("SELECT path FROM vault_files WHERE uid = ?1 ORDER BY path LIMIT 1")?
        .query_row([&m.uid], |r| r.get(0))
        .optional()?;
    Ok(match path {
        Some(p) => stem_of(&p).to_string(),
        None => new_stem(m),
    })
}

/// Writes one memory's file where it belongs, moving it if its folder changed.
fn write_memory(
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
        write_atomic(&full, text.as_bytes())?;
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

fn add_revision(
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

fn remove_file(root: &Path, rel: &str) -> Result<()> {
    let full = root.join(rel);
    match std::fs::remove_file(&full) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(&full)(e)),
    }
}

/// Drains the change log into the vault. With `full`, every memory is written.
fn sync_in(conn: &Connection, root: &Path, now: Millis) -> Result<SyncReport> {
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

fn status_in(conn: &Connection, root: &Path) -> Result<VaultStatus> {
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

/// Whether two memories differ in anything a file states (not `updated_at` or `id`).
fn differs(a: &Memory, b: &Memory) -> bool {
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
fn update_from_file(conn: &Connection, old: &Memory, new: &Memory, now: Millis) -> Result<()> {
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
    conn.execute(
        "UPDATE memories SET content = ?2, title = ?3, kind = ?4, importance = ?5, tags = ?6, room = ?7,
                topic_key = ?8, pinned = ?9, tier = ?10, created_at = ?11, valid_from = ?12, valid_to = ?13,
                source = ?14, session_id = ?15, metadata = ?16, content_hash = ?17, updated_at = ?18
         WHERE id = ?1",
        params![
            old.id,
            new.content,
            new.title,
            new.kind.as_str(),
            new.importance,
            serde_json::to_string(&new.tags).expect("tags serialise"),
            new.room,
            new.topic_key,
            new.pinned as i64,
            new.tier.as_str(),
            new.created_at,
            new.valid_from,
            new.valid_to,
            new.source,
            new.session_id,
            new.metadata.to_string(),
            crate::ops::content_hash(&new.content),
            now
        ],
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
fn set_links(
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

impl Store {
    /// The vault's folder, or `None` when the vault is off. A relative `vault_dir` is taken
    /// from the folder the database is in.
    pub fn vault_dir(&self) -> Option<PathBuf> {
        if self.config.vault == Switch::Off {
            return None;
        }
        let base = self
            .path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dir = self.config.vault_dir.trim();
        Some(if dir.is_empty() {
            base.join("memories")
        } else {
            base.join(dir)
        })
    }

    /// Writes the files of every memory changed since the last sync (all of them the first
    /// time, or when the vault moved). Call after any write; cheap when nothing changed.
    pub fn sync_vault(&mut self) -> Result<SyncReport> {
        let Some(root) = self.vault_dir() else {
            return Ok(SyncReport::default());
        };
        let cursor = meta_get(&self.conn, "vault_seq")?.and_then(|s| s.parse::<i64>().ok());
        if cursor.is_some()
            && cursor == Some(max_seq(&self.conn)?)
            && meta_get(&self.conn, "vault_root")?.as_deref() == Some(&*root.to_string_lossy())
        {
            return Ok(SyncReport::default());
        }
        let now = self.now();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        crate::db::create_private_dir(&root)?;
        let report = sync_in(&tx, &root, now)?;
        tx.commit()?;
        Ok(report)
    }

    /// How the vault's files compare with what engram last wrote or read (no file is read).
    pub fn vault_status(&self) -> Result<VaultStatus> {
        match self.vault_dir() {
            Some(root) => status_in(&self.conn, &root),
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
        if self.config.startup_index_check == IndexCheck::Off {
            self.sync_vault()?;
            return Ok((None, None));
        }
        self.sync_vault()?;
        let st = self.vault_status()?;
        if st.is_clean() {
            return Ok((None, None));
        }
        match self.config.startup_index_check {
            IndexCheck::Auto => {
                let report = self.reindex_vault_with(progress, false)?;
                let message = (report.gone > 0).then(|| {
                    format!(
                        "{}: {} file(s) gone outside engram; their memories stay until `engram reindex` moves them to the trash",
                        root.display(),
                        report.gone
                    )
                });
                Ok((Some(report), message))
            }
            _ => Ok((
                None,
                Some(format!(
                    "{}: {} file(s) changed and {} gone outside engram; run `engram reindex` to read them",
                    root.display(),
                    st.changed,
                    st.gone
                )),
            )),
        }
    }

    /// Reads the vault back into the database: new files become memories (their uid is
    /// written back), edited files update theirs (the previous text kept as a revision),
    /// files deleted by hand send their memory to the trash, and after a lost database every
    /// memory comes back with its uid, dates and links. Files that do not parse are reported
    /// and left alone.
    pub fn reindex_vault(&mut self, progress: &mut dyn FnMut(u64, u64)) -> Result<ReindexReport> {
        self.reindex_vault_with(progress, true)
    }

    /// [`reindex_vault`](Self::reindex_vault); with `trash_gone` false (the start-of-process
    /// check, which also runs before read-only commands), a memory whose file is gone stays
    /// where it is and the report counts it in `gone`: only `engram reindex` moves it.
    fn reindex_vault_with(
        &mut self,
        progress: &mut dyn FnMut(u64, u64),
        trash_gone: bool,
    ) -> Result<ReindexReport> {
        let Some(root) = self.vault_dir() else {
            return Ok(ReindexReport::default());
        };
        let now = self.now();
        let default_importance = self.config.default_importance;
        let actr = self.config.actr;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        crate::db::create_private_dir(&root)?;
        let mut report = ReindexReport {
            synced: sync_in(&tx, &root, now)?,
            ..Default::default()
        };
        let rec = recorded(&tx)?;
        let files = walk(&root)?;
        report.files = files.len();
        let total = files.len() as u64;

        // Which uid each stem names, for links: the files engram knows, then those read now.
        let mut stems: HashMap<String, String> = rec
            .iter()
            .map(|(p, r)| (stem_of(p).to_string(), r.uid.clone()))
            .collect();
        let mut claimed: HashSet<String> = HashSet::new();
        let mut todo: Vec<(String, String, FileRecord)> = Vec::new(); // rel, hash, record
        for (i, rel) in files.iter().enumerate() {
            if i % 64 == 0 {
                progress(i as u64, total);
            }
            let full = root.join(rel);
            let meta = std::fs::metadata(&full).map_err(io_err(&full))?;
            if let Some(r) = rec.get(rel)
                && meta.len() as i64 == r.size
                && mtime_ns(&meta) == r.mtime
            {
                report.unchanged += 1;
                claimed.insert(r.uid.clone());
                continue;
            }
            let bytes = std::fs::read(&full).map_err(io_err(&full))?;
            let hash = sha256_hex(&bytes);
            if let Some(r) = rec.get(rel)
                && r.hash == hash
            {
                record_file(&tx, &root, rel, &r.uid, &hash)?;
                report.unchanged += 1;
                claimed.insert(r.uid.clone());
                continue;
            }
            let parsed = std::str::from_utf8(&bytes)
                .map_err(|_| ParseError::new(0, "the file is not UTF-8 text"))
                .and_then(frontmatter::parse)
                .and_then(|d| record_from_doc(&d));
            match parsed {
                Ok(r) => {
                    if let Some(u) = &r.uid {
                        stems.insert(stem_of(rel).to_string(), u.to_ascii_uppercase());
                    }
                    todo.push((rel.clone(), hash, r));
                }
                Err(e) => report.warnings.push(VaultWarning {
                    path: full,
                    line: e.line,
                    message: format!("{}; file skipped", e.message),
                }),
            }
        }
        // Files that hold a uid claimed by another (unchanged) file, or twice: copies.
        let mut rerender: Vec<MemoryId> = Vec::new();
        let mut link_todo: Vec<(MemoryId, PathBuf, Vec<LinkRef>)> = Vec::new();
        for (rel, hash, r) in &todo {
            let full = root.join(rel);
            let in_trash = rel.starts_with(&format!("{TRASH_DIR}/"));
            let uid = r
                .uid
                .as_ref()
                .map(|u| u.trim().to_ascii_uppercase())
                .filter(|u| ulid::Ulid::from_string(u).is_ok())
                .filter(|u| !claimed.contains(u));
            if r.uid
                .as_ref()
                .is_some_and(|u| ulid::Ulid::from_string(u.trim()).is_err())
            {
                report.warnings.push(VaultWarning {
                    path: full.clone(),
                    line: 0,
                    message: "`uid` is not a ULID; the file becomes a new memory".into(),
                });
            }
            let existing = match &uid {
                Some(u) => {
                    crate::store::load_in(&tx, &engram_core::memory::IdRef::Uid(u.clone()), "uid")
                        .ok()
                }
                None => None,
            };
            let result: Result<(MemoryId, bool)> = match (&uid, existing) {
                (Some(_), Some(old)) => {
                    let new = apply_record(r, old.clone(), in_trash);
                    if differs(&old, &new) {
                        update_from_file(&tx, &old, &new, now).map(|_| {
                            report.updated += 1;
                            (old.id, false)
                        })
                    } else {
                        Ok((old.id, false))
                    }
                }
                (Some(u), None) => {
                    let m = memory_from_record(r, u.clone(), now, default_importance, in_trash);
                    insert_memory(&tx, &m, None, true, true, &actr).map(|id| {
                        report.restored += 1;
                        (id.unwrap_or(0), false)
                    })
                }
                (None, _) => {
                    let at = r.created_at.unwrap_or(now);
                    let u = ulid::Ulid::from_parts(at.max(0) as u64, crate::ops::rand_bits())
                        .to_string();
                    let m = memory_from_record(r, u, now, default_importance, in_trash);
                    insert_memory(&tx, &m, None, false, true, &actr).map(|id| {
                        report.created += 1;
                        (id.unwrap_or(0), true)
                    })
                }
            };
            match result {
                Ok((id, write_back)) => {
                    let uid: String =
                        tx.query_row("SELECT uid FROM memories WHERE id = ?1", [id], |row| {
                            row.get(0)
                        })?;
                    claimed.insert(uid.clone());
                    stems.insert(stem_of(rel).to_string(), uid.clone());
                    // A secret typed into the file was redacted on the way in: the file
                    // is rewritten from the clean row too, so the secret leaves the disk.
                    let had_secret = !redact::redact(&r.content).1.is_empty()
                        || r.title
                            .as_deref()
                            .is_some_and(|t| !redact::redact(t).1.is_empty());
                    if write_back || had_secret {
                        // The uid goes back into the file, at the path the user chose.
                        tx.execute(
                            "INSERT INTO vault_files (path, uid, hash, size, mtime) VALUES (?1, ?2, '', -1, -1)
                             ON CONFLICT (path) DO UPDATE SET uid = excluded.uid",
                            params![rel, uid],
                        )?;
                        rerender.push(id);
                    } else {
                        record_file(&tx, &root, rel, &uid, hash)?;
                    }
                    if let Some(links) = &r.links {
                        link_todo.push((id, full, links.clone()));
                    }
                }
                Err(Error::Input(e)) => report.warnings.push(VaultWarning {
                    path: full,
                    line: 0,
                    message: format!("{e}; file skipped"),
                }),
                Err(e) => return Err(e),
            }
        }
        for (src, path, links) in link_todo {
            let mut want = Vec::new();
            for l in links {
                let uid = if ulid::Ulid::from_string(&l.target).is_ok() && l.target.len() == 26 {
                    Some(l.target.to_ascii_uppercase())
                } else {
                    stems
                        .get(&l.target)
                        .cloned()
                        .or_else(|| uid_in_stem(&l.target))
                };
                let dst: Option<MemoryId> = match &uid {
                    Some(u) => tx
                        .query_row("SELECT id FROM memories WHERE uid = ?1", [u], |r| r.get(0))
                        .optional()?,
                    None => None,
                };
                match dst {
                    Some(d) if d != src => {
                        if !want.iter().any(|(wd, wk, _)| *wd == d && *wk == l.kind) {
                            want.push((d, l.kind, l.weight));
                        }
                    }
                    Some(_) => {}
                    None => report.warnings.push(VaultWarning {
                        path: path.clone(),
                        line: l.line,
                        message: format!("link [[{}]] names no memory; ignored", l.target),
                    }),
                }
            }
            if set_links(&tx, src, &want, now)? {
                report.links_changed += 1;
            }
        }
        // Files engram wrote that are gone. If the whole vault is gone, write it again;
        // otherwise a memory whose file was deleted by hand goes to the trash.
        let seen: HashSet<&str> = files.iter().map(String::as_str).collect();
        let gone: Vec<(&String, &Recorded)> = rec
            .iter()
            .filter(|(p, _)| !seen.contains(p.as_str()))
            .collect();
        let wiped = files.is_empty() && !gone.is_empty();
        for (p, r) in gone {
            // Behind a link: not deleted, just not followed. Left as it is, and said.
            if let Some(link) = link_in_path(&root, p) {
                report.warnings.push(VaultWarning {
                    path: link,
                    line: 0,
                    message: "is a symbolic link; engram does not follow links out of the vault, \
                              so the files behind it are left alone and their memories kept"
                        .into(),
                });
                continue;
            }
            if !trash_gone && !wiped && !claimed.contains(&r.uid) {
                report.gone += 1;
                continue;
            }
            tx.execute("DELETE FROM vault_files WHERE path = ?1", [p])?;
            if claimed.contains(&r.uid) {
                continue; // moved by hand: its new path was recorded above
            }
            let Some(m) =
                crate::store::load_in(&tx, &engram_core::memory::IdRef::Uid(r.uid.clone()), "uid")
                    .ok()
            else {
                continue;
            };
            if !wiped && m.tier != Tier::Trash {
                tx.execute(
                    "UPDATE memories SET tier = 'trash', updated_at = ?2 WHERE id = ?1",
                    params![m.id, now],
                )?;
                report.trashed += 1;
            }
            rerender.push(m.id);
        }
        let mut sync = SyncReport::default();
        rerender.sort_unstable();
        rerender.dedup();
        for id in rerender {
            if let Some(m) = load_by_id(&tx, id)? {
                write_memory(&tx, &root, &m, now, &mut sync)?;
            }
        }
        report.synced.written += sync.written;
        report.synced.removed += sync.removed;
        // The files are the source of what changed here: nothing to write back.
        meta_set(&tx, "vault_seq", &max_seq(&tx)?.to_string())?;
        progress(total, total);
        tx.commit()?;
        Ok(report)
    }
}
