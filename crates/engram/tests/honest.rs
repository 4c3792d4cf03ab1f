//! Honest answers from the built binary: unknown tool arguments are errors naming them, the
//! per-write `resolve` switch exists in MCP and the CLI, a closed pipe ends a command
//! quietly, and HTTP answers JSON-RPC errors as stdio does, accepts `localhost:PORT`, any
//! case of `Bearer`, and refuses a short token on a public bind.

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::Duration;
use support::{Mcp, command};

fn tool_error(r: &Value) -> String {
    assert_eq!(r["isError"], true, "expected a tool error: {r}");
    r["content"][0]["text"].as_str().unwrap().to_string()
}

/// `engram remember … --json` with resolution on, as a user's default config has it.
fn remember(home: &std::path::Path, extra: &[&str]) -> Value {
    let out = command(home)
        .arg("remember")
        .args(extra)
        .args(["--room", "app", "--json"])
        .env("ENGRAM_RESOLVE", "true")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn unknown_arguments_are_errors_and_resolve_is_a_per_write_switch() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Mcp::start(dir.path(), &["--tools", "all"], "test");
    let r = m.call(
        "remember",
        json!({"content": "We deploy on Fridays.", "resolv": false}),
    );
    let msg = tool_error(&r);
    assert!(msg.contains("`resolv`"), "{msg}");
    let r = m.call("recall", json!({"query": "deploy", "limt": 3}));
    assert!(tool_error(&r).contains("`limt`"));
    // Declared names, flattened ones (`room`) and a seed's aliases (`type`) pass.
    for args in [
        json!({"content": "We deploy on Fridays.", "room": "app", "type": "decision", "resolve": false}),
        json!({"content": "We deploy on Fridays at noon.", "room": "app", "resolve": false}),
    ] {
        let r = m.call("remember", args);
        assert_ne!(r["isError"], true, "{r}");
        assert_eq!(r["structuredContent"]["action"], "created", "{r}");
    }
    drop(m);
    // The CLI has the switch: with resolution on, a near-repeat reinforces, unless the write
    // says `--resolve false` (or `--no-resolve`).
    let other = tempfile::tempdir().unwrap();
    let h = other.path();
    let a = remember(h, &["The API uses JWT tokens for authentication."]);
    let b = remember(
        h,
        &[
            "The API uses JWT tokens for its authentication!",
            "--resolve",
            "false",
        ],
    );
    assert_eq!(b["action"], "created", "{b}");
    let c = remember(
        h,
        &[
            "The API uses JWT tokens for all of its authentication.",
            "--no-resolve",
        ],
    );
    assert_eq!(c["action"], "created", "{c}");
    let d = remember(h, &["The API uses JWT tokens, for its authentication."]);
    assert_eq!(d["action"], "reinforced", "resolution is on otherwise: {d}");
    assert_ne!(a["id"], b["id"]);
}

/// The first recall after connecting waits for the model loading in the background (up to
/// `first_recall_wait_ms`, generous here) instead of answering lexically; without a model
/// the result says it was lexical only, and why.
#[test]
fn the_first_recall_waits_for_the_model_or_says_it_was_lexical() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Mcp::start(dir.path(), &[], "test");
    let r = m.call("recall", json!({"query": "deploy"}));
    assert_eq!(r["structuredContent"]["search"], "lexical", "{r}");
    let why = r["structuredContent"]["lexical_reason"]
        .as_str()
        .unwrap_or_default();
    // The test home sets `model = "none"`: the reason names it.
    assert!(why.contains("model = \"none\""), "{r}");
    drop(m);

    let model = std::env::var("ENGRAM_TEST_MODEL_DIR").unwrap_or_else(|_| {
        panic!("ENGRAM_TEST_MODEL_DIR is not set: run scripts/test, which fetches the model")
    });
    let mut m = Mcp::start_with(
        dir.path(),
        &[],
        "test",
        &[
            ("ENGRAM_MODEL", &model),
            ("ENGRAM_FIRST_RECALL_WAIT_MS", "600000"),
        ],
    );
    let r = m.call("recall", json!({"query": "deploy"}));
    assert_ne!(r["isError"], true, "{r}");
    assert!(
        r["structuredContent"].get("search").is_none(),
        "waited for the model: {r}"
    );
}

