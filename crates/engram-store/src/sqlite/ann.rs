//! The approximate-nearest-neighbour index for large stores: an HNSW graph (usearch) over
//! the vectors of one model, kept as a rebuildable cache next to the database.
//!
//! SQLite stays the source of truth. The index is saved as `<db>.ann-<seq>.usearch` with a
//! small `<db>.ann.json` naming that file and the embeddings `seq` it covers, so another
//! process loads it in about a second instead of reading and re-inserting every vector,
//! then applies the rows written since. The JSON is replaced atomically after the index
//! file is complete, so a reader never sees a half-written index; a reader that cannot
//! load what the JSON names (deleted by a newer save, damaged, another model) rebuilds.
//!
//! Vectors are L2-normalised, so the cosine metric equals the dot product the exact scan
//! uses, and `1 − distance` is the cosine.

use crate::{Error, Result};
use engram_core::MemoryId;
use engram_core::config::AnnQuantization;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

/// What `<db>.ann.json` records about a saved index.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SavedMeta {
    pub model: String,
    pub dim: usize,
    pub quantization: AnnQuantization,
    /// The highest embeddings `seq` the index holds.
    pub last_seq: i64,
    /// The index file, in the database's folder.
    pub file: String,
    /// The store's generation (`meta.store_generation`, renewed by a restore): an index
    /// saved for another generation describes other rows under the same ids.
    pub generation: String,
}

impl SavedMeta {
    pub fn fits(&self, model: &str, dim: usize, q: AnnQuantization, generation: &str) -> bool {
        self.model == model
            && self.dim == dim
            && self.quantization == q
            && self.generation == generation
    }
}

/// What a save records besides the index itself.
pub(crate) struct Saving<'a> {
    pub model: &'a str,
    pub quantization: AnnQuantization,
    pub last_seq: i64,
    pub generation: &'a str,
}

/// Removes index files of saves older than `seq`, never the one `<db>.ann.json` names now
/// (a concurrent newer save may have written it), and temporary files left by a process
/// that died saving (older than an hour).
fn remove_older(dir: &Path, stem: &str, seq: i64) {
    let named = saved_meta(&dir.join(stem)).map(|m| m.file);
    let prefix = format!("{stem}.ann-");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        if Some(&name) == named.as_ref() {
            continue;
        }
        let stale = if name.ends_with(".tmp") {
            e.metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > std::time::Duration::from_secs(3600))
        } else {
            rest.split('-')
                .next()
                .and_then(|s| s.parse::<i64>().ok())
                .is_some_and(|s| s < seq)
        };
        if stale {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// What `<db>.ann.json` says, if it exists and parses.
pub(crate) fn saved_meta(db: &Path) -> Option<SavedMeta> {
    serde_json::from_slice(&std::fs::read(meta_path(db)).ok()?).ok()
}

/// An HNSW index of one model's vectors, keyed by memory id.
///
/// A short-lived process maps the saved file read-only (`view`: no load time, pages read
/// on demand, shared with other processes) and keeps the vectors written since in a small
/// `overlay` that is scanned exactly and shadows the file's entry for the same id. A
/// long-running process loads the file into memory instead, adds to it, and saves it.
pub(crate) struct Ann {
    index: Index,
    dim: usize,
    overlay: Option<HashMap<MemoryId, Vec<f32>>>,
}

fn err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Index(format!("vector index: {what}: {e}"))
}

fn options(dim: usize, q: AnnQuantization, ef_search: usize) -> IndexOptions {
    IndexOptions {
        dimensions: dim,
        metric: MetricKind::Cos,
        quantization: match q {
            AnnQuantization::F32 => ScalarKind::F32,
            AnnQuantization::F16 => ScalarKind::F16,
            AnnQuantization::I8 => ScalarKind::I8,
        },
        // usearch's defaults (16 links, 128 candidates while adding); the search width is
        // a setting because it trades exactness for time.
        connectivity: 16,
        expansion_add: 128,
        expansion_search: ef_search,
        multi: false,
    }
}

impl Ann {
    /// An empty index with room for `capacity` vectors added by up to `threads` threads.
    pub fn new(
        dim: usize,
        q: AnnQuantization,
        ef_search: usize,
        capacity: usize,
        threads: usize,
    ) -> Result<Ann> {
        let index = Index::new(&options(dim, q, ef_search)).map_err(|e| err("create", e))?;
        index
            .reserve_capacity_and_threads(capacity.max(1024), threads.max(1))
            .map_err(|e| err("reserve", e))?;
        Ok(Ann {
            index,
            dim,
            overlay: None,
        })
    }

