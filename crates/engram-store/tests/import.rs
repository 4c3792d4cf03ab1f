//! Export and import: engram's JSONL round trip, idempotent re-import, and each importer on
//! fixtures written here from the documented formats.

mod support;
use engram_core::memory::IdRef;
use engram_core::{Config, Kind, LinkKind, Millis, Tier};
use engram_store::importers::{self, Source};
use engram_store::{RememberRequest, Store};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

const T0: Millis = 1_790_000_000_000;

fn open(dir: &Path) -> Store {
    support::open_in(dir, Config::default()).with_clock(Arc::new(|| T0))
}

fn export(store: &Store) -> Vec<Value> {
    let mut buf = Vec::new();
    store.export_jsonl(&mut buf).unwrap();
    String::from_utf8(buf)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// What `engram import` runs: the file streamed into the store.
fn import(store: &mut Store, source: Source, path: &Path) -> engram_store::ImportReport {
    store
        .import_file(source, path, None, &mut |_, _| {})
        .unwrap()
}

fn all(store: &Store) -> Vec<engram_core::Memory> {
    export(store)
        .into_iter()
        .filter(|v| v["type"] == "memory")
        .map(|v| serde_json::from_value(v).unwrap())
        .collect()
}

#[test]
fn export_then_import_into_an_empty_store_is_equal() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let a = store
        .remember(RememberRequest {
            content: "Use WAL mode".into(),
            title: Some("WAL".into()),
            kind: Some(Kind::Decision),
            tags: vec!["db".into()],
            room: Some("engram".into()),
            topic_key: Some("db/mode".into()),
            session_id: Some("s1".into()),
            metadata: Some(serde_json::json!({"k": [1, 2]})),
            ..Default::default()
        })
        .unwrap()
        .id;
    let b = store
        .remember(RememberRequest {
            content: "The user likes short answers".into(),
            kind: Some(Kind::Preference),
            related: vec![IdRef::Id(a)],
            ..Default::default()
        })
        .unwrap()
        .id;
    store
        .reinforce(&[IdRef::Id(a), IdRef::Id(b)], 2.0, None)
        .unwrap();
    store
        .update(
            &IdRef::Id(a),
            engram_store::MemoryUpdate {
                content: Some("Use WAL mode, synchronous FULL".into()),
                ..Default::default()
            },
        )
        .unwrap();
    store
        .correct(
            &IdRef::Id(b),
            "The user likes detailed answers",
            "changed mind",
            None,
        )
        .unwrap();
    let origin = engram_store::Origin {
        room: Some("engram".into()),
        ..Default::default()
    };
    store
        .session_start("s1", &origin, Some("/work/engram"))
        .unwrap();
    store
        .save_prompt("what mode?", Some("s1"), &origin)
        .unwrap();

    let out = dir.path().join("dump.jsonl");
    let mut f = std::fs::File::create(&out).unwrap();
    store.export_jsonl(&mut f).unwrap();
    drop(f);
    let before = export(&store);
    assert_eq!(before[0]["type"], "header");
    assert_eq!(before[0]["version"], 1);

    let dir2 = tempfile::tempdir().unwrap();
    let mut fresh = open(dir2.path());
    let report = import(&mut fresh, Source::Engram, &out);
    assert_eq!(report.created_count("memories"), 3, "{report:?}");
    assert!(report.warnings.is_empty(), "{report:?}");
    let after = export(&fresh);
    // Equal line for line, but for the header's export time.
    assert_eq!(before.len(), after.len());
    for (x, y) in before.iter().zip(&after).skip(1) {
        assert_eq!(x, y);
    }

    // Importing again changes nothing.
    let again = import(&mut fresh, Source::Engram, &out);
    assert_eq!(again.created_count("memories"), 0, "{again:?}");
    assert_eq!(again.skipped_count("memories"), 3);
    assert!(again.created.values().all(|n| *n == 0), "{again:?}");
    let third = export(&fresh);
    for (x, y) in after.iter().zip(&third).skip(1) {
        assert_eq!(x, y);
    }
}

