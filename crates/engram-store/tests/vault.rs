//! The Markdown vault: files follow the database, the database can be rebuilt from the
//! files, and hand edits, new files, deleted files and broken files are handled.
//!
//! SQLite by nature (`support::open_sqlite`, whatever `ENGRAM_TEST_STORE` says): these tests
//! check the vault's files against the SQLite file's own records and reopen that file.

use engram_core::memory::IdRef;
use engram_core::{Config, Kind, LinkKind, Tier};
use engram_store::{RememberRequest, Store};
use serde_json::Value;
use std::path::{Path, PathBuf};

mod support;
use support::T0;

fn open(dir: &Path) -> Store {
    support::open_sqlite(&dir.join("engram.db"), Config::default())
        .with_clock(support::fixed(T0 + 60_000))
}

fn remember(store: &mut Store, req: RememberRequest) -> i64 {
    store.remember(req).unwrap().id
}

/// A link as (src uid, dst uid, kind, weight in thousandths).
type LinkKey = (String, String, String, i64);

/// Every memory (as exported, minus what a vault does not carry) and every link.
fn snapshot(store: &Store) -> (Vec<Value>, Vec<LinkKey>) {
    let mut buf = Vec::new();
    store.export_jsonl(&mut buf).unwrap();
    let mut mems = Vec::new();
    let mut links = Vec::new();
    for line in String::from_utf8(buf).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str().unwrap() {
            "memory" => {
                let mut v = v.clone();
                v.as_object_mut().unwrap().remove("review_after");
                mems.push(v);
            }
            "link" => links.push((
                v["src"].as_str().unwrap().to_string(),
                v["dst"].as_str().unwrap().to_string(),
                v["kind"].as_str().unwrap().to_string(),
                (v["weight"].as_f64().unwrap() * 1000.0).round() as i64,
            )),
            _ => {}
        }
    }
    mems.sort_by_key(|m| m["uid"].as_str().unwrap().to_string());
    links.sort();
    (mems, links)
}

fn md_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn file_of(root: &Path, uid: &str) -> PathBuf {
    md_files(root)
        .into_iter()
        .find(|p| p.to_string_lossy().contains(uid))
        .unwrap_or_else(|| panic!("no file for {uid}"))
}

fn populate(store: &mut Store) -> Vec<i64> {
    let a = remember(
        store,
        RememberRequest {
            content: "We chose SQLite with WAL for the store.\nIt keeps one file.".into(),
            title: Some("Storage: \"SQLite\"".into()),
            kind: Some(Kind::Decision),
            importance: Some(0.8),
            tags: vec!["db".into(), "storage: core".into()],
            room: Some("engram".into()),
            topic_key: Some("architecture/storage".into()),
            pinned: true,
            source: Some("cli".into()),
            session_id: Some("s-1".into()),
            metadata: Some(serde_json::json!({"why": ["speed", "one file"], "n": 3})),
            created_at: Some(T0 - 86_400_000 * 40),
            ..Default::default()
        },
    );
    let b = remember(
        store,
        RememberRequest {
            content: "Yesterday the build broke on the CI runner — 日本語も".into(),
            kind: Some(Kind::Episode),
            room: Some("common".into()),
            related: vec![IdRef::Id(a)],
            created_at: Some(T0 - 86_400_000 * 400),
            ..Default::default()
        },
    );
    let c = remember(
        store,
        RememberRequest {
            content: "The user prefers tabs".into(),
            kind: Some(Kind::Preference),
            ..Default::default()
        },
    );
    store
        .link(&IdRef::Id(c), &IdRef::Id(a), LinkKind::Related, Some(0.35))
        .unwrap();
    let d = store
        .correct(
            &IdRef::Id(c),
            "The user prefers spaces",
            "said so",
            Some("cli"),
        )
        .unwrap()
        .new_id;
    let e = remember(
        store,
        RememberRequest {
            content: "A scratch note".into(),
            ..Default::default()
        },
    );
    store.forget(&IdRef::Id(e)).unwrap();
    store.sync_vault().unwrap();
    vec![a, b, c, d, e]
}

