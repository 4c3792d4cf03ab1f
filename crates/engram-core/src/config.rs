//! Settings that shape ranking and dynamics. Defaults follow the seeds (B's recall weights
//! and thresholds, A's strength model as the alternative). Reading `config.toml` and
//! `ENGRAM_*` variables is the store's job; this is only the shape and its validation.

use crate::InputError;
use crate::dynamics::{ActrParams, DynamicsModel};
use crate::limits;
use crate::scoring::{Fusion, Weights};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the approximate vector index stores vectors in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnnQuantization {
    F32,
    F16,
    I8,
}

/// Every setting, with defaults. Unknown keys in a file are ignored (and reported by `doctor`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// `actr` (B, default) or `strength` (A).
    pub dynamics: DynamicsModel,
    /// Final-score weight of relevance (B: 0.6).
    pub w_relevance: f64,
    /// Final-score weight of activation (B: 0.25).
    pub w_activation: f64,
    /// Final-score weight of importance (B: 0.15).
    pub w_importance: f64,
    /// Relevances are divided by `max(best relevance, relevance_norm_floor)` for ranking (B's floor: 0.10).
    pub relevance_norm_floor: f64,
    /// Lexical relevance is `1 − e^{bm25 / bm25_scale}`. B used 1, which saturates near 1 for
    /// any match in a large store; 10 keeps BM25's ordering visible in the score.
    pub bm25_scale: f64,
    /// Share of relevance that comes from query coverage (the fraction of query terms a
    /// memory holds); the rest is BM25 scaled to the best candidate. Coverage keeps
    /// relevance meaningful in small stores, where BM25 is near zero for any match.
    pub coverage_weight: f64,
    /// With `fusion = "weighted"`: the lexical share of relevance (the rest is the cosine).
    pub w_lexical: f64,
    /// How much memories of one session lift each other (0 turns it off).
    pub w_session: f64,
    /// Relevance added to what the one speaker a question asks about said (a name in the
    /// question, or the asker for a question in the first person); 0 turns it off.
    pub w_speaker: f64,
    /// A query asking for a summary or an ordering gives a result's places to one hit per
    /// session first (`engram_core::coverage`); `false` keeps plain score order.
    pub coverage_spread: bool,
    /// The embedding model: a known name (`all-MiniLM-L6-v2`, `multilingual-e5-small`), a
    /// folder, or `none` for lexical search only. `ENGRAM_MODEL` overrides it.
    pub model: String,
    /// The tool profile a bare `engram` (no arguments, stdin not a terminal) serves over
    /// stdio (`ENGRAM_TOOLS`): any `--tools` value. Empty: `compat-a` when seed A's data
    /// is in the home, else `core`. `engram mcp` takes `--tools` instead.
    pub tools: String,
    /// Bearer token for `engram serve --http` (`ENGRAM_HTTP_TOKEN`); required to bind
    /// anything but loopback. Empty: none.
    pub http_token: String,
    /// Where the memories live (`ENGRAM_STORE`, `engram serve --store`): empty for the
    /// SQLite file in the home (one person), or a `postgres://USER@HOST/DB` URL for a
    /// server database (a team).
    pub store: String,
    /// Stores (each with its own connections) a server on a server database runs tool calls
    /// on side by side (`ENGRAM_SERVER_STORES`, 1–64, default 8). A SQLite server always
    /// runs one: its writers queue on the file's lock.
    pub server_stores: usize,
    /// Threads for embedding; 0 uses every core. Default 2: on two cores, two threads
    /// embed a query in 5.5 ms instead of 7.3 and ingest 104 memories/s instead of 76
    /// (`engram bench recall`), and more would take cores from the agent being served.
    pub embed_threads: usize,
    /// How long a server's first search waits for the embedding model still loading in the
    /// background, in milliseconds (default 5000; 0 never waits). A search that had to go
    /// without it says so in its result (`search: "lexical"`, `lexical_reason`).
    pub first_recall_wait_ms: u64,
    /// When a server loads the embedding model (seed B's `ENGRAM_PRELOAD`): `background`
    /// (at start, on a thread of its own: the handshake never waits), `auto` (the same),
    /// `blocking` (before it answers anything) or `off` (at the first tool call).
    pub preload: String,
    /// Seconds without a tool call after which a server frees the embedding model, loading
    /// it again at the next call (seed B's `ENGRAM_IDLE_UNLOAD_SEC`); 0 (the default)
    /// keeps it for the server's life.
    pub idle_unload_sec: u64,
    /// Places of a recall result kept for standing instructions and preferences that apply
    /// to the query (`engram_core::standing`), right after the best hit, when the query
    /// asks for help or work (`standing::asks_for_help`); never all of it. Default 1; 0
    /// turns it off.
    pub standing_places: usize,
    /// A standing instruction takes its place only when its absolute relevance to the
    /// query (the larger of coverage and the calibrated cosine) is at least this.
    pub standing_min_relevance: f64,
    /// How candidate sources fuse into one relevance: `max`, `weighted` or `rrf`.
    pub fusion: Fusion,
    /// Candidates taken from each source before ranking (B: 50).
    pub candidate_k: usize,
    /// RRF constant (B: 60).
    pub rrf_k: f64,
    /// Event weight of a recall hit (B: 0.3).
    pub recall_hit_weight: f64,
    /// Event weight of a reinforce at strength 1 (B: 1.0).
    pub reinforce_weight: f64,
    /// Reinforce strength is clamped to `[reinforce_strength_min, reinforce_strength_max]` (B: 0.1–3.0).
    pub reinforce_strength_min: f64,
    pub reinforce_strength_max: f64,
    /// Co-recall link increment per reinforce together, and its cap (B: 0.1, 1.0).
    pub colink_increment: f64,
    pub colink_max: f64,
    /// Fast recall deepens itself when its best raw score is below this (B: 0.35).
    pub deep_score_threshold: f64,
    /// Deep recall tries exhaustive when its best raw score is below this (B: 0.30).
    pub exhaustive_score_threshold: f64,
    /// Exhaustive recall drops hits whose relevance is below this.
    pub exhaustive_min_relevance: f64,
    /// Spreading activation: hops (B: 2) and decay per hop (B: 0.7).
    pub max_hops: usize,
    pub hop_decay: f64,
    /// A correction's importance is at least this (B: 7 of 10).
    pub correction_min_importance: f64,
    /// Importance of a memory stored without one.
    pub default_importance: f64,
    /// ACT-R parameters.
    pub actr: ActrParams,
    /// Resolve each write against similar memories: reinforce, merge, supersede (on by
    /// default; `false` stores every distinct text as a new memory).
    pub resolve: bool,
    /// The similarity bands resolution uses (`[resolution]`).
    pub resolution: crate::resolve::Bands,
    /// Whether a write through seed C's profile (`mem_save`) may supersede a memory it
    /// contradicts. Off by default, as in C: the conflict is left pending for `mem_judge`,
    /// which C's protocol tells agents to call. Native and B/A profiles supersede.
    pub compat_c_auto_supersede: bool,
    /// Semantic links made when a memory is written: at most this many neighbours (A: 5).
    pub max_semantic_links: usize,
    /// A model's vectors are searched through an approximate (HNSW) index once there are
    /// at least this many of them, and by an exact scan below; 0 never uses the index.
    /// (The index needs a build with the `ann` feature, the default.)
    pub ann_threshold: usize,
    /// How the HNSW index holds vectors in memory: `f32`, `f16` (half the memory) or `i8`.
    /// The database always keeps full f32 vectors.
    pub ann_quantization: AnnQuantization,
    /// How many candidates an HNSW search explores: wider is closer to exact and slower.
    pub ann_ef_search: usize,
    /// Hours between maintenance runs inside a long-running server (A: 12; 0 = never).
    pub maintenance_interval_hours: f64,
    /// Maintenance archives memories whose strength (A's formula) fell below this (A: 0.05).
    pub archive_strength: f64,
    /// Maintenance consolidates clusters at least this close: calibrated cosine units
    /// (1 = paraphrase) with a model, word overlap without one.
    pub consolidate_cosine: f64,
    pub consolidate_lexical: f64,
    /// B's consolidation candidates: episodes at least this many days old.
    pub consolidate_min_age_days: f64,
    /// The Markdown vault: `on` (default) writes every memory as a file, `off` does not.
    pub vault: Switch,
    /// Where the vault lives; empty means `ENGRAM_HOME/memories` (`ENGRAM_VAULT_DIR`).
    pub vault_dir: String,
    /// How vault files are laid out and written: `engram` (engram's folders and keys), `b`
    /// (seed B's: `knowledge/`, `preferences/`, `projects/`, `episodes/YYYY/MM/`, B's front
    /// matter, so B on another machine and B-keyed tools still read the folder), or `auto`
    /// (default: `b` when the vault folder holds B's folders, else `engram`).
    pub vault_format: VaultFormat,
    /// At start, files edited or added by hand: `auto` reads them in, `warn` says so, `off`
    /// does not look (B's `startup_index_check`).
    pub startup_index_check: IndexCheck,
    /// B's `[room_paths]`: directory prefix → room.
    pub room_paths: BTreeMap<String, String>,
    /// Hook settings (proactive recall, auto-encoding, nudges, perf log), top-level keys.
    #[serde(flatten)]
    pub hooks: crate::hooks::HooksConfig,
}

