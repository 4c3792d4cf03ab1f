//! A corpus of bad requests against one running `engram mcp`: each gets a clear error (a
//! JSON-RPC error, or a tool error naming the field and the limit) and the server keeps
//! answering valid requests. `tests/e2e/mcp_e2e.py` covers a few framing errors through the
//! official SDK; this corpus goes wider (types, limits, traversal-looking names, huge and
//! deeply nested input) and checks liveness after every single entry.

mod support;

use serde_json::{Value, json};
use std::time::Duration;
use support::Mcp;

/// Sends a raw line and returns the next reply (every bad line must be answered).
fn raw_reply(s: &mut Mcp, line: &[u8]) -> Value {
    s.send_raw(line);
    s.read(Duration::from_secs(60)).unwrap_or_else(|| {
        panic!(
            "no reply to {:?}",
            String::from_utf8_lossy(&line[..line.len().min(80)])
        )
    })
}

fn rpc_code(v: &Value) -> i64 {
    v["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected a JSON-RPC error, got {v}"))
}

/// A tool error: `isError` with a message that names the field (and, when given, the limit).
fn tool_error(s: &mut Mcp, tool: &str, args: Value, field: &str, limit: Option<&str>) {
    let r = s.call(tool, args.clone());
    assert_eq!(
        r["isError"], true,
        "{tool} {args:.200}: expected an error, got {r:.300}"
    );
    let msg = r["structuredContent"]["error"]["message"]
        .as_str()
        .or_else(|| r["content"][0]["text"].as_str())
        .unwrap_or_default()
        .to_string();
    let named =
        r["structuredContent"]["error"]["field"].as_str() == Some(field) || msg.contains(field);
    assert!(named, "{tool}: the error does not name `{field}`: {r:.300}");
    if let Some(l) = limit {
        assert!(
            msg.contains(l),
            "{tool}: the error does not give the limit {l}: {msg}"
        );
    }
}

