//! [`CandleEmbedder`]: a BERT-family sentence encoder run with candle on the CPU.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use engram_core::embed::{EmbedError, Embedder};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::checksum::{check_bytes, read_checksums};
use crate::error::Error;
use crate::pooling::{l2_normalize, pool};
use crate::spec::ModelSpec;

/// Runtime settings of an encoder (the model itself is described by [`ModelSpec`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedOptions {
    /// Threads that run inference; 0 means one per available CPU.
    ///
    /// Default 1 for a library caller. The binary passes its `embed_threads` setting
    /// (default 2: on a 2-vCPU machine two threads embed a query in 5.5 ms instead of 7.3,
    /// measured with `engram bench recall`); a memory server should not take every core
    /// from the agent it serves.
    ///
    /// How it is applied: every embedding call runs inside a private rayon pool of this
    /// size, which bounds all of candle's parallel work (candle runs it on the current
    /// rayon pool). But candle's matrix multiply also reads `RAYON_NUM_THREADS` (default:
    /// the number of physical cores) on every call to decide how many pieces to cut its
    /// work into; more pieces than threads is slower (measured here with 1 thread: 63
    /// instead of 92 sentences/s). So the binary should also set `RAYON_NUM_THREADS` to
    /// this value at the very start of a plain `fn main`, before any thread exists (before
    /// a tokio runtime is built); [`CandleEmbedder::matmul_threads`] shows what candle
    /// sees. The library itself never sets environment variables: that is unsound once
    /// other threads run.
    pub threads: usize,
    /// Texts per forward pass in [`Embedder::embed_documents`]. Texts are sorted by length
    /// first, so a batch pads little; larger batches are faster per text up to ~32, then
    /// only use more memory.
    pub batch_size: usize,
}

impl Default for EmbedOptions {
    fn default() -> Self {
        Self {
            threads: 1,
            batch_size: 32,
        }
    }
}

/// Sentences per second measured by [`CandleEmbedder::measure`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Throughput {
    pub texts: usize,
    pub batch_size: usize,
    pub seconds: f64,
    pub texts_per_second: f64,
}

/// A BERT-family encoder (BERT, MiniLM, E5 small/base, BGE, ...) with its tokenizer.
///
/// Vectors are pooled as the [`ModelSpec`] says, then L2-normalised. Inputs longer than
/// [`ModelSpec::max_tokens`] tokens are cut for the embedding only.
pub struct CandleEmbedder {
    spec: ModelSpec,
    dir: PathBuf,
    model: BertModel,
    tokenizer: Tokenizer,
    pad_id: u32,
    options: EmbedOptions,
    pool: rayon::ThreadPool,
}

