//! File permissions, the HTTP server's limits, and its refusal to serve a public address
//! without a token.

mod support;

use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};
use support::{Mcp, command};

#[cfg(unix)]
fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[cfg(unix)]
#[test]
fn everything_engram_writes_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // A server holds the store open, so the -wal and -shm files exist while we look.
    let mut s = Mcp::start(&home, &[], "perm");
    let r = s.call("remember", json!({"content": "a private note"}));
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(mode(&home), 0o700, "ENGRAM_HOME");
    for f in ["engram.db", "engram.db-wal", "engram.db-shm"] {
        assert_eq!(mode(&home.join(f)), 0o600, "{f}");
    }
    let backup = dir.path().join("bk");
    let out = command(&home)
        .args(["backup", backup.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&backup), 0o700);
    for f in ["engram.db", "backup.json"] {
        assert_eq!(mode(&backup.join(f)), 0o600, "backup {f}");
    }
    drop(s);
    // Every file anywhere under the home is private (whatever else engram wrote there).
    let mut stack = vec![home.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                assert_eq!(mode(&p), 0o700, "{}", p.display());
                stack.push(p);
            } else {
                assert_eq!(mode(&p), 0o600, "{}", p.display());
            }
        }
    }
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

fn serve(home: &std::path::Path, token: Option<&str>) -> Server {
    let mut c = command(home);
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

/// Sends a whole HTTP/1.1 request and returns the status code (closing the connection).
fn http(addr: &str, head: &str, body: &[u8]) -> u16 {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(head.as_bytes()).unwrap();
    let _ = c.write_all(body);
    let mut buf = Vec::new();
    let mut b = [0u8; 1024];
    while !buf.windows(2).any(|w| w == b"\r\n") {
        let n = c.read(&mut b).expect("a reply within 10 s");
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&b[..n]);
    }
    let line = String::from_utf8_lossy(&buf);
    line.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {line}"))
}

fn initialize(addr: &str, auth: Option<&str>) -> u16 {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}).to_string();
    let auth = auth
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    http(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        ),
        body.as_bytes(),
    )
}

#[test]
fn slow_clients_do_not_block_others_and_bodies_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let srv = serve(dir.path(), None);
    let addr = srv.addr.clone();

    // Two slow clients: one trickles its headers a byte at a time, one stalls mid-body.
    // The trickler keeps going until told to stop (never for a fixed time, which a slow
    // machine could outlast), so it is certainly mid-headers throughout the checks below.
    let a = addr.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopped = stop.clone();
    let trickler = std::thread::spawn(move || {
        let mut c = TcpStream::connect(&a).unwrap();
        let head = format!("POST /mcp HTTP/1.1\r\nHost: {a}\r\nX-Slow: ");
        let mut bytes = head.bytes().chain(std::iter::repeat(b'z'));
        while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
            if c.write_all(&[bytes.next().unwrap()]).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let mut staller = TcpStream::connect(&addr).unwrap();
    staller
        .write_all(
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\":").as_bytes(),
        )
        .unwrap();
    // Many idle connections at once, too.
    let idle: Vec<_> = (0..50)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();

    std::thread::sleep(Duration::from_millis(200));
    for _ in 0..5 {
        let t = Instant::now();
        assert_eq!(
            http(
                &addr,
                &format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
                b""
            ),
            200
        );
        assert_eq!(initialize(&addr, None), 200);
        // Generous for a loaded machine; a server blocked by the slow clients would wait
        // for ever.
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "a request waited {:?}",
            t.elapsed()
        );
    }
    assert!(
        !trickler.is_finished(),
        "the slow client was still sending throughout"
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    trickler.join().unwrap();

    // A body over 4 MiB is refused with 413. The server answers after reading 4 MiB and
    // closes; the rest of the body may meet a reset, which is a refusal too.
    let mut c = TcpStream::connect(&addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut w = c.try_clone().unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        5 * 1024 * 1024
    );
    let sender = std::thread::spawn(move || {
        let _ = w.write_all(head.as_bytes());
        for _ in 0..80 {
            if w.write_all(&[b' '; 65_536]).is_err() {
                break;
            }
        }
    });
    let mut reply = Vec::new();
    let mut b = [0u8; 4096];
    let refused = loop {
        match c.read(&mut b) {
            Ok(0) => break String::from_utf8_lossy(&reply).into_owned(),
            Ok(n) => reply.extend_from_slice(&b[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                break format!("reset after {:?}", String::from_utf8_lossy(&reply));
            }
            Err(e) => panic!("no answer to an oversized body: {e}"),
        }
    };
    sender.join().unwrap();
    assert!(
        refused.starts_with("HTTP/1.1 413") || refused.starts_with("reset"),
        "an oversized body: {refused}"
    );
    assert_eq!(
        http(
            &addr,
            &format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
            b""
        ),
        200
    );
    drop(idle);
    drop(staller);
}

#[test]
fn tokens_guard_the_http_server() {
    let dir = tempfile::tempdir().unwrap();
    // Binding beyond loopback without a token is refused.
    let out = command(dir.path())
        .args(["serve", "--http", "0.0.0.0:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("token"));
    // With a token, requests without it (or with a wrong one, or a prefix of it) get 401.
    let srv = serve(dir.path(), Some("s3cret-token"));
    assert_eq!(initialize(&srv.addr, None), 401);
    assert_eq!(initialize(&srv.addr, Some("wrong")), 401);
    assert_eq!(initialize(&srv.addr, Some("s3cret")), 401);
    assert_eq!(initialize(&srv.addr, Some("s3cret-token-and-more")), 401);
    assert_eq!(initialize(&srv.addr, Some("s3cret-token")), 200);
}

#[test]
fn a_loopback_server_answers_only_loopback_host_names() {
    // DNS rebinding: a hostile page whose own name resolves to 127.0.0.1 sends its name as
    // `Host`. Every route refuses it, not only `/mcp`: the UI's API, seed C's API, health.
    let dir = tempfile::tempdir().unwrap();
    let srv = serve(dir.path(), None);
    let get = |host: &str, path: &str| {
        http(
            &srv.addr,
            &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
            b"",
        )
    };
    for path in ["/ui/api/overview", "/search?q=x", "/health", "/ui/"] {
        assert_eq!(get("evil.example:7812", path), 403, "{path}");
        assert_ne!(get(&srv.addr, path), 403, "{path}");
    }
    let port = srv.addr.rsplit_once(':').unwrap().1;
    assert_eq!(get(&format!("localhost:{port}"), "/health"), 200);
}
