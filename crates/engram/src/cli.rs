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
    /// Where the memories live, for this command: a `postgres://USER@HOST/DB` URL for a
    /// team's server database (default: the `store` setting, `ENGRAM_STORE`, else the
    /// home's SQLite file). `engram import --store URL FILE` moves an export in.
    #[arg(long, global = true, value_name = "URL")]
    pub store: Option<String>,
    /// With no command: the MCP server over stdio when stdin is not a terminal (a client
    /// started `engram` with no arguments, as seed A's client line does), help when it is.
    #[command(subcommand)]
    pub command: Option<Command>,
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
    /// Bring a memory back from the trash or the archive; with --from, restore a backup.
    Restore(RestoreArgs),
    /// Undo a supersession: the memory is active again (the link stays as history).
    Unsupersede(IdArg),
    /// Delete a memory for good (only from the trash, unless --force).
    Purge(PurgeArgs),
    /// Link two memories.
    Link(LinkArgs),
    /// Pin a memory so it leads every briefing.
    Pin(IdArg),
    /// Unpin a memory.
    Unpin(IdArg),
    /// Show a memory with its activation, events and links (--history: its earlier texts).
    Show(ShowArgs),
    /// Why a memory is where it is: activation history, strength, links, revisions,
    /// judgments, and the reason for its tier.
    Explain(IdArg),
    /// Record a verdict on a related memory a write offered (its judgment id).
    Judge(JudgeArgs),
    /// Consolidate near-identical memories and archive faded ones (nothing is deleted).
    Maintain(MaintainArgs),
    /// Memories due for review (decisions after 6 months, preferences after 3).
    Review(ReviewArgs),
    /// Clusters for the agent to summarise: `consolidation` (old similar episodes) or
    /// `skill` (three or more similar memories).
    Candidates(CandidatesArgs),
    /// Seed B's verb: `candidates consolidation` (old similar episodes to summarise).
    ConsolidationCandidates(crate::seed_b_cli::RoomArgs),
    /// Seed B's verb: `candidates skill` (three or more similar memories).
    SkillCandidates(crate::seed_b_cli::RoomArgs),
    /// Seed B's verb: archive summarised episodes behind their summary (`--into ID`).
    MarkConsolidated(crate::seed_b_cli::MarkConsolidatedArgs),
    /// Seed B's verb: what the prompt hook would surface for TEXT, as a dry run that
    /// writes nothing (each candidate `◎ surfaced` or `silent`).
    Surface(crate::seed_b_cli::SurfaceArgs),
    /// Counts by kind, tier and room; links and events.
    Stats,
    /// Seed C's search: its text (or --json), over engram's recall.
    Search(crate::seed_c_cli::SearchArgs),
    /// Seed C's save: a titled memory (`--type`, `--project`, `--scope`, `--topic`).
    Save(crate::seed_c_cli::SaveArgs),
    /// Seed C's timeline: the memories around one in its session.
    Timeline(crate::seed_c_cli::TimelineArgs),
    /// Seed C's projects (`list`).
    #[command(subcommand)]
    Projects(crate::seed_c_cli::ProjectsCommand),
    /// Seed C's conflicts (`list`): relations awaiting a verdict.
    #[command(subcommand)]
    Conflicts(crate::seed_c_cli::ConflictsCommand),
    /// Seed C's git-chunk sync: write new memories as a chunk in `.engram/` (or `--import`
    /// the chunks other machines wrote, or `--status`).
    Sync(crate::seed_c_cli::SyncArgs),
    /// Seed C's cloud sync: refused, naming engram's team server (`serve --store postgres://`).
    Cloud(CloudArgs),
    /// A terminal UI (seed C's `tui`): browse, search, open a memory, its history and links.
    Tui,
    /// Write `.engram/config.json` naming this folder's project (seed C's `init`).
    Init(crate::seed_c_cli::InitArgs),
    /// Print engram's version.
    Version,
    /// Serve MCP over stdio (for a client that starts engram itself).
    Mcp(McpArgs),
    /// Serve MCP over streamable HTTP at /mcp.
    Serve(ServeArgs),
    /// Open the web UI: serve it on a free loopback port, print the address, open a browser.
    Ui(UiArgs),
    /// The briefing a new session starts from (what the MCP `context` tool returns).
    Context(ContextArgs),
    /// Copy the store (and the vault) into a new folder, consistently, while others write.
    Backup(BackupArgs),
    /// Write memories in a loop, printing each acknowledged write (crash and concurrency harnesses).
    #[command(hide = true)]
    StressWriter(StressWriterArgs),
    /// Read the Markdown vault back: hand edits, new and deleted files, or a lost database.
    Reindex,
    /// Write every memory, revision, event, link, session, prompt and judgment as JSONL.
    Export(ExportArgs),
    /// Import engram's JSONL export, or another system's data (--from).
    Import(ImportArgs),
    /// A team server's people: `user add|list`, `token add|revoke` (README "For teams").
    Team(TeamArgs),
    /// Embedding models: pull, list, use.
    #[command(subcommand)]
    Model(ModelCommand),
    /// Benchmarks (timings are measured here, never asserted in tests).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Register engram with agent clients (MCP server, hooks, memory protocol), then check.
    Setup(SetupArgs),
    /// Check the configuration, store, indexes, model, vault, client registrations, latencies.
    Doctor,
    /// Run an agent hook: reads the event's JSON on stdin, always exits 0.
    Hook(HookArgs),
}

