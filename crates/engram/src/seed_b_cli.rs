//! Seed B's CLI verbs: `consolidation-candidates`, `skill-candidates` and
//! `mark-consolidated`, over the same engine calls as compat-b's tools of those names
//! (`Store::consolidation_candidates`, `skill_candidates`, `mark_consolidated`), so B's
//! scripts and scheduled jobs keep working. Thin adapters: parse, call, print.

use crate::{cli, commands, open, output, vault_cli};
use clap::Args;
use engram_mcp::adapt;

#[derive(Args, Debug)]
pub struct RoomArgs {
    /// Only this room (default: every room).
    #[arg(long)]
    pub room: Option<String>,
}

#[derive(Args, Debug)]
pub struct MarkConsolidatedArgs {
    /// The episodes that were summarised (42, #42 or ULIDs; comma lists too).
    #[arg(required = true)]
    pub episode_ids: Vec<String>,
    /// The memory that summarises them (B's `new_memory_id`).
    #[arg(long = "into", alias = "new-memory-id")]
    pub into: String,
}

/// `engram consolidation-candidates` (B's verb): `engram candidates consolidation`.
pub fn consolidation_candidates(a: RoomArgs, json: bool) -> anyhow::Result<()> {
    commands::candidates(
        cli::CandidatesArgs {
            which: "consolidation".into(),
            room: a.room,
        },
        json,
    )
}

/// `engram skill-candidates` (B's verb): `engram candidates skill`.
pub fn skill_candidates(a: RoomArgs, json: bool) -> anyhow::Result<()> {
    commands::candidates(
        cli::CandidatesArgs {
            which: "skill".into(),
            room: a.room,
        },
        json,
    )
}

/// `engram mark-consolidated EPISODE… --into ID`: the summarised episodes are archived
/// behind the memory that summarises them.
pub fn mark_consolidated(a: MarkConsolidatedArgs, json: bool) -> anyhow::Result<()> {
    let episodes = adapt::id_list(&a.episode_ids)?;
    let into = engram_core::memory::IdRef::parse(&a.into)?;
    let mut store = open::open_store()?;
    let done = store.mark_consolidated(&episodes, &into)?;
    vault_cli::sync(&mut store);
    output::value(&done, json, |d| {
        format!("consolidated {} into {}", output::id_list(d), a.into.trim())
    });
    Ok(())
}