#[test]
fn bad_requests_get_clear_errors_and_the_server_stays_up() {
    let dir = tempfile::tempdir().unwrap();
    // ENGRAM_HOME is a folder inside the test's own folder, so "nothing outside it" can be
    // checked without counting a temp folder other processes share.
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let mut s = Mcp::start(&home, &["--tools", "all"], "hostile");
    let ok = s.call("remember", json!({"content": "a good memory", "room": "r"}));
    assert_ne!(ok["isError"], true, "{ok}");
    let mut entries = 0;

    // Framing: not JSON, not UTF-8, nested too deep, not an object, bad ids, too long.
    let framing: Vec<(Vec<u8>, i64)> = vec![
        (b"{not json".to_vec(), -32700),
        (b"\xff\xfe\xfd".to_vec(), -32700),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xc3\x28\"}".to_vec(),
            -32700,
        ),
        ("[".repeat(100_000).into_bytes(), -32700),
        ("{\"a\":".repeat(50_000).into_bytes(), -32700),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"\ud800"}}"#.to_vec(),
            -32700,
        ),
        (b"42".to_vec(), -32600),
        (b"null".to_vec(), -32600),
        (
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
            -32600,
        ),
        (
            br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#.to_vec(),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#.to_vec(),
            -32600,
        ),
        (
            br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(),
            -32600,
        ),
        (br#"{"jsonrpc":"2.0","id":1,"method":42}"#.to_vec(), -32600),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","p":"{}"}}"#,
                "x".repeat(9 << 20)
            )
            .into_bytes(),
            -32700,
        ),
    ];
    for (line, code) in &framing {
        let r = raw_reply(&mut s, line);
        assert_eq!(
            rpc_code(&r),
            *code,
            "reply to {:?}",
            String::from_utf8_lossy(&line[..line.len().min(60)])
        );
        assert!(
            s.alive(),
            "the server died after {:?}",
            String::from_utf8_lossy(&line[..line.len().min(60)])
        );
        entries += 1;
    }
    let r = raw_reply(&mut s, &[b'x'; 100]);
    assert_eq!(rpc_code(&r), -32700);
    let r = raw_reply(&mut s, &format!("{{{}", "x".repeat(9 << 20)).into_bytes());
    assert!(
        r["error"]["message"].as_str().unwrap().contains("8388608"),
        "an over-long line names the limit: {r}"
    );
    entries += 2;

    // Protocol: unknown method, wrong params for a known one.
    for (msg, code) in [
        (
            json!({"jsonrpc":"2.0","id":7,"method":"no/such/method"}),
            -32601,
        ),
        (
            json!({"jsonrpc":"2.0","id":8,"method":"tools/call","params":"remember"}),
            -32602,
        ),
        (
            json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}),
            -32602,
        ),
        (
            json!({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"remember","arguments":[1,2]}}),
            -32602,
        ),
    ] {
        s.send_line(&msg.to_string());
        let r = s.reply_to(msg["id"].as_i64().unwrap());
        assert!(r["error"]["code"].is_i64(), "{msg} -> {r}");
        let _ = code; // rmcp picks the code; any JSON-RPC error is a clear answer
        assert!(s.alive());
        entries += 1;
    }

    // Tools: unknown names, wrong types, limits (each error names the field and limit).
    let r = s.call("../../bin/sh", json!({}));
    assert_eq!(r["isError"], true);
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("unknown tool")
    );
    let big = "x".repeat(65_537);
    let cases: Vec<(&str, Value, &str, Option<&str>)> = vec![
        ("remember", json!({}), "content", None),
        ("remember", json!({"content": 42}), "content", None),
        ("remember", json!({"content": null}), "content", None),
        (
            "remember",
            json!({"content": big}),
            "content",
            Some("65536"),
        ),
        ("remember", json!({"content": "   "}), "content", None),
        (
            "remember",
            json!({"content": "x", "tags": "a,b"}),
            "tags",
            None,
        ),
        (
            "remember",
            json!({"content": "x", "tags": vec!["t"; 33]}),
            "tags",
            Some("32"),
        ),
        (
            "remember",
            json!({"content": "x", "tags": ["t".repeat(65)]}),
            "tag",
            Some("64"),
        ),
        (
            "remember",
            json!({"content": "x", "title": "t".repeat(513)}),
            "title",
            Some("512"),
        ),
        (
            "remember",
            json!({"content": "x", "importance": "high"}),
            "importance",
            None,
        ),
        (
            "remember",
            json!({"content": "x", "importance": 1e308}),
            "importance",
            None,
        ),
        (
            "remember",
            json!({"content": "x", "importance": -1}),
            "importance",
            None,
        ),
        (
            "remember",
            json!({"content": "x", "metadata": [1, 2]}),
            "metadata",
            None,
        ),
        (
            "remember",
            json!({"content": "x", "metadata": {"k": "v".repeat(17_000)}}),
            "metadata",
            Some("16384"),
        ),
        (
            "remember",
            json!({"content": "x", "kind": "../../etc/passwd"}),
            "kind",
            None,
        ),
        (
            "remember",
            json!({"content": "x", "room": "a\u{0}b"}),
            "room",
            None,
        ),
        (
            "remember",
            json!({"content": "x", "room": "r".repeat(257)}),
            "room",
            Some("256"),
        ),
        (
            "remember",
            json!({"content": "x", "session_id": "s\n1"}),
            "session_id",
            None,
        ),
        (
            "remember",
            json!({"content": "x", "related_ids": ["../../etc/passwd"]}),
            "related_ids",
            None,
        ),
        // The engine names an unknown related id's field `ids` (its own name for id lists).
        (
            "remember",
            json!({"content": "x", "related_ids": [99_999_999]}),
            "ids",
            None,
        ),
        (
            "recall",
            json!({"query": "q", "limit": 1000}),
            "limit",
            Some("100"),
        ),
        ("recall", json!({"query": "q", "limit": 0}), "limit", None),
        ("recall", json!({"query": "q", "limit": -1}), "limit", None),
        (
            "recall",
            json!({"query": "q", "limit": 1e30}),
            "limit",
            None,
        ),
        (
            "recall",
            json!({"query": "q".repeat(4097)}),
            "query",
            Some("4096"),
        ),
        ("recall", json!({"query": ["q"]}), "query", None),
        (
            "recall",
            json!({"query": "q", "mode": "../../x"}),
            "mode",
            None,
        ),
        ("recall", json!({"query": "q", "room": "x*y"}), "room", None),
        (
            "reinforce",
            json!({"ids": ["../../../etc/passwd"]}),
            "ids",
            None,
        ),
        (
            "reinforce",
            json!({"ids": (1..=101).collect::<Vec<_>>()}),
            "ids",
            Some("100"),
        ),
        (
            "reinforce",
            json!({"ids": [18_446_744_073_709_551_615u64]}),
            "ids",
            None,
        ),
        (
            "reinforce",
            json!({"ids": [1], "strength": "max"}),
            "strength",
            None,
        ),
        ("forget", json!({"id": "../../etc/passwd"}), "id", None),
        ("forget", json!({"id": -5}), "id", None),
        ("forget", json!({"id": {"$gt": 0}}), "id", None),
        (
            "correct",
            json!({"id": 1, "content": big, "reason": "r"}),
            "content",
            Some("65536"),
        ),
        (
            "explain",
            json!({"id": "'; DROP TABLE memories; --"}),
            "id",
            None,
        ),
    ];
    for (tool, args, field, limit) in cases {
        tool_error(&mut s, tool, args, field, limit);
        assert!(s.alive(), "the server died after a bad {tool} call");
        entries += 1;
    }

    // Traversal-looking names are only names: stored as given (the database has no paths),
    // nothing is created outside ENGRAM_HOME, and recall finds them by that name.
    let listing = || -> Vec<_> {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect()
    };
    // What "../../outside" would reach from the home folder, were it taken as a path.
    let escaped = dir.path().parent().unwrap().join("outside");
    let escaped_before = escaped.exists();
    for room in ["../../outside", "/etc", "..", "C:\\Windows"] {
        let r = s.call(
            "remember",
            json!({"content": format!("in room {room}"), "room": room}),
        );
        if r["isError"] != true {
            let r = s.call("recall", json!({"query": "room", "room": room}));
            assert_ne!(r["isError"], true, "{r}");
        }
        entries += 1;
    }
    assert_eq!(
        listing(),
        ["home"],
        "something was written outside ENGRAM_HOME"
    );
    assert_eq!(escaped.exists(), escaped_before, "{}", escaped.display());

    // Content that is odd but valid is stored whole and recalled intact.
    let odd =
        "NUL\u{0} here, RTL \u{202e}txet, emoji 🧠, CJK 記憶, quote \" and \\ and \"AND\" OR NEAR(";
    let r = s.call("remember", json!({"content": odd, "room": "odd"}));
    assert_ne!(r["isError"], true, "{r}");
    let r = s.call("recall", json!({"query": odd, "room": "odd"}));
    assert_eq!(r["structuredContent"]["hits"][0]["content"], odd);
    entries += 1;

    assert!(s.alive());
    assert!(
        s.finish().success(),
        "the server exits cleanly when stdin closes"
    );
    eprintln!("hostile corpus: {entries} bad requests, each answered, server up after each");
}

/// A client that sends half a line and stalls, or disconnects mid-line, affects only itself.
#[test]
fn a_truncated_stream_ends_the_session_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Mcp::start(dir.path(), &[], "cut");
    let partial = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","#;
    s.send_bytes(partial);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        s.child.try_wait().unwrap().is_none(),
        "still waiting for the rest of the line"
    );
    let status = s.finish();
    assert!(status.success(), "{status}");
}
