//! `bench recall --vector-cache FILE`: the model's vectors for the synthetic corpus, kept
//! in a file so that a second run over the same corpus (the other backend, another size)
//! does not embed it again. Only documents are cached; every query is embedded by the
//! model as it is timed, so "query embedding included" stays true. On this 2-core machine
//! embedding 100,000 memories takes longer than searching them, and the figure wanted is
//! the search.

use engram_core::embed::{EmbedError, Embedder};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A document's key in the cache: the first 16 bytes of its text's SHA-256.
type Key = [u8; 16];

fn key_of(text: &str) -> Key {
    let digest = Sha256::digest(text.as_bytes());
    let mut k = [0u8; 16];
    k.copy_from_slice(&digest[..16]);
    k
}

/// The model, with its document vectors read from and appended to a cache file of
/// `(key, dim × f32 little-endian)` records, one model per file (its id in the first line).
pub(crate) struct CachedEmbedder {
    model: Arc<dyn Embedder>,
    path: PathBuf,
    known: Mutex<HashMap<Key, Vec<f32>>>,
}

impl CachedEmbedder {
    pub(crate) fn open(model: Arc<dyn Embedder>, path: &Path) -> anyhow::Result<Self> {
        let mut known = HashMap::new();
        if let Ok(mut f) = std::fs::File::open(path) {
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes)?;
            let header = format!("{}\n", model.model_id());
            anyhow::ensure!(
                bytes.starts_with(header.as_bytes()),
                "{} holds another model's vectors; remove it or name another file",
                path.display()
            );
            let record = 16 + 4 * model.dim();
            for r in bytes[header.len()..].chunks_exact(record) {
                let k: Key = r[..16].try_into().expect("16 bytes");
                let v = r[16..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                    .collect();
                known.insert(k, v);
            }
        } else {
            std::fs::write(path, format!("{}\n", model.model_id()))?;
        }
        eprintln!("{} cached vectors in {}", known.len(), path.display());
        Ok(CachedEmbedder {
            model,
            path: path.to_path_buf(),
            known: Mutex::new(known),
        })
    }

    fn append(&self, new: &[(Key, Vec<f32>)]) -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().append(true).open(&self.path)?;
        let mut buf = Vec::new();
        for (k, v) in new {
            buf.extend_from_slice(k);
            for x in v {
                buf.extend_from_slice(&x.to_le_bytes());
            }
        }
        f.write_all(&buf)
    }
}

impl Embedder for CachedEmbedder {
    fn model_id(&self) -> &str {
        self.model.model_id()
    }

    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let keys: Vec<Key> = texts.iter().map(|t| key_of(t)).collect();
        let missing: Vec<usize> = {
            let known = self.known.lock().expect("cache lock");
            (0..texts.len())
                .filter(|&i| !known.contains_key(&keys[i]))
                .collect()
        };
        if !missing.is_empty() {
            let batch: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let vectors = self.model.embed_documents(&batch)?;
            let new: Vec<(Key, Vec<f32>)> = missing.iter().map(|&i| keys[i]).zip(vectors).collect();
            self.append(&new)
                .map_err(|e| EmbedError(format!("{}: {e}", self.path.display())))?;
            self.known.lock().expect("cache lock").extend(new);
        }
        let known = self.known.lock().expect("cache lock");
        Ok(keys.iter().map(|k| known[k].clone()).collect())
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        self.model.embed_query(text)
    }
}
