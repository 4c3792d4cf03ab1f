//! What the team-server tests share: a fresh database on the test PostgreSQL server
//! (`ENGRAM_TEST_PG`, an admin URL from `scripts/pg-test-server`), `engram serve` children
//! on it, and a small HTTP client for seed A's REST routes. Without a server the tests
//! print a note and pass, except under CI, where the PostgreSQL run is never skipped.

use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

/// The admin URL of the test server, or `None` (after a note) without one outside CI.
pub fn admin_url(test: &str) -> Option<String> {
    match std::env::var("ENGRAM_TEST_PG") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the PostgreSQL tests: ENGRAM_TEST_PG is not set (scripts/test sets it)"
            );
            eprintln!("note: ENGRAM_TEST_PG is not set; skipping {test}");
            None
        }
    }
}

/// `url` with its database replaced by `db`.
pub fn with_db(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    format!("{}/{db}{query}", &base[..host_end])
}

/// A new, empty database `engram_<name>_<pid>` on the server of `admin`, as a URL.
pub fn create_database(admin: &str, name: &str) -> String {
    let db = format!("engram_{name}_{}", std::process::id());
    let mut c = postgres::Client::connect(admin, postgres::NoTls).expect("the test server");
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .unwrap();
    c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    with_db(admin, &db)
}

/// Runs `engram ARGS` in `home` (the harness environment plus `env`), asserting that it
/// succeeded; its stdout.
pub fn engram_ok(home: &Path, env: &[(&str, &str)], args: &[&str]) -> String {
    let out = crate::support::command(home)
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "engram {args:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// A fresh database on the test server, or `None` (after a note) without a server.
pub fn fresh_database(name: &str) -> Option<String> {
    admin_url(name).map(|admin| create_database(&admin, name))
}

/// An `engram serve --http 127.0.0.1:0 --store URL` child, killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: String,
}

impl Server {
    /// Starts a server with `home` on `store`, the harness environment of
    /// `support::command` plus `env`, and waits for the address it prints.
    pub fn start(home: &Path, store: &str, env: &[(&str, &str)]) -> Server {
        let mut c = super::command(home);
        c.args(["serve", "--http", "127.0.0.1:0", "--store", store])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let addr = super::http_addr(&mut child);
        Server { child, addr }
    }

    /// `POST path` with a JSON body: the status and the parsed body.
    pub fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        post(&self.addr, path, body).expect("the server answers")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP request (`Connection: close`), with a generous deadline so that a hang fails
/// the test instead of stalling it: the status and the body parsed as JSON (`Null` when
/// it is not JSON).
pub fn post(addr: &str, path: &str, body: &Value) -> std::io::Result<(u16, Value)> {
    let body = body.to_string();
    let mut c = TcpStream::connect(addr)?;
    c.set_read_timeout(Some(Duration::from_secs(120)))?;
    write!(
        c,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut reply = String::new();
    c.read_to_string(&mut reply)?;
    let status = reply
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (_, json_body) = reply.split_once("\r\n\r\n").unwrap_or(("", ""));
    Ok((
        status,
        serde_json::from_str(json_body.trim()).unwrap_or(Value::Null),
    ))
}

/// A PostgreSQL client program (`pg_dump`, `pg_restore`, `pg_ctl`) from the test server's
/// installation (`ENGRAM_TEST_PG_BIN`, exported by `scripts/pg-test-server start`), else
/// from `PATH`; `None` when neither has it.
pub fn pg_program(name: &str) -> Option<std::path::PathBuf> {
    if let Ok(bin) = std::env::var("ENGRAM_TEST_PG_BIN") {
        let p = Path::new(&bin).join(name);
        if p.exists() {
            return Some(p);
        }
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.exists())
    })
}
