//! Write-path resolution, validity, judgments and maintenance on a real on-disk store,
//! lexical mode (the hashing-free path every install has). Recall quality with a real
//! model is covered in `crates/engram/tests/semantic.rs`.

use engram_core::memory::IdRef;
use engram_core::{Config, DAY_MS, Kind, Millis, Tier};
use engram_store::maintain::Verdict;
use engram_store::{Mode, RecallRequest, RememberAction, RememberOutcome, RememberRequest, Store};
mod support;
use support::{T0, TestClock};

struct Fixture {
    store: Store,
    clock: TestClock,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let (store, dir) = support::temp_store(Config::default());
        let clock = TestClock::at(T0);
        let store = store.with_clock(clock.clock());
        Fixture {
            store,
            clock,
            _dir: dir,
        }
    }

    fn advance(&self, ms: Millis) {
        self.clock.advance(ms);
    }

    fn now(&self) -> Millis {
        self.clock.now()
    }

    fn put(&mut self, content: &str) -> RememberOutcome {
        self.advance(1000);
        self.store
            .remember(RememberRequest {
                content: content.into(),
                room: Some("app".into()),
                ..Default::default()
            })
            .unwrap()
    }

    fn put_with(&mut self, req: RememberRequest) -> RememberOutcome {
        self.advance(1000);
        self.store
            .remember(RememberRequest {
                room: Some("app".into()),
                ..req
            })
            .unwrap()
    }

    fn recall(&mut self, q: &str) -> Vec<i64> {
        let mut r = RecallRequest::new(q);
        r.room = Some("app".into());
        r.limit = 10;
        r.record_hits = false;
        self.store
            .recall(&r)
            .unwrap()
            .hits
            .iter()
            .map(|h| h.memory.id)
            .collect()
    }

    fn hits(&mut self, q: &str, mode: Mode) -> Vec<engram_store::Hit> {
        let mut r = RecallRequest::new(q);
        r.room = Some("app".into());
        r.limit = 10;
        r.mode = mode;
        r.record_hits = false;
        self.store.recall(&r).unwrap().hits
    }

    fn tier(&self, id: i64) -> Tier {
        self.store.get(&IdRef::Id(id)).unwrap().tier
    }
}

#[test]
fn each_resolution_action() {
    let mut f = Fixture::new();
    let a = f.put("The API uses JWT tokens for authentication.");
    assert_eq!(a.action, RememberAction::Created);

    // An exact repeat, whitespace and case aside.
    let r = f.put("the API uses JWT tokens  for authentication.");
    assert_eq!((r.action, r.id), (RememberAction::Reinforced, a.id));

    // Nearly the same words, nothing new: reinforced.
    let r = f.put("The API uses JWT tokens for its authentication!");
    assert_eq!((r.action, r.id), (RememberAction::Reinforced, a.id));

    // Close, adding information: merged, prior text kept as a revision.
    let m = f.put(
        "The API uses JWT tokens for authentication. Tokens expire after fifteen minutes and refresh silently.",
    );
    assert_eq!((m.action, m.id), (RememberAction::Merged, a.id));
    assert_eq!(m.revision, Some(2));
    let d = f.store.show(&IdRef::Id(a.id)).unwrap();
    assert!(d.memory.content.contains("fifteen minutes"));
    assert_eq!(d.revisions.len(), 1);
    assert_eq!(
        d.revisions[0].content,
        "The API uses JWT tokens for authentication."
    );
    assert_eq!(d.revisions[0].reason, "merge");

    // A contradiction: a new memory supersedes the old one.
    let db = f.put("The project database is PostgreSQL.");
    let s = f.put("We switched from PostgreSQL to SQLite for the project database.");
    assert_eq!(s.action, RememberAction::Superseded);
    assert_eq!(s.touched, vec![db.id]);
    assert_eq!(
        s.conflict.as_ref().unwrap().kind,
        engram_core::contradiction::ConflictKind::ChangeOfState
    );
    let old = f.store.get(&IdRef::Id(db.id)).unwrap();
    assert_eq!(old.tier, Tier::Superseded);
    assert!(old.valid_to.is_some());

    // Unrelated: a new memory.
    let n = f.put("Deploys go out every Tuesday after the standup.");
    assert_eq!(n.action, RememberAction::Created);

    // Topic key: C's upsert, prior text as a revision, revision count in the result.
    let t1 = f.put_with(RememberRequest {
        content: "Auth model: sessions in cookies".into(),
        topic_key: Some("architecture/auth-model".into()),
        kind: Some(Kind::Decision),
        ..Default::default()
    });
    let t2 = f.put_with(RememberRequest {
        content: "Auth model: JWT with refresh tokens".into(),
        topic_key: Some("Architecture/Auth-Model ".into()),
        ..Default::default()
    });
    assert_eq!((t2.action, t2.id), (RememberAction::Updated, t1.id));
    assert_eq!(t2.revision, Some(2));
    let d = f.store.show(&IdRef::Id(t1.id)).unwrap();
    assert_eq!(d.memory.content, "Auth model: JWT with refresh tokens");
    assert_eq!(
        d.memory.kind,
        Kind::Fact,
        "the new write's kind wins, as in C"
    );
    assert_eq!(d.revisions[0].content, "Auth model: sessions in cookies");
}