#[test]
fn from_b_markdown_folder() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    std::fs::create_dir_all(b.join("knowledge")).unwrap();
    std::fs::create_dir_all(b.join("episodes/2025/03")).unwrap();
    std::fs::create_dir_all(b.join("_trash")).unwrap();
    // B's files as python-frontmatter writes them (PyYAML block style, ints 1–10, local offsets).
    std::fs::write(
        b.join("knowledge/20250301-uv-is-fast-5FAV01.md"),
        "---\nid: 01JNQ0000000000000000000A1\ntype: knowledge\ncreated: '2025-03-01T10:00:00.123456+09:00'\ntags:\n- python\n- tooling\nimportance: 8\nsource: claude-code\ntier: hot\nroom: webapp\nlinks:\n- '[[01JNQ0000000000000000000B2]]'\n---\n\nuv is much faster than pip.\n",
    )
    .unwrap();
    std::fs::write(
        b.join("episodes/2025/03/20250302-deploy-0000B2.md"),
        "---\nid: 01JNQ0000000000000000000B2\ntype: episodes\ncreated: '2025-03-02T08:00:00+00:00'\ntags: []\nimportance: 3\nsource: auto-encode\ntier: cold\nroom: common\nlinks: []\n---\n\nDeployed the web app.\n",
    )
    .unwrap();
    std::fs::write(
        b.join("_trash/20250303-old-0000C3.md"),
        "---\nid: 01JNQ0000000000000000000C3\ntype: preferences\ncreated: '2025-03-03T08:00:00+00:00'\nimportance: 5\ntier: trash\nroom: common\n---\n\nTabs please.\n",
    )
    .unwrap();
    std::fs::write(b.join("knowledge/broken.md"), "---\ntype: [oops\n---\nx\n").unwrap();

    let mut store = open(&dir.path().join("store"));
    let r = import(&mut store, Source::B, &b);
    assert_eq!(r.created_count("memories"), 3, "{r:?}");
    assert_eq!(r.created_count("links"), 1, "{r:?}");
    assert_eq!(r.warnings.len(), 1, "{r:?}");
    let m = store
        .get(&IdRef::Uid("01JNQ0000000000000000000A1".into()))
        .unwrap();
    assert_eq!(m.content, "uv is much faster than pip.");
    assert_eq!(m.kind, Kind::Knowledge);
    assert_eq!(m.importance, 0.8);
    assert_eq!(m.room, "webapp");
    assert_eq!(m.tags, vec!["python", "tooling"]);
    assert_eq!(m.source, "claude-code");
    assert_eq!(
        m.created_at,
        engram_core::time::parse("2025-03-01T01:00:00.123Z").unwrap()
    );
    let e = store
        .get(&IdRef::Uid("01JNQ0000000000000000000B2".into()))
        .unwrap();
    assert_eq!((e.kind, e.tier), (Kind::Episode, Tier::Archived));
    let t = store
        .get(&IdRef::Uid("01JNQ0000000000000000000C3".into()))
        .unwrap();
    assert_eq!((t.kind, t.tier), (Kind::Preference, Tier::Trash));
    let again = import(&mut store, Source::B, &b);
    assert_eq!(again.created_count("memories"), 0);
    assert_eq!(again.created_count("links"), 0);
}

/// C's schema as documented (the later columns included).
const C_SCHEMA: &str = r#"
CREATE TABLE sessions (id TEXT PRIMARY KEY, project TEXT NOT NULL, directory TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT, summary TEXT);
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT, session_id TEXT NOT NULL,
    type TEXT NOT NULL, title TEXT NOT NULL, content TEXT NOT NULL, tool_name TEXT, project TEXT,
    scope TEXT NOT NULL DEFAULT 'project', topic_key TEXT, normalized_hash TEXT,
    revision_count INTEGER NOT NULL DEFAULT 1, duplicate_count INTEGER NOT NULL DEFAULT 1, last_seen_at TEXT,
    pinned BOOLEAN NOT NULL DEFAULT 0, review_after TEXT, expires_at TEXT, embedding BLOB, embedding_model TEXT,
    embedding_created_at TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now')), deleted_at TEXT, created_by TEXT);
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT, session_id TEXT NOT NULL,
    content TEXT NOT NULL, project TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')));
CREATE TABLE memory_relations (id INTEGER PRIMARY KEY, sync_id TEXT UNIQUE, source_id TEXT, target_id TEXT,
    relation TEXT, reason TEXT, evidence TEXT, confidence REAL, judgment_status TEXT, marked_by_actor TEXT,
    marked_by_kind TEXT, marked_by_model TEXT, session_id TEXT, created_at TEXT, updated_at TEXT,
    superseded_at TEXT, superseded_by_relation_id INTEGER);
INSERT INTO sessions VALUES ('s-1', 'WebApp', '/home/u/webapp', '2026-01-10 09:00:00', '2026-01-10 10:00:00', 'Set up auth');
INSERT INTO observations (sync_id, session_id, type, title, content, project, topic_key, revision_count, pinned, created_at, updated_at)
    VALUES ('obs-aaaaaaaaaaaaaaaa', 's-1', 'architecture', 'Auth model', 'JWT in httpOnly cookies', 'WebApp', 'auth/model', 3, 1,
            '2026-01-10 09:10:00', '2026-01-11 09:10:00');
INSERT INTO observations (sync_id, session_id, type, title, content, project, created_at, updated_at, deleted_at)
    VALUES ('obs-bbbbbbbbbbbbbbbb', 's-1', 'bugfix', 'Fixed CSRF', 'Added the SameSite flag', 'WebApp',
            '2026-01-10 09:20:00', '2026-01-10 09:20:00', '2026-01-12 00:00:00');
INSERT INTO observations (sync_id, session_id, type, title, content, project, created_at, updated_at)
    VALUES ('obs-cccccccccccccccc', 's-1', 'session_summary', 'Session', 'Auth done', 'WebApp',
            '2026-01-10 10:00:00', '2026-01-10 10:00:00');
INSERT INTO user_prompts (session_id, content, project, created_at) VALUES ('s-1', 'add login', 'WebApp', '2026-01-10 09:01:00');
INSERT INTO memory_relations (sync_id, source_id, target_id, relation, reason, confidence, created_at, updated_at)
    VALUES ('rel-0000000000000001', 'obs-cccccccccccccccc', 'obs-aaaaaaaaaaaaaaaa', 'related', 'same work', 0.8,
            '2026-01-10 10:00:00', '2026-01-10 10:00:00');
"#;

