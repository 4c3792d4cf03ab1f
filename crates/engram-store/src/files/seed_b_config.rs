//! Seed B's `config.toml` keys read with B's meaning, so a B user's file works unchanged:
//! importances on B's 1–10 scale are converted to 0–1, `memories_dir` becomes the vault
//! folder (B's Markdown files are the vault's format), `embed_model` names the model.
//! Keys with no counterpart in engram are listed, never an error. Pure over TOML tables.

/// B's keys whose value is an importance on its 1–10 scale (engram's is 0–1).
const TENTHS: &[&str] = &["auto_episode_importance", "correction_min_importance"];

/// B's keys engram does not act on, and why (shown once by the CLI and by `doctor`).
const NO_COUNTERPART: &[(&str, &str)] = &[
    (
        "data_dir",
        "ENGRAM_HOME decides where engram keeps its files",
    ),
    (
        "embed_backend",
        "engram embeds in-process (candle); there is no ONNX/torch choice",
    ),
    ("query_prefix", "prefixes come from the model's own files"),
    ("doc_prefix", "prefixes come from the model's own files"),
    (
        "dup_threshold",
        "duplicates are decided by the resolution bands ([resolution])",
    ),
    (
        "consolidate_cluster_sim",
        "consolidate_cosine (calibrated units) sets the clusters",
    ),
    ("skill_cluster_sim", "skill clusters use consolidate_cosine"),
    (
        "skill_min_count",
        "a skill cluster has at least three members",
    ),
    (
        "decay_base",
        "B hard-wired it too; engram's decay follows each kind's class",
    ),
    (
        "decay_spread",
        "B hard-wired it too; engram's decay follows each kind's class",
    ),
    (
        "decay_min",
        "B hard-wired it too; engram's decay follows each kind's class",
    ),
    (
        "decay_max",
        "B hard-wired it too; engram's decay follows each kind's class",
    ),
];

/// B's keys renamed: B's name → engram's (`[actr]` keys as `actr.<key>`).
const RENAMED: &[(&str, &str)] = &[
    ("embed_model", "model"),
    ("memories_dir", "vault_dir"),
    ("min_elapsed_seconds", "actr.min_elapsed_seconds"),
    ("create_alpha", "actr.create_alpha"),
];

/// B's environment variables that name a setting: variable → engram's key.
pub(crate) const ENV_RENAMED: &[(&str, &str)] = &[
    ("ENGRAM_EMBED_MODEL", "model"),
    ("ENGRAM_MEMORIES_DIR", "vault_dir"),
];

/// B's environment variables engram accepts without acting on them, and why (said once by
/// the CLI, listed by `doctor`; never a warning or an error: B's client entries set them).
pub(crate) const ENV_IGNORED: &[(&str, &str)] = &[
    (
        "ENGRAM_DATA_DIR",
        "ENGRAM_HOME decides where engram keeps its files",
    ),
    (
        "ENGRAM_EMBED_BACKEND",
        "engram embeds in-process (candle); there is no ONNX/torch choice",
    ),
];

/// B's variables that are engram settings too, read as B read them so that a value B took
/// never fails engram: `ENGRAM_PRELOAD` (an unknown mode is B's `auto`) and
/// `ENGRAM_IDLE_UNLOAD_SEC` (seconds, fractions rounded; ≤ 0 never unloads; garbage is B's
/// 600). Returns the value for the setting and, when B's rule replaced the text, a note.
pub(crate) fn b_env_value(name: &str, raw: &str) -> Option<(toml::Value, Option<String>)> {
    let t = raw.trim();
    match name {
        "ENGRAM_PRELOAD" => {
            let mode = t.to_ascii_lowercase();
            Some(
                if engram_core::config::PRELOAD_MODES.contains(&mode.as_str()) {
                    (toml::Value::String(mode), None)
                } else {
                    let note =
                        format!("ENGRAM_PRELOAD={t:?} is not a mode; read as seed B did: auto");
                    (toml::Value::String("auto".into()), Some(note))
                },
            )
        }
        "ENGRAM_IDLE_UNLOAD_SEC" => Some(match t.parse::<f64>() {
            Ok(v) if v.is_finite() => (toml::Value::Integer(v.max(0.0).round() as i64), None),
            _ => {
                let note = format!(
                    "ENGRAM_IDLE_UNLOAD_SEC={t:?} is not a number; read as seed B did: 600"
                );
                (toml::Value::Integer(600), Some(note))
            }
        }),
        _ => None,
    }
}

