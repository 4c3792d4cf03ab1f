//! OpenCode, as seed C's installer sets it up: `opencode.jsonc` (preferred when present) or
//! `opencode.json` in OpenCode's config folder (`$XDG_CONFIG_HOME/opencode`, else
//! `~/.config/opencode`) gets `"mcp": {"engram": {"type": "local", "command": [...],
//! "enabled": true}}`, and `plugins/engram.ts` is a plugin that runs engram's hooks (the
//! briefing at session start and after compaction, prompts, session end). `--remove` takes
//! away exactly those two things; a plugin file engram did not write is never touched.

use super::{Change, Refusal, edit, plan_file};
use anyhow::bail;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// The first line of the plugin engram writes: how `--remove` knows the file is its own.
const PLUGIN_MARK: &str = "// engram: written by `engram setup opencode`";

pub fn config_dir(home: &Path) -> PathBuf {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"))
        .join("opencode")
}

/// `opencode.jsonc` when it exists (C prefers it), else `opencode.json`.
pub fn config_file(home: &Path) -> PathBuf {
    let dir = config_dir(home);
    let jsonc = dir.join("opencode.jsonc");
    if jsonc.is_file() {
        jsonc
    } else {
        dir.join("opencode.json")
    }
}

fn plugin_file(home: &Path) -> PathBuf {
    config_dir(home).join("plugins").join("engram.ts")
}

/// OpenCode's MCP entry: the command and its arguments as one list.
pub fn mcp_entry(exe: &str, args: &[&str]) -> Value {
    let mut command = vec![exe.to_string()];
    command.extend(args.iter().map(|a| a.to_string()));
    json!({ "type": "local", "command": command, "enabled": true })
}

/// The registered command's program, for doctor.
pub fn registered_command(text: Option<&str>) -> anyhow::Result<Option<String>> {
    let doc = parse(text)?;
    Ok(doc
        .get("mcp")
        .and_then(|m| m.get("engram"))
        .and_then(|e| e.get("command"))
        .and_then(|c| c.get(0))
        .and_then(Value::as_str)
        .map(str::to_string))
}

