//! The built `engram` binary, driven as a user or an agent's shell would drive it.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

mod support;

/// `engram` with a clean environment: no `ENGRAM_*` variable from the caller leaks in.
fn command(home: &Path) -> Command {
    let mut c = support::clean_engram();
    c.env("ENGRAM_HOME", home).current_dir(home);
    c
}

/// The binary on `home` with the test model configured and no stdin.
fn model_command(home: &Path, model: &str) -> Command {
    let mut c = command(home);
    c.env("ENGRAM_MODEL", model).stdin(Stdio::null());
    c
}

fn engram(home: &Path, args: &[&str]) -> Output {
    command(home)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("engram runs")
}

fn ok_json(home: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = engram(home, &all);
    assert!(
        out.status.success(),
        "engram {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout of {args:?} is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn remember_recall_reinforce_correct_forget_restore_purge() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let a = ok_json(
        h,
        &[
            "remember",
            "We deploy with blue-green switches",
            "--type",
            "decision",
            "--importance",
            "8",
            "--tags",
            "deploy,ops",
            "--room",
            "app",
        ],
    );
    assert_eq!(a["action"], "created");
    let id = a["id"].as_i64().unwrap();
    let shown = ok_json(h, &["show", &format!("#{id}")]);
    assert_eq!(shown["memory"]["kind"], "decision");
    assert_eq!(
        shown["memory"]["importance"], 0.8,
        "an integer above 1 is read on B's 1-10 scale"
    );
    assert_eq!(shown["memory"]["source"], "cli");

    let r = ok_json(h, &["recall", "blue-green deploy", "--room", "app"]);
    assert_eq!(r["hits"][0]["id"], id);
    for key in [
        "score",
        "relevance",
        "activation",
        "importance",
        "tier",
        "room",
        "created_at",
        "source",
    ] {
        assert!(!r["hits"][0][key].is_null(), "hit carries {key}");
    }

    let b = ok_json(
        h,
        &[
            "remember",
            "Blue-green needs two identical stacks",
            "--room",
            "app",
            "--importance",
            "0.6",
        ],
    );
    let bid = b["id"].as_i64().unwrap();
    let re = ok_json(
        h,
        &[
            "reinforce",
            &id.to_string(),
            &bid.to_string(),
            "--strength",
            "2",
        ],
    );
    assert_eq!(re["weight"], 2.0);

    let c = ok_json(
        h,
        &[
            "correct",
            &id.to_string(),
            "--content",
            "We deploy with canary releases",
            "--reason",
            "changed in Q3",
        ],
    );
    let new_id = c["new_id"].as_i64().unwrap();
    let r = ok_json(
        h,
        &["recall", "deploy", "--room", "app", "--kind", "decision"],
    );
    assert_eq!(r["hits"][0]["id"], new_id);
    let deep = ok_json(
        h,
        &["recall", "blue-green", "--room", "app", "--mode", "deep"],
    );
    let old = deep["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == id)
        .expect("superseded hit");
    assert_eq!(old["superseded_by"], new_id);

    ok_json(h, &["forget", &bid.to_string()]);
    let r = ok_json(
        h,
        &[
            "recall",
            "identical stacks",
            "--room",
            "*",
            "--mode",
            "exhaustive",
        ],
    );
    assert!(r["hits"].as_array().unwrap().iter().all(|x| x["id"] != bid));
    ok_json(h, &["restore", &bid.to_string()]);
    ok_json(h, &["pin", &bid.to_string()]);
    ok_json(
        h,
        &[
            "link",
            &bid.to_string(),
            &new_id.to_string(),
            "--kind",
            "related",
            "--weight",
            "0.5",
        ],
    );
    ok_json(h, &["forget", &bid.to_string()]);
    let p = ok_json(h, &["purge", &bid.to_string()]);
    assert_eq!(p["id"], bid);

    let s = ok_json(h, &["stats"]);
    assert_eq!(s["total_memories"], 2);
    assert_eq!(s["by_tier"]["superseded"], 1);
    assert_eq!(s["search"], "lexical");

    // Text output is for people but must work too.
    let out = engram(h, &["recall", "canary", "--room", "app"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("#{new_id}")));
}

#[test]
fn bad_input_exits_2_names_the_field_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    ok_json(h, &["remember", "first", "--room", "app"]);
    let big = "x".repeat(64 * 1024 + 1);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["remember", &big], "content"),
        (vec!["remember", "  "], "content"),
        (vec!["remember", "ok", "--importance", "11"], "importance"),
        (vec!["remember", "ok", "--importance", "-1"], "importance"),
        (vec!["remember", "ok", "--importance", "1.5"], "importance"),
        (vec!["remember", "ok", "--kind", "banana"], "kind"),
        (
            vec!["remember", "ok", "--metadata", "{not json"],
            "metadata",
        ),
        (vec!["recall", "x", "--mode", "slow"], "mode"),
        (vec!["recall", "x", "--limit", "0"], "limit"),
        (vec!["recall", "x", "--kind", "nope"], "kind"),
        (vec!["forget", "424242"], "id"),
        (vec!["show", "#999"], "id"),
        (vec!["show", "not-an-id"], "id"),
        (vec!["reinforce", "1", "999"], "ids"),
        (
            vec!["correct", "999", "--content", "x", "--reason", "y"],
            "id",
        ),
        (vec!["link", "1", "1"], "dst"),
        (vec!["link", "1", "2", "--kind", "likes"], "kind"),
    ];
    for (args, field) in cases {
        let mut all = args.clone();
        all.push("--json");
        let out = engram(h, &all);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err: Value =
            serde_json::from_slice(&out.stdout).expect("a JSON error on stdout with --json");
        assert_eq!(err["error"]["field"], field, "{args:?}: {err}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(field),
            "{args:?}: stderr names the field: {stderr}"
        );
    }
    let s = ok_json(h, &["stats"]);
    assert_eq!(s["total_memories"], 1, "nothing was written");
    assert_eq!(s["events_by_kind"]["create"], 1);
    assert!(s["events_by_kind"].get("reinforce").is_none());
}