/// A feature that is on or off (`"on"`/`"off"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Switch {
    On,
    Off,
}

/// The layout and front matter of vault files ([`Config::vault_format`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VaultFormat {
    Auto,
    Engram,
    B,
}

/// What to do at start when the vault's files differ from the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexCheck {
    Auto,
    Warn,
    Off,
}

/// The values of [`Config::preload`].
pub const PRELOAD_MODES: [&str; 4] = ["background", "auto", "blocking", "off"];

impl Default for Config {
    fn default() -> Self {
        let w = Weights::default();
        Self {
            dynamics: DynamicsModel::Actr,
            w_relevance: w.relevance,
            w_activation: w.activation,
            w_importance: w.importance,
            relevance_norm_floor: 0.10,
            bm25_scale: 10.0,
            coverage_weight: 0.7,
            w_lexical: 0.6,
            w_session: 0.6,
            w_speaker: 0.1,
            coverage_spread: true,
            model: "all-MiniLM-L6-v2".to_string(),
            tools: String::new(),
            http_token: String::new(),
            store: String::new(),
            server_stores: 8,
            embed_threads: 2,
            first_recall_wait_ms: 5000,
            preload: "background".to_string(),
            idle_unload_sec: 0,
            standing_places: 1,
            standing_min_relevance: 0.2,
            fusion: Fusion::Weighted,
            candidate_k: 50,
            rrf_k: 60.0,
            recall_hit_weight: 0.3,
            reinforce_weight: 1.0,
            reinforce_strength_min: 0.1,
            reinforce_strength_max: 3.0,
            colink_increment: 0.1,
            colink_max: 1.0,
            deep_score_threshold: 0.35,
            exhaustive_score_threshold: 0.30,
            exhaustive_min_relevance: 0.05,
            max_hops: 2,
            hop_decay: 0.7,
            correction_min_importance: 0.7,
            default_importance: 0.5,
            actr: ActrParams::default(),
            resolve: true,
            resolution: crate::resolve::Bands::default(),
            compat_c_auto_supersede: false,
            max_semantic_links: 5,
            ann_threshold: 50_000,
            ann_quantization: AnnQuantization::F16,
            ann_ef_search: 128,
            maintenance_interval_hours: 12.0,
            archive_strength: 0.05,
            consolidate_cosine: 1.0,
            consolidate_lexical: 0.7,
            consolidate_min_age_days: 14.0,
            vault: Switch::On,
            vault_dir: String::new(),
            vault_format: VaultFormat::Auto,
            startup_index_check: IndexCheck::Auto,
            room_paths: BTreeMap::new(),
            hooks: crate::hooks::HooksConfig::default(),
        }
    }
}

