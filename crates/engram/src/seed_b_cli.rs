//! Seed B's CLI verbs: `consolidation-candidates`, `skill-candidates` and
//! `mark-consolidated`, over the same engine calls as compat-b's tools of those names
//! (`Store::consolidation_candidates`, `skill_candidates`, `mark_consolidated`), and
//! `surface`, the prompt hook's proactive recall as a dry run
//! (`engram_mcp::hooks::surface_preview`), so B's scripts and scheduled jobs keep working.
//! Thin adapters: parse, call, print.

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
pub struct SurfaceArgs {
    /// The prompt, as the agent's user would type it.
    pub text: String,
    /// Search this room only (default: the room of the current directory, as the hook).
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

/// `engram surface TEXT` (B's verb): what the prompt hook would surface for this prompt,
/// whatever `surface_mode` says, as the hook finds it (lexical, never deepened): each
/// candidate marked `◎ surfaced` or `silent`. Writes nothing: no recall events, no
/// session state, no log line, no vault read-in.
pub fn surface(a: SurfaceArgs, json: bool) -> anyhow::Result<()> {
    let home = engram_mcp::environment::home()?;
    let mut config = engram_mcp::environment::load_config(&home)?;
    config.deep_score_threshold = 0.0;
    let (h, weights) = (config.hooks.clone(), config.weights());
    let mut store = open::open_configured(&home, config)?;
    let cwd = std::env::current_dir().ok();
    let preview =
        engram_mcp::hooks::surface_preview(&mut store, &h, &weights, &a.text, cwd, a.room, &[])?;
    let rows: Vec<serde_json::Value> = preview
        .result
        .hits
        .iter()
        .zip(&preview.verdicts)
        .map(|(hit, v)| {
            serde_json::json!({
                "id": hit.memory.id, "surfaced": v.surfaced,
                "score": (v.score * 1000.0).round() / 1000.0,
                "coverage": (hit.coverage * 1000.0).round() / 1000.0,
                "kind": hit.memory.kind, "room": hit.memory.room, "content": hit.memory.content,
            })
        })
        .collect();
    let out = serde_json::json!({ "match": preview.result.matched, "candidates": rows });
    output::value(&out, json, |_| {
        if rows.is_empty() {
            return "no candidates: nothing would be surfaced".to_string();
        }
        let mut text = String::new();
        for r in &rows {
            let mark = if r["surfaced"] == true {
                "◎ surfaced"
            } else {
                "  silent  "
            };
            let content = r["content"].as_str().unwrap_or("");
            text.push_str(&format!(
                "{mark}  #{:<5} score {:.3}  {}\n",
                r["id"],
                r["score"].as_f64().unwrap_or(0.0),
                engram_core::hooks::clip(content, 80)
            ));
        }
        text.trim_end().to_string()
    });
    Ok(())
}
