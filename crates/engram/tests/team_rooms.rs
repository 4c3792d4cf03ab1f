//! A team server with two users, through real HTTP: a private memory of alice's does not
//! exist for bob (recall, context, stats and A's REST recall), shared ones carry their
//! author, and a missing, wrong or revoked token gets 401 and writes nothing. Runs on
//! SQLite, and on PostgreSQL too when `ENGRAM_TEST_PG` names a test server.
//!
//! Then every tool of every profile, called by bob with arguments aimed at alice's private
//! memory (its id, its words, the `private` room), and every GET of seed C's API and the
//! UI's: no answer holds its words or its uid, and it is untouched afterwards.

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use support::command;

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

fn engram(home: &Path, store: Option<&str>, args: &[&str]) -> String {
    let mut c = command(home);
    if let Some(url) = store {
        c.env("ENGRAM_STORE", url);
    }
    let out = c.args(args).stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "engram {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn serve(home: &Path, store: Option<&str>) -> Server {
    let mut c = command(home);
    if let Some(url) = store {
        c.env("ENGRAM_STORE", url);
    }
    let mut child = c
        .args(["serve", "--http", "127.0.0.1:0", "--tools", "admin"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = support::http_addr(&mut child);
    Server { child, addr }
}

/// One HTTP POST; the status, the head and the body.
fn http(
    addr: &str,
    path: &str,
    token: Option<&str>,
    headers: &str,
    body: &str,
) -> (u16, String, String) {
    http_method("POST", addr, path, token, headers, body)
}

/// One HTTP request; the status, the head and the body.
fn http_method(
    method: &str,
    addr: &str,
    path: &str,
    token: Option<&str>,
    headers: &str,
    body: &str,
) -> (u16, String, String) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        c,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    let _ = c.read_to_string(&mut reply);
    let status = reply
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {reply}"));
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    (status, head.to_string(), body.to_string())
}

/// The JSON-RPC message in a reply body (plain JSON or an SSE `data:` line).
fn rpc_message(body: &str) -> Value {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(std::iter::once(body))
        .find_map(|l| {
            serde_json::from_str::<Value>(l.trim())
                .ok()
                .filter(|v| v.get("jsonrpc").is_some())
        })
        .unwrap_or_else(|| panic!("no JSON-RPC message in {body}"))
}

/// An MCP session over HTTP as one user.
struct Session<'a> {
    addr: &'a str,
    token: &'a str,
    id: String,
}

impl<'a> Session<'a> {
    fn open(addr: &'a str, token: &'a str) -> Session<'a> {
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"team-test","version":"1"}}});
        let (status, head, body) = http(addr, "/mcp", Some(token), "", &init.to_string());
        assert_eq!(status, 200, "{body}");
        let id = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("mcp-session-id")
                    .then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("no session id in {head}"));
        let s = Session { addr, token, id };
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        s.post(&note.to_string());
        s
    }

    fn post(&self, body: &str) -> (u16, String) {
        let (status, _, body) = http(
            self.addr,
            "/mcp",
            Some(self.token),
            &format!("Mcp-Session-Id: {}\r\n", self.id),
            body,
        );
        (status, body)
    }

    /// Every tool this session's server offers, with its input schema.
    fn tools(&self) -> Vec<Value> {
        let req = json!({"jsonrpc":"2.0","id":3,"method":"tools/list"});
        let (status, body) = self.post(&req.to_string());
        assert_eq!(status, 200, "{body}");
        rpc_message(&body)["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools: {body}"))
            .clone()
    }

    /// The whole reply of a tool call, as text (result or error).
    fn call_raw(&self, tool: &str, args: Value) -> String {
        let req = json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":tool,"arguments":args}});
        let (_, body) = self.post(&req.to_string());
        body
    }

    /// A tool's structured result (an error result too).
    fn call(&self, tool: &str, args: Value) -> Value {
        let req = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":tool,"arguments":args}});
        let (status, body) = self.post(&req.to_string());
        assert_eq!(status, 200, "{tool}: {body}");
        let m = rpc_message(&body);
        m["result"]["structuredContent"].clone()
    }
}