#[test]
fn from_c_sqlite_database() {
    let dir = tempfile::tempdir().unwrap();
    let cdb = dir.path().join("c.db");
    rusqlite::Connection::open(&cdb)
        .unwrap()
        .execute_batch(C_SCHEMA)
        .unwrap();
    let mut store = open(&dir.path().join("store"));
    let r = import(&mut store, Source::CDb, &cdb);
    assert_eq!(r.created_count("memories"), 3, "{r:?}");
    assert_eq!(r.created_count("sessions"), 1);
    assert_eq!(r.created_count("prompts"), 1);
    assert_eq!(r.created_count("links"), 1);
    let ms = all(&store);
    let auth = ms.iter().find(|m| m.content.starts_with("JWT")).unwrap();
    assert_eq!(auth.kind, Kind::Decision, "architecture maps to decision");
    assert_eq!(auth.room, "webapp");
    assert_eq!(auth.title.as_deref(), Some("Auth model"));
    assert_eq!(auth.topic_key.as_deref(), Some("auth/model"));
    assert!(auth.pinned);
    assert_eq!(auth.metadata["c"]["revision_count"], 3);
    assert_eq!(
        auth.created_at,
        engram_core::time::parse("2026-01-10T09:10:00Z").unwrap()
    );
    let fix = ms.iter().find(|m| m.content.starts_with("Added")).unwrap();
    assert_eq!((fix.kind, fix.tier), (Kind::Bugfix, Tier::Trash));
    let summary = ms.iter().find(|m| m.content == "Auth done").unwrap();
    assert_eq!(summary.kind, Kind::Episode);
    let links = export(&store)
        .into_iter()
        .filter(|v| v["type"] == "link")
        .collect::<Vec<_>>();
    assert_eq!(links[0]["kind"], "related");
    assert_eq!(links[0]["src"], summary.uid.as_str());
    let again = import(&mut store, Source::CDb, &cdb);
    assert!(again.created.values().all(|n| *n == 0), "{again:?}");
}

#[test]
fn from_c_export_json() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("c.json");
    std::fs::write(
        &f,
        serde_json::json!({
            "version": "0.2.0",
            "exported_at": "2026-02-01 00:00:00",
            "sessions": [{"id": "manual-save-api", "project": "api", "directory": "/x", "started_at": "2026-01-01 00:00:00"}],
            "observations": [
                {"id": 1, "session_id": "manual-save-api", "type": "preference", "title": "Style", "content": "Prefer small PRs",
                 "project": "api", "scope": "project", "revision_count": 1, "duplicate_count": 2,
                 "created_at": "2026-01-01 00:00:01", "updated_at": "2026-01-01 00:00:01"},
                {"id": 2, "session_id": "manual-save-api", "type": "manual", "title": "", "content": "Port is 8080",
                 "project": "api", "scope": "personal", "created_at": "2026-01-02 00:00:00", "updated_at": "2026-01-02 00:00:00"}
            ],
            "prompts": [{"id": 1, "session_id": "manual-save-api", "content": "hi", "project": "api", "created_at": "2026-01-01 00:00:00"}]
        })
        .to_string(),
    )
    .unwrap();
    let mut store = open(&dir.path().join("store"));
    let r = import(&mut store, Source::CJson, &f);
    assert_eq!(r.created_count("memories"), 2, "{r:?}");
    assert_eq!(r.created_count("sessions"), 1);
    assert_eq!(r.created_count("prompts"), 1);
    let ms = all(&store);
    assert!(
        ms.iter()
            .any(|m| m.kind == Kind::Preference && m.room == "api")
    );
    assert!(ms.iter().any(|m| m.kind == Kind::Fact && m.title.is_none()));
    // C's personal scope is the user's own, across projects: the shared `common` room.
    let personal = ms.iter().find(|m| m.content == "Port is 8080").unwrap();
    assert_eq!(personal.room, "common", "{personal:?}");
    let again = import(&mut store, Source::CJson, &f);
    assert!(again.created.values().all(|n| *n == 0), "{again:?}");
}

