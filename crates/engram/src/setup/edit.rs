//! Pure edits of client configuration files: each takes the file's current text (`None`
//! when absent) and returns the text it should have (`None`: the file should not exist).
//! Every edit is idempotent: applied to its own output it returns the same bytes.

use anyhow::{Context, bail};
use serde_json::{Map, Value, json};

pub const BEGIN: &str = "<!-- engram:begin -->";
pub const END: &str = "<!-- engram:end -->";
/// Marks a TOML value engram added, so `--remove` takes away only what it put there.
pub const TOML_MARK: &str = " # added by engram setup";

/// An entry counts as engram's own hook if its command names engram and runs `hook`
/// (seed B's rule, so B's hooks are taken over rather than doubled).
pub fn is_our_hook(command: &str) -> bool {
    command.contains("engram") && format!("{command} ").contains(" hook ")
}

/// The scripts seed C's Claude Code and Codex plugins register as hooks. They call C's
/// HTTP API for the briefing, prompts and passive captures, as engram's own hooks do: left
/// beside engram's, every session would be briefed twice and every prompt saved twice.
const SEED_C_HOOK_SCRIPTS: &[&str] = &[
    "session-start.",
    "post-compaction.",
    "user-prompt-submit.",
    "subagent-stop.",
    "subagent_stop.",
    "session-stop.",
    "session-end.",
    "post-tool-use.",
    "pre-tool-use-track.",
    "import-auto-memory.",
];

/// Whether a hook command runs one of seed C's plugin scripts (its path names engram).
pub fn is_seed_c_hook(command: &str) -> bool {
    command.contains("engram") && SEED_C_HOOK_SCRIPTS.iter().any(|s| command.contains(s))
}

fn handler_is_seed_c(h: &Value) -> bool {
    h.get("command")
        .and_then(Value::as_str)
        .is_some_and(is_seed_c_hook)
}

/// A hook that runs seed C's own binary by name (`engram hook codex-pre-tool-use`): engram's
/// setup writes its binary's absolute path, so a bare `engram hook` in the file from before
/// setup was C's, and `--remove` puts it back with C's scripts.
fn handler_is_c_binary(h: &Value) -> bool {
    h.get("command")
        .and_then(Value::as_str)
        .is_some_and(|c| c.trim_start().starts_with("engram hook "))
}

/// Takes seed C's hook scripts out of a hooks file (engram's hooks take their place);
/// returns how many. Groups left empty go, and events left without a group.
pub fn drop_seed_c_hooks(doc: &mut Map<String, Value>) -> usize {
    let Some(hooks) = doc.get_mut("hooks").and_then(Value::as_object_mut) else {
        return 0;
    };
    let mut dropped = 0;
    for groups in hooks.values_mut().filter_map(Value::as_array_mut) {
        for group in groups.iter_mut() {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            let before = list.len();
            list.retain(|h| !handler_is_seed_c(h));
            dropped += before - list.len();
            if before > 0 && list.is_empty() {
                *group = Value::Null;
            }
        }
        groups.retain(|g| !g.is_null());
    }
    hooks.retain(|_, g| g.as_array().is_none_or(|a| !a.is_empty()));
    if hooks.is_empty() {
        doc.remove("hooks");
    }
    dropped
}

/// `--remove`: puts back the seed C hook groups the backup (the file before engram's
/// setup) held, so C's plugin works again as it did. Nothing is added twice.
pub fn restore_seed_c_hooks(doc: &mut Map<String, Value>, backup: &str) -> anyhow::Result<()> {
    let Ok(Value::Object(old)) = serde_json::from_str::<Value>(backup) else {
        return Ok(());
    };
    let Some(old_hooks) = old.get("hooks").and_then(Value::as_object) else {
        return Ok(());
    };
    for (event, groups) in old_hooks {
        for group in groups.as_array().into_iter().flatten() {
            let mut g = group.clone();
            let Some(list) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            list.retain(|h| handler_is_seed_c(h) || handler_is_c_binary(h));
            if list.is_empty() {
                continue;
            }
            let target = object_at(doc, "hooks")?
                .entry(event.clone())
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .with_context(|| format!("`hooks.{event}` is not a JSON array"))?;
            if !target.contains(&g) {
                target.push(g);
            }
        }
    }
    Ok(())
}

