//! Everything engram keeps as files rather than rows: the Markdown vault and its front
//! matter, JSONL export and import, the importers of other programs' data, backups, the
//! configuration file (with seed B's keys) and where each of those lives ([`home::Home`]).
//!
//! These modules share one way of writing a file ([`fsutil::write_atomic`]) and learn
//! every path from one [`home::Home`], so a second storage backend changes nothing here:
//! the vault is fed by the `changes` table, never by a write path.

pub mod backup;
pub mod frontmatter;
pub mod fsutil;
pub mod home;
pub mod importers;
mod seed_b_config;
pub mod settings;
pub mod transfer;
pub mod vault;
