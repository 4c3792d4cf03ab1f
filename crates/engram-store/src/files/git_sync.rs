//! Seed C's git-chunk sync, the one owner of its format: a folder (`.engram/` in a
//! repository, committed with it) holding `manifest.json`
//! (`{"version":1,"chunks":[{"id","created_by","created_at","sessions","memories","prompts"}]}`)
//! and `chunks/<id>.jsonl.gz`, each a gzipped JSON object `{sessions, observations,
//! prompts}` in C's shapes, its id the first 8 hex digits of the SHA-256 of its content.
//!
//! A chunk is written once and never modified: `sync_export` writes the memories,
//! sessions and prompts no chunk of the folder holds yet as one new chunk and appends it to
//! the manifest. `sync_import` applies each chunk of the manifest this store has not
//! applied, through C's importer (uids derived from C's sync ids, so a chunk applied twice
//! creates nothing), skipping observations that are this store's own memories. Which
//! chunks a store has applied or written is its sync state, kept in `meta` (`sync.chunks`,
//! `sync.last`), so every backend keeps it the same way.

use crate::storage::rows::{RowKey, Section, StoredRow};
use crate::{Error, ImportReport, Result, Store};
use engram_core::{Memory, Tier, time};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const FORMAT_VERSION: u32 = 1;
/// The store's sync state: `{chunk id: {"at", "how": "imported" | "written"}}`.
const META_CHUNKS: &str = "sync.chunks";
/// The last sync: `{"at", "action", "folder"}`.
const META_LAST: &str = "sync.last";
/// A chunk larger than this once decompressed is refused (C's chunks are a few MiB).
const MAX_CHUNK_BYTES: u64 = 256 << 20;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChunkEntry {
    pub id: String,
    #[serde(default)]
    pub created_by: String,
    #[serde(default)]
    pub created_at: String,
    #[serde(default)]
    pub sessions: usize,
    #[serde(default)]
    pub memories: usize,
    #[serde(default)]
    pub prompts: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct Manifest {
    pub version: u32,
    #[serde(default)]
    pub chunks: Vec<ChunkEntry>,
}

/// What `sync_export` wrote: the new chunk, or `None` when nothing was new.
#[derive(Debug, Clone, Serialize)]
pub struct SyncExport {
    pub folder: PathBuf,
    pub chunk: Option<ChunkEntry>,
}

/// What `sync_import` applied.
#[derive(Debug, Clone, Serialize)]
pub struct SyncImport {
    pub folder: PathBuf,
    /// The chunks applied now, in manifest order.
    pub imported: Vec<String>,
    /// The manifest's chunks this store had already applied or written.
    pub already: usize,
    pub created: std::collections::BTreeMap<&'static str, usize>,
    pub warnings: Vec<String>,
}

/// The sync state: the store's, and the folder's when one is given.
#[derive(Debug, Clone, Serialize)]
pub struct SyncStatus {
    pub folder: Option<PathBuf>,
    /// Whether the folder has a manifest.
    pub manifest: bool,
    /// Chunks in the folder's manifest.
    pub chunks: usize,
    /// The manifest's chunks this store has not applied yet.
    pub pending: Vec<String>,
    /// Chunks this store has applied or written (in any folder).
    pub known_chunks: usize,
    /// Memories of the scope no chunk of the folder holds yet.
    pub unexported: usize,
    pub last: Option<Value>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

fn bad(path: &Path, message: impl Into<String>) -> Error {
    Error::Config {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// The sync folder for a working directory: `.engram` at the root of the git repository
/// holding `dir` (C commits it with the code), else in `dir` itself.
pub fn folder_for(dir: &Path) -> PathBuf {
    let root = dir
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(dir);
    root.join(".engram")
}

fn chunk_path(folder: &Path, id: &str) -> PathBuf {
    folder.join("chunks").join(format!("{id}.jsonl.gz"))
}

/// A chunk id is what C writes: 8 hex digits (a longer hex id is accepted, nothing else,
/// so an id never names a path outside `chunks/`).
fn valid_id(id: &str) -> bool {
    (8..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

pub fn read_manifest(folder: &Path) -> Result<Option<Manifest>> {
    let path = folder.join("manifest.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let m: Manifest =
        serde_json::from_str(&text).map_err(|e| bad(&path, format!("not a sync manifest: {e}")))?;
    if m.version > FORMAT_VERSION {
        return Err(bad(
            &path,
            format!(
                "manifest version {} is newer than this engram reads ({FORMAT_VERSION})",
                m.version
            ),
        ));
    }
    if let Some(c) = m.chunks.iter().find(|c| !valid_id(&c.id)) {
        return Err(bad(
            &path,
            format!("chunk id {:?} is not hexadecimal", c.id),
        ));
    }
    Ok(Some(m))
}

/// One chunk's content (`{sessions, observations, prompts}`; several JSON lines merge).
pub fn read_chunk(folder: &Path, id: &str) -> Result<Value> {
    let path = chunk_path(folder, id);
    let f = std::fs::File::open(&path).map_err(io(&path))?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(f)
        .take(MAX_CHUNK_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| bad(&path, format!("not a gzipped JSON chunk: {e}")))?;
    let mut merged = json!({ "sessions": [], "observations": [], "prompts": [] });
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value =
            serde_json::from_str(line).map_err(|e| bad(&path, format!("line {}: {e}", n + 1)))?;
        for key in ["sessions", "observations", "prompts"] {
            if let Some(items) = v.get(key).and_then(Value::as_array) {
                merged[key]
                    .as_array_mut()
                    .expect("an array")
                    .extend(items.iter().cloned());
            }
        }
    }
    Ok(merged)
}

/// What the folder's chunks already hold: observations by sync id, sessions by id,
/// prompts by session, time and text.
#[derive(Default)]
struct InFolder {
    observations: HashSet<String>,
    sessions: HashSet<String>,
    prompts: HashSet<String>,
}

/// A C-style sync id for a prompt engram holds (`prompt-<16 hex>`, from its identity,
/// [`prompt_key`]): the same prompt gets the same id in every chunk and export, so C,
/// which dedupes prompts by sync id, takes it once. `p` is C's prompt object.
pub fn prompt_sync_id(p: &Value) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(prompt_key(p).as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("prompt-{hex}")
}

/// A prompt's identity across machines: its session, its time as an instant (C writes
/// `2025-11-02 09:10:00`, engram RFC 3339) and its text as stored (redacted), so a prompt
/// another machine's chunk holds is never written again (tester-c: C's dates made every
/// one look new, and C would have imported them twice).
fn prompt_key(p: &Value) -> String {
    let at = p["created_at"].as_str().unwrap_or("");
    let at = time::parse(at).map_or_else(|| at.to_string(), |ms| ms.to_string());
    let content = engram_core::redact::redact(p["content"].as_str().unwrap_or("")).0;
    format!(
        "{}\u{0}{at}\u{0}{content}",
        p["session_id"].as_str().unwrap_or(""),
    )
}

fn in_folder(folder: &Path, manifest: &Manifest) -> Result<InFolder> {
    let mut held = InFolder::default();
    for c in &manifest.chunks {
        let v = read_chunk(folder, &c.id)?;
        let items = |k: &str| v[k].as_array().cloned().unwrap_or_default();
        held.observations.extend(
            items("observations")
                .iter()
                .filter_map(|o| o["sync_id"].as_str().map(str::to_string)),
        );
        held.sessions.extend(
            items("sessions")
                .iter()
                .filter_map(|s| s["id"].as_str().map(str::to_string)),
        );
        held.prompts.extend(items("prompts").iter().map(prompt_key));
    }
    Ok(held)
}

/// A memory's C sync id: C's own (`obs-…`) when it came from C's database or chunks, so
/// the ids a C user kept still name it; else its uid. compat-c's replies answer with it.
pub fn sync_id(m: &Memory) -> String {
    m.metadata
        .get("c")
        .and_then(|c| c.get("sync_id"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| m.uid.clone())
}

/// A memory as C's observation (pins are local in C, never synced).
fn observation(m: &Memory) -> Value {
    let c = m.metadata.get("c");
    let ty = m
        .metadata
        .get("c_type")
        .or_else(|| c.and_then(|c| c.get("type")))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| m.kind.to_string());
    let scope = m
        .metadata
        .get("c_scope")
        .or_else(|| c.and_then(|c| c.get("scope")))
        .and_then(Value::as_str)
        .unwrap_or("project");
    let mut o = json!({
        "sync_id": sync_id(m),
        "session_id": m.session_id,
        "type": ty,
        "title": m.title,
        "content": m.content,
        "tool_name": c.and_then(|c| c.get("tool_name")),
        "project": m.room,
        "scope": scope,
        "topic_key": m.topic_key,
        "created_at": time::format(m.created_at),
        "updated_at": time::format(m.updated_at),
    });
    // C's counters travel with a memory that came from C, so the other machine keeps them.
    for key in ["revision_count", "duplicate_count"] {
        if let Some(n) = c.and_then(|c| c.get(key)).filter(|n| n.is_u64()) {
            o[key] = n.clone();
        }
    }
    o
}

impl Store {
    /// Every memory the store holds, in pages of 1,000 (one page in memory at a time).
    fn each_memory(&self, mut f: impl FnMut(Memory)) -> Result<()> {
        let mut after: Option<RowKey> = None;
        loop {
            let page = self
                .reads()
                .rows_after(Section::Memories, after.as_ref(), 1000)?;
            for row in page.rows {
                if let StoredRow::Memory { memory, .. } = row {
                    f(memory);
                }
            }
            match page.next {
                Some(k) => after = Some(k),
                None => return Ok(()),
            }
        }
    }

    /// The memories of `room` (every room when `None`) a chunk would carry: everything but
    /// the trash and superseded history, whose successors travel instead.
    fn syncable(&self, room: Option<&str>) -> Result<Vec<Memory>> {
        let mut out = Vec::new();
        self.each_memory(|memory| {
            if !matches!(memory.tier, Tier::Trash | Tier::Superseded)
                && room.is_none_or(|r| memory.room == r)
            {
                out.push(memory);
            }
        })?;
        Ok(out)
    }

    /// The C sync id of every memory this store holds, in any tier: C's own (`obs-…`) for
    /// a memory that came from C's database or chunks, else its uid. A chunk's observation
    /// already held is the same memory, whatever its chunk says of its times.
    fn held_sync_ids(&self) -> Result<HashSet<String>> {
        let mut out = HashSet::new();
        self.each_memory(|memory| {
            out.insert(sync_id(&memory));
            out.insert(memory.uid);
        })?;
        Ok(out)
    }

    fn sync_state(&self) -> Result<Map<String, Value>> {
        Ok(self
            .reads()
            .meta(META_CHUNKS)?
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default())
    }

    /// Records chunks as applied or written, and the last sync, in one write.
    fn record_sync(&mut self, ids: &[String], how: &str, folder: &Path) -> Result<()> {
        let at = time::format(self.now());
        let last = json!({ "at": at, "action": how, "folder": folder }).to_string();
        self.write(|tx| {
            let mut state = tx
                .meta(META_CHUNKS)?
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .and_then(|v| v.as_object().cloned())
                .unwrap_or_default();
            for id in ids {
                state.insert(id.clone(), json!({ "at": at, "how": how }));
            }
            tx.set_meta(META_CHUNKS, &Value::Object(state).to_string())?;
            tx.set_meta(META_LAST, &last)
        })
    }

    /// Writes what no chunk of `folder` holds yet (of `room`, or every room) as one new
    /// chunk, appended to the manifest; nothing when nothing is new.
    pub fn sync_export(
        &mut self,
        folder: &Path,
        room: Option<&str>,
        created_by: &str,
    ) -> Result<SyncExport> {
        let mut manifest = read_manifest(folder)?.unwrap_or(Manifest {
            version: FORMAT_VERSION,
            chunks: Vec::new(),
        });
        let held = in_folder(folder, &manifest)?;
        let memories: Vec<Value> = self
            .syncable(room)?
            .iter()
            .filter(|m| !held.observations.contains(&sync_id(m)))
            .map(observation)
            .collect();
        let in_scope = |r: &str| room.is_none_or(|x| x == r);
        let sessions: Vec<Value> = self
            .reads()
            .all_sessions()?
            .into_iter()
            .filter(|s| in_scope(&s.room) && !held.sessions.contains(&s.id))
            .map(|s| {
                json!({
                    "id": s.id, "project": s.room, "directory": s.directory.unwrap_or_default(),
                    "started_at": time::format(s.started_at),
                    "ended_at": s.ended_at.map(time::format), "summary": s.summary,
                })
            })
            .collect();
        let prompts: Vec<Value> = self
            .reads()
            .all_prompts()?
            .into_iter()
            .filter(|p| in_scope(&p.room))
            .map(|p| {
                let mut v = json!({
                    "session_id": p.session_id, "content": p.content, "project": p.room,
                    "created_at": time::format(p.created_at),
                });
                v["sync_id"] = json!(prompt_sync_id(&v));
                v
            })
            .filter(|p| !held.prompts.contains(&prompt_key(p)))
            .collect();
        if memories.is_empty() && sessions.is_empty() && prompts.is_empty() {
            return Ok(SyncExport {
                folder: folder.to_path_buf(),
                chunk: None,
            });
        }
        let entry_counts = (sessions.len(), memories.len(), prompts.len());
        let mut body =
            json!({ "sessions": sessions, "observations": memories, "prompts": prompts })
                .to_string();
        body.push('\n');
        let id = {
            use sha2::{Digest, Sha256};
            let d = Sha256::digest(body.as_bytes());
            d.iter()
                .take(4)
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let path = chunk_path(folder, &id);
        // Never modified: a chunk already there under this id holds this very content.
        if !path.exists() {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(body.as_bytes()).map_err(io(&path))?;
            let bytes = gz.finish().map_err(io(&path))?;
            std::fs::create_dir_all(folder.join("chunks")).map_err(io(folder))?;
            crate::fsutil::write_atomic(&path, &bytes).map_err(io(&path))?;
        }
        let entry = ChunkEntry {
            id: id.clone(),
            created_by: created_by.to_string(),
            created_at: time::format(self.now()),
            sessions: entry_counts.0,
            memories: entry_counts.1,
            prompts: entry_counts.2,
        };
        if !manifest.chunks.iter().any(|c| c.id == id) {
            manifest.chunks.push(entry.clone());
        }
        let mut text = serde_json::to_string_pretty(&manifest).expect("serialisable");
        text.push('\n');
        let manifest_path = folder.join("manifest.json");
        crate::fsutil::write_atomic(&manifest_path, text.as_bytes()).map_err(io(&manifest_path))?;
        self.record_sync(std::slice::from_ref(&id), "written", folder)?;
        Ok(SyncExport {
            folder: folder.to_path_buf(),
            chunk: Some(entry),
        })
    }

    /// Applies every chunk of `folder`'s manifest this store has not applied or written.
    pub fn sync_import(&mut self, folder: &Path) -> Result<SyncImport> {
        let manifest = read_manifest(folder)?.unwrap_or_default();
        let known = self.sync_state()?;
        let mut out = SyncImport {
            folder: folder.to_path_buf(),
            imported: Vec::new(),
            already: 0,
            created: Default::default(),
            warnings: Vec::new(),
        };
        let now = self.now();
        for c in &manifest.chunks {
            if known.contains_key(&c.id) {
                out.already += 1;
                continue;
            }
            let mut v = read_chunk(folder, &c.id)?;
            // This store's own memories come back under their uid, and C's under C's sync
            // id (converted, or applied from another chunk): never a second copy.
            let held = self.held_sync_ids()?;
            if let Some(obs) = v["observations"].as_array_mut() {
                obs.retain(|o| o["sync_id"].as_str().is_none_or(|s| !held.contains(s)));
            }
            let batch = crate::importers::read_c_value(&v, now);
            let report: ImportReport = self.import_batch(batch, &mut |_, _| {})?;
            for (k, n) in report.created {
                *out.created.entry(k).or_default() += n;
            }
            out.warnings.extend(
                report
                    .warnings
                    .into_iter()
                    .map(|w| format!("chunk {}: {w}", c.id)),
            );
            self.record_sync(std::slice::from_ref(&c.id), "imported", folder)?;
            out.imported.push(c.id.clone());
        }
        Ok(out)
    }

    /// The sync state; with a folder, what its manifest holds and what is still to do.
    pub fn sync_status(&self, folder: Option<&Path>, room: Option<&str>) -> Result<SyncStatus> {
        let known = self.sync_state()?;
        let last = self
            .reads()
            .meta(META_LAST)?
            .and_then(|t| serde_json::from_str(&t).ok());
        let mut status = SyncStatus {
            folder: folder.map(Path::to_path_buf),
            manifest: false,
            chunks: 0,
            pending: Vec::new(),
            known_chunks: known.len(),
            unexported: 0,
            last,
        };
        let Some(folder) = folder else {
            return Ok(status);
        };
        let manifest = read_manifest(folder)?;
        status.manifest = manifest.is_some();
        let manifest = manifest.unwrap_or_default();
        status.chunks = manifest.chunks.len();
        status.pending = manifest
            .chunks
            .iter()
            .filter(|c| !known.contains_key(&c.id))
            .map(|c| c.id.clone())
            .collect();
        let held = in_folder(folder, &manifest)?;
        status.unexported = self
            .syncable(room)?
            .iter()
            .filter(|m| !held.observations.contains(&sync_id(m)))
            .count();
        Ok(status)
    }
}
