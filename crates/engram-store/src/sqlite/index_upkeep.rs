//! Upkeep of the in-memory vector index: loading the rows other processes wrote (by
//! `seq`), the saved HNSW index's adoption, background build and periodic save, and the
//! diagnostics `stats` and `engram bench` read.

use super::SqliteBackend;
use super::embeddings::from_blob;
#[cfg(feature = "ann")]
use super::vector_index::{BUILD_RETRY, Backing};
use super::vector_index::{Flat, VectorIndex};
use crate::Result;
use crate::storage::rows::VectorModel;
use engram_core::MemoryId;
use rusqlite::{OptionalExtension, params};
use std::collections::HashSet;

impl SqliteBackend {
    /// Loads vectors written since the last look (by this or another process), adopting a
    /// finished background build, saving a grown HNSW index, and starting a build when a
    /// long-running process crosses the threshold.
    pub(crate) fn refresh_index(&mut self, model: Option<VectorModel<'_>>) -> Result<()> {
        let Some(m) = model else {
            self.index = None;
            return Ok(());
        };
        let (model, dim) = (m.model.to_string(), m.dim);
        let generation = self.store_generation()?;
        if self
            .index
            .as_ref()
            .is_some_and(|i| i.generation != generation || i.model != model || i.dim != dim)
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
            && let Some(meta) = super::ann::saved_meta(&self.path)
        {
            if meta.model != model || meta.dim != dim {
                super::ann::remove_saved(&self.path);
                return index;
            }
            if let Some((ann, seq)) = super::ann::Ann::load(
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
                super::ann::build_from_db(&path, &model, dim, q, ef, &generation)
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
                super::ann::Ann::load(&path, &index.model, index.dim, q, ef, false, &generation)
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
            let saving = super::ann::Saving {
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
    pub(crate) fn set_background_index(&mut self, on: bool) {
        self.background_index = on;
    }

    /// Builds and saves the HNSW index now if the store has at least `ann_threshold` vectors
    /// of the loaded model (`engram reindex`); returns how many it indexed, `None` when the
    /// store is below the threshold, has no model, or the build lacks the `ann` feature.
    pub(crate) fn build_vector_index(
        &mut self,
        model: Option<VectorModel<'_>>,
    ) -> Result<Option<usize>> {
        self.refresh_index(model)?;
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
                super::ann::build_from_db(&self.path, &index.model, index.dim, q, ef, &generation)?;
            let n = ann.len();
            index.backing = Backing::Ann(ann);
            index.last_seq = seq;
            index.unsaved = 0;
            index.building = None;
            self.refresh_index(model)?;
            Ok(Some(n))
        }
        #[cfg(not(feature = "ann"))]
        Ok(None)
    }

    /// How often the index's top `k` for each query agree with an exact scan of every
    /// stored vector (recall@k of the HNSW index, 1.0 for the exact scan): a diagnostic for
    /// `engram bench`, reading all vectors once.
    pub(crate) fn vector_index_agreement(
        &mut self,
        model: Option<VectorModel<'_>>,
        queries: &[Vec<f32>],
        k: usize,
    ) -> Result<Option<f64>> {
        self.refresh_index(model)?;
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

    /// Whether `model`'s vectors are searched through the HNSW index (loaded, or saved and
    /// fitting when nothing is loaded yet).
    pub(super) fn hnsw_in_use(&self, model: &str, dim: usize) -> bool {
        match &self.index {
            Some(i) => i.approximate(),
            #[cfg(feature = "ann")]
            None => {
                self.config.ann_threshold > 0
                    && super::ann::saved_meta(&self.path).is_some_and(|m| {
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
