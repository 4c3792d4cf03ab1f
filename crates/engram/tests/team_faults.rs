//! A team server under faults: PostgreSQL stopped under it (a clear error, never a crash
//! or a hang, and the next request after PostgreSQL is back succeeds), the server killed
//! with SIGKILL in a stream of writes (every acknowledged write is in the database), and a
//! wrong or unreachable URL (the server does not start, and says which database without
//! the password). Nothing waits on time: each step waits for a response, a port or an
//! exit, under generous does-it-hang deadlines.
//!
//! Stopping PostgreSQL needs a server of the test's own (the shared test server serves
//! other tests meanwhile): `scripts/pg-test-server start` makes one, `halt` and `resume`
//! stop and start it on the same port with its data. That case runs where the test
//! server's installation is known (`ENGRAM_TEST_PG_BIN`, exported by the script).

mod support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use support::command;
use support::team::{Server, admin_url, create_database, fresh_database, post};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-test-server")
}

/// A PostgreSQL server of this test's own; stopped and removed when dropped.
struct OwnPostgres {
    admin: String,
    dir: String,
}

impl OwnPostgres {
    fn start() -> OwnPostgres {
        let out = std::process::Command::new(script())
            .arg("start")
            .env("PG_BIN", std::env::var("ENGRAM_TEST_PG_BIN").unwrap())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg-test-server start: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let exports = String::from_utf8_lossy(&out.stdout).into_owned();
        let var = |name: &str| {
            exports
                .lines()
                .find_map(|l| l.strip_prefix(&format!("export {name}=")))
                .unwrap_or_else(|| panic!("no {name} in {exports}"))
                .trim_matches('\'')
                .to_string()
        };
        OwnPostgres {
            admin: var("ENGRAM_TEST_PG"),
            dir: var("ENGRAM_TEST_PG_DIR"),
        }
    }

    fn run(&self, verb: &str) {
        let out = std::process::Command::new(script())
            .args([verb, &self.dir])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg-test-server {verb}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = std::process::Command::new(script())
            .args(["stop", &self.dir])
            .env(
                "ENGRAM_TEST_PG_BIN",
                std::env::var("ENGRAM_TEST_PG_BIN").unwrap(),
            )
            .output();
    }
}

fn store_body(content: &str) -> Value {
    json!({ "content": content, "importance": 0.5, "user_id": "team" })
}

#[test]
fn postgres_stopped_under_a_server_is_a_clear_error_and_it_recovers() {
    if admin_url("the PostgreSQL restart").is_none() {
        return;
    }
    if std::env::var_os("ENGRAM_TEST_PG_BIN").is_none() {
        eprintln!("note: ENGRAM_TEST_PG_BIN is not set (not the script's server); skipping");
        return;
    }
    let pg = OwnPostgres::start();
    let url = create_database(&pg.admin, "restart");
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("home"), &url, &[]);
    assert_eq!(
        server.post("/v1/store", &store_body("Before the outage")).0,
        200
    );

    pg.run("halt");
    for path in ["/v1/recall", "/v1/store"] {
        let body = if path == "/v1/store" {
            store_body("During the outage")
        } else {
            json!({ "query": "outage", "user_id": "team" })
        };
        let (status, v) = server.post(path, &body);
        assert_eq!(status, 503, "{path}: {v}");
        // A handler's error is a string; the HTTP layer's (it asks the store first whether
        // it is a team's) is `{code, message}`.
        let message = v["error"]
            .as_str()
            .or_else(|| v["error"]["message"].as_str())
            .unwrap_or_default();
        assert!(
            message.contains("127.0.0.1") && message.contains("/engram_restart_"),
            "{path}: the error names the database: {v}"
        );
    }
    assert!(
        server_alive(&server),
        "the server survives the database going away"
    );

    pg.run("resume");
    let (status, v) = server.post("/v1/store", &store_body("After the outage"));
    assert_eq!(status, 200, "the pool reconnects: {v}");
    let (status, v) = server.post(
        "/v1/recall",
        &json!({ "query": "outage", "user_id": "team" }),
    );
    assert_eq!(status, 200, "{v}");
    let found = v.to_string();
    assert!(
        found.contains("Before the outage") && found.contains("After the outage"),
        "{v}"
    );
    assert!(
        !found.contains("During the outage"),
        "a refused write left nothing: {v}"
    );
}

fn server_alive(s: &Server) -> bool {
    // `try_wait` through a shared reference is not possible; a request answers instead.
    post(&s.addr, "/v1/stats", &json!({})).is_ok()
}

#[test]
fn a_server_killed_mid_stream_loses_no_acknowledged_write() {
    let Some(url) = fresh_database("sigkill") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(&dir.path().join("home"), &url, &[]);
    let addr = server.addr.clone();
    let (acks, acked) = std::sync::mpsc::channel::<(i64, String)>();
    // Four writers, each until its connection is refused; the test kills the server once
    // forty writes are acknowledged, so others are in flight when it dies.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let (addr, acks) = (addr.clone(), acks.clone());
            std::thread::spawn(move || {
                for n in 0.. {
                    let content = format!("Writer {w} note {n} about the release train");
                    match post(&addr, "/v1/store", &store_body(&content)) {
                        Ok((200, v)) => {
                            let id = v["memory_id"].as_i64().expect("an id");
                            if acks.send((id, content)).is_err() {
                                return;
                            }
                        }
                        Ok(_) => continue,
                        Err(_) => return,
                    }
                }
            })
        })
        .collect();
    drop(acks);
    let mut acknowledged = Vec::new();
    while acknowledged.len() < 40 {
        acknowledged.push(acked.recv().expect("the writers acknowledge writes"));
    }
    server.child.kill().unwrap(); // SIGKILL
    server.child.wait().unwrap();
    // Acknowledgements that were on their way when it died count too.
    acknowledged.extend(acked.iter());
    for w in writers {
        w.join().unwrap();
    }

    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for (id, content) in &acknowledged {
        let row = db
            .query_opt("SELECT content FROM memories WHERE id = $1", &[id])
            .unwrap();
        assert_eq!(
            row.map(|r| r.get::<_, String>(0)).as_deref(),
            Some(content.as_str()),
            "acknowledged write #{id} is in the database"
        );
    }
}

/// The output of `engram serve` started on `store`, which must exit (not serve) with a
/// failure.
fn refused_start(home: &Path, store: &str) -> String {
    let out = command(home)
        .args(["serve", "--http", "127.0.0.1:0", "--store", store])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "serve started on {store}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_wrong_or_unreachable_url_fails_at_start_naming_it_without_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // Nothing listens on port 9 (discard) of loopback here.
    let err = refused_start(&home, "postgres://team:s3cret-pw@127.0.0.1:9/engram");
    assert!(
        err.contains("127.0.0.1:9/engram") && !err.contains("s3cret-pw"),
        "{err}"
    );
    let err = refused_start(&home, "mysql://team:s3cret-pw@db/engram");
    assert!(err.contains("store") && !err.contains("s3cret-pw"), "{err}");
    // A reachable server without that database.
    let Some(admin) = admin_url("the missing database") else {
        return;
    };
    let missing = support::team::with_db(&admin, "engram_no_such_database");
    let with_password = missing.replacen("://engram@", "://engram:s3cret-pw@", 1);
    let err = refused_start(&home, &with_password);
    assert!(
        err.contains("engram_no_such_database") && !err.contains("s3cret-pw"),
        "{err}"
    );
}
