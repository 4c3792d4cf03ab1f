//! The engine on a real on-disk store: recall modes, rooms, the write operations and their
//! round trips, full-text edge cases, CJK queries, and refused input.

use engram_core::memory::IdRef;
use engram_core::{Config, DAY_MS, Kind, LinkKind, Millis, Tier};
use engram_store::{Error, Mode, RecallRequest, RememberAction, RememberRequest, Store, Via};
mod support;
use support::{T0, TestClock};

/// A store in a temporary directory with a clock the test can move.
struct Fixture {
    store: Store,
    clock: TestClock,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self::with_config(Config::default())
    }

    /// Every distinct text becomes its own memory: for tests about ranking and scale whose
    /// synthetic texts would otherwise merge or supersede each other.
    fn plain() -> Self {
        Self::with_config(Config {
            resolve: false,
            ..Config::default()
        })
    }

    fn with_config(config: Config) -> Self {
        let (store, dir) = support::temp_store(config);
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

    fn remember(&mut self, content: &str, room: &str) -> i64 {
        self.remember_with(RememberRequest {
            content: content.into(),
            room: Some(room.into()),
            ..Default::default()
        })
    }

    fn remember_with(&mut self, req: RememberRequest) -> i64 {
        self.store.remember(req).unwrap().id
    }

    fn recall(&mut self, query: &str, room: &str, mode: Mode) -> engram_store::RecallResult {
        let mut r = RecallRequest::new(query);
        r.room = Some(room.into());
        r.mode = mode;
        r.limit = 10;
        self.store.recall(&r).unwrap()
    }

    fn ids(&mut self, query: &str, room: &str, mode: Mode) -> Vec<i64> {
        self.recall(query, room, mode)
            .hits
            .iter()
            .map(|h| h.memory.id)
            .collect()
    }

    fn count(&self) -> u64 {
        self.store.stats().unwrap().total_memories
    }
}

