//! Seed C's database at engram's path: opened in place, backed up, converted with C's ids,
//! nothing of C's lost. The database is written here from C's documented DDL (tables,
//! full-text index and its triggers, WAL mode as C runs it).
//!
//! SQLite by nature: seed C's database is a SQLite file, converted in place.

use engram_core::Config;
use engram_core::memory::IdRef;
use engram_store::maintain::Verdict;
use engram_store::{RecallRequest, Store};
use rusqlite::Connection;
use std::path::Path;

const C_DDL: &str = r#"
PRAGMA journal_mode = WAL;
CREATE TABLE sessions (id TEXT PRIMARY KEY, project TEXT NOT NULL, directory TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT, summary TEXT);
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), type TEXT NOT NULL, title TEXT NOT NULL,
    content TEXT NOT NULL, tool_name TEXT, project TEXT, scope TEXT NOT NULL DEFAULT 'project',
    topic_key TEXT, normalized_hash TEXT, revision_count INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1, last_seen_at TEXT, pinned BOOLEAN NOT NULL DEFAULT 0,
    review_after TEXT, expires_at TEXT, embedding BLOB, embedding_model TEXT, embedding_created_at TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')), updated_at TEXT NOT NULL DEFAULT (datetime('now')),
    deleted_at TEXT, created_by TEXT);
CREATE INDEX idx_obs_session ON observations(session_id);
CREATE INDEX idx_obs_topic ON observations(topic_key, project, scope);
CREATE VIRTUAL TABLE observations_fts USING fts5(title, content, tool_name, type, project, topic_key,
    content='observations', content_rowid='id');
CREATE TRIGGER obs_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project, topic_key)
    VALUES (new.id, new.title, new.content, new.tool_name, new.type, new.project, new.topic_key);
END;
CREATE TRIGGER obs_fts_delete AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, content, tool_name, type, project, topic_key)
    VALUES ('delete', old.id, old.title, old.content, old.tool_name, old.type, old.project, old.topic_key);
END;
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), content TEXT NOT NULL, project TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')));
CREATE VIRTUAL TABLE prompts_fts USING fts5(content, project, content='user_prompts', content_rowid='id');
CREATE TRIGGER prompt_fts_insert AFTER INSERT ON user_prompts BEGIN
    INSERT INTO prompts_fts(rowid, content, project) VALUES (new.id, new.content, new.project);
END;
CREATE TABLE prompt_tombstones (sync_id TEXT PRIMARY KEY, session_id TEXT, project TEXT, deleted_at TEXT);
CREATE TABLE memory_relations (id INTEGER PRIMARY KEY, sync_id TEXT UNIQUE, source_id TEXT, target_id TEXT,
    relation TEXT, reason TEXT, evidence TEXT, confidence REAL, judgment_status TEXT, marked_by_actor TEXT,
    marked_by_kind TEXT, marked_by_model TEXT, session_id TEXT, created_at TEXT, updated_at TEXT,
    superseded_at TEXT, superseded_by_relation_id INTEGER);
CREATE TABLE sync_chunks (target_key TEXT NOT NULL DEFAULT 'local', chunk_id TEXT NOT NULL,
    imported_at TEXT NOT NULL DEFAULT (datetime('now')), PRIMARY KEY (target_key, chunk_id));
CREATE TABLE sync_state (target_key TEXT PRIMARY KEY, lifecycle TEXT, last_enqueued_seq INTEGER,
    last_acked_seq INTEGER, last_pulled_seq INTEGER, consecutive_failures INTEGER, backoff_until TEXT,
    lease_owner TEXT, lease_until TEXT, last_error TEXT, updated_at TEXT);
PRAGMA user_version = 7;

INSERT INTO sessions VALUES ('s-1', 'webapp', '/home/u/webapp', '2026-01-10 09:00:00', '2026-01-10 10:00:00', 'Set up auth');
INSERT INTO observations (id, sync_id, session_id, type, title, content, project, topic_key, revision_count, pinned, created_at, updated_at)
    VALUES (17, 'obs-aaaaaaaaaaaaaaaa', 's-1', 'architecture', 'Auth model', 'JWT in httpOnly cookies, rotated hourly', 'webapp', 'auth/model', 3, 1,
            '2026-01-10 09:10:00', '2026-01-11 09:10:00');
INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at, deleted_at)
    VALUES (42, 'obs-bbbbbbbbbbbbbbbb', 's-1', 'bugfix', 'Fixed CSRF', 'Added the SameSite flag to the session cookie', 'webapp',
            '2026-01-10 09:20:00', '2026-01-10 09:20:00', '2026-01-12 00:00:00');
INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at)
    VALUES (43, 'obs-cccccccccccccccc', 's-1', 'decision', 'Session store', 'Sessions live in Redis with a 30 day expiry', 'webapp',
            '2026-01-10 10:00:00', '2026-01-10 10:00:00');
