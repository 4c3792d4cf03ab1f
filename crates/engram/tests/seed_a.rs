//! Switching from seed A, through the built binary: A's REST API (`engram-http`'s `/v1/*`,
//! `/health`) beside `/mcp` on `engram serve --http`, and A's task and checkpoint tools
//! over stdio, a handoff's must-not-redo, must-preserve and working set restored in each
//! of A's modes.

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;
use support::{Mcp, command};

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

/// `engram serve --http 127.0.0.1:0` (the MCP profile is core: A's routes do not depend
/// on it), waiting for the line naming its port.
fn serve(home: &Path, token: Option<&str>) -> Server {
    serve_with(home, token, &[])
}

fn serve_with(home: &Path, token: Option<&str>, env: &[(&str, &str)]) -> Server {
    let mut c = command(home);
    c.envs(env.iter().copied());
    c.args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(t) = token {
        c.env("ENGRAM_HTTP_TOKEN", t);
    }
    let mut child = c.spawn().unwrap();
    let addr = support::http_addr(&mut child);
    Server { child, addr }
}

/// One HTTP/1.1 request with a raw body and extra header lines; the status and JSON body.
fn raw(addr: &str, method: &str, path: &str, body: &str, headers: &str) -> (u16, Value) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n",
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
    let (_, rest) = text.split_once("\r\n\r\n").unwrap_or(("", ""));
    (
        status,
        serde_json::from_str(rest.trim()).unwrap_or(Value::Null),
    )
}

fn post(addr: &str, path: &str, body: Value) -> (u16, Value) {
    raw(addr, "POST", path, &body.to_string(), "")
}

/// A POST that must succeed; its body.
fn ok(addr: &str, path: &str, body: Value) -> Value {
    let (st, v) = post(addr, path, body);
    assert_eq!(st, 200, "{path}: {v}");
    v
}

fn get(addr: &str, path: &str) -> (u16, Value) {
    raw(addr, "GET", path, "", "")
}

fn total(addr: &str) -> u64 {
    ok(addr, "/v1/stats", json!({}))["total"].as_u64().unwrap()
}