#[test]
fn remember_stores_every_field_and_recall_returns_its_components() {
    let mut f = Fixture::new();
    let out = f
        .store
        .remember(RememberRequest {
            content: "Deploys go through the staging cluster first".into(),
            title: Some("Deploy rule".into()),
            kind: Some(Kind::Decision),
            importance: Some(0.8),
            tags: vec!["deploy".into(), "ops".into()],
            room: Some("App".into()),
            topic_key: Some("decision/deploy".into()),
            pinned: true,
            source: Some("claude-code".into()),
            session_id: Some("s1".into()),
            metadata: Some(serde_json::json!({"ticket": 7})),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(out.action, RememberAction::Created);
    assert_eq!(out.room, "app", "rooms are normalised");
    let m = f.store.get(&IdRef::Id(out.id)).unwrap();
    assert_eq!(m.uid.len(), 26);
    assert_eq!(
        m.get_fields(),
        (
            "Deploy rule",
            Kind::Decision,
            0.8,
            "app",
            "decision/deploy",
            true,
            Tier::Active,
            "claude-code",
            "s1"
        )
    );
    assert_eq!(m.tags, vec!["deploy", "ops"]);
    assert_eq!(m.metadata["ticket"], 7);
    assert_eq!(
        (m.created_at, m.updated_at, m.valid_from, m.valid_to),
        (T0, T0, T0, None)
    );
    assert_eq!(f.store.get(&IdRef::Uid(m.uid.clone())).unwrap().id, m.id);

    let r = f.recall("staging deploys", "app", Mode::Fast);
    let h = &r.hits[0];
    assert_eq!(h.memory.id, out.id);
    assert!(h.relevance > 0.0 && h.activation > 0.9 && h.score > 0.0);
    assert_eq!(h.via, Via::Direct);
    // Tags and titles are searchable too.
    assert_eq!(f.ids("ops", "app", Mode::Fast), vec![out.id]);
    assert_eq!(f.ids("rule", "app", Mode::Fast), vec![out.id]);
}

trait Fields {
    fn get_fields(&self) -> (&str, Kind, f64, &str, &str, bool, Tier, &str, &str);
}

impl Fields for engram_core::Memory {
    fn get_fields(&self) -> (&str, Kind, f64, &str, &str, bool, Tier, &str, &str) {
        (
            self.title.as_deref().unwrap_or(""),
            self.kind,
            self.importance,
            &self.room,
            self.topic_key.as_deref().unwrap_or(""),
            self.pinned,
            self.tier,
            &self.source,
            self.session_id.as_deref().unwrap_or(""),
        )
    }
}

#[test]
fn exact_duplicates_reinforce_instead_of_storing_twice() {
    let mut f = Fixture::new();
    let a = f.remember("The API uses port 8080", "app");
    let again = f
        .store
        .remember(RememberRequest {
            content: "  the api USES port 8080 ".into(),
            room: Some("app".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(again.action, RememberAction::Reinforced);
    assert_eq!(again.id, a);
    assert_eq!(f.count(), 1);
    let d = f.store.show(&IdRef::Id(a)).unwrap();
    assert_eq!(d.event_counts.get("reinforce"), Some(&1));
    // The same text in another room is another memory.
    let b = f.remember("The API uses port 8080", "other");
    assert_ne!(a, b);
}

#[test]
fn recall_logs_hit_events_and_can_be_told_not_to() {
    let mut f = Fixture::new();
    let a = f.remember("Redis caches the session tokens", "app");
    f.recall("redis tokens", "app", Mode::Fast);
    assert_eq!(
        f.store
            .show(&IdRef::Id(a))
            .unwrap()
            .event_counts
            .get("recall_hit"),
        Some(&1)
    );
    let mut r = RecallRequest::new("redis");
    r.room = Some("app".into());
    r.record_hits = false;
    f.store.recall(&r).unwrap();
    let d = f.store.show(&IdRef::Id(a)).unwrap();
    assert_eq!(d.event_counts.get("recall_hit"), Some(&1));
    let hit = d
        .recent_events
        .iter()
        .find(|e| e.kind == "recall_hit")
        .unwrap();
    assert!((hit.weight - 0.3).abs() < 1e-12);
}

#[test]
fn rooms_filter_recall_with_common_and_star() {
    let mut f = Fixture::new();
    let app = f.remember("kafka topic naming uses dots", "app");
    let common = f.remember("kafka brokers need three nodes", "common");
    let other = f.remember("kafka is not used here", "other");
    let mut ids = f.ids("kafka", "app", Mode::Fast);
    ids.sort();
    assert_eq!(ids, vec![app, common]);
    assert_eq!(f.ids("kafka", "common", Mode::Fast), vec![common]);
    let mut all = f.ids("kafka", "*", Mode::Fast);
    all.sort();
    assert_eq!(all, vec![app, common, other]);
    // `*` is a filter, not a room a memory can live in.
    let e = f
        .store
        .remember(RememberRequest {
            content: "x".into(),
            room: Some("*".into()),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.field(), Some("room"));
}

#[test]
fn kind_filter_and_fast_mode_leaves_episodes_out() {
    let mut f = Fixture::new();
    let fact = f.remember("The linter runs on every commit", "app");
    let ep = f.remember_with(RememberRequest {
        content: "Session: we fixed the linter on commit hooks".into(),
        kind: Some(Kind::Episode),
        room: Some("app".into()),
        ..Default::default()
    });
    assert_eq!(f.ids("linter commit", "app", Mode::Fast), vec![fact]);
    let mut r = RecallRequest::new("linter commit");
    r.room = Some("app".into());
    r.kinds = vec![Kind::Episode];
    assert_eq!(
        f.store
            .recall(&r)
            .unwrap()
            .hits
            .iter()
            .map(|h| h.memory.id)
            .collect::<Vec<_>>(),
        vec![ep]
    );
    let deep = f.ids("linter commit", "app", Mode::Deep);
    assert!(deep.contains(&ep) && deep.contains(&fact));
}

#[test]
fn correct_supersedes_and_deep_names_the_successor() {
    let mut f = Fixture::new();
    let old = f.remember_with(RememberRequest {
        content: "The staging database is MySQL".into(),
        kind: Some(Kind::Fact),
        importance: Some(0.4),
        tags: vec!["db".into()],
        room: Some("app".into()),
        ..Default::default()
    });
    f.advance(1000);
    let c = f
        .store
        .correct(
            &IdRef::Id(old),
            "The staging database is PostgreSQL",
            "migrated in March",
            Some("cli"),
        )
        .unwrap();
    assert_eq!(c.old_id, old);
    let new = f.store.get(&IdRef::Id(c.new_id)).unwrap();
    let prev = f.store.get(&IdRef::Id(old)).unwrap();
    assert_eq!(prev.tier, Tier::Superseded);
    assert_eq!(prev.valid_to, Some(T0 + 1000));
    // Only the corrected text is content: the old text would match searches for the old
    // term and show in every briefing. The record is metadata, the event and the link.
    assert_eq!(new.content, "The staging database is PostgreSQL");
    assert_eq!(new.metadata["corrects"], prev.uid.as_str());
    assert_eq!(new.metadata["reason"], "migrated in March");
    let detail = f.store.show(&IdRef::Id(c.new_id)).unwrap();
    assert!(
        serde_json::to_string(&detail)
            .unwrap()
            .contains("supersedes"),
        "the link to the old memory is a real one"
    );
    assert!(!f.ids("MySQL", "app", Mode::Fast).contains(&c.new_id));
    assert!(
        (new.importance - 0.7).abs() < 1e-12,
        "importance raised to the correction minimum"
    );
    assert_eq!(new.tags, vec!["db", "correction"]);
    assert_eq!((new.kind, new.room.as_str()), (Kind::Fact, "app"));

    // Fast recall returns only what is valid now.
    assert_eq!(f.ids("staging database", "app", Mode::Fast), vec![c.new_id]);
    // Deep recall also finds the superseded memory and names its successor.
    let deep = f.recall("staging database MySQL", "app", Mode::Deep);
    let h = deep
        .hits
        .iter()
        .find(|h| h.memory.id == old)
        .expect("superseded hit in deep mode");
    assert_eq!(h.superseded_by, Some(c.new_id));
    assert!(
        h.note
            .as_deref()
            .unwrap()
            .contains(&format!("#{}", c.new_id))
    );
    // The old text matches "MySQL" better, yet the successor is shown first.
    let at = |id: i64| deep.hits.iter().position(|h| h.memory.id == id);
    assert!(
        at(c.new_id).is_some_and(|n| Some(n) < at(old)),
        "{:?}",
        deep.hits
    );
    let d = f.store.show(&IdRef::Id(old)).unwrap();
    assert_eq!(d.superseded_by, Some(c.new_id));
    assert!(
        d.links
            .iter()
            .any(|l| l.kind == LinkKind::Supersedes && l.src == c.new_id && l.dst == old)
    );
}

#[test]
fn a_correction_that_changes_nothing_is_refused_and_retires_nothing() {
    let mut f = Fixture::new();
    let id = f.remember("Deploys go through ArgoCD", "app");
    // The web UI's form starts from the current text: submitting it unchanged must not
    // replace a true memory with a copy of itself.
    let e = f
        .store
        .correct(
            &IdRef::Id(id),
            "  deploys go through ArgoCD ",
            "",
            Some("ui"),
        )
        .unwrap_err();
    assert!(e.to_string().contains("content"), "{e}");
    assert_eq!(f.store.get(&IdRef::Id(id)).unwrap().tier, Tier::Active);
}

#[test]
fn forget_restore_purge_round_trip() {
    let mut f = Fixture::new();
    let a = f.remember("The build cache lives in /var/cache/ci", "app");
    let t = f.store.forget(&IdRef::Id(a)).unwrap();
    assert_eq!((t.from, t.to), (Tier::Active, Tier::Trash));
    assert!(f.ids("build cache", "app", Mode::Fast).is_empty());
    assert!(
        f.ids("build cache", "app", Mode::Exhaustive).is_empty(),
        "the trash is never searched"
    );
    assert_eq!(f.count(), 1, "forgotten memories stay in the store");
    assert!(f.store.forget(&IdRef::Id(a)).is_err());

    let r = f.store.restore(&IdRef::Id(a)).unwrap();
    assert_eq!(r.to, Tier::Active);
    assert_eq!(f.ids("build cache", "app", Mode::Fast), vec![a]);
    assert!(
        f.store.restore(&IdRef::Id(a)).is_err(),
        "nothing to restore"
    );

    let e = f.store.purge(&IdRef::Id(a), false).unwrap_err();
    assert_eq!(e.field(), Some("id"));
    assert!(e.to_string().contains("forget it first"));
    f.store.forget(&IdRef::Id(a)).unwrap();
    let p = f.store.purge(&IdRef::Id(a), false).unwrap();
    assert!(p.events_removed >= 2);
    assert_eq!(f.count(), 0);
    assert!(matches!(
        f.store.get(&IdRef::Id(a)),
        Err(Error::NotFound { .. })
    ));
    assert!(
        f.ids("build cache", "*", Mode::Exhaustive).is_empty(),
        "purge leaves no index rows behind"
    );

    // A superseded memory restored from the trash goes back to superseded, not active.
    let old = f.remember("Tabs are two spaces wide", "app");
    f.store
        .correct(
            &IdRef::Id(old),
            "Tabs are four spaces wide",
            "style guide",
            None,
        )
        .unwrap();
    f.store.forget(&IdRef::Id(old)).unwrap();
    assert_eq!(
        f.store.restore(&IdRef::Id(old)).unwrap().to,
        Tier::Superseded
    );
}

#[test]
fn reinforce_weights_events_and_builds_co_recall_links() {
    let mut f = Fixture::new();
    let a = f.remember("Use ripgrep for searching code", "app");
    let b = f.remember("Prefer fd over find", "app");
    let out = f
        .store
        .reinforce(&[IdRef::Id(a), IdRef::Id(b)], 9.0, Some("s"))
        .unwrap();
    assert_eq!(out.weight, 3.0, "strength clamps at 3.0");
    assert_eq!(out.co_recall_links, vec![[a, b]]);
    for _ in 0..12 {
        f.store
            .reinforce(&[IdRef::Id(a), IdRef::Id(b)], 0.0, None)
            .unwrap();
    }
    let d = f.store.show(&IdRef::Id(a)).unwrap();
    let link = d
        .links
        .iter()
        .find(|l| l.kind == LinkKind::CoRecall && l.src == a)
        .unwrap();
    assert!(
        (link.weight - 1.0).abs() < 1e-9,
        "co-recall weight caps at 1.0: {}",
        link.weight
    );
    assert!(
        d.links
            .iter()
            .any(|l| l.kind == LinkKind::CoRecall && l.src == b && l.dst == a),
        "both directions"
    );
    let min = d
        .recent_events
        .iter()
        .find(|e| e.kind == "reinforce")
        .unwrap();
    assert!((min.weight - 0.1).abs() < 1e-12, "strength clamps at 0.1");

    // An unknown id refuses the whole call and writes nothing.
    let before = f.store.show(&IdRef::Id(a)).unwrap().event_counts["reinforce"];
    let e = f
        .store
        .reinforce(&[IdRef::Id(a), IdRef::Id(999)], 1.0, None)
        .unwrap_err();
    assert_eq!(e.field(), Some("ids"));
    assert!(e.to_string().contains("#999"));
    assert_eq!(
        f.store.show(&IdRef::Id(a)).unwrap().event_counts["reinforce"],
        before
    );
}

#[test]
fn deep_recall_walks_links_to_memories_that_share_no_words() {
    let mut f = Fixture::new();
    let a = f.remember("The payment service times out under load", "app");
    let b = f.remember("Raise the connection pool to 50", "app");
    let c = f.remember("Pool exhaustion shows as 503 errors", "app");
    f.store
        .link(&IdRef::Id(a), &IdRef::Id(b), LinkKind::Explicit, None)
        .unwrap();
    f.store
        .link(&IdRef::Id(b), &IdRef::Id(c), LinkKind::Related, Some(0.8))
        .unwrap();
    assert_eq!(f.ids("payment service timeout", "app", Mode::Fast), vec![a]);
    let deep = f.recall("payment service timeout", "app", Mode::Deep);
    let ids: Vec<i64> = deep.hits.iter().map(|h| h.memory.id).collect();
    assert_eq!(ids[0], a);
    let hb = deep
        .hits
        .iter()
        .find(|h| h.memory.id == b)
        .expect("one hop");
    assert_eq!(hb.via, Via::Associative);
    assert_eq!(hb.path.as_deref(), Some(&[a, b][..]));
    let hc = deep
        .hits
        .iter()
        .find(|h| h.memory.id == c)
        .expect("two hops");
    assert_eq!(hc.path.as_deref(), Some(&[a, b, c][..]));
    assert!(hc.relevance < hb.relevance, "hop decay");

    // Depth 2 only.
    let d = f.remember("Unrelated fourth memory", "app");
    f.store
        .link(&IdRef::Id(c), &IdRef::Id(d), LinkKind::Explicit, None)
        .unwrap();
    assert!(
        !f.ids("payment service timeout", "app", Mode::Deep)
            .contains(&d)
    );
    // conflicts_with edges are not walked.
    let e = f.remember("Another unrelated note", "app");
    f.store
        .link(&IdRef::Id(a), &IdRef::Id(e), LinkKind::ConflictsWith, None)
        .unwrap();
    assert!(
        !f.ids("payment service timeout", "app", Mode::Deep)
            .contains(&e)
    );
}

#[test]
fn deep_includes_archived_and_exhaustive_finds_partial_words() {
    // SQLite: the test archives a memory by SQL on the file (no operation archives one
    // memory on demand).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut store = support::open_sqlite(&path, Config::default());
    let remember = |s: &mut Store, c: &str| {
        s.remember(RememberRequest {
            content: c.into(),
            room: Some("app".into()),
            ..Default::default()
        })
        .unwrap()
        .id
    };
    let a = remember(&mut store, "PostgreSQL replication lag alerts fire at 30s");
    let b = remember(
        &mut store,
        "Replication slots must be dropped before failover",
    );
    // Maintenance archives faded memories (its own issue); do what it will do, in SQL.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("UPDATE memories SET tier = 'archived' WHERE id = ?1", [b])
        .unwrap();
    let mut req = RecallRequest::new("replication failover");
    req.room = Some("app".into());
    let fast = store.recall(&req).unwrap();
    assert!(
        fast.hits.iter().all(|h| h.memory.id != b),
        "fast leaves the archive alone"
    );
    req.mode = Mode::Deep;
    let deep = store.recall(&req).unwrap();
    let hb = deep
        .hits
        .iter()
        .find(|h| h.memory.id == b)
        .expect("deep searches the archive");
    assert_eq!(hb.note.as_deref(), Some("archived"));

    let mut ex = RecallRequest::new("postgres");
    ex.room = Some("app".into());
    ex.mode = Mode::Exhaustive;
    let r = store.recall(&ex).unwrap();
    assert_eq!(
        r.hits.iter().map(|h| h.memory.id).collect::<Vec<_>>(),
        vec![a],
        "a partial word is found"
    );
    assert_eq!(r.hits[0].via, Via::Exhaustive);
}

#[test]
fn fast_deepens_by_itself_when_the_best_score_is_weak() {
    let mut f = Fixture::new();
    let a = f.remember("Kubernetes manifests live in deploy/k8s", "app");
    // No word of the query matches: fast finds nothing, deepens, and exhaustive's substring
    // scan finds the partial word.
    let r = f.recall("kubern", "app", Mode::Fast);
    assert!(r.auto_deepened);
    assert_eq!(r.requested_mode, Mode::Fast);
    assert_eq!(r.mode, Mode::Exhaustive);
    assert_eq!(r.hits[0].memory.id, a);
    // A strong match does not deepen.
    for i in 0..30 {
        f.remember(
            &format!("filler memory number {i} about other things"),
            "app",
        );
    }
    let r = f.recall("kubernetes manifests deploy", "app", Mode::Fast);
    assert!(!r.auto_deepened, "{r:?}");
    assert_eq!(r.hits[0].memory.id, a);
}

#[test]
fn stemming_and_stopwords() {
    let mut f = Fixture::new();
    let a = f.remember("We are migrating the databases to managed instances", "app");
    let _b = f.remember("The the the a an of", "app");
    assert_eq!(
        f.ids("database migration", "app", Mode::Fast),
        vec![a],
        "porter stemming: databases/database, migrating/migration"
    );
    assert_eq!(
        f.ids("what is the database", "app", Mode::Fast),
        vec![a],
        "stopwords do not match everything"
    );
}

#[test]
fn hostile_queries_never_raise_fts_errors() {
    let mut f = Fixture::new();
    let a = f.remember(
        "He said \"use NEAR-term fixes\" (and AND/OR/NOT logic) 🚀 for C++ code",
        "app",
    );
    let queries = [
        "\"",
        "\"\"",
        "'",
        "-",
        "--",
        "*",
        "**",
        "a*",
        "NEAR",
        "NEAR(",
        "NEAR(a b)",
        "AND",
        "OR",
        "NOT",
        "AND OR NOT",
        "(",
        ")",
        "()",
        "((a)",
        "a:b",
        "col:val",
        "^",
        "^start",
        "+",
        "{a}",
        "[x]",
        "🚀",
        "🚀🚀🚀",
        "C++",
        "x -y",
        "\"unterminated",
        "a\"b\"c",
        ":",
        ";",
        "\\",
        "%",
        "_",
        "%_%",
        "NEAR/3",
        "a AND",
        "OR b",
        "\u{0}",
        "\u{202e}",
        "﻿",
        "日本語\"",
        "'; DROP TABLE memories; --",
        "near-term",
        "use NEAR-term fixes",
    ];
    for q in queries {
        for mode in [Mode::Fast, Mode::Deep, Mode::Exhaustive] {
            let mut r = RecallRequest::new(q);
            r.room = Some("app".into());
            r.mode = mode;
            match f.store.recall(&r) {
                Ok(_) => {}
                Err(e) => assert!(
                    e.is_caller_error() && e.field() == Some("query"),
                    "query {q:?} in {mode:?}: {e}"
                ),
            }
        }
    }
    assert_eq!(f.ids("NEAR-term fixes", "app", Mode::Fast), vec![a]);
    assert_eq!(
        f.ids("AND/OR/NOT", "app", Mode::Fast),
        vec![a],
        "operators are searched as text"
    );
    assert_eq!(f.ids("🚀 C++", "app", Mode::Fast), vec![a]);
    assert_eq!(f.count(), 1, "no query wrote or dropped anything");
}

#[test]
fn japanese_and_chinese_are_found_from_two_characters() {
    let mut f = Fixture::new();
    let ja = f.remember("会議の議事録は毎週金曜日に共有する", "app");
    let ja2 = f.remember("明日の会議は中止になりました", "app");
    let zh = f.remember("数据库迁移在周五完成", "app");
    let zh2 = f.remember("我们不再使用旧的数据格式", "app");
    let en = f.remember("meeting notes are shared on Fridays", "app");
    let mut m = f.ids("会議", "app", Mode::Fast);
    m.sort();
    assert_eq!(m, vec![ja, ja2]);
    assert_eq!(f.ids("議事録", "app", Mode::Fast), vec![ja]);
    assert_eq!(f.ids("金曜", "app", Mode::Fast), vec![ja]);
    let mut d = f.ids("数据", "app", Mode::Fast);
    d.sort();
    assert_eq!(d, vec![zh, zh2]);
    // 数据库 holds the trigram only #zh has; #zh2 shares the word 数据 and ranks below.
    assert_eq!(f.ids("数据库", "app", Mode::Fast), vec![zh, zh2]);
    assert_eq!(f.ids("迁移", "app", Mode::Fast), vec![zh]);
    // Mixed scripts: each part goes to its own index.
    let mixed = f.ids("会議 meeting", "app", Mode::Fast);
    assert!(mixed.contains(&ja) && mixed.contains(&en));
    // One character is searched too (substring scan).
    assert!(f.ids("周", "app", Mode::Fast).contains(&zh));
}

#[test]
fn activation_lets_unused_memories_sink_below_used_ones() {
    let mut f = Fixture::plain();
    let old = f.remember("cache invalidation uses version keys", "app");
    let used = f.remember("cache invalidation uses event hooks", "app");
    f.advance(60 * DAY_MS);
    for _ in 0..5 {
        f.store.reinforce(&[IdRef::Id(used)], 1.0, None).unwrap();
        f.advance(DAY_MS);
    }
    let r = f.recall("cache invalidation", "app", Mode::Fast);
    let act = |id: i64| {
        r.hits
            .iter()
            .find(|h| h.memory.id == id)
            .unwrap()
            .activation
    };
    assert!(
        act(used) > act(old) + 0.2,
        "used {} vs untouched {}",
        act(used),
        act(old)
    );
    assert_eq!(r.hits[0].memory.id, used);

    // The strength model (seed A) is selectable and ranks the same way here.
    let mut g = Fixture::with_config(Config {
        dynamics: engram_core::dynamics::DynamicsModel::Strength,
        resolve: false,
        ..Config::default()
    });
    let o = g.remember("cache invalidation uses version keys", "app");
    let u = g.remember("cache invalidation uses event hooks", "app");
    g.advance(30 * DAY_MS);
    g.store.reinforce(&[IdRef::Id(u)], 1.0, None).unwrap();
    let r = g.recall("cache invalidation", "app", Mode::Fast);
    assert_eq!(r.hits[0].memory.id, u);
    assert!(r.hits.iter().find(|h| h.memory.id == o).unwrap().activation < 0.1);
}

#[test]
fn importance_weighs_in_the_final_score() {
    let mut f = Fixture::plain();
    let low = f.remember_with(RememberRequest {
        content: "retry budget is five attempts".into(),
        importance: Some(0.1),
        room: Some("app".into()),
        ..Default::default()
    });
    let high = f.remember_with(RememberRequest {
        content: "retry budget is three attempts".into(),
        importance: Some(1.0),
        room: Some("app".into()),
        ..Default::default()
    });
    assert_eq!(
        f.ids("retry budget attempts", "app", Mode::Fast),
        vec![high, low]
    );
}

#[test]
fn bad_input_is_refused_with_the_field_and_nothing_is_written() {
    let mut f = Fixture::new();
    let a = f.remember("seed memory", "app");
    let before = f.store.stats().unwrap();
    let cases: Vec<(RememberRequest, &str, &str)> = vec![
        (
            RememberRequest {
                content: "x".repeat(64 * 1024 + 1),
                ..Default::default()
            },
            "content",
            "65536",
        ),
        (
            RememberRequest {
                content: "   ".into(),
                ..Default::default()
            },
            "content",
            "empty",
        ),
        (
            RememberRequest {
                content: "ok".into(),
                importance: Some(1.5),
                ..Default::default()
            },
            "importance",
            "0–1",
        ),
        (
            RememberRequest {
                content: "ok".into(),
                importance: Some(f64::NAN),
                ..Default::default()
            },
            "importance",
            "finite",
        ),
        (
            RememberRequest {
                content: "ok".into(),
                tags: vec!["t".into(); 33],
                ..Default::default()
            },
            "tags",
            "32",
        ),
        (
            RememberRequest {
                content: "ok".into(),
                metadata: Some(serde_json::json!([1])),
                ..Default::default()
            },
            "metadata",
            "object",
        ),
        (
            RememberRequest {
                content: "ok".into(),
                related: vec![IdRef::Id(4242)],
                ..Default::default()
            },
            "ids",
            "#4242",
        ),
        (
            RememberRequest {
                content: "ok".into(),
                room: Some("a\u{7}b".into()),
                ..Default::default()
            },
            "room",
            "control",
        ),
        (
            RememberRequest {
                content: "ok".into(),
                title: Some("t".repeat(513)),
                ..Default::default()
            },
            "title",
            "512",
        ),
    ];
    for (req, field, needle) in cases {
        let e = f.store.remember(req).unwrap_err();
        assert_eq!(e.field(), Some(field), "{e}");
        assert!(
            e.to_string().contains(needle),
            "{e} should mention {needle}"
        );
        assert!(e.is_caller_error());
    }
    assert!(
        f.store
            .remember(RememberRequest {
                content: "x".repeat(64 * 1024),
                room: Some("app".into()),
                ..Default::default()
            })
            .is_ok(),
        "exactly 64 KiB is allowed"
    );

    let mut r = RecallRequest::new("seed");
    r.limit = 0;
    assert_eq!(f.store.recall(&r).unwrap_err().field(), Some("limit"));
    r.limit = 101;
    assert_eq!(f.store.recall(&r).unwrap_err().field(), Some("limit"));
    let r = RecallRequest::new("");
    assert_eq!(f.store.recall(&r).unwrap_err().field(), Some("query"));
    let r = RecallRequest::new("q".repeat(4097));
    assert_eq!(f.store.recall(&r).unwrap_err().field(), Some("query"));
    assert_eq!(Mode::parse("slow").unwrap_err().field, "mode");
    assert_eq!(Kind::parse("memo").unwrap_err().field, "kind");

    for e in [
        f.store.forget(&IdRef::Id(999)).unwrap_err(),
        f.store.restore(&IdRef::Id(999)).unwrap_err(),
        f.store.purge(&IdRef::Id(999), true).unwrap_err(),
        f.store
            .correct(&IdRef::Id(999), "x", "y", None)
            .unwrap_err(),
        f.store.show(&IdRef::Id(999)).unwrap_err(),
        f.store
            .link(&IdRef::Id(a), &IdRef::Id(999), LinkKind::Explicit, None)
            .unwrap_err(),
    ] {
        assert!(matches!(e, Error::NotFound { .. }), "{e}");
        assert!(e.to_string().contains("#999"));
    }
    assert_eq!(
        f.store
            .link(&IdRef::Id(a), &IdRef::Id(a), LinkKind::Explicit, None)
            .unwrap_err()
            .field(),
        Some("dst")
    );
    assert_eq!(
        f.store
            .link(&IdRef::Id(a), &IdRef::Id(a), LinkKind::Explicit, Some(2.0))
            .unwrap_err()
            .field(),
        Some("weight")
    );
    assert_eq!(
        f.store
            .correct(&IdRef::Id(a), "", "r", None)
            .unwrap_err()
            .field(),
        Some("content")
    );

    let after = f.store.stats().unwrap();
    assert_eq!(
        after.total_memories,
        before.total_memories + 1,
        "only the 64 KiB memory was written"
    );
    assert_eq!(after.links_by_kind, before.links_by_kind);
    assert_eq!(
        after.event_count,
        before.event_count + 1,
        "only the 64 KiB memory's create event"
    );
}

#[test]
fn pins_links_and_stats() {
    let mut f = Fixture::new();
    let a = f.remember_with(RememberRequest {
        content: "Always run cargo fmt".into(),
        kind: Some(Kind::Preference),
        room: Some("app".into()),
        ..Default::default()
    });
    let b = f.remember_with(RememberRequest {
        content: "CI fails on warnings".into(),
        kind: Some(Kind::Config),
        room: Some("common".into()),
        related: vec![IdRef::Id(a)],
        ..Default::default()
    });
    assert!(f.store.set_pinned(&IdRef::Id(a), true).unwrap().pinned);
    assert!(!f.store.set_pinned(&IdRef::Id(a), false).unwrap().pinned);
    let s = f.store.stats().unwrap();
    assert_eq!(s.total_memories, 2);
    assert_eq!(s.by_kind.get("preference"), Some(&1));
    assert_eq!(s.by_room.get("common"), Some(&1));
    assert_eq!(s.by_tier.get("active"), Some(&2));
    assert_eq!(s.links_by_kind.get("explicit"), Some(&1));
    assert_eq!(s.events_by_kind.get("create"), Some(&2));
    // Each backend's own number (PostgreSQL numbers its migrations on its own), read
    // through the interface; on SQLite it is the crate's `SCHEMA_VERSION`.
    assert_eq!(s.schema_version, f.store.schema_supported());
    assert!(s.schema_version >= 1);
    if std::env::var(support::STORE_VAR).map_or(true, |v| v.is_empty() || v == "sqlite") {
        assert_eq!(s.schema_version, engram_store::SCHEMA_VERSION);
    }
    let d = f.store.show(&IdRef::Id(b)).unwrap();
    assert!(
        d.links
            .iter()
            .any(|l| l.src == b && l.dst == a && l.kind == LinkKind::Explicit)
    );
}

#[test]
fn reopening_keeps_everything_and_migrations_are_idempotent() {
    // SQLite by nature: reopens one file and sets its schema version by hand.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested").join("engram.db");
    let id = {
        let mut s = support::open_sqlite(&path, Config::default());
        s.remember(RememberRequest {
            content: "survives a reopen".into(),
            ..Default::default()
        })
        .unwrap()
        .id
    };
    let mut s = support::open_sqlite(&path, Config::default());
    assert_eq!(s.get(&IdRef::Id(id)).unwrap().content, "survives a reopen");
    let mut r = RecallRequest::new("reopen");
    r.room = Some("*".into());
    assert_eq!(s.recall(&r).unwrap().hits.len(), 1);
    // A store written by a newer engram is refused, not corrupted.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("PRAGMA user_version = 999").unwrap();
    drop(conn);
    let e = Store::open(&path, Config::default()).err().unwrap();
    assert!(matches!(e, Error::SchemaTooNew { found: 999, .. }), "{e}");
}

#[test]
fn concurrent_writers_on_one_file_never_see_database_is_locked() {
    // SQLite by nature: many connections to one file and its lock.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut s = support::open_sqlite(&path, Config::default());
                for i in 0..25 {
                    s.remember(RememberRequest {
                        // Distinct words, so resolution (which runs here too) keeps all 200.
                        content: format!("w{t}n{i} entry"),
                        room: Some("app".into()),
                        ..Default::default()
                    })
                    .unwrap();
                    let mut r = RecallRequest::new(format!("w{t}n0"));
                    r.room = Some("app".into());
                    s.recall(&r).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a writer failed");
    }
    let s = support::open_sqlite(&path, Config::default());
    assert_eq!(s.stats().unwrap().total_memories, 200);
}

#[test]
fn cjk_words_inside_longer_queries_are_found() {
    let mut f = Fixture::new();
    let a = f.remember("東京で会議があります", "app");
    let b = f.remember("明日は会議を中止", "app");
    let _c = f.remember("数据库迁移在周五完成", "app");
    for q in ["会議は", "会議の予定", "東京の会議"] {
        let ids = f.ids(q, "app", Mode::Fast);
        assert!(ids.contains(&a), "{q}: {ids:?}");
        if q != "東京の会議" {
            assert!(ids.contains(&b), "{q}: {ids:?}");
        }
    }
    assert_eq!(
        f.ids("東京の会議", "app", Mode::Fast)[0],
        a,
        "more shared words rank first"
    );
    assert!(f.ids("周五的迁移", "app", Mode::Fast).contains(&_c));
}

#[test]
fn correcting_a_superseded_memory_is_refused_and_names_the_successor() {
    let mut f = Fixture::new();
    let a = f.remember("The queue is RabbitMQ", "app");
    let c = f
        .store
        .correct(&IdRef::Id(a), "The queue is NATS", "migrated", None)
        .unwrap();
    let e = f
        .store
        .correct(&IdRef::Id(a), "The queue is Kafka", "again", None)
        .unwrap_err();
    assert_eq!(e.field(), Some("id"));
    assert!(e.to_string().contains(&format!("#{}", c.new_id)), "{e}");
    assert_eq!(f.count(), 2, "nothing written");
}

/// Updating a superseded memory would change a row no search shows: refused, naming the
/// memory that replaced it.
#[test]
fn updating_a_superseded_memory_is_refused_and_names_the_successor() {
    let mut f = Fixture::new();
    let a = f.remember("The queue is RabbitMQ", "app");
    let c = f
        .store
        .correct(&IdRef::Id(a), "The queue is NATS", "migrated", None)
        .unwrap();
    let e = f
        .store
        .update(
            &IdRef::Id(a),
            engram_store::MemoryUpdate {
                content: Some("The queue is Kafka".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.field(), Some("id"));
    assert!(e.to_string().contains(&format!("#{}", c.new_id)), "{e}");
    assert_eq!(
        f.store.get(&IdRef::Id(a)).unwrap().content,
        "The queue is RabbitMQ"
    );
}

#[test]
fn deep_deepens_into_exhaustive_when_nothing_matches_whole_words() {
    let mut f = Fixture::new();
    let a = f.remember("Terraform state is locked in DynamoDB", "app");
    let r = f.recall("dynamo", "app", Mode::Deep);
    assert_eq!(r.mode, Mode::Exhaustive);
    assert!(r.auto_deepened);
    assert_eq!(r.hits[0].memory.id, a);
}

#[test]
fn large_result_sets_stay_bounded_and_do_not_hit_sqlite_variable_limits() {
    let mut f = Fixture::new();
    for i in 0..1200 {
        f.remember(&format!("alpha entry number {i}"), "app");
    }
    let r = f.recall("alpha", "app", Mode::Exhaustive);
    assert_eq!(r.hits.len(), 10);
    assert_eq!(
        r.candidates, 1200,
        "coverage computed over chunks of candidates"
    );
    let r = f.recall("alph", "app", Mode::Fast);
    assert!(r.auto_deepened && !r.hits.is_empty());
}

#[test]
fn deep_walks_only_association_links_within_scope() {
    let mut f = Fixture::new();
    let a = f.remember("blue widget assembly notes", "app");
    let trashed = f.remember("first unrelated note", "app");
    let elsewhere = f.remember("second unrelated note", "other");
    let behind = f.remember("third unrelated note", "app");
    f.store
        .link(&IdRef::Id(a), &IdRef::Id(trashed), LinkKind::Explicit, None)
        .unwrap();
    f.store
        .link(
            &IdRef::Id(trashed),
            &IdRef::Id(behind),
            LinkKind::Explicit,
            None,
        )
        .unwrap();
    f.store
        .link(
            &IdRef::Id(a),
            &IdRef::Id(elsewhere),
            LinkKind::Explicit,
            None,
        )
        .unwrap();
    f.store.forget(&IdRef::Id(trashed)).unwrap();
    let ids = f.ids("blue widget assembly", "app", Mode::Deep);
    assert_eq!(
        ids,
        vec![a],
        "no walking through the trash or into other rooms: {ids:?}"
    );
}

#[test]
fn context_briefing_pins_handoff_steps_features_and_budget() {
    use engram_store::hub::{ContextRequest, HandoffRequest, Origin, ProgressRequest};
    let mut f = Fixture::plain();
    let origin = Origin {
        room: Some("app".into()),
        ..Default::default()
    };
    // A pinned memory of low importance among many stronger ones still leads the briefing.
    for i in 0..210 {
        f.remember_with(RememberRequest {
            content: format!("important note {i}"),
            importance: Some(0.9),
            room: Some("app".into()),
            ..Default::default()
        });
    }
    let pinned = f.remember_with(RememberRequest {
        content: "Always ask before deleting data".into(),
        importance: Some(0.1),
        pinned: true,
        room: Some("app".into()),
        ..Default::default()
    });
    f.store
        .handoff(HandoffRequest {
            summary: "Auth half done".into(),
            next_steps: vec!["add password reset".into(), "write login tests".into()],
            origin: origin.clone(),
            ..Default::default()
        })
        .unwrap();
    f.advance(1000);
    let progress = |status: &str, completion: f64| ProgressRequest {
        feature: "password reset".into(),
        status: status.into(),
        completion: Some(completion),
        origin: origin.clone(),
        ..Default::default()
    };
    f.store
        .track_progress(progress("in_progress", 50.0))
        .unwrap();
    f.advance(1000);
    f.store.track_progress(progress("blocked", 50.0)).unwrap();
    f.advance(1000);
    // The same text again: reinforced, and it is the latest state once more.
    f.store
        .track_progress(progress("in_progress", 50.0))
        .unwrap();
    let b = f
        .store
        .context(&ContextRequest {
            room: Some("app".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(b.pinned.first().map(|p| p.id), Some(pinned));
    assert_eq!(b.active_features.len(), 1);
    assert_eq!(
        b.active_features[0].status, "in_progress",
        "{:?}",
        b.active_features
    );
    let steps: Vec<(&str, &str)> = b
        .last_handoff
        .as_ref()
        .unwrap()
        .next_steps
        .iter()
        .map(|s| (s.step.as_str(), s.status))
        .collect();
    assert_eq!(
        steps,
        vec![
            ("add password reset", "mentioned"),
            ("write login tests", "pending")
        ]
    );
    f.store.track_progress(progress("done", 100.0)).unwrap();
    let b = f
        .store
        .context(&ContextRequest {
            room: Some("app".into()),
            max_bytes: Some(300),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(b.last_handoff.unwrap().next_steps[0].status, "done");
    assert!(b.active_features.is_empty());
    assert!(b.bytes <= 300 && b.truncated);
    let e = f
        .store
        .context(&ContextRequest {
            max_bytes: Some(1 << 20),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.field(), Some("max_bytes"));
}

#[test]
fn session_outcome_moves_the_importance_of_what_the_session_recalled() {
    use engram_store::hub::{Origin, Outcome};
    let mut f = Fixture::new();
    let a = f.remember_with(RememberRequest {
        content: "retry with exponential backoff".into(),
        importance: Some(0.5),
        room: Some("app".into()),
        ..Default::default()
    });
    let mut r = RecallRequest::new("retry backoff");
    r.room = Some("app".into());
    r.session_id = Some("s1".into());
    f.store.recall(&r).unwrap();
    let origin = Origin {
        room: Some("app".into()),
        ..Default::default()
    };
    let out = f
        .store
        .session_outcome("s1", Outcome::Success, None, &origin)
        .unwrap();
    assert_eq!(out.adjusted.len(), 1);
    assert!((f.store.get(&IdRef::Id(a)).unwrap().importance - 0.6).abs() < 1e-9);
    assert_eq!(
        f.store
            .session_outcome("s1", Outcome::Failure, None, &origin)
            .unwrap_err()
            .field(),
        Some("session_id"),
        "once per session"
    );
    for s in ["s2", "s3"] {
        r.session_id = Some(s.into());
        f.store.recall(&r).unwrap();
    }
    f.store
        .session_outcome("s2", Outcome::Failure, None, &origin)
        .unwrap();
    assert!(
        (f.store.get(&IdRef::Id(a)).unwrap().importance - 0.55).abs() < 1e-9,
        "first failure: -0.05"
    );
    let out = f
        .store
        .session_outcome(
            "s3",
            Outcome::Failure,
            Some("the backoff hid a real outage"),
            &origin,
        )
        .unwrap();
    assert!(
        (f.store.get(&IdRef::Id(a)).unwrap().importance - 0.45).abs() < 1e-9,
        "second failed session: -0.10"
    );
    let lesson = f.store.get(&IdRef::Id(out.lesson_id.unwrap())).unwrap();
    assert!(lesson.content.starts_with("Session failure lesson (s3)"));
    assert_eq!(lesson.kind, Kind::Failure);
}

/// Relevance on the absolute scale: the best hit of a query the store knows nothing about
/// is still the best of its candidates (normalised relevance near 1), but its absolute
/// relevance is low and the result says `match: none`; a query the store answers is
/// `good`; the order of hits is the ranking's, untouched.
#[test]
fn a_result_says_when_nothing_matched_well() {
    let mut f = Fixture::plain();
    f.remember(
        "We deploy the billing service on Fridays after the review.",
        "app",
    );
    f.remember("The staging database is reset every Monday night.", "app");
    f.remember(
        "Alice owns the deploy scripts for the search cluster.",
        "app",
    );
    let good = f.recall("when do we deploy the billing service", "app", Mode::Fast);
    assert_eq!(good.matched, engram_store::Match::Good, "{good:?}");
    // One word of four in passing: a hit, ranked first of its candidates, no good match.
    let stray = f.recall(
        "holiday photos from the deploy party in Lisbon",
        "app",
        Mode::Fast,
    );
    assert!(!stray.hits.is_empty(), "a lexical hit on `deploy`");
    let best = &stray.hits[0];
    assert!(best.absolute < 0.34, "{best:?}");
    assert_eq!(stray.matched, engram_store::Match::None, "{stray:?}");
    let json = serde_json::to_value(&stray).unwrap();
    assert_eq!(json["match"], "none");
    assert!(json["hits"][0]["absolute"].is_number());
    let nothing = f.recall("kangaroo", "app", Mode::Fast);
    assert!(nothing.hits.is_empty());
    assert_eq!(nothing.matched, engram_store::Match::None);
    // Half the query's words: weak.
    let half = f.recall("staging database password rotation", "app", Mode::Fast);
    assert_eq!(half.matched, engram_store::Match::Weak, "{half:?}");
    // A word fragment that exhaustive recall finds inside a longer word ("ploy" in
    // "deploy") is a lead, never a good match.
    let fragment = f.recall("ploy", "app", Mode::Exhaustive);
    assert!(!fragment.hits.is_empty(), "exhaustive finds the fragment");
    assert_ne!(fragment.matched, engram_store::Match::Good, "{fragment:?}");
}