/// Parses a JSON config: absent or blank is `{}`; anything but an object is refused.
pub fn parse_json(text: Option<&str>) -> anyhow::Result<Map<String, Value>> {
    let Some(t) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(t).context("does not parse as JSON")? {
        Value::Object(m) => Ok(m),
        _ => bail!("is JSON but not an object"),
    }
}

pub fn render_json(doc: Map<String, Value>, has_backup: bool) -> Option<String> {
    if doc.is_empty() && !has_backup {
        // Nothing left and the file was engram's alone: it goes.
        return None;
    }
    let mut s = serde_json::to_string_pretty(&Value::Object(doc)).expect("serialisable");
    s.push('\n');
    Some(s)
}

fn object_at<'a>(
    doc: &'a mut Map<String, Value>,
    key: &str,
) -> anyhow::Result<&'a mut Map<String, Value>> {
    doc.entry(key.to_string())
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .with_context(|| format!("`{key}` is not a JSON object"))
}

/// Registers (or with `remove`, unregisters) the `engram` MCP server under `mcpServers`.
/// An existing entry keeps its arguments and extra keys; only a different `command` (a
/// stale path) is replaced.
pub fn mcp_json(doc: &mut Map<String, Value>, entry: Value, remove: bool) -> anyhow::Result<()> {
    if remove {
        if let Some(servers) = doc.get_mut("mcpServers") {
            let servers = servers
                .as_object_mut()
                .context("`mcpServers` is not a JSON object")?;
            servers.remove("engram");
            if servers.is_empty() {
                doc.remove("mcpServers");
            }
        }
        return Ok(());
    }
    let servers = object_at(doc, "mcpServers")?;
    match servers.get_mut("engram").and_then(Value::as_object_mut) {
        Some(existing) => {
            // An entry running another program (seed B's `engram-mcp` with `"args": []`):
            // its arguments were that program's, so engram's (with the seed's profile)
            // replace them. An entry running an engram binary, even at a stale path, keeps
            // the arguments its user chose.
            let was_engram = existing
                .get("command")
                .and_then(Value::as_str)
                .and_then(|c| std::path::Path::new(c).file_name())
                .is_some_and(|n| n == "engram");
            if existing.get("command") != entry.get("command") {
                existing.insert("command".into(), entry["command"].clone());
            }
            if !was_engram || !existing.contains_key("args") {
                existing.insert("args".into(), entry["args"].clone());
            }
        }
        None => {
            servers.insert("engram".into(), entry);
        }
    }
    Ok(())
}

/// After `--remove`: the `engram` entry the file held before setup first changed it (seed
/// A's `{"command": "engram"}`, B's `engram-mcp`), read from the `.engram.bak` copy, is put
/// back, so removing engram gives the user's earlier memory server back.
pub fn restore_entry(doc: &mut Map<String, Value>, previous: Option<Value>) -> anyhow::Result<()> {
    if let Some(previous) = previous {
        object_at(doc, "mcpServers")?.insert("engram".into(), previous);
    }
    Ok(())
}

/// One hook to register: the client's event name, the tool matcher its group needs (seed
/// C's Codex `PreToolUse` runs only for `mem_*` calls) and the handler object.
pub struct HookSpec {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    pub handler: Value,
}

/// Installs (or removes) engram's hooks in the `hooks` object shared by Claude Code, Codex
/// and Gemini CLI: `{"hooks": {"Event": [{"matcher"?, "hooks": [{"type": "command", ...}]}]}}`.
/// An existing engram handler is updated in place; other handlers are left alone.
pub fn hooks_json(
    doc: &mut Map<String, Value>,
    specs: &[HookSpec],
    remove: bool,
) -> anyhow::Result<()> {
    if remove && !doc.contains_key("hooks") {
        return Ok(());
    }
    let hooks = object_at(doc, "hooks")?;
    for spec in specs {
        if remove && !hooks.contains_key(spec.event) {
            continue;
        }
        let groups = hooks
            .entry(spec.event.to_string())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .with_context(|| format!("`hooks.{}` is not a JSON array", spec.event))?;
        let mut placed = remove; // when removing, every engram handler goes
        for group in groups.iter_mut() {
            let Some(list) = group.get_mut("hooks").and_then(Value::as_array_mut) else {
                continue;
            };
            let before = list.len();
            list.retain_mut(|h| {
                let ours = h
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(is_our_hook);
                if !ours {
                    return true;
                }
                if placed {
                    return false;
                }
                placed = true;
                if *h != spec.handler {
                    *h = spec.handler.clone();
                }
                true
            });
            if before > 0 && list.is_empty() {
                *group = Value::Null;
            }
        }
        groups.retain(|g| !g.is_null());
        if !placed {
            groups.push(match spec.matcher {
                Some(m) => json!({ "matcher": m, "hooks": [spec.handler.clone()] }),
                None => json!({ "hooks": [spec.handler.clone()] }),
            });
        }
        if groups.is_empty() {
            hooks.remove(spec.event);
        }
    }
    if hooks.is_empty() {
        doc.remove("hooks");
    }
    Ok(())
}

