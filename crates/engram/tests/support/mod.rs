//! Helpers shared by the reliability harnesses: the built binary with a clean environment,
//! a raw JSON-RPC client for `engram mcp`, and checks of a store on disk.
#![allow(dead_code)]

pub mod team;

use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The built `engram` with none of the caller's `ENGRAM_*` variables (nor `HF_ENDPOINT`):
/// every harness starts from this and sets what its own test needs.
pub fn clean_engram() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_engram"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("ENGRAM_") || k == "HF_ENDPOINT") {
        c.env_remove(k);
    }
    c
}

/// `engram` with a clean environment: no `ENGRAM_*` variable from the caller leaks in, no
/// model is loaded (lexical mode), the store lives in `home`. Write-path resolution is off
/// (`ENGRAM_RESOLVE=false`): these harnesses count acknowledged writes, each its own
/// memory; folding similar texts together is tested on its own. No server runs maintenance
/// on its timer (`ENGRAM_MAINTENANCE_INTERVAL_HOURS=0`): it would archive or consolidate
/// the harness's memories at a moment of its own choosing.
pub fn command(home: &Path) -> Command {
    let mut c = clean_engram();
    c.env("ENGRAM_HOME", home)
        .env("ENGRAM_MODEL", "none")
        .env("ENGRAM_RESOLVE", "false")
        .env("ENGRAM_MAINTENANCE_INTERVAL_HOURS", "0")
        .current_dir(if home.is_dir() {
            home
        } else {
            home.parent().unwrap()
        });
    c
}

/// A running `engram mcp` driven by raw newline-delimited JSON-RPC.
pub struct Mcp {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    next_id: i64,
}

impl Mcp {
    /// Starts `engram mcp` (extra arguments appended) and completes the handshake.
    pub fn start(home: &Path, args: &[&str], client: &str) -> Mcp {
        Mcp::start_with(home, args, client, &[])
    }

    /// [`Mcp::start`] with extra environment variables (`ENGRAM_RESOLVE=true`, …).
    pub fn start_with(home: &Path, args: &[&str], client: &str, env: &[(&str, &str)]) -> Mcp {
        Mcp::spawn(command(home), args, client, env)
    }

    /// [`Mcp::start`] launched in `dir`, as a host launches it in the agent's project.
    pub fn start_in(home: &Path, dir: &Path, args: &[&str], client: &str) -> Mcp {
        let mut c = command(home);
        c.current_dir(dir);
        Mcp::spawn(c, args, client, &[])
    }

