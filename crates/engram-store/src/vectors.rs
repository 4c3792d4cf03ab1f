//! The vector candidate source: one embedding per memory in SQLite (little-endian f32,
//! tagged with its model), searched in memory.
//!
//! Small stores are searched by an exact scan of a flat array (10k × 384 floats take about
//! a millisecond). From `ann_threshold` vectors on, a long-running process builds an HNSW
//! index ([`crate::ann`], the `ann` feature) in a background thread, keeps serving exact
//! results until it is ready, and saves it next to the database so short-lived processes
//! (CLI, hooks) load it instead of scanning. A room filter over few memories is scored
//! exactly even then: a graph search restricted to a small subset misses its matches.
//!
//! The index holds the vectors of the current model only: vectors of another model (after
//! `engram model use`) are ignored until re-embedded, so a dimension mismatch never fails a
//! recall. Other processes' writes are picked up through the table's growing `seq`.

use crate::search::Filter;
use crate::{Result, Store};
use engram_core::MemoryId;
use engram_core::embed::{Embedder, dot};
use rusqlite::{OptionalExtension, params};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A room filter over at most this many memories is scored exactly, whatever the index.
const EXACT_SUBSET_MAX: usize = 20_000;

/// Vectors of one model, flat: the exact scan.
#[derive(Default)]
struct Flat {
    ids: Vec<MemoryId>,
    pos: HashMap<MemoryId, usize>,
    data: Vec<f32>,
}

impl Flat {
    fn put(&mut self, dim: usize, id: MemoryId, v: &[f32]) {
        match self.pos.get(&id) {
            Some(&p) => self.data[p * dim..(p + 1) * dim].copy_from_slice(v),
            None => {
                self.pos.insert(id, self.ids.len());
                self.ids.push(id);
                self.data.extend_from_slice(v);
            }
        }
    }

    fn get(&self, dim: usize, id: MemoryId) -> Option<&[f32]> {
        self.pos
            .get(&id)
            .map(|&p| &self.data[p * dim..(p + 1) * dim])
    }

    /// The `want` best of the allowed vectors, best first.
    fn search(
        &self,
        dim: usize,
        query: &[f32],
        allowed: Option<&HashSet<MemoryId>>,
        want: usize,
    ) -> Vec<(MemoryId, f32)> {
        let mut scored: Vec<(MemoryId, f32)> = self
            .ids
            .iter()
            .enumerate()
            .filter(|(_, id)| allowed.is_none_or(|a| a.contains(id)))
            .map(|(i, id)| (*id, dot(query, &self.data[i * dim..(i + 1) * dim])))
            .collect();
        top(&mut scored, want)
    }
}

/// Keeps the `want` best of `scored`, best first (ties by id, for stable results).
fn top(scored: &mut Vec<(MemoryId, f32)>, want: usize) -> Vec<(MemoryId, f32)> {
    if scored.is_empty() || want == 0 {
        return Vec::new();
    }
    let take = want.min(scored.len());
    scored.select_nth_unstable_by(take - 1, |a, b| b.1.total_cmp(&a.1));
    scored.truncate(take);
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    std::mem::take(scored)
}

enum Backing {
    Flat(Flat),
    #[cfg(feature = "ann")]
    Ann(crate::ann::Ann),
}

/// Vectors of one model: a flat array, or an HNSW index past the threshold.
pub(crate) struct VectorIndex {
    model: String,
    dim: usize,
    last_seq: i64,
    /// The store generation the index was filled under; a restore renews it, and the
    /// index is then dropped and refilled (ids and `seq`s start over in a restored store).
    generation: String,
    backing: Backing,
    /// Vectors added since the HNSW index was last saved.
    #[cfg_attr(not(feature = "ann"), allow(dead_code))]
    unsaved: usize,
    /// The HNSW index being built in the background, with the `seq` it will cover.
    #[cfg(feature = "ann")]
    building: Option<std::thread::JoinHandle<Result<(crate::ann::Ann, i64)>>>,
    /// When a build last failed: the next try waits [`BUILD_RETRY`].
    #[cfg(feature = "ann")]
    build_failed_at: Option<std::time::Instant>,
}

/// How long a failed background build waits before the next try.
#[cfg(feature = "ann")]
const BUILD_RETRY: std::time::Duration = std::time::Duration::from_secs(600);

