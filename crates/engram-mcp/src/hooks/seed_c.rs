//! Seed C's hook contracts, for a client whose agent calls C's `mem_*` tools (setup
//! registers these hooks with `--tools compat-c`): the host session recorded at session
//! start and closed at session end (C's `POST /sessions` and `/sessions/{id}/end`), every
//! prompt saved (C's `POST /prompts`) with the ToolSearch bootstrap on a session's first,
//! and the Codex `PreToolUse` binding of `mem_*` writes to the verified session. What each
//! decides is `engram_core::seed_c_hooks`; this file only reads the input and the store.

use super::{Agent, field, log, sanitize, sweep_surface_state, write_atomic};
use engram_core::seed_c_hooks::{self as pure, Binding};
use engram_store::Store;
use engram_store::hub::Origin;
use engram_store::settings::Home;
use serde_json::{Value, json};
use std::path::PathBuf;

fn origin(input: &Value, source: &str) -> Origin {
    Origin {
        room: None,
        cwd: field(input, "cwd").map(PathBuf::from),
        session_id: field(input, "session_id").map(str::to_string),
        source: Some(source.to_string()),
    }
}

/// Records the host session (its id is the engram session id the binding verifies) and,
/// as C's session start does, applies the chunks other machines synced into the
/// repository's `.engram/` (`engram sync --import`) before the briefing is read.
pub(super) fn register_session(
    home: &Home,
    config: engram_core::Config,
    input: &Value,
) -> anyhow::Result<()> {
    let mut store = Store::open(&home.db_path(), config)?;
    if let Some(cwd) = field(input, "cwd") {
        let folder = engram_store::git_sync::folder_for(std::path::Path::new(cwd));
        if folder.join("manifest.json").is_file()
            && let Err(e) = store.sync_import(&folder)
        {
            log(Some(home), "session-start", &format!("sync --import: {e}"));
        }
    }
    if let Some(id) = field(input, "session_id") {
        store.session_start(id, &origin(input, "hook"), field(input, "cwd"))?;
    }
    Ok(())
}

/// Closes the host session if engram knows it and it is still open.
pub(super) fn end_session(
    home: &Home,
    config: engram_core::Config,
    input: &Value,
) -> anyhow::Result<()> {
    let Some(id) = field(input, "session_id") else {
        return Ok(());
    };
    let mut store = Store::open(&home.db_path(), config)?;
    if store.session(id)?.is_some_and(|s| s.ended_at.is_none()) {
        store.session_end(id, None)?;
    }
    Ok(())
}

/// Saves the prompt to the session, and on the session's first prompt in Claude Code
/// returns C's ToolSearch bootstrap (Claude Code defers MCP tools; `additionalContext`
/// reaches the model where a `systemMessage` would not). A prompt that cannot be saved is
/// logged; the bootstrap is still given.
pub(super) fn prompt(
    home: &Home,
    config: engram_core::Config,
    agent: Agent,
    input: &Value,
) -> anyhow::Result<Option<String>> {
    if let Some(prompt) = field(input, "prompt") {
        let saved = Store::open(&home.db_path(), config).and_then(|mut store| {
            store.save_prompt_capture(
                prompt,
                field(input, "session_id"),
                &origin(input, "user-prompt-submit"),
            )
        });
        if let Err(e) = saved {
            log(
                Some(home),
                "user-prompt-submit",
                &format!("prompt not saved: {e}"),
            );
        }
    }
    if agent != Agent::Claude {
        return Ok(None);
    }
    let Some(session) = field(input, "session_id") else {
        return Ok(None);
    };
    let dir = home.root.join("hooks").join("seed-c");
    let marker = dir.join(format!("session-{}", sanitize(session)));
    if marker.exists() {
        return Ok(None);
    }
    // Stamped first: a bootstrap whose stamp cannot be written would repeat on every prompt.
    write_atomic(home, &marker, b"bootstrapped\n")?;
    sweep_surface_state(&dir);
    Ok(Some(pure::tool_search_bootstrap()))
}

/// Codex's `PreToolUse` for `mem_*` calls: C's writes and session tools bound to the host
/// session engram recorded, or refused; anything else passes with no decision.
pub(super) fn pre_tool_use(
    home: &Home,
    config: engram_core::Config,
    input: &Value,
) -> anyhow::Result<Option<super::Output>> {
    let tool = field(input, "tool_name").unwrap_or("");
    let args = input.get("tool_input").cloned().unwrap_or(json!({}));
    let host = field(input, "session_id");
    // Unregistered first: a call that passes either way never opens the store.
    let binding = match pure::bind(tool, &args, host, false) {
        Binding::Pass => return Ok(None),
        Binding::Refuse(_) if host.is_some() && args.is_object() => {
            let store = Store::open(&home.db_path(), config)?;
            let registered = store.session(host.unwrap_or_default())?.is_some();
            pure::bind(tool, &args, host, registered)
        }
        other => other,
    };
    Ok(Some(super::Output::Specific(match binding {
        Binding::Pass => return Ok(None),
        Binding::Bind { field, input } => json!({
            "permissionDecision": "allow",
            "permissionDecisionReason": format!("engram bound `{field}` to this Codex session"),
            "updatedInput": input,
        }),
        Binding::Refuse(why) => json!({
            "permissionDecision": "deny",
            "permissionDecisionReason": why,
        }),
    })))
}
