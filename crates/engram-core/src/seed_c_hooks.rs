//! Seed C's hook decisions, pure: which `mem_*` call the Codex `PreToolUse` hook binds to
//! the host session (and how), and the first-prompt ToolSearch bootstrap text.
//!
//! C's contract: for the write and session tools, the Codex host session is resolved to a
//! verified engram session id, passed as `session_id` to writes and as `id` to session
//! start/end. The agent never invents or overrides that id; an unverifiable host session or
//! a malformed input refuses the mutating call. Read-only tools pass untouched.

use serde_json::Value;

/// The prefixes a client puts before an MCP tool's name (`mcp__<server>__<tool>`): engram's
/// own registration and C's Claude Code plugin's.
const PREFIXES: [&str; 2] = ["mcp__engram__", "mcp__plugin_engram_engram__"];

/// C's writes, bound by `session_id`.
const BY_SESSION_ID: [&str; 4] = [
    "mem_save",
    "mem_save_prompt",
    "mem_session_summary",
    "mem_capture_passive",
];
/// C's session lifecycle tools, bound by `id`.
const BY_ID: [&str; 2] = ["mem_session_start", "mem_session_end"];

/// The tools the bootstrap asks the agent to load (C's non-deferred core set).
const CORE_TOOLS: [&str; 9] = [
    "mem_save",
    "mem_search",
    "mem_context",
    "mem_session_summary",
    "mem_get_observation",
    "mem_save_prompt",
    "mem_current_project",
    "mem_judge",
    "mem_compare",
];

/// The matcher C's Codex plugin registers `PreToolUse` with.
pub const CODEX_PRE_TOOL_USE_MATCHER: &str = "mcp__engram__mem_*|mcp__plugin_engram_engram__mem_*";

/// What the `PreToolUse` hook does with one tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// Not one of C's tools, or a read-only one: no decision, the call goes as it is.
    Pass,
    /// Allowed with `field` set to the verified id (the call's input, rewritten).
    Bind { field: &'static str, input: Value },
    /// Refused, with the reason the agent is shown.
    Refuse(String),
}

/// The bare `mem_*` name of a tool as the client names it, if it is one of engram's.
pub fn mem_tool(tool_name: &str) -> Option<&str> {
    let bare = PREFIXES
        .iter()
        .find_map(|p| tool_name.strip_prefix(p))
        .unwrap_or(tool_name);
    bare.starts_with("mem_").then_some(bare)
}

/// Decides one call: `host` is the Codex session the hook was told about, `registered`
/// whether engram knows it (its SessionStart hook recorded it).
pub fn bind(tool_name: &str, tool_input: &Value, host: Option<&str>, registered: bool) -> Binding {
    let Some(tool) = mem_tool(tool_name) else {
        return Binding::Pass;
    };
    let field = if BY_SESSION_ID.contains(&tool) {
        "session_id"
    } else if BY_ID.contains(&tool) {
        "id"
    } else {
        return Binding::Pass;
    };
    let Some(args) = tool_input.as_object() else {
        return Binding::Refuse(format!(
            "{tool}: the call's input is not a JSON object; engram refuses a write it cannot bind to this Codex session"
        ));
    };
    let Some(host) = host.map(str::trim).filter(|h| !h.is_empty()) else {
        return Binding::Refuse(format!(
            "{tool}: Codex did not name its session, so engram cannot bind this write to a verified session; restart the session (or run `engram setup codex`)"
        ));
    };
    if !registered {
        return Binding::Refuse(format!(
            "{tool}: Codex session {host:?} is not registered with engram (its SessionStart hook did not run); restart the session (or run `engram setup codex`) instead of inventing an id"
        ));
    }
    match args.get(field) {
        None | Some(Value::Null) => {}
        Some(Value::String(given)) if given == host => {}
        Some(given) => {
            return Binding::Refuse(format!(
                "{tool}: `{field}` {given} is not this Codex session's engram id {host:?}; omit `{field}` (the hook binds it) or pass {host:?}"
            ));
        }
    }
    let mut input = args.clone();
    input.insert(field.to_string(), Value::String(host.to_string()));
    Binding::Bind {
        field,
        input: Value::Object(input),
    }
}

/// C's first-prompt bootstrap: Claude Code defers MCP tools behind ToolSearch, so the agent
/// is told to load the memory tools first (under both names C's installs use).
pub fn tool_search_bootstrap() -> String {
    let names: Vec<String> = PREFIXES
        .iter()
        .rev()
        .flat_map(|p| CORE_TOOLS.iter().map(move |t| format!("{p}{t}")))
        .collect();
    format!(
        "CRITICAL FIRST ACTION - Execute this ToolSearch NOW, before anything else, so the memory tools are loaded: ToolSearch with query \"select:{}\". Then call mem_context to recover earlier sessions, and use mem_save after each decision, fix or discovery.",
        names.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn binds_writes_and_sessions_and_passes_reads() {
        assert_eq!(mem_tool("mcp__engram__mem_save"), Some("mem_save"));
        assert_eq!(
            mem_tool("mcp__plugin_engram_engram__mem_search"),
            Some("mem_search")
        );
        assert_eq!(mem_tool("mcp__other__save"), None);
        assert_eq!(
            bind(
                "mcp__engram__mem_search",
                &json!({"query": "x"}),
                None,
                false
            ),
            Binding::Pass
        );
        assert_eq!(
            bind("Bash", &json!({"command": "ls"}), Some("s"), true),
            Binding::Pass
        );
        let Binding::Bind { field, input } = bind(
            "mcp__engram__mem_save",
            &json!({"title": "t", "content": "c"}),
            Some("host-1"),
            true,
        ) else {
            panic!("bound")
        };
        assert_eq!(field, "session_id");
        assert_eq!(input["session_id"], "host-1");
        assert_eq!(input["title"], "t");
        let Binding::Bind { field, input } = bind(
            "mcp__engram__mem_session_end",
            &json!({"id": "host-1"}),
            Some("host-1"),
            true,
        ) else {
            panic!("bound")
        };
        assert_eq!((field, input["id"].as_str()), ("id", Some("host-1")));
    }

    #[test]
    fn refuses_what_it_cannot_verify() {
        let refused = |b: Binding| matches!(b, Binding::Refuse(_));
        assert!(refused(bind(
            "mcp__engram__mem_save",
            &json!({}),
            None,
            true
        )));
        assert!(refused(bind(
            "mcp__engram__mem_save",
            &json!({}),
            Some("h"),
            false
        )));
        assert!(refused(bind(
            "mcp__engram__mem_save",
            &json!("text"),
            Some("h"),
            true
        )));
        let Binding::Refuse(why) = bind(
            "mcp__engram__mem_save",
            &json!({"session_id": "made-up"}),
            Some("h"),
            true,
        ) else {
            panic!("refused")
        };
        assert!(why.contains("made-up") && why.contains("\"h\""), "{why}");
    }

    #[test]
    fn bootstrap_names_both_spellings() {
        let t = tool_search_bootstrap();
        assert!(t.starts_with("CRITICAL FIRST ACTION - Execute this ToolSearch NOW"));
        assert!(t.contains("select:mcp__plugin_engram_engram__mem_save,"));
        assert!(t.contains(",mcp__engram__mem_save,"));
    }
}
