//! Redaction on every path into the store: remember (metadata too), correct, update, topic
//! upserts, handoffs and session summaries, prompts, JSONL import, and a vault file edited by
//! hand and read back; the name-like fields too (topic keys, session ids, sources, tags,
//! rooms, seed A's task and checkpoint fields). Each checks the database rows, the vault
//! files and their names.

use engram_core::Config;
use engram_core::memory::IdRef;
use engram_store::MemoryUpdate;
use engram_store::{RememberRequest, Store};
use std::path::{Path, PathBuf};

mod support;
use support::T0;
const TOKEN: &str = "ghp_Zq7Wx3Rt9Yp2Lm5Kd8Vb1Nc4Hs6Jf0Ga2Ee";
const PASSWORD: &str = "Tr0ub4dor&3x";

fn open(dir: &Path) -> Store {
    support::open_in(dir, Config::default()).with_clock(support::fixed(T0 + 60_000))
}

/// Every byte the store holds on disk: the database (with its WAL) and the vault, including
/// the vault's file names.
fn everything_on_disk(dir: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p: PathBuf = e.unwrap().path();
            out.push_str(&p.to_string_lossy());
            out.push('\n');
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn assert_clean(dir: &Path, store: &mut Store) {
    store.sync_vault().unwrap();
    let all = everything_on_disk(dir);
    if let Some(i) = all.find(TOKEN) {
        let from = all[..i]
            .rfind('/')
            .map_or(0, |j| all[..j].rfind('\n').map_or(0, |k| k + 1));
        panic!(
            "the token reached the disk: {}",
            &all[from..(i + 80).min(all.len())]
        );
    }
    assert!(!all.contains(PASSWORD), "the password reached the disk");
}

fn room(content: String) -> RememberRequest {
    RememberRequest {
        content,
        room: Some("app".into()),
        ..Default::default()
    }
}

#[test]
fn remember_correct_update_topic_handoff_and_prompts_redact() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let out = store
        .remember(RememberRequest {
            title: Some(format!("token {TOKEN}")),
            metadata: Some(
                serde_json::json!({"env": {"DB_PASSWORD": format!("DB_PASSWORD={PASSWORD}")}}),
            ),
            ..room(format!("The CI bot uses {TOKEN}."))
        })
        .unwrap();
    assert!(!out.redacted.is_empty());
    let c = store
        .correct(
            &IdRef::Id(out.id),
            &format!("The CI bot's DB_PASSWORD={PASSWORD} rotates monthly."),
            &format!("was {TOKEN}"),
            None,
        )
        .unwrap();
    store
        .update(
            &IdRef::Id(c.new_id),
            MemoryUpdate {
                content: Some(format!("Deploy key is {TOKEN} now.")),
                title: Some(format!("password is {PASSWORD}")),
                ..Default::default()
            },
        )
        .unwrap();
    store
        .remember(RememberRequest {
            topic_key: Some("ci/secrets".into()),
            ..room(format!("export MYSQL_PWD={PASSWORD}"))
        })
        .unwrap();
    store
        .remember(RememberRequest {
            topic_key: Some("ci/secrets".into()),
            ..room(format!("SECRET={PASSWORD} and {TOKEN}"))
        })
        .unwrap();
    store
        .save_prompt(
            &format!("use {TOKEN} please"),
            None,
            &engram_store::hub::Origin {
                room: Some("app".into()),
                ..Default::default()
            },
        )
        .unwrap();
    store
        .session_start("s-1", &Default::default(), None)
        .unwrap();
    store
        .session_end("s-1", Some(&format!("done with {TOKEN}")))
        .unwrap();
    assert_clean(dir.path(), &mut store);
}