#[test]
fn files_follow_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let ids = populate(&mut store);
    let root = dir.path().join("memories");
    let files = md_files(&root);
    assert_eq!(files.len(), 5, "{files:?}");
    let rel: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(rel.iter().any(|r| r.starts_with("decision/")), "{rel:?}");
    assert!(
        rel.iter().any(|r| r.starts_with("episode/2025/")),
        "{rel:?}"
    );
    assert!(rel.iter().any(|r| r.starts_with("_trash/")), "{rel:?}");
    let a = store.get(&IdRef::Id(ids[0])).unwrap();
    let text = std::fs::read_to_string(file_of(&root, &a.uid)).unwrap();
    assert!(text.starts_with("---\nuid: "), "{text}");
    assert!(text.contains("kind: decision"), "{text}");
    assert!(text.ends_with("It keeps one file.\n"), "{text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file_of(&root, &a.uid))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // The episode links to the decision by the decision's file name (Obsidian's graph).
    let b = store.get(&IdRef::Id(ids[1])).unwrap();
    let btext = std::fs::read_to_string(file_of(&root, &b.uid)).unwrap();
    let astem = file_of(&root, &a.uid)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(btext.contains(&format!("[[{astem}]]")), "{btext}");

    // An update moves nothing but rewrites the file; a purge deletes it.
    store
        .update(
            &IdRef::Id(ids[0]),
            engram_store::MemoryUpdate {
                kind: Some(Kind::Strategy),
                ..Default::default()
            },
        )
        .unwrap();
    store.sync_vault().unwrap();
    let moved = file_of(&root, &a.uid);
    assert!(moved.to_string_lossy().contains("/strategy/"), "{moved:?}");
    assert_eq!(md_files(&root).len(), 5);
    store.purge(&IdRef::Id(ids[4]), false).unwrap();
    store.sync_vault().unwrap();
    assert_eq!(md_files(&root).len(), 4);
    assert!(store.vault_status().unwrap().is_clean());
}

