//! Seed A's tasks and checkpoints on a real store: versions per task, what a restore
//! reads at each version, and the refusals that name their field.

use engram_core::memory::IdRef;
use engram_core::task::RestoreMode;
use engram_core::{Config, Kind};
use engram_store::hub::{FailureRequest, HandoffRequest, Origin, ProgressRequest};
use engram_store::tasks::{HandoffExtras, TaskChange, TaskRequest};
use engram_store::{Error, RememberRequest, Store};
mod support;
use support::{T0, TestClock};

fn store() -> (Store, TestClock, tempfile::TempDir) {
    let (store, dir) = support::temp_store(Config::default());
    let clock = TestClock::at(T0);
    (store.with_clock(clock.clock()), clock, dir)
}

fn origin() -> Origin {
    Origin {
        room: Some("app".into()),
        ..Default::default()
    }
}

fn task(s: &mut Store, name: &str) -> i64 {
    s.create_task(TaskRequest {
        name: name.into(),
        goal: Some(format!("finish {name}")),
        origin: origin(),
        ..Default::default()
    })
    .unwrap()
    .0
    .task_id
}

fn field(e: Error) -> &'static str {
    e.field().unwrap_or_else(|| panic!("no field: {e}"))
}

#[test]
fn each_task_numbers_its_own_checkpoints_and_a_restore_reads_up_to_one() {
    let (mut s, clock, _dir) = store();
    let a = task(&mut s, "search");
    let b = task(&mut s, "billing");
    let handoff = |s: &mut Store, task_id, summary: &str, preserve: &str| {
        s.handoff(HandoffRequest {
            summary: summary.into(),
            next_steps: vec![format!("after {summary}")],
            extras: HandoffExtras {
                must_preserve: vec![preserve.into()],
                must_not_redo: vec![("reindex by hand".into(), Some("it locks".into()))],
                ..Default::default()
            },
            task_id: Some(task_id),
            origin: origin(),
            ..Default::default()
        })
        .unwrap()
        .id
    };
    let h1 = handoff(&mut s, a, "indexing done", "the schema");
    clock.advance(1000);
    handoff(&mut s, b, "invoices drafted", "the totals");
    clock.advance(1000);
    s.track_failure(FailureRequest {
        error: "ranking off by one".into(),
        component: "search".into(),
        task_id: Some(a),
        origin: origin(),
        ..Default::default()
    })
    .unwrap();
    clock.advance(1000);
    let h2 = handoff(&mut s, a, "ranking fixed", "the API");
    clock.advance(1000);
    s.track_progress(ProgressRequest {
        feature: "search".into(),
        status: "review".into(),
        task_id: Some(a),
        origin: origin(),
        ..Default::default()
    })
    .unwrap();

    let versions: Vec<(u64, String)> = s
        .checkpoints(a, 10)
        .unwrap()
        .into_iter()
        .map(|c| (c.version, c.reason))
        .collect();
    assert_eq!(
        versions,
        [
            (4, "PROGRESS".to_string()),
            (3, "MANUAL_HANDOFF".into()),
            (2, "FAILURE".into()),
            (1, "MANUAL_HANDOFF".into())
        ]
    );
    assert_eq!(s.checkpoints(b, 10).unwrap().len(), 1, "b counts its own");

    // Version 2 is the failure: the state is still the first handoff's.
    let r = s.restore_checkpoint(a, Some(2), RestoreMode::Full).unwrap();
    assert_eq!(r.state.handoff_id, Some(h1));
    assert_eq!(r.state.must_preserve, [serde_json::json!("the schema")]);
    assert_eq!(r.memories.len(), 2);
    // The latest is the progress entry after the second handoff.
    let r = s.restore_checkpoint(a, None, RestoreMode::Full).unwrap();
    assert_eq!((r.checkpoint.version, r.state.handoff_id), (4, Some(h2)));
    assert_eq!(r.state.must_preserve, [serde_json::json!("the API")]);
    assert_eq!(
        r.state.must_not_redo,
        [serde_json::json!({"action": "reindex by hand", "reason": "it locks"})]
    );
    assert_eq!(r.state.goal, "finish search");
    assert_eq!(r.memories.len(), 4);

    // A forgotten record is no longer the task's: restores and lists leave it out.
    s.forget(&IdRef::Id(h2)).unwrap();
    let r = s.restore_checkpoint(a, None, RestoreMode::Full).unwrap();
    assert_eq!(r.state.handoff_id, Some(h1));
    assert_eq!(s.task_view(a).unwrap().handoffs.len(), 1);
}