fn token_of(out: &str) -> String {
    out.split_whitespace()
        .find(|w| w.starts_with("engram_"))
        .unwrap_or_else(|| panic!("no token in {out}"))
        .to_string()
}

fn fresh_pg_database(name: &str) -> Option<String> {
    let admin = std::env::var("ENGRAM_TEST_PG").ok()?;
    let db = format!("engram_team_{name}_{}", std::process::id());
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).expect("the test server");
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))
        .unwrap();
    c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    let (base, query) = admin.split_once('?').unwrap_or((&admin, ""));
    let start = base.find("://").unwrap() + 3;
    let host_end = base[start..].find('/').map_or(base.len(), |i| start + i);
    let query = if query.is_empty() {
        String::new()
    } else {
        format!("?{query}")
    };
    Some(format!("{}/{db}{query}", &base[..host_end]))
}

fn private_stays_private(store: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let alice = token_of(&engram(home, store, &["team", "user", "add", "alice"]));
    let bob = token_of(&engram(home, store, &["team", "user", "add", "bob"]));
    let carol = token_of(&engram(home, store, &["team", "user", "add", "carol"]));
    engram(home, store, &["team", "token", "revoke", "carol"]);
    let listed = engram(home, store, &["--json", "team", "user", "list"]);
    assert!(
        !listed.contains("engram_"),
        "a listing never shows a token: {listed}"
    );
    let srv = serve(home, store);

    // Refused requests: 401 with a JSON body naming no one, and nothing written.
    let store_body = json!({"content": "Zanzibar intruder note", "user_id": "team"}).to_string();
    for (who, token) in [
        ("missing", None),
        ("wrong", Some("engram_0000")),
        ("revoked", Some(carol.as_str())),
    ] {
        for path in [
            "/mcp",
            "/v1/store",
            "/observations",
            "/ui/api/memories",
            "/health",
        ] {
            let (status, _, body) = http(&srv.addr, path, token, "", &store_body);
            assert_eq!(status, 401, "{who} token on {path}: {body}");
            let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
            assert_eq!(v["error"]["code"], "unauthorized", "{v}");
            assert!(!body.contains("alice") && !body.contains("bob"), "{body}");
        }
    }

    let stats = engram(home, store, &["--json", "stats"]);
    let v: Value = serde_json::from_str(&stats).unwrap_or_else(|e| panic!("{e}: {stats}"));
    assert_eq!(
        v["total_memories"], 0,
        "a refused request writes nothing: {v}"
    );

    let a = Session::open(&srv.addr, &alice);
    let b = Session::open(&srv.addr, &bob);
    let private = a.call(
        "remember",
        json!({"content": "Alice's locker code is kumquat-42", "room": "private", "kind": "fact"}),
    );
    let private_id = private["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("{private}"));
    let pref = a.call("remember", json!({"content": "Alice prefers kumquat themed editors", "room": "team", "kind": "preference"}));
    assert!(pref["id"].as_i64().is_some(), "{pref}");
    let shared = a.call("remember", json!({"content": "The team deploys kumquat builds with Helm", "room": "team", "kind": "decision"}));
    assert!(shared["id"].as_i64().is_some(), "{shared}");

    // Bob: recall (every tier, in each room), context, stats and A's REST recall never
    // show them.
    let recall = |s: &Session, room: &str| {
        s.call(
            "recall",
            json!({"query": "kumquat", "mode": "exhaustive", "room": room}),
        )
        .to_string()
    };
    let found = recall(&b, "team");
    assert!(
        found.contains("Helm"),
        "bob sees the shared memory: {found}"
    );
    assert!(!found.contains("themed editors"), "{found}");
    assert!(
        found.contains("\"author\":\"alice\""),
        "the author is shown: {found}"
    );
    let found = recall(&b, "private");
    assert!(!found.contains("locker"), "{found}");
    let found = recall(&a, "team");
    assert!(
        found.contains("themed editors"),
        "alice sees her own: {found}"
    );
    let found = recall(&a, "private");
    assert!(found.contains("locker"), "alice sees her own: {found}");

    let ctx = b.call("context", json!({"room": "private"})).to_string();
    assert!(!ctx.contains("locker"), "{ctx}");
    let (status, _, rest) = http(
        &srv.addr,
        "/v1/recall",
        Some(&bob),
        "",
        &json!({"query": "kumquat locker", "user_id": "private"}).to_string(),
    );
    assert_eq!(status, 200, "{rest}");
    assert!(!rest.contains("locker"), "{rest}");

    // Explain by id: alice's private id is "not found" for bob, worded as a missing id.
    let hidden = b.call("explain", json!({"id": private_id})).to_string();
    let missing = b.call("explain", json!({"id": 999_999})).to_string();
    assert!(!hidden.contains("locker"), "{hidden}");
    assert_eq!(
        hidden.replace(&format!("#{private_id}"), "#N"),
        missing.replace("#999999", "#N"),
        "a private id reads exactly as a missing one"
    );
    // The web UI signs in with a user's token too (its cookie), and lists as that user.
    let cookie = |t: &str| {
        let hex: String = t.bytes().map(|b| format!("{b:02x}")).collect();
        format!("Cookie: engram_ui_token={hex}\r\n")
    };
    let (status, _, listed) = http_method(
        "GET",
        &srv.addr,
        "/ui/api/memories",
        None,
        &cookie(&bob),
        "",
    );
    assert_eq!(status, 200, "{listed}");
    assert!(
        listed.contains("Helm") && !listed.contains("locker"),
        "{listed}"
    );
    let (status, _, listed) = http_method(
        "GET",
        &srv.addr,
        "/ui/api/memories",
        None,
        &cookie(&alice),
        "",
    );
    assert_eq!(status, 200, "{listed}");
    assert!(listed.contains("locker"), "{listed}");
    let (status, _, _) = http_method(
        "GET",
        &srv.addr,
        "/ui/api/memories",
        None,
        &cookie(&carol),
        "",
    );
    assert_eq!(status, 401, "a revoked token's cookie is refused");

    // Counts: bob's stats count only what he may see.
    let a_stats = a.call("stats", json!({})).to_string();
    let b_stats = b.call("stats", json!({})).to_string();
    assert_ne!(a_stats, b_stats, "alice counts two more memories");
    // Bob cannot reinforce or forget alice's private memory either.
    let r = b.call("forget", json!({"id": private_id})).to_string();
    assert!(r.contains("no memory"), "{r}");
    let still = a
        .call(
            "recall",
            json!({"query": "locker code", "mode": "exhaustive", "room": "private"}),
        )
        .to_string();
    assert!(
        still.contains("locker"),
        "alice's memory is untouched: {still}"
    );
}

/// Arguments for `tool` aimed at alice's private memory: every id-like argument names it,
/// every query-like one asks for its words, every room-like one is `private`; the other
/// required arguments get a harmless value of their type.
/// Alice's session in her private room, and the words of her prompt there.
const PRIVATE_SESSION: &str = "alice-private-session";
const PRIVATE_PROMPT: &str = "mango-77 is the gate code";

/// Alice starts a private session and sends a prompt in it, over C's HTTP API; the
/// prompt's id.
fn alice_private_session(addr: &str, alice: &str) -> i64 {
    let body = json!({"id": PRIVATE_SESSION, "project": "private"}).to_string();
    let (status, _, reply) = http(addr, "/sessions", Some(alice), "", &body);
    assert_eq!(status, 201, "{reply}");
    let body =
        json!({"session_id": PRIVATE_SESSION, "content": PRIVATE_PROMPT, "project": "private"})
            .to_string();
    let (status, _, reply) = http(addr, "/prompts", Some(alice), "", &body);
    assert_eq!(status, 201, "{reply}");
    let v: Value = serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply}"));
    v["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("no prompt id: {reply}"))
}

/// Bob's HTTP calls on alice's private session and prompt find nothing and change
/// nothing; alice still sees both.
fn http_sessions_keep_it_private(addr: &str, alice: &str, bob: &str, prompt: i64) {
    let session = format!("/sessions/{PRIVATE_SESSION}");
    for (method, path) in [
        ("GET", session.clone()),
        ("POST", format!("{session}/end")),
        ("DELETE", format!("/prompts/{prompt}")),
    ] {
        let (status, _, body) = http_method(method, addr, &path, Some(bob), "", "{}");
        assert_eq!(status, 404, "bob {method} {path}: {body}");
    }
    for path in [
        "/sessions/recent",
        "/prompts/recent",
        "/prompts/search?q=mango",
        "/context",
    ] {
        let (_, _, body) = http_method("GET", addr, path, Some(bob), "", "");
        assert!(!body.contains("mango-77"), "GET {path} told bob: {body}");
    }
    let (_, _, body) = http_method("GET", addr, &session, Some(alice), "", "");
    assert!(
        body.contains(PRIVATE_SESSION) && !body.contains("\"ended_at\":\"20"),
        "{body}"
    );
    let (_, _, body) = http_method("GET", addr, "/prompts/recent", Some(alice), "", "");
    assert!(body.contains("mango-77"), "alice lost her prompt: {body}");
}

fn probe_args(tool: &str, schema: &Value, private_id: i64, private_uid: &str) -> Value {
    let mut args = serde_json::Map::new();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let Some(props) = schema["properties"].as_object() else {
        return Value::Object(args);
    };
    for (name, p) in props {
        let ty = p["type"].as_str().unwrap_or_else(|| {
            p["type"]
                .as_array()
                .and_then(|t| t.iter().find_map(|x| x.as_str().filter(|x| *x != "null")))
                .unwrap_or("string")
        });
        let n = name.to_ascii_lowercase();
        let id_like = n == "id"
            || n.ends_with("_id")
            || n.ends_with("ids")
            || n == "src"
            || n == "dst"
            || n == "uid";
        let value = if n == "session_id" || (n == "id" && tool.contains("session")) {
            json!(PRIVATE_SESSION)
        } else if id_like && n != "user_id" && n != "agent_id" {
            match ty {
                "array" => json!([private_id]),
                "integer" | "number" => json!(private_id),
                _ if n == "uid" => json!(private_uid),
                _ => json!(private_id.to_string()),
            }
        } else if ["query", "q", "search", "keyword", "text"].contains(&n.as_str()) {
            json!("kumquat locker")
        } else if ["room", "project", "user_id", "scope"].contains(&n.as_str()) && ty == "string" {
            json!("private")
        } else if required.contains(&name.as_str()) {
            match ty {
                "integer" | "number" => json!(1),
                "boolean" => json!(false),
                "array" => json!([]),
                "object" => json!({}),
                _ => json!("probe from bob"),
            }
        } else {
            continue;
        };
        args.insert(name.clone(), value);
    }
    Value::Object(args)
}

/// Every GET of seed C's API and the UI's API, as bob, answers nothing of alice's private
/// memory (two of them checked to reach it for alice first).
fn http_gets_keep_it_private(addr: &str, alice: &str, bob: &str, pid: i64, puid: &str) {
    // The GETs reach it for alice, so bob's answers below mean something.
    for path in [
        format!("/observations/{pid}"),
        format!("/ui/api/memory/{pid}"),
    ] {
        let (status, _, body) = http_method("GET", addr, &path, Some(alice), "", "");
        assert!(
            status == 200 && body.contains("kumquat-42"),
            "alice GET {path}: {status} {body}"
        );
        let (status, _, _) = http_method("GET", addr, &path, Some(bob), "", "");
        assert_eq!(status, 404, "bob GET {path}: a private id is not found");
    }
    for path in [
        "/ui/api/overview".to_string(),
        "/ui/api/search?q=kumquat%20locker".into(),
        "/ui/api/memories".into(),
        "/ui/api/rooms".into(),
        format!("/ui/api/memory/{pid}"),
        format!("/ui/api/memory/{pid}/curve"),
        "/ui/api/graph".into(),
        "/ui/api/work".into(),
        "/observations/recent".into(),
        format!("/observations/{pid}"),
        "/search?q=kumquat%20locker".into(),
        format!("/timeline?observation_id={pid}"),
        "/context".into(),
        "/export".into(),
        "/stats".into(),
        "/conflicts".into(),
        "/review".into(),
    ] {
        let (_, _, body) = http_method("GET", addr, &path, Some(bob), "", "");
        assert!(
            !body.contains("locker code") && !body.contains(puid),
            "GET {path} told bob of alice's private memory: {body}"
        );
    }
}

/// For every tool of every profile, bob's call aimed at alice's private memory answers
/// nothing of it (not its words, not its uid), whatever the tool does; and afterwards
/// alice's memory is exactly as it was. Then every GET of seed C's API and the UI's API.
fn every_tool_keeps_it_private(store: Option<&str>) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let alice = token_of(&engram(home, store, &["team", "user", "add", "alice"]));
    let bob = token_of(&engram(home, store, &["team", "user", "add", "bob"]));
    let mut private = None;
    let mut prompt = None;
    for profile in [
        "core",
        "engineering",
        "admin",
        "compat-a",
        "compat-b",
        "compat-c",
    ] {
        let mut c = command(home);
        if let Some(url) = store {
            c.env("ENGRAM_STORE", url);
        }
        let child = c
            .args(["serve", "--http", "127.0.0.1:0", "--tools", profile])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut srv = Server {
            child,
            addr: String::new(),
        };
        srv.addr = support::http_addr(&mut srv.child);
        let a = Session::open(&srv.addr, &alice);
        let (pid, puid) = private.clone().unwrap_or_else(|| {
            let m = a.call("remember", json!({"content": "Alice's locker code is kumquat-42", "room": "private", "kind": "fact"}));
            let id = m["id"].as_i64().unwrap_or_else(|| panic!("{m}"));
            a.call("remember", json!({"content": "The team stores kumquat lockers in the hall", "room": "team", "kind": "fact"}));
            let shown = engram(home, store, &["--json", "show", &id.to_string()]);
            let v: Value = serde_json::from_str(&shown).unwrap_or_else(|e| panic!("{e}: {shown}"));
            let uid = v["memory"]["uid"].as_str().or(v["uid"].as_str()).unwrap_or_else(|| panic!("{v}")).to_string();
            (id, uid)
        });
        private = Some((pid, puid.clone()));
        let prompt = *prompt.get_or_insert_with(|| alice_private_session(&srv.addr, &alice));
        let b = Session::open(&srv.addr, &bob);
        let tools = b.tools();
        assert!(!tools.is_empty(), "{profile}");
        // The probes reach the memory: alice's own reads (and recall, which only records
        // hits) with them find it.
        let reached: Vec<&str> = tools
            .iter()
            .filter(|t| {
                let name = t["name"].as_str().unwrap();
                t["annotations"]["readOnlyHint"] == json!(true)
                    || name.contains("recall")
                    || name.contains("search")
            })
            .filter(|t| {
                let args = probe_args(t["name"].as_str().unwrap(), &t["inputSchema"], pid, &puid);
                a.call_raw(t["name"].as_str().unwrap(), args)
                    .contains("kumquat-42")
            })
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(
            !reached.is_empty(),
            "{profile}: no read-only tool of alice's found her memory with the probes"
        );
        eprintln!(
            "{profile}: alice's probes reach it through {reached:?}; bob calls {} tools",
            tools.len()
        );
        for t in &tools {
            let name = t["name"].as_str().unwrap();
            let args = probe_args(name, &t["inputSchema"], pid, &puid);
            let reply = b.call_raw(name, args.clone());
            assert!(
                !reply.contains("locker code")
                    && !reply.contains("kumquat-42")
                    && !reply.contains(&puid)
                    && !reply.contains("mango-77"),
                "{profile}/{name} {args} told bob of alice's private memory or prompt: {reply}"
            );
        }
        // Whatever bob's calls naming her session did, it is still hers and open.
        http_sessions_keep_it_private(&srv.addr, &alice, &bob, prompt);
        if profile == "compat-c" {
            http_gets_keep_it_private(&srv.addr, &alice, &bob, pid, &puid);
        }
    }
    // Nothing bob did touched it.
    let (pid, _) = private.unwrap();
    let shown = engram(home, store, &["--json", "show", &pid.to_string()]);
    assert!(
        shown.contains("kumquat-42") && shown.contains("\"active\""),
        "{shown}"
    );
}