#[test]
fn content_from_stdin_and_invalid_utf8_is_refused() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let run = |input: &[u8]| {
        let mut child = command(dir.path())
            .args(["remember", "-", "--room", "app", "--json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    };
    let ok = run("multi\nline 日本語".as_bytes());
    assert!(ok.status.success());
    let bad = run(&[0xff, 0xfe, b'a']);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("UTF-8"));
    assert_eq!(ok_json(dir.path(), &["stats"])["total_memories"], 1);
}

#[test]
fn configuration_file_and_environment_layer_over_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    std::fs::write(h.join("config.toml"), "dynamics = \"strength\"\n").unwrap();
    assert_eq!(ok_json(h, &["stats"])["dynamics"], "strength");
    let out = command(h)
        .args(["stats", "--json"])
        .env("ENGRAM_DYNAMICS", "actr")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["dynamics"], "actr", "environment beats the file");
    std::fs::write(h.join("config.toml"), "w_relevance = [").unwrap();
    let out = engram(h, &["stats"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("config.toml"));
}

#[test]
fn rooms_come_from_the_callers_project_directory() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let repo = h.join("proj");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(
        repo.join(".git/config"),
        "[remote \"origin\"]\n\turl = https://example.com/me/widget.git\n",
    )
    .unwrap();
    let a = ok_json(
        h,
        &[
            "remember",
            "widget builds with make",
            "--cwd",
            repo.to_str().unwrap(),
        ],
    );
    assert_eq!(a["room"], "widget");
    let r = ok_json(h, &["recall", "make", "--cwd", repo.to_str().unwrap()]);
    assert_eq!(r["rooms"], serde_json::json!(["widget", "common"]));
    assert_eq!(r["hits"][0]["id"], a["id"]);
    let r = ok_json(h, &["recall", "make", "--room", "elsewhere"]);
    assert!(r["hits"].as_array().unwrap().is_empty());
}