#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    // More than a pipe buffer of export, so the write certainly meets the closed pipe.
    let file = dir.path().join("many.jsonl");
    let mut lines = String::new();
    for i in 0..200 {
        let uid = format!("01JA{:022}", i);
        lines.push_str(
            &json!({"type": "memory", "id": i + 1, "uid": uid, "content": format!("memory {i} {}", "padding text ".repeat(60)),
                    "kind": "fact", "importance": 0.5, "tags": [], "room": "app", "tier": "active",
                    "created_at": "2026-09-21T00:00:00Z", "updated_at": "2026-09-21T00:00:00Z",
                    "valid_from": "2026-09-21T00:00:00Z", "valid_to": null, "pinned": false,
                    "source": "test", "metadata": {}})
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(&file, lines).unwrap();
    let out = command(dir.path())
        .args(["import", file.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = command(dir.path())
        .arg("export")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(101), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.trim().is_empty(),
        "a closed pipe is not an error to report: {stderr}"
    );
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

fn serve(home: &std::path::Path, addr: &str, token: Option<&str>) -> Server {
    let mut c = command(home);
    c.args(["serve", "--http", addr])
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

/// POSTs `body` to /mcp and returns the status and the body of the reply.
fn post(addr: &str, extra_headers: &str, body: &[u8]) -> (u16, String) {
    let (status, _, body) = request("POST", addr, extra_headers, body);
    (status, body)
}

/// Sends one request to /mcp and returns the status, the head and the body of the reply.
fn request(method: &str, addr: &str, extra_headers: &str, body: &[u8]) -> (u16, String, String) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra_headers}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).unwrap();
    c.write_all(body).unwrap();
    let mut reply = Vec::new();
    let _ = c.read_to_end(&mut reply);
    let text = String::from_utf8_lossy(&reply).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text}"));
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_string(), body.to_string())
}

fn initialize_body() -> Vec<u8> {
    json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}).to_string().into_bytes()
}

#[test]
fn http_answers_json_rpc_errors_and_accepts_localhost_and_any_bearer_case() {
    let dir = tempfile::tempdir().unwrap();
    let srv = serve(dir.path(), "localhost:0", Some("a-long-enough-token-1234"));
    let auth = "Authorization: bearer a-long-enough-token-1234\r\n";
    let (status, body) = post(&srv.addr, auth, &initialize_body());
    assert_eq!(status, 200, "lowercase bearer: {body}");
    let (status, body) = post(
        &srv.addr,
        "Authorization: BEARER a-long-enough-token-1234\r\n",
        &initialize_body(),
    );
    assert_eq!(status, 200, "uppercase BEARER: {body}");

    let (status, body) = post(&srv.addr, auth, b"{not json");
    assert_eq!(status, 400, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(v["error"]["code"], -32700, "{v}");

    let call = json!({"jsonrpc":"2.0","id":7,"method":"tools/list"}).to_string();
    let (status, body) = post(&srv.addr, auth, call.as_bytes());
    assert_eq!(status, 400, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(7), json!(-32600)),
        "{v}"
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize"),
        "{v}"
    );

    let call = json!({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"recall","arguments":"deploy"}}).to_string();
    let (_, body) = post(
        &srv.addr,
        &format!("{auth}Mcp-Session-Id: x\r\n"),
        call.as_bytes(),
    );
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["code"], -32602, "{v}");
}

