//! Evidence: what a write said when resolution folded it into another memory.
//!
//! DESIGN.md's rule is that nothing is lost. A reinforce keeps the memory's text and a
//! merge rewrites it, so the incoming write's own words, title, source and time would
//! vanish; they are kept here instead (one row per folded write), shown by
//! `show --history`, carried by export and import and listed in the vault file. Only a
//! write equal to the memory after normalisation (the exact-duplicate path) leaves none:
//! its words are the memory's words.
//!
//! `unsupersede` (the other half of "a supersession is reversible") is in
//! `engine/tiers.rs`; the rows are `sqlite/evidence.rs`'s.

use crate::{Result, Store};
use engram_core::MemoryId;
use serde::Serialize;

pub use crate::storage::rows::Evidence;

/// What `unsupersede` did.
#[derive(Debug, Clone, Serialize)]
pub struct Unsupersede {
    pub id: MemoryId,
    pub uid: String,
    /// The memory that had replaced it (still active; the link stays as history).
    pub superseded_by: Option<MemoryId>,
}

impl Store {
    /// Every evidence row of a memory, oldest first.
    pub fn evidence_of(&self, id: MemoryId) -> Result<Vec<Evidence>> {
        self.reads().evidence(id)
    }
}
