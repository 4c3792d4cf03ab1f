//! The contract between engram and a sentence encoder, and a hashing encoder for tests.
//!
//! Real encoders (candle BERT models) live in `engram-embed` and implement [`Embedder`];
//! the store depends only on this trait, so ranking logic can be tested fast with
//! [`HashEmbedder`], and recall quality is tested with a real model.

use std::fmt;

/// Why an embedding could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedError(pub String);

impl fmt::Display for EmbedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "embedding failed: {}", self.0)
    }
}

impl std::error::Error for EmbedError {}

/// A sentence encoder. Every vector it returns is L2-normalised, so a dot product is a cosine.
pub trait Embedder: Send + Sync {
    /// A stable identifier stored with the vectors (for example
    /// `sentence-transformers/all-MiniLM-L6-v2`); vectors from another id are never compared.
    fn model_id(&self) -> &str;
    /// Length of every vector.
    fn dim(&self) -> usize;
    /// Embeds texts to be stored (the model's passage prefix, if any, is added here).
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Embeds one search query (the model's query prefix, if any, is added here).
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
}

/// Where a model's cosines fall: unrelated texts around `unrelated`, paraphrases around
/// `paraphrase`. Thresholds that compare cosines (auto-deepen, later dedup bands and graph
/// edges) go through [`Calibration::scale`], so they mean the same for every model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub unrelated: f32,
    pub paraphrase: f32,
    /// Where the same statement reworded slightly lands (the reinforce band).
    pub duplicate: f32,
    /// Whether cosines mean anything for Chinese and Japanese text (an English-only
    /// model maps them to near-random vectors).
    pub multilingual: bool,
}

impl Calibration {
    /// Maps a cosine to `[0, 1]`: 0 at the unrelated level, 1 at the paraphrase level.
    pub fn scale(&self, cos: f32) -> f64 {
        let span = (self.paraphrase - self.unrelated).max(1e-3);
        f64::from(((cos - self.unrelated) / span).clamp(0.0, 1.0))
    }
}

/// The calibration of a model, by id. Measured here: MiniLM puts unrelated sentences at
/// 0.0–0.2 and paraphrases at 0.55–0.65; multilingual-e5 at 0.70–0.78 and 0.88–0.95.
/// Unknown models get MiniLM-like values (most sentence-transformers spread like it).
pub fn calibration(model_id: &str) -> Calibration {
    let id = model_id.to_ascii_lowercase();
    if id.contains("e5") {
        Calibration {
            unrelated: 0.76,
            paraphrase: 0.92,
            duplicate: 0.97,
            multilingual: true,
        }
    } else if id.contains("hash-ngram") {
        Calibration {
            unrelated: 0.2,
            paraphrase: 0.8,
            duplicate: 0.95,
            multilingual: true,
        }
    } else {
        Calibration {
            unrelated: 0.15,
            paraphrase: 0.6,
            duplicate: 0.9,
            multilingual: false,
        }
    }
}

/// Dot product with eight independent accumulators, which the compiler vectorises.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; 8];
    let chunks = n / 8;
    for i in 0..chunks {
        for (l, slot) in acc.iter_mut().enumerate() {
            *slot += a[i * 8 + l] * b[i * 8 + l];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for i in chunks * 8..n {
        sum += a[i] * b[i];
    }
    sum
}

/// Scales `v` to unit length in place (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// A deterministic bag of character 1–3-grams hashed into `dim` buckets (after seed B's
/// test encoder). Texts that share words get high cosines; it knows no meaning. For fast
/// tests of ranking and fusion only.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
}

impl HashEmbedder {
    pub fn new(dim: usize) -> Self {
        Self { dim: dim.max(1) }
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        let chars: Vec<char> = text.to_lowercase().chars().collect();
        for n in 1..=3 {
            for w in chars.windows(n) {
                // FNV-1a over the gram's UTF-8 bytes.
                let mut h: u64 = 0xcbf2_9ce4_8422_2325;
                for c in w {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        h ^= u64::from(b);
                        h = h.wrapping_mul(0x0000_0100_0000_01b3);
                    }
                }
                v[(h % self.dim as u64) as usize] += 1.0;
            }
        }
        normalize(&mut v);
        v
    }
}

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        "engram/hash-ngram"
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed(t)).collect())
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.embed(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_embedder_is_normalised_and_similarity_follows_overlap() {
        let e = HashEmbedder::new(256);
        let a = e.embed_query("database migration").unwrap();
        let b = e
            .embed_documents(&["the database migration ran", "bananas are yellow"])
            .unwrap();
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert!(dot(&a, &b[0]) > dot(&a, &b[1]) + 0.2);
        assert_eq!(a.len(), 256);
    }

    #[test]
    fn calibration_scales_per_model() {
        let m = calibration("sentence-transformers/all-MiniLM-L6-v2");
        assert_eq!(m.scale(0.1), 0.0);
        assert_eq!(m.scale(0.9), 1.0);
        let e = calibration("intfloat/multilingual-e5-small");
        assert!(
            e.scale(0.75) < 0.1 && e.scale(0.91) > 0.9,
            "e5's unrelated cosines are high"
        );
    }

    #[test]
    fn dot_handles_tails() {
        let a: Vec<f32> = (0..13).map(|i| i as f32).collect();
        let expect: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot(&a, &a), expect);
    }
}
