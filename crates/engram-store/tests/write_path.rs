//! The write path never loses a word and never retires a memory no rule should touch, on a
//! real on-disk store with resolution on: many distinct, templated texts full of numbers and
//! identifiers (the shape that made the value-change rule chain one memory after another),
//! their near-duplicates, and the engineering cases a user reported.

mod support;
use engram_core::memory::IdRef;
use engram_core::{Config, Millis, Tier};
use engram_store::{RememberAction, RememberRequest, Store};
use std::sync::Arc;

use std::sync::atomic::{AtomicI64, Ordering};

const T0: Millis = 1_790_000_000_000;

fn store(dir: &std::path::Path) -> Store {
    let clock = Arc::new(AtomicI64::new(T0));
    support::open_in(dir, Config::default())
        .with_clock(Arc::new(move || clock.fetch_add(1000, Ordering::SeqCst)))
}

fn put(s: &mut Store, content: &str, source: &str) -> engram_store::RememberOutcome {
    s.remember(RememberRequest {
        content: content.into(),
        room: Some("app".into()),
        source: Some(source.into()),
        ..Default::default()
    })
    .unwrap()
}

/// Every text the store holds for memory `id`: content, revisions and evidence.
fn texts_of(s: &Store, id: i64) -> Vec<String> {
    let d = s.show(&IdRef::Id(id)).unwrap();
    let mut out = vec![d.memory.content.clone()];
    out.extend(d.revisions.iter().map(|r| r.content.clone()));
    out.extend(d.evidence.iter().map(|e| e.content.clone()));
    out
}

/// A distinct engineering text per (client, i): the same template, different numbers and
/// identifiers, as concurrent clients of one team write them.
pub fn distinct_text(client: usize, i: usize) -> String {
    let h = (client * 7919 + i * 104_729) % 0xffffff;
    match i % 5 {
        0 => format!("Client {client} note {i}: build {h:06x} passed on runner r{client}."),
        1 => format!("Release v1.{client}.{i} shipped with commit {h:07x}."),
        2 => format!(
            "Invoice INV-{client:03}{i:03} for {} EUR was paid.",
            100 + i * 3 + client
        ),
        3 => format!("User u{client}x{i} reported a crash in the export dialog on build {h}."),
        _ => format!(
            "Ticket ENG-{} by client {client}: flaky test in module m{i}.",
            client * 1000 + i
        ),
    }
}

#[test]
fn distinct_texts_are_all_kept_and_none_superseded() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path());
    let mut acked: Vec<(String, i64)> = Vec::new();
    for client in 0..10 {
        for i in 0..50 {
            let t = distinct_text(client, i);
            let r = put(&mut s, &t, &format!("client-{client}"));
            acked.push((t, r.id));
        }
    }
    let mut lost = Vec::new();
    for (t, id) in &acked {
        if !texts_of(&s, *id).iter().any(|x| x == t) {
            lost.push(t.clone());
        }
    }
    let superseded = acked
        .iter()
        .filter(|(_, id)| s.get(&IdRef::Id(*id)).unwrap().tier == Tier::Superseded)
        .count();
    assert!(
        lost.is_empty(),
        "{} lost: {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
    assert_eq!(
        superseded,
        0,
        "{} lost, {superseded} superseded",
        lost.len()
    );
}

