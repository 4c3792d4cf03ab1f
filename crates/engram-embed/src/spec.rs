//! Which models engram knows, and how a model folder describes itself.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The model used when the user names none: small (90 MB), fast on a CPU, English.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// Optional file in a model folder that overrides what engram assumes about the model
/// (see [`ModelSpec::for_folder`]). `engram model pull` writes one, so a pulled folder
/// describes itself even if the registry changes later.
pub const FOLDER_SPEC_FILE: &str = "engram-model.json";

/// Tokens embedded per text, special tokens included: sentence-transformers' limit for
/// MiniLM. Attention cost grows with the square of the length, and memories beyond this
/// are rare; the text is stored whole either way.
pub const DEFAULT_MAX_TOKENS: usize = 256;

/// How the per-token vectors of the last layer become one sentence vector. It must match
/// how the model was trained, or similarities degrade silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// Average of the token vectors, padding excluded (sentence-transformers, E5).
    #[default]
    Mean,
    /// The vector of the first (`[CLS]`) token (BGE, for example).
    Cls,
}

/// What engram needs to know about an embedding model beyond its weights.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSpec {
    /// Short name: the CLI argument and the folder name under the models directory.
    pub name: String,
    /// Other names accepted for it (case-insensitive, like `name`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Hugging Face repo id to download from. It is also the [`model_id`] stored with
    /// every vector, so vectors of different models are never compared; a local folder
    /// that is not a known model gets `local/<folder name>`.
    ///
    /// [`model_id`]: engram_core::embed::Embedder::model_id
    pub repo: String,
    /// Repo revision (branch, tag or commit) to download.
    #[serde(default = "default_revision")]
    pub revision: String,
    /// Length of the vectors (`hidden_size` in `config.json`).
    pub dim: usize,
    #[serde(default)]
    pub pooling: Pooling,
    /// Prepended to search queries (E5 models were trained with `"query: "`).
    #[serde(default)]
    pub query_prefix: String,
    /// Prepended to stored texts (E5 models were trained with `"passage: "`).
    #[serde(default)]
    pub passage_prefix: String,
    /// Longest input embedded, in tokens, special tokens included; the rest is cut off.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: usize,
}

fn default_revision() -> String {
    "main".to_string()
}

fn default_max_tokens() -> usize {
    DEFAULT_MAX_TOKENS
}

/// The contents of [`FOLDER_SPEC_FILE`]: every field optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FolderSpecFile {
    name: Option<String>,
    #[serde(default)]
    aliases: Option<Vec<String>>,
    repo: Option<String>,
    revision: Option<String>,
    dim: Option<usize>,
    pooling: Option<Pooling>,
    query_prefix: Option<String>,
    passage_prefix: Option<String>,
    max_tokens: Option<usize>,
}

/// `1_Pooling/config.json` of a sentence-transformers export.
#[derive(Debug, Deserialize)]
struct SentenceTransformersPooling {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
}

#[derive(Debug, Deserialize)]
struct HiddenSize {
    hidden_size: usize,
}

impl ModelSpec {
    /// The models engram knows by name. The first is [`DEFAULT_MODEL`].
    pub fn known() -> Vec<ModelSpec> {
        let spec =
            |name: &str, aliases: &[&str], repo: &str, query: &str, passage: &str| ModelSpec {
                name: name.to_string(),
                aliases: aliases.iter().map(|a| a.to_string()).collect(),
                repo: repo.to_string(),
                revision: default_revision(),
                dim: 384,
                pooling: Pooling::Mean,
                query_prefix: query.to_string(),
                passage_prefix: passage.to_string(),
                max_tokens: DEFAULT_MAX_TOKENS,
            };
        vec![
            // English; unrelated sentences score ~0.0-0.2, paraphrases ~0.55-0.65+.
            spec(
                DEFAULT_MODEL,
                &["minilm", "all-minilm"],
                "sentence-transformers/all-MiniLM-L6-v2",
                "",
                "",
            ),
            // 100+ languages; note its compressed cosine range (unrelated ~0.7-0.78).
            spec(
                "multilingual-e5-small",
                &["e5-small", "me5-small"],
                "intfloat/multilingual-e5-small",
                "query: ",
                "passage: ",
            ),
        ]
    }

    /// The known model called `name` (its short name, an alias, or its repo id),
    /// compared case-insensitively.
    pub fn find(name: &str) -> Option<ModelSpec> {
        let n = name.trim();
        Self::known().into_iter().find(|s| s.matches(n))
    }

    /// The default model's spec.
    pub fn default_model() -> ModelSpec {
        Self::find(DEFAULT_MODEL).expect("the default model is in the registry")
    }

