//! Command-line grammar. Seed B's spellings are accepted where they differ (`--type`,
//! `--deep`, importance 1–10).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "engram",
    version,
    about = "A local memory engine for AI agents",
    propagate_version = true
)]
pub struct Cli {
    /// Print machine-readable JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// The directory whose project decides the room (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Store a memory (an exact repeat reinforces the existing one instead).
    Remember(RememberArgs),
    /// Find memories by query, ranked by relevance, activation and importance.
    Recall(RecallArgs),
    /// Mark memories as having helped (strengthens them and links them together).
    Reinforce(ReinforceArgs),
    /// Replace a wrong memory with a corrected one; the old one is kept as superseded.
    Correct(CorrectArgs),
    /// Move a memory to the trash (restorable).
    Forget(IdArg),
    /// Bring a memory back from the trash or the archive.
    Restore(IdArg),
    /// Delete a memory for good (only from the trash, unless --force).
    Purge(PurgeArgs),
    /// Link two memories.
    Link(LinkArgs),
    /// Pin a memory so it leads every briefing.
    Pin(IdArg),
    /// Unpin a memory.
    Unpin(IdArg),
    /// Show a memory with its activation, events and links.
    Show(IdArg),
    /// Counts by kind, tier and room; links and events.
    Stats,
    /// Benchmarks (timings are measured here, never asserted in tests).
    #[command(subcommand)]
    Bench(BenchCommand),
}

#[derive(Args, Debug)]
pub struct RememberArgs {
    /// The memory's text, or `-` to read it from stdin.
    pub content: String,
    /// preference, decision, strategy, progress, handoff, fact, knowledge, pattern, config,
    /// project, assumption, failure, bugfix, episode (seed aliases accepted).
    #[arg(long, alias = "type")]
    pub kind: Option<String>,
    /// 0–1, or an integer 1–10 (seed B's scale).
    #[arg(long, allow_negative_numbers = true)]
    pub importance: Option<String>,
    /// Comma-separated tags.
    #[arg(long)]
    pub tags: Option<String>,
    /// The room (default: resolved from the directory's project, else `common`).
    #[arg(long)]
    pub room: Option<String>,
    #[arg(long)]
    pub title: Option<String>,
    #[arg(long = "topic-key")]
    pub topic_key: Option<String>,
    /// Which client wrote it.
    #[arg(long, default_value = "cli")]
    pub source: String,
    #[arg(long)]
    pub session: Option<String>,
    /// A JSON object of extra fields.
    #[arg(long)]
    pub metadata: Option<String>,
    /// Ids this memory relates to (explicit links).
    #[arg(long)]
    pub related: Vec<String>,
    /// Pin it.
    #[arg(long)]
    pub pin: bool,
}

#[derive(Args, Debug)]
pub struct RecallArgs {
    pub query: String,
    /// fast, deep or exhaustive.
    #[arg(long, default_value = "fast")]
    pub mode: String,
    /// Same as --mode deep (seed B).
    #[arg(long, conflicts_with = "mode")]
    pub deep: bool,
    #[arg(long, default_value_t = 5)]
    pub limit: usize,
    /// Only these kinds (comma-separated or repeated).
    #[arg(long, alias = "type")]
    pub kind: Vec<String>,
    /// The room to search with `common`; `*` for every room.
    #[arg(long)]
    pub room: Option<String>,
    /// Do not log the hits as recalled.
    #[arg(long)]
    pub no_record: bool,
    #[arg(long)]
    pub session: Option<String>,
}

#[derive(Args, Debug)]
pub struct ReinforceArgs {
    /// Memory ids (42, #42 or ULID; commas allowed).
    #[arg(required = true)]
    pub ids: Vec<String>,
    /// 0.1–3.0; 2–3 for decisive help.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub strength: f64,
    #[arg(long)]
    pub session: Option<String>,
}

#[derive(Args, Debug)]
pub struct CorrectArgs {
    pub id: String,
    /// The corrected text, or `-` for stdin.
    #[arg(long)]
    pub content: String,
    #[arg(long)]
    pub reason: String,
    #[arg(long, default_value = "cli")]
    pub source: String,
}

#[derive(Args, Debug)]
pub struct IdArg {
    pub id: String,
}

#[derive(Args, Debug)]
pub struct PurgeArgs {
    pub id: String,
    /// Purge even if the memory is not in the trash.
    #[arg(long)]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct LinkArgs {
    pub src: String,
    pub dst: String,
    /// explicit, related, compatible, scoped, conflicts_with, supersedes, derived_from, …
    #[arg(long, default_value = "explicit")]
    pub kind: String,
    /// 0–1 (default 1).
    #[arg(long)]
    pub weight: Option<f64>,
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Ingest rate and lexical recall latency on a synthetic store in a temporary directory.
    Recall(BenchRecallArgs),
    /// Retrieval quality on LoCoMo (Hit@k, Recall@k, MRR), lexical for now.
    Locomo(BenchLocomoArgs),
}

#[derive(Args, Debug)]
pub struct BenchRecallArgs {
    #[arg(long, default_value_t = 10_000)]
    pub memories: usize,
    #[arg(long, default_value_t = 300)]
    pub queries: usize,
    /// Recall mode to time.
    #[arg(long, default_value = "fast")]
    pub mode: String,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

#[derive(Args, Debug)]
pub struct BenchLocomoArgs {
    /// Path to a LoCoMo JSON file (e.g. ../shared/bench/locomo-dev.json).
    #[arg(long)]
    pub data: PathBuf,
    /// Only these conversations (comma-separated sample ids).
    #[arg(long)]
    pub convs: Option<String>,
    /// Write per-question results as JSONL for the reference evaluator.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// How many memories to retrieve per question.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
}
