//! Embedding models from the binary's side: loading the configured model for a command,
//! the background loader of a long-running server, and `engram model pull|list|use`.

use crate::cli::ModelCommand;
use anyhow::Context;
use engram_core::embed::Embedder;
use engram_embed::{CandleEmbedder, EmbedOptions, ModelSpec, PullEvent};
use engram_store::settings::Home;
use std::path::PathBuf;
use std::sync::Arc;

pub fn models_dir(home: &Home) -> PathBuf {
    home.root.join("models")
}

/// Hugging Face hub caches on this machine that may already hold a model: the ones
/// `huggingface_hub` reads (`HF_HUB_CACHE`, `HF_HOME/hub`, `XDG_CACHE_HOME/huggingface/hub`,
/// `~/.cache/huggingface/hub`, where seed B's sentence-transformers backend put
/// multilingual-e5-small) and seed A's `ENGRAM_HOME/model_cache`.
pub fn hub_caches(home: &Home) -> Vec<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let mut out = Vec::new();
    out.extend(var("HF_HUB_CACHE"));
    out.extend(var("HF_HOME").map(|h| h.join("hub")));
    out.extend(var("XDG_CACHE_HOME").map(|c| c.join("huggingface/hub")));
    out.extend(var("HOME").map(|h| h.join(".cache/huggingface/hub")));
    out.push(home.root.join("model_cache"));
    out.dedup();
    out
}

/// Installs `spec` into `dir`: copied from a Hugging Face cache on this machine when one
/// holds it, else downloaded from `endpoint` (or the hub). Returns the folder and, when it
/// was copied, where from.
pub fn install(
    home: &Home,
    spec: &ModelSpec,
    dir: &std::path::Path,
    endpoint: Option<&str>,
    progress: &mut dyn FnMut(PullEvent),
) -> anyhow::Result<(PathBuf, Option<PathBuf>)> {
    let mut from = None;
    let copied = engram_embed::install_from_hub_cache(spec, dir, &hub_caches(home), &mut |ev| {
        if let PullEvent::FromCache { path } = &ev {
            from = Some(path.clone());
        }
        progress(ev)
    })?;
    if let Some(path) = copied {
        return Ok((path, from));
    }
    Ok((engram_embed::pull(spec, dir, endpoint, progress)?, None))
}

/// Loads the configured model, or explains why there is none. `Ok(None)` means lexical
/// search by choice (`model = "none"`) or because the model is not installed yet.
pub fn load(
    home: &Home,
    config: &engram_core::Config,
) -> anyhow::Result<Option<Arc<dyn Embedder>>> {
    let name = config.model.trim();
    if name.is_empty() || name.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let opts = EmbedOptions {
        threads: config.embed_threads,
        ..EmbedOptions::default()
    };
    match CandleEmbedder::open(&models_dir(home), name, opts) {
        Ok(e) => Ok(Some(Arc::new(e))),
        Err(engram_embed::Error::NotInstalled { .. })
        | Err(engram_embed::Error::UnknownModel { .. }) => Ok(None),
        Err(e) => Err(anyhow::anyhow!("model {name:?}: {e}")),
    }
}

/// Whether a configured model names a folder on disk rather than a model by name or id.
pub(crate) fn names_a_folder(name: &str) -> bool {
    // `org/model` is a hub repo id, not a folder: only an absolute or explicitly relative
    // path (or one that exists) names a folder.
    let p = std::path::Path::new(name);
    p.is_absolute()
        || name.starts_with("./")
        || name.starts_with("../")
        || name.starts_with('~')
        || p.exists()
}

