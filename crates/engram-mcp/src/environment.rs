//! The process environment as every surface reads it: where the home is (`ENGRAM_HOME`,
//! seed C's `ENGRAM_DATA_DIR`, `~/.engram`), the settings layered from `config.toml` and
//! `ENGRAM_*` variables, and seed C's `ENGRAM_PROJECT`.
//!
//! It lives here, not in the binary, because the hooks and the servers read the same
//! environment the CLI does; the store crate never looks at the environment itself.

use engram_store::settings::{self, Home};

/// Every `ENGRAM_*` variable, for [`settings::load`] to layer over the file.
pub fn env_pairs() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with("ENGRAM_"))
        .collect()
}

/// `ENGRAM_HOME`, else seed C's `ENGRAM_DATA_DIR` (a C user's store stays where C put
/// it), else `~/.engram`.
pub fn home() -> anyhow::Result<Home> {
    let explicit = std::env::var("ENGRAM_HOME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("ENGRAM_DATA_DIR").ok());
    Ok(Home::from_env(
        explicit.as_deref(),
        std::env::var("HOME").ok().as_deref(),
    )?)
}

/// The settings of `home`, with a warning on stderr for each key or variable that is not
/// a setting, and seed B's notes said once.
pub fn load_config(home: &Home) -> anyhow::Result<engram_core::Config> {
    let loaded = settings::load(&home.config_path(), &env_pairs())?;
    for k in &loaded.unknown_keys {
        eprintln!(
            "warning: {}: unknown setting `{k}` ignored",
            home.config_path().display()
        );
    }
    for k in &loaded.unknown_env {
        eprintln!("warning: environment variable {k} is not an engram setting and is ignored");
    }
    warn_seed_b_once(home, &loaded.seed_b_notes);
    Ok(loaded.config)
}

/// Seed C's `ENGRAM_PROJECT`: the server's project when `--project`/`--room` is absent.
pub fn env_project() -> Option<String> {
    std::env::var("ENGRAM_PROJECT")
        .ok()
        .filter(|p| !p.trim().is_empty())
}

/// Seed B's keys with no counterpart are said once per home (and again when the list
/// changes), not on every command: `ENGRAM_HOME/.seed-b-notes` holds what was said.
/// `doctor` lists them every time.
fn warn_seed_b_once(home: &Home, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    let said = home.root.join(".seed-b-notes");
    let text = notes.join("\n");
    if std::fs::read_to_string(&said).is_ok_and(|t| t == text) {
        return;
    }
    for n in notes {
        // A note on one of B's variables names the variable first: it came from the
        // environment, not from the file.
        if n.starts_with("ENGRAM_") {
            eprintln!("note: environment: {n}");
        } else {
            eprintln!("note: {}: {n}", home.config_path().display());
        }
    }
    let _ = engram_store::fsutil::write_atomic(&said, text.as_bytes());
}
