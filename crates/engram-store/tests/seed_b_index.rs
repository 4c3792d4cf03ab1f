//! Seed B's `index.db` carried by `engram import --from b`: usage events with their
//! original times and the links B keeps only in its index, imported once.

mod support;
use engram_core::{Config, Millis};
use engram_store::Store;
use engram_store::importers::Source;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

const T0: Millis = 1_790_000_000_000;
const A1: &str = "01JNQ0000000000000000000A1";
const B2: &str = "01JNQ0000000000000000000B2";
const C3: &str = "01JNQ0000000000000000000C3";

/// B's index schema (seed-systems.md §B.9), without the vec0/FTS tables B's extensions make.
const B_SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE memories(id TEXT PRIMARY KEY, path TEXT, type TEXT, content_hash TEXT, created_at REAL,
    importance INTEGER, tier TEXT, room TEXT DEFAULT 'common');
CREATE TABLE access_events(id INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT, ts REAL, kind TEXT, weight REAL);
CREATE INDEX idx_events ON access_events(memory_id);
CREATE TABLE links(src TEXT, dst TEXT, kind TEXT, weight REAL, PRIMARY KEY(src,dst,kind));
";

fn memory_file(dir: &Path, name: &str, id: &str, tier: &str, links: &str, body: &str) {
    std::fs::write(
        dir.join("knowledge").join(name),
        format!(
            "---\nid: {id}\ntype: knowledge\ncreated: '2025-03-01T10:00:00+00:00'\ntags: []\nimportance: 5\nsource: claude-code\ntier: {tier}\nroom: common\nlinks: {links}\n---\n\n{body}\n"
        ),
    )
    .unwrap();
}

/// B's home as B leaves it: three memories (one corrected), 12 recall hits and one
/// reinforcement on the first, co_recall links both ways and a superseded_by link.
fn b_home(home: &Path) -> std::path::PathBuf {
    let mem = home.join("memories");
    std::fs::create_dir_all(mem.join("knowledge")).unwrap();
    memory_file(
        &mem,
        "20250301-uv-0000A1.md",
        A1,
        "hot",
        &format!("\n- '[[{B2}]]'"),
        "uv is fast.",
    );
    memory_file(
        &mem,
        "20250301-port-0000B2.md",
        B2,
        "superseded",
        "[]",
        "The port is 8000.",
    );
    memory_file(
        &mem,
        "20250301-port-0000C3.md",
        C3,
        "hot",
        "[]",
        "The port is 8080.",
    );
    let conn = rusqlite::Connection::open(home.join("index.db")).unwrap();
    conn.execute_batch(B_SCHEMA).unwrap();
    let created = 1_740_823_200.0; // 2025-03-01T10:00:00Z
    for id in [A1, B2, C3] {
        conn.execute(
            "INSERT INTO access_events(memory_id, ts, kind, weight) VALUES (?1, ?2, 'create', 2.0)",
            rusqlite::params![id, created],
        )
        .unwrap();
    }
    for i in 0..12 {
        conn.execute(
            "INSERT INTO access_events(memory_id, ts, kind, weight) VALUES (?1, ?2, 'recall_hit', 0.3)",
            rusqlite::params![A1, created + 3600.0 * f64::from(i + 1)],
        )
        .unwrap();
    }
    conn.execute(
        "INSERT INTO access_events(memory_id, ts, kind, weight) VALUES (?1, ?2, 'reinforce', 2.5)",
        rusqlite::params![A1, created + 86_400.5],
    )
    .unwrap();
    for (src, dst, kind, w) in [
        (A1, C3, "co_recall", 0.3),
        (C3, A1, "co_recall", 0.3),
        (B2, C3, "superseded_by", 1.0),
        (A1, B2, "explicit", 1.0),
    ] {
        conn.execute(
            "INSERT INTO links VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![src, dst, kind, w],
        )
        .unwrap();
    }
    mem
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

fn rows<'a>(all: &'a [Value], kind: &str) -> Vec<&'a Value> {
    all.iter().filter(|v| v["type"] == kind).collect()
}

/// The links of an export, which must hold B's four (co_recall both ways, the correction
/// as `supersedes` new → old, the file's explicit link).
fn b_links_carried(all: &[Value]) -> Vec<(String, String, String)> {
    let links: Vec<(String, String, String)> = rows(all, "link")
        .into_iter()
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap().to_string();
            (s("src"), s("dst"), s("kind"))
        })
        .collect();
    for want in [
        (A1, C3, "co_recall"),
        (C3, A1, "co_recall"),
        (C3, B2, "supersedes"),
        (A1, B2, "explicit"),
    ] {
        let want = (want.0.to_string(), want.1.to_string(), want.2.to_string());
        assert!(links.contains(&want), "{want:?} in {links:?}");
    }
    links
}