#[test]
fn from_mcp_memory_server() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("memory.json");
    std::fs::write(
        &f,
        [
            r#"{"type":"entity","name":"John_Smith","entityType":"person","observations":["Speaks fluent Spanish","Graduated in 2019"]}"#,
            r#"{"type":"entity","name":"Anthropic","entityType":"organization","observations":[]}"#,
            r#"{"type":"relation","from":"John_Smith","to":"Anthropic","relationType":"works_at"}"#,
            r#"{"type":"relation","from":"John_Smith","to":"Nobody","relationType":"knows"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let mut store = open(&dir.path().join("store"));
    let batch = importers::read(Source::McpMemory, &f, Some("people"), T0).unwrap();
    let r = store.import_batch(batch, &mut |_, _| {}).unwrap();
    assert_eq!(r.created_count("memories"), 3, "{r:?}");
    assert_eq!(r.created_count("links"), 1);
    assert_eq!(r.warnings.len(), 1, "{r:?}");
    let ms = all(&store);
    let s = ms
        .iter()
        .find(|m| m.content == "Speaks fluent Spanish")
        .unwrap();
    assert_eq!(s.title.as_deref(), Some("John_Smith"));
    assert_eq!(s.tags, vec!["John_Smith", "person"]);
    assert_eq!(s.room, "people");
    let links: Vec<Value> = export(&store)
        .into_iter()
        .filter(|v| v["type"] == "link")
        .collect();
    assert_eq!(links[0]["note"], "works_at");
    assert_eq!(links[0]["kind"], LinkKind::Related.as_str());
    let batch = importers::read(Source::McpMemory, &f, Some("people"), T0 + 5000).unwrap();
    let again = store.import_batch(batch, &mut |_, _| {}).unwrap();
    assert!(again.created.values().all(|n| *n == 0), "{again:?}");
}

#[test]
fn from_a_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.jsonl");
    // What `COPY memories TO 'a.jsonl'` writes from A's DuckDB table.
    std::fs::write(
        &f,
        [
            r#"{"id":1,"user_id":"default","content":"Prefer pytest fixtures","embedding":[0.1,0.2],"importance":0.7,"category":"strategy","recall_count":4,"created_at":"2025-06-01 12:00:00.123456","last_accessed_at":"2025-06-03 12:00:00","metadata":{}}"#,
            r#"{"id":2,"user_id":"alice","content":"Failure in auth: token expired","importance":0.9,"category":"failure","recall_count":0,"created_at":"2025-06-02 12:00:00","last_accessed_at":"2025-06-02 12:00:00","metadata":"{\"type\": \"failure\", \"component\": \"auth\"}"}"#,
            r#"{"id":3,"user_id":"default","content":"Session Handoff: done","importance":0.9,"category":"strategy","created_at":"2025-06-04 12:00:00","metadata":{"type":"handoff"}}"#,
            "not json",
        ]
        .join("\n"),
    )
    .unwrap();
    let mut store = open(&dir.path().join("store"));
    let r = import(&mut store, Source::AJsonl, &f);
    assert_eq!(r.created_count("memories"), 3, "{r:?}");
    assert_eq!(r.warnings.len(), 1);
    let ms = all(&store);
    let p = ms.iter().find(|m| m.content.starts_with("Prefer")).unwrap();
    assert_eq!(
        (p.kind, p.importance, p.room.as_str()),
        (Kind::Strategy, 0.7, "common")
    );
    assert_eq!(p.metadata["a"]["recall_count"], 4);
    assert_eq!(
        p.created_at,
        engram_core::time::parse("2025-06-01T12:00:00.123Z").unwrap()
    );
    let fl = ms
        .iter()
        .find(|m| m.content.starts_with("Failure"))
        .unwrap();
    assert_eq!((fl.kind, fl.room.as_str()), (Kind::Failure, "alice"));
    // A's ids are kept: an agent's "memory 2" is still this one.
    assert_eq!((p.id, fl.id), (1, 2));
    assert_eq!(fl.metadata["component"], "auth");
    assert!(ms.iter().any(|m| m.kind == Kind::Handoff));
    let again = import(&mut store, Source::AJsonl, &f);
    assert!(again.created.values().all(|n| *n == 0), "{again:?}");
}

/// A record over engram's content limit (A took 100 KB) is split into linked parts, and
/// the later parts take no source id: every A id after it is still that memory's
/// (tester-a: they were all off by one, so `update_memory 6` changed memory 5's text).
#[test]
fn a_long_record_keeps_every_later_id() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.jsonl");
    let long = "design doc paragraph. ".repeat(4_000);
    let row = |id: i64, content: &str| {
        serde_json::json!({"id": id, "user_id": "default", "content": content, "importance": 0.5,
                           "category": "fact", "recall_count": 0, "created_at": "2025-06-01 12:00:00",
                           "metadata": {}})
        .to_string()
    };
    std::fs::write(
        &f,
        [
            row(5, &long),
            row(6, "Short memory six"),
            row(7, "Short memory seven"),
        ]
        .join("\n"),
    )
    .unwrap();
    let mut store = open(&dir.path().join("store"));
    let r = import(&mut store, Source::AJsonl, &f);
    assert!(r.created_count("memories") >= 4, "{r:?}");
    let get = |id: i64| store.get(&engram_core::memory::IdRef::Id(id)).unwrap();
    assert!(get(5).content.starts_with("design doc"));
    assert_eq!(get(6).content, "Short memory six");
    assert_eq!(get(7).content, "Short memory seven");
}