#[test]
fn seed_as_rest_api_is_served_beside_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let srv = serve(&home, None);
    let a = srv.addr.as_str();

    // Health, in A's fields: no model is loaded here, so recall is lexical and A's word
    // for that is `degraded`.
    for path in ["/health", "/v1/health"] {
        let (st, h) = get(a, path);
        assert_eq!(st, 200, "{h}");
        assert_eq!(h["status"], "degraded", "{h}");
        assert_eq!(h["embedding_degraded"], true, "{h}");
        assert_eq!(h["fts"], true, "{h}");
        assert_eq!(h["version"], env!("CARGO_PKG_VERSION"));
        assert!(h["db"].as_str().unwrap().ends_with(".db"), "{h}");
        for k in [
            "db_readonly",
            "graph",
            "embedding_stale",
            "residue_files",
            "engram_meta",
            "transports",
        ] {
            assert!(h.get(k).is_some(), "{path} lacks {k}: {h}");
        }
    }

    // The catalogue: every compat-a tool, the routed ones with their path.
    let (st, cat) = get(a, "/v1/tools");
    assert_eq!(st, 200);
    let tools = cat["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 15, "{cat}");
    let path_of = |n: &str| {
        tools
            .iter()
            .find(|t| t["name"] == n)
            .unwrap_or_else(|| panic!("{n} missing"))["path"]
            .clone()
    };
    assert_eq!(path_of("recall_memory"), "/v1/recall");
    assert_eq!(path_of("list_tasks"), "/v1/tasks/list");
    assert_eq!(path_of("restore_checkpoint"), Value::Null);
    assert!(
        tools.iter().all(|t| t["inputSchema"]["type"] == "object"),
        "{cat}"
    );

    // store → recall round trip, in a session whose outcome is then recorded.
    let r = ok(
        a,
        "/v1/store",
        json!({"content": "Deploys go through the blue-green pipeline", "importance": 0.6, "category": "strategy", "user_id": "alice"}),
    );
    assert!(
        r["result"]
            .as_str()
            .unwrap()
            .starts_with("Stored new memory (id="),
        "{r}"
    );
    let mid = r["memory_id"].as_i64().unwrap();
    let r = ok(
        a,
        "/v1/recall",
        json!({"query": "blue-green pipeline", "user_id": "alice", "top_k": 3, "session_id": "s-a1"}),
    );
    assert_eq!(r["memories"][0]["id"], mid, "{r}");
    assert_eq!(r["memories"][0]["category"], "strategy", "{r}");
    let r = ok(
        a,
        "/v1/update",
        json!({"memory_id": mid, "new_content": "Deploys go through the blue-green pipeline, never by hand"}),
    );
    assert_eq!(r["result"], format!("Updated memory (id={mid})"));
    let r = ok(
        a,
        "/v1/session-outcome",
        json!({"session_id": "s-a1", "outcome": "success", "user_id": "alice"}),
    );
    assert_eq!(r["adjusted"][0]["id"], mid, "{r}");
    assert!(
        (r["adjusted"][0]["to"].as_f64().unwrap() - 0.7).abs() < 1e-9,
        "{r}"
    );
    assert!(r["result"].as_str().unwrap().contains("success"), "{r}");

    // A task's lifecycle, its checkpoints written by the hub routes.
    let r = ok(
        a,
        "/v1/tasks",
        json!({"name": "Login rewrite", "goal": "OAuth login with refresh tokens", "user_id": "alice", "metadata": {"ticket": "AUTH-7"}}),
    );
    let tid = r["task_id"].as_i64().unwrap();
    assert_eq!(r["task"]["status"], "planning", "{r}");
    let r = ok(
        a,
        "/v1/tasks/update",
        json!({"task_id": tid, "status": "in_progress"}),
    );
    assert_eq!(r["task"]["status"], "in_progress", "{r}");
    assert_eq!(r["task"]["metadata"]["ticket"], "AUTH-7", "{r}");
    let r = ok(
        a,
        "/v1/handoff",
        json!({
            "summary": "OAuth flow half done", "completed": ["token endpoint"], "next_steps": ["refresh rotation"],
            "user_id": "alice", "task_id": tid,
            "must_not_redo": [{"action": "switch to implicit flow", "reason": "deprecated, leaks tokens"}],
            "must_preserve": ["the /callback URL"],
            "working_set": {"files": ["src/auth.rs"], "tools": ["cargo test"]},
        }),
    );
    assert_eq!(r["task_id"], tid, "{r}");
    assert_eq!(r["checkpoint_version"], 1, "{r}");
    let r = ok(
        a,
        "/v1/failure",
        json!({"error": "refresh token reused", "component": "auth", "severity": "critical", "user_id": "alice", "task_id": tid}),
    );
    assert_eq!(r["checkpoint_version"], 2, "{r}");
    let r = ok(
        a,
        "/v1/progress",
        json!({"feature": "login", "status": "in_progress", "completion": 60, "user_id": "alice", "task_id": tid}),
    );
    assert_eq!(r["checkpoint_version"], 3, "{r}");
    // The handoff recall puts first carries A's numbers: its strength now, and the
    // quality_score key (tester-a: strength was 0 and the key was missing).
    let r = ok(
        a,
        "/v1/recall",
        json!({"query": "zebra crossing", "user_id": "alice"}),
    );
    let first = &r["memories"][0];
    assert!(first["handoff_validation"].is_array(), "{r}");
    assert!(first["strength"].as_f64().is_some_and(|s| s > 0.0), "{r}");
    assert!(first["quality_score"].is_number(), "{r}");
    let r = ok(a, "/v1/tasks/get", json!({"task_id": tid}));
    assert_eq!(r["name"], "Login rewrite", "{r}");
    assert_eq!(
        (
            r["handoffs"].as_array().unwrap().len(),
            r["failures"].as_array().unwrap().len(),
            r["progress"].as_array().unwrap().len()
        ),
        (1, 1, 1),
        "{r}"
    );
    assert_eq!(r["latest_checkpoint"]["version"], 3, "{r}");
    let r = ok(
        a,
        "/v1/tasks/list",
        json!({"user_id": "alice", "status": "in_progress"}),
    );
    assert_eq!(r["tasks"][0]["task_id"], tid, "{r}");
    let r = ok(
        a,
        "/v1/tasks/list",
        json!({"user_id": "alice", "status": "done"}),
    );
    assert_eq!(r["count"], 0, "{r}");
    let s = ok(a, "/v1/stats", json!({"user_id": "alice"}));
    assert_eq!(
        s["engineering"]["failures"]["by_severity"]["critical"], 1,
        "{s}"
    );
    let r = ok(a, "/v1/consolidate", json!({"user_id": "alice"}));
    assert!(
        r["result"].as_str().unwrap().starts_with("Consolidated"),
        "{r}"
    );

    // Refused bodies are 400 naming the field, and write nothing.
    let before = total(a);
    let (st, v) = raw(a, "POST", "/v1/store", "{not json", "");
    assert_eq!(
        (st, &v["ok"], &v["field"]),
        (400, &json!(false), &json!("body")),
        "{v}"
    );
    let (st, v) = raw(a, "POST", "/v1/store", "[1, 2]", "");
    assert_eq!((st, &v["field"]), (400, &json!("body")), "{v}");
    let (st, v) = post(a, "/v1/store", json!({"content": "no importance"}));
    assert_eq!((st, &v["field"]), (400, &json!("importance")), "{v}");
    let (st, v) = post(
        a,
        "/v1/store",
        json!({"content": "x", "importance": 0.5, "colour": "red"}),
    );
    assert_eq!((st, &v["field"]), (400, &json!("colour")), "{v}");
    let (st, v) = post(
        a,
        "/v1/store",
        json!({"content": "x", "importance": 0.5, "metadata": {"task_id": 999999}}),
    );
    assert_eq!((st, &v["field"]), (400, &json!("metadata.task_id")), "{v}");
    let (st, v) = post(a, "/v1/tasks/get", json!({"task_id": mid}));
    assert_eq!(
        (st, &v["field"]),
        (400, &json!("task_id")),
        "a memory that is not a task: {v}"
    );
    let (st, v) = post(
        a,
        "/v1/tasks/update",
        json!({"task_id": tid, "status": "someday"}),
    );
    assert_eq!((st, &v["field"]), (400, &json!("status")), "{v}");
    let (st, v) = post(a, "/v1/handoff", json!({"summary": "s", "task_id": 999999}));
    assert_eq!((st, &v["field"]), (400, &json!("task_id")), "{v}");
    let (st, v) = post(
        a,
        "/v1/handoff",
        json!({"summary": "s", "must_not_redo": [{"reason": "no action"}]}),
    );
    assert_eq!(st, 400, "{v}");
    assert_eq!(total(a), before, "refused requests wrote nothing");
    let r = ok(a, "/v1/tasks/get", json!({"task_id": tid}));
    assert_eq!(
        r["status"], "in_progress",
        "the refused update left the task as it was"
    );
    drop(srv);

    // The checkpoint tools over stdio, on the same store: each restore mode.
    let mut mcp = Mcp::start(&home, &["--tools", "compat-a"], "seed-a-test");
    let names: Vec<String> = mcp.request("tools/list", json!({}))["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    // A took up to 100 KB: a 70 KB memory is stored (as linked parts), 101 KB is refused.
    let long = "a design note line. ".repeat(3_600);
    let r = mcp.call("store_memory", json!({"content": long, "importance": 0.5}));
    assert_ne!(
        r["isError"],
        true,
        "{}",
        r.to_string().chars().take(300).collect::<String>()
    );
    let long_id = r["structuredContent"]["memory_id"].as_i64().unwrap();
    // …and recalled as A kept it, one memory with the whole text (tester-a: its parts came
    // back as two hits, each with part of it).
    let r = mcp.call(
        "recall_memory",
        json!({"query": "design note line", "top_k": 5}),
    );
    let hits: Vec<&Value> = r["structuredContent"]["memories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.contains("design note line"))
        })
        .collect();
    assert_eq!(hits.len(), 1, "one hit for the long text");
    assert_eq!(hits[0]["id"], long_id);
    assert_eq!(hits[0]["content"].as_str().unwrap().len(), long.len());
    let huge = "x".repeat(101 * 1024);
    let r = mcp.call("store_memory", json!({"content": huge, "importance": 0.5}));
    assert_eq!(r["isError"], true);
    assert!(
        r["content"][0]["text"].as_str().unwrap().contains("102400"),
        "{}",
        r["content"][0]["text"]
    );
    // A refused call answers A's error JSON, which A's clients parse (tester-a).
    let r = mcp.call(
        "update_memory",
        json!({"memory_id": 99_999, "new_content": "x"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("{e}: {r}"));
    assert_eq!(text["ok"], false, "{text}");
    assert!(
        text["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{text}"
    );
    for t in [
        "create_task",
        "update_task",
        "get_task",
        "list_tasks",
        "session_outcome",
        "restore_checkpoint",
        "list_checkpoints",
    ] {
        assert!(
            names.iter().any(|n| n == t),
            "compat-a lacks {t}: {names:?}"
        );
    }
    // A memory joins the task through its metadata.
    let low = mcp.call("store_memory", json!({"content": "The staging OAuth client id rotates monthly", "importance": 0.3, "user_id": "alice", "metadata": {"task_id": tid}}));
    let low_id = low["structuredContent"]["memory_id"].as_i64().unwrap();
    let restore = |mcp: &mut Mcp, args: Value| -> Value {
        let r = mcp.call("restore_checkpoint", args);
        assert_ne!(r["isError"], true, "{r}");
        r["structuredContent"].clone()
    };
    let full = restore(
        &mut mcp,
        json!({"task_id": tid, "memory_restore_mode": "FULL"}),
    );
    assert_eq!(full["checkpoint_version"], 3, "{full}");
    let st = &full["state"];
    assert_eq!(st["goal"], "OAuth login with refresh tokens", "{full}");
    assert_eq!(
        st["must_not_redo"],
        json!([{"action": "switch to implicit flow", "reason": "deprecated, leaks tokens"}])
    );
    assert_eq!(st["must_preserve"], json!(["the /callback URL"]));
    assert_eq!(
        st["working_set"],
        json!({"files": ["src/auth.rs"], "tools": ["cargo test"]})
    );
    assert_eq!(st["next_steps"], json!(["refresh rotation"]));
    let ids = |v: &Value| -> Vec<i64> {
        v["memories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_i64().unwrap())
            .collect()
    };
    // The attached memory came after checkpoint 3, so no restore of 3 brings it back…
    assert_eq!(ids(&full).len(), 3, "{full}");
    // …but it is the task's, and the latest state has it once a new checkpoint is written.
    let got = mcp.call("get_task", json!({"task_id": tid}));
    assert_eq!(
        got["structuredContent"]["memories"][0]["id"], low_id,
        "{got}"
    );
    mcp.call("track_progress", json!({"feature": "login", "status": "review", "completion": 90, "user_id": "alice", "task_id": tid}));
    let full = restore(
        &mut mcp,
        json!({"task_id": tid, "memory_restore_mode": "full"}),
    );
    assert!(
        ids(&full).contains(&low_id),
        "FULL brings every task memory: {full}"
    );
    let selective = restore(&mut mcp, json!({"task_id": tid}));
    assert_eq!(selective["memory_restore_mode"], "SELECTIVE");
    assert!(
        !ids(&selective).contains(&low_id),
        "SELECTIVE leaves out importance 0.3: {selective}"
    );
    assert_eq!(ids(&selective).len(), 4, "{selective}");
    assert_eq!(
        selective["state"]["must_preserve"],
        json!(["the /callback URL"])
    );
    let none = restore(
        &mut mcp,
        json!({"task_id": tid, "memory_restore_mode": "NONE"}),
    );
    assert!(ids(&none).is_empty(), "{none}");
    assert_eq!(
        none["state"]["working_set"]["files"],
        json!(["src/auth.rs"])
    );
    // An older version, and the task found without its id.
    let v1 = restore(
        &mut mcp,
        json!({"task_id": tid, "version": 1, "memory_restore_mode": "FULL"}),
    );
    assert_eq!(
        (v1["checkpoint_version"].clone(), ids(&v1).len()),
        (json!(1), 1),
        "{v1}"
    );
    let current = restore(&mut mcp, json!({"user_id": "alice"}));
    assert_eq!(current["task_id"], tid, "{current}");
    let cps = mcp.call("list_checkpoints", json!({"task_id": tid, "limit": 2}));
    let cps = &cps["structuredContent"]["checkpoints"];
    assert_eq!(
        (
            cps[0]["version"].clone(),
            cps[0]["reason"].clone(),
            cps[1]["reason"].clone()
        ),
        (json!(4), json!("PROGRESS"), json!("PROGRESS")),
        "{cps}"
    );
    let bad = mcp.call(
        "restore_checkpoint",
        json!({"task_id": tid, "memory_restore_mode": "MOST"}),
    );
    assert_eq!(bad["isError"], true);
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("memory_restore_mode"),
        "{bad}"
    );
    let bad = mcp.call("restore_checkpoint", json!({"task_id": tid, "version": 99}));
    assert!(
        bad["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("version"),
        "{bad}"
    );
    mcp.finish();
}

#[test]
fn seed_as_rest_api_requires_the_token_when_one_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let srv = serve(dir.path(), Some("a-secret-token"));
    let a = srv.addr.as_str();
    for (method, path) in [
        ("GET", "/health"),
        ("GET", "/v1/tools"),
        ("POST", "/v1/store"),
    ] {
        let (st, _) = raw(
            a,
            method,
            path,
            r#"{"content": "x", "importance": 0.5}"#,
            "",
        );
        assert_eq!(st, 401, "{method} {path} without the token");
        let (st, _) = raw(
            a,
            method,
            path,
            r#"{"content": "x", "importance": 0.5}"#,
            "Authorization: Bearer wrong\r\n",
        );
        assert_eq!(st, 401, "{method} {path} with a wrong token");
    }
    let auth = "Authorization: Bearer a-secret-token\r\n";
    let (st, v) = raw(a, "POST", "/v1/stats", "{}", auth);
    assert_eq!(
        (st, v["total"].clone()),
        (200, json!(0)),
        "nothing was written without the token: {v}"
    );
    let (st, v) = raw(
        a,
        "POST",
        "/v1/store",
        r#"{"content": "with the token", "importance": 0.5}"#,
        auth,
    );
    assert_eq!(st, 200, "{v}");
}

/// A's users call A's tool names (their CLAUDE.md, or A's data in the home that a bare
/// `engram` serves compat-a for): setup registers `mcp --tools=compat-a` and leaves A's
/// instructions as they are.
#[test]
fn setup_registers_compat_a_for_a_users() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(user.join(".claude")).unwrap();
    let rules = "## Memory rules\nCall recall_memory at the start; store_memory for decisions; session_handoff at the end.\n";
    std::fs::write(user.join(".claude/CLAUDE.md"), rules).unwrap();
    std::fs::write(
        user.join(".claude.json"),
        r#"{"mcpServers":{"engram":{"command":"engram"}}}"#,
    )
    .unwrap();
    let setup = |client: &str| {
        let out = command(&home)
            .env("HOME", &user)
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
    };
    let stdout = setup("claude");
    assert!(stdout.contains("profile compat-a"), "{stdout}");
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(user.join(".claude.json")).unwrap()).unwrap();
    assert_eq!(
        cfg["mcpServers"]["engram"]["args"],
        json!(["mcp", "--tools=compat-a"]),
        "{cfg}"
    );
    assert_eq!(
        std::fs::read_to_string(user.join(".claude/CLAUDE.md")).unwrap(),
        rules,
        "A's instructions are left as they are"
    );

    // No instructions, but A's data in the home: compat-a too.
    std::fs::create_dir_all(user.join(".gemini")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("memories.duckdb"), b"DUCK").unwrap();
    let stdout = setup("gemini");
    assert!(stdout.contains("profile compat-a"), "{stdout}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(user.join(".gemini/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["mcpServers"]["engram"]["args"],
        json!(["mcp", "--tools=compat-a"]),
        "{settings}"
    );
}

/// `engram serve --http` without `--tools` serves what a bare `engram` would: compat-a at
/// `/mcp` when A's data is in the home (A's REST scripts and MCP clients share a server).
#[test]
fn serve_picks_compat_a_when_as_data_is_in_the_home() {
    use std::io::BufRead;
    let tools_served = |home: &Path| -> String {
        let mut child = command(home)
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let line = lines
            .by_ref()
            .map_while(Result::ok)
            .find(|l| l.contains("MCP over HTTP"))
            .expect("the server names its address");
        let _ = child.kill();
        let _ = child.wait();
        line
    };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    let a = dir.path().join("a");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::write(a.join("memories.duckdb"), b"DUCK").unwrap();
    let (core, compat_a) = (tools_served(&plain), tools_served(&a));
    assert!(core.contains("(7 tools)"), "{core}");
    assert!(compat_a.contains("(15 tools)"), "{compat_a}");
    // Imported, A's user still gets A's tools with A's files moved away (tester-a).
    let imported = dir.path().join("imported");
    std::fs::create_dir_all(&imported).unwrap();
    let rows = imported.join("a.jsonl");
    std::fs::write(
        &rows,
        r#"{"id":1,"user_id":"default","content":"Prefer pytest fixtures","importance":0.7,"category":"strategy","recall_count":4,"created_at":"2025-06-01 12:00:00","metadata":{}}"#,
    )
    .unwrap();
    succeeds(command(&imported).args(["import", "--no-embed"]).arg(&rows));
    let served = tools_served(&imported);
    assert!(served.contains("(15 tools)"), "{served}");
}

/// A second server on a port another one holds exits 2 (a usage error, as seed A's server
/// did) with a message naming the port, instead of 1 with only the OS error.
#[test]
fn a_second_server_on_a_busy_port_exits_2_naming_the_port() {
    let dir = tempfile::tempdir().unwrap();
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let out = command(dir.path())
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("port {port}")) && stderr.contains("already in use"),
        "{stderr}"
    );
    drop(holder);
}

