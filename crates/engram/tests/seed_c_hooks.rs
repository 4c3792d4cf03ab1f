//! Seed C's hooks and setup through the built binary: the Codex `PreToolUse` session
//! binding of `mem_*` calls, the first-prompt ToolSearch bootstrap, Codex SessionEnd, and
//! OpenCode's setup (`--dry-run` and `--remove` symmetric).

mod support;

use serde_json::{Value, json};
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use support::command;

/// Runs `engram hook <args>` with `input` on stdin; the parsed stdout line, if any.
fn hook(home: &Path, args: &[&str], input: Value) -> Option<Value> {
    let mut child = command(home)
        .arg("hook")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "a hook always exits 0");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.lines().count() <= 1, "at most one line: {text}");
    (!text.trim().is_empty()).then(|| serde_json::from_str(text.trim()).expect("JSON"))
}

/// The prompts saved in session `id`, in order.
fn prompts_of(home: &Path, id: &str) -> Vec<String> {
    let db = rusqlite::Connection::open(home.join("engram.db")).unwrap();
    db.prepare("SELECT content FROM prompts WHERE session_id = ?1 ORDER BY id")
        .unwrap()
        .query_map([id], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn session_row(home: &Path, id: &str) -> Option<(String, Option<String>)> {
    let db = rusqlite::Connection::open(home.join("engram.db")).unwrap();
    db.query_row(
        "SELECT room, ended_at FROM sessions WHERE id = ?1",
        [id],
        |r| {
            Ok((
                r.get(0)?,
                r.get::<_, Option<i64>>(1)?.map(|t| t.to_string()),
            ))
        },
    )
    .ok()
}

#[test]
fn codex_pre_tool_use_binds_mem_writes_to_the_host_session() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let proj = dir.path().join("shop");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(proj.join(".engram")).unwrap();
    std::fs::write(
        proj.join(".engram/config.json"),
        r#"{"project_name": "shop"}"#,
    )
    .unwrap();
    let c = ["--agent", "codex", "--tools", "compat-c"];
    let pre = |input: Value| {
        hook(
            &home,
            &[
                "codex-pre-tool-use",
                "--agent",
                "codex",
                "--tools",
                "compat-c",
            ],
            input,
        )
    };

    // Before the session is known, a write is refused and a read passes.
    let refused = pre(json!({"session_id": "host-1", "cwd": proj,
        "tool_name": "mcp__engram__mem_save", "tool_input": {"title": "t", "content": "c"}}))
    .expect("a decision");
    assert_eq!(refused["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(refused["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert!(
        pre(
            json!({"session_id": "host-1", "tool_name": "mcp__engram__mem_search",
            "tool_input": {"query": "x"}})
        )
        .is_none(),
        "a read passes with no decision"
    );

    // Session start records the host session; then writes are bound to it.
    let mut start: Vec<&str> = vec!["session-start"];
    start.extend(c);
    hook(
        &home,
        &start,
        json!({"session_id": "host-1", "cwd": proj, "source": "startup"}),
    );
    let (room, ended) = session_row(&home, "host-1").expect("the host session is recorded");
    assert_eq!((room.as_str(), ended), ("shop", None));
    let bound = pre(json!({"session_id": "host-1", "cwd": proj,
        "tool_name": "mcp__engram__mem_save", "tool_input": {"title": "t", "content": "c"}}))
    .unwrap();
    let out = &bound["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "allow", "{bound}");
    assert_eq!(
        out["updatedInput"],
        json!({"title": "t", "content": "c", "session_id": "host-1"})
    );
    let bound = pre(json!({"session_id": "host-1",
        "tool_name": "mcp__plugin_engram_engram__mem_session_end", "tool_input": {}}))
    .unwrap();
    assert_eq!(bound["hookSpecificOutput"]["updatedInput"]["id"], "host-1");
    // An id the agent made up is never overwritten: the call is refused, naming both.
    let refused = pre(
        json!({"session_id": "host-1", "tool_name": "mcp__engram__mem_save",
        "tool_input": {"title": "t", "content": "c", "session_id": "made-up"}}),
    )
    .unwrap();
    let why = refused["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert_eq!(refused["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(why.contains("made-up") && why.contains("host-1"), "{why}");
    // A malformed input is refused too.
    let refused = pre(
        json!({"session_id": "host-1", "tool_name": "mcp__engram__mem_save",
        "tool_input": "not an object"}),
    )
    .unwrap();
    assert_eq!(refused["hookSpecificOutput"]["permissionDecision"], "deny");

    // Codex SessionEnd closes the session.
    let mut end: Vec<&str> = vec!["session-end"];
    end.extend(c);
    assert!(hook(&home, &end, json!({"session_id": "host-1", "cwd": proj})).is_none());
    assert!(session_row(&home, "host-1").unwrap().1.is_some(), "ended");
}

#[test]
fn first_prompt_gets_the_tool_search_bootstrap_and_prompts_are_saved() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let args = [
        "user-prompt-submit",
        "--agent",
        "claude",
        "--tools",
        "compat-c",
    ];
    let first = hook(
        &home,
        &args,
        json!({"session_id": "s-9", "cwd": dir.path(), "prompt": "add a login page"}),
    )
    .expect("the bootstrap");
    let out = &first["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "UserPromptSubmit");
    let ctx = out["additionalContext"].as_str().unwrap();
    assert!(
        ctx.starts_with("CRITICAL FIRST ACTION - Execute this ToolSearch NOW"),
        "{ctx}"
    );
    assert!(ctx.contains("mcp__engram__mem_save"), "{ctx}");
    let second = hook(
        &home,
        &args,
        json!({"session_id": "s-9", "cwd": dir.path(), "prompt": "now the logout page"}),
    );
    let again = second
        .as_ref()
        .and_then(|v| v["hookSpecificOutput"]["additionalContext"].as_str())
        .unwrap_or("");
    assert!(!again.contains("CRITICAL FIRST ACTION"), "once per session");
    // Without C's profile, engram's own hook gives no bootstrap.
    let plain = hook(
        &home,
        &["user-prompt-submit"],
        json!({"session_id": "s-10", "cwd": dir.path(), "prompt": "a new session"}),
    );
    assert!(
        !plain
            .map(|v| v.to_string())
            .unwrap_or_default()
            .contains("ToolSearch")
    );
    let prompts = prompts_of(&home, "s-9");
    assert_eq!(prompts, ["add a login page", "now the logout page"]);
}

fn setup(home: &Path, user: &Path, args: &[&str]) -> (bool, String) {
    let out = command(home)
        .env("HOME", user)
        .env("XDG_CONFIG_HOME", user.join(".config"))
        .env("PATH", "/nonexistent")
        .arg("setup")
        .args(args)
        .args(["--non-interactive", "--no-model"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn codex_setup_registers_cs_hooks_and_removes_them() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(user.join(".codex")).unwrap();
    std::fs::write(
        user.join(".codex/engram-instructions.md"),
        "Call mem_save after every decision.\n",
    )
    .unwrap();
    let (ok, out) = setup(&home, &user, &["codex"]);
    assert!(ok, "{out}");
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(user.join(".codex/hooks.json")).unwrap())
            .unwrap();
    let pre = &hooks["hooks"]["PreToolUse"][0];
    assert_eq!(
        pre["matcher"],
        "mcp__engram__mem_*|mcp__plugin_engram_engram__mem_*"
    );
    let cmd = pre["hooks"][0]["command"].as_str().unwrap();
    assert!(
        cmd.ends_with("hook codex-pre-tool-use --agent codex --tools compat-c"),
        "{cmd}"
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "SubagentStop",
        "SessionEnd",
    ] {
        let cmd = hooks["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{event}: {hooks}"));
        assert!(cmd.ends_with("--tools compat-c"), "{event}: {cmd}");
    }
    let (ok, out) = setup(&home, &user, &["codex", "--remove"]);
    assert!(ok, "{out}");
    let left = std::fs::read_to_string(user.join(".codex/hooks.json")).unwrap_or_default();
    assert!(
        !left.contains("engram"),
        "every hook engram added goes: {left}"
    );
}

/// A C user's `~/.codex/hooks.json` holds C's plugin scripts (session-start.sh,
/// post-compaction.sh, …) beside a hook of the user's own. Setup takes C's scripts out
/// (engram's hooks do their work; both would brief each session twice), keeps the user's,
/// and `--remove` puts C's back. Before, C's scripts stayed beside engram's hooks.
#[test]
fn codex_setup_takes_over_cs_hook_scripts_and_remove_puts_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(user.join(".codex")).unwrap();
    std::fs::write(
        user.join(".codex/engram-instructions.md"),
        "Call mem_save after every decision.\n",
    )
    .unwrap();
    let script = |name: &str| json!({"type": "command", "command": format!("bash ~/.codex/plugins/engram/scripts/{name}.sh"), "timeout": 10});
    let mine = json!({"type": "command", "command": "notify-send started"});
    let original = json!({"hooks": {
        "SessionStart": [
            {"matcher": "startup|resume|clear", "hooks": [script("session-start"), mine.clone()]},
            {"matcher": "compact", "hooks": [script("post-compaction")]}
        ],
        "UserPromptSubmit": [{"hooks": [script("user-prompt-submit")]}],
        "SubagentStop": [{"matcher": ".*", "hooks": [script("subagent-stop")]}],
        "SessionEnd": [{"hooks": [script("session-end")]}],
        "PreToolUse": [{"matcher": "mcp__engram__mem_*", "hooks": [{"type": "command", "command": "engram hook codex-pre-tool-use"}]}]
    }});
    std::fs::write(user.join(".codex/hooks.json"), original.to_string()).unwrap();
    // C's own server entry (C's binary has engram's name).
    let c_toml = "model = \"o3\"\n\n[mcp_servers.engram]\ncommand = \"engram\"\nargs = [\"mcp\", \"--tools=agent\"]\n";
    std::fs::write(user.join(".codex/config.toml"), c_toml).unwrap();
    let (ok, out) = setup(&home, &user, &["codex"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("seed C's 5 hook script(s) taken over"),
        "{out}"
    );
    let text = std::fs::read_to_string(user.join(".codex/hooks.json")).unwrap();
    assert!(!text.contains(".sh"), "C's scripts are gone: {text}");
    assert!(
        text.contains("notify-send started"),
        "the user's hook stays: {text}"
    );
    let hooks: Value = serde_json::from_str(&text).unwrap();
    let starts: Vec<&str> = hooks["hooks"]["SessionStart"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["hooks"].as_array().unwrap())
        .filter_map(|h| h["command"].as_str())
        .filter(|c| c.contains(" hook "))
        .collect();
    assert_eq!(starts.len(), 1, "one briefing at session start: {text}");
    // Idempotent: a second run changes nothing.
    let (ok, out) = setup(&home, &user, &["codex"]);
    assert!(ok, "{out}");
    assert_eq!(
        std::fs::read_to_string(user.join(".codex/hooks.json")).unwrap(),
        text
    );
    let (ok, out) = setup(&home, &user, &["codex", "--remove"]);
    assert!(ok, "{out}");
    let back: Value =
        serde_json::from_str(&std::fs::read_to_string(user.join(".codex/hooks.json")).unwrap())
            .unwrap();
    let back_text = back.to_string();
    for name in [
        "session-start",
        "post-compaction",
        "user-prompt-submit",
        "subagent-stop",
        "session-end",
    ] {
        assert!(back_text.contains(&format!("{name}.sh")), "{name}: {back}");
    }
    assert!(
        !back_text.contains(env!("CARGO_BIN_EXE_engram")),
        "engram's hooks are gone: {back}"
    );
    assert!(back_text.contains("notify-send started"), "{back}");
    // C's own hook and server entry come back too (tester-c).
    assert!(
        back_text.contains("engram hook codex-pre-tool-use"),
        "{back}"
    );
    let toml_back = std::fs::read_to_string(user.join(".codex/config.toml")).unwrap();
    assert!(
        toml_back.contains(
            "[mcp_servers.engram]\ncommand = \"engram\"\nargs = [\"mcp\", \"--tools=agent\"]"
        ),
        "{toml_back}"
    );
    assert!(toml_back.contains("model = \"o3\""), "{toml_back}");
}

/// `engram doctor --json` under `user`'s home: the status and detail of row `check`.
fn doctor_row(home: &Path, user: &Path, check: &str) -> Option<(String, String)> {
    let out = command(home)
        .env("HOME", user)
        .env("PATH", "/nonexistent")
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout).expect("doctor --json");
    let rows = d["rows"].as_array().cloned().unwrap_or_default();
    rows.iter().find(|r| r["check"] == check).map(|r| {
        (
            r["status"].as_str().unwrap().to_string(),
            r["detail"].as_str().unwrap().to_string(),
        )
    })
}

#[test]
fn claude_setup_disables_cs_plugin_and_remove_turns_it_back_on() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(user.join(".claude")).unwrap();
    let settings = user.join(".claude/settings.json");
    let original = json!({
        "enabledPlugins": {"engram@engram": true, "other@market": true},
        "permissions": {"allow": ["mcp__plugin_engram_engram__mem_save"]},
    });
    std::fs::write(&settings, original.to_string()).unwrap();
    let (status, detail) = doctor_row(&home, &user, "claude: seed C plugin").expect("a row");
    assert_eq!(status, "NG", "{detail}");
    assert!(detail.contains("engram@engram"), "{detail}");

    let (ok, out) = setup(&home, &user, &["claude", "--dry-run"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("disable seed C's plugin engram@engram"),
        "the plan says so: {out}"
    );
    let (ok, out) = setup(&home, &user, &["claude"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("profile compat-c"),
        "C's plugin taught mem_*: {out}"
    );
    let now: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(now["enabledPlugins"]["engram@engram"], false);
    assert_eq!(now["enabledPlugins"]["other@market"], true);
    let cmd = now["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(cmd.ends_with("--tools compat-c"), "{cmd}");
    let (status, _) = doctor_row(&home, &user, "claude: seed C plugin").unwrap();
    assert_eq!(status, "OK");
    // A second run keeps C's profile (the plugin is still installed, only off).
    let (ok, out) = setup(&home, &user, &["claude"]);
    assert!(ok && out.contains("profile compat-c"), "{out}");

    let (ok, out) = setup(&home, &user, &["claude", "--remove"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("re-enable seed C's plugin engram@engram"),
        "{out}"
    );
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(back, original, "the user's settings as they were");
}

#[test]
fn opencode_setup_dry_run_apply_and_remove() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    let oc = user.join(".config/opencode");
    std::fs::create_dir_all(&oc).unwrap();
    let original = "{\n  // the user's theme\n  \"theme\": \"dark\"\n}\n";
    std::fs::write(oc.join("opencode.jsonc"), original).unwrap();
    std::fs::write(oc.join("AGENTS.md"), "Use mem_search before work.\n").unwrap();

    let (ok, out) = setup(&home, &user, &["opencode", "--dry-run"]);
    assert!(ok, "{out}");
    assert!(out.contains("would be"), "{out}");
    assert_eq!(
        std::fs::read_to_string(oc.join("opencode.jsonc")).unwrap(),
        original
    );
    assert!(
        !oc.join("plugins/engram.ts").exists(),
        "a dry run writes nothing"
    );

    let (ok, out) = setup(&home, &user, &["opencode"]);
    assert!(ok, "{out}");
    assert!(out.contains("profile compat-c"), "{out}");
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(oc.join("opencode.jsonc")).unwrap()).unwrap();
    assert_eq!(cfg["theme"], "dark");
    let entry = &cfg["mcp"]["engram"];
    assert_eq!(
        (entry["type"].as_str(), entry["enabled"].as_bool()),
        (Some("local"), Some(true))
    );
    let command: Vec<&str> = entry["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(&command[1..], ["mcp", "--tools=compat-c"]);
    assert!(Path::new(command[0]).is_file(), "the binary's path");
    let plugin = std::fs::read_to_string(oc.join("plugins/engram.ts")).unwrap();
    assert!(plugin.starts_with("// engram: written by `engram setup opencode`"));
    assert!(plugin.contains(&serde_json::to_string(command[0]).unwrap()));
    assert!(plugin.contains("\"--tools\", \"compat-c\""), "{plugin}");
    assert!(
        oc.join("opencode.jsonc.engram.bak").is_file(),
        "the original kept"
    );
    // Idempotent: a second run changes nothing.
    let (ok, out) = setup(&home, &user, &["opencode", "--dry-run"]);
    assert!(ok && out.contains("0 files would change"), "{out}");

    // --dry-run --remove says what would go; --remove takes exactly that away.
    let (ok, out) = setup(&home, &user, &["opencode", "--remove", "--dry-run"]);
    assert!(ok && out.contains("would be removed"), "{out}");
    assert!(oc.join("plugins/engram.ts").exists());
    let (ok, out) = setup(&home, &user, &["opencode", "--remove"]);
    assert!(ok, "{out}");
    assert!(!oc.join("plugins/engram.ts").exists());
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(oc.join("opencode.jsonc")).unwrap()).unwrap();
    assert_eq!(cfg, json!({"theme": "dark"}));
    assert_eq!(
        std::fs::read_to_string(oc.join("AGENTS.md")).unwrap(),
        "Use mem_search before work.\n",
        "C's instructions are never touched"
    );

    // A plugin file engram did not write is refused, not replaced.
    std::fs::create_dir_all(oc.join("plugins")).unwrap();
    std::fs::write(oc.join("plugins/engram.ts"), "export const Mine = 1;\n").unwrap();
    let (ok, out) = setup(&home, &user, &["opencode"]);
    assert!(!ok && out.contains("is not engram's plugin"), "{out}");
    assert_eq!(
        std::fs::read_to_string(oc.join("plugins/engram.ts")).unwrap(),
        "export const Mine = 1;\n"
    );
}

/// A prompt over the content limit is saved whole, as consecutive prompts of its session
/// (a capture path never refuses or cuts), and with `logs/` a symbolic link out of the
/// home nothing is written through it.
#[test]
fn a_long_prompt_is_saved_in_parts_and_no_log_goes_through_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, home.join("logs")).unwrap();
    let args = [
        "user-prompt-submit",
        "--agent",
        "codex",
        "--tools",
        "compat-c",
    ];
    let paragraph = "Please review the retry logic in the uploader module.\n\n";
    let long = paragraph.repeat(100_000 / paragraph.len() + 1);
    assert!(long.len() > engram_core::limits::MAX_CONTENT_BYTES);
    hook(
        &home,
        &args,
        json!({"session_id": "s-long", "cwd": dir.path(), "prompt": long}),
    );
    // Garbage input is logged: here it must not land behind the link.
    let mut child = command(&home)
        .args(["hook", "user-prompt-submit"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"not json").unwrap();
    assert!(child.wait().unwrap().success());
    let parts = prompts_of(&home, "s-long");
    assert!(parts.len() >= 2, "{} parts", parts.len());
    assert_eq!(parts.concat(), long, "the parts are exactly the prompt");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "something was written through the link"
    );
}

/// A log file planted as a link to a file outside the home is not appended to, and a
/// transcript that is not a regular file (`/dev/zero`) is refused and logged instead of
/// read without end.
#[test]
fn a_linked_log_file_is_left_alone_and_a_device_transcript_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("logs")).unwrap();
    let outside = dir.path().join("outside.log");
    std::fs::write(&outside, "").unwrap();
    std::os::unix::fs::symlink(&outside, home.join("logs/hooks.log")).unwrap();
    let mut child = command(&home)
        .args(["hook", "user-prompt-submit"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"not json").unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "",
        "appended through the link"
    );

    let home2 = dir.path().join("home2");
    std::fs::create_dir_all(&home2).unwrap();
    hook(
        &home2,
        &["session-end"],
        json!({"session_id": "z1", "cwd": dir.path(), "transcript_path": "/dev/zero"}),
    );
    let log = std::fs::read_to_string(home2.join("logs/hooks.log")).unwrap_or_default();
    assert!(log.contains("not a regular file"), "{log}");
}

/// A compat-c client's hooks name C's tools, not engram's: the briefing points to
/// `mem_search`, surfaced memories to `mem_get_observation` and `mem_update` (compat-c
/// serves no recall, reinforce or correct).
#[test]
fn cs_hooks_name_cs_tools() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = command(&home)
        .args([
            "remember",
            "The login page keeps the session in a signed cookie for seven days",
            "--room",
            "common",
            "--kind",
            "decision",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let start = hook(
        &home,
        &["session-start", "--agent", "claude", "--tools", "compat-c"],
        json!({"session_id": "s-1", "cwd": dir.path(), "source": "startup"}),
    )
    .expect("a briefing");
    let text = start.to_string();
    assert!(
        text.contains("Use mem_search for more") && !text.contains("engram's recall"),
        "{text}"
    );
    let said = hook(
        &home,
        &["user-prompt-submit", "--agent", "claude", "--tools", "compat-c"],
        json!({"session_id": "s-1", "cwd": dir.path(), "prompt": "how long does the login page keep the session cookie"}),
    )
    .expect("surfaced");
    let text = said.to_string();
    assert!(
        text.contains("signed cookie") && text.contains("mem_get_observation"),
        "{text}"
    );
    assert!(!text.contains("engram's reinforce"), "{text}");
}
