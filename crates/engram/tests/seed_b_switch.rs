//! Switching from seed B on the first try, through the built binary: `engram setup`
//! registers the `compat-b` profile for a B user (B's tools stay), B's variables are
//! accepted, B's reinforce tolerates an unknown id.

mod support;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use support::{Mcp, command};

/// `engram setup CLIENT --non-interactive --no-model` for the user home `user`.
fn setup(home: &Path, user: &Path, client: &str) -> String {
    let out = command(home)
        .env("HOME", user)
        .env("PATH", "/nonexistent")
        .args(["setup", client, "--non-interactive", "--no-model"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `engram ARGS` on the home `home`, which must succeed; its stdout.
fn run_ok(home: &Path, args: &[&str]) -> String {
    let out = command(home).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn tool_names(m: &mut Mcp) -> Vec<String> {
    let r = m.request("tools/list", json!({}));
    r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// B's installer put `engram-mcp` (with `"args": []` and B's variables) in
/// `~/.claude.json` and `@`-included `MEMORY_PROTOCOL.md` from CLAUDE.md. Setup repoints
/// the entry at engram with B's profile, keeps its `env`, and adds no protocol block of its
/// own (engram's would name `context` and `handoff`, which compat-b does not serve). Before,
/// the entry kept `"args": []`: a bare engram, whose tools lack B's `stats`, `link`, …
#[test]
fn setup_registers_compat_b_for_b_users() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(user.join(".claude")).unwrap();
    let rules = format!(
        "# My rules\nBe terse.\n\n# Memory Protocol (engram)\n\n@{}\n",
        home.join("MEMORY_PROTOCOL.md").display()
    );
    std::fs::write(user.join(".claude/CLAUDE.md"), &rules).unwrap();
    std::fs::write(
        user.join(".claude.json"),
        r#"{"mcpServers":{"engram":{"type":"stdio","command":"/old/venv/bin/engram-mcp","args":[],
            "env":{"ENGRAM_PRELOAD":"background","ENGRAM_IDLE_UNLOAD_SEC":"300"}}}}"#,
    )
    .unwrap();
    let stdout = setup(&home, &user, "claude");
    assert!(stdout.contains("profile compat-b"), "{stdout}");
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(user.join(".claude.json")).unwrap()).unwrap();
    let entry = &cfg["mcpServers"]["engram"];
    assert_eq!(entry["args"], json!(["mcp", "--tools=compat-b"]), "{cfg}");
    assert_eq!(entry["env"]["ENGRAM_PRELOAD"], "background", "{cfg}");
    assert_eq!(
        std::fs::read_to_string(user.join(".claude/CLAUDE.md")).unwrap(),
        rules,
        "B's instructions are left as they are"
    );
    // Doctor counts B's protocol as one (before: "no memory protocol in CLAUDE.md").
    let out = command(&home)
        .env("HOME", &user)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == "claude: instructions")
        .unwrap_or_else(|| panic!("{d}"))
        .clone();
    assert_eq!(row["status"], "OK", "{row}");
    assert!(
        row["detail"].as_str().unwrap().contains("compat-b"),
        "{row}"
    );

    // The server the entry starts serves B's tools.
    let args: Vec<String> = entry["args"].as_array().unwrap()[1..]
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut m = Mcp::start(&home, &args, "claude-code");
    let names = tool_names(&mut m);
    for t in [
        "stats",
        "link",
        "consolidation_candidates",
        "mark_consolidated",
    ] {
        assert!(names.iter().any(|n| n == t), "{t} missing from {names:?}");
    }
    // The schemas name B's arguments (`type`, `corrected_content`), and a call with them
    // works, as B's did.
    let list = m.request("tools/list", json!({}));
    let schema = |name: &str| {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["inputSchema"]
            .clone()
    };
    assert!(schema("remember")["properties"].get("type").is_some());
    assert!(schema("remember")["properties"].get("kind").is_none());
    assert!(
        schema("correct")["properties"]
            .get("corrected_content")
            .is_some()
    );
    assert!(
        schema("correct")["required"]
            .as_array()
            .unwrap()
            .contains(&json!("corrected_content"))
    );
    let made = m.call(
        "remember",
        json!({"content": "The staging database runs on port 5433", "type": "knowledge", "importance": 6}),
    );
    let fixed = m.call(
        "correct",
        json!({"id": made["structuredContent"]["id"], "corrected_content": "The staging database runs on port 5434", "reason": "port moved"}),
    );
    assert_eq!(fixed["structuredContent"]["status"], "corrected", "{fixed}");
    m.finish();

    // No instructions naming B, but B's index in the home: compat-b too.
    std::fs::create_dir_all(user.join(".gemini")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("index.db"), b"").unwrap();
    let stdout = setup(&home, &user, "gemini");
    assert!(stdout.contains("profile compat-b"), "{stdout}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(user.join(".gemini/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["mcpServers"]["engram"]["args"],
        json!(["mcp", "--tools=compat-b"]),
        "{settings}"
    );
    assert!(
        !user.join(".gemini/GEMINI.md").exists(),
        "no engram protocol block naming tools compat-b lacks"
    );
}

