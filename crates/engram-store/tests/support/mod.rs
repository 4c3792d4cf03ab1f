//! What the store's tests share: a real store in a temporary directory and clocks a test
//! controls (a fixed instant, or one it moves), so no test reads the wall clock or waits
//! for time to pass. Each test binary takes what it needs (`mod support;`).
//!
//! **The one way the behaviour tests open a store.** [`open_in`] and [`temp_store`] open
//! SQLite by default; with `ENGRAM_TEST_STORE` naming another backend (a `postgres://…`
//! URL), they open a fresh store on it instead ([`open_other`]), so the engine's behaviour
//! suite (`engine`, `write_path`, `resolution`, `briefing`, `browse`, `long_content`,
//! `redaction_paths`, `import`) runs unchanged on every backend. Tests that are SQLite by
//! nature (the HNSW index files in `ann`, seed C's database in `seed_c`, the vault's files
//! and their database records in `vault`, file-level damage in `fuzz`, reopening one file
//! from many processes) call [`open_sqlite`] and say why.
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

/// The environment variable that names the backend the behaviour tests run on: unset,
/// empty or `sqlite` for SQLite, else a URL for [`open_other`].
pub const STORE_VAR: &str = "ENGRAM_TEST_STORE";

/// The store of `dir` (created or opened) with `config`, on the backend
/// [`STORE_VAR`] names: SQLite at `dir/engram.db` by default. Opening the same `dir`
/// again opens the same store.
pub fn open_in(dir: &Path, config: Config) -> Store {
    match std::env::var(STORE_VAR) {
        Ok(url) if !url.is_empty() && url != "sqlite" => open_other(&url, dir, config),
        _ => open_sqlite(&dir.join("engram.db"), config),
    }
}

/// The SQLite store at `path`, whatever [`STORE_VAR`] says: for the tests about SQLite
/// itself (its files, its locking, its migrations, seed C's database).
pub fn open_sqlite(path: &Path, config: Config) -> Store {
    Store::open(path, config).expect("the store opens")
}

/// The hook for another backend: opens the store that `url` names for the test directory
/// `dir`, fresh the first time a `dir` is seen and the same one when `dir` is opened
/// again, handed to `Store::open_with` with `dir/engram.db` as its path (so the vault and
/// other files still live in `dir`). PostgreSQL: a database per `dir` on the server of the
/// admin URL `url`.
pub fn open_other(url: &str, dir: &Path, config: Config) -> Store {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        return postgres_store(url, dir, config);
    }
    let _ = (dir, config);
    let scheme = url.split("://").next().unwrap_or(url);
    panic!(
        "{STORE_VAR}={url:?}: the tests know no backend for {scheme:?}; unset it (or set \
         `sqlite`) for SQLite, or add the backend to tests/support/mod.rs's `open_other`"
    )
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