/// Rewrites B's keys in a parsed file in place into engram's, returning one note per B key
/// that has no counterpart. An engram key set in the same file wins over B's spelling.
/// `user_home` expands a leading `~/` in `memories_dir` (B wrote `~/.engram/memories`).
pub(crate) fn translate(file: &mut toml::Table, user_home: Option<&str>) -> Vec<String> {
    let mut notes = Vec::new();
    for key in TENTHS {
        if let Some(v) = file.get_mut(*key)
            && let Some(tenths) = b_scale(v)
        {
            *v = toml::Value::Float(tenths);
        }
    }
    for (b, ours) in RENAMED {
        let Some(mut v) = file.remove(*b) else {
            continue;
        };
        if *b == "memories_dir"
            && let (toml::Value::String(s), Some(h)) = (&mut v, user_home)
            && let Some(rest) = s.strip_prefix("~/")
        {
            *s = format!("{}/{rest}", h.trim_end_matches('/'));
        }
        // B's folder stays in B's format, for B on another machine and tools keyed on
        // B's front matter (unless the file says otherwise).
        if *b == "memories_dir" {
            file.entry("vault_format".to_string())
                .or_insert(toml::Value::String("b".into()));
        }
        match ours.split_once('.') {
            Some((table, key)) => {
                let t = file
                    .entry(table.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                if let toml::Value::Table(t) = t {
                    t.entry(key.to_string()).or_insert(v);
                }
            }
            None => {
                file.entry(ours.to_string()).or_insert(v);
            }
        }
    }
    for (k, why) in NO_COUNTERPART {
        if file.remove(*k).is_some() {
            notes.push(format!("{k} (seed B) has no counterpart: {why}"));
        }
    }
    notes
}

/// An importance written on B's scale: an integer 1–10, or a number above 1 up to 10.
fn b_scale(v: &toml::Value) -> Option<f64> {
    match v {
        toml::Value::Integer(i) if (1..=10).contains(i) => Some(*i as f64 / 10.0),
        toml::Value::Float(f) if *f > 1.0 && *f <= 10.0 => Some(f / 10.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b_keys_take_b_meaning() {
        let mut t: toml::Table = r#"
auto_episode_importance = 3
correction_min_importance = 7
embed_model = "intfloat/multilingual-e5-small"
memories_dir = "~/.engram/memories"
query_prefix = "query: "
dup_threshold = 0.95
min_elapsed_seconds = 30.0
"#
        .parse()
        .unwrap();
        let notes = translate(&mut t, Some("/home/u"));
        assert_eq!(t["auto_episode_importance"].as_float(), Some(0.3));
        assert_eq!(t["correction_min_importance"].as_float(), Some(0.7));
        assert_eq!(t["model"].as_str(), Some("intfloat/multilingual-e5-small"));
        assert_eq!(t["vault_dir"].as_str(), Some("/home/u/.engram/memories"));
        assert_eq!(
            t["vault_format"].as_str(),
            Some("b"),
            "B's folder stays B's"
        );
        assert_eq!(t["actr"]["min_elapsed_seconds"].as_float(), Some(30.0));
        assert!(!t.contains_key("query_prefix") && !t.contains_key("embed_model"));
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes.iter().any(|n| n.starts_with("dup_threshold")));
    }

    #[test]
    fn engram_spellings_win_and_engram_scales_stay() {
        let mut t: toml::Table =
            "model = \"none\"\nembed_model = \"x\"\nauto_episode_importance = 0.4\n"
                .parse()
                .unwrap();
        assert!(translate(&mut t, None).is_empty());
        assert_eq!(t["model"].as_str(), Some("none"));
        assert_eq!(t["auto_episode_importance"].as_float(), Some(0.4));
    }
}