/// A vault in seed B's format (`vault_format = "b"`, or `auto` on B's folder): files in
/// B's folders with B's keys and scales, engram's exact values beside them under keys B
/// ignores, so the database rebuilds from them exactly (tester-b: engram's layout beside
/// B's broke B on a second machine).
#[test]
fn a_vault_in_bs_format_is_bs_layout_and_rebuilds_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        vault_format: engram_core::config::VaultFormat::B,
        ..Config::default()
    };
    let open_b = |dir: &Path| {
        support::open_sqlite(&dir.join("engram.db"), config.clone())
            .with_clock(support::fixed(T0 + 60_000))
    };
    let mut store = open_b(dir.path());
    let ids = populate(&mut store);
    // B's least important (1 of 10) comes back as itself, not as the most important.
    remember(
        &mut store,
        RememberRequest {
            content: "A trivial note about the coffee machine".into(),
            importance: Some(0.1),
            ..Default::default()
        },
    );
    store.sync_vault().unwrap();
    let before = snapshot(&store);
    let root = dir.path().join("memories");
    let rel: Vec<String> = md_files(&root)
        .iter()
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert!(rel.iter().any(|r| r.starts_with("knowledge/")), "{rel:?}");
    assert!(rel.iter().any(|r| r.starts_with("preferences/")), "{rel:?}");
    assert!(rel.iter().any(|r| r.starts_with("episodes/20")), "{rel:?}");
    assert!(rel.iter().any(|r| r.starts_with("_trash/")), "{rel:?}");
    let decision = store.get(&IdRef::Id(ids[0])).unwrap();
    let text = std::fs::read_to_string(file_of(&root, &decision.uid[20..])).unwrap();
    for key in [
        format!("id: {}\n", decision.uid),
        "type: knowledge\n".into(),
        "importance: 8\n".into(),
        "tier: hot\n".into(),
        "kind: decision\n".into(),
    ] {
        assert!(text.contains(&key), "{key:?} in {text}");
    }
    assert!(!text.contains("\nuid: "), "{text}");
    // B's tiers, and B's plain links beside engram's typed ones.
    let old_pref = store.get(&IdRef::Id(ids[2])).unwrap();
    let text = std::fs::read_to_string(file_of(&root, &old_pref.uid[20..])).unwrap();
    assert!(text.contains("tier: superseded\n"), "{text}");
    let trashed = store.get(&IdRef::Id(ids[4])).unwrap();
    let text = std::fs::read_to_string(file_of(&root, &trashed.uid[20..])).unwrap();
    assert!(text.contains("tier: trash\n"), "{text}");
    let episode = store.get(&IdRef::Id(ids[1])).unwrap();
    let text = std::fs::read_to_string(file_of(&root, &episode.uid[20..])).unwrap();
    let decision = store.get(&IdRef::Id(ids[0])).unwrap();
    assert!(
        text.contains(&format!("links:\n  - \"[[{}]]\"\n", decision.uid)),
        "{text}"
    );
    assert!(text.contains("engram_links:\n"), "{text}");
    drop(store);
    for f in ["engram.db", "engram.db-wal", "engram.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(f));
    }
    let mut store = open_b(dir.path());
    let report = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(report.restored, 6, "{report:?}");
    assert!(report.warnings.is_empty(), "{report:?}");
    let after = snapshot(&store);
    assert_eq!(before.0, after.0, "every memory field comes back");
    assert_eq!(before.1, after.1, "every link comes back");
    // A link engram makes by itself (semantic, co_recall) does not rewrite an old file: B
    // on the other machine sees no churn (tester-b). It stays in the database, and a
    // reindex of the file keeps it.
    let decision = store.get(&IdRef::Id(ids[0])).unwrap();
    let file = file_of(&root, &decision.uid[20..]);
    let text = std::fs::read_to_string(&file).unwrap();
    store
        .link(
            &IdRef::Id(ids[0]),
            &IdRef::Id(ids[3]),
            LinkKind::Semantic,
            Some(0.3),
        )
        .unwrap();
    store.sync_vault().unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    std::fs::write(
        &file,
        text.replace("It keeps one file.", "It keeps one file, always."),
    )
    .unwrap();
    store.reindex_vault(&mut |_, _| {}).unwrap();
    let semantic = snapshot(&store)
        .1
        .into_iter()
        .filter(|l| l.2 == "semantic" && l.0 == decision.uid)
        .count();
    assert_eq!(semantic, 1, "the reindex kept the semantic link");
}

#[test]
fn deleting_the_database_and_reindexing_restores_everything() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    populate(&mut store);
    let before = snapshot(&store);
    drop(store);
    for f in ["engram.db", "engram.db-wal", "engram.db-shm"] {
        let _ = std::fs::remove_file(dir.path().join(f));
    }
    let mut store = open(dir.path());
    let report = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(report.restored, 5, "{report:?}");
    assert!(report.warnings.is_empty(), "{report:?}");
    let after = snapshot(&store);
    assert_eq!(before.0, after.0, "every memory field comes back");
    assert_eq!(before.1, after.1, "every link comes back");
    // Restored, the vault is clean and a second reindex changes nothing.
    assert!(store.vault_status().unwrap().is_clean());
    let again = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(again.unchanged, 5);
    assert_eq!((again.created, again.restored, again.updated), (0, 0, 0));
    // Recall finds restored memories (the text index was rebuilt).
    let hits = store
        .recall(&{
            let mut r = engram_store::RecallRequest::new("SQLite WAL");
            r.room = Some("*".into());
            r
        })
        .unwrap();
    assert!(!hits.hits.is_empty());
}