    fn spawn(
        mut c: std::process::Command,
        args: &[&str],
        client: &str,
        env: &[(&str, &str)],
    ) -> Mcp {
        let mut child = c
            .envs(env.iter().copied())
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("engram mcp starts");
        let stdin = child.stdin.take();
        let lines = spawn_reader(child.stdout.take().unwrap());
        let mut m = Mcp {
            child,
            stdin,
            lines,
            next_id: 1000,
        };
        let r = m.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": client, "version": "1"}}),
        );
        assert!(r.get("result").is_some(), "initialize: {r}");
        m.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        m
    }

    /// Writes raw bytes followed by a newline.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let s = self.stdin.as_mut().expect("stdin open");
        s.write_all(bytes).unwrap();
        s.write_all(b"\n").unwrap();
        s.flush().unwrap();
    }

    /// Writes raw bytes as they are (no newline).
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let s = self.stdin.as_mut().expect("stdin open");
        s.write_all(bytes).unwrap();
        s.flush().unwrap();
    }

    pub fn send_line(&mut self, line: &str) {
        self.send_raw(line.as_bytes());
    }

    /// The next line the server writes, within `timeout`.
    pub fn read(&mut self, timeout: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(timeout).ok()?;
        Some(
            serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("stdout carried a line that is not JSON ({e}): {line:?}")
            }),
        )
    }

    /// Sends a request and waits (up to 60 s) for the reply with its id.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&msg.to_string());
        self.reply_to(id)
    }

    /// Waits for the reply with `id`, skipping anything else.
    pub fn reply_to(&mut self, id: i64) -> Value {
        loop {
            let v = self
                .read(Duration::from_secs(60))
                .unwrap_or_else(|| panic!("no reply to request {id} within 60 s"));
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Calls a tool; returns the `result` object (with `isError` and `structuredContent`).
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {tool} got no result: {r}"))
    }

    /// Whether the server still answers a valid request.
    pub fn alive(&mut self) -> bool {
        let r = self.request("tools/list", json!({}));
        r["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    }

    /// Closes stdin and waits for the process to exit (kills it after 20 s).
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        for _ in 0..200 {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("engram mcp did not exit after stdin closed");
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads lines on a thread, so a test can wait with a timeout instead of hanging.
pub fn spawn_reader(out: ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Acknowledged writes, as printed by `engram stress-writer`.
#[derive(Default, Debug)]
pub struct Acked {
    pub remembered: HashSet<String>,
    pub corrected: Vec<(i64, i64)>,
    pub forgotten: Vec<i64>,
}

impl Acked {
    /// Records one complete line (a partial last line is not an acknowledgement).
    pub fn record(&mut self, line: &str) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["remember", uid] => {
                self.remembered.insert(uid.to_string());
            }
            ["correct", old, new] => self
                .corrected
                .push((old.parse().unwrap(), new.parse().unwrap())),
            ["forget", id] => self.forgotten.push(id.parse().unwrap()),
            // A restore took the memory away before it could be corrected or forgotten.
            ["vanished", _] => {}
            _ => panic!("unexpected writer line {line:?}"),
        }
    }

    pub fn len(&self) -> usize {
        self.remembered.len() + self.corrected.len() + self.forgotten.len()
    }
}

/// Opens the store file directly and returns `PRAGMA integrity_check`'s rows.
pub fn integrity(db: &Path) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(Duration::from_secs(30)).unwrap();
    let mut st = c.prepare("PRAGMA integrity_check").unwrap();
    st.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Every acknowledged write that is not in the store, described.
pub fn missing(db: &Path, acked: &Acked) -> Vec<String> {
    let c = rusqlite::Connection::open(db).unwrap();
    c.busy_timeout(Duration::from_secs(30)).unwrap();
    // A process killed before its first migration committed leaves the file without a
    // schema: nothing can have been acknowledged then, and anything that was is lost.
    let has_schema: bool = c
        .query_row(
            "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'memories'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    if !has_schema {
        return acked
            .remembered
            .iter()
            .map(|u| format!("remembered {u} (the store has no schema)"))
            .chain(
                acked
                    .corrected
                    .iter()
                    .map(|(o, n)| format!("correction #{o} -> #{n}")),
            )
            .chain(acked.forgotten.iter().map(|id| format!("forgotten #{id}")))
            .collect();
    }
    let uids: HashSet<String> = c
        .prepare("SELECT uid FROM memories")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let tier = |id: i64| -> Option<String> {
        c.query_row("SELECT tier FROM memories WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .ok()
    };
    let mut lost = Vec::new();
    for u in &acked.remembered {
        if !uids.contains(u) {
            lost.push(format!("remembered {u}"));
        }
    }
    for (old, new) in &acked.corrected {
        if tier(*old).as_deref() != Some("superseded") || tier(*new).is_none() {
            lost.push(format!(
                "correction #{old} -> #{new} (tiers {:?}, {:?})",
                tier(*old),
                tier(*new)
            ));
        }
    }
    for id in &acked.forgotten {
        if tier(*id).as_deref() != Some("trash") {
            lost.push(format!("forget #{id} (tier {:?})", tier(*id)));
        }
    }
    lost
}

/// Reads an `engram serve --http 127.0.0.1:0` child's stderr until it names the address it
/// chose (a generous 120 s deadline for loaded machines, the output so far on failure), then drains the rest in a thread
/// so the server can never block on a full pipe.
pub fn http_addr(child: &mut std::process::Child) -> String {
    use std::io::Read;
    let mut err = child.stderr.take().expect("stderr piped");
    let mut buf = Vec::new();
    let started = std::time::Instant::now();
    let addr = loop {
        let mut b = [0u8; 512];
        let n = err.read(&mut b).unwrap();
        assert!(n > 0, "serve exited: {}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&b[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some(i) = text.find("http://")
            && let Some(j) = text[i + 7..].find("/mcp")
        {
            break text[i + 7..i + 7 + j].to_string();
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no address: {text}"
        );
    };
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    addr
}

/// The real model's folder, as `scripts/test` fetches it (`ENGRAM_TEST_MODEL_DIR`).
pub fn model_dir() -> String {
    std::env::var("ENGRAM_TEST_MODEL_DIR").unwrap_or_else(|_| {
        panic!("ENGRAM_TEST_MODEL_DIR is not set: run scripts/test, which fetches the model")
    })
}