/// stdio answers as HTTP does: a call before `initialize` is `-32600` (rmcp alone said
/// `-32602` about a missing `_meta`), `tools/call` arguments that are a string or an array are `-32602` naming
/// `arguments` (rmcp alone said `-32601` "tools/call"), and the session goes on.
#[test]
fn stdio_answers_the_json_rpc_codes_http_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = command(dir.path())
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = support::spawn_reader(child.stdout.take().unwrap());
    let ask = |stdin: &mut std::process::ChildStdin, msg: Value| -> Value {
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
        loop {
            let line = lines
                .recv_timeout(Duration::from_secs(60))
                .expect("a reply within 60 s");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == msg["id"] {
                return v;
            }
        }
    };
    let early = ask(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    assert_eq!(early["error"]["code"], -32600, "{early}");
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize"),
        "{early}"
    );
    let init = ask(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}),
    );
    assert!(
        init.get("result").is_some(),
        "the session still starts: {init}"
    );
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    for (id, args) in [(3, json!("deploy")), (4, json!(["deploy"]))] {
        let v = ask(
            &mut stdin,
            json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":"recall","arguments":args}}),
        );
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`arguments`"),
            "{v}"
        );
    }
    let list = ask(
        &mut stdin,
        json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}),
    );
    assert!(list["result"]["tools"].is_array(), "{list}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_public_bind_needs_a_token_of_sixteen_characters() {
    let dir = tempfile::tempdir().unwrap();
    let out = command(dir.path())
        .args(["serve", "--http", "0.0.0.0:0"])
        .env("ENGRAM_HTTP_TOKEN", "x")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("at least 16"), "{err}");
}

/// The official SDK logs "Session termination failed: 202" for anything but 200 or 204.
#[test]
fn closing_an_http_session_is_answered_200() {
    let dir = tempfile::tempdir().unwrap();
    let srv = serve(dir.path(), "127.0.0.1:0", None);
    let (status, head, body) = request("POST", &srv.addr, "", &initialize_body());
    assert_eq!(status, 200, "{body}");
    let session = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id in {head}"));
    let (status, _, body) = request(
        "DELETE",
        &srv.addr,
        &format!("Mcp-Session-Id: {session}\r\n"),
        b"",
    );
    assert_eq!(status, 200, "{body}");
}

/// A memory written while the model still loads has no vector yet; the search that waited
/// for the model embeds it first, so a recall by meaning (no word in common) finds it.
#[test]
fn a_memory_written_while_the_model_loads_is_found_by_meaning_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let model = std::env::var("ENGRAM_TEST_MODEL_DIR").unwrap_or_else(|_| {
        panic!("ENGRAM_TEST_MODEL_DIR is not set: run scripts/test, which fetches the model")
    });
    let mut m = Mcp::start_with(
        dir.path(),
        &[],
        "test",
        &[
            ("ENGRAM_MODEL", &model),
            ("ENGRAM_FIRST_RECALL_WAIT_MS", "600000"),
        ],
    );
    let w = m.call(
        "remember",
        json!({"content": "Database dumps are written to /srv/archive every night"}),
    );
    assert_ne!(w["isError"], true, "{w}");
    let r = m.call("recall", json!({"query": "where do we keep backups"}));
    assert_ne!(r["isError"], true, "{r}");
    assert!(
        r.to_string().contains("/srv/archive"),
        "the memory written a moment earlier was not found by meaning: {r}"
    );
}

#[test]
fn stats_reports_the_api_version_of_the_wire_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Mcp::start(dir.path(), &["--tools", "all"], "test");
    let r = m.call("stats", json!({}));
    assert_eq!(
        r["structuredContent"]["api_version"].as_u64(),
        Some(u64::from(engram_store::api::API_VERSION)),
        "{r}"
    );
}

