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

/// The store at `dir/engram.db` (created or opened) with `config`.
pub fn open_in(dir: &Path, config: Config) -> Store {
    Store::open(&dir.join("engram.db"), config).expect("the store opens")
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
