use std::path::PathBuf;

use engram_core::embed::EmbedError;

/// Why a model could not be found, downloaded, verified or loaded. Every variant that
/// concerns a file names it, so a user can see which file to fix or delete.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file or folder failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file is present but unusable: bad JSON, a tokenizer that does not parse, a
    /// corrupt or incomplete safetensors file, an unsupported architecture.
    #[error("{path}: {message}")]
    InvalidModel { path: PathBuf, message: String },
    /// A file differs from the sha256 recorded in `checksums.txt` when it was downloaded.
    #[error(
        "{path}: sha256 mismatch (checksums.txt says {expected}, the file has {actual}); the \
         file is corrupt or was changed: delete the model folder and pull it again"
    )]
    Checksum {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    /// A name that is neither a known model, an installed folder nor a path.
    #[error("unknown model `{name}` (known models: {known})")]
    UnknownModel { name: String, known: String },
    /// A known model whose files are not in the models directory yet.
    #[error(
        "model `{name}` is not installed (expected its files in {path}); run `engram model pull {name}`"
    )]
    NotInstalled { name: String, path: PathBuf },
    /// Downloading from the Hugging Face hub (or the `HF_ENDPOINT` mirror) failed.
    #[error("download of {url} failed: {message}")]
    Download { url: String, message: String },
    /// A failure inside the encoder while embedding, or a bad setting.
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn invalid(path: impl Into<PathBuf>, message: impl std::fmt::Display) -> Self {
        Error::InvalidModel {
            path: path.into(),
            message: message.to_string(),
        }
    }
}

impl From<Error> for EmbedError {
    fn from(e: Error) -> Self {
        match e {
            Error::Embed(e) => e,
            other => EmbedError(other.to_string()),
        }
    }
}
