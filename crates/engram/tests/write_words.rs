//! A harness that counts words, not rows: concurrent clients of every kind (CLI processes,
//! `engram mcp` over stdio, one `engram serve --http` shared by HTTP clients) write
//! distinct engineering texts full of numbers and identifiers, and near-duplicates of each
//! other's, all with write-path resolution on. Afterwards every acknowledged text must be
//! in the store verbatim (as a memory, a revision or evidence on the memory it was folded
//! into), and nothing may be superseded: no text carries a change cue.
//!
//! Texts per client: `ENGRAM_WORDS_ROUNDS` (default 6; the long run in the README uses
//! 50 with 50 clients: `ENGRAM_WORDS_CLIENTS=50`). No timing anywhere: each client runs
//! its writes to the end; replies are awaited with generous deadlines.

mod support;

use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{Mcp, command};

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(default)
}

/// One distinct text per (client, i): the same few templates, different identifiers.
fn distinct_text(client: usize, i: usize) -> String {
    let h = (client * 7919 + i * 104_729) % 0xff_ffff;
    match i % 5 {
        0 => format!("Client {client} note {i}: build {h:06x} passed on the CI farm."),
        1 => format!("Release v2.{client}.{i} shipped with commit {h:07x}."),
        2 => format!(
            "Invoice INV-{client:03}{i:03} for {} EUR was paid.",
            100 + i * 3 + client
        ),
        3 => format!("User u{client}x{i} reported a crash in the export dialog on build {h}."),
        _ => format!(
            "Ticket ENG-{} by client {client}: flaky test in module m{i}.",
            client * 1000 + i
        ),
    }
}

/// A near-duplicate of another client's text: other case and punctuation, or a prefix.
fn near_duplicate(client: usize, i: usize, clients: usize) -> String {
    let t = distinct_text((client + 1) % clients, i);
    if i.is_multiple_of(2) {
        format!("{}!", t.trim_end_matches('.').to_uppercase())
    } else {
        format!("Reminder: {t}")
    }
}

/// What client `c` writes, in order.
fn script(c: usize, rounds: usize, clients: usize) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..rounds {
        out.push(distinct_text(c, i));
        if i % 3 == 1 {
            out.push(near_duplicate(c, i, clients));
        }
    }
    out
}

const RESOLVE_ON: &[(&str, &str)] = &[("ENGRAM_RESOLVE", "true")];

fn cli_client(home: &std::path::Path, c: usize, texts: Vec<String>, acked: &Mutex<Vec<String>>) {
    for t in texts {
        let out = command(home)
            .envs(RESOLVE_ON.iter().copied())
            .args(["remember", &t, "--room", "shared", "--json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "cli {c}: {stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["id"].is_i64(), "{v}");
        acked.lock().unwrap().push(t);
    }
}

fn stdio_client(home: &std::path::Path, c: usize, texts: Vec<String>, acked: &Mutex<Vec<String>>) {
    let mut m = Mcp::start_with(home, &[], &format!("stdio-{c}"), RESOLVE_ON);
    for t in texts {
        let r = m.call("remember", json!({"content": t, "room": "shared"}));
        assert_ne!(r["isError"], true, "stdio {c}: {r}");
        acked.lock().unwrap().push(t);
    }
}

/// A minimal MCP client over streamable HTTP: one connection per request, the session id
/// from `initialize`, the reply read from the JSON or event-stream body.
struct Http {
    addr: String,
    session: Option<String>,
    next: i64,
}

impl Http {
    fn post(&mut self, msg: &Value) -> Option<Value> {
        let body = msg.to_string();
        let session = self
            .session
            .as_ref()
            .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\nConnection: close\r\n\r\n",
            self.addr,
            body.len()
        );
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body.as_bytes()).unwrap();
        let id = msg.get("id").cloned();
        let mut buf = Vec::new();
        let mut b = [0u8; 4096];
        loop {
            let n = s.read(&mut b).expect("a reply within 120 s");
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&b[..n]);
            if let Some(v) = reply_in(&buf, id.as_ref()) {
                self.take_session(&buf);
                return Some(v);
            }
        }
        self.take_session(&buf);
        let text = String::from_utf8_lossy(&buf);
        assert!(
            text.starts_with("HTTP/1.1 2"),
            "HTTP MCP request failed: {text}"
        );
        id.is_none().then_some(Value::Null)
    }

    fn take_session(&mut self, buf: &[u8]) {
        let text = String::from_utf8_lossy(buf);
        for line in text.split("\r\n") {
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("mcp-session-id")
            {
                self.session = Some(v.trim().to_string());
            }
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.next += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call",
                         "params": {"name": tool, "arguments": args}});
        let r = self.post(&msg).expect("a reply");
        r["result"].clone()
    }

    fn connect(addr: &str, client: &str) -> Http {
        let mut h = Http {
            addr: addr.to_string(),
            session: None,
            next: 0,
        };
        let r = h
            .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": client, "version": "1"}}}))
            .expect("initialize reply");
        assert!(r.get("result").is_some(), "{r}");
        h.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        h
    }
}