#[test]
fn reported_engineering_pairs_are_two_memories() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path());
    for (a, b) in [
        (
            "Release v1.4.2 is tagged and deployed to production, commit 3f9a2c1.",
            "Release v1.4.3 is tagged and deployed to production, commit 8b7d0e4.",
        ),
        (
            "User u1042 reported a crash in the export dialog on build 5521.",
            "User u2213 reported a crash in the export dialog on build 5530.",
        ),
        (
            "Invoice INV-2026-0031 for 1200 EUR was paid on 2026-03-02.",
            "Invoice INV-2026-0032 for 950 EUR was paid on 2026-03-04.",
        ),
    ] {
        let x = put(&mut s, a, "test");
        let y = put(&mut s, b, "test");
        assert_eq!(y.action, RememberAction::Created, "{b}");
        let why = y.why.as_deref().unwrap();
        assert!(why.contains("identifiers differ"), "{why}");
        assert_ne!(x.id, y.id);
        assert_eq!(s.get(&IdRef::Id(x.id)).unwrap().tier, Tier::Active, "{a}");
    }
    // A change cue still updates an identifier's value.
    let v = put(&mut s, "The staging cluster runs Postgres 15.4.", "test");
    let u = put(
        &mut s,
        "The staging cluster was upgraded to Postgres 16.2.",
        "test",
    );
    assert_eq!(u.action, RememberAction::Superseded);
    assert_eq!(s.get(&IdRef::Id(v.id)).unwrap().tier, Tier::Superseded);
}

/// An exact repeat under a new title or from another client keeps that title and source
/// as evidence: those are acknowledged words too.
#[test]
fn an_exact_repeat_under_a_new_title_keeps_the_title_as_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path());
    let a = put(&mut s, "We use SQLite for the cache", "cli");
    let r = s
        .remember(RememberRequest {
            content: "We use SQLite for the cache".into(),
            title: Some("Decision: local cache engine ADR-17".into()),
            room: Some("app".into()),
            source: Some("agent-x".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!((r.action, r.id), (RememberAction::Reinforced, a.id));
    let d = s.show(&IdRef::Id(a.id)).unwrap();
    assert_eq!(d.evidence.len(), 1, "{:?}", d.evidence);
    assert_eq!(
        (
            d.evidence[0].title.as_deref(),
            d.evidence[0].source.as_str()
        ),
        (Some("Decision: local cache engine ADR-17"), "agent-x")
    );
}

#[test]
fn a_folded_write_keeps_its_words_title_and_source_as_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path());
    let a = put(&mut s, "The API uses JWT tokens for authentication.", "cli");
    let r = s
        .remember(RememberRequest {
            content: "The API uses JWT tokens for its authentication!".into(),
            title: Some("auth".into()),
            room: Some("app".into()),
            source: Some("mcp".into()),
            session_id: Some("s1".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!((r.action, r.id), (RememberAction::Reinforced, a.id));
    let d = s.show(&IdRef::Id(a.id)).unwrap();
    assert_eq!(d.evidence.len(), 1);
    let e = &d.evidence[0];
    assert_eq!(e.content, "The API uses JWT tokens for its authentication!");
    assert_eq!(
        (e.title.as_deref(), e.source.as_str(), e.action.as_str()),
        (Some("auth"), "mcp", "reinforce")
    );
    assert_eq!(e.session_id.as_deref(), Some("s1"));
    // An exact repeat (after normalisation) adds nothing to keep.
    put(
        &mut s,
        "the API uses JWT tokens  for authentication.",
        "cli",
    );
    assert_eq!(s.show(&IdRef::Id(a.id)).unwrap().evidence.len(), 1);

    // The vault file lists it in its front matter, and reading the vault back changes
    // nothing.
    s.sync_vault().unwrap();
    let file = walk(&dir.path().join("memories"))
        .into_iter()
        .find(|p| p.to_string_lossy().contains(&d.memory.uid))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("evidence:\n  - \""), "{text}");
    assert!(
        text.contains("reinforce from mcp titled \\\"auth\\\": The API uses JWT tokens for its authentication!"),
        "{text}"
    );
    s.reindex_vault(&mut |_, _| {}).unwrap();
    assert_eq!(
        s.get(&IdRef::Id(a.id)).unwrap().content,
        "The API uses JWT tokens for authentication."
    );

    // Export carries evidence; import into a fresh store brings it back.
    let mut buf = Vec::new();
    s.export_jsonl(&mut buf).unwrap();
    let dir2 = tempfile::tempdir().unwrap();
    let mut t = store(dir2.path());
    let batch = engram_store::transfer::read_jsonl(&mut &buf[..]).unwrap();
    t.import_batch(batch, &mut |_, _| {}).unwrap();
    let back = t.show(&IdRef::Uid(d.memory.uid.clone())).unwrap();
    assert_eq!(back.evidence, d.evidence);
}

#[test]
fn unsupersede_makes_the_old_memory_active_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path());
    let old = put(&mut s, "The project database is PostgreSQL.", "cli");
    let new = put(
        &mut s,
        "We switched from PostgreSQL to SQLite for the project database.",
        "cli",
    );
    assert_eq!(new.action, RememberAction::Superseded);
    let u = s.unsupersede(&IdRef::Id(old.id)).unwrap();
    assert_eq!(u.superseded_by, Some(new.id));
    let m = s.get(&IdRef::Id(old.id)).unwrap();
    assert_eq!((m.tier, m.valid_to), (Tier::Active, None));
    let d = s.show(&IdRef::Id(old.id)).unwrap();
    assert!(d.recent_events.iter().any(|e| {
        e.detail
            .as_deref()
            .is_some_and(|x| x.starts_with("unsupersede"))
    }));
    assert!(
        d.links
            .iter()
            .any(|l| l.kind == engram_core::LinkKind::Supersedes && l.src == new.id)
    );
    // Only a superseded memory can be unsuperseded; the error names the field.
    let e = s.unsupersede(&IdRef::Id(old.id)).unwrap_err().to_string();
    assert!(e.contains("id") && e.contains("not superseded"), "{e}");
}

