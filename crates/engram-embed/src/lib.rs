//! engram's sentence encoders: BERT-family models run in process with candle on the CPU.
//!
//! - [`CandleEmbedder`] implements [`engram_core::embed::Embedder`] for a Hugging Face
//!   style folder (`config.json`, `tokenizer.json`, `model.safetensors`).
//! - [`ModelSpec`] is the registry of models engram knows (name, repo, dimension, pooling,
//!   query/passage prefixes); [`DEFAULT_MODEL`] is `all-MiniLM-L6-v2`.
//! - [`pull`], [`list`] and [`resolve`] manage the model cache, `ENGRAM_HOME/models/<name>/`,
//!   with a `checksums.txt` that is verified every time a model is loaded.
//!
//! The library never writes to the terminal and never reads environment variables: the
//! binary passes `HF_ENDPOINT`, the thread count and the models directory in, and shows
//! download progress from [`PullEvent`]s.
//!
//! # Truncation
//! Only the first [`ModelSpec::max_tokens`] tokens (256 by default, special tokens
//! included, as sentence-transformers does) of a text are embedded. The memory text itself
//! is stored whole; only its vector is computed from its beginning.

mod cache;
mod checksum;
mod embedder;
mod error;
mod pooling;
mod spec;

pub use cache::{
    DEFAULT_ENDPOINT, ModelEntry, PullEvent, find_in_hub_cache, install_from_hub_cache, installed,
    list, pull, resolve,
};
pub use checksum::{CHECKSUMS_FILE, sha256_file, verify_checksums};
pub use embedder::{CandleEmbedder, EmbedOptions, Throughput};
pub use error::Error;
pub use pooling::{l2_normalize, pool};
pub use spec::{DEFAULT_MAX_TOKENS, DEFAULT_MODEL, FOLDER_SPEC_FILE, ModelSpec, Pooling};

/// The files a model folder must hold, in the order they are downloaded and loaded.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