impl Config {
    pub fn weights(&self) -> Weights {
        Weights {
            relevance: self.w_relevance,
            activation: self.w_activation,
            importance: self.w_importance,
        }
    }

    /// Checks ranges, naming the setting at fault.
    pub fn validate(&self) -> Result<(), InputError> {
        let store = self.store.trim();
        if !(store.is_empty()
            || store.starts_with("postgres://")
            || store.starts_with("postgresql://"))
        {
            return Err(InputError::new(
                "store",
                "must be empty (the SQLite file in the home) or a postgres:// URL",
            ));
        }
        self.hooks.validate()?;
        if !PRELOAD_MODES.contains(&self.preload.trim()) {
            return Err(InputError::new(
                "preload",
                format!(
                    "is {:?}; use one of {}",
                    self.preload,
                    PRELOAD_MODES.join(", ")
                ),
            ));
        }
        let unit = [
            ("w_relevance", self.w_relevance),
            ("w_activation", self.w_activation),
            ("w_importance", self.w_importance),
            ("relevance_norm_floor", self.relevance_norm_floor),
            ("deep_score_threshold", self.deep_score_threshold),
            (
                "exhaustive_score_threshold",
                self.exhaustive_score_threshold,
            ),
            ("exhaustive_min_relevance", self.exhaustive_min_relevance),
            ("hop_decay", self.hop_decay),
            ("coverage_weight", self.coverage_weight),
            ("w_lexical", self.w_lexical),
            ("w_session", self.w_session),
            ("w_speaker", self.w_speaker),
            ("standing_min_relevance", self.standing_min_relevance),
            ("correction_min_importance", self.correction_min_importance),
            ("default_importance", self.default_importance),
            ("colink_increment", self.colink_increment),
            ("colink_max", self.colink_max),
            ("archive_strength", self.archive_strength),
            ("consolidate_lexical", self.consolidate_lexical),
            (
                "resolution.lexical_reinforce",
                self.resolution.lexical_reinforce,
            ),
            ("resolution.lexical_merge", self.resolution.lexical_merge),
            (
                "resolution.lexical_related",
                self.resolution.lexical_related,
            ),
        ];
        for (name, v) in unit {
            if !(0.0..=1.0).contains(&v) {
                return Err(InputError::new(
                    leak(name),
                    format!("is {v}, it must be between 0 and 1"),
                ));
            }
        }
        let positive = [
            ("recall_hit_weight", self.recall_hit_weight),
            ("reinforce_weight", self.reinforce_weight),
            ("reinforce_strength_min", self.reinforce_strength_min),
            ("reinforce_strength_max", self.reinforce_strength_max),
            ("rrf_k", self.rrf_k),
            ("bm25_scale", self.bm25_scale),
            ("actr.scale", self.actr.scale),
            ("actr.min_elapsed_seconds", self.actr.min_elapsed_seconds),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(InputError::new(
                    leak(name),
                    format!("is {v}, it must be a positive number"),
                ));
            }
        }
        if self.reinforce_strength_min > self.reinforce_strength_max {
            return Err(InputError::new(
                "reinforce_strength_min",
                "must not exceed reinforce_strength_max",
            ));
        }
        if self.candidate_k == 0 || self.candidate_k > 10_000 {
            return Err(InputError::new(
                "candidate_k",
                format!("is {}, it must be 1–10000", self.candidate_k),
            ));
        }
        if self.standing_places > limits::MAX_RECALL_LIMIT {
            return Err(InputError::new(
                "standing_places",
                format!(
                    "is {}, it must be at most {}",
                    self.standing_places,
                    limits::MAX_RECALL_LIMIT
                ),
            ));
        }
        if self.server_stores == 0 || self.server_stores > 64 {
            return Err(InputError::new(
                "server_stores",
                format!("is {}, it must be 1–64", self.server_stores),
            ));
        }
        if self.ann_ef_search == 0 || self.ann_ef_search > 4096 {
            return Err(InputError::new(
                "ann_ef_search",
                format!("is {}, it must be 1–4096", self.ann_ef_search),
            ));
        }
        if self.max_hops > 4 {
            return Err(InputError::new(
                "max_hops",
                format!("is {}, it must be 0–4", self.max_hops),
            ));
        }
        for room in self.room_paths.values() {
            crate::room::normalize_room(room)?;
        }
        Ok(())
    }
}

/// Setting names are a closed set of literals; this keeps `InputError::field` a `&'static str`.
fn leak(name: &'static str) -> &'static str {
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_follow_b() {
        let c = Config::default();
        c.validate().unwrap();
        assert_eq!(
            (c.w_relevance, c.w_activation, c.w_importance),
            (0.6, 0.25, 0.15)
        );
        assert_eq!(c.deep_score_threshold, 0.35);
    }

    #[test]
    fn out_of_range_settings_are_named() {
        let c = Config {
            w_relevance: 1.5,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "w_relevance");
        let c = Config {
            candidate_k: 0,
            ..Config::default()
        };
        assert_eq!(c.validate().unwrap_err().field, "candidate_k");
    }
}
