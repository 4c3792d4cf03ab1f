//! How the CLI's verbs reach the store: opened with or without the embedding model, the
//! vault checked at the start of the process, the caller's directory for rooms, content
//! from stdin, and the vault folder for backups.

use anyhow::Context;
use engram_mcp::environment::{home, load_config};
use engram_store::Store;
use engram_store::settings::Home;
use std::io::Read;
use std::path::PathBuf;

/// Opens the store without loading the embedding model (commands that need no search).
pub fn open_store() -> anyhow::Result<Store> {
    let home = home()?;
    let mut store = Store::open(&home.db_path(), load_config(&home)?)?;
    crate::vault_cli::startup(&mut store);
    Ok(store)
}

/// Opens the store with the configured embedding model, when it is installed: remember,
/// recall and correct embed. Without a model the store works lexically.
pub fn open_store_with_model() -> anyhow::Result<Store> {
    let home = home()?;
    let config = load_config(&home)?;
    let embedder = match crate::models::load(&home, &config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("warning: {e:#}; searching lexically");
            None
        }
    };
    let mut store = Store::open(&home.db_path(), config)?;
    store.set_embedder(embedder);
    crate::vault_cli::startup(&mut store);
    Ok(store)
}

/// The caller's directory for room resolution: `--cwd`, else the shell's directory. The
/// CLI is run by a person (or a hook) in their project, so its directory means something;
/// the library never looks it up by itself.
pub fn caller_dir(flag: Option<PathBuf>) -> Option<PathBuf> {
    let dir = flag.or_else(|| std::env::current_dir().ok())?;
    Some(std::path::absolute(&dir).unwrap_or(dir))
}

/// A content argument: the text itself, or `-` for stdin (which must be UTF-8).
pub fn content_arg(raw: String, field: &'static str) -> anyhow::Result<String> {
    if raw == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .context("reading content from stdin")?;
        return String::from_utf8(buf)
            .map_err(|_| engram_core::InputError::new(field, "stdin is not valid UTF-8").into());
    }
    Ok(raw)
}

/// The vault folder the configuration names (`None` with `vault = "off"`), without
/// opening the store: backups and restores copy it beside the database.
pub fn vault_path(home: &Home) -> anyhow::Result<Option<PathBuf>> {
    let config = load_config(home)?;
    if config.vault == engram_core::config::Switch::Off {
        return Ok(None);
    }
    let dir = config.vault_dir.trim();
    Ok(Some(if dir.is_empty() {
        home.root.join(engram_store::backup::VAULT_DIR)
    } else {
        home.root.join(dir)
    }))
}
