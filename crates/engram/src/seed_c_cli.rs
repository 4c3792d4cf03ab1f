//! Seed C's CLI verbs (`engram search`, `save`, `timeline`, `projects`, `conflicts`,
//! `init`, `version`): each runs the same `compat_c` adapter as C's MCP tool over the
//! shell's store, and prints its text (or, with `--json`, its structured result).

use clap::{Args, Subcommand};
use engram_mcp::compat_c;
use engram_mcp::tools::{Ctx, Dialect, ToolError};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct SearchArgs {
    pub query: String,
    #[arg(long = "type")]
    pub kind: Option<String>,
    #[arg(long)]
    pub project: Option<String>,
    #[arg(long)]
    pub scope: Option<String>,
    #[arg(long)]
    pub limit: Option<usize>,
}

#[derive(Args, Debug)]
pub struct SaveArgs {
    pub title: String,
    pub content: String,
    #[arg(long = "type")]
    pub kind: Option<String>,
    #[arg(long)]
    pub project: Option<String>,
    #[arg(long)]
    pub scope: Option<String>,
    #[arg(long = "topic")]
    pub topic: Option<String>,
}

#[derive(Args, Debug)]
pub struct TimelineArgs {
    pub id: i64,
    #[arg(long)]
    pub before: Option<usize>,
    #[arg(long)]
    pub after: Option<usize>,
}