#[test]
fn hand_edits_new_files_deleted_files_and_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let ids = populate(&mut store);
    let root = dir.path().join("memories");
    let a = store.get(&IdRef::Id(ids[0])).unwrap();

    // 1. Edit a body and a front matter field by hand.
    let path = file_of(&root, &a.uid);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text
        .replace("It keeps one file.", "It keeps one file and a WAL.")
        .replace("importance: 0.8", "importance: 0.9");
    std::fs::write(&path, edited).unwrap();

    // 2. A new note written by hand (no uid), in B's style.
    std::fs::create_dir_all(root.join("fact")).unwrap();
    let new_path = root.join("fact/my-note.md");
    std::fs::write(
        &new_path,
        "---\ntype: knowledge\ntags:\n- handmade\nimportance: 7\nroom: notes\n---\nDeploys go out on Tuesdays.\n",
    )
    .unwrap();

    // 3. Garbage front matter.
    let bad = root.join("fact/broken.md");
    std::fs::write(&bad, "---\ntitle: ok\n  nested: nope\n---\nbody\n").unwrap();

    // 4. Delete a file by hand.
    let d = store.get(&IdRef::Id(ids[3])).unwrap();
    std::fs::remove_file(file_of(&root, &d.uid)).unwrap();

    assert!(!store.vault_status().unwrap().is_clean());
    let report = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(report.updated, 1, "{report:?}");
    assert_eq!(report.created, 1, "{report:?}");
    assert_eq!(report.trashed, 1, "{report:?}");
    assert_eq!(report.warnings.len(), 1, "{report:?}");
    let w = &report.warnings[0];
    assert!(w.path.ends_with("fact/broken.md") && w.line == 3, "{w}");
    assert!(bad.exists(), "a broken file is never deleted");

    let a2 = store.get(&IdRef::Id(ids[0])).unwrap();
    assert!(a2.content.ends_with("one file and a WAL."));
    assert_eq!(a2.importance, 0.9);
    assert_eq!(a2.uid, a.uid);
    let detail = store.show(&IdRef::Id(ids[0])).unwrap();
    let _ = detail;
    let mut buf = Vec::new();
    store.export_jsonl(&mut buf).unwrap();
    let out = String::from_utf8(buf).unwrap();
    assert!(
        out.lines()
            .any(|l| l.contains("\"reason\":\"vault_edit\"") && l.contains("It keeps one file.")),
        "the previous text is kept as a revision"
    );

    // The hand-written note became a memory and got its uid written back.
    let text = std::fs::read_to_string(
        md_files(&root)
            .into_iter()
            .find(|p| p.to_string_lossy().contains("my-note"))
            .unwrap(),
    )
    .unwrap();
    let uid = text
        .lines()
        .find_map(|l| l.strip_prefix("uid: "))
        .expect("uid written back")
        .to_string();
    let n = store.get(&IdRef::Uid(uid)).unwrap();
    assert_eq!(n.content, "Deploys go out on Tuesdays.");
    assert_eq!(n.kind, Kind::Knowledge);
    assert_eq!(n.importance, 0.7);
    assert_eq!(n.room, "notes");
    assert_eq!(n.tags, vec!["handmade"]);

    // The deleted file's memory went to the trash, and its file with it.
    let d2 = store.get(&IdRef::Id(ids[3])).unwrap();
    assert_eq!(d2.tier, Tier::Trash);
    assert!(file_of(&root, &d.uid).to_string_lossy().contains("_trash"));

    // Another reindex: only the broken file is still reported; nothing else changes.
    let again = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(
        (again.created, again.updated, again.trashed),
        (0, 0, 0),
        "{again:?}"
    );
    assert_eq!(again.warnings.len(), 1);
}

#[test]
fn startup_check_modes() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    populate(&mut store);
    let root = dir.path().join("memories");
    std::fs::write(root.join("fact/hand.md"), "Just a line of text\n").ok();
    std::fs::create_dir_all(root.join("fact")).unwrap();
    std::fs::write(root.join("fact/hand.md"), "Just a line of text\n").unwrap();
    drop(store);

    let config = Config {
        startup_index_check: engram_core::config::IndexCheck::Warn,
        ..Config::default()
    };
    let mut warn = support::open_sqlite(&dir.path().join("engram.db"), config);
    let (ran, msg) = warn.vault_startup(&mut |_, _| {}).unwrap();
    assert!(ran.is_none());
    assert!(msg.unwrap().contains("engram reindex"));
    drop(warn);

    let mut auto = open(dir.path());
    let (ran, msg) = auto.vault_startup(&mut |_, _| {}).unwrap();
    assert!(msg.is_none());
    assert_eq!(ran.unwrap().created, 1);
    let (ran, _) = auto.vault_startup(&mut |_, _| {}).unwrap();
    assert!(ran.is_none(), "clean after one reindex");
}

