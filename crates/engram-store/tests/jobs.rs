//! Maintenance and the background fill run in one process at a time on a shared database
//! (`Store::exclusive`, a PostgreSQL advisory lock), and SQLite keeps its behaviour. Two
//! stores opened on one database play two servers. The PostgreSQL case runs against the
//! test server (`ENGRAM_TEST_PG`, an admin URL, from `scripts/pg-test-server`); without
//! one it is skipped with a note, except under CI.

mod support;

use engram_core::Config;
use engram_store::storage::Job;
use engram_store::{Error, Store};

/// Two stores on one PostgreSQL database, or `None` (with a note) without a server.
fn two_servers(dir: &std::path::Path) -> Option<(Store, Store)> {
    let admin = match std::env::var("ENGRAM_TEST_PG") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must run the PostgreSQL tests: ENGRAM_TEST_PG is not set"
            );
            eprintln!("note: ENGRAM_TEST_PG is unset; skipping the PostgreSQL case");
            return None;
        }
    };
    // The same `dir` opens the same database (see `support::open_other`).
    let a = support::open_other(&admin, dir, support::no_resolution());
    let b = support::open_other(&admin, dir, support::no_resolution());
    Some((a, b))
}

fn busy(r: Result<impl std::fmt::Debug, Error>) -> String {
    match r {
        Err(e @ Error::Busy { .. }) => e.to_string(),
        other => panic!("expected Busy, got {other:?}"),
    }
}

#[test]
fn of_two_servers_on_one_database_one_maintains_and_the_other_skips() {
    let dir = tempfile::tempdir().unwrap();
    let Some((mut one, mut two)) = two_servers(dir.path()) else {
        return;
    };
    one.remember(engram_store::RememberRequest {
        content: "The deploy runs from the release branch".into(),
        ..Default::default()
    })
    .unwrap();

    let held = one.exclusive(Job::Maintenance).unwrap();
    let message = busy(two.maintain(false));
    assert!(
        message.contains("maintenance") && message.contains("/engram_suite_"),
        "the refusal names the job and the database: {message}"
    );
    assert!(two.maintenance_log(10).unwrap().is_empty(), "nothing ran");
    assert_eq!(two.last_maintenance().unwrap(), None);
    busy(two.consolidate_now(None));
    // A dry run changes nothing, so it needs no lock; the fill is another job.
    assert!(two.maintain(true).unwrap().dry_run);
    let fill = two.exclusive(Job::Backfill).unwrap();
    busy(one.exclusive(Job::Backfill));
    drop(fill);

    // Released, the other server maintains; after its run the lock is free again.
    drop(held);
    let report = two.maintain(false).unwrap();
    assert!(!report.dry_run);
    assert!(two.last_maintenance().unwrap().is_some());
    assert_eq!(
        one.maintenance_log(10).unwrap().len(),
        2,
        "both servers read one log: the dry run and the real one"
    );
    drop(one.exclusive(Job::Maintenance).unwrap());
}

/// A store dropped (a server gone) releases its lock: its connection closes with it.
#[test]
fn a_lock_goes_with_its_holder() {
    let dir = tempfile::tempdir().unwrap();
    let Some((one, two)) = two_servers(dir.path()) else {
        return;
    };
    let held = one.exclusive(Job::Maintenance).unwrap();
    busy(two.exclusive(Job::Maintenance));
    drop(held);
    drop(one);
    drop(two.exclusive(Job::Maintenance).unwrap());
}

/// SQLite: every process is granted the lock, as before (its writers queue on the file).
#[test]
fn sqlite_grants_every_process_the_lock_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let one = support::open_sqlite(&path, Config::default());
    let mut two = support::open_sqlite(&path, Config::default());
    let _held = one.exclusive(Job::Maintenance).unwrap();
    let _also = two.exclusive(Job::Maintenance).unwrap();
    assert!(!two.maintain(false).unwrap().dry_run);
    assert!(two.last_maintenance().unwrap().is_some());
}