/// The messages a person reads when a client misbehaves over stdio: a second
/// `initialize`, an unknown method, a fractional id and an oversize line each get their
/// code and a message that says what was wrong (the oversize line's real size, the limit).
#[test]
fn stdio_errors_say_what_was_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = Mcp::start(dir.path(), &[], "misbehaving");
    let again = m.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "again", "version": "1"}}),
    );
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already initialized"),
        "{again}"
    );
    let no_name = m.request("tools/call", json!({"arguments": {}}));
    assert_eq!(no_name["error"]["code"], -32602, "{no_name}");
    assert!(
        no_name["error"]["message"]
            .as_str()
            .unwrap()
            .contains("params.name"),
        "{no_name}"
    );
    let resources = m.request("resources/list", json!({}));
    assert_eq!(resources["error"]["code"], -32601, "{resources}");
    assert!(
        resources["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Method not found"),
        "{resources}"
    );
    let unknown = m.request("frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let msg = unknown["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("Method not found: `frobnicate`") && msg.contains("tools/call"),
        "{unknown}"
    );
    let next = |m: &mut Mcp| {
        m.read(Duration::from_secs(60))
            .expect("a reply within 60 s")
    };
    m.send_line(r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#);
    let frac = next(&mut m);
    assert_eq!(frac["error"]["code"], -32600, "{frac}");
    assert!(
        frac["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`id` must be a string or an integer, not 1.5"),
        "{frac}"
    );
    let size = 9 * 1024 * 1024 + 7;
    let mut big = vec![b'x'; size];
    big[0] = b'"';
    m.send_raw(&big);
    let over = next(&mut m);
    assert_eq!(over["error"]["code"], -32700, "{over}");
    let msg = over["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!("{size} bytes")) && msg.contains("8388608"),
        "{over}"
    );
    let list = m.request("tools/list", json!({}));
    assert!(
        list["result"]["tools"].is_array(),
        "the session goes on: {list}"
    );
    m.finish();
}