#[test]
fn a_caller_that_judges_conflicts_gets_a_pending_judgment_instead() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = store(dir.path());
    let old = put(&mut s, "The project database is PostgreSQL.", "cli");
    let r = s
        .remember(RememberRequest {
            content: "We switched from PostgreSQL to SQLite for the project database.".into(),
            room: Some("app".into()),
            supersede: Some(false),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(r.action, RememberAction::Created);
    assert_eq!(s.get(&IdRef::Id(old.id)).unwrap().tier, Tier::Active);
    assert!(r.candidates.iter().any(|c| c.id == old.id), "{r:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Eight writers merge a detail into one memory at once, each with its own `Store` on the
/// file: every detail ends in the active content of the memory its write landed on. Each
/// plan is made from the text read before the write transaction; a merge applied on a
/// text another writer changed since is rebuilt from the current one (before, the last
/// writer's content replaced the others' and their words survived only in revisions).
#[test]
fn concurrent_merges_keep_every_writers_detail_in_the_active_content() {
    let dir = tempfile::tempdir().unwrap();
    let base = "The nightly deploy runs on Fridays from the main branch";
    put(&mut store(dir.path()), base, "test");
    let names: [&'static str; 8] = [
        "amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron",
    ];
    let start = Arc::new(std::sync::Barrier::new(names.len()));
    let writers: Vec<_> = names
        .iter()
        .map(|&w| {
            let (path, start) = (dir.path().to_path_buf(), start.clone());
            std::thread::spawn(move || {
                // Through support, as the checking store below: the same backend.
                let mut s = support::open_in(&path, Config::default());
                start.wait();
                let out = put(&mut s, &format!("{base}, checked by {w} and {w}bot"), w);
                (w.to_string(), out)
            })
        })
        .collect();
    let s = store(dir.path());
    for t in writers {
        let (w, out) = t.join().expect("a writer failed");
        let m = s.get(&IdRef::Id(out.id)).unwrap();
        assert_eq!(m.tier, Tier::Active, "{w}: {:?}", out.action);
        assert!(
            m.content.contains(&format!("{w}bot")),
            "{w}'s detail left the active content of #{}: {:?}",
            out.id,
            m.content
        );
    }
}