#[test]
fn many_processes_at_once_never_fail_with_database_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().to_path_buf();
    let children: Vec<_> = (0..8)
        .map(|p| {
            let h = h.clone();
            std::thread::spawn(move || {
                for i in 0..6 {
                    let out = engram(
                        &h,
                        &[
                            "remember",
                            // Distinct words: resolution keeps all 48 apart.
                            &format!("w{p}x{i} written by a process"),
                            "--room",
                            "app",
                        ],
                    );
                    assert!(
                        out.status.success(),
                        "remember failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let out = engram(&h, &["recall", &format!("w{p}x0"), "--room", "app"]);
                    assert!(
                        out.status.success(),
                        "recall failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    for c in children {
        c.join().unwrap();
    }
    assert_eq!(ok_json(&h, &["stats"])["total_memories"], 48);
}

/// Every `.md` file under `dir`.
fn vault_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn vault_reindex_export_import() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let a = ok_json(
        h,
        &[
            "remember",
            "Releases are cut on Fridays",
            "--type",
            "decision",
            "--tags",
            "release",
            "--room",
            "app",
        ],
    );
    let a_id = a["id"].as_i64().unwrap().to_string();
    ok_json(
        h,
        &["remember", "The staging host is stg-1", "--related", &a_id],
    );
    let vault = h.join("memories");
    assert_eq!(
        vault_files(&vault).len(),
        2,
        "each write lands in the vault"
    );
    ok_json(h, &["forget", &a_id]);
    assert!(
        vault_files(&vault)
            .iter()
            .any(|p| p.to_string_lossy().contains("_trash"))
    );

    // Export, then lose the database: reindex brings every memory back from the files.
    let dump = h.join("dump.jsonl");
    let out = ok_json(h, &["export", "--out", dump.to_str().unwrap()]);
    assert_eq!(out["written"]["memories"], 2);
    let before = ok_json(h, &["show", &a_id]);
    for f in ["engram.db", "engram.db-wal", "engram.db-shm"] {
        let _ = std::fs::remove_file(h.join(f));
    }
    let r = ok_json(h, &["reindex"]);
    assert_eq!(r["restored"], 2, "{r}");
    let after = ok_json(h, &["show", &a_id]);
    assert_eq!(before["memory"], after["memory"]);

    // Importing the export into the rebuilt store creates nothing; into a new home, all.
    let again = ok_json(h, &["import", dump.to_str().unwrap()]);
    assert_eq!(again["created"].get("memories"), None, "{again}");
    assert_eq!(again["skipped"]["memories"], 2);
    let other = tempfile::tempdir().unwrap();
    let fresh = ok_json(other.path(), &["import", dump.to_str().unwrap()]);
    assert_eq!(fresh["created"]["memories"], 2, "{fresh}");
    assert_eq!(vault_files(&other.path().join("memories")).len(), 2);

    // A garbage file is reported on stderr with its path and line, and nothing breaks.
    std::fs::write(vault.join("bad.md"), "---\ntags: [x\n---\nbody\n").unwrap();
    let out = engram(h, &["stats", "--json"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.md:2"), "{err}");
}

/// `reindex` embeds what was written without a model and, past `ann_threshold`, builds the
/// HNSW index; later processes find it (`stats`) and search through it by meaning.
#[test]
fn reindex_embeds_and_builds_the_vector_index_past_the_threshold() {
    let model = std::env::var("ENGRAM_TEST_MODEL_DIR").unwrap_or_else(|_| {
        panic!("ENGRAM_TEST_MODEL_DIR is not set: run scripts/test, which fetches the model")
    });
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let texts = [
        "We store every session in SQLite because it needs no server",
        "The release checklist lives in the wiki under Operations",
        "Alice prefers tabs over spaces in the Go services",
        "The nightly job exports invoices to the accounting bucket",
        "Login tokens expire after twelve hours",
        "The staging cluster runs on three small machines",
    ];
    let mut ids = Vec::new();
    for t in texts {
        // No model in this home: written lexically, without vectors.
        ids.push(ok_json(h, &["remember", t, "--room", "app"])["id"].clone());
    }
    let with_model = |args: &[&str]| {
        let mut c = model_command(h, &model);
        c.env("ENGRAM_ANN_THRESHOLD", "4");
        c.args(args).output().expect("engram runs")
    };
    let out = with_model(&["reindex"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "reindex failed: {err}");
    assert!(
        err.contains("6 memories embedded") && err.contains("HNSW index built"),
        "reindex says what it did: {err}"
    );
    let stats: Value = serde_json::from_slice(&with_model(&["stats", "--json"]).stdout).unwrap();
    assert_eq!(stats["embeddings"]["embedded"], 6);
    assert_eq!(stats["embeddings"]["vector_index"], "hnsw");
    let out = with_model(&[
        "recall",
        "which database engine do we use",
        "--room",
        "app",
        "--json",
    ]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["hits"][0]["id"], ids[0], "found by meaning: {r}");
}

/// `engram import` gives what it imported vectors of the configured model, so the next
/// recall finds it by meaning (before, imported memories waited for a server's background
/// fill and were searched by words only, with nothing saying so); `--no-embed` leaves them
/// and the report says so.
#[test]
fn import_embeds_what_it_imported_unless_told_not_to() {
    let model = std::env::var("ENGRAM_TEST_MODEL_DIR").unwrap_or_else(|_| {
        panic!("ENGRAM_TEST_MODEL_DIR is not set: run scripts/test, which fetches the model")
    });
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let file = h.join("memory.json");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"entity","name":"Alice","entityType":"person","observations":["Alice owns the billing service"]}"#,
            "\n",
            r#"{"type":"entity","name":"Office","entityType":"place","observations":["The office coffee machine is on the third floor"]}"#,
            "\n",
        ),
    )
    .unwrap();
    let with_model = |args: &[&str]| {
        model_command(h, &model)
            .args(args)
            .output()
            .expect("engram runs")
    };
    let report = with_model(&[
        "--json",
        "import",
        "--from",
        "mcp-memory",
        file.to_str().unwrap(),
    ]);
    let r: Value = serde_json::from_slice(&report.stdout).unwrap();
    assert_eq!(r["created"]["memories"], 2, "{r}");
    assert_eq!(r["embedded"], 2, "{r}");
    let stats: Value = serde_json::from_slice(&with_model(&["stats", "--json"]).stdout).unwrap();
    assert_eq!(stats["embeddings"]["embedded"], 2, "{stats}");
    let out = with_model(&["recall", "who is responsible for invoicing", "--json"]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        r["hits"][0]["content"], "Alice owns the billing service",
        "{r}"
    );

    let other = tempfile::tempdir().unwrap();
    let out = model_command(other.path(), &model)
        .args(["import", "--from", "mcp-memory", "--no-embed"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("not embedded"), "{said}");
}
