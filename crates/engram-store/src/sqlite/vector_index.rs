//! The in-memory vector index: the loaded model's vectors from the `embeddings` table,
//! searched in memory.
//!
//! Small stores are searched by an exact scan of a flat array (10k × 384 floats take about
//! a millisecond). From `ann_threshold` vectors on, a long-running process builds an HNSW
//! index ([`super::ann`], the `ann` feature) in a background thread, keeps serving exact
//! results until it is ready, and saves it next to the database so short-lived processes
//! (CLI, hooks) load it instead of scanning. A room filter over few memories is scored
//! exactly even then: a graph search restricted to a small subset misses its matches.
//!
//! The index holds the vectors of the current model only: vectors of another model (after
//! `engram model use`) are ignored until re-embedded, so a dimension mismatch never fails a
//! recall. Other processes' writes are picked up through the table's growing `seq`.

use crate::Result;
use engram_core::MemoryId;
use engram_core::embed::dot;
use std::collections::{HashMap, HashSet};

/// A room filter over at most this many memories is scored exactly, whatever the index.
pub(super) const EXACT_SUBSET_MAX: usize = 20_000;

/// Vectors of one model, flat: the exact scan.
#[derive(Default)]
pub(super) struct Flat {
    pub(super) ids: Vec<MemoryId>,
    pos: HashMap<MemoryId, usize>,
    data: Vec<f32>,
}

impl Flat {
    pub(super) fn put(&mut self, dim: usize, id: MemoryId, v: &[f32]) {
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
    pub(super) fn search(
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

pub(super) enum Backing {
    Flat(Flat),
    #[cfg(feature = "ann")]
    Ann(super::ann::Ann),
}

/// Vectors of one model: a flat array, or an HNSW index past the threshold.
pub(crate) struct VectorIndex {
    pub(super) model: String,
    pub(super) dim: usize,
    pub(super) last_seq: i64,
    /// The store generation the index was filled under; a restore renews it, and the
    /// index is then dropped and refilled (ids and `seq`s start over in a restored store).
    pub(super) generation: String,
    pub(super) backing: Backing,
    /// Vectors added since the HNSW index was last saved.
    #[cfg_attr(not(feature = "ann"), allow(dead_code))]
    pub(super) unsaved: usize,
    /// The HNSW index being built in the background, with the `seq` it will cover.
    #[cfg(feature = "ann")]
    pub(super) building: Option<std::thread::JoinHandle<Result<(super::ann::Ann, i64)>>>,
    /// When a build last failed: the next try waits [`BUILD_RETRY`].
    #[cfg(feature = "ann")]
    pub(super) build_failed_at: Option<std::time::Instant>,
}

/// How long a failed background build waits before the next try.
#[cfg(feature = "ann")]
pub(super) const BUILD_RETRY: std::time::Duration = std::time::Duration::from_secs(600);

impl VectorIndex {
    pub(super) fn new(model: &str, dim: usize, generation: String) -> Self {
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

    pub(super) fn put(&mut self, id: MemoryId, v: &[f32]) -> Result<()> {
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
    pub(super) fn flat_vector(&self, id: MemoryId) -> Option<&[f32]> {
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
    pub(super) fn search(
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
    super::ann::remove_saved(db);
    #[cfg(not(feature = "ann"))]
    let _ = db;
}