    /// Adds vectors of ids not in the index yet, from several threads at once (a build).
    fn add_parallel(&self, rows: &[(MemoryId, Vec<f32>)], threads: usize) -> Result<()> {
        let chunk = rows.len().div_ceil(threads.max(1)).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = rows
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        for (id, v) in part.iter().filter(|(_, v)| v.len() == self.dim) {
                            self.index.add(*id as u64, v).map_err(|e| err("add", e))?;
                        }
                        Ok::<(), Error>(())
                    })
                })
                .collect();
            handles.into_iter().try_for_each(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(err("add", "a thread panicked")))
            })
        })
    }

    /// Vectors held (an id in both the file and the overlay counts once).
    pub fn len(&self) -> usize {
        match &self.overlay {
            Some(o) => {
                self.index.size()
                    + o.keys()
                        .filter(|id| !self.index.contains(**id as u64))
                        .count()
            }
            None => self.index.size(),
        }
    }

    /// Whether this index is a read-only view of a saved file (which is never saved back).
    pub fn is_view(&self) -> bool {
        self.overlay.is_some()
    }

    /// Adds or replaces the vector of `id`.
    pub fn put(&mut self, id: MemoryId, v: &[f32]) -> Result<()> {
        if v.len() != self.dim {
            return Ok(());
        }
        if let Some(o) = &mut self.overlay {
            o.insert(id, v.to_vec());
            return Ok(());
        }
        let key = id as u64;
        if self.index.contains(key) {
            self.index.remove(key).map_err(|e| err("remove", e))?;
        }
        if self.index.size() + 1 > self.index.capacity() {
            let grown = (self.index.capacity() * 2).max(1024);
            self.index.reserve(grown).map_err(|e| err("reserve", e))?;
        }
        self.index.add(key, v).map_err(|e| err("add", e))
    }

    /// The stored vector of `id` (dequantised), if any.
    pub fn get(&self, id: MemoryId) -> Option<Vec<f32>> {
        if let Some(v) = self.overlay.as_ref().and_then(|o| o.get(&id)) {
            return Some(v.clone());
        }
        let mut buf = vec![0f32; self.dim];
        match self.index.get(id as u64, &mut buf) {
            Ok(n) if n >= 1 => Some(buf),
            _ => None,
        }
    }

    /// The `want` nearest vectors to `query` among `allowed` (all when `None`):
    /// `(id, cosine)`, best first.
    pub fn search(
        &self,
        query: &[f32],
        allowed: Option<&HashSet<MemoryId>>,
        want: usize,
    ) -> Result<Vec<(MemoryId, f32)>> {
        let want = want.min(self.len());
        if want == 0 {
            return Ok(Vec::new());
        }
        let found = match (allowed, &self.overlay) {
            (None, None) => self.index.search(query, want),
            (Some(a), None) => self
                .index
                .filtered_search(query, want, |k| a.contains(&(k as MemoryId))),
            (a, Some(o)) => self.index.filtered_search(query, want, |k| {
                let id = k as MemoryId;
                !o.contains_key(&id) && a.is_none_or(|a| a.contains(&id))
            }),
        }
        .map_err(|e| err("search", e))?;
        let mut out: Vec<(MemoryId, f32)> = found
            .keys
            .iter()
            .zip(&found.distances)
            .map(|(k, d)| (*k as MemoryId, 1.0 - d))
            .collect();
        if let Some(o) = &self.overlay {
            out.extend(
                o.iter()
                    .filter(|(id, _)| allowed.is_none_or(|a| a.contains(id)))
                    .map(|(id, v)| (*id, engram_core::embed::dot(query, v))),
            );
            out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            out.truncate(want);
        }
        Ok(out)
    }

    /// Saves the index next to `db` as covering embeddings up to `last_seq` (synced to
    /// disk under a name no other save can take), then points `<db>.ann.json` at it and
    /// removes older index files.
    pub fn save(&self, db: &Path, meta: Saving<'_>) -> Result<()> {
        let (dir, stem) = split(db);
        let file = format!(
            "{stem}.ann-{}-{:x}.usearch",
            meta.last_seq,
            crate::fsutil::unique()
        );
        let path = dir.join(&file);
        let tmp = dir.join(format!("{file}.tmp"));
        let written = self
            .index
            .save(&tmp.to_string_lossy())
            .map_err(|e| err("save", e))
            .and_then(|()| {
                std::fs::File::open(&tmp)
                    .and_then(|f| f.sync_all())
                    .and_then(|()| std::fs::rename(&tmp, &path))
                    .and_then(|()| crate::fsutil::sync_dir(dir))
                    .map_err(|e| Error::io(&path, e))
            });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        let saved = SavedMeta {
            model: meta.model.to_string(),
            dim: self.dim,
            quantization: meta.quantization,
            last_seq: meta.last_seq,
            file: file.clone(),
            generation: meta.generation.to_string(),
        };
        let json = serde_json::to_vec_pretty(&saved).expect("meta serialises");
        let mp = meta_path(db);
        crate::fsutil::write_atomic(&mp, &json).map_err(|e| Error::io(&mp, e))?;
        remove_older(dir, &stem, meta.last_seq);
        Ok(())
    }

    /// Loads the saved index of `model`/`dim`/`q` next to `db`, if there is one that fits,
    /// with the `seq` it covers. Anything unusable is `None`: the caller rebuilds.
    /// With `view`, the file is memory-mapped read-only (short-lived processes); else it
    /// is read into memory so it can grow and be saved again.
    pub fn load(
        db: &Path,
        model: &str,
        dim: usize,
        q: AnnQuantization,
        ef_search: usize,
        view: bool,
        generation: &str,
    ) -> Option<(Ann, i64)> {
        let meta = saved_meta(db).filter(|m| m.fits(model, dim, q, generation))?;
        let (dir, _) = split(db);
        let path = dir.join(&meta.file);
        let index = Index::new(&options(dim, q, ef_search)).ok()?;
        if view {
            index.view(&path.to_string_lossy()).ok()?;
        } else {
            index.load(&path.to_string_lossy()).ok()?;
        }
        if index.dimensions() != dim {
            return None;
        }
        // `load` resets the search width to the file's; use ours.
        index.change_expansion_search(ef_search);
        Some((
            Ann {
                index,
                dim,
                overlay: view.then(HashMap::new),
            },
            meta.last_seq,
        ))
    }
}