/// B's client entries set `ENGRAM_PRELOAD` and `ENGRAM_IDLE_UNLOAD_SEC`: engram's settings
/// of those names (`preload`, `idle_unload_sec`), read as B read them: a value B took never
/// fails a command (garbage is B's default, said in a note), and doctor's config row is
/// not NG. Before, every command warned "not an engram setting" and doctor exited 1.
#[test]
fn b_model_variables_are_settings() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(&home).unwrap();
    let b_env = [
        ("ENGRAM_PRELOAD", "background"),
        ("ENGRAM_IDLE_UNLOAD_SEC", "300"),
    ];
    let out = command(&home).envs(b_env).args(["stats"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("not an engram setting"), "{stderr}");
    let out = command(&home)
        .envs(b_env)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = d["rows"].as_array().unwrap();
    let config = rows.iter().find(|r| r["check"] == "config").unwrap();
    assert_ne!(config["status"], "NG", "{config}");
    // B's garbage: read as B did (600 s, auto), said once, never an error.
    let garbage = [
        ("ENGRAM_PRELOAD", "eager"),
        ("ENGRAM_IDLE_UNLOAD_SEC", "soon"),
    ];
    let out = command(&home)
        .envs(garbage)
        .args(["stats"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("note: environment: ENGRAM_PRELOAD=")
            && !stderr.contains("config.toml: ENGRAM_"),
        "a variable's note names the environment, not the file: {stderr}"
    );
    let out = command(&home)
        .envs(garbage)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = d["rows"].as_array().unwrap();
    let notes = rows
        .iter()
        .find(|r| r["check"] == "config: seed B keys")
        .unwrap_or_else(|| panic!("{d}"));
    let detail = notes["detail"].as_str().unwrap();
    assert!(
        detail.contains("600") && detail.contains("auto"),
        "{detail}"
    );
    let config = rows.iter().find(|r| r["check"] == "config").unwrap();
    assert_ne!(config["status"], "NG", "{config}");
}

/// B's installer registered `engram-mcp` for Antigravity in
/// `~/.gemini/config/mcp_config.json`. `setup --agents antigravity` repoints that line (with
/// B's profile) and doctor checks that file. Before, the agent name was refused and the
/// file kept pointing at the removed `engram-mcp`.
#[test]
fn setup_repoints_antigravity() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(user.join(".gemini/config")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("MEMORY_PROTOCOL.md"),
        "# Memory Protocol (engram)\n",
    )
    .unwrap();
    let file = user.join(".gemini/config/mcp_config.json");
    std::fs::write(
        &file,
        r#"{"mcpServers":{"engram":{"command":"/gone/venv/bin/engram-mcp"},"other":{"command":"foo"}}}"#,
    )
    .unwrap();
    let doctor = || {
        let out = command(&home)
            .env("HOME", &user)
            .env("PATH", "/nonexistent")
            .args(["doctor", "--json"])
            .output()
            .unwrap();
        let d: Value = serde_json::from_slice(&out.stdout).unwrap();
        d["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == "antigravity: MCP server")
            .cloned()
            .unwrap_or_else(|| panic!("no antigravity row: {d}"))
    };
    assert_eq!(doctor()["status"], "NG", "the stale engram-mcp is seen");
    let stdout = setup(&home, &user, "--agents=antigravity");
    assert!(stdout.contains("profile compat-b"), "{stdout}");
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        cfg["mcpServers"]["engram"]["command"],
        env!("CARGO_BIN_EXE_engram"),
        "{cfg}"
    );
    assert_eq!(
        cfg["mcpServers"]["engram"]["args"],
        json!(["mcp", "--tools=compat-b"])
    );
    assert_eq!(cfg["mcpServers"]["other"]["command"], "foo");
    let row = doctor();
    assert_eq!(row["status"], "OK", "{row}");
    assert!(
        row["detail"].as_str().unwrap().contains("mcp_config.json"),
        "{row}"
    );
    // Setup with the clients detected: `~/.gemini` holding only Antigravity's `config/`
    // and the `GEMINI.md` B's installer wrote for it is not Gemini CLI, whose settings are
    // not written.
    std::fs::write(
        user.join(".gemini/GEMINI.md"),
        "# Memory Protocol (engram)\n",
    )
    .unwrap();
    let stdout = setup(&home, &user, "--json");
    assert!(!user.join(".gemini/settings.json").exists(), "{stdout}");
}

