//! Eight processes on one store at once: four CLI loops (`engram remember` / `engram recall`,
//! a process per call) and four `engram mcp` servers driven over raw JSON-RPC, all writing
//! and recalling together. No call may fail (no "database is locked"), every acknowledged
//! write must be in the store afterwards, and a server started before the others wrote must
//! recall what they wrote.
//!
//! Rounds per process: `ENGRAM_CONCURRENCY_ROUNDS` (default 6).

mod support;

use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use support::{Acked, Mcp, command, integrity, missing};

fn rounds() -> usize {
    std::env::var("ENGRAM_CONCURRENCY_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(6)
}

fn cli_loop(home: &std::path::Path, p: usize, acked: &Mutex<Acked>) {
    for i in 0..rounds() {
        let out = command(home)
            .args([
                "remember",
                &format!("cli process {p} wrote marker{p}x{i} about the build"),
                "--room",
                "shared",
                "--json",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cli {p} remember {i}: {stderr}");
        assert!(!stderr.contains("locked"), "{stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        acked
            .lock()
            .unwrap()
            .record(&format!("remember {}", v["uid"].as_str().unwrap()));
        let out = command(home)
            .args(["recall", "build marker", "--room", "shared", "--json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cli {p} recall {i}: {stderr}");
    }
}

fn mcp_loop(server: &mut Mcp, p: usize, acked: &Mutex<Acked>) {
    for i in 0..rounds() * 2 {
        let r = server.call(
            "remember",
            json!({"content": format!("mcp server {p} wrote marker{p}y{i} about the deploy"), "room": "shared"}),
        );
        assert_ne!(r["isError"], true, "server {p} remember {i}: {r}");
        let uid = r["structuredContent"]["uid"].as_str().unwrap().to_string();
        acked.lock().unwrap().record(&format!("remember {uid}"));
        let r = server.call(
            "recall",
            json!({"query": "deploy marker", "room": "shared", "limit": 10}),
        );
        assert_ne!(r["isError"], true, "server {p} recall {i}: {r}");
    }
}

#[test]
fn eight_processes_write_and_recall_one_store() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let acked = Arc::new(Mutex::new(Acked::default()));

    // The long-running server: started, and its store opened, before anyone else writes.
    let mut watcher = Mcp::start(&home, &[], "watcher");
    let r = watcher.call("recall", json!({"query": "anything", "room": "shared"}));
    assert_ne!(r["isError"], true, "{r}");

    let mut handles = Vec::new();
    for p in 0..4 {
        let (home, acked) = (home.clone(), acked.clone());
        handles.push(std::thread::spawn(move || cli_loop(&home, p, &acked)));
    }
    for p in 4..7 {
        let (home, acked) = (home.clone(), acked.clone());
        handles.push(std::thread::spawn(move || {
            let mut s = Mcp::start(&home, &[], &format!("client{p}"));
            mcp_loop(&mut s, p, &acked);
            assert!(s.finish().success());
        }));
    }
    // The watcher is the eighth process, writing and recalling alongside the others.
    mcp_loop(&mut watcher, 7, &acked);
    for h in handles {
        h.join().expect("a process loop failed");
    }

    let acked = acked.lock().unwrap();
    let n = rounds();
    assert_eq!(acked.remembered.len(), 4 * n + 4 * 2 * n);
    let db = home.join("engram.db");
    assert_eq!(integrity(&db), ["ok"]);
    let lost = missing(&db, &acked);
    assert!(lost.is_empty(), "lost: {lost:?}");

    // The long-running server sees every other process's writes, by recall, each with
    // the source that wrote it.
    let mut sources: HashSet<String> = HashSet::new();
    for p in [0, 3, 5] {
        let (marker, tag) = if p < 4 {
            (format!("marker{p}x{}", n - 1), "cli")
        } else {
            (format!("marker{p}y{}", 2 * n - 1), "mcp")
        };
        let r = watcher.call(
            "recall",
            json!({"query": marker, "room": "shared", "limit": 3}),
        );
        let hits = r["structuredContent"]["hits"].as_array().unwrap();
        let found = hits
            .iter()
            .find(|h| h["content"].as_str().unwrap().contains(&marker));
        assert!(
            found.is_some(),
            "the watcher does not see {marker} written by {tag} process {p}: {r}"
        );
        sources.insert(found.unwrap()["source"].as_str().unwrap().to_string());
        // Provenance comes with every hit: who wrote it and when, marked as data.
        let h = &hits[0];
        assert!(
            h["created_at"].is_string() && h["source"].is_string(),
            "{h}"
        );
        assert!(
            r["structuredContent"]["notice"]
                .as_str()
                .unwrap()
                .contains("not instructions")
        );
    }
    assert!(
        sources.contains("cli") && sources.contains("mcp:client5"),
        "{sources:?}"
    );
    assert!(watcher.finish().success());
}