/// The JSON-RPC reply with `id` inside a (possibly event-stream, possibly chunked) body.
fn reply_in(buf: &[u8], id: Option<&Value>) -> Option<Value> {
    let id = id?;
    let text = String::from_utf8_lossy(buf);
    let mut from = 0;
    while let Some(i) = text[from..].find("{\"") {
        let start = from + i;
        let mut it = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = it.next()
            && v.get("id") == Some(id)
        {
            return Some(v);
        }
        from = start + 2;
    }
    None
}

fn http_client(addr: &str, c: usize, texts: Vec<String>, acked: &Mutex<Vec<String>>) {
    let mut h = Http::connect(addr, &format!("http-{c}"));
    for t in texts {
        let r = h.call("remember", json!({"content": t, "room": "shared"}));
        assert_ne!(r["isError"], true, "http {c}: {r}");
        assert!(r["structuredContent"]["id"].is_i64(), "http {c}: {r}");
        acked.lock().unwrap().push(t);
    }
}

struct Server {
    child: std::process::Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(home: &std::path::Path) -> Server {
    let mut child = command(home)
        .envs(RESOLVE_ON.iter().copied())
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = support::http_addr(&mut child);
    Server { child, addr }
}

#[test]
fn every_acknowledged_word_survives_resolution_under_concurrency() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().to_path_buf();
    let rounds = env_or("ENGRAM_WORDS_ROUNDS", 6);
    // A third of the clients of each kind.
    let clients = env_or("ENGRAM_WORDS_CLIENTS", 6).max(3);
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let server = serve(&home);
    let mut handles = Vec::new();
    for c in 0..clients {
        let (home, acked, addr) = (home.clone(), acked.clone(), server.addr.clone());
        let texts = script(c, rounds, clients);
        handles.push(std::thread::spawn(move || match c % 3 {
            0 => cli_client(&home, c, texts, &acked),
            1 => stdio_client(&home, c, texts, &acked),
            _ => http_client(&addr, c, texts, &acked),
        }));
    }
    for h in handles {
        h.join().expect("a client failed");
    }
    drop(server);

