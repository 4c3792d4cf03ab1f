//! The browsing reads behind the web UI on a real on-disk store with a clock the test
//! moves: ordering by activation, daily activity, the graph, sessions, pending judgments,
//! the activation curve, and refused limits.

use engram_core::memory::IdRef;
use engram_core::{DAY_MS, Kind, LinkKind, Tier};
use engram_store::browse::{ListRequest, Order};
use engram_store::{RecallRequest, RememberRequest, Store};
mod support;
use support::{T0, TestClock};

fn store() -> (Store, TestClock, tempfile::TempDir) {
    let (s, dir) = support::temp_store(support::no_resolution());
    let clock = TestClock::at(T0);
    (s.with_clock(clock.clock()), clock, dir)
}

fn remember(s: &mut Store, text: &str, room: &str) -> i64 {
    s.remember(RememberRequest {
        content: text.into(),
        room: Some(room.into()),
        ..Default::default()
    })
    .unwrap()
    .id
}

#[test]
fn lists_order_by_activation_and_count_activity_by_day() {
    let (mut s, clock, _d) = store();
    let old = remember(&mut s, "the deploy script lives in ops", "app");
    clock.advance(20 * DAY_MS);
    let fresh = remember(&mut s, "the staging database is postgres", "app");
    remember(&mut s, "lunch is at noon", "common");
    let req = |order| ListRequest {
        order,
        limit: 10,
        ..Default::default()
    };
    let strongest = s.list_memories(&req(Order::Strongest)).unwrap();
    let fading = s.list_memories(&req(Order::Fading)).unwrap();
    assert_eq!(
        fading[0].memory.id, old,
        "the old, unused memory fades first"
    );
    assert_ne!(strongest[0].memory.id, old);
    assert!(strongest[0].activation >= strongest[2].activation);
    let recent = s.list_memories(&req(Order::Recent)).unwrap();
    assert_eq!(recent.len(), 3);
    assert_eq!(recent[2].memory.id, old, "newest first");
    let only_app = s
        .list_memories(&ListRequest {
            room: Some("app".into()),
            kinds: vec![Kind::Fact],
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(only_app.len(), 2);

    let mut all_rooms = RecallRequest::new("staging database postgres");
    all_rooms.room = Some("*".into());
    assert!(!s.recall(&all_rooms).unwrap().hits.is_empty());
    let days = s.activity(30).unwrap();
    assert_eq!(days.len(), 30);
    let today = days.last().unwrap();
    assert_eq!(today.created, 2);
    assert!(today.recalls >= 1, "{today:?}");
    assert_eq!(days.iter().map(|d| d.created).sum::<u64>(), 3);
    let _ = fresh;
}

#[test]
fn the_graph_holds_the_links_among_its_nodes() {
    let (mut s, _c, _d) = store();
    let a = remember(&mut s, "service alpha calls beta", "app");
    let b = remember(&mut s, "service beta owns the queue", "app");
    let c = remember(&mut s, "the office plant needs water", "home");
    s.link(&IdRef::Id(a), &IdRef::Id(b), LinkKind::Explicit, None)
        .unwrap();
    s.link(&IdRef::Id(a), &IdRef::Id(c), LinkKind::Related, None)
        .unwrap();
    let g = s.graph(None, 100).unwrap();
    assert_eq!(g.nodes.len(), 3);
    assert_eq!(g.edges.len(), 2);
    let app = s.graph(Some("app"), 100).unwrap();
    assert_eq!(app.nodes.len(), 2);
    assert_eq!(
        app.edges.len(),
        1,
        "a link to a node outside the graph is left out"
    );
    let small = s.graph(None, 1).unwrap();
    assert_eq!((small.nodes.len(), small.omitted), (1, 2));
    s.forget(&IdRef::Id(c)).unwrap();
    assert_eq!(
        s.graph(None, 100).unwrap().nodes.len(),
        2,
        "the trash is not drawn"
    );
    assert!(s.graph(None, 0).is_err());
    assert!(s.graph(None, 1_000_000).is_err());
}

#[test]
fn the_curve_rises_at_a_reinforce_and_decays_ahead() {
    let (mut s, clock, _d) = store();
    let id = remember(&mut s, "retry the webhook three times", "app");
    clock.advance(10 * DAY_MS);
    s.reinforce(&[IdRef::Id(id)], 1.0, None).unwrap();
    clock.advance(DAY_MS);
    let c = s.activation_curve(&IdRef::Id(id), 30, 100).unwrap();
    assert_eq!(c.events.len(), 2);
    let past: Vec<_> = c.points.iter().filter(|p| !p.projected).collect();
    let ahead: Vec<_> = c.points.iter().filter(|p| p.projected).collect();
    assert!(!past.is_empty() && !ahead.is_empty());
    let reinforced_at = c.events[1].0;
    let before = past.iter().rfind(|p| p.at < reinforced_at).unwrap();
    let after = past.iter().find(|p| p.at >= reinforced_at).unwrap();
    assert!(after.activation > before.activation, "{before:?} {after:?}");
    assert!(ahead.last().unwrap().activation < past.last().unwrap().activation);
    assert!(s.activation_curve(&IdRef::Id(9999), 30, 100).is_err());
    assert!(s.activation_curve(&IdRef::Id(id), 100_000, 100).is_err());
}

#[test]
fn sessions_and_pending_judgments_are_listed() {
    let (mut s, _c, _d) = store();
    s.session_start(
        "s-1",
        &engram_store::Origin {
            room: Some("app".into()),
            ..Default::default()
        },
        None,
    )
    .unwrap();
    assert_eq!(s.sessions(10).unwrap()[0].id, "s-1");
    assert!(s.pending_judgments(10).unwrap().is_empty());
    let a = remember(&mut s, "we deploy on fridays", "app");
    let b = remember(&mut s, "we never deploy on fridays", "app");
    let j = s
        .compare(
            &IdRef::Id(a),
            &IdRef::Id(b),
            engram_store::maintain::Verdict {
                relation: "related".into(),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(j.status, "judged");
    assert!(
        s.pending_judgments(10).unwrap().is_empty(),
        "judged ones are not pending"
    );
    assert_eq!(
        s.list_memories(&ListRequest {
            tiers: vec![Tier::Trash],
            limit: 5,
            ..Default::default()
        })
        .unwrap()
        .len(),
        0
    );
}