/// The official MCP Python SDK starts the entry setup wrote for a B user exactly as Claude
/// Code would (`tests/e2e/seed_b_switch.py`): B's tools are served, and `reinforce` with a
/// malformed id among good ones reinforces the others and lists it in `unknown_ids`.
/// Before, the entry served the core tools and the call failed on `"nope"`.
#[test]
fn b_client_line_after_setup_serves_b_to_a_real_client() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var("ENGRAM_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("ENGRAM_TEST_PYTHON is not set: run with scripts/test, which provides the MCP SDK")
    });
    let out = std::process::Command::new(&python)
        .arg(root.join("tests/e2e/seed_b_switch.py"))
        .arg(env!("CARGO_BIN_EXE_engram"))
        .env_remove("ENGRAM_HOME")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}\n{stdout}");
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
}

/// B's CLI verbs `consolidation-candidates`, `skill-candidates` and `mark-consolidated`
/// (B's scheduled consolidation job calls them) run the engine calls of compat-b's tools.
/// Before, each was "unrecognized subcommand".
#[test]
fn b_cli_verbs_run() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("engram-home");
    let run = |args: &[&str]| run_ok(&home, args);
    let id = |out: String| -> String {
        let v: Value = serde_json::from_str(&out).unwrap();
        v["id"].to_string()
    };
    let ep = id(run(&[
        "remember",
        "Session: fixed the flaky login test by pinning the clock",
        "--kind",
        "episode",
        "--json",
    ]));
    let summary = id(run(&[
        "remember",
        "Flaky tests come from unpinned clocks",
        "--json",
    ]));
    for verb in ["consolidation-candidates", "skill-candidates"] {
        let v: Value = serde_json::from_str(&run(&[verb, "--json"])).unwrap();
        assert!(v.is_array(), "{verb}: {v}");
    }
    let done: Value = serde_json::from_str(&run(&[
        "mark-consolidated",
        &ep,
        "--into",
        &summary,
        "--json",
    ]))
    .unwrap();
    assert_eq!(done, json!([ep.parse::<i64>().unwrap()]));
    let shown = run(&["show", &ep]);
    assert!(shown.contains("tier:       archived"), "{shown}");
}

/// B's `engram surface TEXT`: the prompt hook's proactive recall as a dry run. The
/// matching memory is marked surfaced, the other silent, and nothing is written: the
/// store's events are the same before and after, and no hook state or log appears.
#[test]
fn b_surface_verb_is_a_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("engram-home");
    let run = |args: &[&str]| run_ok(&home, args);
    run(&[
        "remember",
        "The staging database password rotates every Monday; ask Dana for the new one",
        "--importance",
        "0.8",
    ]);
    run(&["remember", "Lunch orders go to the shared spreadsheet"]);
    let events =
        |s: String| -> Value { serde_json::from_str::<Value>(&s).unwrap()["events"].clone() };
    let before = events(run(&["stats", "--json"]));
    let v: Value = serde_json::from_str(&run(&[
        "surface",
        "when does the staging database password rotate",
        "--json",
    ]))
    .unwrap();
    let cands = v["candidates"].as_array().unwrap();
    assert!(!cands.is_empty(), "{v}");
    assert_eq!(cands[0]["surfaced"], true, "{v}");
    assert!(
        cands[0]["content"]
            .as_str()
            .unwrap()
            .contains("staging database"),
        "{v}"
    );
    assert!(cands.iter().skip(1).all(|c| c["surfaced"] == false), "{v}");
    let text = run(&["surface", "when does the staging database password rotate"]);
    assert!(text.contains("◎ surfaced"), "{text}");
    assert_eq!(
        events(run(&["stats", "--json"])),
        before,
        "surface wrote events"
    );
    assert!(!home.join("hooks").exists() && !home.join("logs").join("surface.jsonl").exists());
}

/// A B user's setup writes B's `MEMORY_PROTOCOL.md` and `ONBOARDING.md` into the home
/// when they are missing (B's CLAUDE.md `@`-includes the first), and never overwrites one
/// the user has; an engram user without B's traces gets neither.
#[test]
fn setup_writes_b_protocol_files_for_b_users_only() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = user.join(".engram");
    std::fs::create_dir_all(user.join(".claude")).unwrap();
    std::fs::write(
        user.join(".claude").join("CLAUDE.md"),
        "# Memory Protocol (engram)\n\n@~/.engram/MEMORY_PROTOCOL.md\n",
    )
    .unwrap();
    setup(&home, &user, "claude");
    let protocol = std::fs::read_to_string(home.join("MEMORY_PROTOCOL.md")).unwrap();
    for tool in [
        "recall",
        "remember",
        "reinforce",
        "correct",
        "mark_consolidated",
    ] {
        assert!(protocol.contains(tool), "{tool}: {protocol}");
    }
    let onboarding = std::fs::read_to_string(home.join("ONBOARDING.md")).unwrap();
    assert!(onboarding.contains("remember"), "{onboarding}");
    std::fs::write(home.join("ONBOARDING.md"), "my own script").unwrap();
    setup(&home, &user, "claude");
    assert_eq!(
        std::fs::read_to_string(home.join("ONBOARDING.md")).unwrap(),
        "my own script"
    );

    let other = dir.path().join("other");
    let other_home = other.join(".engram");
    std::fs::create_dir_all(&other).unwrap();
    setup(&other_home, &other, "claude");
    assert!(!other_home.join("MEMORY_PROTOCOL.md").exists());
    assert!(!other_home.join("ONBOARDING.md").exists());
}