/// JSONC as JSON: `//` and `/* */` comments outside strings removed (as C's installer
/// does); the result must be a JSON object.
fn parse(text: Option<&str>) -> anyhow::Result<Map<String, Value>> {
    let stripped = text.map(strip_comments);
    edit::parse_json(stripped.as_deref())
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// Registers (or removes) `mcp.engram`, keeping every other key.
fn edit_config(
    old: Option<&str>,
    has_backup: bool,
    entry: Value,
    remove: bool,
) -> anyhow::Result<Option<String>> {
    let mut doc = parse(old)?;
    let before = doc.clone();
    if remove {
        if let Some(mcp) = doc.get_mut("mcp") {
            let Some(servers) = mcp.as_object_mut() else {
                bail!("`mcp` is not a JSON object")
            };
            servers.remove("engram");
            if servers.is_empty() {
                doc.remove("mcp");
            }
        }
    } else {
        let servers = doc
            .entry("mcp".to_string())
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .ok_or_else(|| anyhow::anyhow!("`mcp` is not a JSON object"))?;
        servers.insert("engram".into(), entry);
    }
    if old.is_some() && doc == before {
        return Ok(old.map(str::to_string));
    }
    Ok(edit::render_json(doc, has_backup))
}

/// The plugin: each OpenCode event runs `engram hook` with the event's JSON on stdin and
/// reads back the context engram gives (the same hooks as every other client's).
fn plugin_text(exe: &str, seed_c: bool) -> String {
    let tools = if seed_c {
        ", \"--tools\", \"compat-c\""
    } else {
        ""
    };
    PLUGIN_TEMPLATE
        .replace("@MARK@", PLUGIN_MARK)
        .replace("@ENGRAM@", &serde_json::to_string(exe).expect("a string"))
        .replace("@TOOLS@", tools)
}

/// The plugin's text, its placeholders filled by [`plugin_text`].
const PLUGIN_TEMPLATE: &str = r#"@MARK@; `engram setup opencode --remove` deletes it.
// Each event runs `engram hook <event>` with the event's JSON on stdin; the hook always
// exits 0 and prints at most one JSON line whose additionalContext goes to the model.

const ENGRAM = @ENGRAM@;

async function hook(event: string, input: Record<string, unknown>): Promise<string> {
  try {
    const proc = Bun.spawn([ENGRAM, "hook", event, "--agent", "opencode"@TOOLS@], {
      stdin: "pipe", stdout: "pipe", stderr: "ignore",
    });
    proc.stdin.write(JSON.stringify(input));
    proc.stdin.end();
    const out = await new Response(proc.stdout).text();
    await proc.exited;
    return out.trim() ? JSON.parse(out).hookSpecificOutput?.additionalContext ?? "" : "";
  } catch {
    return "";
  }
}

export const EngramPlugin = async ({ directory }: { directory: string }) => {
  const briefings = new Map<string, string>();
  return {
    event: async ({ event }: { event: { type: string; properties?: any } }) => {
      const id = event.properties?.info?.id ?? event.properties?.sessionID;
      if (event.type === "session.created" && id) {
        briefings.set(id, await hook("session-start", { session_id: id, cwd: directory, source: "startup" }));
      }
      if (event.type === "session.deleted" && id) {
        await hook("session-end", { session_id: id, cwd: directory });
      }
    },
    "chat.message": async (input: { sessionID?: string }, output: { parts?: Array<{ type: string; text?: string }> }) => {
      const prompt = (output.parts ?? []).filter((p) => p.type === "text").map((p) => p.text ?? "").join("\n");
      if (prompt) await hook("user-prompt-submit", { session_id: input.sessionID, cwd: directory, prompt });
    },
    "experimental.chat.system.transform": async (input: { sessionID?: string }, output: { system: string[] }) => {
      const text = input.sessionID ? briefings.get(input.sessionID) : undefined;
      if (text) output.system.push(text);
    },
    "experimental.session.compacting": async (input: { sessionID: string }, output: { context: string[] }) => {
      const text = await hook("session-start", { session_id: input.sessionID, cwd: directory, source: "compact" });
      if (text) output.context.push(text);
    },
  };
};
"#;

/// Plans OpenCode's two files.
pub fn plan(
    changes: &mut Vec<Change>,
    refusals: &mut Vec<Refusal>,
    home: &Path,
    exe: &str,
    (entry, seed_c): (Value, bool),
    remove: bool,
    profile_note: &str,
) {
    let verb = if remove { "unregister" } else { "register" };
    plan_file(
        changes,
        refusals,
        "opencode",
        config_file(home),
        format!("{verb} MCP server `engram`{profile_note}"),
        move |old, has_backup| edit_config(old, has_backup, entry, remove),
    );
    let text = plugin_text(exe, seed_c);
    let what = if remove {
        "remove plugin engram.ts"
    } else {
        "plugin engram.ts (runs engram's hooks)"
    };
    plan_file(
        changes,
        refusals,
        "opencode",
        plugin_file(home),
        what.into(),
        move |old, _| {
            let ours = old.is_none_or(|t| t.starts_with(PLUGIN_MARK));
            match (remove, ours) {
                (true, true) => Ok(None),
                (true, false) => Ok(old.map(str::to_string)),
                (false, true) => Ok(Some(text)),
                (false, false) => bail!("is not engram's plugin (no `{PLUGIN_MARK}` line)"),
            }
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_go_and_strings_stay() {
        let t = "{\n // a comment\n \"a\": \"x // not a comment\", /* block */ \"b\": 1\n}";
        let doc = parse(Some(t)).unwrap();
        assert_eq!(doc["a"], "x // not a comment");
        assert_eq!(doc["b"], 1);
    }

    #[test]
    fn config_round_trips() {
        let entry = mcp_entry("/bin/engram", &["mcp"]);
        let old = "{\"theme\": \"dark\"}\n";
        let added = edit_config(Some(old), false, entry.clone(), false)
            .unwrap()
            .unwrap();
        assert_eq!(
            edit_config(Some(&added), true, entry.clone(), false)
                .unwrap()
                .as_deref(),
            Some(added.as_str())
        );
        let removed = edit_config(Some(&added), true, entry, true)
            .unwrap()
            .unwrap();
        assert_eq!(parse(Some(&removed)).unwrap(), parse(Some(old)).unwrap());
    }
}
