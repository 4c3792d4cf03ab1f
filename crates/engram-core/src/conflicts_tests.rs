//! Table tests of read-time conflicts, in English, Japanese and Chinese.

use super::*;

fn hit(id: MemoryId, text: &str, at: Millis) -> Stated<'_> {
    Stated {
        id,
        text,
        room: "app",
        at,
        active: true,
    }
}

/// Pairs (older, newer) that set one subject's one slot to another value.
const CONFLICTING: &[(&str, &str)] = &[
    (
        "The project uses Jest for tests.",
        "The project uses Vitest for tests.",
    ),
    ("My editor is Vim.", "My editor is Helix."),
    ("The test runner is Jest.", "The test runner is Vitest."),
    ("Alice's editor is Vim.", "Alice's editor is Helix."),
    (
        "プロジェクトのテストはJestです。",
        "プロジェクトのテストはVitestです。",
    ),
    (
        "アリスのエディタはVimです。",
        "アリスのエディタはHelixです。",
    ),
    ("项目的测试框架是Jest。", "项目的测试框架是Vitest。"),
    ("张三的编辑器是Vim。", "张三的编辑器是Helix。"),
];

/// Pairs that must not be flagged: two subjects, two qualified slots, one value reworded.
const APART: &[(&str, &str)] = &[
    ("Alice's editor is Vim.", "Bob's editor is Helix."),
    (
        "The timeout is 10s for uploads.",
        "The timeout is 30s for downloads.",
    ),
    (
        "The project uses Jest for tests.",
        "The project uses Jest for its tests.",
    ),
    ("My editor is Vim.", "My editor is vim."),
    ("アリスのエディタはVimです。", "ボブのエディタはHelixです。"),
    (
        "プロジェクトのテストはJestです。",
        "プロジェクトのテストはJestです",
    ),
    ("张三的编辑器是Vim。", "李四的编辑器是Helix。"),
    ("项目的测试框架是Jest。", "项目的测试框架是Jest"),
    ("Deploy after lunch.", "Deploy before lunch."),
];

#[test]
fn the_newer_of_a_conflicting_pair_ranks_first_in_three_languages() {
    let mut bad = Vec::new();
    for (old, new) in CONFLICTING {
        // The older ranked first, an unrelated hit between them.
        let hits = [
            hit(1, old, 1_000),
            hit(2, "Logging goes to stdout in JSON.", 500),
            hit(3, new, 2_000),
        ];
        let r = newer_first(&hits);
        let want = Resolved {
            order: vec![2, 1, 0],
            conflicts_with: vec![vec![3], vec![], vec![1]],
        };
        if r != want {
            bad.push(format!("{old} → {new}: {r:?}"));
        }
        // Already newest first: nothing moves, both are still named.
        let r = newer_first(&[hit(3, new, 2_000), hit(1, old, 1_000)]);
        if r.order != vec![0, 1] || r.conflicts_with != vec![vec![1], vec![3]] {
            bad.push(format!("{new} before {old}: {r:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn pairs_that_are_two_things_or_one_value_are_not_flagged() {
    let mut bad = Vec::new();
    for (old, new) in APART {
        let r = newer_first(&[hit(1, old, 1_000), hit(2, new, 2_000)]);
        if r.order != vec![0, 1] || r.conflicts_with.iter().any(|c| !c.is_empty()) {
            bad.push(format!("{old} / {new}: {r:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn only_active_memories_of_one_room_conflict() {
    let (old, new) = CONFLICTING[0];
    let mut superseded = hit(1, old, 1_000);
    superseded.active = false;
    let r = newer_first(&[superseded, hit(2, new, 2_000)]);
    assert_eq!(r.order, vec![0, 1]);
    assert!(r.conflicts_with.iter().all(Vec::is_empty));
    let mut elsewhere = hit(1, old, 1_000);
    elsewhere.room = "other";
    let r = newer_first(&[elsewhere, hit(2, new, 2_000)]);
    assert_eq!(r.order, vec![0, 1]);
    assert!(r.conflicts_with.iter().all(Vec::is_empty));
}

#[test]
fn a_chain_orders_by_time_within_the_places_it_holds() {
    let hits = [
        hit(10, "The project uses Mocha for tests.", 3_000),
        hit(11, "Logging goes to stdout in JSON.", 9_000),
        hit(12, "The project uses Jest for tests.", 1_000),
        hit(13, "Deploys are manual.", 9_000),
        hit(14, "The project uses Vitest for tests.", 2_000),
    ];
    let r = newer_first(&hits);
    // Mocha (newest) keeps the first place, Vitest takes the third, Jest the fifth; the
    // unrelated hits stay where they were.
    assert_eq!(r.order, vec![0, 1, 4, 3, 2]);
    assert_eq!(r.conflicts_with[0], vec![12, 14]);
    assert_eq!(r.conflicts_with[1], Vec::<MemoryId>::new());
    assert_eq!(r.conflicts_with[2], vec![10, 14]);
    // A tie in time: the higher id, written later, first.
    let r = newer_first(&[
        hit(1, "My editor is Vim.", 5),
        hit(2, "My editor is Helix.", 5),
    ]);
    assert_eq!(r.order, vec![1, 0]);
}

#[test]
fn the_current_facts_keep_only_the_newest_of_each_group() {
    let hits = [
        hit(1, "My editor is Vim.", 1_000),
        hit(2, "Deploys are manual.", 500),
        hit(3, "My editor is Helix.", 2_000),
        hit(4, "プロジェクトのテストはJestです。", 1_000),
        hit(5, "プロジェクトのテストはVitestです。", 3_000),
    ];
    // Helix takes Vim's place and names it; Vitest takes Jest's.
    assert_eq!(
        current(&hits),
        vec![(2, vec![1]), (1, vec![]), (4, vec![4])]
    );
}

/// An episode records what was said then: two turns of a chat setting one slot never
/// conflict (LoCoMo conv-26 Hit@5 fell from 80.7 to 28.0 % when they did).
#[test]
fn episodes_never_conflict() {
    let memory = |id: MemoryId, text: &str, kind: crate::Kind| -> crate::Memory {
        serde_json::from_value(serde_json::json!({
            "id": id, "uid": format!("U{id}"), "content": text, "title": null,
            "kind": kind, "importance": 0.5, "tags": [], "room": "app", "topic_key": null,
            "pinned": false, "tier": "active", "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z", "valid_from": format!("2026-01-0{id}T00:00:00Z"),
            "valid_to": null, "source": "test", "session_id": null, "metadata": {}
        }))
        .unwrap()
    };
    for (kind, conflicts) in [
        (crate::Kind::Fact, true),
        (crate::Kind::Episode, false),
        (crate::Kind::Handoff, false),
    ] {
        let a = memory(1, "My editor is Vim.", kind);
        let b = memory(2, "My editor is Helix.", kind);
        let r = newer_first(&[Stated::of(&a), Stated::of(&b)]);
        assert_eq!(!r.conflicts_with[0].is_empty(), conflicts, "{kind:?}");
    }
}
