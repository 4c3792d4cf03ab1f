//! What an outside seed-C user found after switching (issue 13), through the built binary:
//! C never recorded use, so a converted memory's forgetting clock starts at its conversion.

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;
use support::command;

/// C's observations table (the columns engram reads) with three memories written a year
/// before the switch and never recalled (C keeps no usage history).
const C_DDL: &str = r#"
CREATE TABLE sessions (id TEXT PRIMARY KEY, project TEXT NOT NULL, directory TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT, summary TEXT);
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), type TEXT NOT NULL, title TEXT NOT NULL,
    content TEXT NOT NULL, tool_name TEXT, project TEXT, scope TEXT NOT NULL DEFAULT 'project',
    topic_key TEXT, normalized_hash TEXT, revision_count INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1, last_seen_at TEXT, pinned BOOLEAN NOT NULL DEFAULT 0,
    review_after TEXT, expires_at TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now')), deleted_at TEXT, created_by TEXT);
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), content TEXT NOT NULL, project TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')));
INSERT INTO sessions VALUES ('s-1', 'webapp', '/home/u/webapp', datetime('now', '-400 days'), NULL, NULL);
INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at) VALUES
    (3, 'obs-aaaaaaaaaaaaaaaa', 's-1', 'bugfix', 'Cache TTL', 'Redis cache TTL is 300s for sessions', 'webapp',
        datetime('now', '-400 days'), datetime('now', '-400 days')),
    (4, 'obs-bbbbbbbbbbbbbbbb', 's-1', 'discovery', 'Flaky test', 'The login test flakes when the clock skews', 'webapp',
        datetime('now', '-380 days'), datetime('now', '-380 days')),
    (5, 'obs-cccccccccccccccc', 's-1', 'decision', 'Auth model', 'JWT in httpOnly cookies, rotated hourly', 'webapp',
        datetime('now', '-365 days'), datetime('now', '-365 days'));
"#;

fn engram(home: &Path, args: &[&str]) -> String {
    let out = command(home).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn maintenance_keeps_converted_c_memories_that_c_never_recorded_use_of() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(".engram");
    std::fs::create_dir_all(&home).unwrap();
    rusqlite::Connection::open(home.join("engram.db"))
        .unwrap()
        .execute_batch(C_DDL)
        .unwrap();
    engram(&home, &["stats"]);
    engram(&home, &["maintain"]);
    let stats = engram(&home, &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(
        v["by_tier"],
        serde_json::json!({"active": 3}),
        "maintenance archived converted memories: {stats}"
    );
    assert_eq!(v["events_by_kind"]["import"], 3, "{stats}");
    let shown = engram(&home, &["show", "3"]);
    assert!(shown.contains("tier:       active"), "{shown}");
}

struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `engram serve 127.0.0.1:0` (C's positional address), waiting for the line naming its port.
fn serve(home: &Path) -> Server {
    let mut child = command(home)
        .args(["serve", "127.0.0.1:0", "--tools", "compat-c"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = support::http_addr(&mut child);
    Server { child, addr }
}

/// One HTTP/1.1 request; the status and the JSON body.
fn req(addr: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).unwrap();
    c.write_all(body.as_bytes()).unwrap();
    let mut out = Vec::new();
    c.read_to_end(&mut out).expect("a reply within 60 s");
    let text = String::from_utf8_lossy(&out);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text}"));
    let (_, raw) = text.split_once("\r\n\r\n").unwrap_or(("", ""));
    let v = serde_json::from_str(raw.trim()).unwrap_or(Value::Null);
    (status, v)
}

#[test]
fn c_post_observations_refuses_a_body_without_its_required_fields() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(".engram");
    std::fs::create_dir_all(&home).unwrap();
    let server = serve(&home);
    let (status, body) = req(
        &server.addr,
        "POST",
        "/observations",
        Some(json!({"title": "x"})),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["field"], "session_id", "{body}");
    let (status, body) = req(
        &server.addr,
        "POST",
        "/observations",
        Some(json!({"session_id": "s-1", "title": "x"})),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["field"], "content", "{body}");
    let (status, body) = req(
        &server.addr,
        "POST",
        "/observations",
        Some(json!({"session_id": "s-1", "title": "x", "content": "a fact", "type": "discovery"})),
    );
    assert_eq!(status, 200, "{body}");
}