/// `setup --remove` gives back the memory server the user had before setup first changed
/// the file (seed A's `{"command": "engram"}`, kept in `.engram.bak`). Before, the entry
/// was deleted and only the backup held it.
#[test]
fn setup_remove_restores_as_entry() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(user.join(".claude")).unwrap();
    std::fs::write(
        user.join(".claude.json"),
        r#"{"numStartups":3,"mcpServers":{"engram":{"command":"engram"}}}"#,
    )
    .unwrap();
    let setup = |extra: &[&str]| {
        let out = command(&home)
            .env("HOME", &user)
            .env("PATH", "/nonexistent")
            .args(["setup", "claude", "--non-interactive", "--no-model"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let entry = || -> Value {
        let cfg: Value =
            serde_json::from_str(&std::fs::read_to_string(user.join(".claude.json")).unwrap())
                .unwrap();
        cfg["mcpServers"]["engram"].clone()
    };
    setup(&[]);
    assert_eq!(entry()["command"], env!("CARGO_BIN_EXE_engram"));
    setup(&["--remove"]);
    assert_eq!(entry(), json!({"command": "engram"}));
}

/// Waits until `/health` says the model is not in memory: the idle watcher's work, seen
/// from outside (a deadline, not a sleep: the watcher looks every second).
fn await_unloaded(a: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (_, h) = get(a, "/health");
        let reason = h["embedding_reason"].as_str().unwrap_or("");
        if reason.contains("not in memory") {
            return h;
        }
        assert!(std::time::Instant::now() < deadline, "never unloaded: {h}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Seed B's `ENGRAM_PRELOAD=off` and `ENGRAM_IDLE_UNLOAD_SEC`: the server starts without
/// the model, the first call loads it (a recall by meaning, not lexical), an idle second
/// frees it, and the next call loads it again. With the model, A's similarity floors keep
/// A's recall to real matches (an unrelated memory came back as `similarity 0.0` before).
#[test]
fn the_model_loads_on_demand_and_is_freed_when_idle_and_a_floors_hold() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let model = support::model_dir();
    let env = [
        ("ENGRAM_MODEL", model.as_str()),
        ("ENGRAM_PRELOAD", "off"),
        ("ENGRAM_IDLE_UNLOAD_SEC", "1"),
        ("ENGRAM_FIRST_RECALL_WAIT_MS", "120000"),
    ];
    let srv = serve_with(&home, None, &env);
    let a = srv.addr.as_str();
    let (_, h) = get(a, "/health");
    assert!(
        h["embedding_reason"]
            .as_str()
            .unwrap()
            .contains("not in memory"),
        "{h}"
    );

    ok(
        a,
        "/v1/store",
        json!({"content": "The nightly backup of the NAS starts at 02:00", "importance": 0.6}),
    );
    ok(
        a,
        "/v1/store",
        json!({"content": "Lunch is served at noon in the canteen", "importance": 0.6}),
    );
    let recall = |q: &str| ok(a, "/v1/recall", json!({"query": q}));
    let r = recall("what time does the backup job run at night");
    assert!(r.get("lexical_reason").is_none(), "{r}");
    let found = r["memories"].as_array().unwrap();
    assert!(
        found[0]["content"]
            .as_str()
            .unwrap()
            .contains("nightly backup"),
        "{r}"
    );
    assert!(found[0]["similarity"].as_f64().unwrap() >= 0.5, "{r}");
    assert!(
        found
            .iter()
            .all(|m| !m["content"].as_str().unwrap().contains("Lunch")),
        "under A's floors the unrelated memory stays out: {r}"
    );

    await_unloaded(a);
    let again = recall("when is the NAS backed up");
    assert!(
        again.get("lexical_reason").is_none(),
        "reloaded for the call: {again}"
    );
    assert!(
        again["memories"][0]["content"]
            .as_str()
            .unwrap()
            .contains("nightly backup"),
        "{again}"
    );
    await_unloaded(a);
}

/// After A's tasks are imported, A's own task id in `store_memory`'s `metadata.task_id`
/// names that task: `get_task` with A's id lists the memory (tester-a: only engram's id did).
#[test]
fn as_own_task_ids_link_new_memories_to_imported_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let rows = dir.path().join("a.jsonl");
    std::fs::write(
        &rows,
        [
            r#"{"id":1,"user_id":"default","content":"The staging database is Postgres 16","importance":0.5,"category":"fact","recall_count":0,"created_at":"2025-06-03 13:00:00","metadata":{}}"#,
            // A memory holds the id A's task has too (A numbered them apart).
            r#"{"id":2,"user_id":"default","content":"Deploys go out on Tuesdays","importance":0.5,"category":"fact","recall_count":0,"created_at":"2025-06-03 13:00:00","metadata":{}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let tasks = dir.path().join("a-tasks.jsonl");
    std::fs::write(
        &tasks,
        r#"{"id":2,"name":"Search revamp","goal":"Faster search","status":"in_progress","user_id":"default","created_at":"2025-05-31 09:00:00","updated_at":"2025-06-03 12:00:00","metadata":{}}"#,
    )
    .unwrap();
    succeeds(
        command(&home)
            .args(["import", "--from", "a-jsonl", "--no-embed", "--tasks"])
            .arg(&tasks)
            .arg(&rows),
    );
    let mut mcp = Mcp::start(&home, &["--tools", "compat-a"], "seed-a-test");
    let r = mcp.call(
        "store_memory",
        json!({"content": "Search revamp decision log kept in docs/search.md", "importance": 0.6,
               "metadata": {"task_id": 2}}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let stored = r["structuredContent"]["memory_id"].as_i64().unwrap();
    let r = mcp.call("get_task", json!({"task_id": 2}));
    let listed = r["structuredContent"]["memories"].to_string();
    assert!(listed.contains("docs/search.md"), "{stored}: {r}");
}

/// A replaced a contradicted memory in place, so its id kept naming the memory: after a
/// store that supersedes one, `update_memory` with the old id updates the memory that
/// replaced it and says so (tester-a: it was refused).
#[test]
fn a_superseded_a_id_updates_the_memory_that_replaced_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut mcp = Mcp::start_with(
        &home,
        &["--tools", "compat-a"],
        "seed-a-test",
        &[("ENGRAM_RESOLVE", "true")],
    );
    let r = mcp.call(
        "store_memory",
        json!({"content": "We run CI builds on Jenkins", "importance": 0.6}),
    );
    let old = r["structuredContent"]["memory_id"].as_i64().unwrap();
    let r = mcp.call(
        "store_memory",
        json!({"content": "We switched CI builds from Jenkins to GitHub Actions", "importance": 0.6}),
    );
    assert_eq!(r["structuredContent"]["action"], "superseded", "{r}");
    let new = r["structuredContent"]["memory_id"].as_i64().unwrap();
    assert_eq!(r["structuredContent"]["replaced_id"], old, "{r}");
    let r = mcp.call(
        "update_memory",
        json!({"memory_id": old, "new_content": "We switched CI builds from Jenkins to GitHub Actions in May"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(r["structuredContent"]["memory_id"], new, "{r}");
    assert_eq!(r["structuredContent"]["replaced_id"], old, "{r}");
}

/// Runs an engram command, which must succeed (its stderr is the failure's message).
fn succeeds(c: &mut std::process::Command) {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