/// What to do about a configured model that is not there: a name is pulled, a folder must
/// hold the model's files (pulling a path means nothing).
pub fn missing_model_advice(name: &str) -> String {
    if names_a_folder(name) {
        format!(
            "model folder {name:?} holds no model: it must contain config.json, tokenizer.json and model.safetensors (a sentence-transformers model as published); fix the path in ENGRAM_MODEL or `model` in config.toml"
        )
    } else if ModelSpec::find(name).is_none() {
        format!(
            "model {name:?} is not one engram can pull (it knows {}); engram runs BERT-family sentence-transformers models (MiniLM, bge, e5, gte), not MPNet: put such a model's folder (config.json, tokenizer.json, model.safetensors) on disk and set ENGRAM_MODEL to its path, or run `engram model pull all-MiniLM-L6-v2` and unset ENGRAM_MODEL; recall is lexical until then",
            ModelSpec::known()
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        format!(
            "model {name:?} is not installed: run `engram model pull {name}` (it copies the model from a Hugging Face cache on this machine when one holds it, else downloads it), or set ENGRAM_MODEL to a model folder"
        )
    }
}

/// Whether the configured model can never load as named: a folder without a model, or a
/// name engram cannot pull. A mistake to fix, said as one (doctor NG, a warning in the
/// server's log), where a known model not pulled yet is a step still to take.
pub fn unusable_model_name(name: &str) -> bool {
    names_a_folder(name) || ModelSpec::find(name).is_none()
}

/// Why search is lexical, for `stats` and `doctor`: `None` when a model is loaded.
pub fn lexical_reason(home: &Home, config: &engram_core::Config) -> Option<String> {
    let name = config.model.trim();
    if name.is_empty() || name.eq_ignore_ascii_case("none") {
        return Some("model = \"none\" in the configuration".into());
    }
    match CandleEmbedder::open(&models_dir(home), name, EmbedOptions::default()) {
        Ok(_) => None,
        Err(engram_embed::Error::NotInstalled { .. })
        | Err(engram_embed::Error::UnknownModel { .. }) => Some(missing_model_advice(name)),
        Err(e) => Some(format!("model {name:?} cannot be loaded: {e}")),
    }
}

pub fn run(cmd: ModelCommand, json: bool) -> anyhow::Result<()> {
    let home = engram_mcp::environment::home()?;
    let dir = models_dir(&home);
    match cmd {
        ModelCommand::List => {
            let entries = engram_embed::list(&dir)?;
            let config = engram_mcp::environment::load_config(&home)?;
            if json {
                let v: Vec<_> = entries
                    .iter()
                    .map(|e| serde_json::json!({
                        "name": e.spec.name, "repo": e.spec.repo, "dim": e.spec.dim, "installed": e.installed,
                        "known": e.known, "path": e.path, "size_bytes": e.size_bytes,
                        "in_use": e.spec.name == config.model || e.path.to_string_lossy() == config.model,
                    }))
                    .collect();
                println!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                let model = config.model.trim();
                if names_a_folder(model)
                    && !entries.iter().any(|e| e.path.to_string_lossy() == model)
                {
                    // A folder outside the model cache is listed too: it is what is in use.
                    let state = if engram_embed::installed(std::path::Path::new(model)) {
                        "a folder on disk"
                    } else {
                        "a folder that holds no model"
                    };
                    println!("* {model}  ({state})");
                }
                for e in &entries {
                    let mark = if e.spec.name == config.model
                        || e.path.to_string_lossy() == config.model
                    {
                        "*"
                    } else {
                        " "
                    };
                    let state = if e.installed {
                        format!("installed, {} MB", e.size_bytes / 1_000_000)
                    } else {
                        "not installed".into()
                    };
                    println!(
                        "{mark} {:<24} {:<44} {}d  {state}",
                        e.spec.name, e.spec.repo, e.spec.dim
                    );
                }
                println!(
                    "(* = configured model; `engram model pull NAME` downloads, `engram model use NAME|DIR` switches)"
                );
            }
        }
        ModelCommand::Pull { name, endpoint } => {
            let spec = ModelSpec::find(&name).with_context(|| {
                let known: Vec<String> = ModelSpec::known().into_iter().map(|s| s.name).collect();
                format!("unknown model {name:?}; known: {}", known.join(", "))
            })?;
            let endpoint = endpoint
                .or_else(|| std::env::var("HF_ENDPOINT").ok())
                .filter(|e| !e.is_empty());
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "{msg:24} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            let (path, from) = install(
                &home,
                &spec,
                &dir,
                endpoint.as_deref(),
                &mut |ev| match ev {
                    PullEvent::FileStarted { file, total_bytes } => {
                        bar.set_length(total_bytes);
                        bar.set_position(0);
                        bar.set_message(file);
                    }
                    PullEvent::FileProgress { done_bytes, .. } => bar.set_position(done_bytes),
                    PullEvent::FileFinished { .. }
                    | PullEvent::AlreadyInstalled { .. }
                    | PullEvent::FromCache { .. }
                    | PullEvent::Installed { .. } => {}
                },
            )?;
            bar.finish_and_clear();
            match from {
                Some(f) => println!(
                    "{} installed at {} (copied from the Hugging Face cache at {}, nothing downloaded)",
                    spec.name,
                    path.display(),
                    f.display()
                ),
                None => println!("{} installed at {}", spec.name, path.display()),
            }
        }
        ModelCommand::Use { name } => {
            // Check it loads before writing the configuration.
            let opts = EmbedOptions::default();
            let e = CandleEmbedder::open(&dir, &name, opts)
                .with_context(|| format!("cannot load model {name:?}"))?;
            set_config_key(&home.config_path(), "model", &name)?;
            let mut config = engram_mcp::environment::load_config(&home)?;
            config.model = name.clone();
            let mut store = crate::open::open_configured(&home, config)?;
            store.set_embedder(Some(Arc::new(e)));
            let total = store.embedding_status()?.missing;
            let bar = indicatif::ProgressBar::new(total);
            bar.set_message("embedding memories");
            store.embed_missing(|n| bar.inc(n as u64))?;
            bar.finish_and_clear();
            let s = store.embedding_status()?;
            println!(
                "using {name}: {} memories embedded, {} without a vector",
                s.embedded, s.missing
            );
            // The environment wins over config.toml: say so, or the next command quietly
            // goes back to the model the variable names.
            if let Ok(env) = std::env::var("ENGRAM_MODEL")
                && env.trim() != name.trim()
            {
                eprintln!(
                    "warning: ENGRAM_MODEL={env:?} is set and overrides config.toml: unset it (in your shell and in the agent's MCP entry `env`) or set it to {name:?}"
                );
            }
        }
    }
    Ok(())
}

/// Sets one top-level key in config.toml, keeping the others (comments are not kept).
fn set_config_key(path: &std::path::Path, key: &str, value: &str) -> anyhow::Result<()> {
    let mut table: toml::Table = match std::fs::read_to_string(path) {
        Ok(t) => t
            .parse()
            .with_context(|| format!("{} does not parse; fix it first", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    table.insert(key.to_string(), toml::Value::String(value.to_string()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, toml::to_string(&table)?)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}
