//! The HNSW vector index (the `ann` feature): built past the threshold, saved next to the
//! database and loaded by other processes, kept current with later writes, bypassed for
//! small rooms, and never in the way of a model switch. Uses the hashing encoder: these
//! tests are about the index's life cycle, not about meaning.
//!
//! SQLite by nature: the HNSW index is the SQLite backend's own, saved beside its file.
#![cfg(feature = "ann")]

use engram_core::embed::{Embedder, HashEmbedder};
use engram_core::{Config, Kind};
use engram_store::{RecallRequest, RememberRequest, Store};
use std::path::Path;
use std::sync::Arc;

const TOPICS: &[&str] = &[
    "database", "deploy", "cache", "login", "billing", "search", "queue", "backup", "editor",
    "theme", "compiler", "router", "gateway", "payment", "invoice", "tracing",
];
const THINGS: &[&str] = &[
    "timeout",
    "migration",
    "schema",
    "token",
    "latency",
    "retry",
    "replica",
    "flag",
    "bucket",
    "header",
    "cookie",
    "worker",
    "script",
    "plugin",
    "layout",
    "budget",
];

fn config(threshold: usize) -> Config {
    Config {
        ann_threshold: threshold,
        resolve: false,
        ..Config::default()
    }
}

fn open(path: &Path, threshold: usize, e: Arc<dyn Embedder>) -> Store {
    let mut s = Store::open(path, config(threshold)).unwrap();
    s.set_embedder(Some(e));
    s
}

fn text(i: usize) -> String {
    format!(
        "{} {} note {i}: the {} {} was changed",
        TOPICS[i % TOPICS.len()],
        THINGS[(i / TOPICS.len()) % THINGS.len()],
        THINGS[(i * 7) % THINGS.len()],
        TOPICS[(i * 5) % TOPICS.len()],
    )
}

fn fill(s: &mut Store, range: std::ops::Range<usize>, room: &str) -> Vec<i64> {
    let reqs = range
        .map(|i| RememberRequest {
            content: text(i),
            kind: Some(Kind::Fact),
            room: Some(room.into()),
            ..Default::default()
        })
        .collect();
    s.remember_batch(reqs)
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap().id)
        .collect()
}

fn top(s: &mut Store, q: &str, room: &str) -> Option<i64> {
    let mut r = RecallRequest::new(q);
    r.room = Some(room.into());
    r.limit = 5;
    r.record_hits = false;
    s.recall(&r).unwrap().hits.first().map(|h| h.memory.id)
}

fn hash() -> Arc<dyn Embedder> {
    Arc::new(HashEmbedder::new(128))
}

#[test]
fn the_index_is_built_saved_loaded_elsewhere_and_kept_current() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut a = open(&path, 200, hash());
    let ids = fill(&mut a, 0..300, "app");

    // Nothing is built by a short-lived store on its own: it scans exactly.
    assert_eq!(top(&mut a, &text(17), "app"), Some(ids[17]));
    assert_eq!(a.vector_search_state(), Some((300, false)));

    assert_eq!(a.build_vector_index().unwrap(), Some(300));
    assert_eq!(a.vector_search_state(), Some((300, true)));
    assert_eq!(top(&mut a, &text(42), "app"), Some(ids[42]));
    let saved: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".ann"))
        .collect();
    assert_eq!(saved.len(), 2, "one index file and its JSON: {saved:?}");

    // Another process loads the saved index instead of scanning, and adds its own writes.
    let mut b = open(&path, 200, hash());
    let more = fill(&mut b, 300..310, "app");
    assert_eq!(top(&mut b, &text(305), "app"), Some(more[5]));
    assert_eq!(b.vector_search_state(), Some((310, true)));
    assert_eq!(top(&mut b, &text(99), "app"), Some(ids[99]));
    // ... which the first one picks up too.
    assert_eq!(top(&mut a, &text(308), "app"), Some(more[8]));

    // An edited memory is found by its new text, not its old one.
    a.update(
        &engram_core::memory::IdRef::Id(ids[7]),
        engram_store::MemoryUpdate {
            content: Some("completely different words about gardening tomatoes".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        top(&mut b, "gardening tomatoes completely different", "app"),
        Some(ids[7])
    );
}

#[test]
fn a_small_room_in_an_indexed_store_is_searched_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut s = open(&path, 100, hash());
    fill(&mut s, 0..400, "big");
    let small = fill(&mut s, 1000..1003, "tiny");
    assert_eq!(s.build_vector_index().unwrap(), Some(403));
    for (i, id) in small.iter().enumerate() {
        assert_eq!(top(&mut s, &text(1000 + i), "tiny"), Some(*id));
    }
}