/// `engram cloud ...`: any of C's cloud subcommands and flags, taken only to be refused.
#[derive(Args, Debug)]
pub struct CloudArgs {
    /// C's cloud subcommand and its arguments (ignored: the verb is refused).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

#[derive(Args, Debug)]
pub struct SetupArgs {
    /// One client, as seed C takes it (`engram setup codex`); same names as --agents.
    #[arg(value_name = "AGENT")]
    pub agent: Option<String>,
    /// Comma-separated clients: claude, codex, gemini, cursor, opencode, antigravity
    /// (default: those detected).
    #[arg(long)]
    pub agents: Option<String>,
    /// Do not ask before writing.
    #[arg(long)]
    pub non_interactive: bool,
    /// Print the planned changes; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Undo what setup added (and only that).
    #[arg(long)]
    pub remove: bool,
    /// Do not download the embedding model.
    #[arg(long)]
    pub no_model: bool,
}

#[derive(Args, Debug)]
pub struct HookArgs {
    /// session-start, user-prompt-submit, session-end, pre-compact, subagent-stop,
    /// pre-tool-use (client spellings work too, and C's `codex-pre-tool-use`).
    pub event: String,
    /// The client running the hook: claude (default), codex, gemini, opencode.
    #[arg(long)]
    pub agent: Option<String>,
    /// The MCP profile the agent calls; `compat-c` keeps seed C's hook contracts too
    /// (session records, prompts saved, the ToolSearch bootstrap, Codex session binding).
    #[arg(long)]
    pub tools: Option<String>,
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
    /// `--resolve false` stores the text as a new memory without resolving it against
    /// similar ones (no reinforce, merge or supersede); default: the `resolve` setting.
    #[arg(long, value_name = "true|false", action = clap::ArgAction::Set)]
    pub resolve: Option<bool>,
    /// The same as `--resolve false`.
    #[arg(long = "no-resolve", conflicts_with = "resolve")]
    pub no_resolve: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The file to write (default: stdout).
    #[arg(long, short, conflicts_with = "file")]
    pub out: Option<PathBuf>,
    /// The file to write, as C's `engram export FILE` names it (the same as --out; a
    /// `.json` file named so gets C's export format, as C's verb wrote).
    pub file: Option<PathBuf>,
    /// engram (JSONL, default) or c-json (seed C's export: what C's `engram export` and
    /// `GET /export` write, and `engram import` reads back).
    #[arg(long, default_value = "engram")]
    pub format: String,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The file (or, for --from b, the folder) to import.
    pub file: PathBuf,
    /// engram (JSONL export), b (B's Markdown folder), c-db (C's SQLite file), c-json
    /// (C's export), mcp-memory (the MCP memory server's memory.json), a-jsonl (A's
    /// memories table as JSON lines). Default: told from the file itself (a folder is B's,
    /// a SQLite file C's, C's export by its keys, …).
    #[arg(long)]
    pub from: Option<String>,
    /// Put every imported memory in this room.
    #[arg(long)]
    pub room: Option<String>,
    /// With --from a-jsonl: seed A's `graph.json`, whose edges between the imported
    /// memories become links.
    #[arg(long)]
    pub graph: Option<PathBuf>,
    /// With --from a-jsonl: seed A's `tasks` table as JSON lines (`COPY tasks TO
    /// 'a-tasks.jsonl' (FORMAT json)`); each row becomes a task, and the memories whose
    /// metadata names it belong to it.
    #[arg(long)]
    pub tasks: Option<PathBuf>,
    /// Leave the imported memories without vectors (a server, or `engram reindex`, fills
    /// them later); by default they are embedded with the configured model at once.
    #[arg(long)]
    pub no_embed: bool,
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
    /// Return only as many hits as fit in this many tokens (about 4 bytes each).
    #[arg(long)]
    pub token_budget: Option<usize>,
    /// What was true at this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long, value_name = "TIME")]
    pub as_of: Option<String>,
    /// Include superseded memories in fast recall.
    #[arg(long)]
    pub include_superseded: bool,
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
pub struct ShowArgs {
    pub id: String,
    /// Also print the memory's earlier texts (revisions), oldest first.
    #[arg(long)]
    pub history: bool,
}

#[derive(Args, Debug)]
pub struct JudgeArgs {
    /// The judgment id (`rel-…`) from a write's candidates.
    pub judgment_id: String,
    /// related, compatible, scoped, conflicts_with, supersedes, not_conflict.
    pub relation: String,
    #[arg(long)]
    pub reason: Option<String>,
    #[arg(long)]
    pub evidence: Option<String>,
    /// 0–1 (default 1).
    #[arg(long)]
    pub confidence: Option<f64>,
}

#[derive(Args, Debug)]
pub struct MaintainArgs {
    /// Show what would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the log of earlier runs instead.
    #[arg(long)]
    pub log: bool,
}

#[derive(Args, Debug)]
pub struct ReviewArgs {
    /// Confirm this memory is still true (its next review moves out).
    #[arg(long, value_name = "ID")]
    pub done: Option<String>,
    #[arg(long)]
    pub room: Option<String>,
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Args, Debug)]
pub struct CandidatesArgs {
    /// `consolidation` or `skill`.
    pub which: String,
    #[arg(long)]
    pub room: Option<String>,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// The memory to bring back (42, #42 or ULID).
    #[arg(required_unless_present = "from", conflicts_with = "from")]
    pub id: Option<String>,
    /// Restore the store from a backup folder (made by `engram backup`) or database file.
    #[arg(long, value_name = "PATH")]
    pub from: Option<PathBuf>,
    /// With --from: replace a store that holds memories (it is kept as
    /// engram.db.before-restore-<timestamp>).
    #[arg(long, requires = "from")]
    pub force: bool,
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// A new (or empty) folder to write the backup into.
    pub path: PathBuf,
}

#[derive(Args, Debug)]
pub struct StressWriterArgs {
    /// Text that starts every memory (tells writers apart).
    #[arg(long, default_value = "stress")]
    pub prefix: String,
    /// Stop after this many memories (default: until killed).
    #[arg(long)]
    pub count: Option<u64>,
    #[arg(long, default_value = "stress")]
    pub room: String,
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
    /// Time from spawning `engram mcp` to its `initialize` reply.
    McpStartup(BenchStartupArgs),
    /// Embedding throughput of the configured model, batch 1 and batch 32.
    Embed(BenchEmbedArgs),
    /// Accuracy of write-path resolution (created/reinforced/merged/superseded) on
    /// labelled cases in English, Japanese and Chinese.
    Resolve(BenchResolveArgs),
    /// Latency of `engram hook user-prompt-submit` as a client spawns it.
    Hook(BenchHookArgs),
    /// Many clients at once against running servers over HTTP (remember and recall):
    /// throughput, p50/p95, errors.
    Load(BenchLoadArgs),
}

#[derive(Args, Debug)]
pub struct BenchLoadArgs {
    /// A running server, `http://HOST:PORT`; repeat for several (clients take them in turn).
    #[arg(long, required = true)]
    pub url: Vec<String>,
    #[arg(long, default_value_t = 32)]
    pub clients: usize,
    #[arg(long, default_value_t = 30)]
    pub seconds: u64,
    /// The share of requests that remember (the rest recall), 0–1.
    #[arg(long, default_value_t = 0.5)]
    pub writes: f64,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// The servers' bearer token (default: ENGRAM_HTTP_TOKEN; none on loopback).
    #[arg(long)]
    pub token: Option<String>,
}

#[derive(Args, Debug)]
pub struct BenchResolveArgs {
    /// A JSONL file of cases (default: the built-in ones).
    #[arg(long)]
    pub cases: Option<PathBuf>,
    /// Ignore the embedding model: lexical only.
    #[arg(long)]
    pub lexical: bool,
    /// The embedding model (a name or a folder); default: the configured one.
    #[arg(long)]
    pub model: Option<String>,
    /// Print every case with the measures resolution saw (JSON lines), for calibration.
    #[arg(long)]
    pub all: bool,
}

#[derive(Args, Debug)]
pub struct BenchHookArgs {
    #[arg(long, default_value_t = 1_000)]
    pub memories: usize,
    #[arg(long, default_value_t = 50)]
    pub runs: usize,
}

#[derive(Args, Debug)]
pub struct BenchStartupArgs {
    #[arg(long, default_value_t = 30)]
    pub runs: usize,
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
    /// Ignore the embedding model: lexical only.
    #[arg(long)]
    pub lexical: bool,
    /// The embedding model (a name or a folder); default: the configured one.
    #[arg(long)]
    pub model: Option<String>,
    /// Memories per `remember_batch` during ingest (1: one `remember` each, as a client
    /// writes; larger batches embed together, as `import` does).
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    /// Search vectors by exact scan even past `ann_threshold` (no HNSW index).
    #[arg(long)]
    pub exact: bool,
    /// HNSW quantisations to measure past `ann_threshold`, comma-separated (f32,f16,i8);
    /// default: the configured one. Each is built and timed on the same store.
    #[arg(long)]
    pub quantizations: Option<String>,
    /// Keep the model's vectors of the synthetic memories in FILE and reuse them on the
    /// next run (queries are always embedded by the model as they are timed).
    #[arg(long, value_name = "FILE")]
    pub vector_cache: Option<std::path::PathBuf>,
}

#[derive(Args, Debug)]
pub struct BenchEmbedArgs {
    /// Sentences to embed per measurement.
    #[arg(long, default_value_t = 256)]
    pub sentences: usize,
    #[arg(long)]
    pub model: Option<String>,
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
    /// Ignore the embedding model: lexical retrieval only.
    #[arg(long)]
    pub lexical: bool,
    /// The embedding model (a name or a folder); default: the configured one.
    #[arg(long)]
    pub model: Option<String>,
    /// Also ask each conversation up to this many questions of the *other* conversations
    /// in the file (queries its store knows nothing about), and report the `match`
    /// verdicts of both sets: how the absolute relevance scale is calibrated.
    #[arg(long, default_value_t = 0)]
    pub foreign: usize,
}

#[derive(Args, Debug)]
pub struct McpArgs {
    /// Tool profile: core (default), engineering, admin, all, compat-a, compat-b, compat-c,
    /// or a comma list of profiles and tool names.
    #[arg(long, default_value = "core")]
    pub tools: String,
    /// Room for calls that name no room and no directory (default: common).
    #[arg(long, alias = "project")]
    pub room: Option<String>,
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Serve streamable HTTP (the only transport `serve` offers; the flag documents intent).
    #[arg(long)]
    pub http: bool,
    /// Address (`HOST:PORT`) or, as seed C takes it, a port on 127.0.0.1. Default:
    /// `ENGRAM_PORT`, else 7437 (seed C's port, which its plugins call). Anything but
    /// loopback needs ENGRAM_HTTP_TOKEN.
    pub addr: Option<String>,
    /// The MCP tool profile at /mcp; default: the `tools` setting, else compat-a when
    /// seed A's files are in the home (as a bare `engram`), else core.
    #[arg(long)]
    pub tools: Option<String>,
    #[arg(long, alias = "project")]
    pub room: Option<String>,
}

#[derive(Args, Debug)]
pub struct UiArgs {
    /// Address to listen on (default: a free loopback port); anything but loopback needs
    /// ENGRAM_HTTP_TOKEN, and the page asks for it once per browser session.
    #[arg(long, default_value = "127.0.0.1:0", value_parser = parse_listen_addr)]
    pub addr: std::net::SocketAddr,
    /// Print the address without starting a browser.
    #[arg(long)]
    pub no_open: bool,
}

#[derive(Args, Debug)]
pub struct ContextArgs {
    /// The project, as seed C's `engram context PROJECT` names it: prints C's context
    /// (Recent Sessions, Prompts, Pinned, Observations), as C's verb did.
    #[arg(value_name = "PROJECT", conflicts_with = "room")]
    pub project: Option<String>,
    #[arg(long)]
    pub room: Option<String>,
    /// Budget in bytes (default 8192).
    #[arg(long)]
    pub max_bytes: Option<usize>,
    #[arg(long)]
    pub token_budget: Option<usize>,
}

#[derive(Subcommand, Debug)]
pub enum ModelCommand {
    /// Known and installed models.
    List,
    /// Download a model from the Hugging Face hub (honours HF_ENDPOINT) into ENGRAM_HOME/models.
    Pull {
        /// all-MiniLM-L6-v2 (English, default) or multilingual-e5-small (100+ languages).
        name: String,
        /// Hub mirror (default: HF_ENDPOINT, else huggingface.co).
        #[arg(long)]
        endpoint: Option<String>,
    },
    /// Switch to a model (a name or a folder) and embed every memory with it.
    Use { name: String },
}

#[derive(Args, Debug)]
pub struct TeamArgs {
    #[command(subcommand)]
    pub command: TeamCommand,
    /// The team's database: a `postgres://USER@HOST/DB` URL (default: the `store`
    /// setting, `ENGRAM_STORE`, else the home's SQLite file).
    #[arg(long, global = true)]
    pub store: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum TeamCommand {
    /// Users: `add NAME` (prints their token once), `list`.
    #[command(subcommand)]
    User(TeamUserCommand),
    /// Tokens: `add NAME` (a new token; the old one stops working), `revoke NAME`.
    #[command(subcommand)]
    Token(TeamTokenCommand),
}

#[derive(Subcommand, Debug)]
pub enum TeamUserCommand {
    /// Add a user; prints their token once (only its SHA-256 is stored).
    Add { name: String },
    /// Every user, whether their token is active, and since when.
    List,
}

#[derive(Subcommand, Debug)]
pub enum TeamTokenCommand {
    /// Issue a new token for a user; the old one stops working. Prints it once.
    Add { name: String },
    /// Revoke a user's token: requests with it get 401. Their memories stay.
    Revoke { name: String },
}

/// seed C's default port for `engram serve`.
pub const DEFAULT_PORT: u16 = 7437;

/// Where `engram serve` listens: `HOST:PORT`, a bare port (seed C's `engram serve 7437`),
/// else `ENGRAM_PORT`, else 127.0.0.1:7437.
pub fn serve_addr(
    arg: Option<&str>,
    env_port: Option<&str>,
) -> Result<std::net::SocketAddr, String> {
    let local = |p: u16| std::net::SocketAddr::from(([127, 0, 0, 1], p));
    let port = |raw: &str, what: &str| {
        raw.trim()
            .parse::<u16>()
            .map_err(|_| format!("{what} {raw:?} is neither HOST:PORT nor a port (0-65535)"))
    };
    match (
        arg.filter(|a| !a.trim().is_empty()),
        env_port.filter(|p| !p.trim().is_empty()),
    ) {
        (Some(a), _) => match parse_listen_addr(a.trim()) {
            Ok(addr) => Ok(addr),
            Err(_) => port(a, "the address").map(local),
        },
        (None, Some(p)) => port(p, "ENGRAM_PORT").map(local),
        (None, None) => Ok(local(DEFAULT_PORT)),
    }
}

/// A listen address: `IP:PORT` (`127.0.0.1:7437`, `[::1]:0`), or `localhost:PORT`, which is
/// 127.0.0.1 (no name lookup: `localhost` is loopback by definition).
pub fn parse_listen_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    if let Some((host, port)) = s.rsplit_once(':')
        && host.eq_ignore_ascii_case("localhost")
    {
        let port: u16 = port
            .parse()
            .map_err(|_| format!("{port:?} is not a port (0–65535)"))?;
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse()
        .map_err(|_| format!("{s:?} is not IP:PORT or localhost:PORT"))
}

#[cfg(test)]
mod serve_addr_tests {
    use super::serve_addr;

    #[test]
    fn address_port_env_or_seed_cs_default() {
        assert_eq!(
            serve_addr(Some("127.0.0.1:0"), Some("9")).unwrap().port(),
            0
        );
        assert_eq!(
            serve_addr(Some("8123"), None).unwrap().to_string(),
            "127.0.0.1:8123"
        );
        assert_eq!(
            serve_addr(None, Some("7500")).unwrap().to_string(),
            "127.0.0.1:7500"
        );
        assert_eq!(
            serve_addr(None, None).unwrap().to_string(),
            "127.0.0.1:7437"
        );
        let e = serve_addr(None, Some("seventy")).unwrap_err();
        assert!(e.contains("ENGRAM_PORT"), "{e}");
        assert!(serve_addr(Some("host:port"), None).is_err());
        assert_eq!(
            serve_addr(Some("localhost:0"), None).unwrap().to_string(),
            "127.0.0.1:0"
        );
        assert_eq!(
            serve_addr(Some("LOCALHOST:8123"), None)
                .unwrap()
                .to_string(),
            "127.0.0.1:8123"
        );
    }
}