INSERT INTO user_prompts (session_id, content, project, created_at) VALUES ('s-1', 'add login', 'webapp', '2026-01-10 09:01:00');
INSERT INTO user_prompts (session_id, content, project, created_at) VALUES ('s-1', 'deploy with DB_PASSWORD=CdbContentPw1', 'webapp', '2026-01-10 09:02:00');
INSERT INTO memory_relations (sync_id, source_id, target_id, relation, judgment_status, created_at, updated_at)
    VALUES ('rel-00000000000000aa', 'obs-cccccccccccccccc', 'obs-aaaaaaaaaaaaaaaa', 'pending', 'pending',
            '2026-01-10 10:00:00', '2026-01-10 10:00:00');
INSERT INTO sync_chunks (chunk_id) VALUES ('a1b2c3d4');
"#;

fn write_c_db(path: &Path) {
    let c = Connection::open(path).unwrap();
    c.execute_batch(C_DDL).unwrap();
    // Left open while engram opens the file? No: C is replaced by engram, so its process is
    // gone; closing here also leaves C's WAL checkpointed or not, as C would.
}

fn backups(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".seed-c-"))
        .collect()
}

#[test]
fn seed_c_database_at_engrams_path_is_converted_in_place_with_its_ids() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("engram.db");
    write_c_db(&db);

    let mut store = Store::open(&db, Config::default()).expect("C's database opens");

    // C's ids still name the same observations.
    let auth = store.get(&IdRef::Id(17)).unwrap();
    assert_eq!(auth.title.as_deref(), Some("Auth model"));
    assert_eq!(auth.room, "webapp");
    assert_eq!(auth.topic_key.as_deref(), Some("auth/model"));
    assert!(auth.pinned);
    let csrf = store.get(&IdRef::Id(42)).unwrap();
    assert_eq!(
        csrf.tier,
        engram_core::Tier::Trash,
        "C's soft delete is kept"
    );
    assert_eq!(
        store.get(&IdRef::Id(43)).unwrap().content,
        "Sessions live in Redis with a 30 day expiry"
    );
    // Sessions and prompts came along.
    let s = store.session("s-1").unwrap().expect("C's session");
    assert_eq!(s.summary.as_deref(), Some("Set up auth"));
    assert_eq!(store.rooms().unwrap()[0].prompts, 2);
    // The full text is searchable through engram's own index.
    let hits = store
        .recall(&RecallRequest {
            room: Some("webapp".into()),
            ..RecallRequest::new("Redis expiry")
        })
        .unwrap();
    assert_eq!(hits.hits[0].memory.id, 43);
    // C's pending relation is still open for a verdict, under C's judgment id.
    let j = store
        .judge(Verdict {
            judgment_id: "rel-00000000000000aa".into(),
            relation: "compatible".into(),
            ..Default::default()
        })
        .expect("C's pending judgment");
    assert_eq!(j.judgment_id, "rel-00000000000000aa");
    // New memories take ids after C's.
    let new = store
        .remember(engram_store::RememberRequest {
            content: "Deploys go through the staging cluster first".into(),
            room: Some("webapp".into()),
            ..Default::default()
        })
        .unwrap();
    assert!(new.id > 43, "{}", new.id);
    drop(store);

    // The backup is C's database, untouched.
    let b = backups(dir.path());
    assert_eq!(b.len(), 1, "{b:?}");
    let orig = Connection::open(&b[0]).unwrap();
    let n: i64 = orig
        .query_row("SELECT count(*) FROM observations", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 3);
    let v: i64 = orig
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 7);
    // C's raw rows are only in the backup: the set-aside tables are gone from the
    // converted file, and with them the secret that engram's import redacted; both files
    // are the owner's only.
    let conv = Connection::open(&db).unwrap();
    let left: i64 = conv
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'seed_c_%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(left, 0, "set-aside tables left in the store");
    drop(conv);
    let raw = std::fs::read(&db).unwrap();
    assert!(
        !raw.windows(13).any(|w| w == b"CdbContentPw1"),
        "C's secret is still in the store's file"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for f in [&db, &b[0]] {
            let mode = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", f.display());
        }
    }

    // Opening again converts and imports nothing twice.
    let store = Store::open(&db, Config::default()).unwrap();
    assert_eq!(
        store.stats().unwrap().total_memories,
        4,
        "3 of C's and the new one"
    );
    assert_eq!(backups(dir.path()).len(), 1);
}

#[test]
fn another_programs_database_is_refused_by_name_not_with_sql() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("engram.db");
    Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE sessions (x); CREATE TABLE todo (y);")
        .unwrap();
    let err = Store::open(&db, Config::default()).err().expect("refused");
    let msg = err.to_string();
    assert!(msg.contains("is not an engram database"), "{msg}");
    assert!(msg.contains("sessions, todo"), "{msg}");
    assert!(!msg.contains("already exists"), "{msg}");
}