/// Adds, replaces or removes the block between the markers in an instruction file.
pub fn instruction_block(text: Option<&str>, block: &str, remove: bool) -> Option<String> {
    let text = text.unwrap_or("");
    let wrapped = format!("{BEGIN}\n{}\n{END}", block.trim_end());
    let span = text
        .find(BEGIN)
        .and_then(|b| text[b..].find(END).map(|e| (b, b + e + END.len())));
    let out = match (span, remove) {
        (Some((b, e)), false) => format!("{}{wrapped}{}", &text[..b], &text[e..]),
        (Some((b, e)), true) => {
            let rest = text[e..].strip_prefix('\n').unwrap_or(&text[e..]);
            let head = text[..b].trim_end();
            match (head.is_empty(), rest.is_empty()) {
                (true, _) => rest.to_string(),
                (false, true) => format!("{head}\n"),
                (false, false) => format!("{head}\n\n{rest}"),
            }
        }
        (None, false) if text.trim().is_empty() => format!("{wrapped}\n"),
        (None, false) => format!("{}\n\n{wrapped}\n", text.trim_end()),
        (None, true) => text.to_string(),
    };
    if out.trim().is_empty() {
        None
    } else {
        Some(out)
    }
}

/// Whether a trimmed line is a table header (`[x]` or `[[x]]`).
fn is_header(line: &str) -> bool {
    line.trim_start().starts_with('[')
}

/// The table a header line names, without brackets, quotes or spaces (`mcp_servers.engram`).
fn header_name(line: &str) -> String {
    let t = line.trim();
    let t = t.split('#').next().unwrap_or("").trim();
    t.trim_start_matches('[')
        .trim_end_matches(']')
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
        .collect()
}

/// Lines `[start, end)` of a table and its subtables (`name` and `name.*`).
fn table_span(lines: &[&str], name: &str) -> Option<(usize, usize)> {
    let start = lines
        .iter()
        .position(|l| is_header(l) && header_name(l) == name)?;
    let sub = format!("{name}.");
    let end = lines[start + 1..]
        .iter()
        .position(|l| {
            is_header(l) && {
                let h = header_name(l);
                h != name && !h.starts_with(&sub)
            }
        })
        .map(|i| start + 1 + i)
        .unwrap_or(lines.len());
    Some((start, end))
}