/// A file of nothing but unreadable lines is a failed import (exit non-zero, saying why),
/// and its problems are listed only up to a bound, the rest counted: memory stays flat
/// however many bad lines a file has.
#[test]
fn an_import_of_nothing_readable_fails_and_lists_its_problems_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.jsonl");
    std::fs::write(&file, "{}\n".repeat(5_000)).unwrap();
    let out = command(dir.path())
        .args(["import"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "exit {:?}: {err}", out.status);
    assert!(err.contains("nothing imported from"), "{err}");
    let listed = err.lines().filter(|l| l.contains("line ")).count();
    assert!(listed <= 100, "{listed} problems listed");
    assert!(err.contains("and 4900 more problems"), "{err}");
    // A good file still imports, and one already imported is no failure.
    let good = dir.path().join("good.jsonl");
    let export = command(dir.path())
        .args(["remember", "Deploys go out on Tuesdays"])
        .output()
        .unwrap();
    assert!(export.status.success());
    let out = command(dir.path())
        .args(["export", "--out"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = command(dir.path())
        .args(["import"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
}

/// The other formats' importers are bounded the same way, and C's JSON with nothing of
/// C's in it fails instead of importing nothing quietly.
#[test]
fn every_format_lists_its_problems_bounded_and_fails_on_nothing_readable() {
    let dir = tempfile::tempdir().unwrap();
    for (from, line) in [("a-jsonl", "[1]\n"), ("mcp-memory", "{\"type\": \"x\"}\n")] {
        let file = dir.path().join(format!("{from}.jsonl"));
        std::fs::write(&file, line.repeat(3_000)).unwrap();
        let out = command(dir.path())
            .args(["import", "--from", from])
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{from}: exit {:?}: {err}",
            out.status
        );
        let listed = err.lines().filter(|l| l.contains("line ")).count();
        assert!(listed <= 100, "{from}: {listed} problems listed");
        assert!(err.contains("and 2900 more problems"), "{from}: {err}");
    }
    let file = dir.path().join("not-c.json");
    std::fs::write(&file, r#"{"notes": [{"text": "hello"}]}"#).unwrap();
    let out = command(dir.path())
        .args(["import", "--from", "c-json"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "c-json: exit {:?}: {err}",
        out.status
    );
    assert!(err.contains("not seed C's export"), "{err}");
}

/// The seeds' search tools carry engram's absolute verdict as an extra field (and C's text
/// a line of its own), so an agent under any profile can tell that nothing matched well.
#[test]
fn seed_profiles_say_how_well_a_search_matched() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Mcp::start(dir.path(), &["--tools", "compat-c"], "c");
    // C refuses a project it does not know; a session there makes `app` one.
    c.call(
        "mem_session_start",
        json!({"id": "s-app", "project": "app"}),
    );
    let saved = c.call(
        "mem_save",
        json!({"title": "Deploy day", "content": "We deploy the billing service on Fridays.", "project": "app"}),
    );
    assert!(
        saved.get("result").is_some() || saved.get("structuredContent").is_some(),
        "{saved}"
    );
    let good = c.call(
        "mem_search",
        json!({"query": "deploy billing service Fridays", "project": "app"}),
    );
    assert_eq!(good["structuredContent"]["match"], "good", "{good}");
    let stray = c.call(
        "mem_search",
        json!({"query": "holiday photos from the deploy party in Lisbon", "project": "app"}),
    );
    assert_eq!(stray["structuredContent"]["match"], "none", "{stray}");
    let sc = &stray["structuredContent"];
    if !sc["results"].as_array().unwrap().is_empty() {
        assert!(
            sc["result"]
                .as_str()
                .unwrap()
                .contains("Match: no good match"),
            "{stray}"
        );
    }
    c.finish();
    let mut a = Mcp::start(dir.path(), &["--tools", "compat-a"], "a");
    let r = a.call(
        "recall_memory",
        json!({"query": "holiday photos from the deploy party in Lisbon"}),
    );
    assert!(r["structuredContent"]["match"].is_string(), "{r}");
    a.finish();
}

/// A client that pipelines its calls over stdio (sends them all, then closes stdin) gets
/// every reply, and the calls run in its order: an update sent right after the save it
/// names finds that memory, and a read after the update sees it.
#[test]
fn pipelined_stdio_calls_run_in_order_and_every_reply_comes_back() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let mut child = command(dir.path())
        .args(["mcp", "--tools", "compat-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = vec![
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipeline","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ];
    let call = |id: i64, name: &str, args: Value| json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":name,"arguments":args}});
    for i in 1..=30 {
        lines.push(call(
            i,
            "mem_save",
            json!({"title": format!("note {i}"), "content": format!("Pipelined note number {i} about the queue")}),
        ));
    }
    lines.push(call(
        31,
        "mem_update",
        json!({"id": 1, "content": "The first note, updated"}),
    ));
    lines.push(call(32, "mem_get_observation", json!({"id": 1})));
    let mut stdin = child.stdin.take().unwrap();
    for l in &lines {
        writeln!(stdin, "{l}").unwrap();
    }
    drop(stdin);
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    let replies: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(child.wait().unwrap().success());
    let ids: Vec<i64> = replies.iter().filter_map(|r| r["id"].as_i64()).collect();
    assert_eq!(ids, (0..=32).collect::<Vec<_>>(), "every reply, in order");
    let text = |r: &Value| {
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let update = &replies[31];
    assert!(update["result"]["isError"] != json!(true), "{update}");
    assert!(
        text(&replies[32]).contains("The first note, updated"),
        "{}",
        replies[32]
    );
}

/// An error says its cause once: a missing import file is named with the system's reason,
/// not with the reason twice (`(os error 2): No such file or directory (os error 2)`).
#[test]
fn an_error_states_its_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    for from in ["engram", "a-jsonl", "c-json"] {
        let out = command(dir.path())
            .args(["import", "--from", from, "/nonexistent/file.jsonl"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{from}: {err}");
        assert!(err.contains("/nonexistent/file.jsonl"), "{from}: {err}");
        assert_eq!(err.matches("os error 2").count(), 1, "{from}: {err}");
    }
}