/// A's `graph.json` (NetworkX node-link data, its edges written both ways) beside the
/// table: its edges between imported memories become links, an edge to a memory not in
/// the table is named in a warning, importing again creates nothing, and a file that is not
/// A's graph fails before anything is stored.
#[test]
fn a_graph_edges_become_links() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.jsonl");
    std::fs::write(
        &f,
        [
            r#"{"id":1,"user_id":"default","content":"Deploys run through the blue-green script","importance":0.6,"category":"fact","created_at":"2025-06-01 12:00:00","metadata":{}}"#,
            r#"{"id":2,"user_id":"default","content":"The blue-green script needs the LB token","importance":0.6,"category":"fact","created_at":"2025-06-02 12:00:00","metadata":{}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let graph = dir.path().join("graph.json");
    std::fs::write(
        &graph,
        r#"{"directed": true, "multigraph": false, "graph": {}, "nodes": [{"id": 1}, {"id": 2}, {"id": 9}],
            "links": [{"weight": 0.41, "relation": "semantic", "source": 1, "target": 2},
                      {"weight": 0.41, "relation": "semantic", "source": 2, "target": 1},
                      {"weight": 0.3, "relation": "caused_by", "source": "1", "target": "2"},
                      {"weight": 0.5, "relation": "semantic", "source": 1, "target": 9}]}"#,
    )
    .unwrap();
    let mut store = open(&dir.path().join("store"));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"nodes": []}"#).unwrap();
    let err = store
        .import_seed_a(&f, graph_only(&bad), None, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.json") && err.contains("node-link"),
        "{err}"
    );
    assert!(all(&store).is_empty(), "a refused graph stored nothing");

    let r = store
        .import_seed_a(&f, graph_only(&graph), None, &mut |_, _| {})
        .unwrap();
    assert_eq!(r.created_count("memories"), 2, "{r:?}");
    assert_eq!(r.created_count("links"), 3, "{r:?}");
    assert!(r.warnings.iter().any(|w| w.contains("1 edges")), "{r:?}");
    let ms = all(&store);
    let id_of = |start: &str| {
        ms.iter()
            .find(|m| m.content.starts_with(start))
            .unwrap()
            .uid
            .clone()
    };
    let (deploys, token) = (id_of("Deploys"), id_of("The blue-green"));
    let links: Vec<Value> = export(&store)
        .into_iter()
        .filter(|v| v["type"] == "link")
        .collect();
    let semantic: Vec<&Value> = links.iter().filter(|l| l["kind"] == "semantic").collect();
    assert_eq!(semantic.len(), 2, "{links:?}");
    assert!(
        semantic
            .iter()
            .all(|l| (l["weight"].as_f64().unwrap() - 0.41).abs() < 1e-9)
    );
    let related = links.iter().find(|l| l["kind"] == "related").unwrap();
    assert!(
        related["note"].as_str().unwrap().contains("caused_by"),
        "{related}"
    );
    let ends: Vec<(String, String)> = links
        .iter()
        .map(|l| {
            (
                l["src"].as_str().unwrap().to_string(),
                l["dst"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        ends.contains(&(deploys.clone(), token.clone())) && ends.contains(&(token, deploys)),
        "{links:?}"
    );
    let again = store
        .import_seed_a(&f, graph_only(&graph), None, &mut |_, _| {})
        .unwrap();
    assert!(again.created.values().all(|n| *n == 0), "{again:?}");
}

fn graph_only(graph: &std::path::Path) -> engram_store::importers::SeedAFiles<'_> {
    engram_store::importers::SeedAFiles {
        graph: Some(graph),
        tasks: None,
    }
}

/// A's `tasks` table beside its memories: each row becomes a task (A's name, goal, status
/// and dates), the memories whose metadata names it belong to it (`get_task` lists them),
/// its handoffs are its checkpoints in order (so `restore_checkpoint` restores the latest),
/// A's memory ids stay theirs, and importing again creates and changes nothing.
#[test]
fn a_tasks_become_tasks_with_their_memories() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.jsonl");
    std::fs::write(
        &f,
        [
            r#"{"id":1,"user_id":"default","content":"Session handoff: the OAuth flow works; next the refresh token","importance":0.7,"category":"fact","created_at":"2025-06-01 12:00:00","metadata":{"type":"handoff","task_id":1}}"#,
            r#"{"id":2,"user_id":"default","content":"The refresh token endpoint returns 401 when the clock skews","importance":0.8,"category":"fact","created_at":"2025-06-02 12:00:00","metadata":{"type":"failure","task_id":"1"}}"#,
            r#"{"id":3,"user_id":"default","content":"Session Handoff: refresh works\nCompleted: refresh token\nNext steps: logout page","importance":0.7,"category":"fact","created_at":"2025-06-03 12:00:00","metadata":{"type":"handoff","task_id":1}}"#,
            r#"{"id":4,"user_id":"default","content":"The staging database is Postgres 16","importance":0.5,"category":"fact","created_at":"2025-06-03 13:00:00","metadata":{"task_id":7}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let tasks = dir.path().join("a-tasks.jsonl");
    std::fs::write(
        &tasks,
        [
            r#"{"id":1,"name":"OAuth login","goal":"Users sign in with GitHub","status":"in_progress","user_id":"default","created_at":"2025-05-31 09:00:00","updated_at":"2025-06-03 12:00:00","metadata":"{\"ticket\": \"AUTH-12\"}"}"#,
            r#"{"id":2,"name":"Dark mode","goal":"","status":"done","user_id":"default","created_at":"2025-05-20 09:00:00","updated_at":"2025-05-21 09:00:00","metadata":{}}"#,
            r#"{"id":3,"name":"Broken","status":"someday","user_id":"default"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let mut store = open(&dir.path().join("store"));
    let files = engram_store::importers::SeedAFiles {
        graph: None,
        tasks: Some(&tasks),
    };
    let r = store
        .import_seed_a(&f, files, None, &mut |_, _| {})
        .unwrap();
    assert_eq!(r.created_count("memories"), 6, "{r:?}");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("line 3") && w.contains("someday")),
        "{r:?}"
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("1 memories name a task_id")),
        "{r:?}"
    );
    let ms = all(&store);
    for id in 1..=4 {
        assert!(
            ms.iter()
                .any(|m| m.id == id && m.source == "engram-a" && !m.content.starts_with("Task:")),
            "A's memory ids stay theirs"
        );
    }
    let listed = store
        .tasks(&engram_core::room::RoomScope::All, None, 10)
        .unwrap();
    let oauth = listed
        .iter()
        .find(|t| t.name == "OAuth login")
        .expect("task imported");
    assert_eq!(
        (oauth.status.as_str(), oauth.goal.as_str()),
        ("in_progress", "Users sign in with GitHub")
    );
    assert_eq!(oauth.metadata["ticket"], "AUTH-12");
    assert!(
        listed
            .iter()
            .any(|t| t.name == "Dark mode" && t.status == "done")
    );
    let view = store.task_view(oauth.task_id).unwrap();
    assert_eq!(
        (view.handoffs.len(), view.failures.len()),
        (2, 1),
        "{view:?}"
    );
    let latest = view.latest_checkpoint.clone().unwrap();
    assert_eq!(latest.version, 3);
    assert!(latest.content.contains("logout"), "{latest:?}");
    let restored = store
        .restore_checkpoint(
            oauth.task_id,
            None,
            engram_core::task::RestoreMode::Selective,
        )
        .unwrap();
    assert!(
        restored.checkpoint.content.contains("logout"),
        "{restored:?}"
    );
    // The state A kept only in the handoff's text is read back from it.
    assert_eq!(restored.state.summary.as_deref(), Some("refresh works"));
    assert_eq!(
        restored.state.next_steps,
        vec![serde_json::json!("logout page")]
    );
    assert_eq!(
        restored.state.completed,
        vec![serde_json::json!("refresh token")]
    );
    // A's own task id still names the task (memory 1 is A's handoff, not a task).
    let by_a_id = store.task_view(1).unwrap();
    assert_eq!(by_a_id.task.task_id, oauth.task_id);
    assert_eq!(by_a_id.handoffs.len(), 2);
    let before = export(&store);
    let again = store
        .import_seed_a(&f, files, None, &mut |_, _| {})
        .unwrap();
    assert!(again.created.values().all(|n| *n == 0), "{again:?}");
    assert_eq!(export(&store), before, "importing again changes nothing");
}

/// A's `recall_count` and `last_accessed_at` become recall events, so a memory A's users
/// recalled last week is not archived by the first maintenance as if never used.
#[test]
fn a_memories_keep_their_recalls_and_are_not_archived_as_unused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.jsonl");
    let day: Millis = 86_400_000;
    let at = |ms: Millis| {
        engram_core::time::format(ms)
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string()
    };
    let line = |id: u32, content: &str, imp: f64, recalls: u32, created: Millis, last: Millis| {
        format!(
            r#"{{"id":{id},"user_id":"default","content":"{content}","importance":{imp},"category":"decision","recall_count":{recalls},"created_at":"{}","last_accessed_at":"{}","metadata":{{}}}}"#,
            at(created),
            at(last)
        )
    };
    std::fs::write(
        &f,
        [
            line(
                1,
                "We adopt DuckDB for the analytics store",
                0.9,
                5,
                T0 - 40 * day,
                T0 - 6 * day,
            ),
            line(
                2,
                "The staging cluster was renamed blue",
                0.3,
                0,
                T0 - 400 * day,
                T0 - 400 * day,
            ),
        ]
        .join("\n"),
    )
    .unwrap();
    let mut store = open(&dir.path().join("store"));
    let r = import(&mut store, Source::AJsonl, &f);
    assert_eq!(r.created_count("memories"), 2, "{r:?}");
    let ms = all(&store);
    let used = ms.iter().find(|m| m.content.contains("DuckDB")).unwrap();
    let unused = ms.iter().find(|m| m.content.contains("staging")).unwrap();
    let hits = |m: &engram_core::Memory| {
        export(&store)
            .iter()
            .filter(|v| {
                v["type"] == "event" && v["memory"] == m.uid.as_str() && v["kind"] == "recall_hit"
            })
            .count()
    };
    assert_eq!((hits(used), hits(unused)), (5, 0));
    let plan = store.maintain(true).unwrap();
    let archived: Vec<_> = plan.archived.iter().map(|a| a.id).collect();
    assert!(!archived.contains(&used.id), "{plan:?}");
    assert!(archived.contains(&unused.id), "{plan:?}");
}

