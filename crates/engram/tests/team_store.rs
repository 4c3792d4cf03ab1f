//! The binary on a PostgreSQL store (`ENGRAM_STORE`, `engram serve --store`): what one
//! process writes another recalls at once, whatever home each runs from, because the
//! memories live in the server database, not in a file of the home. Runs against the
//! test server `scripts/test` starts (`ENGRAM_TEST_PG`, an admin URL); skipped with a note
//! without one, and a failure under CI, where the PostgreSQL run must never be skipped.

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;
use support::command;
use support::team::fresh_database;

fn cli(home: &std::path::Path, url: &str, args: &[&str]) -> String {
    support::team::engram_ok(home, &[("ENGRAM_STORE", url)], args)
}

#[test]
fn two_homes_and_a_server_share_one_postgres_store() {
    let Some(url) = fresh_database("share") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (alice, bob, server) = (
        dir.path().join("alice"),
        dir.path().join("bob"),
        dir.path().join("server"),
    );
    cli(
        &alice,
        &url,
        &["remember", "--room", "team", "We deploy with Helm charts"],
    );
    let found = cli(
        &bob,
        &url,
        &["recall", "--room", "team", "--json", "helm deploy"],
    );
    assert!(found.contains("We deploy with Helm charts"), "{found}");
    assert!(
        !bob.join("engram.db").exists(),
        "a PostgreSQL store writes no SQLite file in the home"
    );

    // A server on the same database, named by `--store`, answers what the CLI wrote.
    let mut child = command(&server)
        .args(["serve", "--http", "127.0.0.1:0", "--store", &url])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = support::http_addr(&mut child);
    let body = json!({"query": "helm deploy", "user_id": "team"}).to_string();
    let mut c = TcpStream::connect(&addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        c,
        "POST /v1/recall HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    let _ = c.read_to_string(&mut reply);
    let _ = child.kill();
    let _ = child.wait();
    let (_, json_body) = reply.split_once("\r\n\r\n").unwrap_or(("", ""));
    let v: Value = serde_json::from_str(json_body.trim()).unwrap_or(Value::Null);
    assert!(v.to_string().contains("Helm charts"), "{reply}");
}

/// A store setting that is neither empty nor a postgres:// URL is refused by name, and an
/// unreachable server is named without its password.
#[test]
fn a_bad_store_setting_is_refused_by_name_and_never_shows_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let out = command(dir.path())
        .env("ENGRAM_STORE", "mysql://x@y/z")
        .args(["stats"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("store"), "{err}");

    let out = command(dir.path())
        .env(
            "ENGRAM_STORE",
            "postgres://team:s3cret-pw@127.0.0.1:9/engram",
        )
        .args(["stats"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("127.0.0.1") && !err.contains("s3cret-pw"),
        "{err}"
    );

    // doctor names the server database, not the home's file, and not the password.
    let out = command(dir.path())
        .env(
            "ENGRAM_STORE",
            "postgres://team:s3cret-pw@127.0.0.1:9/engram",
        )
        .args(["doctor"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[NG] store") && text.contains("postgres://team@127.0.0.1:9/engram"),
        "{text}"
    );
    assert!(!text.contains("s3cret-pw"), "{text}");
}
