//! MCP over stdio, with the framing checks rmcp leaves out: a line that is not JSON (or
//! not UTF-8, or too deeply nested, or too long) gets a JSON-RPC `-32700 Parse error`
//! reply, a JSON value that is not a JSON-RPC message gets `-32600 Invalid Request`, and
//! the server keeps serving. stdout carries nothing but JSON-RPC lines.

use super::{EngramServer, Shared};
use rmcp::ServiceExt;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest accepted request line (8 MiB); longer lines are answered with an error.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// The reply to a line over [`MAX_LINE_BYTES`], stating its real size and the limit.
pub fn oversize_reply(size: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!(
        "Parse error: the message is {size} bytes, over the limit of {MAX_LINE_BYTES} bytes (8 MiB); nothing of it was read"
    )}})
}

/// Checks one incoming line; `Err` is the error reply to send instead of forwarding it.
pub fn check_line(line: &[u8]) -> Result<(), Value> {
    let reply = |code: i64, message: String, id: Value| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    if line.len() > MAX_LINE_BYTES {
        return Err(oversize_reply(line.len()));
    }
    let text = std::str::from_utf8(line).map_err(|e| {
        reply(
            -32700,
            format!("Parse error: not valid UTF-8 ({e})"),
            Value::Null,
        )
    })?;
    let v: Value = serde_json::from_str(text)
        .map_err(|e| reply(-32700, format!("Parse error: {e}"), Value::Null))?;
    let valid = |m: &Value| {
        let Some(o) = m.as_object() else { return false };
        o.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
            && (o.get("method").is_some_and(Value::is_string)
                || (o.contains_key("id") && (o.contains_key("result") || o.contains_key("error"))))
            && o.get("id")
                .is_none_or(|id| id.is_string() || id.is_i64() || id.is_u64())
    };
    if !valid(&v) {
        let id = v
            .get("id")
            .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
            .cloned()
            .unwrap_or(Value::Null);
        let message = match v.get("id") {
            Some(bad) if id.is_null() && !bad.is_null() => {
                format!("Invalid Request: `id` must be a string or an integer, not {bad}")
            }
            _ => {
                "Invalid Request: expected a JSON-RPC 2.0 request, notification or response object"
                    .into()
            }
        };
        return Err(reply(-32600, message, id));
    }
    Ok(())
}

/// The requests this server answers (it offers tools only). Any other method, the MCP
/// specification's resources and prompts included, is answered here with a message that
/// names it and what this server does answer (rmcp's own reply is the bare method name).
const MCP_METHODS: &[&str] = &["initialize", "ping", "tools/list", "tools/call"];

/// The error a request gets before rmcp sees it, from its method and whether the
/// connection is initialized; shared by stdio and HTTP so both answer alike.
pub fn session_error(method: &str, initialized: bool) -> Option<(i64, String)> {
    if !MCP_METHODS.contains(&method) {
        return Some((
            -32601,
            format!(
                "Method not found: `{method}`; this server answers initialize, ping, tools/list and tools/call"
            ),
        ));
    }
    if !initialized && method != "initialize" {
        return Some((
            -32600,
            format!("Invalid Request: `{method}` before `initialize`; send `initialize` first"),
        ));
    }
    if initialized && method == "initialize" {
        return Some((
            -32600,
            "Invalid Request: this connection is already initialized; `initialize` is sent once per connection (open a new connection to start over)".into(),
        ));
    }
    None
}

/// The checks HTTP's `json_rpc_errors` makes too, so both transports answer alike: a
/// request before `initialize` is `-32600` naming the fix (rmcp alone answers `-32602`
/// about a missing `_meta`), and `tools/call` arguments that are not an object are
/// `-32602` naming `arguments` (rmcp alone reads the call as an unknown method, `-32601`). `initialized`: whether an `initialize`
/// request went through already. Notifications and responses pass.
pub fn check_session(line: &[u8], initialized: bool) -> Result<(), Value> {
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return Ok(());
    };
    let (Some(method), Some(id)) = (v.get("method").and_then(Value::as_str), v.get("id")) else {
        return Ok(());
    };
    let reply = |code: i64, message: String| json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    if let Some((code, message)) = session_error(method, initialized) {
        return Err(reply(code, message));
    }
    if method == "tools/call"
        && !v
            .get("params")
            .and_then(|p| p.get("name"))
            .is_some_and(Value::is_string)
    {
        return Err(reply(
            -32602,
            "Invalid params: `tools/call` needs `params.name`, the tool to call (see tools/list)"
                .into(),
        ));
    }
    if method == "tools/call"
        && let Some(args) = v.get("params").and_then(|p| p.get("arguments"))
        && !args.is_object()
        && !args.is_null()
    {
        return Err(reply(
            -32602,
            "Invalid params: `arguments` must be a JSON object".into(),
        ));
    }
    Ok(())
}