/// An endless line (`/dev/zero`, or a file of one huge line) ends with an error naming the
/// per-line limit, after reading about that limit, for every JSON-lines format.
#[test]
fn an_endless_line_is_refused_at_the_line_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    let line = format!(
        "{{\"type\":\"memory\",\"content\":\"{}\"}}\n",
        "x".repeat(engram_core::limits::MAX_IMPORT_LINE_BYTES + 10)
    );
    std::fs::write(&path, line).unwrap();
    for source in [Source::Engram, Source::AJsonl, Source::McpMemory] {
        let err = importers::read(source, &path, None, T0)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("line 1") && err.contains("bytes per line"),
            "{err}"
        );
    }
    #[cfg(target_os = "linux")]
    {
        let err = importers::read(Source::Engram, Path::new("/dev/zero"), None, T0)
            .unwrap_err()
            .to_string();
        assert!(err.contains("bytes per line"), "{err}");
    }
}

/// The streamed import (`import_jsonl`, what `engram import` runs for engram's format)
/// reads a chunk of memories at a time: an export of 2,500 memories (three chunks) with
/// events, revisions and links that span chunks comes back equal line for line, a link
/// written before its memories is stored at the end, and importing again adds nothing.
#[test]
fn a_streamed_import_of_many_chunks_is_equal_and_adds_nothing_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let mut lines = String::new();
    for i in 0..2500 {
        let line = serde_json::json!({
            "type": "memory", "id": i + 1, "uid": format!("01JA{i:022}"),
            "content": format!("Record {i}: host-{i} answers on port {}.", 8000 + i),
            "kind": "fact", "importance": 0.5, "tags": [], "room": "app", "tier": "active",
            "created_at": "2026-09-21T00:00:00Z", "updated_at": "2026-09-21T00:00:00Z",
            "valid_from": "2026-09-21T00:00:00Z", "valid_to": null, "pinned": false,
            "source": "import", "metadata": {},
        });
        lines.push_str(&format!("{line}\n"));
    }
    let batch = engram_store::transfer::read_jsonl(&mut std::io::Cursor::new(lines)).unwrap();
    store.import_batch(batch, &mut |_, _| {}).unwrap();
    for (a, b) in [(1, 2400), (1200, 3), (2500, 1001)] {
        store
            .link(&IdRef::Id(a), &IdRef::Id(b), LinkKind::Related, None)
            .unwrap();
    }
    store
        .reinforce(&[IdRef::Id(7), IdRef::Id(2499)], 1.0, None)
        .unwrap();
    store
        .update(
            &IdRef::Id(2000),
            engram_store::MemoryUpdate {
                content: Some("Record 2000 moved to port 9999.".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let mut dump = Vec::new();
    store.export_jsonl(&mut dump).unwrap();
    // A link line ahead of every memory waits for the end of the import.
    let text = String::from_utf8(dump).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let early = text
        .lines()
        .find(|l| l.contains("\"type\":\"link\""))
        .unwrap()
        .to_string();
    let file = dir.path().join("dump.jsonl");
    std::fs::write(&file, format!("{header}\n{early}\n{rest}")).unwrap();
    let before = export(&store);

    let stream = |store: &mut Store| {
        let mut open = || -> engram_store::Result<(Box<dyn std::io::Read>, u64)> {
            let f = std::fs::File::open(&file).unwrap();
            let len = f.metadata().unwrap().len();
            Ok((Box::new(f), len))
        };
        let mut steps = 0;
        let report = store
            .import_jsonl(&mut open, None, &mut |_, _| steps += 1)
            .unwrap();
        (report, steps)
    };
    let dir2 = tempfile::tempdir().unwrap();
    let mut fresh = open(dir2.path());
    let (report, steps) = stream(&mut fresh);
    assert_eq!(report.created_count("memories"), 2500, "{report:?}");
    assert!(steps >= 3, "read in chunks: {steps} steps");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let after = export(&fresh);
    assert_eq!(before.len(), after.len());
    for (x, y) in before.iter().zip(&after).skip(1) {
        assert_eq!(x, y);
    }
    let (again, _) = stream(&mut fresh);
    assert!(again.created.values().all(|n| *n == 0), "{again:?}");
    assert_eq!(again.skipped_count("memories"), 2500);
    for (x, y) in after.iter().zip(&export(&fresh)).skip(1) {
        assert_eq!(x, y);
    }
}

/// A folder import reads no runaway file and follows no link: a Markdown file over the
/// limit and a symbolic link are each skipped with a warning naming them, and the rest
/// is imported.
#[test]
fn a_b_folder_skips_runaway_files_and_links_with_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    std::fs::create_dir_all(b.join("facts")).unwrap();
    std::fs::write(b.join("facts/small.md"), "The CI runs on every push.\n").unwrap();
    let big = b.join("facts/big.md");
    let cap = engram_core::limits::MAX_MARKDOWN_FILE_BYTES as usize;
    std::fs::write(&big, "x".repeat(cap + 1)).unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.md"), "Outside the folder.\n").unwrap();
    std::os::unix::fs::symlink(&outside, b.join("linked")).unwrap();
    std::fs::create_dir_all(dir.path().join("store")).unwrap();
    let mut store = open(&dir.path().join("store"));
    let r = import(&mut store, Source::B, &b);
    assert_eq!(r.created_count("memories"), 1, "{r:?}");
    let warned = |needle: &str| r.warnings.iter().any(|w| w.contains(needle));
    assert!(warned("big.md") && warned("16 MiB"), "{:?}", r.warnings);
    assert!(
        warned("linked") && warned("symbolic link"),
        "{:?}",
        r.warnings
    );
    assert!(all(&store).iter().all(|m| !m.content.contains("Outside")));
}

/// Records of every streamed format, `n` memories each, with one relation or link written
/// before the memories it names (it waits for the end) and one after.
fn streamed_fixtures(dir: &Path, n: usize) -> Vec<(Source, std::path::PathBuf)> {
    use std::fmt::Write;
    let at = "2026-09-21T00:00:00Z";
    let mut a = String::new();
    for i in 0..n {
        let line = serde_json::json!({"id": i, "content": format!("A record {i}: host-{i} on port {}", 8000 + i), "created_at": at});
        writeln!(a, "{line}").unwrap();
    }
    let mut m = String::new();
    writeln!(
        m,
        r#"{{"type":"relation","from":"host-1","to":"host-2","relationType":"calls"}}"#
    )
    .unwrap();
    for i in 0..n {
        let line = serde_json::json!({"type": "entity", "name": format!("host-{i}"), "entityType": "server", "observations": [format!("Host {i} answers on port {}", 8000 + i)]});
        writeln!(m, "{line}").unwrap();
    }
    writeln!(
        m,
        r#"{{"type":"relation","from":"host-3","to":"host-4","relationType":"calls"}}"#
    )
    .unwrap();
    let obs: Vec<Value> = (0..n)
        .map(|i| serde_json::json!({"id": i + 1, "sync_id": format!("obs-s{i}"), "type": "decision", "title": format!("T{i}"), "content": format!("C decision {i}: use port {}", 8000 + i), "project": "app", "created_at": at}))
        .collect();
    let rel = |id: usize, a: usize, b: usize| serde_json::json!({"id": id, "sync_id": format!("rel-s{id}"), "source_id": format!("obs-s{a}"), "target_id": format!("obs-s{b}"), "relation": "related", "judgment_status": "judged", "created_at": at});
    let doc = serde_json::json!({
        "version": "0.1",
        "relations": [rel(1, 1, 2)],
        "embeddings": ["x".repeat(3 << 20)],
        "sessions": [{"id": "s1", "project": "app", "directory": "/w/app", "started_at": at}],
        "observations": obs,
        "prompts": [{"session_id": "s1", "content": "where is the port?", "project": "app", "created_at": at}],
        "memory_relations": [rel(2, 3, 4)],
    });
    let db = dir.join("c.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "CREATE TABLE observations (id INTEGER PRIMARY KEY, sync_id TEXT, type TEXT, title TEXT, content TEXT, project TEXT, created_at TEXT);
         CREATE TABLE memory_relations (id INTEGER PRIMARY KEY, sync_id TEXT, source_id TEXT, target_id TEXT, relation TEXT, judgment_status TEXT, created_at TEXT);",
    )
    .unwrap();
    for o in &obs {
        conn.execute(
            "INSERT INTO observations (id, sync_id, type, title, content, project, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            rusqlite::params![o["id"].as_i64(), o["sync_id"].as_str(), o["type"].as_str(), o["title"].as_str(), o["content"].as_str(), o["project"].as_str(), at],
        )
        .unwrap();
    }
    conn.execute(
        "INSERT INTO memory_relations VALUES (1, 'rel-s1', 'obs-s1', 'obs-s2', 'related', 'judged', ?1)",
        [at],
    )
    .unwrap();
    let files = [
        (Source::AJsonl, "a.jsonl", a),
        (Source::McpMemory, "memory.json", m),
        (Source::CJson, "c.json", doc.to_string()),
    ];
    let mut out: Vec<_> = files
        .into_iter()
        .map(|(s, name, text)| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            (s, p)
        })
        .collect();
    out.push((Source::CDb, db));
    out
}