#[test]
fn another_model_ignores_the_saved_index_and_never_fails() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut s = open(&path, 50, hash());
    let ids = fill(&mut s, 0..80, "app");
    assert_eq!(s.build_vector_index().unwrap(), Some(80));
    drop(s);

    // A model of another dimension: none of its vectors exist yet; recall still works.
    let mut other = open(&path, 50, Arc::new(HashEmbedder::new(64)));
    assert_eq!(top(&mut other, &text(3), "app"), Some(ids[3]));
    assert_eq!(other.vector_search_state(), Some((0, false)));
    other.embed_missing(|_| {}).unwrap();
    assert_eq!(top(&mut other, &text(5), "app"), Some(ids[5]));
    assert_eq!(other.vector_search_state(), Some((80, false)));
}

#[test]
fn a_damaged_saved_index_is_rebuilt_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut s = open(&path, 50, hash());
    let ids = fill(&mut s, 0..80, "app");
    s.build_vector_index().unwrap();
    drop(s);
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "usearch") {
            std::fs::write(&p, b"not an index").unwrap();
        }
    }
    let mut s = open(&path, 50, hash());
    assert_eq!(top(&mut s, &text(11), "app"), Some(ids[11]));
    assert_eq!(s.vector_search_state(), Some((80, false)));
}

#[test]
fn a_server_builds_the_index_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut s = open(&path, 100, hash());
    s.set_background_index(true);
    let ids = fill(&mut s, 0..150, "app");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        // Exact results while the build runs, the index once it is adopted.
        assert_eq!(top(&mut s, &text(77), "app"), Some(ids[77]));
        if s.vector_search_state() == Some((150, true)) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the background build never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Saved for the next process.
    let mut t = open(&path, 100, hash());
    assert_eq!(top(&mut t, &text(1), "app"), Some(ids[1]));
    assert_eq!(t.vector_search_state(), Some((150, true)));
}

#[test]
fn a_short_lived_process_maps_the_index_and_resaves_it_once_far_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut a = open(&path, 200, hash());
    fill(&mut a, 0..300, "app");
    a.build_vector_index().unwrap();
    drop(a);
    let saved_seq = || -> i64 {
        let meta: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("engram.db.ann.json")).unwrap())
                .unwrap();
        meta["last_seq"].as_i64().unwrap()
    };
    let before = saved_seq();

    // A few writes ride along in the mapped view's overlay; the file is left alone.
    let mut b = open(&path, 200, hash());
    let few = fill(&mut b, 300..320, "app");
    assert_eq!(top(&mut b, &text(310), "app"), Some(few[10]));
    assert_eq!(saved_seq(), before);

    // A thousand more: the index is brought up to date and saved for everyone.
    let many = fill(&mut b, 1000..2000, "app");
    assert_eq!(top(&mut b, &text(1500), "app"), Some(many[500]));
    assert!(saved_seq() > before + 1000, "the index was saved again");
    assert_eq!(b.vector_search_state(), Some((1320, true)));
    let mut c = open(&path, 200, hash());
    assert_eq!(top(&mut c, &text(1999), "app"), Some(many[999]));
}

#[test]
fn a_restore_drops_the_index_a_running_process_holds_and_the_saved_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut s = open(&path, 50, hash());
    let old = fill(&mut s, 0..60, "app");
    let backup = dir.path().join("backup");
    engram_store::backup::backup(&path, None, &backup).unwrap();
    let newer = fill(&mut s, 60..120, "app");
    assert_eq!(s.build_vector_index().unwrap(), Some(120));

    // Another process restores the backup: the memories written after it are gone.
    engram_store::backup::restore(&path, None, &backup, true).unwrap();
    assert!(
        !std::fs::read_dir(dir.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".ann")),
        "the saved index is removed"
    );
    // The long-running store notices and refills from the restored rows.
    assert_eq!(top(&mut s, &text(30), "app"), Some(old[30]));
    assert_eq!(s.vector_search_state(), Some((60, false)));
    assert_ne!(top(&mut s, &text(100), "app"), Some(newer[40]));
}
