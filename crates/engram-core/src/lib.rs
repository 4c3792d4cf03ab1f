//! engram's pure domain.
//!
//! Everything here is deterministic and free of I/O: no files, no clock, no database,
//! no environment. Times come in as Unix milliseconds from the caller. That keeps the
//! formulas (activation, strength, scoring) testable against their calibration points
//! and lets every surface (CLI, MCP, hooks) share them through the store crate.

pub mod activity;
pub mod config;
pub mod conflicts;
pub mod contradiction;
pub mod coverage;
pub mod curve;
pub mod dynamics;
pub mod embed;
pub mod error;
pub mod hooks;
pub mod hub;
pub mod identifiers;
pub mod importance;
pub mod kind;
pub mod limits;
pub mod memory;
pub mod parts;
pub mod plan;
pub mod ranking;
pub mod recall_plan;
pub mod redact;
pub mod relevance;
pub mod resolve;
pub mod room;
pub mod scoring;
pub mod seed_c_hooks;
pub mod speaker;
pub mod standing;
pub mod subject;
mod subject_cjk;
pub mod task;
pub mod team;
pub mod text;
pub mod time;
pub mod topic;

pub use config::Config;
pub use error::InputError;
pub use kind::{DecayClass, EventKind, Kind, LinkKind, Tier};
pub use memory::{Memory, MemoryId};

/// Milliseconds since the Unix epoch, UTC. The only time type the core knows.
pub type Millis = i64;

/// One day in milliseconds.
pub const DAY_MS: Millis = 86_400_000;