/// compat-b's `remember` resolves as B did: a near-duplicate reinforces, an elaboration
/// of an existing memory or a contradiction of it is a new memory beside it (B's agents
/// consolidate and correct by their own calls), linked to its `related_ids`. engram's own
/// tools still merge.
#[test]
fn b_remember_never_merges_or_supersedes() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut m = Mcp::start_with(
        &home,
        &["--tools=compat-b"],
        "claude-code",
        &[("ENGRAM_RESOLVE", "true")],
    );
    let first = m.call(
        "remember",
        json!({"content": "The API uses JWT tokens.", "type": "knowledge"}),
    );
    let first_id = first["structuredContent"]["id"].clone();
    // B named memories by their ULID.
    assert!(first_id.as_str().is_some_and(|u| u.len() == 26), "{first}");
    let again = m.call(
        "remember",
        json!({"content": "The API uses JWT tokens.", "type": "knowledge"}),
    );
    assert_eq!(
        again["structuredContent"]["status"], "duplicate_reinforced",
        "{again}"
    );
    let more = m.call(
        "remember",
        json!({"content": "The API uses JWT tokens. They expire after fifteen minutes and refresh silently.",
               "type": "knowledge"}),
    );
    let s = &more["structuredContent"];
    assert_eq!(
        s["status"], "created",
        "an elaboration is not merged: {more}"
    );
    assert_ne!(s["id"], first_id, "{more}");
    let summary = m.call(
        "remember",
        json!({"content": "Auth summary: JWT tokens, fifteen-minute expiry, silent refresh.",
               "type": "knowledge", "importance": 8, "related_ids": [first_id]}),
    );
    let s = &summary["structuredContent"];
    assert_eq!(s["status"], "created", "{summary}");
    assert!(
        s["touched"].as_array().unwrap().contains(&first_id),
        "linked to related_ids: {summary}"
    );
    let contradiction = m.call(
        "remember",
        json!({"content": "The API uses session cookies, not JWT tokens.", "type": "knowledge"}),
    );
    assert_eq!(
        contradiction["structuredContent"]["status"], "created",
        "{contradiction}"
    );
    let r = m.call("reindex", json!({}));
    let r = &r["structuredContent"];
    assert!(
        r["added"].is_u64() && r["removed"].is_u64() && r["unchanged"].is_u64(),
        "B's reindex keys: {r}"
    );
    let hits = m.call("recall", json!({"query": "JWT tokens"}));
    let hit = &hits["structuredContent"]["hits"][0];
    assert!(
        hit["tier"] == "hot" && hit["id"].as_str().is_some_and(|u| u.len() == 26),
        "B's tier name and id: {hits}"
    );
    let stats = m.call("stats", json!({}));
    assert_eq!(
        stats["structuredContent"]["by_tier"]["hot"], 4,
        "nothing superseded: {stats}"
    );
    m.finish();
}

/// B's sentence-transformers backend left its model in `~/.cache/huggingface/hub`:
/// `engram model pull` copies it from there (the hub is unreachable here, so nothing can be
/// downloaded), and the model loads. Before, the hub cache was never read: a B user without
/// network had no model.
#[test]
fn a_model_in_the_hugging_face_cache_is_installed_without_a_download() {
    let user = tempfile::tempdir().unwrap();
    let home = user.path().join(".engram");
    std::fs::create_dir_all(&home).unwrap();
    let snapshot = user.path().join(
        ".cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/0123abcd",
    );
    std::fs::create_dir_all(&snapshot).unwrap();
    let model = std::path::PathBuf::from(support::model_dir());
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(model.join(f), snapshot.join(f)).unwrap();
    }
    let out = command(&home)
        .env("HOME", user.path())
        .env("HF_ENDPOINT", "http://127.0.0.1:9")
        .args(["model", "pull", "all-MiniLM-L6-v2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("copied from the Hugging Face cache"),
        "{stdout}"
    );
    let stats = command(&home)
        .env("HOME", user.path())
        .env("ENGRAM_MODEL", "all-MiniLM-L6-v2")
        .args(["stats", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert!(v.get("search_note").is_none(), "the model loads: {v}");
}