/// Checks that a line [`check_line`] accepted is a message rmcp can decode. rmcp's stdio
/// codec treats a message it cannot decode (a known method with `params` of the wrong
/// shape, e.g. `"params": "x"` for `tools/call`) as a stream error, so the client never
/// gets an answer; such a request is answered here with `-32602 Invalid params` instead,
/// and a notification or response of that kind is dropped (JSON-RPC answers neither).
/// `Err(None)`: drop the line; `Err(Some(reply))`: send the reply instead.
pub fn check_decodable(line: &[u8]) -> Result<(), Option<Value>> {
    let Err(e) = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(line) else {
        return Ok(());
    };
    let v: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
    match (v.get("method").and_then(Value::as_str), v.get("id")) {
        (Some(method), Some(id)) => Err(Some(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32602, "message": format!("Invalid params for {method}: {e}")},
        }))),
        _ => Err(None),
    }
}

/// Whether a line (already checked) is the `initialize` request.
fn is_initialize(line: &[u8]) -> bool {
    serde_json::from_slice::<Value>(line)
        .is_ok_and(|v| v.get("method").and_then(Value::as_str) == Some("initialize"))
}

/// The id of a request (a message with a method and an id), which rmcp will answer.
fn request_id(line: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(line).ok()?;
    v.get("method")?;
    v.get("id").filter(|id| !id.is_null()).cloned()
}

/// The id of a reply rmcp wrote (a message with a result or an error).
fn response_id(line: &str) -> Option<Value> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v.get("result").is_none() && v.get("error").is_none() {
        return None;
    }
    v.get("id").cloned()
}

