//! A seed B user as found in the wild switches to engram: B's `~/.engram/config.toml`
//! (B's keys and scales), B's Markdown memories under `memories_dir`, B's client line and
//! CLAUDE.md. After `engram setup` every command works, B's memories are recalled and
//! doctor is green. Also B's nudges: clusters counted at session end, consolidation and
//! skill nudges once per interval. The built binary on temp homes.

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod support;

struct BUser {
    _dir: tempfile::TempDir,
    home: PathBuf,
    data: PathBuf,
}

impl BUser {
    fn new(config: &str) -> BUser {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let data = home.join(".engram");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(data.join("config.toml"), config).unwrap();
        BUser {
            _dir: dir,
            home,
            data,
        }
    }

    fn command(&self) -> Command {
        let mut c = support::clean_engram();
        // B's users have no ENGRAM_HOME: B's data_dir is ~/.engram, engram's default too.
        c.env("HOME", &self.home)
            .env("ENGRAM_MAINTENANCE_INTERVAL_HOURS", "0")
            .env("PATH", "/nonexistent")
            .current_dir(&self.home);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn hook(&self, event: &str, input: &Value) -> Output {
        let mut child = self
            .command()
            .args(["hook", event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes());
        child.wait_with_output().unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

const B_CONFIG: &str = r#"# written by B's `engram setup`, then edited by hand
memories_dir = "~/.engram/memories"
embed_model = "intfloat/multilingual-e5-small"
embed_backend = "onnx"
query_prefix = "query: "
doc_prefix = "passage: "
dup_threshold = 0.95
auto_episode_importance = 3
correction_min_importance = 7
consolidate_nudge_min_clusters = 3
skill_nudge = true
skill_min_count = 3
surface_mode = "active"
startup_index_check = "auto"

[room_paths]
"/work/shop" = "shop"
"#;

const B_MEMORY: &str = "---
id: 01HZX3K5Q8M2N4P6R8T0V2W4Y6
type: knowledge
created: '2025-03-01T10:00:00+09:00'
tags:
- deploy
importance: 7
source: claude-code
tier: hot
room: common
links: []
---
Deploys of the shop go out on Tuesdays only, never on Fridays.
";

#[test]
fn seed_b_user_switches_with_nothing_changed() {
    let b = BUser::new(B_CONFIG);
    b.write(
        ".engram/memories/knowledge/20250301-Deploys-of-the-shop-V2W4Y6.md",
        B_MEMORY,
    );
    b.write(
        ".claude.json",
        r#"{"mcpServers": {"engram": {"command": "/old/venv/bin/engram-mcp"}}}"#,
    );
    b.write(
        ".claude/CLAUDE.md",
        "# Mine\n\n# Memory Protocol (engram)\n\n@~/.engram/MEMORY_PROTOCOL.md\n",
    );
    // The model B's config names is not installed here (no network): recall is lexical.
    let out = b.run(&[
        "setup",
        "--agents",
        "claude",
        "--non-interactive",
        "--no-model",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "setup: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let claude: Value =
        serde_json::from_str(&std::fs::read_to_string(b.home.join(".claude.json")).unwrap())
            .unwrap();
    assert_eq!(
        claude["mcpServers"]["engram"]["command"],
        env!("CARGO_BIN_EXE_engram"),
        "B's stale client line now starts engram"
    );
    // B's memory, in B's file format and folder, is recalled.
    let hits: Value =
        serde_json::from_str(&b.ok(&["recall", "deploy Fridays", "--room", "*", "--json"]))
            .unwrap();
    let first = &hits["hits"][0];
    assert!(
        first["content"].as_str().unwrap().contains("Tuesdays"),
        "{hits:#}"
    );
    assert!(
        (first["importance"].as_f64().unwrap() - 0.7).abs() < 1e-9,
        "{first}"
    );
    // B's CLI spellings and 1-10 importances.
    b.ok(&[
        "remember",
        "The shop's CI runs on GitHub Actions",
        "--type",
        "project",
        "--importance",
        "6",
    ]);
    let out = b.run(&["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ng: Vec<&Value> = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "NG")
        .collect();
    assert!(out.status.success() && ng.is_empty(), "{ng:#?}");
    let vault = b.data.join("memories");
    assert!(count_md(&vault) >= 2, "the new memory is a file beside B's");
    // …in B's folder and format: B on another machine reads it (tester-b).
    let projects: Vec<PathBuf> = std::fs::read_dir(vault.join("projects"))
        .expect("B's projects/ folder")
        .map(|e| e.unwrap().path())
        .collect();
    let text = std::fs::read_to_string(&projects[0]).unwrap();
    assert!(
        text.contains("type: project\n")
            && text.contains("importance: 6\n")
            && text.contains("tier: hot\n"),
        "{text}"
    );
    assert!(
        !vault.join("project").exists() && !text.contains("\nuid: "),
        "{text}"
    );
    // B's own file is left in B's folder.
    assert!(
        vault
            .join("knowledge/20250301-Deploys-of-the-shop-V2W4Y6.md")
            .is_file()
    );
}

/// B's folder read in place before any engram command: doctor says the files are not
/// read yet (no NG), the first hook of the first session reads them in and surfaces B's
/// memory, and a README.md beside the memories (the user's note about the folder) and a
/// file with broken front matter (B skipped those too) never become memories.
#[test]
fn b_folder_is_read_by_the_first_hook_and_doctor_stays_green() {
    let b = BUser::new(B_CONFIG);
    b.write(
        ".engram/memories/knowledge/20250301-Deploys-of-the-shop-V2W4Y6.md",
        B_MEMORY,
    );
    b.write(
        ".engram/memories/README.md",
        "# My memories\n\nThis folder holds what the agents remember about deploys.\n",
    );
    let broken = ".engram/memories/knowledge/20250302-broken.md";
    b.write(
        broken,
        "---\nid: 01HZX3K5Q8M2N4P6R8T0V2W4Y7\ntype: knowledge\nDeploy notes\n",
    );
    // An empty store, as `engram setup --no-model` without a read would leave it.
    std::fs::File::create(b.data.join("engram.db")).unwrap();
    let rows = |b: &BUser| -> Vec<Value> {
        let out = b.run(&["doctor", "--json"]);
        let d: Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = d["rows"].as_array().unwrap().clone();
        let ng: Vec<&Value> = rows.iter().filter(|r| r["status"] == "NG").collect();
        assert!(out.status.success() && ng.is_empty(), "{ng:#?}");
        rows
    };
    let vault_row = |rows: &[Value]| {
        rows.iter()
            .find(|r| r["check"] == "vault")
            .unwrap_or_else(|| panic!("{rows:#?}"))
            .clone()
    };
    let before = vault_row(&rows(&b));
    assert!(
        before["status"] == "--" && before["detail"].as_str().unwrap().contains("2 file(s) new"),
        "{before}"
    );
    let prompt = json!({
        "prompt": "when can the shop deploy go out this week?",
        "session_id": "first",
        "cwd": "/work/shop"
    });
    let said = context(&b.hook("user-prompt", &prompt));
    assert!(
        said.contains("Tuesdays"),
        "the first prompt sees B's memory: {said:?}"
    );
    let log = std::fs::read_to_string(b.data.join("logs/hooks.log")).unwrap_or_default();
    assert!(
        log.contains("20250302-broken.md"),
        "the broken file is named: {log}"
    );
    let stats: Value = serde_json::from_str(&b.ok(&["stats", "--json"])).unwrap();
    assert_eq!(
        stats["total_memories"], 1,
        "README.md and the broken file are not memories: {stats}"
    );
    // The broken file stays unread (doctor says so, without NG); fixed, it is read.
    let after = vault_row(&rows(&b));
    assert!(
        after["status"] == "--" && after["detail"].as_str().unwrap().contains("1 file(s)"),
        "{after}"
    );
    b.write(
        broken,
        "---\nid: 01HZX3K5Q8M2N4P6R8T0V2W4Y7\ntype: knowledge\n---\nDeploy notes\n",
    );
    b.ok(&["stats"]);
    let fixed = vault_row(&rows(&b));
    assert_eq!(fixed["status"], "OK", "{fixed}");
}

fn count_md(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        count_md(&p)
                    } else {
                        usize::from(p.extension().is_some_and(|x| x == "md"))
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

fn transcript(b: &BUser, name: &str) -> PathBuf {
    let p = b.data.join(name);
    let line = json!({"type": "user", "cwd": "/work/shop", "message": {"role": "user", "content": "Please check the nightly export job again"}});
    std::fs::write(&p, format!("{line}\n")).unwrap();
    p
}

fn context(out: &Output) -> String {
    assert!(out.status.success());
    if out.stdout.is_empty() {
        return String::new();
    }
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn nudges_count_clusters_at_session_end_and_fire_once() {
    // Episodes count as old at once, and every write is kept apart (no merging), so the
    // test can build clusters without waiting two weeks.
    let b = BUser::new(
        "consolidate_min_age_days = 0\nresolve = false\nsurface_mode = \"off\"\nconsolidate_nudge_min_clusters = 2\n",
    );
    // Two clusters of restated episodes, and one way of working written down three times.
    for (what, why) in [
        ("nightly export job", "the S3 upload timed out"),
        ("billing webhook retries", "the signature check failed"),
    ] {
        for text in [
            format!("Looked into the {what}; {why}."),
            format!("Looked into the {what} again; {why} twice."),
        ] {
            b.ok(&["remember", &text, "--kind", "episode", "--room", "shop"]);
        }
    }
    for text in [
        "Run cargo fmt then cargo clippy before every commit.",
        "Run cargo fmt then cargo clippy before every commit, always.",
        "Always run cargo fmt then cargo clippy before every commit push.",
    ] {
        b.ok(&["remember", text, "--kind", "strategy", "--room", "shop"]);
    }
    let prompt = json!({"prompt": "what should I work on next today?", "session_id": "s1", "cwd": "/work/shop"});
    assert_eq!(
        context(&b.hook("user-prompt", &prompt)),
        "",
        "nothing counted yet: no nudge"
    );
    let t = transcript(&b, "t.jsonl");
    let out = b.hook(
        "session-end",
        &json!({"session_id": "s0", "transcript_path": t, "cwd": "/work/shop"}),
    );
    assert!(out.status.success() && out.stdout.is_empty());
    let state: Value = serde_json::from_slice(
        &std::fs::read(b.data.join("hooks").join("consolidation_state.json")).unwrap(),
    )
    .unwrap();
    assert!(state["clusters"].as_u64().unwrap() >= 2, "{state}");
    assert!(state["skill_clusters"].as_u64().unwrap() >= 1, "{state}");
    let said = context(&b.hook("user-prompt", &prompt));
    assert!(
        said.contains("(engram memory consolidation)") && said.contains("mark_consolidated"),
        "{said}"
    );
    assert!(said.contains("(engram skill candidate)"), "{said}");
    assert_eq!(
        context(&b.hook("user-prompt", &prompt)),
        "",
        "once per interval"
    );
}

/// Seed B's hook state in its data folder (`~/.engram`) carries over: a session B already
/// encoded (`encoded_sessions.txt`) is not encoded again, and B's nudge stamps
/// (`consolidation_state.json`, Unix seconds) hold, so the user is not nudged again at once
/// for what B nudged yesterday. Before, engram read only its own files under `hooks/`.
#[test]
fn bs_encoded_sessions_and_nudge_stamps_carry_over() {
    let b = BUser::new("consolidate_min_age_days = 0\nresolve = false\nsurface_mode = \"off\"\n");
    b.write(".engram/encoded_sessions.txt", "b-old-1 b-old-2\n");
    let yesterday = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64())
        - 86_400.0;
    b.write(
        ".engram/consolidation_state.json",
        &json!({"clusters": 5, "skill_clusters": 2, "checked_at": yesterday,
                "last_nudged_at": yesterday, "last_skill_nudged_at": yesterday})
        .to_string(),
    );
    let t = transcript(&b, "t.jsonl");
    let out = b.hook(
        "session-end",
        &json!({"session_id": "b-old-2", "transcript_path": t, "cwd": "/work/shop"}),
    );
    assert!(out.status.success());
    let stats: Value = serde_json::from_str(&b.ok(&["stats", "--json"])).unwrap();
    assert_eq!(
        stats["total_memories"].as_u64().unwrap_or(0),
        0,
        "B encoded that session already: {stats}"
    );
    let prompt = json!({"prompt": "what should I work on next today?", "session_id": "s1", "cwd": "/work/shop"});
    assert_eq!(
        context(&b.hook("user-prompt", &prompt)),
        "",
        "B nudged yesterday: not again within the interval"
    );
    // A session B never saw is encoded.
    let out = b.hook(
        "session-end",
        &json!({"session_id": "new-1", "transcript_path": t, "cwd": "/work/shop"}),
    );
    assert!(out.status.success());
    let stats: Value = serde_json::from_str(&b.ok(&["stats", "--json"])).unwrap();
    assert_eq!(stats["total_memories"], 1, "{stats}");
}
