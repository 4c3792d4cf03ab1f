//! The candidates a write offers to judge. Their rows (revisions, pending judgments) are
//! `sqlite/revisions.rs`'s, written through `storage::Tx`. Finding the neighbours is `engine/neighbours.rs`; the decisions are pure (`engram_core::plan`,
//! `engram_core::resolve`, `engram_core::contradiction`); `engine/remember` applies them.

use engram_core::{Kind, MemoryId};
use serde::Serialize;

/// Which kinds take part in resolution: decided in the core.
pub use engram_core::plan::participates;

/// A memory offered to the agent to judge against the one just written.
#[derive(Debug, Clone, Serialize)]
pub struct ConflictCandidate {
    pub id: MemoryId,
    pub title: Option<String>,
    pub kind: Kind,
    /// The first 200 characters of its content.
    pub excerpt: String,
    pub score: f64,
    /// Pass it to `judge` with a verdict.
    pub judgment_id: String,
}