#[test]
fn vault_off_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        vault: engram_core::config::Switch::Off,
        ..Config::default()
    };
    let mut store = support::open_sqlite(&dir.path().join("engram.db"), config);
    remember(
        &mut store,
        RememberRequest {
            content: "x".into(),
            ..Default::default()
        },
    );
    store.sync_vault().unwrap();
    assert!(!dir.path().join("memories").exists());
}

/// A kind folder replaced by a link to a folder outside the home: writes refuse to follow it,
/// the start-of-process check (run by read-only commands too) trashes nothing, and
/// `reindex` leaves the memories behind the link alone with a warning.
#[cfg(unix)]
#[test]
fn a_symlinked_folder_is_never_followed_and_nothing_is_trashed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    populate(&mut store);
    let root = dir.path().join("memories");
    let fact = root.join("decision");
    let n_facts = std::fs::read_dir(&fact).unwrap().count();
    assert!(n_facts > 0);
    // Move the folder's files outside and put a link in its place.
    for e in std::fs::read_dir(&fact).unwrap() {
        let p = e.unwrap().path();
        std::fs::rename(&p, outside.path().join(p.file_name().unwrap())).unwrap();
    }
    std::fs::remove_dir(&fact).unwrap();
    std::os::unix::fs::symlink(outside.path(), &fact).unwrap();
    drop(store);

    let mut store = open(dir.path());
    let before = store.stats().unwrap();
    store.vault_startup(&mut |_, _| {}).unwrap();
    let after = store.stats().unwrap();
    assert_eq!(
        before.by_tier, after.by_tier,
        "the start-of-process check moved memories between tiers"
    );
    let report = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(report.trashed, 0, "{report:?}");
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.message.contains("symbolic link")),
        "{report:?}"
    );
    // A new decision would be written through the link: refused, nothing lands outside,
    // and the refusal of that one file does not stop the sync of the others (a fact
    // written in the same batch gets its file).
    store
        .remember(RememberRequest {
            content: "We decided the cache lives in /var/cache/app.".into(),
            kind: Some(Kind::Decision),
            room: Some("app".into()),
            ..Default::default()
        })
        .unwrap();
    let fact_id = remember(
        &mut store,
        RememberRequest {
            content: "The cache server answers on port 6380.".into(),
            kind: Some(Kind::Fact),
            room: Some("app".into()),
            ..Default::default()
        },
    );
    let report = store.sync_vault().unwrap();
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    let skipped = report.skipped[0].to_string();
    assert!(
        skipped.contains("symbolic link") && skipped.contains("decision"),
        "the skipped file is named with why: {skipped}"
    );
    let fact = store.get(&IdRef::Id(fact_id)).unwrap();
    assert!(
        file_of(&root, &fact.uid).is_file(),
        "the other memory's file was written"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), n_facts);
    // Nothing is pending afterwards: the next sync has nothing to do.
    assert_eq!(store.sync_vault().unwrap(), Default::default());
    // The start-of-process check says which file it skipped.
    store
        .remember(RememberRequest {
            content: "We decided the logs rotate daily.".into(),
            kind: Some(Kind::Decision),
            room: Some("app".into()),
            ..Default::default()
        })
        .unwrap();
    let (_, msg) = store.vault_startup(&mut |_, _| {}).unwrap();
    let msg = msg.unwrap_or_default();
    assert!(
        msg.contains("symbolic link") && msg.contains("not written"),
        "{msg}"
    );
}

/// A file deleted by hand is trashed by `engram reindex` only; the start-of-process check
/// says so and moves nothing.
#[test]
fn the_startup_check_never_trashes_a_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let ids = populate(&mut store);
    let root = dir.path().join("memories");
    let m = store.get(&IdRef::Id(ids[0])).unwrap();
    std::fs::remove_file(file_of(&root, &m.uid)).unwrap();
    let (_, msg) = store.vault_startup(&mut |_, _| {}).unwrap();
    assert!(msg.unwrap().contains("engram reindex"));
    assert_eq!(store.get(&IdRef::Id(ids[0])).unwrap().tier, Tier::Active);
    let report = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(report.trashed, 1);
    assert_eq!(store.get(&IdRef::Id(ids[0])).unwrap().tier, Tier::Trash);
}