#[test]
fn resolution_can_be_turned_off_per_write() {
    let mut f = Fixture::new();
    let a = f.put("The retry budget is five attempts.");
    let b = f.put_with(RememberRequest {
        content: "The retry budget is three attempts.".into(),
        resolve: Some(false),
        ..Default::default()
    });
    assert_eq!(b.action, RememberAction::Created);
    assert_eq!(f.tier(a.id), Tier::Active);
}

/// Near-identical pairs about two different subjects (people, offices, projects, builds,
/// tickets): neither is superseded, merged or reinforced into the other, whatever cue the
/// new one carries, and the write says what it read.
#[test]
fn different_subjects_are_never_one_thing_changing() {
    let cases: &[(&str, &str)] = &[
        (
            "Alice prefers tabs for indentation.",
            "Bob prefers spaces for indentation.",
        ),
        (
            "Alice likes dark mode in the terminal.",
            "Bob doesn't like dark mode in the terminal.",
        ),
        (
            "OPS-4102: the nightly export job is paused while the bucket migrates.",
            "OPS-4101: the nightly export job is no longer paused while the bucket migrates.",
        ),
        (
            "OPS-4102 the staging deploy waits for manual approval.",
            "OPS-4101 the staging deploy no longer waits for manual approval.",
        ),
        (
            "The Berlin office uses Slack as its chat tool.",
            "The Tokyo office uses Microsoft Teams as its chat tool.",
        ),
        (
            "Build 2026.11.4 is signed with the staging key.",
            "Build 2026.11.5 is no longer signed with the staging key.",
        ),
        (
            "Project Falcon uses PostgreSQL for its database.",
            "Project Osprey uses MySQL for its database.",
        ),
        (
            "Project Falcon deploys to Kubernetes.",
            "Project Osprey switched from Kubernetes to Nomad.",
        ),
        (
            "Alice is on call this week for the payments service.",
            "Bob is not on call this week for the payments service.",
        ),
        ("アリスのエディタはVimです。", "ボブのエディタはEmacsです。"),
        (
            "ベルリン支社のチャットツールはSlackです。",
            "東京支社のチャットツールはTeamsです。",
        ),
        (
            "柏林办公室的聊天工具是Slack。",
            "东京办公室的聊天工具是Teams。",
        ),
    ];
    for (old, new) in cases {
        let mut f = Fixture::new();
        let o = f.put(old);
        let n = f.put(new);
        assert_eq!(
            n.action,
            RememberAction::Created,
            "{old:?} → {new:?}: {n:?}"
        );
        assert_ne!(n.id, o.id);
        assert_eq!(f.tier(o.id), Tier::Active, "{old:?} → {new:?}");
        let why = n.why.clone().unwrap_or_default();
        assert!(
            why.contains("about another subject") || why.contains("its identifiers differ"),
            "{new:?}: {why}"
        );
        // `explain` shows the same reading on the new memory's create event.
        let d = f.store.show(&IdRef::Id(n.id)).unwrap();
        assert!(
            d.recent_events
                .iter()
                .any(|e| e.detail.as_deref().is_some_and(|x| x.contains(" ≠ "))),
            "{new:?}: {:?}",
            d.recent_events
        );
    }
    // The same subject changing is still an update, and a thousands separator is part of
    // its number: 1,250 → 1,520, not 250 → 520.
    let mut f = Fixture::new();
    let o = f.put("The monthly hosting bill is 1,250 EUR.");
    let n = f.put("The monthly hosting bill is 1,520 EUR.");
    assert_eq!(n.action, RememberAction::Superseded, "{n:?}");
    assert_eq!(n.conflict.unwrap().cue, "1250 → 1520");
    assert_eq!(f.tier(o.id), Tier::Superseded);
    let o = f.put("Alice's preferred editor is Vim.");
    let n = f.put("Alice's preferred editor is Helix.");
    assert_eq!(n.action, RememberAction::Superseded, "{n:?}");
    assert_eq!(n.touched, vec![o.id]);
    assert!(
        n.why.unwrap().contains("alice · editor · helix"),
        "the write says what it read"
    );
}

