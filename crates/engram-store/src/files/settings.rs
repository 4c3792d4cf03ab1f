//! How configuration is layered (where the files are is [`Home`]'s, re-exported here):
//! built-in defaults < `ENGRAM_HOME/config.toml` < `ENGRAM_*` environment variables.
//!
//! An environment variable overrides the top-level setting of the same name in upper case
//! (`ENGRAM_W_RELEVANCE=0.7`, `ENGRAM_DYNAMICS=strength`). The environment is passed in,
//! never read here, so tests and servers decide what counts.

use crate::{Error, Result};
use engram_core::Config;
use std::path::Path;

pub use super::home::Home;

/// Settings read, plus the keys the file or environment named that engram does not know.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub unknown_keys: Vec<String>,
    /// `ENGRAM_*` variables that name no setting and no other known variable (likely typos).
    pub unknown_env: Vec<String>,
    /// Seed B's keys and variables read with no counterpart here, one note each (never an
    /// error: a B user's file works unchanged; see `seed_b_config`).
    pub seed_b_notes: Vec<String>,
}

/// `ENGRAM_*` variables that are not settings but are read elsewhere.
pub const NON_SETTING_VARS: &[&str] = &[
    "ENGRAM_HOME",
    "ENGRAM_TEST_MODEL_DIR",
    "ENGRAM_TEST_PYTHON",
    "ENGRAM_LOG",
    // Seed C's: the `serve` port and the server's default project (read by the binary).
    "ENGRAM_PORT",
    "ENGRAM_PROJECT",
    "ENGRAM_DATA_DIR",
    // Seed C's Unix socket for `serve`.
    "ENGRAM_SOCKET",
];