    fn matches(&self, n: &str) -> bool {
        self.name.eq_ignore_ascii_case(n)
            || self.repo.eq_ignore_ascii_case(n)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(n))
    }

    /// Names of the known models, for messages.
    pub(crate) fn known_names() -> String {
        Self::known()
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Describes the model in `dir`, which holds at least `config.json`. In order:
    ///
    /// 1. Start from defaults: mean pooling, no prefixes, 256 tokens, model id
    ///    `local/<folder name>`, dimension from `config.json`'s `hidden_size`.
    /// 2. If the folder is named like a known model (its name, an alias or the last part
    ///    of its repo id), take that model's pooling and prefixes; on an exact match also
    ///    its repo id, so a hand-copied `all-MiniLM-L6-v2` folder shares vectors with a
    ///    pulled one. A name that merely starts with `<known name>-` (for example
    ///    `multilingual-e5-small-q4deq`, a re-quantised copy) keeps `local/<folder>`,
    ///    because its vectors are close to but not the same as the original's.
    /// 3. Otherwise, a sentence-transformers `1_Pooling/config.json` chooses the pooling.
    /// 4. Finally, every field present in `engram-model.json` wins.
    pub fn for_folder(dir: &Path) -> Result<ModelSpec, Error> {
        let config_path = dir.join("config.json");
        let bytes = std::fs::read(&config_path).map_err(|e| Error::io(&config_path, e))?;
        let hidden: HiddenSize = serde_json::from_slice(&bytes)
            .map_err(|e| Error::invalid(&config_path, format!("not a model config: {e}")))?;
        let folder = dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "model".to_string());

        let mut spec = ModelSpec {
            name: folder.clone(),
            aliases: Vec::new(),
            repo: format!("local/{folder}"),
            revision: default_revision(),
            dim: hidden.hidden_size,
            pooling: Pooling::Mean,
            query_prefix: String::new(),
            passage_prefix: String::new(),
            max_tokens: DEFAULT_MAX_TOKENS,
        };

        let exact = Self::known().into_iter().find(|k| {
            k.matches(&folder)
                || k.repo
                    .rsplit('/')
                    .next()
                    .is_some_and(|b| b.eq_ignore_ascii_case(&folder))
        });
        let prefixed = || {
            let lower = folder.to_ascii_lowercase();
            Self::known().into_iter().find(|k| {
                std::iter::once(&k.name)
                    .chain(&k.aliases)
                    .any(|n| lower.starts_with(&format!("{}-", n.to_ascii_lowercase())))
            })
        };
        if let Some(k) = exact {
            spec.repo = k.repo;
            spec.revision = k.revision;
            spec.aliases = k.aliases;
            spec.pooling = k.pooling;
            spec.query_prefix = k.query_prefix;
            spec.passage_prefix = k.passage_prefix;
            spec.max_tokens = k.max_tokens;
        } else if let Some(k) = prefixed() {
            spec.pooling = k.pooling;
            spec.query_prefix = k.query_prefix;
            spec.passage_prefix = k.passage_prefix;
            spec.max_tokens = k.max_tokens;
        } else {
            let st_path = dir.join("1_Pooling").join("config.json");
            if let Ok(b) = std::fs::read(&st_path) {
                let st: SentenceTransformersPooling = serde_json::from_slice(&b)
                    .map_err(|e| Error::invalid(&st_path, format!("bad pooling config: {e}")))?;
                if st.pooling_mode_cls_token && !st.pooling_mode_mean_tokens {
                    spec.pooling = Pooling::Cls;
                }
            }
        }

        let file_path = dir.join(FOLDER_SPEC_FILE);
        match std::fs::read(&file_path) {
            Ok(b) => {
                let f: FolderSpecFile = serde_json::from_slice(&b).map_err(|e| {
                    Error::invalid(&file_path, format!("bad {FOLDER_SPEC_FILE}: {e}"))
                })?;
                if let Some(v) = f.name {
                    spec.name = v;
                }
                if let Some(v) = f.aliases {
                    spec.aliases = v;
                }
                if let Some(v) = f.repo {
                    spec.repo = v;
                }
                if let Some(v) = f.revision {
                    spec.revision = v;
                }
                if let Some(v) = f.dim {
                    spec.dim = v;
                }
                if let Some(v) = f.pooling {
                    spec.pooling = v;
                }
                if let Some(v) = f.query_prefix {
                    spec.query_prefix = v;
                }
                if let Some(v) = f.passage_prefix {
                    spec.passage_prefix = v;
                }
                if let Some(v) = f.max_tokens {
                    spec.max_tokens = v;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&file_path, e)),
        }
        if spec.dim != hidden.hidden_size {
            return Err(Error::invalid(
                &config_path,
                format!(
                    "hidden_size is {} but {FOLDER_SPEC_FILE} says dim {}",
                    hidden.hidden_size, spec.dim
                ),
            ));
        }
        Ok(spec)
    }

    /// The JSON written as [`FOLDER_SPEC_FILE`] into a pulled folder.
    pub(crate) fn to_folder_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a spec always serialises") + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str, hidden: usize) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("config.json"),
            format!("{{\"hidden_size\": {hidden}}}"),
        )
        .unwrap();
        root
    }

    #[test]
    fn registry_has_the_default_and_e5() {
        let d = ModelSpec::default_model();
        assert_eq!(d.name, "all-MiniLM-L6-v2");
        assert_eq!(d.repo, "sentence-transformers/all-MiniLM-L6-v2");
        assert_eq!((d.dim, d.pooling), (384, Pooling::Mean));
        assert!(d.query_prefix.is_empty() && d.passage_prefix.is_empty());

        let e5 = ModelSpec::find("E5-SMALL").unwrap();
        assert_eq!(e5.repo, "intfloat/multilingual-e5-small");
        assert_eq!(
            (e5.query_prefix.as_str(), e5.passage_prefix.as_str()),
            ("query: ", "passage: ")
        );
        assert_eq!(ModelSpec::find("intfloat/multilingual-e5-small"), Some(e5));
        assert!(ModelSpec::find("nope").is_none());
    }

    #[test]
    fn folder_named_like_a_known_model_takes_its_spec() {
        let root = folder("all-MiniLM-L6-v2", 384);
        let s = ModelSpec::for_folder(&root.path().join("all-MiniLM-L6-v2")).unwrap();
        assert_eq!(s.repo, "sentence-transformers/all-MiniLM-L6-v2");

        let root = folder("multilingual-e5-small-q4deq", 384);
        let s = ModelSpec::for_folder(&root.path().join("multilingual-e5-small-q4deq")).unwrap();
        assert_eq!(s.repo, "local/multilingual-e5-small-q4deq");
        assert_eq!(s.query_prefix, "query: ");
    }

    #[test]
    fn unknown_folder_defaults_then_files_override() {
        let root = folder("my-bge", 768);
        let dir = root.path().join("my-bge");
        let s = ModelSpec::for_folder(&dir).unwrap();
        assert_eq!(
            (s.repo.as_str(), s.dim, s.pooling),
            ("local/my-bge", 768, Pooling::Mean)
        );

        std::fs::create_dir(dir.join("1_Pooling")).unwrap();
        std::fs::write(
            dir.join("1_Pooling/config.json"),
            r#"{"word_embedding_dimension": 768, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
        )
        .unwrap();
        assert_eq!(ModelSpec::for_folder(&dir).unwrap().pooling, Pooling::Cls);

        std::fs::write(
            dir.join(FOLDER_SPEC_FILE),
            r#"{"repo": "BAAI/bge-base-en-v1.5", "query_prefix": "Represent this sentence: ", "pooling": "mean"}"#,
        )
        .unwrap();
        let s = ModelSpec::for_folder(&dir).unwrap();
        assert_eq!(s.repo, "BAAI/bge-base-en-v1.5");
        assert_eq!(s.pooling, Pooling::Mean);
        assert_eq!(s.query_prefix, "Represent this sentence: ");

        std::fs::write(dir.join(FOLDER_SPEC_FILE), r#"{"dim": 5}"#).unwrap();
        assert!(
            ModelSpec::for_folder(&dir)
                .unwrap_err()
                .to_string()
                .contains("hidden_size")
        );
        std::fs::write(dir.join(FOLDER_SPEC_FILE), r#"{"polling": "cls"}"#).unwrap();
        let err = ModelSpec::for_folder(&dir).unwrap_err().to_string();
        assert!(
            err.contains(FOLDER_SPEC_FILE) && err.contains("polling"),
            "{err}"
        );
    }

    #[test]
    fn spec_round_trips_through_the_folder_file() {
        let root = folder("all-MiniLM-L6-v2", 384);
        let dir = root.path().join("all-MiniLM-L6-v2");
        let e5 = ModelSpec::find("multilingual-e5-small").unwrap();
        let mut custom = e5.clone();
        custom.name = "all-MiniLM-L6-v2".into();
        std::fs::write(dir.join(FOLDER_SPEC_FILE), custom.to_folder_json()).unwrap();
        assert_eq!(ModelSpec::for_folder(&dir).unwrap(), custom);
    }

    #[test]
    fn missing_or_bad_config_names_the_file() {
        let root = tempfile::tempdir().unwrap();
        let err = ModelSpec::for_folder(root.path()).unwrap_err().to_string();
        assert!(err.contains("config.json"), "{err}");
        std::fs::write(root.path().join("config.json"), "{").unwrap();
        let err = ModelSpec::for_folder(root.path()).unwrap_err().to_string();
        assert!(
            err.contains("config.json") && err.contains("not a model config"),
            "{err}"
        );
    }
}