/// Every importer of a file streams (`engram import`): 2,500 memories of each format are
/// stored a chunk at a time (the progress is told once per chunk), every one of them, a
/// relation read before its memories is stored at the end, a large list that is not C's is
/// skipped without being held, and importing again adds nothing.
#[test]
fn every_file_importer_streams_in_chunks_and_adds_nothing_again() {
    let files = tempfile::tempdir().unwrap();
    for (source, path) in streamed_fixtures(files.path(), 2500) {
        let dir = tempfile::tempdir().unwrap();
        let mut store = open(dir.path());
        let mut steps = 0;
        let report = store
            .import_file(source, &path, None, &mut |_, _| steps += 1)
            .unwrap();
        assert_eq!(
            report.created_count("memories"),
            2500,
            "{source:?}: {report:?}"
        );
        assert!(steps >= 3, "{source:?}: read in chunks, {steps} steps");
        assert!(
            report.warnings.is_empty(),
            "{source:?}: {:?}",
            report.warnings
        );
        let links = match source {
            Source::AJsonl => 0,
            Source::CDb => 1,
            _ => 2,
        };
        assert_eq!(
            report.created_count("links"),
            links,
            "{source:?}: {report:?}"
        );
        let again = store
            .import_file(source, &path, None, &mut |_, _| {})
            .unwrap();
        assert_eq!(again.skipped_count("memories"), 2500, "{source:?}");
        assert!(
            again.created.values().all(|n| *n == 0),
            "{source:?}: {again:?}"
        );
    }
}