impl VectorIndex {
    fn new(model: &str, dim: usize, generation: String) -> Self {
        VectorIndex {
            model: model.to_string(),
            dim,
            last_seq: 0,
            generation,
            backing: Backing::Flat(Flat::default()),
            unsaved: 0,
            #[cfg(feature = "ann")]
            building: None,
            #[cfg(feature = "ann")]
            build_failed_at: None,
        }
    }

    fn put(&mut self, id: MemoryId, v: &[f32]) -> Result<()> {
        if v.len() != self.dim {
            return Ok(());
        }
        self.unsaved += 1;
        match &mut self.backing {
            Backing::Flat(f) => f.put(self.dim, id, v),
            #[cfg(feature = "ann")]
            Backing::Ann(a) => a.put(id, v)?,
        }
        Ok(())
    }

    /// The vector of `id` from the flat array; `None` when the HNSW index holds them (it
    /// may hold them quantised: exact cosines are then read from the database).
    fn flat_vector(&self, id: MemoryId) -> Option<&[f32]> {
        match &self.backing {
            Backing::Flat(f) => f.get(self.dim, id),
            #[cfg(feature = "ann")]
            Backing::Ann(_) => None,
        }
    }

    pub fn len(&self) -> usize {
        match &self.backing {
            Backing::Flat(f) => f.ids.len(),
            #[cfg(feature = "ann")]
            Backing::Ann(a) => a.len(),
        }
    }

    /// Whether searches go through the HNSW index (for `stats`).
    pub fn approximate(&self) -> bool {
        !matches!(self.backing, Backing::Flat(_))
    }

    /// The `want` nearest allowed vectors, best first.
    fn search(
        &self,
        query: &[f32],
        allowed: Option<&HashSet<MemoryId>>,
        want: usize,
    ) -> Result<Vec<(MemoryId, f32)>> {
        match &self.backing {
            Backing::Flat(f) => Ok(f.search(self.dim, query, allowed, want)),
            #[cfg(feature = "ann")]
            Backing::Ann(a) => match allowed {
                Some(ids) if ids.len() <= EXACT_SUBSET_MAX => {
                    let mut scored: Vec<(MemoryId, f32)> = ids
                        .iter()
                        .filter_map(|id| a.get(*id).map(|v| (*id, dot(query, &v))))
                        .collect();
                    Ok(top(&mut scored, want))
                }
                // The index is a cache: if it fails, recall goes on with the other
                // candidate sources rather than failing.
                _ => Ok(a.search(query, allowed, want).unwrap_or_else(|e| {
                    eprintln!("engram: {e}; vector candidates skipped");
                    Vec::new()
                })),
            },
        }
    }
}

/// Removes the saved HNSW index of the database at `db` (after a restore replaced it).
pub(crate) fn forget_saved_index(db: &std::path::Path) {
    #[cfg(feature = "ann")]
    crate::ann::remove_saved(db);
    #[cfg(not(feature = "ann"))]
    let _ = db;
}

/// Writes a memory's vector, replacing any earlier one under a new `seq` (so other
/// processes see the change). Does nothing if the memory is gone.
pub(crate) fn write_embedding(
    conn: &rusqlite::Connection,
    id: MemoryId,
    model: &str,
    v: &[f32],
) -> Result<usize> {
    conn.prepare_cached("DELETE FROM embeddings WHERE memory_id = ?1")?
        .execute([id])?;
    Ok(conn
        .prepare_cached(
            "INSERT INTO embeddings (memory_id, model, dim, vector) SELECT ?1, ?2, ?3, ?4 WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?1)",
        )?
        .execute(params![id, model, v.len() as i64, to_blob(v)])?)
}

pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn from_blob(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Where a store stands with its embedding model.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EmbeddingStatus {
    /// The loaded model, if any.
    pub model: Option<String>,
    pub dim: Option<usize>,
    /// Memories outside the trash with a vector of the loaded model.
    pub embedded: u64,
    /// Memories outside the trash without one (new since the model loaded, or written
    /// under another model); filled in the background by a long-running server.
    pub missing: u64,
    /// How vectors are searched: `exact` (a scan) or `hnsw` (the approximate index, loaded
    /// or saved for this model).
    pub vector_index: &'static str,
}

impl Store {
    /// Sets (or clears) the sentence encoder. Recall uses vectors of this model only.
    pub fn set_embedder(&mut self, e: Option<Arc<dyn Embedder>>) {
        let same = match (&self.embedder, &e) {
            (Some(a), Some(b)) => a.model_id() == b.model_id() && a.dim() == b.dim(),
            _ => false,
        };
        if !same {
            self.index = None;
        }
        self.embedder = e;
    }

    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Embeds one document with the loaded model, if any. A failure is logged as no vector:
    /// the memory is stored and found lexically, and re-embedded later.
    pub(crate) fn embed_document(&self, text: &str) -> Option<(String, Vec<f32>)> {
        let e = self.embedder.as_ref()?;
        if let Some(v) = self.prepared.get(text) {
            return Some((e.model_id().to_string(), v.clone()));
        }
        match e.embed_documents(&[text]) {
            Ok(mut v) if v.len() == 1 && v[0].len() == e.dim() => {
                Some((e.model_id().to_string(), v.remove(0)))
            }
            _ => None,
        }
    }

    /// Loads vectors written since the last look (by this or another process), adopting a
    /// finished background build, saving a grown HNSW index, and starting a build when a
    /// long-running process crosses the threshold.
    pub(crate) fn refresh_index(&mut self) -> Result<()> {
        let Some(e) = &self.embedder else {
            self.index = None;
            return Ok(());
        };
        let (model, dim) = (e.model_id().to_string(), e.dim());
        let generation = self.store_generation()?;
        if self
            .index
            .as_ref()
            .is_some_and(|i| i.generation != generation)
        {
            self.index = None;
        }
        if self.index.is_none() {
            self.index = Some(self.open_index(&model, dim, generation.clone()));
        }
        #[cfg(feature = "ann")]
        self.adopt_finished_build();
        match self.apply_new_rows() {
            // The HNSW index failed to take a vector: drop it for an exact scan of every
            // vector (the database has them all); a server builds it again later.
            Err(crate::Error::Index(e)) => {
                eprintln!("engram: {e}; searching vectors exactly");
                let fresh = VectorIndex::new(&model, dim, generation);
                #[cfg(feature = "ann")]
                let fresh = VectorIndex {
                    build_failed_at: Some(std::time::Instant::now()),
                    ..fresh
                };
                self.index = Some(fresh);
                self.apply_new_rows()?;
            }
            other => other?,
        }
        #[cfg(feature = "ann")]
        self.maintain_ann();
        Ok(())
    }

    /// Puts the vectors written since the index's `last_seq`.
    fn apply_new_rows(&mut self) -> Result<()> {
        let Some(index) = self.index.as_mut() else {
            return Ok(());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, memory_id, vector FROM embeddings WHERE seq > ?1 AND model = ?2 AND dim = ?3 ORDER BY seq",
        )?;
        let rows = stmt.query_map(
            params![index.last_seq, index.model, index.dim as i64],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            },
        )?;
        for row in rows {
            let (seq, id, blob) = row?;
            index.put(id, &from_blob(&blob))?;
            index.last_seq = index.last_seq.max(seq);
        }
        Ok(())
    }

    /// A fresh index of `model`: the saved HNSW index when one fits (then only newer rows
    /// are read), else an empty flat one that the next refresh fills. A saved index of
    /// another model is removed: its vectors may describe texts changed since.
    #[cfg_attr(not(feature = "ann"), allow(unused_variables, unused_mut))]
    fn open_index(&self, model: &str, dim: usize, generation: String) -> VectorIndex {
        let mut index = VectorIndex::new(model, dim, generation);
        #[cfg(feature = "ann")]
        if self.config.ann_threshold > 0
            && let Some(meta) = crate::ann::saved_meta(&self.path)
        {
            if meta.model != model || meta.dim != dim {
                crate::ann::remove_saved(&self.path);
                return index;
            }
            if let Some((ann, seq)) = crate::ann::Ann::load(
                &self.path,
                model,
                dim,
                self.config.ann_quantization,
                self.config.ann_ef_search,
                !self.background_index,
                &index.generation,
            ) && seq <= self.max_embedding_seq().unwrap_or(-1)
            {
                index.backing = Backing::Ann(ann);
                index.last_seq = seq;
            }
        }
        index
    }

    /// This store's generation, made on first use and renewed by a restore: a saved
    /// index of another generation is not trusted.
    fn store_generation(&self) -> Result<String> {
        let read = || -> Result<Option<String>> {
            Ok(self
                .conn
                .prepare_cached("SELECT value FROM meta WHERE key = 'store_generation'")?
                .query_row([], |r| r.get(0))
                .optional()?)
        };
        if let Some(g) = read()? {
            return Ok(g);
        }
        self.conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('store_generation', ?1)",
            [format!("{:x}", crate::fsutil::unique())],
        )?;
        Ok(read()?.unwrap_or_default())
    }

    /// The highest `seq` the embeddings table ever handed out (AUTOINCREMENT keeps it even
    /// when that row is gone). A saved index claiming more describes another database.
    #[cfg(feature = "ann")]
    fn max_embedding_seq(&self) -> Result<i64> {
        Ok(self.conn.query_row(
            "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'embeddings'), 0)",
            [],
            |r| r.get(0),
        )?)
    }

    /// Swaps in a background build that has finished; rows written meanwhile are applied
    /// by the refresh that follows (putting a vector twice is harmless).
    #[cfg(feature = "ann")]
    fn adopt_finished_build(&mut self) {
        let Some(index) = self.index.as_mut() else {
            return;
        };
        if !index.building.as_ref().is_some_and(|h| h.is_finished()) {
            return;
        }
        match index.building.take().expect("checked").join() {
            Ok(Ok((ann, seq))) => {
                index.backing = Backing::Ann(ann);
                index.last_seq = seq;
                index.unsaved = 0;
            }
            // The flat index keeps serving; a later threshold check tries again.
            Ok(Err(e)) => {
                eprintln!("engram: building the vector index failed: {e}");
                index.build_failed_at = Some(std::time::Instant::now());
            }
            Err(_) => {
                eprintln!("engram: building the vector index panicked");
                index.build_failed_at = Some(std::time::Instant::now());
            }
        }
    }

    /// Starts a background build past the threshold (in processes that asked for it), and
    /// saves an HNSW index that has grown by a tenth since its last save. Failures are
    /// logged: the index is a cache, and recall must not fail because a file could not be
    /// written.
    #[cfg(feature = "ann")]
    fn maintain_ann(&mut self) {
        let threshold = self.config.ann_threshold;
        let (path, q, ef) = (
            self.path.clone(),
            self.config.ann_quantization,
            self.config.ann_ef_search,
        );
        let background = self.background_index;
        let Some(index) = self.index.as_ref() else {
            return;
        };
        let retry_due = index
            .build_failed_at
            .is_none_or(|t| t.elapsed() >= BUILD_RETRY);
        let (build, save) = match &index.backing {
            Backing::Flat(f) => (
                background
                    && threshold > 0
                    && f.ids.len() >= threshold
                    && index.building.is_none()
                    && retry_due,
                false,
            ),
            Backing::Ann(a) => (false, index.unsaved >= 1000.max(a.len() / 10)),
        };
        if !build && !save {
            return;
        }
        let generation = index.generation.clone();
        let index = self.index.as_mut().expect("checked above");
        if build {
            let (model, dim) = (index.model.clone(), index.dim);
            index.building = Some(std::thread::spawn(move || {
                crate::ann::build_from_db(&path, &model, dim, q, ef, &generation)
            }));
            return;
        }
        if let Backing::Ann(a) = &index.backing
            && a.is_view()
        {
            // So much was written since the file was saved that the mapped view's exact
            // overlay stops being cheap: take the newest file into memory, bring it up to
            // date and save it, for every process.
            let Some((owned, seq)) =
                crate::ann::Ann::load(&path, &index.model, index.dim, q, ef, false, &generation)
            else {
                index.unsaved = 0;
                return;
            };
            index.backing = Backing::Ann(owned);
            index.last_seq = seq;
            if let Err(e) = self.apply_new_rows() {
                eprintln!("engram: vector index: {e}");
                self.index = None;
                return;
            }
        }
        let index = self.index.as_mut().expect("checked above");
        if let Backing::Ann(a) = &index.backing {
            let saving = crate::ann::Saving {
                model: &index.model,
                quantization: q,
                last_seq: index.last_seq,
                generation: &generation,
            };
            if let Err(e) = a.save(&path, saving) {
                eprintln!("engram: saving the vector index failed: {e}");
            }
        }
        // Saved or not, wait for another tenth before trying again.
        index.unsaved = 0;
    }

    /// Lets this store build the HNSW index in a background thread once the threshold is
    /// crossed (long-running servers). Short-lived processes leave it off: they use a saved
    /// index when there is one and scan exactly otherwise.
    pub fn set_background_index(&mut self, on: bool) {
        self.background_index = on;
    }

    /// Builds and saves the HNSW index now if the store has at least `ann_threshold` vectors
    /// of the loaded model (`engram reindex`); returns how many it indexed, `None` when the
    /// store is below the threshold, has no model, or the build lacks the `ann` feature.
    pub fn build_vector_index(&mut self) -> Result<Option<usize>> {
        self.refresh_index()?;
        #[cfg(feature = "ann")]
        {
            let threshold = self.config.ann_threshold;
            let (q, ef) = (self.config.ann_quantization, self.config.ann_ef_search);
            if threshold == 0 || self.index.as_ref().is_none_or(|i| i.len() < threshold) {
                return Ok(None);
            }
            let index = self.index.as_mut().expect("checked above");
            let generation = index.generation.clone();
            let (ann, seq) =
                crate::ann::build_from_db(&self.path, &index.model, index.dim, q, ef, &generation)?;
            let n = ann.len();
            index.backing = Backing::Ann(ann);
            index.last_seq = seq;
            index.unsaved = 0;
            index.building = None;
            self.refresh_index()?;
            Ok(Some(n))
        }
        #[cfg(not(feature = "ann"))]
        Ok(None)
    }

    /// How often the index's top `k` for each query agree with an exact scan of every
    /// stored vector (recall@k of the HNSW index, 1.0 for the exact scan): a diagnostic for
    /// `engram bench`, reading all vectors once.
    pub fn vector_index_agreement(
        &mut self,
        queries: &[Vec<f32>],
        k: usize,
    ) -> Result<Option<f64>> {
        self.refresh_index()?;
        let Some(index) = &self.index else {
            return Ok(None);
        };
        if queries.is_empty() || k == 0 {
            return Ok(None);
        }
        let mut exact = Flat::default();
        let mut stmt = self
            .conn
            .prepare("SELECT memory_id, vector FROM embeddings WHERE model = ?1 AND dim = ?2")?;
        let rows = stmt.query_map(params![index.model, index.dim as i64], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
        })?;
        for row in rows {
            let (id, blob) = row?;
            exact.put(index.dim, id, &from_blob(&blob));
        }
        let mut agree = 0usize;
        let mut total = 0usize;
        for q in queries {
            let truth: HashSet<MemoryId> = exact
                .search(index.dim, q, None, k)
                .into_iter()
                .map(|t| t.0)
                .collect();
            let got = index.search(q, None, k)?;
            agree += got.iter().filter(|(id, _)| truth.contains(id)).count();
            total += truth.len();
        }
        Ok((total > 0).then(|| agree as f64 / total as f64))
    }

    /// How the loaded model's vectors are searched: `(vectors, approximate)`.
    pub fn vector_search_state(&self) -> Option<(usize, bool)> {
        self.index.as_ref().map(|i| (i.len(), i.approximate()))
    }

    /// The query's cosine with a memory's vector, when both exist.
    pub(crate) fn cosine_with(&self, query: &[f32], id: MemoryId) -> Option<f32> {
        self.vector_of(id).map(|v| dot(query, &v))
    }

    /// The query's cosine with each of `ids` that has a vector: one database read for the
    /// lot when the HNSW index holds the vectors (see [`Store::vector_of`]).
    pub(crate) fn cosines_with(&self, query: &[f32], ids: &[MemoryId]) -> HashMap<MemoryId, f32> {
        let Some(index) = &self.index else {
            return HashMap::new();
        };
        if !index.approximate() {
            return ids
                .iter()
                .filter_map(|id| Some((*id, self.cosine_with(query, *id)?)))
                .collect();
        }
        let mut out = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let sql = format!(
                "SELECT memory_id, vector FROM embeddings WHERE model = ? AND dim = ? AND memory_id IN ({})",
                crate::store::placeholders(chunk.len())
            );
            let params = [
                rusqlite::types::Value::Text(index.model.clone()),
                rusqlite::types::Value::Integer(index.dim as i64),
            ]
            .into_iter()
            .chain(chunk.iter().map(|id| rusqlite::types::Value::Integer(*id)));
            let Ok(mut stmt) = self.conn.prepare_cached(&sql) else {
                continue;
            };
            let Ok(rows) = stmt.query_map(rusqlite::params_from_iter(params), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
            }) else {
                continue;
            };
            for (id, blob) in rows.flatten() {
                out.insert(id, dot(query, &from_blob(&blob)));
            }
        }
        out
    }

    /// A memory's vector of the loaded model, if there is one. Exact: with the HNSW index
    /// (which may hold vectors quantised) it is read from the database, so resolution and
    /// consolidation thresholds see the same cosines at any store size.
    pub(crate) fn vector_of(&self, id: MemoryId) -> Option<Vec<f32>> {
        let index = self.index.as_ref()?;
        match index.flat_vector(id) {
            Some(v) => Some(v.to_vec()),
            None if index.approximate() => self.stored_vector(id),
            None => None,
        }
    }

    /// A memory's f32 vector of the loaded model, from the database.
    fn stored_vector(&self, id: MemoryId) -> Option<Vec<f32>> {
        let index = self.index.as_ref()?;
        self.conn
            .prepare_cached(
                "SELECT vector FROM embeddings WHERE memory_id = ?1 AND model = ?2 AND dim = ?3",
            )
            .ok()?
            .query_row(params![id, index.model, index.dim as i64], |r| {
                r.get::<_, Vec<u8>>(0)
            })
            .ok()
            .map(|b| from_blob(&b))
    }

    /// The `k` memories allowed by `filter` nearest to `query`: `(id, cosine)`, best first.
    /// Overfetches and filters on the memories' rows, widening until `k` pass.
    pub(crate) fn vector_candidates(
        &self,
        query: &[f32],
        filter: &Filter,
        k: usize,
    ) -> Result<Vec<(MemoryId, f64)>> {
        let Some(index) = &self.index else {
            return Ok(Vec::new());
        };
        let total = index.len();
        if total == 0 || query.len() != index.dim {
            return Ok(Vec::new());
        }
        // With a room filter, score only the memories the filter allows (one indexed
        // query), so a small room in a large store neither misses its matches nor loads
        // everything. A large room in an HNSW index is searched unfiltered instead and
        // checked on rows (cheaper than listing it).
        let (cond, params) = filter.sql();
        let mut allowed: Option<HashSet<MemoryId>> = None;
        if filter.rooms.is_some() {
            let small = !index.approximate()
                || {
                    let n: i64 = self
                    .conn
                    .prepare_cached(&format!(
                        "SELECT count(*) FROM (SELECT 1 FROM memories m WHERE 1 = 1{cond} LIMIT {})",
                        EXACT_SUBSET_MAX + 1
                    ))?
                    .query_row(rusqlite::params_from_iter(&params), |r| r.get(0))?;
                    n as usize <= EXACT_SUBSET_MAX
                };
            if small {
                let mut stmt = self
                    .conn
                    .prepare_cached(&format!("SELECT m.id FROM memories m WHERE 1 = 1{cond}"))?;
                let ids =
                    stmt.query_map(rusqlite::params_from_iter(&params), |r| r.get::<_, i64>(0))?;
                allowed = Some(ids.collect::<rusqlite::Result<_>>()?);
            }
        }
        if let Some(a) = &allowed {
            // Everything in the set passes the filter already.
            return Ok(index
                .search(query, Some(a), k)?
                .into_iter()
                .map(|(id, c)| (id, f64::from(c)))
                .collect());
        }
        let mut want = k + k / 2 + 8;
        loop {
            let top = index.search(query, None, want)?;
            let passing =
                self.passing(&top.iter().map(|t| t.0).collect::<Vec<_>>(), &cond, &params)?;
            let kept: Vec<(MemoryId, f64)> = top
                .iter()
                .filter(|(id, _)| passing.contains(id))
                .take(k)
                .map(|(id, c)| (*id, f64::from(*c)))
                .collect();
            if kept.len() >= k || top.len() < want || want >= total {
                return Ok(kept);
            }
            want = (want * 8).min(total);
        }
    }

    /// Which of `ids` pass a filter's SQL condition.
    fn passing(
        &self,
        ids: &[MemoryId],
        cond: &str,
        params: &[rusqlite::types::Value],
    ) -> Result<HashSet<MemoryId>> {
        let mut out = HashSet::with_capacity(ids.len());
        for chunk in ids.chunks(500) {
            let sql = format!(
                "SELECT m.id FROM memories m WHERE m.id IN ({}){cond}",
                crate::store::placeholders(chunk.len())
            );
            let mut stmt = self.conn.prepare_cached(&sql)?;
            let all = chunk
                .iter()
                .map(|id| rusqlite::types::Value::Integer(*id))
                .chain(params.iter().cloned());
            for id in stmt.query_map(rusqlite::params_from_iter(all), |r| r.get::<_, i64>(0))? {
                out.insert(id?);
            }
        }
        Ok(out)
    }

    /// Memories outside the trash with an id above `after` that lack a vector of the
    /// loaded model, in id order, with the text to embed. Walk with the last id returned.
    pub fn missing_embeddings(
        &self,
        after: MemoryId,
        limit: usize,
    ) -> Result<Vec<(MemoryId, String)>> {
        let Some(e) = &self.embedder else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.id, coalesce(m.title || char(10), '') || m.content FROM memories m
             WHERE m.id > ?3 AND m.tier != 'trash'
               AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.memory_id = m.id AND e.model = ?1 AND e.dim = ?2)
             ORDER BY m.id LIMIT ?4",
        )?;
        let rows = stmt.query_map(
            params![e.model_id(), e.dim() as i64, after, limit as i64],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores vectors computed elsewhere (the background re-embedder) for `model`; vectors
    /// whose length is not `dim` are skipped.
    pub fn put_embeddings(
        &mut self,
        model: &str,
        dim: usize,
        vectors: &[(MemoryId, Vec<f32>)],
    ) -> Result<usize> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut n = 0;
        for (id, v) in vectors.iter().filter(|(_, v)| v.len() == dim) {
            n += write_embedding(&tx, *id, model, v)?;
        }
        tx.commit()?;
        Ok(n)
    }

    /// Embeds every memory that lacks a vector of the loaded model, in batches of 32;
    /// returns how many were written. One pass: a memory whose embedding fails is skipped.
    /// For the CLI and tests; a server does this in the background without holding the store.
    pub fn embed_missing(&mut self, mut progress: impl FnMut(usize)) -> Result<usize> {
        let Some(e) = self.embedder.clone() else {
            return Ok(0);
        };
        let mut after = 0;
        let mut done = 0;
        loop {
            let todo = self.missing_embeddings(after, 256)?;
            let Some(last) = todo.last().map(|t| t.0) else {
                return Ok(done);
            };
            after = last;
            for chunk in todo.chunks(32) {
                let texts: Vec<&str> = chunk.iter().map(|(_, t)| t.as_str()).collect();
                let Ok(vecs) = e.embed_documents(&texts) else {
                    continue;
                };
                let pairs: Vec<(MemoryId, Vec<f32>)> =
                    chunk.iter().map(|(id, _)| *id).zip(vecs).collect();
                let n = self.put_embeddings(e.model_id(), e.dim(), &pairs)?;
                done += n;
                progress(n);
            }
        }
    }

    pub fn embedding_status(&self) -> Result<EmbeddingStatus> {
        let Some(e) = &self.embedder else {
            return Ok(EmbeddingStatus {
                model: None,
                dim: None,
                embedded: 0,
                missing: 0,
                vector_index: "exact",
            });
        };
        let total: i64 = self.conn.query_row(
            "SELECT count(*) FROM memories WHERE tier != 'trash'",
            [],
            |r| r.get(0),
        )?;
        let embedded: i64 = self.conn.query_row(
            "SELECT count(*) FROM embeddings e JOIN memories m ON m.id = e.memory_id WHERE m.tier != 'trash' AND e.model = ?1 AND e.dim = ?2",
            params![e.model_id(), e.dim() as i64],
            |r| r.get(0),
        )?;
        Ok(EmbeddingStatus {
            model: Some(e.model_id().to_string()),
            dim: Some(e.dim()),
            embedded: embedded as u64,
            missing: (total - embedded).max(0) as u64,
            vector_index: if self.hnsw_in_use(e.model_id(), e.dim()) {
                "hnsw"
            } else {
                "exact"
            },
        })
    }

    /// Whether this store searches `model`'s vectors through the HNSW index (loaded, or
    /// saved and fitting when nothing is loaded yet).
    fn hnsw_in_use(&self, model: &str, dim: usize) -> bool {
        match &self.index {
            Some(i) => i.approximate(),
            #[cfg(feature = "ann")]
            None => {
                self.config.ann_threshold > 0
                    && crate::ann::saved_meta(&self.path).is_some_and(|m| {
                        m.model == model
                            && m.dim == dim
                            && m.quantization == self.config.ann_quantization
                    })
            }
            #[cfg(not(feature = "ann"))]
            None => {
                let _ = (model, dim);
                false
            }
        }
    }
}
