//! How the CLI's verbs reach the store: opened with or without the embedding model, the
//! vault checked at the start of the process, the caller's directory for rooms, content
//! from stdin, and the vault folder for backups.

use anyhow::Context;
use engram_mcp::environment::{home, load_config};
use engram_store::Store;
use engram_store::settings::Home;
use std::io::Read;
use std::path::PathBuf;

/// `engram --store URL <verb>` (any verb: `serve`, `import`, `export`, …): replaces the
/// `store` setting for this process.
static STORE_FLAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Takes `--store` for every store this process opens (the server opens several).
pub fn set_store_flag(url: String) {
    let _ = STORE_FLAG.set(url);
}

/// The `--store` flag of this process, if given (`bench recall` runs on it).
pub fn store_flag() -> Option<&'static str> {
    STORE_FLAG.get().map(String::as_str)
}

/// The store the configuration names: the SQLite file in the home, or a PostgreSQL
/// database (`store = "postgres://…"`, `ENGRAM_STORE`, `--store`). The error names the
/// server (host, port, database), never its password.
pub fn open_configured(home: &Home, mut config: engram_core::Config) -> anyhow::Result<Store> {
    if let Some(url) = STORE_FLAG.get() {
        config.store = url.clone();
        config
            .validate()
            .map_err(|e| anyhow::anyhow!("--store: {e}"))?;
    }
    let url = config.store.trim().to_string();
    if url.is_empty() {
        return Ok(Store::open(&home.db_path(), config)?);
    }
    // The Markdown vault is one person's folder beside their own store. On a database
    // that many servers write, each server's folder would hold only the changes it
    // happened to sync first (the cursor, `meta.vault_seq`, is the database's), and the
    // servers would contend for that cursor on every write. So it is off there; `engram
    // export` is the way to a copy in files.
    config.vault = engram_core::config::Switch::Off;
    Ok(engram_store::postgres::PgBackend::open_store(
        &url,
        config,
        &home.db_path(),
    )?)
}

/// `engram serve` on a server database opens it once at start, so that a wrong or
/// unreachable URL fails there (naming host, port and database, never the password)
/// instead of on a client's first call. The SQLite file is still opened on first use.
pub fn check_server_store() -> anyhow::Result<()> {
    let home = home()?;
    let config = load_config(&home)?;
    if !STORE_FLAG.get().unwrap_or(&config.store).trim().is_empty() {
        drop(open_configured(&home, config)?);
    }
    Ok(())
}

/// How many stores a server runs calls on side by side: `server_stores` on a server
/// database (`--store`, `store`, `ENGRAM_STORE`), one on the home's SQLite file.
pub fn serving_stores() -> anyhow::Result<usize> {
    let config = load_config(&home()?)?;
    let server = !STORE_FLAG.get().unwrap_or(&config.store).trim().is_empty();
    Ok(if server { config.server_stores } else { 1 })
}

/// Opens the store without loading the embedding model (commands that need no search).
pub fn open_store() -> anyhow::Result<Store> {
    let home = home()?;
    let mut store = open_configured(&home, load_config(&home)?)?;
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
    let mut store = open_configured(&home, config)?;
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