#[test]
fn every_tool_of_every_profile_keeps_a_private_memory_private_on_sqlite() {
    every_tool_keeps_it_private(None);
}

#[test]
fn every_tool_of_every_profile_keeps_a_private_memory_private_on_postgres() {
    let Some(url) = fresh_pg_database("tools") else {
        eprintln!("note: ENGRAM_TEST_PG is not set; skipping the PostgreSQL pass");
        return;
    };
    every_tool_keeps_it_private(Some(&url));
}

#[test]
fn a_private_memory_does_not_exist_for_another_user_on_sqlite() {
    private_stays_private(None);
}

#[test]
fn a_private_memory_does_not_exist_for_another_user_on_postgres() {
    let Some(url) = fresh_pg_database("rooms") else {
        eprintln!("note: ENGRAM_TEST_PG is not set; skipping the PostgreSQL pass");
        return;
    };
    private_stays_private(Some(&url));
}

/// The same through the official MCP Python SDK (`tests/e2e/team_rooms.py`), the users'
/// tokens in its HTTP client: on SQLite, and on PostgreSQL with `ENGRAM_TEST_PG`.
#[test]
fn the_python_sdk_sees_the_same_privacy() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var("ENGRAM_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "ENGRAM_TEST_PYTHON is not set: run the suite with scripts/test, which installs the MCP \
             Python SDK into target/e2e-venv and points this variable at it"
        )
    });
    let pg = fresh_pg_database("sdk");
    for store in [None, pg.as_deref()] {
        let mut c = std::process::Command::new(&python);
        c.arg(root.join("tests/e2e/team_rooms.py"))
            .arg(env!("CARGO_BIN_EXE_engram"))
            .env_remove("ENGRAM_HOME")
            .env_remove("ENGRAM_STORE");
        if let Some(url) = store {
            c.env("ENGRAM_STORE", url);
        }
        let out = c
            .output()
            .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(" passed, 0 failed"),
            "team_rooms.py on {store:?}:\n{}\n{stdout}",
            String::from_utf8_lossy(&out.stderr)
        );
        if pg.is_none() {
            break;
        }
    }
}

