//! `engram setup`, `engram doctor` and `engram hook`, driven through the built binary on
//! fixture homes (`HOME` and `ENGRAM_HOME` in temp dirs; the real home is never touched).

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod support;

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    engram: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let engram = dir.path().join("engram-home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&engram).unwrap();
        Fixture {
            _dir: dir,
            home,
            engram,
        }
    }

    fn command(&self) -> Command {
        let mut c = support::clean_engram();
        c.env("HOME", &self.home)
            .env("ENGRAM_HOME", &self.engram)
            .env("ENGRAM_MODEL", "none")
            // No real client CLI on PATH: detection sees only the fixture's directories.
            .env("PATH", "/nonexistent")
            .current_dir(&self.engram);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn hook(&self, args: &[&str], stdin: &[u8]) -> Output {
        self.hook_env(args, stdin, &[])
    }

    fn hook_env(&self, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
        let mut c = self.command();
        c.arg("hook")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let _ = child.stdin.take().unwrap().write_all(stdin);
        child.wait_with_output().unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.home.join(rel)).ok()
    }

    fn json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.read(rel).unwrap()).unwrap()
    }

    /// Every file under HOME and ENGRAM_HOME with its bytes.
    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else {
                    out.insert(p.clone(), std::fs::read(&p).unwrap());
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.home, &mut out);
        walk(&self.engram, &mut out);
        out
    }
}

fn assert_same(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>, what: &str) {
    let keys: std::collections::BTreeSet<&PathBuf> = a.keys().chain(b.keys()).collect();
    let differ: Vec<&&PathBuf> = keys.iter().filter(|k| a.get(**k) != b.get(**k)).collect();
    assert!(differ.is_empty(), "{what}: these files differ: {differ:?}");
}

fn exe() -> String {
    std::fs::canonicalize(env!("CARGO_BIN_EXE_engram"))
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn setup(f: &Fixture, extra: &[&str]) -> (Output, Value) {
    let mut args = vec!["setup", "--non-interactive", "--no-model", "--json"];
    args.extend_from_slice(extra);
    let out = f.run(&args);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "setup stdout not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (out, v)
}

const CODEX_ORIG: &str =
    "# my codex settings\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other-server\"\n";
const CLAUDE_MD_ORIG: &str = "# My rules\n\nAlways be terse.\n";

fn populated() -> Fixture {
    let f = Fixture::new();
    f.write(
        ".claude.json",
        r#"{"numStartups": 3, "mcpServers": {"other": {"command": "other-server", "args": []}}}"#,
    );
    f.write(".claude/settings.json", r#"{"model": "opus", "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "other-tool --check"}]}]}}"#);
    f.write(".claude/CLAUDE.md", CLAUDE_MD_ORIG);
    f.write(".codex/config.toml", CODEX_ORIG);
    f.write(
        ".gemini/settings.json",
        r#"{"theme": "dark", "mcpServers": {"other": {"command": "other-server"}}}"#,
    );
    f.write(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"other": {"url": "http://localhost:9000/mcp"}}}"#,
    );
    f
}

