//! Seed C's `engram sync` (git chunks) between two machines sharing a real git repository,
//! and C's HTTP API on a Unix socket (`ENGRAM_SOCKET`) with `/sync/status`.

mod support;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Stdio;
use support::command;

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The built binary for one machine's home, in `dir`; its stdout (the test fails on a
/// non-zero exit).
fn engram(home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = command(home).current_dir(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(home: &Path, dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend(args);
    serde_json::from_str(engram(home, dir, &all).trim()).unwrap()
}

fn chunk_bytes(repo: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(repo.join(".engram/chunks"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

fn titles(home: &Path, dir: &Path, query: &str) -> Vec<String> {
    let v = json(home, dir, &["search", query, "--limit", "20"]);
    let mut t: Vec<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap().to_string())
        .collect();
    t.sort();
    t
}

#[test]
fn chunks_written_on_one_machine_are_imported_once_on_another() {
    let dir = tempfile::tempdir().unwrap();
    let (home_a, home_b) = (dir.path().join("home-a"), dir.path().join("home-b"));
    let remote = dir.path().join("remote.git");
    std::fs::create_dir_all(&remote).unwrap();
    git(&remote, &["init", "--bare", "-q"]);
    git(dir.path(), &["clone", "-q", "remote.git", "a"]);
    let a = dir.path().join("a");

    // Machine A: two decisions in project "shop", then a chunk.
    engram(&home_a, &a, &["init", "shop"]);
    engram(
        &home_a,
        &a,
        &[
            "save",
            "Payments",
            "Payments go through Stripe checkout",
            "--type",
            "decision",
        ],
    );
    engram(
        &home_a,
        &a,
        &[
            "save",
            "Invoices",
            "Invoices are rendered as PDF by the worker",
            "--type",
            "decision",
        ],
    );
    let st = json(&home_a, &a, &["sync", "--status"]);
    assert_eq!(
        (st["manifest"].as_bool(), st["unexported"].as_u64()),
        (Some(false), Some(2)),
        "{st}"
    );
    let out = engram(&home_a, &a, &["sync"]);
    assert!(out.starts_with("Chunk "), "{out}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(a.join(".engram/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["version"], 1);
    let first = manifest["chunks"][0].clone();
    assert_eq!(first["memories"], 2, "{manifest}");
    assert_eq!(first["id"].as_str().unwrap().len(), 8);
    assert!(engram(&home_a, &a, &["sync"]).starts_with("Nothing new to sync"));
    git(&a, &["add", "-A"]);
    git(&a, &["commit", "-q", "-m", "engram sync"]);
    git(&a, &["push", "-q", "origin", "HEAD"]);

    // Machine B: its own home, a clone of the repository.
    git(dir.path(), &["clone", "-q", "remote.git", "b"]);
    let b = dir.path().join("b");
    let st = json(&home_b, &b, &["sync", "--status"]);
    assert_eq!(st["pending"], serde_json::json!([first["id"]]), "{st}");
    let before = chunk_bytes(&b);
    let out = engram(&home_b, &b, &["sync", "--import"]);
    assert!(out.starts_with("Imported 1 chunk(s)"), "{out}");
    assert_eq!(
        titles(&home_b, &b, "Stripe PDF"),
        Vec::<String>::new(),
        "C's search is every word"
    );
    assert_eq!(titles(&home_b, &b, "Stripe checkout"), ["Payments"]);
    assert_eq!(titles(&home_b, &b, "PDF worker"), ["Invoices"]);
    // Once: a second import applies nothing and creates nothing.
    let out = engram(&home_b, &b, &["sync", "--import"]);
    assert_eq!(out.trim(), "Imported 0 chunk(s); 1 already applied");
    assert_eq!(titles(&home_b, &b, "Stripe checkout"), ["Payments"]);
    assert_eq!(chunk_bytes(&b), before, "a chunk is never modified");

    // C's session start imports what the repository's manifest holds: nothing new here.
    let mut hook = command(&home_b)
        .current_dir(&b)
        .args([
            "hook",
            "session-start",
            "--agent",
            "claude",
            "--tools",
            "compat-c",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(
            serde_json::json!({"session_id": "b-1", "cwd": b})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    assert!(hook.wait().unwrap().success());
    assert_eq!(titles(&home_b, &b, "Stripe checkout"), ["Payments"]);

    // B adds one memory: its chunk holds only that one, never A's memories again.
    engram(
        &home_b,
        &b,
        &[
            "save",
            "Refunds",
            "Refunds are issued through the Stripe dashboard",
        ],
    );
    engram(&home_b, &b, &["sync"]);
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(b.join(".engram/manifest.json")).unwrap())
            .unwrap();
    let chunks = manifest["chunks"].as_array().unwrap();
    assert_eq!(chunks.len(), 2, "{manifest}");
    assert_eq!(
        chunks[0], first,
        "the manifest's first entry is kept as written"
    );
    assert_eq!(chunks[1]["memories"], 1, "{manifest}");
    git(&b, &["add", "-A"]);
    git(&b, &["commit", "-q", "-m", "engram sync from b"]);
    git(&b, &["push", "-q", "origin", "HEAD"]);

    // A pulls: B's chunk is applied (here by C's session-start hook), A's own is not
    // applied again.
    git(&a, &["pull", "-q", "origin", "main"]);
    let st = json(&home_a, &a, &["sync", "--status"]);
    assert_eq!(st["pending"].as_array().unwrap().len(), 1, "{st}");
    let mut hook = command(&home_a)
        .current_dir(&a)
        .args([
            "hook",
            "session-start",
            "--agent",
            "claude",
            "--tools",
            "compat-c",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(
            serde_json::json!({"session_id": "a-1", "cwd": a})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    assert!(hook.wait().unwrap().success());
    let out = engram(&home_a, &a, &["sync", "--import"]);
    assert_eq!(out.trim(), "Imported 0 chunk(s); 2 already applied");
    assert_eq!(titles(&home_a, &a, "Stripe"), ["Payments", "Refunds"]);
    assert_eq!(titles(&home_a, &a, "PDF worker"), ["Invoices"]);
    let st = json(&home_a, &a, &["sync", "--status"]);
    assert_eq!(
        (st["chunks"].as_u64(), st["unexported"].as_u64()),
        (Some(2), Some(0)),
        "{st}"
    );
    assert_eq!(st["pending"], serde_json::json!([]));
}

#[test]
fn seed_cs_api_on_a_unix_socket_with_sync_status() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let sock = dir.path().join("engram.sock");
    let mut child = command(&home)
        .env("ENGRAM_SOCKET", &sock)
        .args(["serve", "--tools", "compat-c"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let line = lines.next().expect("the server names its socket").unwrap();
        if line.contains("unix socket") {
            assert!(line.contains(&sock.display().to_string()), "{line}");
            break;
        }
    }
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the socket is the user's only");
    let get = |path: &str| -> (u16, Value) {
        let mut c = std::os::unix::net::UnixStream::connect(&sock).unwrap();
        write!(
            c,
            "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        let status = out.split_whitespace().nth(1).unwrap().parse().unwrap();
        let body = out.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        (
            status,
            serde_json::from_str(body.trim()).unwrap_or(Value::Null),
        )
    };
    let (st, v) = get("/sync/status");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["known_chunks"], 0, "{v}");
    let folder = dir.path().join("repo/.engram");
    let (st, v) = get(&format!("/sync/status?dir={}", folder.display()));
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (v["manifest"].as_bool(), v["chunks"].as_u64()),
        (Some(false), Some(0)),
        "{v}"
    );
    let (st, _) = get("/stats");
    assert_eq!(st, 200);
    let _ = child.kill();
    let _ = child.wait();
}