/// Serves one client on stdin/stdout until stdin closes.
pub async fn serve(shared: Arc<Shared>) -> anyhow::Result<()> {
    // rmcp reads from `server_in` and writes to `server_out`; we sit between them and the
    // real stdio so that error replies and rmcp's replies never interleave on stdout.
    let (mut to_server, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, from_server) = tokio::io::duplex(1 << 20);
    let (err_tx, mut err_rx) = mpsc::unbounded_channel::<String>();
    // The ids of the replies written, so the reader hands rmcp one request at a time.
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<Value>();

    let reader = tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut buf = Vec::new();
        let mut initialized = false;
        loop {
            buf.clear();
            // Read one line, but never more than the limit into memory.
            let n = (&mut stdin)
                .take(MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut buf)
                .await?;
            if n == 0 {
                break;
            }
            let oversized = buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n');
            if oversized {
                // Skip the rest of the line, counting it, so the reply states its real size.
                let mut size = buf.len();
                let mut sink = Vec::new();
                loop {
                    sink.clear();
                    let m = (&mut stdin)
                        .take(1 << 20)
                        .read_until(b'\n', &mut sink)
                        .await?;
                    size += sink.strip_suffix(b"\n").map_or(sink.len(), <[u8]>::len);
                    if m == 0 || sink.last() == Some(&b'\n') {
                        break;
                    }
                }
                let _ = err_tx.send(oversize_reply(size).to_string());
                continue;
            }
            let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match check_line(line)
                .and_then(|()| check_session(line, initialized))
                .map_err(Some)
                .and_then(|()| check_decodable(line))
            {
                Ok(()) => {
                    initialized = initialized || is_initialize(line);
                    to_server.write_all(line).await?;
                    to_server.write_all(b"\n").await?;
                    // One request in flight: a client that pipelines `save` then `update`
                    // sees them run in its order, and every reply is out before stdin's
                    // end closes the session.
                    if let Some(id) = request_id(line) {
                        while let Some(done) = done_rx.recv().await {
                            if done == id {
                                break;
                            }
                        }
                    }
                }
                Err(Some(reply)) => {
                    let _ = err_tx.send(reply.to_string());
                }
                Err(None) => tracing::debug!("dropped a notification rmcp cannot decode"),
            }
        }
        to_server.shutdown().await?;
        Ok::<_, std::io::Error>(())
    });

    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        let mut lines = BufReader::new(from_server).lines();
        loop {
            tokio::select! {
                line = lines.next_line() => match line? {
                    Some(l) => {
                        stdout.write_all(l.as_bytes()).await?; stdout.write_all(b"\n").await?; stdout.flush().await?;
                        if let Some(id) = response_id(&l) {
                            let _ = done_tx.send(id);
                        }
                    }
                    None => break,
                },
                Some(e) = err_rx.recv() => { stdout.write_all(e.as_bytes()).await?; stdout.write_all(b"\n").await?; stdout.flush().await?; }
            }
        }
        while let Ok(e) = err_rx.try_recv() {
            stdout.write_all(e.as_bytes()).await?;
            stdout.write_all(b"\n").await?;
        }
        stdout.flush().await?;
        Ok::<_, std::io::Error>(())
    });

    match EngramServer::new(shared)
        .serve((server_in, server_out))
        .await
    {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        // stdin closed before `initialize`: nothing to serve.
        Err(e) => tracing::info!("MCP session ended before initialize: {e}"),
    }
    reader.abort();
    let _ = writer.await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    trait OkOrNone {
        fn is_ok_or_none(&self) -> bool;
    }
    impl OkOrNone for Result<(), Option<Value>> {
        fn is_ok_or_none(&self) -> bool {
            matches!(self, Ok(()) | Err(None))
        }
    }

    #[test]
    fn framing_checks() {
        assert!(check_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_ok());
        assert!(check_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_ok());
        let e = check_line(b"not json").unwrap_err();
        assert_eq!(e["error"]["code"], -32700);
        let e = check_line(&[0xff, 0xfe]).unwrap_err();
        assert_eq!(e["error"]["code"], -32700);
        let deep = "[".repeat(10_000);
        assert_eq!(
            check_line(deep.as_bytes()).unwrap_err()["error"]["code"],
            -32700
        );
        let e = check_line(br#"{"id":7,"method":"x"}"#).unwrap_err();
        assert_eq!(
            (e["error"]["code"].as_i64(), e["id"].as_i64()),
            (Some(-32600), Some(7))
        );
        assert_eq!(check_line(b"42").unwrap_err()["error"]["code"], -32600);
        assert_eq!(
            check_line(br#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#).unwrap_err()["error"]["code"],
            -32600
        );
    }

    #[test]
    fn session_checks_match_http() {
        let list = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
        let e = check_session(list, false).unwrap_err();
        assert_eq!(
            (e["id"].as_i64(), e["error"]["code"].as_i64()),
            (Some(3), Some(-32600))
        );
        assert!(check_session(list, true).is_ok());
        let init = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        assert!(check_session(init, false).is_ok() && is_initialize(init));
        // A notification is never answered, before `initialize` or after.
        assert!(
            check_session(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                false
            )
            .is_ok()
        );
        for args in [r#""remember""#, "[1]", "7"] {
            let call = format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"recall","arguments":{args}}}}}"#
            );
            let e = check_session(call.as_bytes(), true).unwrap_err();
            assert_eq!(e["error"]["code"], -32602, "{args}");
            assert!(
                e["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("`arguments`")
            );
        }
    }

    #[test]
    fn undecodable_requests_are_answered() {
        let bad = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":"remember"}"#;
        assert!(check_line(bad).is_ok());
        let reply = check_decodable(bad).unwrap_err().unwrap();
        assert_eq!(
            (reply["id"].as_i64(), reply["error"]["code"].as_i64()),
            (Some(8), Some(-32602))
        );
        // A notification is never answered: dropped if rmcp cannot decode it.
        let note = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#;
        assert!(check_decodable(note).is_ok_or_none());
        assert!(check_decodable(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).is_ok());
        assert!(check_decodable(br#"{"jsonrpc":"2.0","id":1,"method":"no/such"}"#).is_ok());
    }
}