/// Each contradiction cue, through the store, in three languages.
#[test]
fn contradictions_supersede_in_three_languages() {
    let cases: &[(&str, &str)] = &[
        (
            "We deploy the app with Heroku.",
            "We moved away from Heroku; the app deploys with Fly.io now.",
        ),
        (
            "Use npm to install packages.",
            "Use pnpm instead of npm to install packages.",
        ),
        (
            "The team uses Jenkins for CI.",
            "We replaced Jenkins with GitHub Actions for CI.",
        ),
        (
            "I use Vim for editing code.",
            "I stopped using Vim for editing code.",
        ),
        (
            "Tests run on Python 3.9.",
            "Tests no longer run on Python 3.9.",
        ),
        (
            "I like dark mode in the editor.",
            "I don't like dark mode in the editor.",
        ),
        ("I prefer tabs over spaces.", "I prefer spaces over tabs."),
        (
            "The API listens on port 8080.",
            "The API listens on port 9090.",
        ),
        (
            "データベースはPostgreSQLを使っている",
            "データベースをPostgreSQLからSQLiteに切り替えた",
        ),
        ("エディタはVimを使っている", "エディタのVimをやめた"),
        ("ダークモードが好き", "ダークモードは好きではない"),
        (
            "项目数据库使用PostgreSQL",
            "项目数据库从PostgreSQL换成了SQLite",
        ),
        ("我用Vim写代码", "我不再用Vim写代码"),
        ("我喜欢深色主题", "我不喜欢深色主题"),
    ];
    for (old, new) in cases {
        let mut f = Fixture::new();
        let o = f.put(old);
        let n = f.put(new);
        assert_eq!(
            n.action,
            RememberAction::Superseded,
            "{old:?} → {new:?}: {n:?}"
        );
        assert_eq!(f.tier(o.id), Tier::Superseded, "{old:?}");
    }
}

#[test]
fn latest_truth_ranks_first_and_as_of_sees_the_past() {
    let mut f = Fixture::new();
    f.put("Logging goes to stdout in JSON.");
    let pg = f.put("The project's database is PostgreSQL 15.");
    let before_switch = f.now();
    f.advance(DAY_MS);
    let sq = f.put("We switched from PostgreSQL to SQLite for the project's database.");
    assert_eq!(sq.action, RememberAction::Superseded);
    for q in [
        "what database does the project use",
        "project database",
        "PostgreSQL",
    ] {
        let ids = f.recall(q);
        assert_eq!(ids.first(), Some(&sq.id), "{q}: {ids:?}");
        assert!(!ids.contains(&pg.id), "superseded stays out of fast: {q}");
    }
    // Asked about the past, the old truth is what was valid.
    let mut r = RecallRequest::new("project database");
    r.room = Some("app".into());
    r.as_of = Some(before_switch);
    r.record_hits = false;
    let hits = f.store.recall(&r).unwrap().hits;
    assert_eq!(hits.first().map(|h| h.memory.id), Some(pg.id));
    assert!(hits.iter().all(|h| h.memory.id != sq.id));
    assert_eq!(hits[0].superseded_by, Some(sq.id));
    // include_superseded shows both, the old one naming its successor.
    let mut r = RecallRequest::new("project database");
    r.room = Some("app".into());
    r.include_superseded = true;
    let hits = f.store.recall(&r).unwrap().hits;
    let old = hits.iter().find(|h| h.memory.id == pg.id).unwrap();
    assert_eq!(old.superseded_by, Some(sq.id));
    // Deep recall names the successor too.
    let mut r = RecallRequest::new("PostgreSQL 15");
    r.room = Some("app".into());
    r.mode = Mode::Deep;
    let hits = f.store.recall(&r).unwrap().hits;
    assert!(
        hits.iter()
            .any(|h| h.memory.id == pg.id && h.superseded_by == Some(sq.id))
    );
}

