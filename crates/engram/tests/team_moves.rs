//! Moving a person's store into the team's PostgreSQL database and back, and backing the
//! database up with PostgreSQL's own tools: SQLite export → `engram import --store PG` →
//! `engram export --store PG` → SQLite import, then `pg_dump` → `pg_restore` into another
//! database. Every step keeps the uids, and every export along the way is line for line
//! the first one (the header's time and schema number aside). Runs against the test server
//! (`ENGRAM_TEST_PG`); skipped with a note without one, a failure under CI.

mod support;

use std::path::Path;
use support::team::{create_database, fresh_database, pg_program};

/// Runs `engram ARGS` in `home` (the harness environment), asserting success; stdout.
fn engram(home: &Path, args: &[&str]) -> String {
    support::team::engram_ok(home, &[], args)
}

/// An export's rows, sorted, without the header (its time and the schema number differ
/// between a SQLite and a PostgreSQL store by design).
fn rows(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows: Vec<String> = text
        .lines()
        .filter(|l| !l.contains("\"type\":\"header\""))
        .map(str::to_string)
        .collect();
    rows.sort();
    rows
}

/// The two exports hold the same rows; on failure, the rows only one of them holds.
fn assert_same(got: &[String], want: &[String], what: &str) {
    let only_got: Vec<&String> = got.iter().filter(|r| !want.contains(r)).collect();
    let only_want: Vec<&String> = want.iter().filter(|r| !got.contains(r)).collect();
    assert!(
        got == want,
        "{what}: rows only after it {only_got:#?}, rows only before it {only_want:#?}"
    );
}

/// A store with rows of many kinds: memories in two rooms, a correction (a superseded
/// memory and a `supersedes` link), an explicit link, a reinforcement, a pinned memory, a
/// forgotten one, CJK text.
fn a_personal_store(home: &Path) {
    let id = |out: String| {
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["id"]
            .as_i64()
            .or_else(|| v["memory"]["id"].as_i64())
            .unwrap_or_else(|| panic!("no id in {v}"))
            .to_string()
    };
    let helm = id(engram(
        home,
        &[
            "remember",
            "--json",
            "--room",
            "team",
            "We deploy with Helm charts",
        ],
    ));
    let port = id(engram(
        home,
        &[
            "remember",
            "--json",
            "--room",
            "team",
            "--kind",
            "decision",
            "The API listens on port 8080",
        ],
    ));
    engram(
        home,
        &[
            "correct",
            &port,
            "--content",
            "The API listens on port 9090 since the proxy moved",
            "--reason",
            "the proxy moved",
        ],
    );
    let tea = id(engram(
        home,
        &[
            "remember",
            "--json",
            "--room",
            "alice",
            "I prefer green tea; 抹茶が好き",
        ],
    ));
    engram(home, &["link", &helm, &tea]);
    engram(home, &["reinforce", &helm]);
    engram(home, &["pin", &helm]);
    let gone = id(engram(
        home,
        &["remember", "--json", "--room", "team", "A note to drop"],
    ));
    engram(home, &["forget", &gone]);
}

#[test]
fn a_store_moves_into_postgres_and_back_and_survives_pg_dump() {
    let Some(url) = fresh_database("moves") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (mine, team, back) = (
        dir.path().join("mine"),
        dir.path().join("team"),
        dir.path().join("back"),
    );
    let file = |n: &str| dir.path().join(n);
    let s = |p: std::path::PathBuf| p.to_string_lossy().into_owned();

    a_personal_store(&mine);
    engram(&mine, &["export", "--out", &s(file("mine.jsonl"))]);
    // In: the global `--store` names the team database for this one command.
    let imported = engram(
        &team,
        &["import", "--json", "--store", &url, &s(file("mine.jsonl"))],
    );
    assert!(imported.contains("created"), "{imported}");
    // Importing again creates nothing (every uid is there).
    let again: serde_json::Value = serde_json::from_str(&engram(
        &team,
        &["import", "--json", "--store", &url, &s(file("mine.jsonl"))],
    ))
    .unwrap();
    assert!(
        again["created"]
            .as_object()
            .is_none_or(|m| m.values().all(|n| n == 0)),
        "a second import creates nothing: {again}"
    );
    engram(
        &team,
        &["export", "--store", &url, "--out", &s(file("team.jsonl"))],
    );
    assert!(
        !team.join("engram.db").exists(),
        "a PostgreSQL store writes no SQLite file in the home"
    );
    assert!(
        !team.join("memories").exists(),
        "nor a Markdown vault: on a database many servers write, it is off"
    );
    // Out: into a fresh SQLite store, and its export.
    engram(&back, &["import", &s(file("team.jsonl"))]);
    engram(&back, &["export", "--out", &s(file("back.jsonl"))]);

    let first = rows(&file("mine.jsonl"));
    assert!(
        first.len() >= 12,
        "the store has rows of every kind: {first:#?}"
    );
    for kind in ["memory", "event", "link"] {
        assert!(
            first
                .iter()
                .any(|r| r.contains(&format!("\"type\":\"{kind}\""))),
            "the export has a {kind}: {first:#?}"
        );
    }
    assert_same(&rows(&file("team.jsonl")), &first, "SQLite → PostgreSQL");
    assert_same(&rows(&file("back.jsonl")), &first, "PostgreSQL → SQLite");

    // Recall on the team database finds what moved in, CJK included.
    let found = engram(
        &team,
        &[
            "recall", "--store", &url, "--room", "alice", "--json", "抹茶",
        ],
    );
    assert!(found.contains("green tea"), "{found}");

    // Backups: pg_dump → pg_restore into another database, then the same export.
    let (Some(dump), Some(restore)) = (pg_program("pg_dump"), pg_program("pg_restore")) else {
        eprintln!(
            "note: no pg_dump/pg_restore (ENGRAM_TEST_PG_BIN, PATH); skipping the backup round trip"
        );
        return;
    };
    // (The recall above recorded its hits: the dump is compared with the database now.)
    engram(
        &team,
        &["export", "--store", &url, "--out", &s(file("dumped.jsonl"))],
    );
    let archive = file("team.dump");
    let out = std::process::Command::new(dump)
        .args([
            "--format=custom",
            "--no-owner",
            "--file",
            &s(archive.clone()),
            &url,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pg_dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let admin = std::env::var("ENGRAM_TEST_PG").unwrap();
    let restored = create_database(&admin, "restored");
    let out = std::process::Command::new(restore)
        .args([
            "--no-owner",
            "--exit-on-error",
            "--dbname",
            &restored,
            &s(archive),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pg_restore: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    engram(
        &team,
        &[
            "export",
            "--store",
            &restored,
            "--out",
            &s(file("restored.jsonl")),
        ],
    );
    assert_same(
        &rows(&file("restored.jsonl")),
        &rows(&file("dumped.jsonl")),
        "pg_dump → pg_restore",
    );
    // The restored database is a working store: it takes a write and recalls it.
    engram(
        &team,
        &[
            "remember",
            "--store",
            &restored,
            "--room",
            "team",
            "Restored stores take writes",
        ],
    );
    let found = engram(
        &team,
        &[
            "recall",
            "--store",
            &restored,
            "--room",
            "team",
            "--json",
            "restored writes",
        ],
    );
    assert!(found.contains("Restored stores take writes"), "{found}");
}