/// The names a write carries are redacted by the same rules on the engine's write path
/// (`redact::redact_names`), whatever surface sent them, and a later call naming the same
/// session as the caller gave it finds the session it started.
#[test]
fn topic_keys_sessions_sources_tags_rooms_and_tasks_redact() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let origin = engram_store::hub::Origin {
        room: Some(format!("app-{TOKEN}")),
        session_id: Some(TOKEN.into()),
        source: Some(format!("bot {TOKEN}")),
        ..Default::default()
    };
    let out = store
        .remember(RememberRequest {
            topic_key: Some(format!("ci/{TOKEN}")),
            source: Some(format!("client {TOKEN}")),
            session_id: Some(TOKEN.into()),
            tags: vec![TOKEN.into(), format!("DB_PASSWORD={PASSWORD}")],
            room: Some(format!("app-{TOKEN}")),
            content: "The CI bot deploys at noon.".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(!out.redacted.is_empty(), "the write says what it removed");
    store.session_start(TOKEN, &origin, None).unwrap();
    store
        .save_prompt("deploy now", Some(TOKEN), &origin)
        .unwrap();
    store
        .reinforce(&[engram_core::memory::IdRef::Id(out.id)], 1.0, Some(TOKEN))
        .unwrap();
    let ended = store.session_end(TOKEN, Some("done")).unwrap();
    assert!(!ended.id.contains(TOKEN), "{ended:?}");
    assert!(store.session(TOKEN).unwrap().is_some(), "found as given");
    // Seed A's task tools: the task's name, goal and metadata, and a checkpoint's fields.
    let (task, _) = store
        .create_task(engram_store::tasks::TaskRequest {
            name: format!("rotate {TOKEN}"),
            goal: Some(format!("set DB_PASSWORD={PASSWORD}")),
            status: None,
            metadata: Some(serde_json::json!({"owner": format!("MYSQL_PWD={PASSWORD}")})),
            origin: origin.clone(),
        })
        .unwrap();
    store
        .handoff(engram_store::hub::HandoffRequest {
            summary: format!("handed over {TOKEN}"),
            completed: vec![format!("SECRET={PASSWORD}")],
            next_steps: vec![format!("revoke {TOKEN}")],
            task_id: Some(task.task_id),
            origin: origin.clone(),
            ..Default::default()
        })
        .unwrap();
    // C's suggested topic key never echoes a secret of the title.
    let key = engram_core::topic::suggest_topic_key("decision", &format!("use {TOKEN}"), "");
    assert!(!key.contains(&TOKEN.to_lowercase()), "{key}");
    assert_clean(dir.path(), &mut store);
}

#[test]
fn import_and_hand_edited_vault_files_redact() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    let line = serde_json::json!({
        "type": "memory", "id": 1, "uid": "01JA0000000000000000000000", "content": format!("token {TOKEN}"),
        "title": format!("{TOKEN}"), "kind": "fact", "importance": 0.5, "room": format!("app-{TOKEN}"),
        "tier": "active", "created_at": "2026-09-21T00:00:00Z", "updated_at": "2026-09-21T00:00:00Z",
        "valid_from": "2026-09-21T00:00:00Z", "valid_to": null, "pinned": false,
        "source": format!("import {TOKEN}"), "topic_key": format!("ci/{TOKEN}"),
        "session_id": TOKEN, "tags": [TOKEN],
        "metadata": {"note": format!("password: {PASSWORD}")},
    });
    // The records beside the memories are a way in too: a session's id, source and
    // summary, a prompt's session and text.
    let session = serde_json::json!({
        "type": "session", "id": format!("sess {TOKEN}"), "room": "app",
        "source": format!("src {TOKEN}"), "started_at": "2026-09-21T00:00:00Z",
        "summary": format!("summary DB_PASSWORD={PASSWORD}"),
    });
    let prompt = serde_json::json!({
        "type": "prompt", "session_id": format!("ps {TOKEN}"), "room": "app",
        "content": format!("deploy with {TOKEN}"), "created_at": "2026-09-21T00:00:00Z",
    });
    let batch = engram_store::transfer::read_jsonl(&mut std::io::Cursor::new(format!(
        "{line}\n{session}\n{prompt}\n"
    )))
    .unwrap();
    let report = store.import_batch(batch, &mut |_, _| {}).unwrap();
    assert_eq!(report.created_count("memories"), 1, "{report:?}");
    assert_eq!(report.created_count("sessions"), 1, "{report:?}");
    assert_eq!(report.created_count("prompts"), 1, "{report:?}");
    let mut dump = Vec::new();
    store.export_jsonl(&mut dump).unwrap();
    let dump = String::from_utf8(dump).unwrap();
    assert!(!dump.contains(TOKEN) && !dump.contains(PASSWORD), "{dump}");
    assert_clean(dir.path(), &mut store);

    // A hand edit pastes a secret into a vault file; reading it back redacts it, and the
    // next sync rewrites the file clean.
    let id = store
        .remember(room("The deploy runs at noon.".into()))
        .unwrap()
        .id;
    store.sync_vault().unwrap();
    let m = store.get(&IdRef::Id(id)).unwrap();
    let path = find_file(&dir.path().join("memories"), &m.uid);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("at noon.", &format!("at noon with {TOKEN}.")),
    )
    .unwrap();
    store.reindex_vault(&mut |_, _| {}).unwrap();
    let m = store.get(&IdRef::Id(id)).unwrap();
    assert!(m.content.contains("[REDACTED]"), "{}", m.content);
    assert_clean(dir.path(), &mut store);

    // A file made by hand whose name holds a token: read back, renamed to the redacted
    // name, and its memory found under it.
    let hand = dir.path().join("memories").join(format!("note-{TOKEN}.md"));
    std::fs::write(&hand, "The staging database restarts on Sundays.\n").unwrap();
    store.reindex_vault(&mut |_, _| {}).unwrap();
    assert!(!hand.exists(), "the file kept its name");
    assert!(
        dir.path().join("memories/note-[REDACTED].md").exists()
            || everything_on_disk(dir.path()).contains("restarts on Sundays"),
        "the memory's file is gone"
    );
    assert_clean(dir.path(), &mut store);

    // A folder made by hand whose name holds a token (alone, or in a longer name): its
    // file moves to the clean folder and the folder goes, and no emptied folder is left.
    for name in [format!("team-{TOKEN}"), TOKEN.to_string()] {
        let folder = dir.path().join("memories").join(&name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join(format!("{}.md", name.len())),
            "The wiki lives on the intranet.\n",
        )
        .unwrap();
        store.reindex_vault(&mut |_, _| {}).unwrap();
        assert!(!folder.exists(), "the folder kept its name");
        for e in std::fs::read_dir(dir.path().join("memories")).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                assert!(
                    std::fs::read_dir(&p).unwrap().next().is_some(),
                    "{} is left empty",
                    p.display()
                );
            }
        }
    }
    assert!(
        everything_on_disk(dir.path()).contains("lives on the intranet"),
        "the memory's file is gone"
    );
    assert_clean(dir.path(), &mut store);
}

