//! engram's durable store and the engine every surface calls.
//!
//! [`Store`] holds one storage backend ([`storage::Backend`]: SQLite by default, WAL, a
//! busy timeout, versioned migrations; any other through [`Store::open_with`]) and
//! carries out every operation: remember, recall, reinforce, correct, forget, restore,
//! purge, link, pin, show, stats. The formulas come from `engram-core`; this crate adds
//! the I/O around them: SQL, full-text search, the clock, configuration files and room
//! detection from a caller-supplied directory. The CLI and (later) the MCP server are thin
//! adapters over this API and hold no logic of their own.

pub mod api;
pub mod browse;
mod embedding;
mod engine;
mod error;
pub mod evidence;
pub mod files;
pub mod hub;
pub mod maintain;
mod ops;
mod parts;
/// The PostgreSQL backend (issue 18): the storage interface on a server, for teams.
#[cfg(feature = "postgres")]
pub mod postgres;
mod recall;
pub mod recent;
pub mod resolution;
pub mod rooms;
mod sqlite;
// SQLite's own: the schema and its migrations, the health checks `doctor` reads (quick_check,
// FTS5 row gaps) and seed C's database converted in place. Their paths stay as they were.
use sqlite::db;
pub use sqlite::{health, seed_c};
pub mod storage;
mod store;
pub mod team;

pub use engine::{conflict_scan, tasks};
pub use error::{Error, Result};
// The file modules keep the paths they had before `files/` gathered them.
pub use embedding::EmbeddingStatus;
pub use files::{backup, frontmatter, fsutil, git_sync, importers, settings, transfer, vault};
pub use hub::{
    Briefing, ContextRequest, EngineeringStats, FailureRequest, HandoffRequest, Origin, Outcome,
    ProgressRequest, SessionInfo, SessionOutcome,
};
pub use ops::{
    CorrectOutcome, LinkOutcome, MemoryDetail, MemoryUpdate, PurgeOutcome, ReinforceOutcome,
    RememberAction, RememberOutcome, RememberRequest, Stats, TierChange,
};
pub use recall::{Hit, Match, Mode, RecallRequest, RecallResult, Via};
pub use sqlite::SqliteBackend;
pub use store::{Clock, Store, system_clock};
pub use transfer::{Batch, ExportReport, ImportReport};
pub use vault::{ReindexReport, SyncReport, VaultStatus, VaultWarning};

/// Schema version this build writes and understands.
pub const SCHEMA_VERSION: i64 = db::MIGRATIONS.len() as i64;
