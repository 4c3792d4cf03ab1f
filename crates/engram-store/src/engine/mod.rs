//! The engine's operations, each as gather → decide (pure, in `engram_core`) → apply.
//!
//! `remember` lives here so far: the store gathers the write's neighbours
//! (`neighbours.rs`, shared with maintenance's consolidation), the core's
//! [`engram_core::plan`] decides what the write does, and `remember/apply.rs` writes the
//! plan in one transaction. The other operations are still in `ops.rs`.

mod neighbours;
mod remember;