#[test]
fn b_index_events_and_links_are_carried_once() {
    let dir = tempfile::tempdir().unwrap();
    let mem = b_home(&dir.path().join("b"));
    let mut store =
        support::open_in(&dir.path().join("store"), Config::default()).with_clock(Arc::new(|| T0));
    let r = store
        .import_file(Source::B, &mem, None, &mut |_, _| {})
        .unwrap();
    assert_eq!(r.created_count("memories"), 3, "{r:?}");
    assert_eq!(r.created_count("events"), 16, "{r:?}");
    assert_eq!(r.created_count("links"), 4, "{r:?}");

    let all = export(&store);
    let events: Vec<_> = rows(&all, "event")
        .into_iter()
        .filter(|e| e["memory"] == A1)
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "recall_hit").count(), 12);
    assert_eq!(kinds.iter().filter(|k| **k == "reinforce").count(), 1);
    assert!(
        !kinds.contains(&"import"),
        "B's history replaces the seeded one: {kinds:?}"
    );
    let reinforce = events.iter().find(|e| e["kind"] == "reinforce").unwrap();
    assert_eq!(reinforce["at"], "2025-03-02T10:00:00.500Z");
    assert_eq!(reinforce["weight"], 2.5);

    let links = b_links_carried(&all);
    assert_eq!(links.len(), 4, "{links:?}");

    let again = store
        .import_file(Source::B, &mem, None, &mut |_, _| {})
        .unwrap();
    assert_eq!(again.created_count("memories"), 0, "{again:?}");
    assert_eq!(again.created_count("events"), 0, "{again:?}");
    assert_eq!(again.created_count("links"), 0, "{again:?}");
    assert_eq!(export(&store).len(), all.len());
}

/// B's Markdown folder as engram's vault, read in place by the start-of-process scan (B's
/// `memories_dir` becomes `vault_dir`): each memory gets B's usage history from the
/// `index.db` beside the folder and B's links, as `import --from b` gives them. Before, the
/// scan seeded a fresh history, and the import that followed created nothing, so B's
/// recall hits, reinforcements and co_recall links were lost.
#[test]
fn b_index_is_carried_when_the_vault_is_read_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let mem = b_home(&dir.path().join("b"));
    let config = Config {
        vault_dir: mem.display().to_string(),
        ..Config::default()
    };
    let mut store = support::open_in(&dir.path().join("store"), config).with_clock(Arc::new(|| T0));
    store.vault_startup(&mut |_, _| {}).unwrap();
    let all = export(&store);
    assert_eq!(rows(&all, "memory").len(), 3, "{all:?}");
    let kinds: Vec<&str> = rows(&all, "event")
        .into_iter()
        .filter(|e| e["memory"] == A1)
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "recall_hit").count(),
        12,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "reinforce").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "create").count(),
        1,
        "{kinds:?}"
    );
    b_links_carried(&all);
    // The import a B user's notes tell them to run afterwards adds nothing twice.
    let again = store
        .import_file(Source::B, &mem, None, &mut |_, _| {})
        .unwrap();
    assert_eq!(again.created_count("events"), 0, "{again:?}");
    assert_eq!(export(&store).len(), all.len());
}

/// B's `memories_dir` pointed at a folder elsewhere (an Obsidian vault), its `index.db`
/// kept in B's `data_dir`, which is engram's home: the in-place read finds the index
/// there. Before, nothing of B's history came across and nothing said so.
#[test]
fn b_index_in_the_home_is_found_for_a_folder_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("b");
    let mem = b_home(&b);
    let elsewhere = dir.path().join("Obsidian").join("engram");
    std::fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    std::fs::rename(&mem, &elsewhere).unwrap();
    let config = Config {
        vault_dir: elsewhere.display().to_string(),
        ..Config::default()
    };
    let mut store = support::open_in(&b, config).with_clock(Arc::new(|| T0));
    store.vault_startup(&mut |_, _| {}).unwrap();
    let all = export(&store);
    let hits = rows(&all, "event")
        .into_iter()
        .filter(|e| e["memory"] == A1 && e["kind"] == "recall_hit")
        .count();
    assert_eq!(hits, 12, "{all:?}");
    b_links_carried(&all);
}

/// A B file edited by hand (on the other machine) lists only the links a user made: reading
/// it back sets those and keeps the memory's other links, such as B's co_recall from
/// `index.db` (tester-b: the edit deleted it).
#[test]
fn a_hand_edited_b_file_keeps_the_links_it_does_not_list() {
    let dir = tempfile::tempdir().unwrap();
    let mem = b_home(&dir.path().join("b"));
    let config = Config {
        vault_dir: mem.display().to_string(),
        vault_format: engram_core::config::VaultFormat::B,
        ..Config::default()
    };
    let mut store = support::open_in(&dir.path().join("store"), config).with_clock(Arc::new(|| T0));
    store.vault_startup(&mut |_, _| {}).unwrap();
    b_links_carried(&export(&store));
    let file = mem.join("knowledge/20250301-uv-0000A1.md");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("uv is fast.", "uv is very fast.")).unwrap();
    store.reindex_vault(&mut |_, _| {}).unwrap();
    let all = export(&store);
    assert!(
        rows(&all, "memory")
            .iter()
            .any(|m| m["content"] == "uv is very fast."),
        "the edit is read"
    );
    b_links_carried(&all);
}