#[test]
fn tasks_change_in_place_and_refusals_name_the_field() {
    let (mut s, _clock, _dir) = store();
    let t = task(&mut s, "login");
    let u = s
        .update_task(
            t,
            TaskChange {
                status: Some("In Progress".into()),
                metadata: Some(serde_json::json!({"ticket": "AUTH-1"})),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        (u.status.as_str(), u.goal.as_str()),
        ("in_progress", "finish login")
    );
    let m = s.get(&IdRef::Id(t)).unwrap();
    assert_eq!(m.kind, Kind::Project);
    assert!(m.content.contains("Status: in_progress"), "{}", m.content);
    assert!((m.importance - 0.8).abs() < 1e-9);
    assert_eq!(s.revisions_of(t).unwrap().len(), 1, "the old text is kept");

    let plain = s
        .remember(RememberRequest {
            content: "not a task".into(),
            room: Some("app".into()),
            ..Default::default()
        })
        .unwrap()
        .id;
    let change = || TaskChange {
        goal: Some("x".into()),
        ..Default::default()
    };
    assert_eq!(
        field(s.update_task(plain, change()).unwrap_err()),
        "task_id"
    );
    assert_eq!(
        field(s.update_task(t, TaskChange::default()).unwrap_err()),
        "status"
    );
    let bad_status = TaskChange {
        status: Some("someday".into()),
        ..Default::default()
    };
    assert_eq!(field(s.update_task(t, bad_status).unwrap_err()), "status");
    let not_object = TaskChange {
        metadata: Some(serde_json::json!([1])),
        ..Default::default()
    };
    assert_eq!(field(s.update_task(t, not_object).unwrap_err()), "metadata");
    let e = s
        .restore_checkpoint(t, None, RestoreMode::Selective)
        .unwrap_err();
    assert_eq!(field(e), "task_id", "no checkpoint yet");
    let e = s
        .handoff(HandoffRequest {
            summary: "s".into(),
            task_id: Some(plain),
            origin: origin(),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(field(e), "task_id");
    assert_eq!(
        s.task(t).unwrap().status,
        "in_progress",
        "refusals changed nothing"
    );
    let scope = engram_core::room::RoomScope::All;
    assert_eq!(s.tasks(&scope, Some("in_progress"), 10).unwrap().len(), 1);
    assert_eq!(
        field(s.tasks(&scope, Some("later"), 10).unwrap_err()),
        "status"
    );
}

/// A restore that names no task restores the most recently updated open task that has a
/// checkpoint: another task's later status change, with no checkpoint of its own, does
/// not make the restore fail (tester-a).
#[test]
fn a_restore_without_a_task_finds_the_task_with_checkpoints() {
    let (mut s, clock, _dir) = store();
    let a = task(&mut s, "search");
    s.handoff(HandoffRequest {
        summary: "indexing done".into(),
        task_id: Some(a),
        origin: origin(),
        ..Default::default()
    })
    .unwrap();
    let b = task(&mut s, "billing");
    clock.advance(1000);
    s.update_task(
        b,
        TaskChange {
            status: Some("in_progress".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let scope = engram_store::rooms::scope(s.config(), Some("app"), None).unwrap();
    assert_eq!(s.current_task(&scope).unwrap().unwrap().task_id, b);
    let t = s.task_to_restore(&scope).unwrap().unwrap();
    assert_eq!(t.task_id, a);
    assert!(
        s.restore_checkpoint(t.task_id, None, RestoreMode::Selective)
            .is_ok()
    );
}