/// A record of C's export over the per-record limit fails the import, naming the record
/// and the limit, and stores nothing; a document that is not an object is refused.
#[test]
fn a_c_export_record_over_the_limit_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let big = "y".repeat(engram_core::limits::MAX_IMPORT_RECORD_BYTES as usize + 10);
    let doc = serde_json::json!({"observations": [
        {"id": 1, "sync_id": "obs-1", "content": "fits", "project": "app"},
        {"id": 2, "sync_id": "obs-2", "content": big, "project": "app"},
    ]});
    let path = dir.path().join("c.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let err = store
        .import_file(Source::CJson, &path, None, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("observations[1]") && err.contains("bytes per record"),
        "{err}"
    );
    assert!(all(&store).is_empty(), "all or nothing");
    std::fs::write(&path, "[1, 2]").unwrap();
    let err = store
        .import_file(Source::CJson, &path, None, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("seed C's export"), "{err}");
}

/// C's database named by a path that is not a regular file (a device, a folder) is refused
/// as such, not as a missing file.
#[test]
fn a_c_database_that_is_not_a_file_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let err = store
        .import_file(Source::CDb, dir.path(), None, &mut |_, _| {})
        .unwrap_err()
        .to_string();
    assert!(err.contains("not a regular file"), "{err}");
    let err = store
        .import_file(
            Source::CDb,
            &dir.path().join("gone.db"),
            None,
            &mut |_, _| {},
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("no such file"), "{err}");
}
