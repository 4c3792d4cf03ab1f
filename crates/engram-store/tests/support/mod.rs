//! What the store's tests share: a real store on disk in a temporary directory and clocks
//! a test controls (a fixed instant, or one it moves), so no test reads the wall clock or
//! waits for time to pass. Each test binary takes what it needs (`mod support;`).
#![allow(dead_code)]

use engram_core::{Config, Millis};
use engram_store::{Clock, Store};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The instant every test clock starts at (2026-09-21, a Monday), far from any edge.
pub const T0: Millis = 1_790_000_000_000;

/// A clock that always reads `at`.
pub fn fixed(at: Millis) -> Clock {
    Arc::new(move || at)
}

/// A clock the test moves by hand; clones share the same time.
#[derive(Clone)]
pub struct TestClock(Arc<AtomicI64>);

impl TestClock {
    pub fn at(start: Millis) -> TestClock {
        TestClock(Arc::new(AtomicI64::new(start)))
    }

    pub fn now(&self) -> Millis {
        self.0.load(Ordering::SeqCst)
    }

    pub fn advance(&self, ms: Millis) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// The `Clock` a store reads this clock through.
    pub fn clock(&self) -> Clock {
        let c = self.0.clone();
        Arc::new(move || c.load(Ordering::SeqCst))
    }

    /// The same counter, for tests that keep the raw atomic.
    pub fn shared(&self) -> Arc<AtomicI64> {
        self.0.clone()
    }
}

/// The store at `dir/engram.db` (created or opened) with `config`. With
/// `ENGRAM_TEST_STORE` set to a `postgres://` admin URL, the store is a PostgreSQL
/// database of its own on that server instead, one per `dir` (so reopening `dir` finds the
/// same data), and the engine's behaviour suite runs on that backend.
pub fn open_in(dir: &Path, config: Config) -> Store {
    if let Some(admin) = other_store() {
        return postgres_store(&admin, dir, config);
    }
    Store::open(&dir.join("engram.db"), config).expect("the store opens")
}

/// The non-SQLite store the tests should run on, if `ENGRAM_TEST_STORE` names one.
fn other_store() -> Option<String> {
    std::env::var("ENGRAM_TEST_STORE")
        .ok()
        .filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"))
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

/// A PostgreSQL database named after `dir` (created on first use) as the store.
#[cfg(feature = "postgres")]
fn postgres_store(admin: &str, dir: &Path, config: Config) -> Store {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut h);
    let name = format!("engram_suite_{}_{:016x}", std::process::id(), h.finish());
    let mut c =
        postgres::Client::connect(admin, postgres::NoTls).expect("ENGRAM_TEST_STORE connects");
    let exists = c
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .unwrap()
        .is_some();
    if !exists {
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
    }
    engram_store::postgres::PgBackend::open_store(
        &with_db(admin, &name),
        config,
        &dir.join("engram.db"),
    )
    .expect("the PostgreSQL test store opens")
}

#[cfg(not(feature = "postgres"))]
fn postgres_store(_admin: &str, _dir: &Path, _config: Config) -> Store {
    panic!("ENGRAM_TEST_STORE names PostgreSQL but this build has no `postgres` feature")
}

/// A new store in its own temporary directory (kept alive by the returned guard).
pub fn temp_store(config: Config) -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_in(dir.path(), config);
    (store, dir)
}

/// Configuration with write-path resolution off: every distinct text is its own memory.
pub fn no_resolution() -> Config {
    Config {
        resolve: false,
        ..Config::default()
    }
}
