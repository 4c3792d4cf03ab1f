//! The PostgreSQL backend against a real server: `ENGRAM_TEST_PG` is an admin URL
//! (`scripts/pg-test-server start` provides one; `scripts/test` starts it). Each test makes
//! a fresh database there and drops it afterwards. Without `ENGRAM_TEST_PG` the tests print
//! a note and pass, except under CI, where they fail: the Postgres run is never skipped.
//!
//! The strongest check here is the comparison: the same trait calls on a SQLite store and
//! on a PostgreSQL store give the same answers.
#![cfg(feature = "postgres")]

use engram_core::memory::IdRef;
use engram_core::text::plan_query;
use engram_core::{EventKind, Kind, LinkKind, Tier};
use engram_store::postgres::PgBackend;
use engram_store::storage::candidates::{CandidateSource, Filter};
use engram_store::storage::rows::*;
use engram_store::storage::{Backend, Reads, write};
use std::sync::{Arc, Barrier};

const T0: i64 = 1_790_000_000_000;

/// The admin URL, or `None` (with a note) when no server was given outside CI.
fn admin_url() -> Option<String> {
    match std::env::var("ENGRAM_TEST_PG") {
        Ok(u) if !u.is_empty() => Some(u),
        _ if std::env::var_os("CI").is_some() => {
            panic!("CI is set but ENGRAM_TEST_PG is not: the PostgreSQL tests must run in CI")
        }
        _ => {
            eprintln!("note: ENGRAM_TEST_PG is unset; skipping the PostgreSQL tests");
            None
        }
    }
}

/// `url` with its database replaced by `db`.
fn with_db(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    format!("{}/{db}{query}", &base[..host_end])
}

/// A database of its own for one test, dropped (with its connections) when done.
struct TestDb {
    admin: String,
    name: String,
    url: String,
}

impl TestDb {
    fn new(admin: &str) -> TestDb {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("engram_test_{}_{n}", std::process::id());
        let mut c =
            postgres::Client::connect(admin, postgres::NoTls).expect("the admin URL connects");
        c.batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("a test database is created");
        TestDb {
            admin: admin.to_string(),
            url: with_db(admin, &name),
            name,
        }
    }

    fn open(&self) -> PgBackend {
        PgBackend::open(&self.url).expect("the test database opens")
    }