/// Builds the index of `model` from the database at `db` (its own read-only connection, so
/// it can run in a background thread), saves it, and returns it with the `seq` it covers.
/// Rows are read in short statements, so no read transaction holds the log for the whole
/// build; a row replaced meanwhile has a higher `seq` and is applied afterwards. Uses every
/// core: a build is a one-off, the store keeps serving exact results meanwhile. A failed
/// save is logged: the index still serves this process.
pub(crate) fn build_from_db(
    db: &Path,
    model: &str,
    dim: usize,
    q: AnnQuantization,
    ef_search: usize,
    generation: &str,
) -> Result<(Ann, i64)> {
    let conn = rusqlite::Connection::open_with_flags(
        db,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    let (count, last_seq): (i64, i64) = conn.query_row(
        "SELECT count(*), coalesce(max(seq), 0) FROM embeddings WHERE model = ?1 AND dim = ?2",
        rusqlite::params![model, dim as i64],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let ann = Ann::new(dim, q, ef_search, count as usize + 1024, threads)?;
    let mut after = 0i64;
    loop {
        let batch: Vec<(i64, MemoryId, Vec<f32>)> = conn
            .prepare_cached(
                "SELECT seq, memory_id, vector FROM embeddings
                 WHERE model = ?1 AND dim = ?2 AND seq > ?3 AND seq <= ?4 ORDER BY seq LIMIT 4096",
            )?
            .query_map(rusqlite::params![model, dim as i64, after, last_seq], |r| {
                let blob: Vec<u8> = r.get(2)?;
                Ok((r.get(0)?, r.get(1)?, super::embeddings::from_blob(&blob)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let Some(last) = batch.last().map(|b| b.0) else {
            break;
        };
        after = last;
        let rows: Vec<(MemoryId, Vec<f32>)> = batch.into_iter().map(|(_, id, v)| (id, v)).collect();
        ann.add_parallel(&rows, threads)?;
    }
    let saving = Saving {
        model,
        quantization: q,
        last_seq,
        generation,
    };
    if let Err(e) = ann.save(db, saving) {
        eprintln!("engram: saving the vector index failed (it still serves this process): {e}");
    }
    Ok((ann, last_seq))
}

fn split(db: &Path) -> (&Path, String) {
    let dir = db
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let stem = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "engram.db".into());
    (dir, stem)
}

fn meta_path(db: &Path) -> PathBuf {
    let (dir, stem) = split(db);
    dir.join(format!("{stem}.ann.json"))
}

/// Removes a saved index (after a restore, or when the store is deleted).
pub(crate) fn remove_saved(db: &Path) {
    let (dir, stem) = split(db);
    let prefix = format!("{stem}.ann");
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}