/// Writes a sync folder holding one chunk of C's (`{sessions, observations, prompts}`).
fn write_c_chunk(folder: &Path, id: &str, chunk: &serde_json::Value) {
    use std::io::Write;
    std::fs::create_dir_all(folder.join("chunks")).unwrap();
    let f = std::fs::File::create(folder.join("chunks").join(format!("{id}.jsonl.gz"))).unwrap();
    let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::default());
    writeln!(gz, "{chunk}").unwrap();
    gz.finish().unwrap();
    let manifest = serde_json::json!({"version": 1, "chunks": [{"id": id, "created_by": "c",
        "created_at": "2026-01-12T00:00:00Z", "sessions": 1, "memories": 2, "prompts": 0}]});
    std::fs::write(folder.join("manifest.json"), manifest.to_string()).unwrap();
}

/// C's chunks of observations its database already held (written by C before the switch,
/// or by a machine still running C) are the same memories: C's sync id names them, so
/// `sync --import` adds nothing, whichever way the chunk writes their times.
#[test]
fn c_chunks_of_converted_observations_add_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("engram.db");
    write_c_db(&db);
    let mut store = Store::open(&db, Config::default()).unwrap();
    let before = store.stats().unwrap().total_memories;
    let folder = dir.path().join("repo").join(".engram");
    write_c_chunk(
        &folder,
        "0123abcd",
        &serde_json::json!({
            "sessions": [{"id": "s-1", "project": "webapp", "directory": "/home/u/webapp",
                          "started_at": "2026-01-10T09:00:00Z"}],
            "observations": [
                {"sync_id": "obs-aaaaaaaaaaaaaaaa", "session_id": "s-1", "type": "architecture",
                 "title": "Auth model", "content": "JWT in httpOnly cookies, rotated hourly",
                 "project": "webapp", "scope": "project", "topic_key": "auth/model",
                 "revision_count": 3, "created_at": "2026-01-10T09:10:00.000Z",
                 "updated_at": "2026-01-11T09:10:00Z"},
                {"sync_id": "obs-cccccccccccccccc", "session_id": "s-1", "type": "decision",
                 "title": "Session store", "content": "Sessions live in Redis with a 30 day expiry",
                 "project": "webapp", "scope": "project", "created_at": "2026-01-10 10:00:01",
                 "updated_at": "2026-01-10 10:00:01"}
            ],
            "prompts": []
        }),
    );
    let out = store.sync_import(&folder).unwrap();
    assert_eq!(out.imported, vec!["0123abcd".to_string()]);
    assert_eq!(
        out.created.get("memories").copied().unwrap_or(0),
        0,
        "{out:?}"
    );
    assert_eq!(store.stats().unwrap().total_memories, before);
    // C's counters came through the conversion.
    let auth = store.get(&IdRef::Id(17)).unwrap();
    assert_eq!(auth.metadata["c"]["revision_count"], 3, "{}", auth.metadata);
    assert_eq!(auth.metadata["c"]["sync_id"], "obs-aaaaaaaaaaaaaaaa");
}

/// A prompt another machine's C chunk holds (C's dates, `2026-01-10 09:01:00`) is not
/// written into the chunk this machine exports: C would import it a second time
/// (tester-c: the dates made every prompt look new).
#[test]
fn prompts_a_c_chunk_holds_are_not_exported_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("engram.db"), Config::default()).unwrap();
    let folder = dir.path().join("repo").join(".engram");
    write_c_chunk(
        &folder,
        "4567cdef",
        &serde_json::json!({
            "sessions": [{"id": "s-9", "project": "webapp", "directory": "/home/u/webapp",
                          "started_at": "2026-01-10 09:00:00"}],
            "observations": [],
            "prompts": [{"sync_id": "prompt-0123456789abcdef", "session_id": "s-9",
                         "content": "add the login page", "project": "webapp",
                         "created_at": "2026-01-10 09:01:00"}]
        }),
    );
    store.sync_import(&folder).unwrap();
    let out = store.sync_export(&folder, None, "engram").unwrap();
    assert!(out.chunk.as_ref().is_none_or(|c| c.prompts == 0), "{out:?}");
    // A prompt of this machine's own goes out with a stable C sync id.
    let origin = engram_store::hub::Origin {
        room: Some("webapp".into()),
        ..Default::default()
    };
    store
        .save_prompt("write the logout page", Some("s-9"), &origin)
        .unwrap();
    let out = store.sync_export(&folder, None, "engram").unwrap();
    let chunk = engram_store::git_sync::read_chunk(&folder, &out.chunk.unwrap().id).unwrap();
    let sync_id = chunk["prompts"][0]["sync_id"].as_str().unwrap().to_string();
    assert!(
        sync_id.starts_with("prompt-") && sync_id.len() == 23,
        "{chunk}"
    );
    assert_eq!(
        sync_id,
        engram_store::git_sync::prompt_sync_id(&chunk["prompts"][0])
    );
}