fn find_file(root: &Path, uid: &str) -> PathBuf {
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().contains(uid) {
                return p;
            }
        }
    }
    panic!("no file for {uid}")
}

/// Text over the content limit is stored in parts; it is redacted whole before it is
/// split, so a secret that straddles a cut, or a copy of one in a later part, never
/// reaches the disk (an attacker's finding: each part was redacted on its own).
#[test]
fn long_text_is_redacted_whole_before_it_is_split() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path());
    // The assignment sits where the first cut falls; its value comes back in a later part.
    let long = format!(
        "{}DB_PASSWORD={PASSWORD} {}and again {PASSWORD} with {TOKEN}",
        "word ".repeat(13_100),
        "tail ".repeat(14_000)
    );
    let line = serde_json::json!({
        "type": "memory", "id": 1, "uid": "01JA0000000000000000000009", "content": long,
        "kind": "fact", "importance": 0.5, "room": "app", "tier": "active",
        "created_at": "2026-09-21T00:00:00Z", "updated_at": "2026-09-21T00:00:00Z",
        "valid_from": "2026-09-21T00:00:00Z", "valid_to": null, "pinned": false,
        "source": "import", "tags": [], "metadata": {},
    });
    let batch =
        engram_store::transfer::read_jsonl(&mut std::io::Cursor::new(format!("{line}\n"))).unwrap();
    let report = store.import_batch(batch, &mut |_, _| {}).unwrap();
    assert!(report.created_count("memories") >= 2, "{report:?}");
    assert_clean(dir.path(), &mut store);
    // The capture path (hooks) splits the same way.
    let out = store
        .remember_capture(room(format!(
            "{}the password is {PASSWORD} {}copy {PASSWORD}",
            "word ".repeat(13_105),
            "tail ".repeat(14_000)
        )))
        .unwrap();
    assert!(!out.parts.is_empty(), "stored in parts");
    assert!(!out.redacted.is_empty(), "the redaction is reported");
    assert_clean(dir.path(), &mut store);
}