/// Temporary files a killed writer left behind are removed when a process starts.
#[test]
fn stray_temporaries_are_cleaned_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    populate(&mut store);
    let root = dir.path().join("memories");
    // No process has this id (above the kernel's pid limit).
    let stray = root.join("decision/.note.md.tmp-4999999-0");
    std::fs::write(&stray, "half a file").unwrap();
    let keep = root.join("decision/.keep-me.md");
    std::fs::write(&keep, "not ours").unwrap();
    store.vault_startup(&mut |_, _| {}).unwrap();
    assert!(!stray.exists(), "the stray temporary is still there");
    assert!(
        keep.exists(),
        "a hidden file that is not a temporary was removed"
    );
}

/// A large backlog (here an import of 1,500 memories) is written in bounded steps, each its
/// own transaction that moves the cursor, so progress can be shown and an interrupted sync
/// keeps what it wrote; the pending count goes to zero and stays there, also for the next
/// process.
#[test]
fn a_large_backlog_is_written_in_steps_and_stays_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    store.sync_vault().unwrap();
    assert_eq!(store.vault_pending().unwrap(), 0);
    let mut lines = String::new();
    for i in 0..1500 {
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
    let pending = store.vault_pending().unwrap();
    assert!(pending >= 1500, "{pending}");
    let mut steps: Vec<(u64, u64)> = Vec::new();
    let report = store
        .sync_vault_with(&mut |d, t| steps.push((d, t)))
        .unwrap();
    assert_eq!(report.written, 1500, "{report:?}");
    assert!(
        steps.len() >= 2,
        "one transaction per bounded step: {steps:?}"
    );
    assert!(steps.windows(2).all(|w| w[0].0 < w[1].0), "{steps:?}");
    assert_eq!(steps.last(), Some(&(pending, pending)));
    assert_eq!(store.vault_pending().unwrap(), 0);
    drop(store);
    let mut store = open(dir.path());
    assert_eq!(store.vault_pending().unwrap(), 0, "stays written");
    assert_eq!(store.sync_vault().unwrap(), Default::default());
    assert_eq!(md_files(&dir.path().join("memories")).len(), 1500);
}

/// A symbolic link to a file, made by hand in the vault, is not read and is named in
/// `reindex`'s warnings (it used to be skipped without a word).
#[cfg(unix)]
#[test]
fn a_symlinked_file_is_named_in_the_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    populate(&mut store);
    let target = outside.path().join("hosts.md");
    std::fs::write(&target, "Not a memory of this vault.\n").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("memories").join("linked.md")).unwrap();
    let report = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.path.ends_with("linked.md") && w.message.contains("symbolic link")),
        "{report:?}"
    );
    assert_eq!(report.created, 0, "{report:?}");
}

/// The vault folder itself may be a link (to a synced folder, say): writes and scans both
/// go through it, so every memory's file is written there, and neither the start-up check
/// nor a reindex takes any of them for deleted.
#[test]
fn a_vault_folder_that_is_itself_a_link_is_used_alike_by_writes_and_scans() {
    let dir = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(target.path(), dir.path().join("memories")).unwrap();
    let mut store = open(dir.path());
    let ids = populate(&mut store);
    let before = snapshot(&store);
    for id in &ids {
        let m = store.get(&IdRef::Id(*id)).unwrap();
        assert!(file_of(target.path(), &m.uid).starts_with(target.path()));
    }
    drop(store);
    let mut store = open(dir.path());
    let (_, msg) = store.vault_startup(&mut |_, _| {}).unwrap();
    assert!(msg.is_none(), "{msg:?}");
    let report = store.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(report.trashed, 0, "{report:?}");
    assert_eq!(snapshot(&store), before);
}
