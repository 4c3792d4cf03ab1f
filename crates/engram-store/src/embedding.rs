//! The engine's side of vectors: the loaded sentence encoder, embedding a document on
//! the write path, the re-embedding of memories that lack a vector of the loaded model,
//! and where the store stands with it. The vectors themselves are the backend's
//! ([`Reads::missing_embeddings`], [`Tx::set_embedding`], [`Backend::prepare_vectors`]).
//!
//! [`Reads::missing_embeddings`]: crate::storage::Reads::missing_embeddings
//! [`Tx::set_embedding`]: crate::storage::Tx::set_embedding
//! [`Backend::prepare_vectors`]: crate::storage::Backend::prepare_vectors

use crate::storage::Backend;
use crate::storage::rows::VectorModel;
use crate::{Result, Store};
use engram_core::MemoryId;
use engram_core::embed::Embedder;
use std::sync::Arc;

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
            self.backend.forget_vectors();
        }
        self.embedder = e;
    }

    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Embeds one document with the loaded model, if any. A failure is logged as no vector:
    /// the memory is stored and found lexically, and re-embedded later.
    /// The loaded model as the backend sees it.
    pub(crate) fn vector_model(&self) -> Option<VectorModel<'_>> {
        self.embedder.as_ref().map(|e| VectorModel {
            model: e.model_id(),
            dim: e.dim(),
        })
    }

    /// Memories outside the trash with an id above `after` that lack a vector of the
    /// loaded model, in id order, with the text to embed. Walk with the last id returned.
    pub fn missing_embeddings(
        &self,
        after: MemoryId,
        limit: usize,
    ) -> Result<Vec<(MemoryId, String)>> {
        match self.vector_model() {
            Some(m) => self.reads().missing_embeddings(m, after, limit),
            None => Ok(Vec::new()),
        }
    }

    /// Brings the backend's vector search up to date for the loaded model (see
    /// [`Backend::prepare_vectors`](crate::storage::Backend::prepare_vectors)); whether it
    /// has vectors of it to search.
    pub(crate) fn refresh_index(&mut self) -> Result<bool> {
        let model = self.embedder.clone();
        self.backend
            .prepare_vectors(model.as_ref().map(|e| VectorModel {
                model: e.model_id(),
                dim: e.dim(),
            }))
    }

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

    /// Stores vectors computed elsewhere (the background re-embedder) for `model`; vectors
    /// whose length is not `dim` are skipped.
    pub fn put_embeddings(
        &mut self,
        model: &str,
        dim: usize,
        vectors: &[(MemoryId, Vec<f32>)],
    ) -> Result<usize> {
        self.write(|tx| {
            let mut n = 0;
            for (id, v) in vectors.iter().filter(|(_, v)| v.len() == dim) {
                // A memory purged meanwhile gets no vector.
                if tx.memory_exists(*id)? {
                    tx.set_embedding(*id, Some((model, v)))?;
                    n += 1;
                }
            }
            Ok(n)
        })
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
        let model = VectorModel {
            model: e.model_id(),
            dim: e.dim(),
        };
        let total = self.reads().live_count(None)?;
        let embedded = self.reads().embedded_count(model)?;
        Ok(EmbeddingStatus {
            model: Some(e.model_id().to_string()),
            dim: Some(e.dim()),
            embedded,
            missing: total.saturating_sub(embedded),
            vector_index: self.backend.vector_search(model),
        })
    }
}