/// Issue 12 item 3: when the write path left both memories active (it stored the newer
/// beside the older), recall still shows the newer above the older, in every mode, with
/// a query naming either value or neither, in three languages; both name each other in
/// `conflicts_with`, and nothing is hidden: the older is still returned, and as of before
/// the newer it is the one answer.
#[test]
fn the_newer_of_two_active_memories_of_one_slot_ranks_first() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "The project uses Jest for tests; the suite lives in __tests__ folders and runs in CI with coverage reports.",
            "The project uses Vitest for tests.",
            &[
                "jest tests suite coverage reports",
                "vitest tests",
                "project tests",
            ],
        ),
        (
            "My editor is Vim, with a long vimrc full of plugins and custom keymaps.",
            "My editor is now Helix, after I switched this spring.",
            &["vim editor plugins keymaps", "helix editor", "editor"],
        ),
        (
            "プロジェクトのテストはJestです。設定ファイルはリポジトリの直下にあり、継続的インテグレーションでカバレッジの報告も毎回自動で作成しています。失敗した場合は担当者へ通知が届き、翌朝の会議で原因を確認します。",
            "プロジェクトのテストはVitestです。",
            &[
                "Jest テスト カバレッジ",
                "Vitest テスト",
                "プロジェクトのテスト",
            ],
        ),
        (
            "项目的测试框架是Jest。配置文件放在仓库根目录，持续集成每次都会自动生成覆盖率报告并上传到看板。如果失败，负责人会收到通知，第二天早上开会确认原因。",
            "项目的测试框架是Vitest。",
            &[
                "Jest 测试框架 覆盖率报告",
                "Vitest 测试框架",
                "项目的测试框架",
            ],
        ),
    ];
    for (old, new, queries) in cases {
        let mut f = Fixture::new();
        let o = f.put(old);
        f.advance(DAY_MS);
        let before_new = f.now();
        let n = f.put(new);
        assert_eq!(n.action, RememberAction::Created, "{new}: {n:?}");
        assert_eq!(f.tier(o.id), Tier::Active, "{old}");
        for q in *queries {
            for mode in [Mode::Fast, Mode::Deep, Mode::Exhaustive] {
                let hits = f.hits(q, mode);
                let at = |id: i64| hits.iter().position(|h| h.memory.id == id);
                let shown: Vec<(i64, &[i64])> = hits
                    .iter()
                    .map(|h| (h.memory.id, h.conflicts_with.as_slice()))
                    .collect();
                let (Some(pn), Some(po)) = (at(n.id), at(o.id)) else {
                    panic!("{q} ({mode:?}): both are returned: {shown:?}");
                };
                assert!(pn < po, "{q} ({mode:?}): the newer first: {shown:?}");
                assert_eq!(hits[pn].conflicts_with, vec![o.id], "{q} ({mode:?})");
                assert_eq!(hits[po].conflicts_with, vec![n.id], "{q} ({mode:?})");
            }
        }
        // What was true before the newer was written: the older alone, no conflict.
        let mut r = RecallRequest::new(queries[0]);
        r.room = Some("app".into());
        r.as_of = Some(before_new);
        r.record_hits = false;
        let hits = f.store.recall(&r).unwrap().hits;
        assert_eq!(hits.first().map(|h| h.memory.id), Some(o.id), "{old}");
        assert!(
            hits.iter()
                .all(|h| h.memory.id != n.id && h.conflicts_with.is_empty())
        );
    }
}