impl std::fmt::Debug for CandleEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CandleEmbedder")
            .field("spec", &self.spec)
            .field("dir", &self.dir)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl CandleEmbedder {
    /// Loads a model by name or path, as [`resolve`](crate::resolve) finds it: a known
    /// model installed under `models_dir` (the caller's `ENGRAM_HOME/models`), another
    /// folder there, or a path to a model folder.
    pub fn open(
        models_dir: &Path,
        name_or_path: &str,
        options: EmbedOptions,
    ) -> Result<Self, Error> {
        let (spec, dir) = crate::cache::resolve(models_dir, name_or_path)?;
        Self::load_with_spec(&dir, spec, options)
    }

    /// Loads the model in `dir`, described by [`ModelSpec::for_folder`] (folder name,
    /// `engram-model.json`, `config.json`).
    pub fn load(dir: &Path, options: EmbedOptions) -> Result<Self, Error> {
        let spec = ModelSpec::for_folder(dir)?;
        Self::load_with_spec(dir, spec, options)
    }

    /// Loads the model in `dir` as `spec` says (pooling, prefixes, token limit, id).
    ///
    /// If the folder has a `checksums.txt`, every file is checked against it first; a
    /// mismatch is an [`Error::Checksum`] naming the file. Missing or broken files are
    /// errors naming the path, never panics.
    pub fn load_with_spec(
        dir: &Path,
        spec: ModelSpec,
        options: EmbedOptions,
    ) -> Result<Self, Error> {
        if !dir.is_dir() {
            return Err(Error::io(
                dir,
                std::io::Error::new(std::io::ErrorKind::NotFound, "model folder not found"),
            ));
        }
        if options.batch_size == 0 {
            return Err(EmbedError("batch_size must be at least 1".into()).into());
        }
        if spec.max_tokens < 2 {
            return Err(EmbedError(format!(
                "max_tokens {} leaves no room for text",
                spec.max_tokens
            ))
            .into());
        }
        let recorded = read_checksums(dir)?;
        let read = |name: &str| -> Result<Vec<u8>, Error> {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            check_bytes(recorded.as_ref(), dir, name, &bytes)?;
            Ok(bytes)
        };

        // config.json: candle's BERT config, restricted to plain BERT: other architectures
        // (RoBERTa, XLM-R, DistilBERT) load into BertModel under their prefix but compute
        // positions differently, which would give wrong vectors without any error.
        let config_path = dir.join("config.json");
        let config_bytes = read("config.json")?;
        let config: Config = serde_json::from_slice(&config_bytes)
            .map_err(|e| Error::invalid(&config_path, format!("not a BERT config: {e}")))?;
        if let Some(t) = config.model_type.as_deref()
            && t != "bert"
        {
            return Err(Error::invalid(
                &config_path,
                format!(
                    "model_type `{t}` is not supported; engram runs BERT models (model_type `bert`)"
                ),
            ));
        }
        if config.hidden_size != spec.dim {
            return Err(Error::invalid(
                &config_path,
                format!(
                    "hidden_size is {}, but model {} has dimension {}",
                    config.hidden_size, spec.name, spec.dim
                ),
            ));
        }

        // tokenizer.json: drop the baked-in padding (MiniLM's pads every text to 128) and
        // set the truncation length; the batch is padded here, to its longest text.
        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?)
            .map_err(|e| Error::invalid(&tokenizer_path, format!("not a tokenizer: {e}")))?;
        let pad_id = tokenizer
            .get_padding()
            .map(|p| p.pad_id)
            .or_else(|| tokenizer.token_to_id("[PAD]"))
            .or_else(|| tokenizer.token_to_id("<pad>"))
            .unwrap_or(config.pad_token_id as u32);
        let max_tokens = spec.max_tokens.min(config.max_position_embeddings);
        let truncation = TruncationParams {
            max_length: max_tokens,
            ..tokenizer.get_truncation().cloned().unwrap_or_default()
        };
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(truncation))
            .map_err(|e| Error::invalid(&tokenizer_path, format!("cannot set truncation: {e}")))?;

        // model.safetensors: read whole (it is hashed anyway) instead of memory-mapped,
        // which would need `unsafe` and break if the file changed underneath.
        let weights_path = dir.join("model.safetensors");
        let weights = read("model.safetensors")?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| Error::invalid(&weights_path, format!("not a safetensors file: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| {
            Error::invalid(
                &weights_path,
                format!("weights do not fit config.json: {e}"),
            )
        })?;

        let threads = if options.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            options.threads
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("engram-embed-{i}"))
            .build()
            .map_err(|e| EmbedError(format!("cannot start {threads} inference threads: {e}")))?;

        Ok(Self {
            spec,
            dir: dir.to_path_buf(),
            model,
            tokenizer,
            pad_id,
            options,
            pool,
        })
    }

    /// How many pieces candle cuts each matrix multiply into: `RAYON_NUM_THREADS`, or the
    /// number of physical cores when unset. Best equal to [`EmbedOptions::threads`]; see
    /// there.
    pub fn matmul_threads() -> usize {
        candle_core::utils::get_num_threads()
    }

    /// What this encoder is: its name, id, dimension, pooling and prefixes.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// The folder the model was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn options(&self) -> &EmbedOptions {
        &self.options
    }

    /// Embeds `texts` as they are (no prefix), `batch_size` texts per forward pass, in
    /// input order. The building block of [`Embedder::embed_documents`], public for
    /// benchmarks and for callers that add their own prefixes.
    pub fn embed_raw(
        &self,
        texts: &[&str],
        batch_size: usize,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let batch_size = batch_size.max(1);
        self.pool.install(|| {
            let encodings = texts
                .iter()
                .map(|t| self.tokenizer.encode_fast(*t, true))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| EmbedError(format!("tokenizer: {e}")))?;
            // Longest first, so each batch holds texts of similar length and pads little.
            let mut order: Vec<usize> = (0..texts.len()).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].len()));
            let mut out = vec![Vec::new(); texts.len()];
            for chunk in order.chunks(batch_size) {
                let batch: Vec<&Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
                let vectors = self
                    .forward(&batch)
                    .map_err(|e| EmbedError(format!("model {}: {e}", self.spec.name)))?;
                for (&i, v) in chunk.iter().zip(vectors) {
                    out[i] = v;
                }
            }
            Ok(out)
        })
    }

    /// One forward pass over a batch: pad to its longest text, run BERT, pool, normalise.
    fn forward(&self, batch: &[&Encoding]) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = batch.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let n = batch.len();
        let mut ids = vec![self.pad_id; n * len];
        let mut types = vec![0u32; n * len];
        let mut mask = vec![0u32; n * len];
        for (row, e) in batch.iter().enumerate() {
            let at = row * len;
            ids[at..at + e.len()].copy_from_slice(e.get_ids());
            types[at..at + e.len()].copy_from_slice(e.get_type_ids());
            mask[at..at + e.len()].copy_from_slice(e.get_attention_mask());
        }
        let device = &Device::Cpu;
        let ids = Tensor::from_vec(ids, (n, len), device)?;
        let types = Tensor::from_vec(types, (n, len), device)?;
        let mask = Tensor::from_vec(mask, (n, len), device)?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        let pooled = pool(&hidden, &mask, self.spec.pooling)?;
        l2_normalize(&pooled)?.to_vec2::<f32>()
    }

    /// Number of tokens of `text` that are embedded (special tokens included, after
    /// truncation); equal to [`ModelSpec::max_tokens`] when the text was cut.
    pub fn embedded_tokens(&self, text: &str) -> Result<usize, EmbedError> {
        self.tokenizer
            .encode_fast(text, true)
            .map(|e| e.len())
            .map_err(|e| EmbedError(format!("tokenizer: {e}")))
    }

    /// Times [`embed_raw`](Self::embed_raw) over `texts` with `batch_size` (for
    /// `engram bench embed`). Run it once untimed first if start-up costs should not count.
    pub fn measure(&self, texts: &[&str], batch_size: usize) -> Result<Throughput, EmbedError> {
        let start = Instant::now();
        self.embed_raw(texts, batch_size)?;
        let seconds = start.elapsed().as_secs_f64();
        Ok(Throughput {
            texts: texts.len(),
            batch_size,
            seconds,
            texts_per_second: texts.len() as f64 / seconds.max(1e-9),
        })
    }

    fn with_prefix<'t>(prefix: &str, text: &'t str) -> Cow<'t, str> {
        if prefix.is_empty() {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(format!("{prefix}{text}"))
        }
    }
}

impl Embedder for CandleEmbedder {
    fn model_id(&self) -> &str {
        &self.spec.repo
    }

    fn dim(&self) -> usize {
        self.spec.dim
    }

    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let prefixed: Vec<Cow<'_, str>> = texts
            .iter()
            .map(|t| Self::with_prefix(&self.spec.passage_prefix, t))
            .collect();
        let refs: Vec<&str> = prefixed.iter().map(|t| t.as_ref()).collect();
        self.embed_raw(&refs, self.options.batch_size)
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let q = Self::with_prefix(&self.spec.query_prefix, text);
        let mut v = self.embed_raw(&[q.as_ref()], 1)?;
        v.pop()
            .ok_or_else(|| EmbedError("the model returned no vector".into()))
    }
}
