//! When a server holds its embedding model in memory (seed B's `ENGRAM_PRELOAD` and
//! `ENGRAM_IDLE_UNLOAD_SEC`): loaded at start on a thread of its own (`background`,
//! `auto`), before anything is answered (`blocking`) or at the first tool call (`off`);
//! with `idle_unload_sec` set, freed after that long without a call and loaded again by the
//! next one. A search that arrives while it loads waits as at start
//! (`first_recall_wait_ms`).
//!
//! Lock order stays store → model state everywhere: an unload takes the state's lock only
//! to read and to set it, never while it waits for a store.

use super::{ModelState, Shared};
use engram_core::embed::Embedder;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// What loading the configured model came to.
pub enum LoadOutcome {
    Loaded(Arc<dyn Embedder>),
    /// No model is installed or it failed to load: why, for search results and health.
    Unavailable(String),
}

/// Loads the configured model; called again after each unload.
pub type Loader = Arc<dyn Fn() -> LoadOutcome + Send + Sync>;

/// The model's life in one server.
pub(super) struct Life {
    loader: OnceLock<Loader>,
    me: OnceLock<Weak<Shared>>,
    started: Instant,
    /// Milliseconds after `started` of the last tool call.
    last_call_ms: AtomicU64,
    /// Bumped by each unload, so a backfill that began before it stops installing the
    /// model it was given.
    pub(super) generation: AtomicU64,
}

impl Life {
    pub(super) fn new() -> Life {
        Life {
            loader: OnceLock::new(),
            me: OnceLock::new(),
            started: Instant::now(),
            last_call_ms: AtomicU64::new(0),
            generation: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }
}

/// How often the idle watcher looks: a quarter of the idle time, between 1 and 60 s
/// (seed B's interval), so a model is freed at most a quarter late.
pub fn idle_check_interval(idle: Duration) -> Duration {
    (idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(60))
}

impl Shared {
    /// Starts the model's life: `preload` says when it first loads (see the module), and
    /// a nonzero `idle` starts the watcher that frees it.
    pub fn start_model(self: &Arc<Self>, loader: Loader, preload: &str, idle: Duration) {
        let _ = self.life.loader.set(loader);
        let _ = self.life.me.set(Arc::downgrade(self));
        match preload.trim() {
            "off" => self.set_model_state(ModelState::Unloaded),
            "blocking" => self.load_before_serving(),
            _ => self.load_in_background(),
        }
        if !idle.is_zero() {
            let me = Arc::downgrade(self);
            std::thread::spawn(move || idle_watch(me, idle));
        }
    }

    fn load_now(&self) {
        let Some(loader) = self.life.loader.get() else {
            return;
        };
        match loader() {
            LoadOutcome::Loaded(e) => self.install_embedder(e),
            LoadOutcome::Unavailable(reason) => self.model_unavailable(reason),
        }
    }

    /// `blocking`: the model is the server's before this returns; the backfill of
    /// vectorless memories still runs on a thread (a large store would otherwise hold the
    /// handshake for minutes).
    fn load_before_serving(self: &Arc<Self>) {
        let Some(loader) = self.life.loader.get() else {
            return;
        };
        match loader() {
            LoadOutcome::Loaded(e) => {
                let generation = self.make_ready(&e);
                let me = self.clone();
                std::thread::spawn(move || me.backfill(e, generation));
            }
            LoadOutcome::Unavailable(reason) => self.model_unavailable(reason),
        }
    }

    fn load_in_background(&self) {
        let Some(me) = self.life.me.get().and_then(Weak::upgrade) else {
            return;
        };
        self.set_model_state(ModelState::Loading);
        std::thread::spawn(move || me.load_now());
    }

    /// Called by every tool call before it runs: notes the time (the idle clock) and
    /// starts loading a model that is not in memory. Of calls arriving together, one
    /// starts the loader.
    pub(super) fn model_wanted(&self) {
        self.life
            .last_call_ms
            .store(self.life.now_ms(), Ordering::Relaxed);
        let mut state = self.model_state.lock().unwrap_or_else(|p| p.into_inner());
        if *state != ModelState::Unloaded {
            return;
        }
        let Some(me) = self.life.me.get().and_then(Weak::upgrade) else {
            return;
        };
        *state = ModelState::Loading;
        drop(state);
        self.model_changed.notify_all();
        std::thread::spawn(move || me.load_now());
    }

    /// How long since the last tool call.
    fn idle_for(&self) -> Duration {
        let last = self.life.last_call_ms.load(Ordering::Relaxed);
        Duration::from_millis(self.life.now_ms().saturating_sub(last))
    }

    /// Frees the model: the server's copy and every store's. A call that came in while it
    /// ran loads it again at once.
    fn unload(&self) {
        if self.model_state() != ModelState::Ready {
            return;
        }
        let seen = self.life.last_call_ms.load(Ordering::Relaxed);
        self.life.generation.fetch_add(1, Ordering::SeqCst);
        *self.embedder.lock().unwrap_or_else(|p| p.into_inner()) = None;
        for slot in &self.stores {
            let mut guard = slot.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(store) = guard.as_mut() {
                store.set_embedder(None);
            }
        }
        self.set_model_state(ModelState::Unloaded);
        tracing::info!("embedding model unloaded after idle_unload_sec; the next call loads it");
        if self.life.last_call_ms.load(Ordering::Relaxed) != seen {
            self.model_wanted();
        }
    }
}

/// Frees the model once the server has been idle for `idle`; ends with the server.
fn idle_watch(me: Weak<Shared>, idle: Duration) {
    let interval = idle_check_interval(idle);
    loop {
        std::thread::sleep(interval);
        let Some(shared) = me.upgrade() else {
            return;
        };
        if shared.model_state() == ModelState::Ready && shared.idle_for() >= idle {
            shared.unload();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watcher_looks_a_quarter_of_the_idle_time_within_1_to_60_s() {
        let s = Duration::from_secs;
        assert_eq!(idle_check_interval(s(2)), s(1));
        assert_eq!(idle_check_interval(s(600)), s(60));
        assert_eq!(idle_check_interval(s(100)), s(25));
    }
}
