//! Seed C's own Claude Code plugin (`claude plugin install engram` from C's marketplace).
//! Claude Code lists it in `~/.claude/settings.json` as `enabledPlugins: {"engram@engram":
//! true}`; left on, its hooks brief every session a second time beside engram's. Setup
//! switches it off with Claude Code's own switch (`false`: the plugin stays installed, the
//! user can turn it back on), and `--remove` switches it back on when the `.engram.bak`
//! copy of the file shows it was on before setup first changed the file.

use anyhow::Context;
use serde_json::{Map, Value};

/// A key of `enabledPlugins` naming C's plugin: `engram@<marketplace>` (C's marketplace is
/// called `engram` too; a fork's marketplace has another name, the plugin keeps its own).
pub fn is_seed_c_plugin(key: &str) -> bool {
    key.starts_with("engram@")
}

/// C's plugin keys in a settings document, with whether each is on.
fn entries(doc: &Map<String, Value>) -> Vec<(String, bool)> {
    doc.get("enabledPlugins")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(k, _)| is_seed_c_plugin(k))
        .map(|(k, v)| (k.clone(), v.as_bool() == Some(true)))
        .collect()
}

/// Whether C's plugin is installed (listed, on or off): its hooks taught the agent C's
/// `mem_*` protocol, so the user is a seed C user even with no protocol text in the
/// instructions, and stays one after setup has switched the plugin off.
pub fn installed(settings_text: Option<&str>) -> bool {
    parse(settings_text).is_some_and(|doc| !entries(&doc).is_empty())
}

/// C's plugin keys that are on.
pub fn enabled(settings_text: Option<&str>) -> Vec<String> {
    parse(settings_text)
        .map(|doc| {
            entries(&doc)
                .into_iter()
                .filter(|(_, on)| *on)
                .map(|(k, _)| k)
                .collect()
        })
        .unwrap_or_default()
}

fn parse(text: Option<&str>) -> Option<Map<String, Value>> {
    super::edit::parse_json(text).ok()
}

/// The edit: switches C's plugin off, or with `remove` back on where `backup` (the file
/// before setup first changed it) had it on. Returns the keys it changed.
pub fn edit(
    doc: &mut Map<String, Value>,
    remove: bool,
    backup: Option<&str>,
) -> anyhow::Result<Vec<String>> {
    let targets: Vec<String> = if remove {
        let was_on = enabled(backup);
        entries(doc)
            .into_iter()
            .filter(|(k, on)| !on && was_on.contains(k))
            .map(|(k, _)| k)
            .collect()
    } else {
        entries(doc)
            .into_iter()
            .filter(|(_, on)| *on)
            .map(|(k, _)| k)
            .collect()
    };
    if targets.is_empty() {
        return Ok(targets);
    }
    let plugins = doc
        .get_mut("enabledPlugins")
        .and_then(Value::as_object_mut)
        .context("`enabledPlugins` is not a JSON object")?;
    for key in &targets {
        plugins.insert(key.clone(), Value::Bool(remove));
    }
    Ok(targets)
}

/// What the plan says about the plugin for this file, empty when nothing changes.
pub fn note(settings_text: Option<&str>, remove: bool, backup: Option<&str>) -> String {
    let mut doc = parse(settings_text).unwrap_or_default();
    let changed = edit(&mut doc, remove, backup).unwrap_or_default();
    match (changed.is_empty(), remove) {
        (true, _) => String::new(),
        (false, false) => format!(
            "; disable seed C's plugin {} (its hooks would brief every session twice)",
            changed.join(", ")
        ),
        (false, true) => format!("; re-enable seed C's plugin {}", changed.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn off_then_back_on_only_where_it_was_on() {
        let before = json!({"enabledPlugins": {"engram@engram": true, "other@x": true}});
        let mut d = doc(before.clone());
        assert_eq!(edit(&mut d, false, None).unwrap(), ["engram@engram"]);
        assert_eq!(
            Value::Object(d.clone()),
            json!({"enabledPlugins": {"engram@engram": false, "other@x": true}})
        );
        assert!(edit(&mut d, false, None).unwrap().is_empty(), "idempotent");
        let backup = before.to_string();
        assert_eq!(
            edit(&mut d, true, Some(&backup)).unwrap(),
            ["engram@engram"]
        );
        assert_eq!(Value::Object(d.clone()), before);
        // Switched off by the user before setup: stays off on --remove.
        let mut off = doc(json!({"enabledPlugins": {"engram@engram": false}}));
        let backup = Value::Object(off.clone()).to_string();
        assert!(edit(&mut off, true, Some(&backup)).unwrap().is_empty());
        assert!(installed(Some(&backup)) && enabled(Some(&backup)).is_empty());
    }
}