#[test]
fn setup_is_idempotent_keeps_others_and_remove_restores() {
    let f = populated();
    let before = f.snapshot();
    let (out, v) = setup(&f, &["--agents", "claude,codex,gemini,cursor"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(v["errors"].as_array().unwrap().is_empty(), "{v}");
    let exe = exe();

    let claude = f.json(".claude.json");
    assert_eq!(claude["numStartups"], 3);
    assert_eq!(claude["mcpServers"]["other"]["command"], "other-server");
    assert_eq!(claude["mcpServers"]["engram"]["command"], exe.as_str());
    assert_eq!(claude["mcpServers"]["engram"]["args"], json!(["mcp"]));
    let settings = f.json(".claude/settings.json");
    assert_eq!(settings["model"], "opus");
    let ups = settings["hooks"]["UserPromptSubmit"].as_array().unwrap();
    assert_eq!(ups[0]["hooks"][0]["command"], "other-tool --check");
    assert_eq!(
        ups[1]["hooks"][0]["command"],
        format!("\"{exe}\" hook user-prompt-submit --agent claude")
    );
    for ev in ["SessionStart", "SessionEnd", "PreCompact"] {
        assert!(settings["hooks"][ev].is_array(), "{ev}");
    }
    assert!(
        f.read(".claude/CLAUDE.md")
            .unwrap()
            .starts_with(CLAUDE_MD_ORIG)
    );
    assert!(
        f.read(".claude/CLAUDE.md")
            .unwrap()
            .contains("<!-- engram:begin -->")
    );
    let codex = f.read(".codex/config.toml").unwrap();
    assert!(
        codex.starts_with(CODEX_ORIG),
        "comments and order kept: {codex}"
    );
    let parsed: toml::Table = codex.parse().unwrap();
    assert_eq!(
        parsed["mcp_servers"]["engram"]["command"].as_str(),
        Some(exe.as_str())
    );
    assert_eq!(parsed["features"]["codex_hooks"].as_bool(), Some(true));
    assert!(f.json(".codex/hooks.json")["hooks"]["UserPromptSubmit"].is_array());
    assert!(f.read(".codex/AGENTS.md").unwrap().contains("engram"));
    let gemini = f.json(".gemini/settings.json");
    assert_eq!(gemini["theme"], "dark");
    assert_eq!(gemini["mcpServers"]["engram"]["command"], exe.as_str());
    assert!(
        gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .contains("--agent gemini")
    );
    assert!(f.read(".gemini/GEMINI.md").is_some());
    let cursor = f.json(".cursor/mcp.json");
    assert_eq!(
        cursor["mcpServers"]["other"]["url"],
        "http://localhost:9000/mcp"
    );
    assert_eq!(cursor["mcpServers"]["engram"]["command"], exe.as_str());
    assert!(f.engram.join("config.toml").exists());
    assert_eq!(
        f.read(".claude.json.engram.bak").unwrap(),
        String::from_utf8(before[&f.home.join(".claude.json")].clone()).unwrap()
    );

    // Second run: nothing changes, byte for byte.
    let first = f.snapshot();
    let (out, v) = setup(&f, &["--agents", "claude,codex,gemini,cursor"]);
    assert!(out.status.success());
    for c in v["changes"].as_array().unwrap() {
        assert_eq!(c["action"], "unchanged", "{c}");
    }
    assert_same(&f.snapshot(), &first, "a second setup writes nothing");

    // Remove: what engram added goes, the rest is as it was.
    let (out, _) = setup(&f, &["--agents", "claude,codex,gemini,cursor", "--remove"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for rel in [
        ".claude.json",
        ".claude/settings.json",
        ".gemini/settings.json",
        ".cursor/mcp.json",
    ] {
        let orig: Value = serde_json::from_slice(&before[&f.home.join(rel)]).unwrap();
        assert_eq!(f.json(rel), orig, "{rel}");
    }
    assert_eq!(f.read(".claude/CLAUDE.md").unwrap(), CLAUDE_MD_ORIG);
    assert_eq!(
        f.read(".codex/config.toml").unwrap().trim_end(),
        CODEX_ORIG.trim_end()
    );
    for created in [".codex/hooks.json", ".codex/AGENTS.md", ".gemini/GEMINI.md"] {
        assert!(
            f.read(created).is_none(),
            "{created} was engram's alone and is gone"
        );
    }
    // Removing twice changes nothing.
    let after = f.snapshot();
    let (out, _) = setup(&f, &["--agents", "claude,codex,gemini,cursor", "--remove"]);
    assert!(out.status.success());
    assert_same(&f.snapshot(), &after, "a second remove");
}

#[test]
fn setup_detects_clients_repairs_stale_paths_and_refuses_broken_files() {
    let f = Fixture::new();
    f.write(".claude.json", r#"{"mcpServers": {"engram": {"command": "/gone/engram", "args": ["mcp", "--tools", "engineering"]}}}"#);
    f.write(".claude/settings.json", r#"{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "\"/gone/engram\" hook user-prompt", "timeout": 15}]}]}}"#);
    f.write(".cursor/mcp.json", "{ not json");
    // Doctor sees the stale path before setup repairs it.
    let out = f.run(&["doctor", "--json"]);
    assert!(!out.status.success());
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ng: Vec<&str> = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "NG")
        .map(|r| r["check"].as_str().unwrap())
        .collect();
    assert!(
        ng.contains(&"claude: MCP server")
            && ng.contains(&"claude: hooks")
            && ng.contains(&"cursor: MCP server"),
        "{ng:?}"
    );

    let (out, v) = setup(&f, &[]); // detected: claude and cursor (their directories exist)
    assert!(!out.status.success(), "a refused file makes setup fail");
    assert_eq!(v["agents"], json!(["claude", "cursor"]));
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{v}");
    assert!(
        errors[0]["message"].as_str().unwrap().contains("mcp.json"),
        "{v}"
    );
    assert_eq!(
        f.read(".cursor/mcp.json").unwrap(),
        "{ not json",
        "untouched"
    );
    let claude = f.json(".claude.json");
    assert_eq!(
        claude["mcpServers"]["engram"]["command"],
        exe().as_str(),
        "stale path repaired"
    );
    assert_eq!(
        claude["mcpServers"]["engram"]["args"],
        json!(["mcp", "--tools", "engineering"]),
        "hand-set args kept"
    );
    let ups = &f.json(".claude/settings.json")["hooks"]["UserPromptSubmit"];
    assert_eq!(
        ups.as_array().unwrap().len(),
        1,
        "the stale hook is replaced, not doubled"
    );
    assert!(
        ups[0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .contains(&exe())
    );
}

#[test]
fn dry_run_writes_nothing() {
    let f = populated();
    let before = f.snapshot();
    let out = f.run(&[
        "setup",
        "--agents",
        "claude,codex",
        "--dry-run",
        "--no-model",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("would be updated") && text.contains("+ "),
        "{text}"
    );
    assert_same(&f.snapshot(), &before, "dry run");
}

#[test]
fn doctor_fresh_home_ok_and_broken_home_ng() {
    let f = Fixture::new();
    let (out, _) = setup(&f, &["--agents", "claude"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = f.run(&["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(out.status.success(), "{d:#}");
    assert_eq!(d["ok"], true);
    let status = |d: &Value, check: &str| {
        d["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["check"] == check)
            .map(|r| r["status"].as_str().unwrap().to_string())
    };
    for check in [
        "config",
        "store integrity",
        "schema",
        "full-text index",
        "claude: MCP server",
        "claude: hooks",
        "claude: instructions",
    ] {
        assert_eq!(status(&d, check).as_deref(), Some("OK"), "{check}: {d:#}");
    }
    assert_eq!(status(&d, "vault").as_deref(), Some("--"));
    let text = f.run(&["doctor"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("[OK] config"));

    std::fs::write(f.engram.join("config.toml"), "w_relevance = [").unwrap();
    let out = f.run(&["doctor", "--json"]);
    assert!(!out.status.success());
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status(&d, "config").as_deref(), Some("NG"));
    std::fs::write(f.engram.join("config.toml"), "surface_mod = \"active\"\n").unwrap();
    let d: Value = serde_json::from_slice(&f.run(&["doctor", "--json"]).stdout).unwrap();
    assert_eq!(
        status(&d, "config").as_deref(),
        Some("NG"),
        "an unknown key is reported"
    );
    std::fs::remove_file(f.engram.join("config.toml")).unwrap();
    std::fs::create_dir_all(f.engram.join("memories")).unwrap();
    std::fs::write(f.engram.join("memories").join("x.md"), "x").unwrap();
    // A file written by hand and not read in yet is the next command's to read: said,
    // with what happens next, not a fault.
    let d: Value = serde_json::from_slice(&f.run(&["doctor", "--json"]).stdout).unwrap();
    assert_eq!(status(&d, "vault").as_deref(), Some("--"), "{d:#}");
    assert!(d.to_string().contains("1 file(s) new"), "{d:#}");
}

fn assert_hook_contract(out: &Output, what: &str) -> Option<Value> {
    assert!(out.status.success(), "{what}: exit {:?}", out.status.code());
    if out.stdout.is_empty() {
        return None;
    }
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "{what}: one line: {text}");
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}")))
}

#[test]
fn hooks_survive_garbage() {
    let f = Fixture::new();
    let inputs: [&[u8]; 7] = [
        b"",
        b"not json",
        b"[1,2]",
        b"{}",
        b"\xff\xfe{\"prompt\":\"\xff\"}",
        b"{\"prompt\": 42, \"cwd\": [], \"transcript_path\": {}}",
        b"{\"transcript_path\": \"/nonexistent/t.jsonl\", \"session_id\": \"s\"}",
    ];
    for ev in [
        "session-start",
        "user-prompt-submit",
        "session-end",
        "pre-compact",
        "no-such-event",
    ] {
        for agent in ["claude", "codex", "gemini", "bogus"] {
            for input in inputs {
                let out = f.hook(&[ev, "--agent", agent], input);
                assert_hook_contract(&out, &format!("{ev} {agent} {input:?}"));
            }
        }
    }
    assert!(f.run(&["hook"]).status.success(), "missing event: still 0");
    assert!(
        f.run(&["hook", "x", "--what"]).status.success(),
        "bad flag: still 0"
    );
    let log = std::fs::read_to_string(f.engram.join("logs").join("hooks.log")).unwrap();
    assert!(
        log.contains("not JSON") && log.contains("unknown hook event"),
        "{log}"
    );
}

#[test]
fn user_prompt_surfaces_once_per_session() {
    let f = Fixture::new();
    let cwd = f.engram.to_string_lossy().to_string();
    let r = f.run(&[
        "remember",
        "We deploy the billing service with blue-green switches on Kubernetes",
        "--kind",
        "decision",
        "--importance",
        "8",
    ]);
    assert!(r.status.success());
    let input = |sid: &str, prompt: &str| {
        json!({"session_id": sid, "prompt": prompt, "cwd": cwd, "hook_event_name": "UserPromptSubmit"}).to_string()
    };
    let prompt = "how do we deploy the billing service?";
    let v = assert_hook_contract(
        &f.hook(&["user-prompt-submit"], input("s1", prompt).as_bytes()),
        "first",
    )
    .expect("surfaced");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("[1] (decision/") && ctx.contains("blue-green"),
        "{ctx}"
    );
    assert!(
        assert_hook_contract(
            &f.hook(&["user-prompt-submit"], input("s1", prompt).as_bytes()),
            "again"
        )
        .is_none(),
        "never twice in a session"
    );
    let g = assert_hook_contract(
        &f.hook(
            &["before-agent", "--agent", "gemini"],
            input("s2", prompt).as_bytes(),
        ),
        "gemini",
    )
    .unwrap();
    assert_eq!(g["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
    assert!(
        assert_hook_contract(
            &f.hook(
                &["user-prompt-submit"],
                input("s3", "what is the weather like in Paris today").as_bytes()
            ),
            "unrelated"
        )
        .is_none()
    );
    assert!(
        assert_hook_contract(
            &f.hook(&["user-prompt-submit"], input("s3", "/clear").as_bytes()),
            "command"
        )
        .is_none()
    );
    // Shadow: nothing injected, but logged.
    let out = f.hook_env(
        &["user-prompt-submit"],
        input("s4", prompt).as_bytes(),
        &[("ENGRAM_SURFACE_MODE", "shadow")],
    );
    assert!(assert_hook_contract(&out, "shadow").is_none());
    let log = std::fs::read_to_string(f.engram.join("logs").join("surface.jsonl")).unwrap();
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["mode"], "shadow");
    assert_eq!(last["surfaced"], json!([1]));
    let off = f.hook_env(
        &["user-prompt-submit"],
        input("s5", prompt).as_bytes(),
        &[
            ("ENGRAM_SURFACE_MODE", "off"),
            ("ENGRAM_CONSOLIDATE_NUDGE", "false"),
        ],
    );
    assert!(assert_hook_contract(&off, "off").is_none());
    // A prompt of stopwords matches nothing well: nothing is surfaced.
    let stop = f.hook(
        &["user-prompt-submit"],
        input("s6", "the the the of and to a with the").as_bytes(),
    );
    assert!(
        assert_hook_contract(&stop, "stopwords")
            .is_none_or(|v| !v.to_string().contains("proactive recall")),
        "{stop:?}"
    );
    // A secret in the client's session id reaches no state file name, no log, no store.
    let secret = "sid-xoxb-2384729384-9283749283-AbCdEfGhIjKlMnOpQrStUvWx";
    f.hook_env(
        &["user-prompt-submit"],
        input(secret, prompt).as_bytes(),
        &[("ENGRAM_SURFACE_MODE", "shadow")],
    );
    f.hook(&["x-ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"], b"{}");
    let mut stack = vec![f.engram.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = e.path();
            let name = path.to_string_lossy().to_string();
            assert!(
                !name.contains("AbCdEfGh"),
                "a file is named after the secret: {name}"
            );
            if path.is_dir() {
                stack.push(path);
            } else if !name.ends_with(".db") && !name.contains(".db-") {
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_string();
                assert!(!text.contains("AbCdEfGh"), "{name} holds the secret");
                assert!(!text.contains("ghp_A1b2C3d4"), "{name} holds the secret");
            }
        }
    }
}

#[test]
fn session_start_briefs() {
    let f = Fixture::new();
    let cwd = f.engram.to_string_lossy().to_string();
    let input = json!({"session_id": "s", "cwd": cwd, "source": "startup"}).to_string();
    assert!(
        assert_hook_contract(&f.hook(&["session-start"], input.as_bytes()), "empty store")
            .is_none()
    );
    assert!(
        f.run(&[
            "remember",
            "Always run cargo fmt before committing",
            "--kind",
            "preference",
            "--pin"
        ])
        .status
        .success()
    );
    let v = assert_hook_contract(
        &f.hook(&["session-start", "--agent", "codex"], input.as_bytes()),
        "briefing",
    )
    .unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .contains("cargo fmt")
    );
}

fn episodes(f: &Fixture) -> Vec<Value> {
    let out = f.run(&[
        "recall",
        "session",
        "--kind",
        "episode",
        "--mode",
        "exhaustive",
        "--no-record",
        "--room",
        "*",
        "--json",
        "--limit",
        "50",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["hits"].as_array().unwrap().clone()
}

#[test]
fn session_end_encodes_once_and_pre_compact_captures() {
    let f = Fixture::new();
    let transcript = f.engram.join("t.jsonl");
    let lines = [
        json!({"type": "user", "cwd": "/home/me/shop", "message": {"role": "user", "content": "Please move the session cache from Redis to SQLite"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Moved the session cache to SQLite with WAL."}]}}),
        json!({"type": "user", "message": {"role": "user", "content": "and add a test for expiry"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": "Added test_cache_expiry."}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&transcript, body).unwrap();
    let input = json!({"session_id": "abc-123", "transcript_path": transcript, "cwd": f.engram, "reason": "exit"}).to_string();
    for _ in 0..2 {
        let out = f.hook(&["session-end"], input.as_bytes());
        assert!(
            assert_hook_contract(&out, "session-end").is_none(),
            "SessionEnd prints nothing"
        );
    }
    // The episode's vault file is written by the hook itself, before any other command
    // (a synced folder's other machine sees the session when it ends; tester-b).
    let episode_files = walk_md(&f.engram.join("memories"));
    assert_eq!(episode_files.len(), 1, "{episode_files:?}");
    let eps = episodes(&f);
    assert_eq!(eps.len(), 1, "{eps:#?}");
    let content = eps[0]["content"].as_str().unwrap();
    assert!(
        content.starts_with("Session (")
            && content.contains("1. Please move the session cache from Redis to SQLite"),
        "{content}"
    );
    assert!(
        content.contains("Outcome (summary of the last response): Added test_cache_expiry."),
        "{content}"
    );
    assert_eq!(eps[0]["source"], "auto-encode");
    assert_eq!(eps[0]["session_id"], "abc-123");
    assert!(
        eps[0]["tags"]
            .as_array()
            .unwrap()
            .contains(&json!("session"))
    );

    let pc = json!({"session_id": "abc-123", "transcript_path": transcript, "cwd": f.engram, "trigger": "auto"}).to_string();
    for _ in 0..2 {
        assert!(
            assert_hook_contract(&f.hook(&["pre-compact"], pc.as_bytes()), "pre-compact").is_none()
        );
    }
    let eps = episodes(&f);
    assert_eq!(
        eps.len(),
        2,
        "the same capture twice is one memory: {eps:#?}"
    );
    assert!(eps.iter().any(|e| {
        e["content"]
            .as_str()
            .unwrap()
            .starts_with("Before compaction")
    }));
}

/// The Markdown files under `dir`, recursively.
fn walk_md(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out
}
