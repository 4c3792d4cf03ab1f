//! What an outside seed-C user found after switching (issue 13), through the built binary:
//! C never recorded use, so a converted memory's forgetting clock starts at its conversion.

mod support;

use std::path::Path;
use support::command;

/// C's observations table (the columns engram reads) with three memories written a year
/// before the switch and never recalled (C keeps no usage history).
const C_DDL: &str = r#"
CREATE TABLE sessions (id TEXT PRIMARY KEY, project TEXT NOT NULL, directory TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT, summary TEXT);
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), type TEXT NOT NULL, title TEXT NOT NULL,
    content TEXT NOT NULL, tool_name TEXT, project TEXT, scope TEXT NOT NULL DEFAULT 'project',
    topic_key TEXT, normalized_hash TEXT, revision_count INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1, last_seen_at TEXT, pinned BOOLEAN NOT NULL DEFAULT 0,
    review_after TEXT, expires_at TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now')), deleted_at TEXT, created_by TEXT);
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), content TEXT NOT NULL, project TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')));
INSERT INTO sessions VALUES ('s-1', 'webapp', '/home/u/webapp', datetime('now', '-400 days'), NULL, NULL);
INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at) VALUES
    (3, 'obs-aaaaaaaaaaaaaaaa', 's-1', 'bugfix', 'Cache TTL', 'Redis cache TTL is 300s for sessions', 'webapp',
        datetime('now', '-400 days'), datetime('now', '-400 days')),
    (4, 'obs-bbbbbbbbbbbbbbbb', 's-1', 'discovery', 'Flaky test', 'The login test flakes when the clock skews', 'webapp',
        datetime('now', '-380 days'), datetime('now', '-380 days')),
    (5, 'obs-cccccccccccccccc', 's-1', 'decision', 'Auth model', 'JWT in httpOnly cookies, rotated hourly', 'webapp',
        datetime('now', '-365 days'), datetime('now', '-365 days'));
"#;

fn engram(home: &Path, args: &[&str]) -> String {
    let out = command(home).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn maintenance_keeps_converted_c_memories_that_c_never_recorded_use_of() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(".engram");
    std::fs::create_dir_all(&home).unwrap();
    rusqlite::Connection::open(home.join("engram.db"))
        .unwrap()
        .execute_batch(C_DDL)
        .unwrap();
    engram(&home, &["stats"]);
    engram(&home, &["maintain"]);
    let stats = engram(&home, &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(
        v["by_tier"],
        serde_json::json!({"active": 3}),
        "maintenance archived converted memories: {stats}"
    );
    assert_eq!(v["events_by_kind"]["import"], 3, "{stats}");
    let shown = engram(&home, &["show", "3"]);
    assert!(shown.contains("tier:       active"), "{shown}");
}