/// A store becomes a team's the moment its first user is added, even under a running
/// server: requests without a token that passed before are refused from then on.
#[test]
fn the_first_user_turns_a_running_server_into_a_team_server() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let srv = serve(home, None);
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}).to_string();
    let (status, _, body) = http(&srv.addr, "/mcp", None, "", &init);
    assert_eq!(
        status, 200,
        "one person's loopback server needs no token: {body}"
    );
    let token = token_of(&engram(home, None, &["team", "user", "add", "alice"]));
    let (status, _, body) = http(&srv.addr, "/mcp", None, "", &init);
    assert_eq!(status, 401, "{body}");
    let (status, _, body) = http(&srv.addr, "/mcp", Some(&token), "", &init);
    assert_eq!(status, 200, "{body}");
}

/// A team store's users' tokens guard a bind beyond loopback as the single token would:
/// the server starts without `ENGRAM_HTTP_TOKEN`, and refuses requests without a user's.
#[test]
fn a_team_server_may_bind_beyond_loopback_without_the_single_token() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    let token = token_of(&engram(home, None, &["team", "user", "add", "alice"]));
    let mut child = command(home)
        .args(["serve", "--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bound = support::http_addr(&mut child);
    let srv = Server {
        child,
        addr: bound.replace("0.0.0.0", "127.0.0.1"),
    };
    let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}).to_string();
    let (status, _, body) = http(&srv.addr, "/mcp", None, "", &init);
    assert_eq!(status, 401, "{body}");
    let (status, _, body) = http(&srv.addr, "/mcp", Some(&token), "", &init);
    assert_eq!(status, 200, "{body}");
}
