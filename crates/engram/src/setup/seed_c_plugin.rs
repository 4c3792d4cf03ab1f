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
    let granted = grant_engram_tools(doc, remove, backup);
    if targets.is_empty() {
        return Ok(granted);
    }
    let plugins = doc
        .get_mut("enabledPlugins")
        .and_then(Value::as_object_mut)
        .context("`enabledPlugins` is not a JSON object")?;
    for key in &targets {
        plugins.insert(key.clone(), Value::Bool(remove));
    }
    Ok(targets.into_iter().chain(granted).collect())
}

/// The prefix of the plugin's tool names in Claude Code's permission rules
/// (`mcp__plugin_<plugin>_<server>__<tool>`).
const PLUGIN_TOOLS: &str = "mcp__plugin_engram_";

/// The rule for engram's own server that a rule for C's plugin server grants:
/// `mcp__plugin_engram_engram__mem_save` → `mcp__engram__mem_save` (and the server-wide
/// `mcp__plugin_engram_engram` → `mcp__engram`).
fn engram_rule(plugin_rule: &str) -> Option<String> {
    let rest = plugin_rule.strip_prefix(PLUGIN_TOOLS)?;
    Some(match rest.split_once("__") {
        Some((_, tool)) => format!("mcp__engram__{tool}"),
        None => "mcp__engram".to_string(),
    })
}

/// The user allowed C's plugin tools without asking (`permissions.allow`); with the plugin
/// off, the same tools come from the `engram` server under other names, and each call
/// would ask again. Setup allows those names too; `--remove` takes away the ones the file
/// did not have before setup first changed it. Returns the rules added or removed.
fn grant_engram_tools(
    doc: &mut Map<String, Value>,
    remove: bool,
    backup: Option<&str>,
) -> Vec<String> {
    let Some(allow) = doc
        .get_mut("permissions")
        .and_then(|p| p.get_mut("allow"))
        .and_then(Value::as_array_mut)
    else {
        return Vec::new();
    };
    let rules: Vec<String> = allow
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let wanted: Vec<String> = rules.iter().filter_map(|r| engram_rule(r)).collect();
    if remove {
        let before: Vec<String> = parse(backup)
            .and_then(|d| d.get("permissions")?.get("allow")?.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let gone: Vec<String> = wanted
            .into_iter()
            .filter(|w| rules.contains(w) && !before.contains(w))
            .collect();
        allow.retain(|v| !v.as_str().is_some_and(|r| gone.iter().any(|g| g == r)));
        return gone;
    }
    let mut added = Vec::new();
    for w in wanted {
        if !rules.contains(&w) && !added.contains(&w) {
            allow.push(Value::String(w.clone()));
            added.push(w);
        }
    }
    added
}

/// What the plan says about the plugin for this file, empty when nothing changes.
pub fn note(settings_text: Option<&str>, remove: bool, backup: Option<&str>) -> String {
    let mut doc = parse(settings_text).unwrap_or_default();
    let changed = edit(&mut doc, remove, backup).unwrap_or_default();
    let (rules, plugins): (Vec<String>, Vec<String>) =
        changed.into_iter().partition(|k| k.starts_with("mcp__"));
    let rules = if rules.is_empty() {
        String::new()
    } else if remove {
        format!(
            "; drop the permission rules setup added ({})",
            rules.join(", ")
        )
    } else {
        format!(
            "; allow {} as C's plugin tools were allowed",
            rules.join(", ")
        )
    };
    let plugins = match (plugins.is_empty(), remove) {
        (true, _) => String::new(),
        (false, false) => format!(
            "; disable seed C's plugin {} (its hooks would brief every session twice)",
            plugins.join(", ")
        ),
        (false, true) => format!("; re-enable seed C's plugin {}", plugins.join(", ")),
    };
    format!("{plugins}{rules}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_plugins_allowed_tools_are_allowed_under_engrams_server_and_removed_again() {
        let before = json!({"enabledPlugins": {"engram@engram": true},
            "permissions": {"allow": ["Bash(ls)", "mcp__plugin_engram_engram__mem_save",
                                      "mcp__plugin_engram_engram__mem_search"]}});
        let mut d = doc(before.clone());
        let changed = edit(&mut d, false, None).unwrap();
        assert!(
            changed.contains(&"mcp__engram__mem_save".to_string()),
            "{changed:?}"
        );
        let allow = d["permissions"]["allow"].clone();
        assert!(
            allow
                .as_array()
                .unwrap()
                .contains(&json!("mcp__engram__mem_search"))
        );
        assert_eq!(
            edit(&mut d, false, None).unwrap(),
            Vec::<String>::new(),
            "once"
        );
        let backup = before.to_string();
        edit(&mut d, true, Some(&backup)).unwrap();
        assert_eq!(
            d["permissions"], before["permissions"],
            "remove takes them away"
        );
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