#[test]
fn candidates_are_judged_and_supersedes_retires_the_old_memory() {
    let mut f = Fixture::new();
    let a = f.put("Releases are cut from the main branch on Fridays.");
    let b = f.put("Hotfix releases are cut from release branches.");
    assert_eq!(b.action, RememberAction::Created);
    let c = b
        .candidates
        .iter()
        .find(|c| c.id == a.id)
        .expect("the related memory is offered");
    // A bad verdict is refused and changes nothing.
    let err = f
        .store
        .judge(Verdict {
            judgment_id: c.judgment_id.clone(),
            relation: "maybe".into(),
            ..Default::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("relation"), "{err}");
    let err = f
        .store
        .judge(Verdict {
            judgment_id: c.judgment_id.clone(),
            relation: "related".into(),
            confidence: Some(1.5),
            ..Default::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("confidence"), "{err}");
    assert!(
        f.store
            .judge(Verdict {
                judgment_id: "rel-0000000000000000".into(),
                relation: "related".into(),
                ..Default::default()
            })
            .is_err()
    );
    let j = f
        .store
        .judge(Verdict {
            judgment_id: c.judgment_id.clone(),
            relation: "supersedes".into(),
            reason: Some("hotfix policy replaces the old one".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(j.status, "judged");
    assert_eq!(f.tier(a.id), Tier::Superseded);
    let d = f.store.show(&IdRef::Id(a.id)).unwrap();
    assert_eq!(d.superseded_by, Some(b.id));
    assert!(d.tier_reason.contains("superseded by"), "{}", d.tier_reason);
}

#[test]
fn redaction_before_storing_and_indexing() {
    let mut f = Fixture::new();
    let out = f.put(
        "Staging DB is postgres://app:s3cr3t-pw@db.internal/app and the key is sk-proj-abcdefghijklmnopqrstuvwxyz <private>home address</private>",
    );
    let kinds: Vec<&str> = out.redacted.iter().map(|r| r.kind).collect();
    assert!(kinds.contains(&"url_password"), "{kinds:?}");
    assert!(kinds.contains(&"openai_key"), "{kinds:?}");
    assert!(kinds.contains(&"private_span"), "{kinds:?}");
    let m = f.store.get(&IdRef::Id(out.id)).unwrap();
    assert!(!m.content.contains("s3cr3t"));
    assert!(!m.content.contains("sk-proj"));
    assert!(!m.content.contains("home address"));
    assert!(
        m.content
            .contains("postgres://app:[REDACTED]@db.internal/app")
    );
    assert!(f.recall("s3cr3t").is_empty());
    // Only secrets: nothing left to store is an error, not an empty memory.
    let err = f
        .store
        .remember(RememberRequest {
            content: "<private>all of it</private>".into(),
            room: Some("app".into()),
            ..Default::default()
        })
        .map(|o| o.action);
    assert!(err.is_ok(), "a redaction mark is still content: {err:?}");
}

#[test]
fn maintenance_archives_faded_memories_unless_a_strong_neighbour_protects_them() {
    let mut f = Fixture::new();
    let lone = f.put("The staging cluster runs in eu-west-1.");
    let anchor = f.put("Feature flags live in LaunchDarkly.");
    let chained = f.put_with(RememberRequest {
        content: "Flag names use kebab case with a team prefix.".into(),
        related: vec![IdRef::Id(anchor.id)],
        ..Default::default()
    });
    f.advance(200 * DAY_MS);
    // The anchor is used; the others are not.
    f.store
        .reinforce(&[IdRef::Id(anchor.id)], 1.0, None)
        .unwrap();
    let preview = f.store.maintain(true).unwrap();
    assert!(preview.archived.iter().any(|a| a.id == lone.id));
    assert_eq!(f.tier(lone.id), Tier::Active, "a dry run changes nothing");
    let r = f.store.maintain(false).unwrap();
    assert!(r.archived.iter().any(|a| a.id == lone.id), "{r:?}");
    assert!(r.protected.contains(&chained.id), "{r:?}");
    assert_eq!(f.tier(lone.id), Tier::Archived);
    assert_eq!(f.tier(chained.id), Tier::Active);
    assert_eq!(f.tier(anchor.id), Tier::Active);
    let d = f.store.show(&IdRef::Id(lone.id)).unwrap();
    assert!(
        d.tier_reason.contains("archived by maintenance"),
        "{}",
        d.tier_reason
    );
    // Archived is never lost: deep recall finds it.
    let mut q = RecallRequest::new("staging cluster region");
    q.room = Some("app".into());
    q.mode = Mode::Deep;
    assert!(
        f.store
            .recall(&q)
            .unwrap()
            .hits
            .iter()
            .any(|h| h.memory.id == lone.id)
    );
    assert_eq!(f.store.maintenance_log(10).unwrap().len(), 2);
    assert!(f.store.last_maintenance().unwrap().is_some());
    assert!(!f.store.maintenance_due().unwrap());
}

#[test]
fn consolidation_folds_clusters_without_losing_anything() {
    let mut f = Fixture::new();
    let raw = |f: &mut Fixture, c: &str, imp: f64| {
        f.put_with(RememberRequest {
            content: c.into(),
            importance: Some(imp),
            resolve: Some(false),
            ..Default::default()
        })
        .id
    };
    let a = raw(&mut f, "Run the linter before every commit to main.", 0.5);
    let b = raw(
        &mut f,
        "Run the linter before every commit to main, with autofix enabled.",
        0.8,
    );
    let c = raw(&mut f, "Run the linter before every commit to main!", 0.4);
    let other = raw(&mut f, "The cache expires after ten minutes.", 0.5);
    let r = f.store.maintain(false).unwrap();
    assert_eq!(r.consolidated.len(), 1, "{r:?}");
    let cl = &r.consolidated[0];
    assert_eq!(cl.keeper, b, "the most important member keeps: {r:?}");
    let mut archived = cl.archived.clone();
    archived.sort();
    assert_eq!(archived, vec![a, c]);
    assert_eq!(f.tier(other), Tier::Active);
    for id in [a, c] {
        assert_eq!(f.tier(id), Tier::Archived);
        // Reachable in deep mode, and linked from the keeper.
        let mut q = RecallRequest::new("linter commit");
        q.room = Some("app".into());
        q.mode = Mode::Deep;
        let hits = f.store.recall(&q).unwrap().hits;
        assert!(hits.iter().any(|h| h.memory.id == id), "#{id} lost");
        let d = f.store.show(&IdRef::Id(b)).unwrap();
        assert!(
            d.links
                .iter()
                .any(|l| l.dst == id && l.kind == engram_core::LinkKind::DerivedFrom)
        );
    }
    assert_eq!(
        f.store.stats().unwrap().total_memories,
        4,
        "nothing deleted"
    );
}

#[test]
fn consolidation_keeps_look_alikes_with_different_identifiers_apart() {
    let mut f = Fixture::new();
    // Close enough to cluster by words alone (a model puts them closer still), so only the
    // identifier rule keeps them apart.
    let config = Config {
        consolidate_lexical: 0.3,
        ..Config::default()
    };
    let dir = f._dir.path().join("look-alikes");
    std::fs::create_dir_all(&dir).unwrap();
    f.store = support::open_in(&dir, config);
    let raw = |f: &mut Fixture, c: &str| {
        f.put_with(RememberRequest {
            content: c.into(),
            resolve: Some(false),
            ..Default::default()
        })
        .id
    };
    let a = raw(
        &mut f,
        "Release v1.4.2 of the billing service shipped to production at commit 3f9a2c1",
    );
    let b = raw(
        &mut f,
        "Release v1.4.3 of the billing service shipped to production at commit 8b7d0e4",
    );
    let r = f.store.maintain(false).unwrap();
    assert!(r.consolidated.is_empty(), "{r:?}");
    assert_eq!(f.tier(a), Tier::Active);
    assert_eq!(f.tier(b), Tier::Active);
}

#[test]
fn review_dates_follow_kind() {
    let mut f = Fixture::new();
    let d = f.put_with(RememberRequest {
        content: "We chose Rust for the engine.".into(),
        kind: Some(Kind::Decision),
        ..Default::default()
    });
    let p = f.put_with(RememberRequest {
        content: "The user prefers short answers.".into(),
        kind: Some(Kind::Preference),
        ..Default::default()
    });
    f.put("Ports above 1024 need no root.");
    assert!(f.store.review_list(None, 10).unwrap().is_empty());
    f.advance(100 * DAY_MS);
    let due: Vec<i64> = f
        .store
        .review_list(None, 10)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(due, vec![p.id]);
    f.advance(100 * DAY_MS);
    let due: Vec<i64> = f
        .store
        .review_list(None, 10)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(due, vec![p.id, d.id]);
    let next = f.store.mark_reviewed(&IdRef::Id(p.id)).unwrap().unwrap();
    assert!(next > f.now());
    assert_eq!(f.store.review_list(None, 10).unwrap().len(), 1);
}

#[test]
fn candidate_clusters_for_the_agent() {
    let mut f = Fixture::new();
    let ep = |f: &mut Fixture, c: &str| {
        f.put_with(RememberRequest {
            content: c.into(),
            kind: Some(Kind::Episode),
            ..Default::default()
        })
        .id
    };
    let e1 = ep(
        &mut f,
        "Debugged the flaky login test; the fixture leaked a session.",
    );
    let e2 = ep(
        &mut f,
        "Debugged the flaky login test again; the fixture leaked a session cookie.",
    );
    ep(&mut f, "Wrote the release notes for version two.");
    assert!(
        f.store.consolidation_candidates(None).unwrap().is_empty(),
        "too recent"
    );
    f.advance(15 * DAY_MS);
    let c = f.store.consolidation_candidates(None).unwrap();
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].ids, vec![e1, e2]);
    let summary = f.put("Flaky login tests come from fixtures leaking sessions.");
    let done = f
        .store
        .mark_consolidated(&[IdRef::Id(e1), IdRef::Id(e2)], &IdRef::Id(summary.id))
        .unwrap();
    assert_eq!(done, vec![e1, e2]);
    assert_eq!(f.tier(e1), Tier::Archived);
    assert!(f.store.consolidation_candidates(None).unwrap().is_empty());
}

/// B's dated session episodes of one recurring task cluster by words alone: a date is
/// not an identifier that makes two episodes two things (tester-b: without a model B's
/// consolidation cycle never started).
#[test]
fn dated_episodes_of_one_task_cluster_without_a_model() {
    let mut f = Fixture::new();
    let ids: Vec<i64> = ["2026-10-11", "2026-10-12", "2026-10-14"]
        .iter()
        .enumerate()
        .map(|(i, d)| {
            f.put_with(RememberRequest {
                // A weekly task: its release number moves too (tester-b).
                content: format!(
                    "Session ({d}, webapp): Released v1.2.{i}, rotated the staging TLS certificate and restarted the ingress."
                ),
                kind: Some(Kind::Episode),
                resolve: Some(false),
                ..Default::default()
            })
            .id
        })
        .collect();
    f.advance(45 * DAY_MS);
    let c = f.store.consolidation_candidates(None).unwrap();
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].ids, ids);
    // B's `contents`: each whole text, for the agent to summarise.
    assert!(
        c[0].contents[0].ends_with("restarted the ingress."),
        "{c:?}"
    );
}

/// Two statements of one slot with other values are never folded into one, and neither
/// is a pair the user took apart with `unsupersede`: maintenance leaves both active.
#[test]
fn consolidation_never_folds_a_slots_two_values_or_an_undone_supersession() {
    let mut f = Fixture::new();
    let config = Config {
        consolidate_lexical: 0.3,
        ..Config::default()
    };
    let dir = f._dir.path().join("slots");
    std::fs::create_dir_all(&dir).unwrap();
    f.store = support::open_in(&dir, config);
    let vim = f.put("My editor is Vim").id;
    let helix = f.put("My editor is Helix").id;
    assert_eq!(
        f.tier(vim),
        Tier::Superseded,
        "the write path supersedes the old value"
    );
    f.store.unsupersede(&IdRef::Id(vim)).unwrap();
    assert_eq!(f.tier(vim), Tier::Active);
    let raw = |f: &mut Fixture, c: &str| {
        f.put_with(RememberRequest {
            content: c.into(),
            resolve: Some(false),
            ..Default::default()
        })
        .id
    };
    let tabs = raw(&mut f, "The billing service uses Jest for its tests");
    let spaces = raw(&mut f, "The billing service uses Vitest for its tests");
    let r = f.store.maintain(false).unwrap();
    assert!(r.consolidated.is_empty(), "{r:?}");
    for id in [vim, helix, tabs, spaces] {
        assert_eq!(f.tier(id), Tier::Active, "#{id}");
    }
}
