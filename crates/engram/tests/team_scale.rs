//! Several `engram serve` processes on one PostgreSQL database behave as one service: a
//! memory written through one is recalled through the other at once (lexically and, with
//! `ENGRAM_TEST_MODEL_DIR`, by meaning), counts agree, and a related write through the
//! second resolves against what the first wrote, once, even when both write at the same
//! moment. Runs against the test server (`ENGRAM_TEST_PG`); skipped with a note without
//! one, a failure under CI. Nothing here waits on time: each step waits for a response.

mod support;

use serde_json::{Value, json};
use support::team::{Server, fresh_database};

/// The harness environment with write-path resolution on (it is what is tested here).
const RESOLVING: &[(&str, &str)] = &[("ENGRAM_RESOLVE", "true")];

fn store(s: &Server, content: &str) -> Value {
    let (status, v) = s.post(
        "/v1/store",
        &json!({ "content": content, "importance": 0.5, "user_id": "team" }),
    );
    assert_eq!(status, 200, "{v}");
    v
}

fn recall(s: &Server, query: &str) -> Value {
    let (status, v) = s.post("/v1/recall", &json!({ "query": query, "user_id": "team" }));
    assert_eq!(status, 200, "{v}");
    v
}

fn contents(v: &Value) -> Vec<String> {
    v["memories"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|m| m["content"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn stats(s: &Server) -> Value {
    let (status, v) = s.post("/v1/stats", &json!({}));
    assert_eq!(status, 200, "{v}");
    v
}

#[test]
fn two_servers_on_one_database_are_one_service() {
    let Some(url) = fresh_database("scale") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let one = Server::start(&dir.path().join("one"), &url, RESOLVING);
    let two = Server::start(&dir.path().join("two"), &url, RESOLVING);

    // Written through one, recalled through the other at once; the counts agree.
    assert_eq!(
        store(&one, "We deploy with Helm charts")["action"],
        "created"
    );
    assert_eq!(
        contents(&recall(&two, "helm deploy")),
        ["We deploy with Helm charts"]
    );
    assert_eq!(stats(&two)["total"], 1);
    assert_eq!(stats(&one), stats(&two));

    // A related write through the second supersedes what the first wrote.
    store(&one, "The staging database runs PostgreSQL 15");
    let v = store(&two, "The staging database now runs PostgreSQL 16");
    assert_eq!(v["action"], "superseded", "{v}");
    assert_eq!(
        contents(&recall(&one, "staging database")),
        ["The staging database now runs PostgreSQL 16"]
    );

    // Both servers write the next value at the same moment: one supersedes, the other
    // finds it there (a repeat), and exactly one memory holds the value.
    let before = stats(&one)["total"].as_i64().unwrap();
    let barrier = std::sync::Barrier::new(2);
    let actions: Vec<String> = std::thread::scope(|s| {
        let racers: Vec<_> = [&one, &two]
            .into_iter()
            .map(|server| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    store(server, "The staging database now runs PostgreSQL 17")["action"]
                        .as_str()
                        .unwrap()
                        .to_string()
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert_eq!(
        actions.iter().filter(|a| *a == "superseded").count(),
        1,
        "one supersession, not two: {actions:?}"
    );
    assert_eq!(
        stats(&two)["total"].as_i64().unwrap(),
        before + 1,
        "{actions:?}"
    );
    for s in [&one, &two] {
        assert_eq!(
            contents(&recall(s, "staging database")),
            ["The staging database now runs PostgreSQL 17"]
        );
    }
    assert_eq!(stats(&one), stats(&two));
}

/// With the model: both servers embed in the server, and a memory written through one is
/// found by meaning (no shared word) through the other.
#[test]
fn two_servers_recall_by_meaning_what_the_other_wrote() {
    let Ok(model) = std::env::var("ENGRAM_TEST_MODEL_DIR") else {
        eprintln!("note: ENGRAM_TEST_MODEL_DIR is not set; skipping the model case");
        return;
    };
    let Some(url) = fresh_database("meaning") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A search waits for the loading model (a generous does-it-hang bound, not a pause).
    let env = [
        ("ENGRAM_MODEL", model.as_str()),
        ("ENGRAM_FIRST_RECALL_WAIT_MS", "600000"),
    ];
    let one = Server::start(&dir.path().join("one"), &url, &env);
    let two = Server::start(&dir.path().join("two"), &url, &env);
    store(
        &one,
        "The invoice service crashed because the disk was full",
    );
    store(&one, "Lunch on Fridays is at the Thai place");
    let v = recall(&two, "storage ran out of space");
    assert_ne!(v["search"], "lexical", "the model was used: {v}");
    assert_eq!(
        contents(&v).first().map(String::as_str),
        Some("The invoice service crashed because the disk was full"),
        "{v}"
    );
}