#[derive(Subcommand, Debug)]
pub enum ProjectsCommand {
    /// Every project with its counts of observations, sessions and prompts.
    List,
    /// Merge spellings of one project (case, separators: `my-app`, `My_App`) into the one
    /// holding the most memories; this folder's project unless `--all`.
    Consolidate {
        #[arg(long)]
        all: bool,
        /// Print the merges; change nothing.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Subcommand, Debug)]
pub enum ConflictsCommand {
    /// One relation (its judgment id, `rel-…`) with both memories.
    Show { id: String },

    /// Relations awaiting a verdict (`--status judged` for the judged ones).
    List {
        #[arg(long)]
        project: Option<String>,
        #[arg(long, default_value = "pending")]
        status: String,
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },

    /// Judgments counted by status (pending, judged, …) and by relation.
    Stats {
        #[arg(long)]
        project: Option<String>,
    },

    /// Pairs of memories that would have been offered for judgment had each been written
    /// now (lexical, as C's scan), leaving out pairs judged already; `--apply` opens them
    /// as pending judgments for `mem_judge`. Nothing is written without `--apply`.
    Scan {
        #[arg(long)]
        project: Option<String>,
        #[arg(long)]
        apply: bool,
        /// Open at most this many judgments (C's default).
        #[arg(long, default_value_t = 100)]
        max_insert: usize,
        /// C judged pairs with an LLM here; engram does not call a model: refused, naming
        /// `mem_judge`.
        #[arg(long)]
        semantic: bool,
    },
}

#[derive(Args, Debug)]
pub struct InitArgs {
    /// The project name (default: the folder's name).
    pub name: Option<String>,
    /// Replace an existing `.engram/config.json`.
    #[arg(long)]
    pub force: bool,
}

/// Drops `None` fields so the adapter sees only what was given.
fn args(pairs: &[(&str, Value)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

/// Runs C's tool `name` on the shell's store and prints its answer.
fn run(name: &str, a: Value, cwd: Option<PathBuf>, json_out: bool) -> anyhow::Result<()> {
    // Search and save embed like engram's own recall and remember (lexical without a model).
    let mut store = if matches!(name, "mem_search" | "mem_save") {
        crate::open::open_store_with_model()?
    } else {
        crate::open::open_store()?
    };
    let spec = compat_c::tools()
        .into_iter()
        .find(|t| t.name == name)
        .expect("a compat-c tool");
    let mut a = a;
    if let (Some(d), Some(o)) = (cwd, a.as_object_mut()) {
        o.entry("cwd").or_insert(json!(d));
    }
    let project = std::env::var("ENGRAM_PROJECT").ok();
    let mut ctx = Ctx {
        store: &mut store,
        default_room: project.as_deref(),
        client: "cli",
        dialect: Dialect::NATIVE,
        doctor: None,
    };
    let out = (spec.call)(&mut ctx, a).map_err(|e: ToolError| anyhow::anyhow!(e.message))?;
    if !spec.hints.read_only {
        crate::vault_cli::sync(&mut store);
    }
    if json_out {
        println!("{out}");
    } else if let Some(t) = out["result"].as_str() {
        println!("{t}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}

pub fn search(a: SearchArgs, cwd: Option<PathBuf>, json_out: bool) -> anyhow::Result<()> {
    let v = args(&[
        ("query", json!(a.query)),
        ("type", json!(a.kind)),
        ("project", json!(a.project)),
        ("scope", json!(a.scope)),
        ("limit", json!(a.limit)),
    ]);
    run("mem_search", v, cwd, json_out)
}

pub fn save(a: SaveArgs, cwd: Option<PathBuf>, json_out: bool) -> anyhow::Result<()> {
    // On the command line the user names the project themselves, as C's CLI takes it
    // (the agent-facing tool refuses an unknown one, `unknown_project`).
    let chosen = a
        .project
        .as_ref()
        .map(|_| "user_selected_after_ambiguous_project");
    let v = args(&[
        ("title", json!(a.title)),
        ("content", json!(a.content)),
        ("type", json!(a.kind)),
        ("project", json!(a.project)),
        ("project_choice_reason", json!(chosen)),
        ("scope", json!(a.scope)),
        ("topic_key", json!(a.topic)),
    ]);
    run("mem_save", v, cwd, json_out)
}

pub fn timeline(a: TimelineArgs, json_out: bool) -> anyhow::Result<()> {
    let v = args(&[
        ("observation_id", json!(a.id)),
        ("before", json!(a.before)),
        ("after", json!(a.after)),
    ]);
    run("mem_timeline", v, None, json_out)
}

pub fn projects(c: ProjectsCommand, cwd: Option<PathBuf>, json_out: bool) -> anyhow::Result<()> {
    if let ProjectsCommand::Consolidate { all, dry_run } = c {
        return consolidate(all, dry_run, cwd, json_out);
    }
    let store = crate::open::open_store()?;
    let rooms = store.rooms()?;
    if json_out {
        println!("{}", json!(rooms));
    } else {
        for r in &rooms {
            println!(
                "{}\t{} observations\t{} sessions\t{} prompts",
                r.name, r.memories, r.sessions, r.prompts
            );
        }
    }
    Ok(())
}

/// `projects consolidate`: the merges are `core::room::consolidation_plan`'s, applied by
/// `Store::merge_rooms` (C's `mem_merge_projects`).
fn consolidate(
    all: bool,
    dry_run: bool,
    cwd: Option<PathBuf>,
    json_out: bool,
) -> anyhow::Result<()> {
    let mut store = crate::open::open_store()?;
    let rooms: Vec<(String, u64)> = store
        .rooms()?
        .into_iter()
        .map(|r| (r.name, r.memories))
        .collect();
    let mut plan = engram_core::room::consolidation_plan(&rooms);
    if !all {
        let here = match &cwd {
            Some(d) => engram_store::rooms::resolve(store.config(), None, Some(d))?.0,
            None => anyhow::bail!("projects consolidate: no working directory (or pass --all)"),
        };
        let key = engram_core::room::variant_key(&here);
        plan.retain(|(into, _)| engram_core::room::variant_key(into) == key);
    }
    let mut moved = Vec::new();
    for (into, from) in &plan {
        let n = if dry_run {
            None
        } else {
            Some(store.merge_rooms(from, into)?)
        };
        moved.push(json!({ "into": into, "from": from, "moved": n }));
    }
    if !dry_run && !plan.is_empty() {
        crate::vault_cli::sync(&mut store);
    }
    if json_out {
        println!("{}", json!({ "dry_run": dry_run, "merges": moved }));
    } else if plan.is_empty() {
        println!("No project spellings to consolidate.");
    } else {
        for m in &moved {
            let from: Vec<&str> = m["from"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match m["moved"].as_u64() {
                Some(n) => println!(
                    "Merged {} into {} ({n} memories moved)",
                    from.join(", "),
                    m["into"].as_str().unwrap_or("")
                ),
                None => println!(
                    "Would merge {} into {}",
                    from.join(", "),
                    m["into"].as_str().unwrap_or("")
                ),
            }
        }
    }
    Ok(())
}

pub fn conflicts(c: ConflictsCommand, json_out: bool) -> anyhow::Result<()> {
    let mut store = crate::open::open_store()?;
    let (project, status, limit) = match c {
        ConflictsCommand::List {
            project,
            status,
            limit,
        } => (project, status, limit),
        ConflictsCommand::Show { id } => return conflict_show(&store, &id, json_out),
        ConflictsCommand::Stats { project } => {
            return conflict_stats(&store, project.as_deref(), json_out);
        }
        ConflictsCommand::Scan {
            project,
            apply,
            max_insert,
            semantic,
        } => {
            if semantic {
                anyhow::bail!(
                    "--semantic: engram does not call a model to judge pairs; `conflicts scan --apply` opens them and the agent judges each with mem_judge"
                );
            }
            let r = store.scan_conflicts(project.as_deref(), apply, max_insert)?;
            if apply {
                crate::vault_cli::sync(&mut store);
            }
            return print_scan(&r, json_out);
        }
    };
    let js = store.judgments(project.as_deref(), Some(&status), limit)?;
    if json_out {
        println!("{}", json!(js));
    } else if js.is_empty() {
        println!("No {status} conflicts.");
    } else {
        for j in &js {
            println!(
                "{}\t#{} -> #{}\t{}\t{}",
                j.judgment_id,
                j.src,
                j.dst,
                j.relation.as_deref().unwrap_or("-"),
                j.status
            );
        }
    }
    Ok(())
}

fn conflict_stats(
    store: &engram_store::Store,
    project: Option<&str>,
    json_out: bool,
) -> anyhow::Result<()> {
    let s = store.judgment_stats(project)?;
    if json_out {
        println!("{}", json!(s));
        return Ok(());
    }
    let join = |m: &std::collections::BTreeMap<String, usize>| {
        m.iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("Conflicts: {} in all", s.total);
    if s.total > 0 {
        println!("  by status: {}", join(&s.by_status));
        println!("  by relation: {}", join(&s.by_relation));
    }
    Ok(())
}

fn print_scan(r: &engram_store::conflict_scan::ScanReport, json_out: bool) -> anyhow::Result<()> {
    if json_out {
        println!("{}", json!(r));
        return Ok(());
    }
    let verb = if r.applied {
        "opened"
    } else {
        "found (dry run: --apply opens them)"
    };
    println!(
        "Scanned {} memories; {} pair(s) to judge {verb}{}",
        r.scanned,
        r.pairs.len(),
        if r.more > 0 {
            format!("; {} more past --max-insert", r.more)
        } else {
            String::new()
        }
    );
    for p in &r.pairs {
        println!(
            "#{} -> #{}\tscore {}\t{}",
            p.src,
            p.dst,
            p.score,
            p.judgment_id.as_deref().unwrap_or("-")
        );
    }
    Ok(())
}

/// `engram init [name]`: C's `.engram/config.json` naming the project of this folder
/// (read by room detection as `project_name`). Refuses to replace one without `--force`.
pub fn init(a: InitArgs, dir: &Path) -> anyhow::Result<()> {
    let name = match a.name {
        Some(n) => n,
        None => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| anyhow::anyhow!("init: name the project (this folder has no name)"))?,
    };
    let room = engram_core::room::normalize_room(&name)?;
    let path = dir.join(".engram").join("config.json");
    if path.exists() && !a.force {
        anyhow::bail!("{} exists; pass --force to replace it", path.display());
    }
    std::fs::create_dir_all(path.parent().expect("has a parent"))?;
    let body = serde_json::to_string_pretty(&json!({ "project_name": room }))?;
    engram_store::fsutil::write_atomic(&path, format!("{body}\n").as_bytes())?;
    println!("Project {room:?} initialised in {}", path.display());
    Ok(())
}

#[derive(Args, Debug)]
pub struct SyncArgs {
    /// Apply the chunks of the folder's manifest this store has not applied yet.
    #[arg(long, conflicts_with = "status")]
    pub import: bool,
    /// Show the sync state: chunks in the folder, pending here, memories not yet in one.
    #[arg(long)]
    pub status: bool,
    /// Every project (default: the current folder's project).
    #[arg(long, conflicts_with = "project")]
    pub all: bool,
    /// One project.
    #[arg(long)]
    pub project: Option<String>,
    /// The sync folder (default: `.engram` at the root of the current git repository,
    /// else of the current folder), as C keeps it.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Seed C's cloud sync: refused (engram shares through a team server instead).
    #[arg(long, hide = true)]
    pub cloud: bool,
}

/// Why C's cloud verbs are refused, naming engram's way: a C user typing them must learn
/// what to run instead, not read "unknown command".
pub const CLOUD_REFUSAL: &str = "engram has no cloud service (seed C's `cloud` and `sync --cloud`). \
To share memories between machines or people, run engram's team server on PostgreSQL: \
`engram serve --store postgres://...` (README \"For teams\"); for C's git chunks in `.engram/`, \
run `engram sync` (and `engram sync --import` on the other machine).";

/// `engram cloud ...`: refused with [`CLOUD_REFUSAL`], whatever the subcommand.
pub fn cloud() -> anyhow::Result<()> {
    anyhow::bail!(CLOUD_REFUSAL)
}

/// `engram sync`: seed C's git-chunk sync (`engram_store::git_sync` owns the format).
pub fn sync(a: SyncArgs, cwd: Option<PathBuf>, json_out: bool) -> anyhow::Result<()> {
    if a.cloud {
        anyhow::bail!(CLOUD_REFUSAL);
    }
    let here = cwd.ok_or_else(|| anyhow::anyhow!("sync: no working directory"))?;
    let folder = a
        .dir
        .clone()
        .unwrap_or_else(|| engram_store::git_sync::folder_for(&here));
    let mut store = crate::open::open_store()?;
    let room = match (&a.project, a.all) {
        (_, true) => None,
        (Some(p), false) => Some(engram_core::room::normalize_room(p)?),
        (None, false) => Some(engram_store::rooms::resolve(store.config(), None, Some(&here))?.0),
    };
    if a.status {
        let s = store.sync_status(Some(&folder), room.as_deref())?;
        if json_out {
            println!("{}", json!(s));
            return Ok(());
        }
        println!("Sync folder: {}", folder.display());
        if !s.manifest {
            println!("No manifest yet (`engram sync` writes the first chunk).");
        }
        println!(
            "Chunks: {} in the manifest, {} pending import here{}",
            s.chunks,
            s.pending.len(),
            if s.pending.is_empty() {
                String::new()
            } else {
                format!(" ({})", s.pending.join(", "))
            }
        );
        let scope = room.as_deref().unwrap_or("all projects");
        println!("Memories not yet in a chunk: {} ({scope})", s.unexported);
        return Ok(());
    }
    if a.import {
        let r = store.sync_import(&folder)?;
        crate::vault_cli::sync(&mut store);
        if json_out {
            println!("{}", json!(r));
            return Ok(());
        }
        for w in &r.warnings {
            eprintln!("warning: {w}");
        }
        let created: Vec<String> = r.created.iter().map(|(k, n)| format!("{n} {k}")).collect();
        println!(
            "Imported {} chunk(s){}{}; {} already applied",
            r.imported.len(),
            if r.imported.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.imported.join(", "))
            },
            if created.is_empty() {
                String::new()
            } else {
                format!(": {}", created.join(", "))
            },
            r.already
        );
        return Ok(());
    }
    let by = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "engram".into());
    let r = store.sync_export(&folder, room.as_deref(), &by)?;
    if json_out {
        println!("{}", json!(r));
    } else if let Some(c) = &r.chunk {
        println!(
            "Chunk {} written to {}: {} observations, {} sessions, {} prompts",
            c.id,
            folder.display(),
            c.memories,
            c.sessions,
            c.prompts
        );
    } else {
        println!("Nothing new to sync in {}", folder.display());
    }
    Ok(())
}

fn conflict_show(store: &engram_store::Store, id: &str, json_out: bool) -> anyhow::Result<()> {
    let j = store.judgment(id)?;
    let title = |mid: i64| {
        store
            .show(&engram_core::memory::IdRef::Id(mid))
            .map(|d| {
                d.memory
                    .title
                    .unwrap_or(d.memory.content.chars().take(60).collect())
            })
            .unwrap_or_else(|_| "(deleted)".into())
    };
    let (a, b) = (title(j.src), title(j.dst));
    if json_out {
        println!(
            "{}",
            json!({ "relation": j, "source_title": a, "target_title": b })
        );
        return Ok(());
    }
    println!("{} ({})", j.judgment_id, j.status);
    println!("  #{} {a}", j.src);
    println!("  #{} {b}", j.dst);
    println!("  relation: {}", j.relation.as_deref().unwrap_or("pending"));
    if let Some(c) = j.confidence {
        println!("  confidence: {c}");
    }
    for (k, v) in [
        ("reason", &j.reason),
        ("evidence", &j.evidence),
        ("marked by", &j.actor),
    ] {
        if let Some(v) = v {
            println!("  {k}: {v}");
        }
    }
    Ok(())
}