/// Index of the line setting `key` directly in the table starting at `start` (before its
/// first subtable), if any.
fn key_line(lines: &[&str], start: usize, end: usize, key: &str) -> Option<usize> {
    (start + 1..end)
        .take_while(|&i| !is_header(lines[i]))
        .find(|&i| {
            let l = lines[i].trim_start();
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
}

fn join(lines: &[String]) -> String {
    let mut out = lines.join("\n");
    while out.ends_with("\n\n") || out.ends_with('\n') {
        out.pop();
    }
    if out.trim().is_empty() {
        String::new()
    } else {
        out + "\n"
    }
}

/// [`codex_toml_args`] with engram's own `args = ["mcp"]` (what the tests pin down).
#[cfg(test)]
pub fn codex_toml(text: Option<&str>, exe: &str, remove: bool) -> anyhow::Result<Option<String>> {
    codex_toml_args(text, exe, remove, &["mcp"], None)
}

/// Codex's `~/.codex/config.toml`: `[mcp_servers.engram]` (with `args`; seed C's users
/// get `["mcp", "--tools=compat-c"]`, and an `args` the block already has is kept) and
/// `[features] codex_hooks`. Edited as text (as seed B does), so comments and layout
/// elsewhere are kept; the input and the result must parse as TOML, else the file is
/// refused.
/// The `[mcp_servers.engram]` table of a Codex config from before setup, when it was
/// another program's (seed C's binary has engram's name): `--remove` puts it back.
pub fn previous_codex_block(backup: &str, exe: &str) -> Option<String> {
    let parsed: toml::Table = backup.parse().ok()?;
    let command = parsed
        .get("mcp_servers")?
        .get("engram")?
        .get("command")?
        .as_str()?;
    if command == exe {
        return None;
    }
    let lines: Vec<&str> = backup.lines().collect();
    let (a, b) = table_span(&lines, "mcp_servers.engram")?;
    Some(lines[a..b].join("\n"))
}

pub fn codex_toml_args(
    text: Option<&str>,
    exe: &str,
    remove: bool,
    args: &[&str],
    previous: Option<&str>,
) -> anyhow::Result<Option<String>> {
    let args_line = format!(
        "args = {}",
        toml::Value::Array(
            args.iter()
                .map(|a| toml::Value::String(a.to_string()))
                .collect()
        )
    );
    let original = text.unwrap_or("");
    let parsed: toml::Table = original.parse().context("does not parse as TOML")?;
    let has_engram = parsed
        .get("mcp_servers")
        .and_then(|s| s.get("engram"))
        .is_some();
    let lines: Vec<&str> = original.lines().collect();
    let span = table_span(&lines, "mcp_servers.engram");
    if has_engram && span.is_none() {
        bail!(
            "`mcp_servers.engram` is not written as a `[mcp_servers.engram]` table; edit it by hand"
        );
    }
    let exe_toml = toml::Value::String(exe.to_string()).to_string();
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    if remove {
        if let Some((a, b)) = span {
            out.drain(a..b);
            // Drop the blank line setup put before the table.
            if a > 0 && a <= out.len() && out[a - 1].trim().is_empty() {
                out.remove(a - 1);
            }
        }
        let marked = out
            .iter()
            .position(|l| l.trim_start().starts_with("codex_hooks") && l.ends_with(TOML_MARK));
        if let Some(i) = marked {
            out.remove(i);
            let refs: Vec<&str> = out.iter().map(String::as_str).collect();
            if let Some((a, b)) = table_span(&refs, "features")
                && refs[a + 1..b].iter().all(|l| l.trim().is_empty())
            {
                out.drain(a..b);
                if a > 0 && a <= out.len() && out[a - 1].trim().is_empty() {
                    out.remove(a - 1);
                }
            }
        }
        // The entry another program had there before setup (seed C's) comes back.
        if let Some(block) = previous {
            if out.last().is_some_and(|l| !l.trim().is_empty()) {
                out.push(String::new());
            }
            out.extend(block.lines().map(str::to_string));
        }
    } else {
        match span {
            Some((a, b)) => {
                let current = parsed["mcp_servers"]["engram"]
                    .get("command")
                    .and_then(|c| c.as_str());
                let cmd_line = key_line(&lines, a, b, "command");
                if current != Some(exe) {
                    match cmd_line {
                        Some(i) => out[i] = format!("command = {exe_toml}"),
                        None => out.insert(a + 1, format!("command = {exe_toml}")),
                    }
                }
                let _ = b;
                if parsed["mcp_servers"]["engram"].get("args").is_none() {
                    let refs: Vec<&str> = out.iter().map(String::as_str).collect();
                    let end = (a + 1..refs.len())
                        .find(|&i| is_header(refs[i]))
                        .unwrap_or(refs.len());
                    let at = key_line(&refs, a, end, "command").map_or(a + 1, |i| i + 1);
                    out.insert(at, args_line.clone());
                }
            }
            None => {
                if out.iter().any(|l| !l.trim().is_empty()) {
                    out.push(String::new());
                }
                out.push("[mcp_servers.engram]".into());
                out.push(format!("command = {exe_toml}"));
                out.push(args_line);
            }
        }
        let has_flag = parsed
            .get("features")
            .and_then(|f| f.get("codex_hooks"))
            .is_some();
        if !has_flag {
            let line = format!("codex_hooks = true{TOML_MARK}");
            let refs: Vec<&str> = out.iter().map(String::as_str).collect();
            match table_span(&refs, "features") {
                Some((a, _)) => out.insert(a + 1, line),
                None => {
                    out.push(String::new());
                    out.push("[features]".into());
                    out.push(line);
                }
            }
        }
    }
    if out.iter().map(String::as_str).eq(lines.iter().copied()) {
        return Ok(text.map(str::to_string));
    }
    let result = join(&out);
    if result == original || (result.is_empty() && original.trim().is_empty()) {
        return Ok(text.map(str::to_string));
    }
    result
        .parse::<toml::Table>()
        .context("would not parse after engram's edit; edit it by hand")?;
    Ok(if result.is_empty() {
        None
    } else {
        Some(result)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_round_trip() {
        let orig = "# My rules\nBe terse.\n";
        let with = instruction_block(Some(orig), "Use engram.", false).unwrap();
        assert_eq!(
            with,
            format!("# My rules\nBe terse.\n\n{BEGIN}\nUse engram.\n{END}\n")
        );
        assert_eq!(
            instruction_block(Some(&with), "Use engram.", false).unwrap(),
            with
        );
        let updated = instruction_block(Some(&with), "Use engram well.", false).unwrap();
        assert!(updated.contains("Use engram well.") && !updated.contains("Use engram.\n"));
        assert_eq!(instruction_block(Some(&with), "", true).unwrap(), orig);
        assert_eq!(
            instruction_block(instruction_block(None, "x", false).as_deref(), "", true),
            None
        );
    }

    #[test]
    fn hooks_keep_others_and_update_in_place() {
        let mut doc = parse_json(Some(
            r#"{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"other-tool"}]},{"hooks":[{"type":"command","command":"\"/old/engram\" hook user-prompt"}]}]}}"#,
        ))
        .unwrap();
        let spec = [HookSpec {
            matcher: None,
            event: "UserPromptSubmit",
            handler: json!({"type":"command","command":"\"/new/engram\" hook user-prompt-submit --agent claude"}),
        }];
        hooks_json(&mut doc, &spec, false).unwrap();
        let once = Value::Object(doc.clone());
        hooks_json(&mut doc, &spec, false).unwrap();
        assert_eq!(Value::Object(doc.clone()), once);
        let groups = once["hooks"]["UserPromptSubmit"].as_array().unwrap();
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0]["hooks"][0]["command"], "other-tool");
        assert!(
            groups[1]["hooks"][0]["command"]
                .as_str()
                .unwrap()
                .contains("/new/engram")
        );
        hooks_json(&mut doc, &spec, true).unwrap();
        assert_eq!(
            Value::Object(doc),
            json!({"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"other-tool"}]}]}})
        );
    }

    #[test]
    fn codex_toml_keeps_comments_and_round_trips() {
        let orig = "# my codex\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other\"\n";
        let once = codex_toml(Some(orig), "/bin/engram", false)
            .unwrap()
            .unwrap();
        assert!(once.starts_with(orig), "{once}");
        assert!(
            once.contains("[mcp_servers.engram]")
                && once.contains("codex_hooks = true # added by engram setup"),
            "{once}"
        );
        assert_eq!(
            codex_toml(Some(&once), "/bin/engram", false)
                .unwrap()
                .unwrap(),
            once
        );
        let stale = once.replace("/bin/engram", "/gone/engram");
        assert_eq!(
            codex_toml(Some(&stale), "/bin/engram", false)
                .unwrap()
                .unwrap(),
            once
        );
        let removed = codex_toml(Some(&once), "/bin/engram", true)
            .unwrap()
            .unwrap();
        assert_eq!(removed, orig);
        assert_eq!(
            codex_toml(None, "/bin/engram", false)
                .unwrap()
                .map(|t| codex_toml(Some(&t), "/x", true).unwrap()),
            Some(None)
        );
        assert!(codex_toml(Some("[broken"), "/x", false).is_err());
        let user_flag = "[features]\ncodex_hooks = false\n";
        let kept = codex_toml(Some(user_flag), "/x", false).unwrap().unwrap();
        assert!(kept.contains("codex_hooks = false"));
        assert!(
            codex_toml(Some(&kept), "/x", true)
                .unwrap()
                .unwrap()
                .contains("codex_hooks = false")
        );
    }
}