/// Loads the configuration: defaults, then the file (if present), then `ENGRAM_*` variables
/// from `env`. Seed B's keys and variables are read with B's meaning (a `~/` in B's
/// `memories_dir` is expanded from the `HOME` in `env`, else the process's). A file that does not parse, or a value of the wrong type, is an error that
/// names the file and the key; a broken file never silently falls back to defaults.
pub fn load(config_path: &Path, env: &[(String, String)]) -> Result<Loaded> {
    let err = |message: String| Error::Config {
        path: config_path.to_path_buf(),
        message,
    };
    let mut table = toml::Table::try_from(Config::default()).map_err(|e| err(e.to_string()))?;
    let known: Vec<String> = table.keys().cloned().collect();
    let defaults = table.clone();
    let mut unknown_keys = Vec::new();
    let user_home = env
        .iter()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var("HOME").ok());
    let mut seed_b_notes = Vec::new();

    match std::fs::read_to_string(config_path) {
        Ok(text) => {
            let mut file: toml::Table = text
                .parse()
                .map_err(|e: toml::de::Error| err(e.to_string()))?;
            seed_b_notes = super::seed_b_config::translate(&mut file, user_home.as_deref());
            for (k, v) in file {
                if !known.contains(&k) {
                    unknown_keys.push(k.clone());
                }
                match (table.get_mut(&k), v) {
                    (Some(toml::Value::Table(base)), toml::Value::Table(over))
                        if k != "room_paths" =>
                    {
                        base.extend(over);
                    }
                    (_, v) => {
                        table.insert(k, v);
                    }
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(Error::Io {
                path: config_path.to_path_buf(),
                source,
            });
        }
    }

    let mut unknown_env = Vec::new();
    let mut applied_env = Vec::new();
    for (name, raw) in env {
        let Some(mut key) = name.strip_prefix("ENGRAM_").map(str::to_ascii_lowercase) else {
            continue;
        };
        if let Some((_, why)) = super::seed_b_config::ENV_IGNORED
            .iter()
            .find(|(b, _)| *b == name.as_str())
        {
            seed_b_notes.push(format!(
                "{name} (seed B) is accepted and not acted on: {why}"
            ));
            continue;
        }
        if let Some((_, ours)) = super::seed_b_config::ENV_RENAMED
            .iter()
            .find(|(b, _)| *b == name.as_str())
        {
            let engram_name = format!("ENGRAM_{}", ours.to_ascii_uppercase());
            if env.iter().any(|(k, _)| *k == engram_name) {
                continue; // engram's own variable wins
            }
            key = ours.to_string();
        }
        if !known.contains(&key) || matches!(table.get(&key), Some(toml::Value::Table(_))) {
            if !NON_SETTING_VARS.contains(&name.as_str()) {
                unknown_env.push(name.clone());
            }
            continue;
        }
        applied_env.push(name.clone());
        if let Some((v, note)) = super::seed_b_config::b_env_value(name, raw) {
            seed_b_notes.extend(note);
            table.insert(key, v);
            continue;
        }
        let text_setting = matches!(defaults.get(&key), Some(toml::Value::String(_)));
        table.insert(key, parse_env_value(raw, text_setting));
    }

    let origin = if applied_env.is_empty() {
        String::new()
    } else {
        format!(" (with {} from the environment)", applied_env.join(", "))
    };
    let config: Config = table
        .try_into()
        .map_err(|e: toml::de::Error| err(format!("{e}{origin}")))?;
    config
        .validate()
        .map_err(|e| err(format!("setting {e}{origin}")))?;
    Ok(Loaded {
        config,
        unknown_keys,
        unknown_env,
        seed_b_notes,
    })
}

/// An environment value as TOML: for a text setting (a token, a path, a name) the text as
/// it is, even when it reads as a number (an all-digit `ENGRAM_HTTP_TOKEN` was refused as
/// an integer); otherwise a number or boolean when it reads as one, else a string.
fn parse_env_value(raw: &str, text_setting: bool) -> toml::Value {
    let t = raw.trim();
    if text_setting {
        return toml::Value::String(t.to_string());
    }
    if let Ok(i) = t.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if let Ok(f) = t.parse::<f64>() {
        return toml::Value::Float(f);
    }
    match t {
        "true" => toml::Value::Boolean(true),
        "false" => toml::Value::Boolean(false),
        _ => toml::Value::String(t.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engram_core::dynamics::DynamicsModel;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn a_text_setting_from_the_environment_stays_text_even_when_it_reads_as_a_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let loaded = load(
            &path,
            &env(&[("ENGRAM_HTTP_TOKEN", "12345678901234567890")]),
        )
        .unwrap();
        assert_eq!(loaded.config.http_token, "12345678901234567890");
    }

    #[test]
    fn precedence_defaults_file_env() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let none = load(&path, &[]).unwrap();
        assert_eq!(none.config, Config::default());

        std::fs::write(
            &path,
            "w_relevance = 0.5\ndynamics = \"strength\"\nmystery = 1\n[room_paths]\n\"/work/app\" = \"app\"\n[actr]\ncenter = -5.0\n",
        )
        .unwrap();
        let file = load(&path, &[]).unwrap();
        assert_eq!(file.config.w_relevance, 0.5);
        assert_eq!(file.config.dynamics, DynamicsModel::Strength);
        assert_eq!(file.config.room_paths.get("/work/app").unwrap(), "app");
        assert_eq!(file.config.actr.center, -5.0);
        assert_eq!(
            file.config.actr.scale, 1.5,
            "unset nested keys keep their defaults"
        );
        assert_eq!(file.unknown_keys, vec!["mystery"]);

        let both = load(
            &path,
            &env(&[
                ("ENGRAM_W_RELEVANCE", "0.7"),
                ("ENGRAM_HOME", "/x"),
                ("OTHER", "1"),
                ("ENGRAM_W_RELEVENCE", "1"),
            ]),
        )
        .unwrap();
        assert_eq!(
            both.unknown_env,
            vec!["ENGRAM_W_RELEVENCE"],
            "typos are reported, known variables are not"
        );
        assert_eq!(both.config.w_relevance, 0.7);
        let int = load(&path, &env(&[("ENGRAM_W_RELEVANCE", "1")])).unwrap();
        assert_eq!(
            int.config.w_relevance, 1.0,
            "integers are accepted where floats are expected"
        );
    }

    #[test]
    fn seed_b_file_loads_with_b_meaning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "auto_episode_importance = 3\nembed_model = \"intfloat/multilingual-e5-small\"\nmemories_dir = \"~/notes\"\nskill_nudge = true\n",
        )
        .unwrap();
        let l = load(
            &path,
            &env(&[("HOME", "/u"), ("ENGRAM_EMBED_BACKEND", "onnx")]),
        )
        .unwrap();
        assert_eq!(l.config.hooks.auto_episode_importance, 0.3);
        assert_eq!(l.config.model, "intfloat/multilingual-e5-small");
        assert_eq!(l.config.vault_dir, "/u/notes");
        assert!(
            l.unknown_keys.is_empty() && l.unknown_env.is_empty(),
            "{l:?}"
        );
        assert_eq!(l.seed_b_notes.len(), 1, "{:?}", l.seed_b_notes);
        assert!(l.seed_b_notes[0].contains("ENGRAM_EMBED_BACKEND"));
        let l = load(&path, &env(&[("ENGRAM_EMBED_MODEL", "none")])).unwrap();
        assert_eq!(l.config.model, "none", "B's variable overrides the file");
    }

    #[test]
    fn broken_file_and_bad_values_are_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "w_relevance = [").unwrap();
        let e = load(&path, &[]).unwrap_err().to_string();
        assert!(e.contains("config.toml"), "{e}");

        std::fs::write(&path, "w_relevance = 3.0").unwrap();
        let e = load(&path, &[]).unwrap_err().to_string();
        assert!(e.contains("w_relevance"), "{e}");

        std::fs::write(&path, "").unwrap();
        let e = load(&path, &env(&[("ENGRAM_DYNAMICS", "quantum")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("quantum") || e.contains("dynamics"), "{e}");
    }
}