    // Every text the store holds: memories, revisions, evidence.
    let out = command(&home).args(["export"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut held: HashSet<String> = HashSet::new();
    let mut superseded = Vec::new();
    let mut evidence = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(c) = v["content"].as_str() {
            held.insert(c.to_string());
        }
        evidence += usize::from(v["type"] == "evidence");
        if v["type"] == "memory" && v["tier"] == "superseded" {
            superseded.push(v["content"].as_str().unwrap_or_default().to_string());
        }
    }
    let acked = acked.lock().unwrap();
    let expected: usize = (0..clients).map(|c| script(c, rounds, clients).len()).sum();
    assert_eq!(acked.len(), expected, "every write acknowledged");
    let lost: Vec<&String> = acked.iter().filter(|t| !held.contains(*t)).collect();
    eprintln!(
        "words harness: {clients} clients, {} acknowledged texts, {evidence} kept as evidence, {} lost, {} superseded",
        acked.len(),
        lost.len(),
        superseded.len()
    );
    assert!(lost.is_empty(), "{} texts lost: {lost:?}", lost.len());
    assert!(superseded.is_empty(), "superseded: {superseded:?}");
    // The near-duplicates were folded into other memories: the evidence path ran.
    assert!(evidence > 0, "no write was folded into another memory");
}

/// Writes through the CLI with resolution on; returns the JSON reply.
fn cli_json(home: &std::path::Path, args: &[&str]) -> Value {
    let out = command(home)
        .envs(RESOLVE_ON.iter().copied())
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_supersession_is_undone_in_one_step_from_the_cli_and_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let old = cli_json(
        home,
        &[
            "remember",
            "The project database is PostgreSQL.",
            "--room",
            "app",
        ],
    );
    let new = cli_json(
        home,
        &[
            "remember",
            "We switched from PostgreSQL to SQLite for the project database.",
            "--room",
            "app",
        ],
    );
    assert_eq!(new["action"], "superseded", "{new}");
    let id = old["id"].as_i64().unwrap().to_string();
    let u = cli_json(home, &["unsupersede", &id]);
    assert_eq!(u["superseded_by"], new["id"], "{u}");
    let shown = cli_json(home, &["show", &id]);
    assert_eq!(shown["memory"]["tier"], "active", "{shown}");
    // Again: refused, naming the field.
    let out = command(home).args(["unsupersede", &id]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not superseded"));

    // The MCP tool, in the admin set.
    let a = cli_json(
        home,
        &["remember", "The queue is RabbitMQ.", "--room", "app"],
    );
    let b = cli_json(
        home,
        &[
            "remember",
            "We moved from RabbitMQ to NATS for the queue.",
            "--room",
            "app",
        ],
    );
    assert_eq!(b["action"], "superseded", "{b}");
    let mut m = Mcp::start_with(home, &["--tools", "admin"], "admin", RESOLVE_ON);
    let r = m.call("unsupersede", json!({"id": a["id"]}));
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(r["structuredContent"]["superseded_by"], b["id"], "{r}");
}

#[test]
fn compat_c_leaves_contradictions_for_mem_judge_unless_opted_in() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let save = |m: &mut Mcp, content: &str| -> Value {
        let r = m.call(
            "mem_save",
            json!({"title": "Database", "content": content, "project": "app"}),
        );
        assert_ne!(r["isError"], true, "{r}");
        r["structuredContent"].clone()
    };
    let mut c = Mcp::start_with(home, &["--tools", "compat-c"], "c", RESOLVE_ON);
    // C refuses a project it does not know; a session there makes `app` one.
    c.call(
        "mem_session_start",
        json!({"id": "s-app", "project": "app"}),
    );
    let a = save(&mut c, "The project database is PostgreSQL.");
    let b = save(
        &mut c,
        "We switched from PostgreSQL to SQLite for the project database.",
    );
    assert!(
        b["result"]
            .as_str()
            .unwrap()
            .contains("CONFLICT REVIEW PENDING"),
        "{b}"
    );
    assert_eq!(b["candidates"][0]["id"], a["id"], "{b}");
    let shown = cli_json(home, &["show", &a["id"].to_string()]);
    assert_eq!(
        shown["memory"]["tier"], "active",
        "C leaves it to the agent"
    );
    // C's search marks the pending judgment, then the judged supersession, and still
    // shows the old memory.
    let search = |c: &mut Mcp| -> Value {
        let r = c.call("mem_search", json!({"query": "database", "project": "app"}));
        assert_ne!(r["isError"], true, "{r}");
        r["structuredContent"].clone()
    };
    let s = search(&mut c);
    let text = s["result"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "conflict: contested by #{} (pending)",
            b["sync_id"].as_str().unwrap()
        )),
        "{text}"
    );
    assert!(text.contains("state: needs_review"), "{text}");
    let r = c.call(
        "mem_judge",
        json!({"judgment_id": b["judgment_id"], "relation": "supersedes"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let row = &r["structuredContent"]["relation"];
    assert_eq!(row["sync_id"], b["judgment_id"], "C's relation row: {r}");
    assert_eq!(row["judgment_status"], "judged", "{r}");
    assert_eq!(row["source_id"], b["sync_id"], "{r}");
    assert_eq!(row["target_id"], a["sync_id"], "{r}");
    let s = search(&mut c);
    let text = s["result"].as_str().unwrap();
    assert!(
        text.contains(&format!("supersedes: #{} (Database)", a["id"])),
        "{text}"
    );
    assert!(
        text.contains(&format!("superseded_by: #{} (Database)", b["id"])),
        "the old memory is shown, marked: {text}"
    );
    assert!(!text.contains("needs_review"), "judged: {text}");
    let old = s["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == a["id"])
        .expect("the superseded memory is listed");
    assert_eq!(old["state"], "active", "{old}");
    drop(c);

    // Opted in: engram's automatic supersession.
    let env = [
        ("ENGRAM_RESOLVE", "true"),
        ("ENGRAM_COMPAT_C_AUTO_SUPERSEDE", "true"),
    ];
    let mut c = Mcp::start_with(home, &["--tools", "compat-c"], "c", &env);
    let x = save(&mut c, "The cache is Memcached.");
    let y = save(&mut c, "We replaced Memcached with Redis for the cache.");
    assert!(y["result"].as_str().unwrap().contains("supersedes"), "{y}");
    let shown = cli_json(home, &["show", &x["id"].to_string()]);
    assert_eq!(shown["memory"]["tier"], "superseded", "{shown}");
}