    fn admin(&self) -> postgres::Client {
        postgres::Client::connect(&self.admin, postgres::NoTls).unwrap()
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Ok(mut c) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = c.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// A SQLite store, as the backend the engine runs on by default.
fn sqlite_backend(dir: &std::path::Path) -> engram_store::SqliteBackend {
    engram_store::SqliteBackend::open_bare(&dir.join("engram.db"), &engram_core::Config::default())
        .unwrap()
}

fn memory(uid: &str, content: &str, room: &str, kind: Kind, at: i64) -> NewMemory {
    NewMemory {
        uid: uid.to_string(),
        content: content.to_string(),
        title: None,
        kind,
        importance: 0.5,
        tags: vec!["t1".into()],
        room: room.to_string(),
        topic_key: None,
        pinned: false,
        tier: Tier::Active,
        created_at: at,
        updated_at: at,
        valid_from: at,
        valid_to: None,
        source: "test".into(),
        session_id: None,
        metadata: serde_json::json!({"component": "parser", "n": 1}),
        author: None,
        review_after: None,
    }
}

/// A unit vector along a few axes, so cosines are known and exact.
fn unit(dim: usize, axes: &[(usize, f32)]) -> Vec<f32> {
    let mut v = vec![0.0f32; dim];
    for (i, x) in axes {
        v[*i] = *x;
    }
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

/// Writes every row kind through the traits; returns every read the interface offers, as
/// text (judgment uids are random, so they are masked).
fn scenario(b: &mut dyn Backend) -> Vec<String> {
    let ids = write(b, |tx| {
        let mut a = memory(
            "u-a",
            "The parser runs on every commit",
            "alpha",
            Kind::Fact,
            T0,
        );
        a.session_id = Some("s1".into());
        let mut c = memory(
            "u-c",
            "Decided: use PostgreSQL for teams",
            "alpha",
            Kind::Decision,
            T0 + 10,
        );
        c.review_after = Some(T0 + 100);
        c.pinned = true;
        let mut f = memory(
            "u-f",
            "Parser failure on empty input",
            "beta",
            Kind::Failure,
            T0 + 20,
        );
        f.title = Some("empty input".into());
        let g = memory("u-g", "東京の天気は晴れ", "beta", Kind::Fact, T0 + 30);
        let mut ids = Vec::new();
        for m in [a, c, f, g] {
            let id = tx.insert_memory(&m)?;
            tx.index_text(id, m.title.as_deref(), &m.content, &m.tags, None)?;
            tx.append_event(&NewEvent {
                memory_id: id,
                kind: EventKind::Create,
                weight: 1.0,
                at: m.created_at,
                session_id: m.session_id.as_deref(),
                detail: Some("created by test"),
            })?;
            ids.push(id);
        }
        tx.append_event(&NewEvent {
            memory_id: ids[0],
            kind: EventKind::RecallHit,
            weight: 0.5,
            at: T0 + 50,
            session_id: Some("s1"),
            detail: Some("query: parser"),
        })?;
        tx.upsert_link(&LinkWrite::set(ids[0], ids[1], LinkKind::Related, 0.4, T0))?;
        tx.upsert_link(&LinkWrite {
            mode: LinkWeight::Add,
            cap: 0.9,
            ..LinkWrite::set(ids[0], ids[1], LinkKind::Related, 0.7, T0 + 1)
        })?;
        tx.upsert_link(&LinkWrite::set(
            ids[2],
            ids[0],
            LinkKind::Supersedes,
            1.0,
            T0 + 2,
        ))?;
        let old = tx.memory(&IdRef::Id(ids[0]))?.unwrap();
        tx.add_revision(&old, "update", T0 + 60, Some("s1"))?;
        tx.patch_memory(
            ids[0],
            &MemoryPatch {
                content: Some("The parser runs on every push".into()),
                importance: Some(0.8),
                ..MemoryPatch::touch(T0 + 60)
            },
        )?;
        assert!(!tx.patch_memory(
            ids[1],
            &MemoryPatch {
                if_tier: Some(Tier::Archived),
                ..MemoryPatch::tier(Tier::Trash, T0)
            }
        )?);
        tx.add_evidence(
            ids[1],
            &Evidence {
                content: "we chose postgres".into(),
                title: None,
                source: "test".into(),
                session_id: None,
                action: "reinforce".into(),
                at: T0 + 70,
            },
        )?;
        let j = tx.pending_judgment(ids[1], ids[2], 0.7, Some("s1"), T0 + 80)?;
        assert_eq!(j, tx.pending_judgment(ids[1], ids[2], 0.7, None, T0 + 81)?);
        tx.record_verdict(
            &Verdict {
                judgment_id: j,
                relation: "related".into(),
                reason: Some("same topic".into()),
                ..Default::default()
            },
            "related",
            T0 + 90,
        )?;
        tx.pending_judgment(ids[0], ids[3], 0.5, None, T0 + 85)?;
        tx.write_session(&SessionWrite::Start {
            id: "s1",
            room: "alpha",
            directory: Some("/w"),
            source: Some("cli"),
            at: T0,
        })?;
        assert!(!tx.write_session(&SessionWrite::End {
            id: "nope",
            summary: None,
            at: T0
        })?);
        tx.write_session(&SessionWrite::Outcome {
            id: "s1",
            room: "alpha",
            outcome: "failure",
            at: T0 + 95,
        })?;
        tx.write_session(&SessionWrite::Handoff {
            id: "s2",
            room: "beta",
            summary: "next: tests",
            at: T0 + 96,
        })?;
        let p = tx.add_prompt(Some("s1"), "alpha", "How does the Parser work?", T0 + 5)?;
        tx.add_prompt(None, "beta", "100% sure_thing", T0 + 6)?;
        let gone = tx.add_prompt(None, "beta", "drop me", T0 + 7)?;
        assert!(tx.delete_prompt(gone)?);
        assert!(p > 0);
        tx.set_meta("k", "v1")?;
        tx.set_meta("k", "v2")?;
        tx.log_maintenance(T0, T0 + 1, true, r#"{"archived":0}"#)?;
        tx.set_embedding(ids[0], Some(("m", &unit(4, &[(0, 1.0)]))))?;
        tx.set_embedding(ids[1], Some(("m", &unit(4, &[(0, 1.0), (1, 1.0)]))))?;
        tx.set_embedding(ids[2], Some(("m", &unit(4, &[(1, 1.0)]))))?;
        tx.set_embedding(ids[2], None)?;
        tx.prune_changes(true)?;
        Ok(ids)
    })
    .expect("the scenario's write commits");
    let (a, c, f, g) = (ids[0], ids[1], ids[2], ids[3]);
    // A second transaction that moves a room and purges a memory.
    write(b, |tx| {
        tx.move_room("gamma-none", "delta")?;
        let extra =
            tx.insert_memory(&memory("u-x", "to be purged", "beta", Kind::Fact, T0 + 99))?;
        tx.upsert_link(&LinkWrite::set(extra, a, LinkKind::Explicit, 0.5, T0))?;
        tx.delete_memory(extra)?;
        Ok(())
    })
    .unwrap();
    // The interface's import, link and vault writes.
    write(b, |tx| {
        let imported = tx.insert_memory_with_id(
            500,
            &memory("u-imp", "imported row", "alpha", Kind::Episode, T0 - 10),
        )?;
        let next = tx.insert_memory(&memory(
            "u-next",
            "after the import",
            "alpha",
            Kind::Fact,
            T0 + 200,
        ))?;
        assert!(
            next > imported,
            "the id sequence moved past the imported id"
        );
        let stored = tx.insert_rows(&[
            StoredRow::Link(LinkRow {
                src: imported,
                dst: a,
                kind: LinkKind::Explicit,
                weight: 0.3,
                created_at: T0,
                updated_at: T0,
                note: Some("n".into()),
            }),
            StoredRow::Link(LinkRow {
                src: imported,
                dst: a,
                kind: LinkKind::Explicit,
                weight: 0.9,
                created_at: T0,
                updated_at: T0,
                note: None,
            }),
            StoredRow::Session(SessionRow {
                id: "s1".into(),
                room: "x".into(),
                directory: None,
                source: None,
                started_at: T0,
                ended_at: None,
                summary: None,
                outcome: None,
                outcome_at: None,
                author: None,
            }),
            StoredRow::Session(SessionRow {
                id: "s9".into(),
                room: "alpha".into(),
                directory: None,
                source: Some("import".into()),
                started_at: T0 - 5,
                ended_at: Some(T0),
                summary: None,
                outcome: None,
                outcome_at: None,
                author: None,
            }),
            StoredRow::Prompt(PromptRow {
                session_id: None,
                room: "beta".into(),
                content: "100% sure_thing".into(),
                created_at: T0 + 6,
                author: Some("alice".into()),
            }),
            StoredRow::Prompt(PromptRow {
                session_id: None,
                room: "beta".into(),
                content: "new".into(),
                created_at: T0 + 8,
                author: None,
            }),
            StoredRow::Event {
                memory_id: imported,
                row: EventRow {
                    kind: "create".into(),
                    weight: 1.0,
                    at: T0 - 10,
                    session_id: None,
                    detail: None,
                },
            },
            StoredRow::Revision {
                memory_id: imported,
                row: RevisionRow {
                    content: "older".into(),
                    title: None,
                    kind: "episode".into(),
                    importance: 0.2,
                    tags: vec!["x".into()],
                    reason: "update".into(),
                    at: T0 - 9,
                    session_id: None,
                },
            },
        ])?;
        assert_eq!(
            stored,
            vec![true, false, false, true, false, true, true, true]
        );
        assert!(tx.delete_link(a, c, LinkKind::Related)?);
        assert!(!tx.delete_link(a, c, LinkKind::Related)?);
        let f1 = VaultFile {
            path: "alpha/a.md".into(),
            uid: "u-a".into(),
            hash: "h".into(),
            size: 3,
            mtime: 4,
        };
        tx.write_vault_file(&VaultFileWrite::Record(&f1))?;
        tx.write_vault_file(&VaultFileWrite::MarkForRewrite {
            path: "alpha/b.md",
            uid: "u-a",
        })?;
        tx.write_vault_file(&VaultFileWrite::MarkForRewrite {
            path: "alpha/c.md",
            uid: "u-c",
        })?;
        tx.write_vault_file(&VaultFileWrite::Forget { path: "alpha/c.md" })?;
        Ok(())
    })
    .unwrap();
    let model = VectorModel { model: "m", dim: 4 };
    let mut pages = Vec::new();
    for section in [
        Section::Memories,
        Section::Revisions,
        Section::Evidence,
        Section::Events,
        Section::Links,
        Section::Sessions,
        Section::Prompts,
        Section::Judgments,
    ] {
        let mut after = None;
        loop {
            let page = b.rows_after(section, after.as_ref(), 2).unwrap();
            pages.push(format!("{section:?}: {:?} next {:?}", page.rows, page.next));
            match page.next {
                Some(k) => after = Some(k),
                None => break,
            }
        }
    }
    let mask = |s: String| {
        let re_like = s
            .split("rel-")
            .map(|p| p.get(16..).unwrap_or(p).to_string())
            .collect::<Vec<_>>();
        re_like.join("rel-?")
    };
    let all = [a, c, f, g, 999];
    let ma = b.memory(&IdRef::Id(a)).unwrap().unwrap();
    let mut out = vec![
        format!("{:?}", b.memory_id(&IdRef::Uid("u-c".into())).unwrap()),
        format!("{:?}", b.memory(&IdRef::Uid("u-a".into())).unwrap()),
        format!("{:?}", {
            let mut v = b.memories(&all).unwrap();
            v.sort_by_key(|m| m.id);
            v
        }),
        format!("{:?}", b.memory_exists(999).unwrap()),
        format!("{:?}", b.review_after(c).unwrap()),
        format!("{:?}", b.due_for_review(None, T0 + 200, 10).unwrap()),
        format!(
            "{:?}",
            b.due_for_review(Some("beta"), T0 + 200, 10).unwrap()
        ),
        format!("{:?}", b.memories_beside(&ma, Side::After, 5).unwrap()),
        format!(
            "{:?}",
            b.memories_beside(&b.memory(&IdRef::Id(g)).unwrap().unwrap(), Side::Before, 5)
                .unwrap()
        ),
    ];
    for order in [
        ActiveOrder::Id,
        ActiveOrder::IdDesc,
        ActiveOrder::UpdatedThenId,
        ActiveOrder::ImportanceThenId,
    ] {
        let kinds = [Kind::Fact, Kind::Decision, Kind::Failure];
        let rooms = ["alpha".to_string()];
        for (rooms, pinned_only) in [(None, false), (Some(&rooms[..]), false), (None, true)] {
            let q = ActiveQuery {
                kinds: &kinds,
                rooms,
                pinned_only,
                order,
                limit: 10,
            };
            out.push(format!("{:?}", b.active_memories(&q).unwrap()));
        }
    }
    out.extend([
        format!("{:?}", b.component_failures("beta", "parser", 5).unwrap()),
        format!("{:?}", b.active_rooms().unwrap()),
        format!("{:?}", b.unpinned_in_room("alpha", 5).unwrap()),
        format!("{:?}", b.unpinned_ids().unwrap()),
        format!("{:?}", b.recent_memories(None, 3).unwrap()),
        format!("{:?}", b.recent_memories(Some("beta"), 3).unwrap()),
        format!("{:?}", b.live_memories().unwrap()),
        format!("{:?}", b.session_memory_count("s1").unwrap()),
        format!("{:?}", b.newest_in_room("beta").unwrap()),
        format!("{:?}", b.newest_in_room("nowhere").unwrap()),
        format!(
            "{:?}",
            b.active_duplicate("alpha", "  the PARSER runs on every   push ")
                .unwrap()
        ),
        format!("{:?}", b.topic_memory("none", "alpha").unwrap()),
        format!(
            "{:?}",
            b.list_memories(&ListQuery {
                kinds: &[],
                tiers: &[],
                room: None,
                limit: 10
            })
            .unwrap()
        ),
        format!(
            "{:?}",
            b.list_memories(&ListQuery {
                kinds: &[Kind::Fact],
                tiers: &[Tier::Active],
                room: Some("beta"),
                limit: 10
            })
            .unwrap()
        ),
        format!("{:?}", b.live_count(None).unwrap()),
        format!("{:?}", b.live_count(Some("alpha")).unwrap()),
        format!("{:?}", b.daily_counts(Daily::Created, 0).unwrap()),
        format!("{:?}", b.daily_counts(Daily::RecallHits, 0).unwrap()),
    ]);
    for t in [
        Tally::MemoriesByTier,
        Tally::MemoriesByKind,
        Tally::MemoriesByRoom,
        Tally::LinksByKind,
        Tally::EventsByKind,
    ] {
        out.push(format!("{:?}", b.tally(t).unwrap()));
    }
    out.extend([
        format!("{:?}", {
            let t = b.traces(&all).unwrap();
            let mut v: Vec<_> = t.into_iter().collect();
            v.sort_by_key(|x| x.0);
            v
        }),
        format!("{:?}", b.event_counts(a).unwrap()),
        format!("{:?}", b.recent_events(a, 5).unwrap()),
        format!(
            "{:?}",
            b.last_event_detail(a, DetailMatch::Prefix("QUERY"))
                .unwrap()
        ),
        format!(
            "{:?}",
            b.last_event_detail(a, DetailMatch::Contains("by test"))
                .unwrap()
        ),
        format!("{:?}", b.event_count(a).unwrap()),
        format!("{:?}", Reads::links_around(b, a).unwrap()),
        format!("{:?}", b.link_count(a).unwrap()),
        format!("{:?}", b.active_neighbours(a).unwrap()),
        format!("{:?}", b.links_among(&all).unwrap()),
        format!("{:?}", b.successor(a).unwrap()),
        format!("{:?}", b.revisions(a).unwrap()),
        format!("{:?}", b.revision_count(a).unwrap()),
        format!("{:?}", b.evidence(c).unwrap()),
        format!("{:?}", b.pending_judgments(10).unwrap()),
        format!("{:?}", b.judgments_of(c).unwrap()),
        format!("{:?}", b.judgments_in(Some("alpha"), None, 10).unwrap()),
        format!("{:?}", b.judgments_in(None, Some("judged"), 10).unwrap()),
        format!("{:?}", b.session("s1").unwrap()),
        format!("{:?}", b.session_outcome("s1").unwrap()),
        format!("{:?}", b.session_outcome("s2").unwrap()),
        format!("{:?}", b.session_outcome("none").unwrap()),
        format!("{:?}", b.recalled_in_session("s1").unwrap()),
        format!("{:?}", b.failed_sessions_recalling(a).unwrap()),
        format!("{:?}", b.rooms().unwrap()),
        format!("{:?}", b.recent_sessions(None, 10).unwrap()),
        format!("{:?}", b.sessions_by_start(10).unwrap()),
        format!("{:?}", b.all_sessions().unwrap()),
        format!("{:?}", b.open_session_since("alpha").unwrap()),
        format!("{:?}", b.prompts(None, Some("parser"), 10).unwrap()),
        format!(
            "{:?}",
            b.prompts(Some("beta"), Some("0% SURE_"), 10).unwrap()
        ),
        format!("{:?}", b.prompts(None, Some("%"), 10).unwrap()),
        format!("{:?}", b.all_prompts().unwrap()),
        format!("{:?}", b.meta("k").unwrap()),
        format!("{:?}", b.meta("missing").unwrap()),
        format!("{:?}", b.maintenance_runs(5).unwrap()),
        format!("{:?}", b.old_episodes(T0, &[]).unwrap()),
        format!("{:?}", b.old_episodes(T0, &["beta".to_string()]).unwrap()),
        format!("{:?}", b.links_from(500).unwrap()),
        format!(
            "{:?}",
            b.changes(0, b.last_change().unwrap(), 1000).unwrap().len()
        ),
        format!(
            "{:?}",
            b.changes(0, b.last_change().unwrap(), 1000)
                .unwrap()
                .iter()
                .map(|c| (c.memory_id, c.uid.clone()))
                .collect::<Vec<_>>()
        ),
        format!("{:?}", {
            let mut v = b.vault_files(None).unwrap();
            v.sort_by(|x, y| x.path.cmp(&y.path));
            v
        }),
        format!("{:?}", b.vault_files(Some("u-a")).unwrap()),
        format!("{:?}", b.missing_embeddings(model, 0, 10).unwrap()),
        format!("{:?}", b.embedded_count(model).unwrap()),
    ]);
    out.extend(pages);
    out.into_iter().map(mask).collect()
}

#[test]
fn migrations_run_once_and_again_without_change() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let first = db.open();
    assert_eq!(first.schema_version().unwrap(), 3);
    let second = db.open();
    assert_eq!(second.schema_version().unwrap(), 3);
    let tables: i64 = db
        .admin()
        .query_one("SELECT 1::bigint", &[])
        .map(|r| r.get(0))
        .unwrap();
    assert_eq!(tables, 1);
    let mut c = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM meta WHERE key = 'schema_version'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

#[test]
fn every_read_and_write_matches_sqlite() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let mut pg = db.open();
    let dir = tempfile::tempdir().unwrap();
    let mut lite = sqlite_backend(dir.path());
    let want = scenario(&mut lite);
    let got = scenario(&mut pg);
    assert_eq!(want.len(), got.len());
    assert!(want.len() >= 100, "every read is compared: {}", want.len());
    assert!(
        want.iter()
            .any(|w| w.contains("The parser runs on every push"))
    );
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(
            w, g,
            "read #{i} differs between SQLite (left) and PostgreSQL (right)"
        );
    }
}

/// The filter every candidate test uses: active memories of any kind in any room.
fn active() -> Filter {
    Filter {
        tiers: vec![Tier::Active],
        kinds: None,
        exclude_kinds: vec![],
        rooms: None,
        valid_at: None,
        hidden: vec![],
        tag: None,
    }
}

fn seed(pg: &mut PgBackend, texts: &[(&str, &str)]) -> Vec<i64> {
    write(pg, |tx| {
        let mut ids = Vec::new();
        for (i, (room, text)) in texts.iter().enumerate() {
            let m = memory(&format!("u{i}"), text, room, Kind::Fact, T0 + i as i64);
            let id = tx.insert_memory(&m)?;
            tx.index_text(id, None, text, &[], None)?;
            ids.push(id);
        }
        Ok(ids)
    })
    .unwrap()
}

#[test]
fn lexical_search_stems_english_and_finds_two_character_cjk_words() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let mut pg = db.open();
    let ids = seed(
        &mut pg,
        &[
            ("a", "The deployments were running slowly"),
            ("a", "Cats sleep all day"),
            ("b", "東京の天気は晴れです"),
            ("b", "大阪で会議があります"),
            ("b", "The deployment pipeline"),
        ],
    );
    let c = pg.candidates(None);
    // English stemming: "deploy" and "run" find "deployments … running".
    let hits = c
        .lexical(&plan_query("deploying runs"), &active(), 10, &[])
        .unwrap();
    let found: Vec<i64> = hits.iter().map(|h| h.0).collect();
    assert_eq!(found, vec![ids[0], ids[4]], "{hits:?}");
    assert!(hits.iter().all(|(_, r)| *r > 0.0 && *r <= 1.0), "{hits:?}");
    assert!(
        hits[0].1 > hits[1].1,
        "two matched words rank above one: {hits:?}"
    );
    // Stopwords alone still find something (the substring channel).
    let the = c.lexical(&plan_query("the"), &active(), 10, &[]).unwrap();
    assert!(the.iter().any(|h| h.0 == ids[0]), "{the:?}");
    // A 2-character CJK word.
    let tokyo = c.lexical(&plan_query("東京"), &active(), 10, &[]).unwrap();
    assert_eq!(
        tokyo.iter().map(|h| h.0).collect::<Vec<_>>(),
        vec![ids[2]],
        "{tokyo:?}"
    );
    // A 3+-character CJK run goes through the gram channel.
    let osaka = c
        .lexical(&plan_query("大阪で会議"), &active(), 10, &[])
        .unwrap();
    assert_eq!(osaka.first().map(|h| h.0), Some(ids[3]), "{osaka:?}");
    // Filters apply: room b has no deployment memory but the pipeline.
    let mut in_b = active();
    in_b.rooms = Some(vec!["b".into()]);
    let b = c.lexical(&plan_query("deploying"), &in_b, 10, &[]).unwrap();
    assert_eq!(b.iter().map(|h| h.0).collect::<Vec<_>>(), vec![ids[4]]);
    // Coverage: the share of the query's terms each memory holds.
    let plan = plan_query("deployment pipeline");
    let cov = c.coverage(&plan, &ids, false).unwrap();
    assert_eq!(cov.get(&ids[4]), Some(&1.0));
    assert_eq!(cov.get(&ids[0]), Some(&0.5));
    assert_eq!(cov.get(&ids[1]), None);
    let partial = c.coverage(&plan_query("pipe"), &ids, true).unwrap();
    assert_eq!(partial.get(&ids[4]), Some(&1.0), "{partial:?}");
}

#[test]
fn vector_search_honours_the_filter_and_cosines_are_exact() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let mut pg = db.open();
    let dim = 384;
    let texts: Vec<(String, String)> = (0..40)
        .map(|i| {
            (
                if i % 2 == 0 { "even" } else { "odd" }.to_string(),
                format!("memory {i}"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let ids = seed(&mut pg, &refs);
    let vectors: Vec<Vec<f32>> = (0..40)
        .map(|i| unit(dim, &[(0, 1.0), (1 + i, 0.1 * (i as f32 + 1.0))]))
        .collect();
    write(&mut pg, |tx| {
        for (id, v) in ids.iter().zip(&vectors) {
            tx.set_embedding(*id, Some(("mini", v)))?;
        }
        Ok(())
    })
    .unwrap();
    let query = unit(dim, &[(0, 1.0)]);
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>() as f64;
    let c = pg.candidates(Some("mini"));
    let mut odd = active();
    odd.rooms = Some(vec!["odd".into()]);
    let got = c.vector(&query, &odd, 5).unwrap();
    // Brute force: the odd memories nearest the query are the ones with the smallest
    // second component, i = 1, 3, 5, 7, 9.
    let want: Vec<i64> = [1, 3, 5, 7, 9].iter().map(|i| ids[*i]).collect();
    assert_eq!(got.iter().map(|h| h.0).collect::<Vec<_>>(), want, "{got:?}");
    for (id, cos) in &got {
        let i = ids.iter().position(|x| x == id).unwrap();
        assert!((cos - dot(&query, &vectors[i])).abs() < 1e-6);
    }
    let cos = c.cosines(&query, &[ids[0], ids[39], 12345]).unwrap();
    assert_eq!(cos.len(), 2);
    assert!((cos[&ids[39]] - dot(&query, &vectors[39])).abs() < 1e-6);
    // Another model's vectors are not this model's.
    assert!(
        pg.candidates(Some("other"))
            .vector(&query, &active(), 5)
            .unwrap()
            .is_empty()
    );
    assert!(
        pg.candidates(None)
            .cosines(&query, &ids)
            .unwrap()
            .is_empty()
    );
    // The HNSW index is there for 384-dimensional vectors.
    let mut admin_db = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let n: i64 = admin_db
        .query_one(
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'embeddings_hnsw_384'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}

#[test]
fn links_around_walks_spreading_links_within_the_filter() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let mut pg = db.open();
    let ids = seed(
        &mut pg,
        &[
            ("a", "one"),
            ("a", "two"),
            ("a", "three"),
            ("b", "four"),
            ("a", "five"),
        ],
    );
    write(&mut pg, |tx| {
        tx.upsert_link(&LinkWrite::set(ids[0], ids[1], LinkKind::Related, 0.3, T0))?;
        tx.upsert_link(&LinkWrite::set(ids[1], ids[0], LinkKind::Semantic, 0.6, T0))?;
        tx.upsert_link(&LinkWrite::set(ids[1], ids[2], LinkKind::Explicit, 0.5, T0))?;
        tx.upsert_link(&LinkWrite::set(ids[0], ids[3], LinkKind::Related, 0.9, T0))?;
        tx.upsert_link(&LinkWrite::set(
            ids[0],
            ids[4],
            LinkKind::Supersedes,
            1.0,
            T0,
        ))?;
        Ok(())
    })
    .unwrap();
    let mut in_a = active();
    in_a.rooms = Some(vec!["a".into()]);
    let c = pg.candidates(None);
    let mut one = c.links_around(&[ids[0]], 1, &in_a).unwrap();
    one.sort_by_key(|e| (e.a, e.b));
    assert_eq!(one.len(), 1, "{one:?}");
    assert_eq!((one[0].a, one[0].b, one[0].weight), (ids[0], ids[1], 0.6));
    let mut two = c.links_around(&[ids[0]], 2, &in_a).unwrap();
    two.sort_by_key(|e| (e.a, e.b));
    assert_eq!(
        two.iter().map(|e| (e.a, e.b)).collect::<Vec<_>>(),
        vec![(ids[0], ids[1]), (ids[1], ids[2])]
    );
    let everywhere = c.links_around(&[ids[0]], 1, &active()).unwrap();
    assert_eq!(
        everywhere.len(),
        2,
        "room b joins without a room filter: {everywhere:?}"
    );
}

/// Two writers read one row and both change it: under SERIALIZABLE the second fails with
/// 40001, and `write` runs its closure again, so neither increment is lost.
#[test]
fn concurrent_writers_on_one_row_are_retried_not_lost() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let mut pg = db.open();
    let id = seed(&mut pg, &[("a", "counter")])[0];
    let barrier = Arc::new(Barrier::new(2));
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (url, barrier, runs) = (db.url.clone(), barrier.clone(), runs.clone());
            std::thread::spawn(move || {
                let mut b = PgBackend::open(&url).unwrap();
                let mut first = true;
                write(&mut b, |tx| {
                    runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let m = tx.memory(&IdRef::Id(id))?.unwrap();
                    if first {
                        // Both have read the row before either writes it.
                        first = false;
                        barrier.wait();
                    }
                    tx.patch_memory(
                        id,
                        &MemoryPatch {
                            importance: Some(m.importance + 0.1),
                            ..Default::default()
                        },
                    )?;
                    Ok(())
                })
                .expect("the write commits after a retry")
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let m = pg.memory(&IdRef::Id(id)).unwrap().unwrap();
    assert!(
        (m.importance - 0.7).abs() < 1e-9,
        "both increments landed: {}",
        m.importance
    );
    assert!(
        runs.load(std::sync::atomic::Ordering::SeqCst) >= 3,
        "one writer ran again"
    );
}

#[test]
fn a_wrong_url_fails_at_open_naming_the_server_but_not_the_password() {
    // Port 1 on loopback: nothing listens there.
    let e = PgBackend::open("postgres://engram:s3cret-pw@127.0.0.1:1/teamdb").unwrap_err();
    let text = e.to_string();
    assert!(text.contains("127.0.0.1:1/teamdb"), "{text}");
    assert!(!text.contains("s3cret-pw"), "{text}");
    let e = PgBackend::open("postgres://engram:s3cret-pw@127.0.0.1:notaport/db").unwrap_err();
    assert!(!e.to_string().contains("s3cret-pw"), "{e}");
}

#[test]
fn a_dropped_connection_is_a_clear_error_and_the_pool_recovers() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let pg = db.open();
    assert_eq!(pg.live_count(None).unwrap(), 0);
    // Cut every connection to the test database from the server side.
    let cut: i64 = db
        .admin()
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1",
            &[&db.name],
        )
        .unwrap()
        .get(0);
    assert!(cut >= 1);
    // The pool checks a connection before lending it, so the next read either succeeds on
    // a new one or says clearly what happened; the one after it succeeds.
    if let Err(e) = pg.live_count(None) {
        let text = e.to_string();
        assert!(text.contains(pg.target()), "{text}");
    }
    assert_eq!(pg.live_count(None).unwrap(), 0);
}

#[test]
fn a_file_copy_is_refused_with_the_tool_to_use() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let pg = db.open();
    let dir = tempfile::tempdir().unwrap();
    let e = pg
        .copy_to(&dir.path().join("copy.db"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("pg_dump") && e.contains(pg.target()), "{e}");
    assert!(!dir.path().join("copy.db").exists());
}

#[test]
fn a_page_key_of_another_section_is_an_input_error() {
    let Some(admin) = admin_url() else { return };
    let db = TestDb::new(&admin);
    let pg = db.open();
    let link = RowKey::Link(1, 2, "related".into());
    for (section, key) in [
        (Section::Memories, link.clone()),
        (Section::Prompts, link.clone()),
        (Section::Judgments, RowKey::Session(0, "s".into())),
        (Section::Links, RowKey::Id(3)),
        (Section::Sessions, RowKey::Memory(3)),
    ] {
        let e = pg.rows_after(section, Some(&key), 10).unwrap_err();
        assert_eq!(e.field(), Some("after"), "{section:?} {key:?}: {e}");
    }
}
