//! The `engram` binary: a thin command-line adapter over `engram_store::Store`.
//!
//! Parsing and printing live here; every decision lives in the library crates. Exit codes:
//! 0 success, 2 a request the caller can fix (bad input, unknown id), 1 anything else.

mod bench;
mod bench_corpus;
mod bench_locomo;
mod bench_resolve;
mod cli;
mod doctor;
mod hook;
mod mcp;
mod models;
mod output;
mod perf;
mod seed_c_cli;
mod setup;
mod stress;
mod vault_cli;
mod web;

use anyhow::Context;
use clap::Parser;
use cli::{Cli, Command};
use engram_core::importance::parse_importance;
use engram_core::memory::IdRef;
use engram_core::{Kind, LinkKind};
use engram_store::settings::{self, Home};
use engram_store::{Mode, RecallRequest, RememberRequest, Store};
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Everything engram writes (the database and its -wal/-shm, models, logs, backups, the
    // vault) is readable by the user only: 0600 files, 0700 folders.
    #[cfg(unix)]
    // SAFETY: umask only sets the process's file-creation mask; no memory is involved.
    unsafe {
        libc::umask(0o077);
    }
    quiet_broken_pipe();
    // candle's matrix multiply splits its work by RAYON_NUM_THREADS; it must match the
    // embedding thread count (`embed_threads`, from the environment or the config file)
    // and must be set before any thread exists, which is now.
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let configured = home()
            .ok()
            .and_then(|h| settings::load(&h.config_path(), &env_pairs()).ok())
            .map_or(engram_core::Config::default().embed_threads, |l| {
                l.config.embed_threads
            });
        let threads = match configured {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        // SAFETY: single-threaded here; nothing else reads or writes the environment yet.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", threads.to_string()) };
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        // A hook never fails its client, not even on arguments it cannot parse.
        Err(_) if std::env::args().nth(1).as_deref() == Some("hook") => return ExitCode::SUCCESS,
        Err(e) => e.exit(),
    };
    let json = cli.json;
    // Hooks always exit 0, whatever happens; doctor and setup choose their own exit code.
    match &cli.command {
        Some(Command::Hook(a)) => {
            hook::run(&a.event, a.agent.as_deref());
            return ExitCode::SUCCESS;
        }
        Some(Command::Doctor) => {
            return match doctor::run(json, true) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("error: {e:#}");
                    ExitCode::from(1)
                }
            };
        }
        _ => {}
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::from(BROKEN_PIPE_EXIT),
        Err(e) => {
            let caller = e
                .downcast_ref::<engram_store::Error>()
                .is_some_and(|s| s.is_caller_error())
                || e.downcast_ref::<engram_core::InputError>().is_some();
            let field = e
                .downcast_ref::<engram_store::Error>()
                .and_then(|s| s.field())
                .or_else(|| e.downcast_ref::<engram_core::InputError>().map(|i| i.field));
            if json {
                let v =
                    serde_json::json!({ "error": { "message": format!("{e:#}"), "field": field } });
                println!("{v}");
            }
            eprintln!("error: {e:#}");
            if caller {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// The exit status of a command whose reader went away (`engram doctor | head`): 128 +
/// SIGPIPE, what a shell reports for a process the signal stopped, without a message.
const BROKEN_PIPE_EXIT: u8 = 141;

/// `println!` panics when stdout is a closed pipe; such a panic ends the process quietly
/// with [`BROKEN_PIPE_EXIT`] instead of a panic message and exit 101. Any other panic keeps
/// the default report.
fn quiet_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if payload.contains("Broken pipe") || payload.contains("os error 32") {
            std::process::exit(i32::from(BROKEN_PIPE_EXIT));
        }
        default(info)
    }));
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<engram_store::Error>().is_some_and(|s| {
                matches!(s, engram_store::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
            })
    })
}

fn env_pairs() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with("ENGRAM_"))
        .collect()
}

/// `ENGRAM_HOME`, else seed C's `ENGRAM_DATA_DIR` (a C user's store stays where C put
/// it), else `~/.engram`.
pub(crate) fn home() -> anyhow::Result<Home> {
    let explicit = std::env::var("ENGRAM_HOME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("ENGRAM_DATA_DIR").ok());
    Ok(Home::from_env(
        explicit.as_deref(),
        std::env::var("HOME").ok().as_deref(),
    )?)
}

pub(crate) fn load_config(home: &Home) -> anyhow::Result<engram_core::Config> {
    let loaded = settings::load(&home.config_path(), &env_pairs())?;
    for k in &loaded.unknown_keys {
        eprintln!(
            "warning: {}: unknown setting `{k}` ignored",
            home.config_path().display()
        );
    }
    for k in &loaded.unknown_env {
        eprintln!("warning: environment variable {k} is not an engram setting and is ignored");
    }
    warn_seed_b_once(home, &loaded.seed_b_notes);
    Ok(loaded.config)
}

/// Seed C's `ENGRAM_PROJECT`: the server's project when `--project`/`--room` is absent.
fn env_project() -> Option<String> {
    std::env::var("ENGRAM_PROJECT")
        .ok()
        .filter(|p| !p.trim().is_empty())
}

/// Seed B's keys with no counterpart are said once per home (and again when the list
/// changes), not on every command: `ENGRAM_HOME/.seed-b-notes` holds what was said.
/// `doctor` lists them every time.
fn warn_seed_b_once(home: &Home, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    let said = home.root.join(".seed-b-notes");
    let text = notes.join("\n");
    if std::fs::read_to_string(&said).is_ok_and(|t| t == text) {
        return;
    }
    for n in notes {
        eprintln!("note: {}: {n}", home.config_path().display());
    }
    let _ = engram_store::fsutil::write_atomic(&said, text.as_bytes());
}

/// Opens the store without loading the embedding model (commands that need no search).
fn open_store() -> anyhow::Result<Store> {
    let home = home()?;
    let mut store = Store::open(&home.db_path(), load_config(&home)?)?;
    vault_cli::startup(&mut store);
    Ok(store)
}

/// Opens the store with the configured embedding model, when it is installed: remember,
/// recall and correct embed. Without a model the store works lexically.
fn open_store_with_model() -> anyhow::Result<Store> {
    let home = home()?;
    let config = load_config(&home)?;
    let embedder = match models::load(&home, &config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("warning: {e:#}; searching lexically");
            None
        }
    };
    let mut store = Store::open(&home.db_path(), config)?;
    store.set_embedder(embedder);
    vault_cli::startup(&mut store);
    Ok(store)
}

/// The caller's directory for room resolution: `--cwd`, else the shell's directory. The
/// CLI is run by a person (or a hook) in their project, so its directory means something;
/// the library never looks it up by itself.
fn caller_dir(flag: Option<PathBuf>) -> Option<PathBuf> {
    let dir = flag.or_else(|| std::env::current_dir().ok())?;
    Some(std::path::absolute(&dir).unwrap_or(dir))
}

fn ids(raw: &[String]) -> anyhow::Result<Vec<IdRef>> {
    let mut out = Vec::new();
    for r in raw {
        for part in r.split(',').filter(|p| !p.trim().is_empty()) {
            out.push(IdRef::parse(part)?);
        }
    }
    Ok(out)
}

fn content_arg(raw: String, field: &'static str) -> anyhow::Result<String> {
    if raw == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .context("reading content from stdin")?;
        return String::from_utf8(buf)
            .map_err(|_| engram_core::InputError::new(field, "stdin is not valid UTF-8").into());
    }
    Ok(raw)
}

/// Bare `engram`: help on a terminal; otherwise a client started it with no arguments
/// (seed A's client line is `{"command": "engram"}`), so serve MCP over stdio with the
/// profile [`bare_profile`] picks.
fn bare() -> anyhow::Result<()> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        use clap::CommandFactory;
        Cli::command().print_help()?;
        println!();
        return Ok(());
    }
    let home = home()?;
    let profile = bare_profile(&load_config(&home)?.tools, &home);
    run_server(profile, env_project(), None, None)
}

/// The profile a bare `engram` serves: the `tools` setting (`ENGRAM_TOOLS`) when set,
/// else `compat-a` when seed A's data sits in the home (`memories.duckdb`, `graph.json`:
/// A kept them in `~/.engram` too), else `core`.
fn bare_profile(configured: &str, home: &Home) -> String {
    let configured = configured.trim();
    if !configured.is_empty() {
        return configured.to_string();
    }
    let a_data = ["memories.duckdb", "graph.json"]
        .iter()
        .any(|f| home.root.join(f).exists());
    if a_data { "compat-a" } else { "core" }.to_string()
}

/// Runs the MCP server. Logs go to stderr (level from ENGRAM_LOG, default warn); stdout is
/// JSON-RPC only. The store opens on the first tool call.
fn run_server(
    profile: String,
    room: Option<String>,
    http: Option<std::net::SocketAddr>,
    ui: Option<bool>,
) -> anyhow::Result<()> {
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("ENGRAM_LOG").unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter)
        .try_init();
    if let Some(r) = &room {
        engram_core::room::normalize_room(r)?;
    }
    let token = load_config(&home()?)?.http_token;
    let opener: mcp::Opener = std::sync::Arc::new(open_store);
    let shared = mcp::Shared::new(opener, &profile, room)?;
    // The model loads in the background: `initialize` and the first calls never wait for it.
    {
        let shared = shared.clone();
        let home = home()?;
        let config = load_config(&home)?;
        std::thread::spawn(move || match models::load(&home, &config) {
            Ok(Some(e)) => shared.install_embedder(e),
            Ok(None) => {
                tracing::info!("no embedding model installed; recall is lexical");
                shared.model_unavailable(
                    "no embedding model is installed (`engram model pull`)".into(),
                );
            }
            Err(e) => {
                tracing::warn!("{e:#}; recall is lexical");
                shared.model_unavailable(format!("the embedding model did not load: {e:#}"));
            }
        });
    }
    // Maintenance in the background, after the model has had time to load.
    {
        let shared = shared.clone();
        std::thread::spawn(move || shared.maintenance_loop(std::time::Duration::from_secs(30)));
    }
    if http.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!(
            "engram: MCP server on stdio ({} tools), waiting for a client. Register `engram mcp` with your agent (see README); Ctrl-D quits.",
            shared.tool_names().len()
        );
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(async move {
        match http {
            None => mcp::stdio::serve(shared).await,
            Some(addr) => {
                mcp::http::serve_then(shared, addr, Some(token), |bound| {
                    if let Some(open) = ui {
                        announce_ui(bound, open)
                    }
                })
                .await
            }
        }
    })
}

/// `engram ui`: prints the UI's address on stdout and, unless `--no-open`, asks the
/// desktop to open it (a machine without a browser just keeps the printed address).
fn announce_ui(bound: std::net::SocketAddr, open: bool) {
    let url = format!("http://{bound}/ui/");
    println!("{url}");
    if !open {
        return;
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(&url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// The vault folder the configuration names (`None` with `vault = "off"`), without
/// opening the store: backups and restores copy it beside the database.
fn vault_path(home: &engram_store::settings::Home) -> anyhow::Result<Option<std::path::PathBuf>> {
    let config = load_config(home)?;
    if config.vault == engram_core::config::Switch::Off {
        return Ok(None);
    }
    let dir = config.vault_dir.trim();
    Ok(Some(if dir.is_empty() {
        home.root.join(engram_store::backup::VAULT_DIR)
    } else {
        home.root.join(dir)
    }))
}

fn set_pinned(id: &str, pin: bool, json: bool) -> anyhow::Result<()> {
    let mut store = open_store()?;
    let out = store.set_pinned(&IdRef::parse(id)?, pin)?;
    vault_cli::sync(&mut store);
    output::value(&out, json, |m| {
        format!("#{} {}", m.id, if m.pinned { "pinned" } else { "unpinned" })
    });
    Ok(())
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let json = cli.json;
    let Some(command) = cli.command else {
        return bare();
    };
    match command {
        Command::Remember(a) => {
            let content = content_arg(a.content, "content")?;
            let kind = a.kind.as_deref().map(Kind::parse).transpose()?;
            let importance = a.importance.as_deref().map(parse_importance).transpose()?;
            let metadata = match a.metadata.as_deref() {
                Some(m) => Some(serde_json::from_str(m).map_err(|e| {
                    engram_core::InputError::new("metadata", format!("is not valid JSON: {e}"))
                })?),
                None => None,
            };
            let mut store = open_store_with_model()?;
            let out = store.remember(RememberRequest {
                content,
                title: a.title,
                kind,
                importance,
                tags: a
                    .tags
                    .map(|t| {
                        t.split(',')
                            .filter(|t| !t.trim().is_empty())
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
                room: a.room,
                cwd: caller_dir(cli.cwd),
                topic_key: a.topic_key,
                pinned: a.pin,
                source: Some(a.source),
                session_id: a.session,
                metadata,
                related: ids(&a.related)?,
                resolve: if a.no_resolve { Some(false) } else { a.resolve },
                ..Default::default()
            })?;
            vault_cli::sync(&mut store);
            output::remember(&out, json);
        }
        Command::Recall(a) => {
            let mode = if a.deep {
                Mode::Deep
            } else {
                Mode::parse(&a.mode)?
            };
            let mut kinds = Vec::new();
            for k in a
                .kind
                .iter()
                .flat_map(|k| k.split(','))
                .filter(|k| !k.trim().is_empty())
            {
                kinds.push(Kind::parse(k)?);
            }
            let mut store = open_store_with_model()?;
            let req = RecallRequest {
                query: a.query,
                mode,
                limit: a.limit,
                kinds,
                room: a.room,
                cwd: caller_dir(cli.cwd),
                record_hits: !a.no_record,
                session_id: a.session,
                token_budget: a.token_budget,
                as_of: a
                    .as_of
                    .as_deref()
                    .map(|t| {
                        engram_core::time::parse(t).ok_or_else(|| {
                            engram_core::InputError::new(
                                "as_of",
                                format!("{t:?} is not an RFC 3339 time or a date"),
                            )
                        })
                    })
                    .transpose()?,
                include_superseded: a.include_superseded,
            };
            let out = store.recall(&req)?;
            output::recall(&out, json);
        }
        Command::Reinforce(a) => {
            let mut store = open_store()?;
            let out = store.reinforce(&ids(&a.ids)?, a.strength, a.session.as_deref())?;
            vault_cli::sync(&mut store);
            output::value(&out, json, |o| {
                format!(
                    "reinforced {} (event weight {:.2})",
                    output::id_list(&o.reinforced),
                    o.weight
                )
            });
        }
        Command::Correct(a) => {
            let id = IdRef::parse(&a.id)?;
            let content = content_arg(a.content, "content")?;
            let mut store = open_store_with_model()?;
            let out = store.correct(&id, &content, &a.reason, Some(&a.source))?;
            vault_cli::sync(&mut store);
            output::value(&out, json, |o| {
                format!("corrected #{} -> new memory #{}", o.old_id, o.new_id)
            });
        }
        Command::Forget(a) => {
            let mut store = open_store()?;
            let out = store.forget(&IdRef::parse(&a.id)?)?;
            vault_cli::sync(&mut store);
            output::value(&out, json, |o| {
                format!(
                    "#{} moved to the trash (was {}); `engram restore {}` brings it back",
                    o.id, o.from, o.id
                )
            });
        }
        Command::Restore(a) => {
            if let Some(from) = a.from {
                let home = home()?;
                let vault = vault_path(&home)?;
                let out = engram_store::backup::restore(
                    &home.db_path(),
                    vault.as_deref(),
                    &from,
                    a.force,
                )?;
                output::value(&out, json, |o| {
                    let mut s = format!(
                        "restored {} memories from {}",
                        o.memories,
                        o.restored_from.display()
                    );
                    if let Some(p) = &o.previous_db {
                        s += &format!("; the replaced store is kept as {}", p.display());
                    }
                    if let Some(p) = &o.previous_vault {
                        s += &format!("; the replaced vault as {}", p.display());
                    }
                    s
                });
                return Ok(());
            }
            let mut store = open_store()?;
            let id = a.id.as_deref().unwrap_or_default();
            let out = store.restore(&IdRef::parse(id)?)?;
            vault_cli::sync(&mut store);
            output::value(&out, json, |o| {
                format!("#{} restored: {} -> {}", o.id, o.from, o.to)
            });
        }
        Command::Unsupersede(a) => {
            let mut store = open_store()?;
            let out = store.unsupersede(&IdRef::parse(&a.id)?)?;
            vault_cli::sync(&mut store);
            output::value(&out, json, |o| match o.superseded_by {
                Some(by) => format!(
                    "#{} is active again (it had been superseded by #{by})",
                    o.id
                ),
                None => format!("#{} is active again", o.id),
            });
        }
        Command::Purge(a) => {
            let mut store = open_store()?;
            let out = store.purge(&IdRef::parse(&a.id)?, a.force)?;
            vault_cli::sync(&mut store);
            output::value(&out, json, |o| {
                format!(
                    "#{} ({}) deleted for good, with {} events and {} links",
                    o.id, o.uid, o.events_removed, o.links_removed
                )
            });
        }
        Command::Link(a) => {
            let kind = LinkKind::parse(&a.kind)?;
            let mut store = open_store()?;
            let out = store.link(
                &IdRef::parse(&a.src)?,
                &IdRef::parse(&a.dst)?,
                kind,
                a.weight,
            )?;
            vault_cli::sync(&mut store);
            output::value(&out, json, |o| {
                format!(
                    "linked #{} -[{} {:.2}]-> #{}",
                    o.src, o.kind, o.weight, o.dst
                )
            });
        }
        Command::Pin(a) => set_pinned(&a.id, true, json)?,
        Command::Unpin(a) => set_pinned(&a.id, false, json)?,
        Command::Show(a) => {
            let store = open_store()?;
            let out = store.show(&IdRef::parse(&a.id)?)?;
            output::show(&out, a.history, json);
        }
        Command::Explain(a) => {
            let store = open_store()?;
            let out = store.show(&IdRef::parse(&a.id)?)?;
            output::explain(&out, json);
        }
        Command::Judge(a) => {
            let mut store = open_store()?;
            let out = store.judge(engram_store::maintain::Verdict {
                judgment_id: a.judgment_id,
                relation: a.relation,
                reason: a.reason,
                evidence: a.evidence,
                confidence: a.confidence,
                actor: Some("cli".into()),
                actor_kind: Some("user".into()),
                ..Default::default()
            })?;
            output::value(&out, json, |j| {
                format!(
                    "{}: #{} {} #{}",
                    j.judgment_id,
                    j.src,
                    j.relation.as_deref().unwrap_or("?"),
                    j.dst
                )
            });
        }
        Command::Maintain(a) => {
            let mut store = open_store_with_model()?;
            if a.log {
                let runs = store.maintenance_log(20)?;
                output::value(&runs, json, |r| {
                    r.iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join("\n")
                });
            } else {
                let out = store.maintain(a.dry_run)?;
                output::maintenance(&out, json);
            }
        }
        Command::Review(a) => {
            let mut store = open_store()?;
            if let Some(id) = a.done {
                let next = store.mark_reviewed(&IdRef::parse(&id)?)?;
                output::value(&next.map(engram_core::time::format), json, |n| match n {
                    Some(t) => format!("reviewed; next review after {t}"),
                    None => "reviewed".into(),
                });
            } else {
                let items = store.review_list(a.room.as_deref(), a.limit)?;
                output::value(&items, json, |items| {
                    if items.is_empty() {
                        return "nothing is due for review".into();
                    }
                    items
                        .iter()
                        .map(|i| {
                            format!(
                                "#{} [{}] due {}: {}",
                                i.id,
                                i.kind,
                                engram_core::time::format(i.review_after),
                                output::excerpt(&i.excerpt, 100)
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                });
            }
        }
        Command::Candidates(a) => {
            let mut store = open_store_with_model()?;
            let clusters = match a.which.as_str() {
                "consolidation" => store.consolidation_candidates(a.room.as_deref())?,
                "skill" | "skills" => store.skill_candidates(a.room.as_deref())?,
                other => {
                    return Err(engram_core::InputError::new(
                        "which",
                        format!("{other:?}: use consolidation or skill"),
                    )
                    .into());
                }
            };
            output::value(&clusters, json, |cs| {
                if cs.is_empty() {
                    return "no clusters".into();
                }
                cs.iter()
                    .map(|c| {
                        format!(
                            "[{}] {}: {}",
                            c.room,
                            output::id_list(&c.ids),
                            c.excerpts
                                .iter()
                                .map(|e| output::excerpt(e, 50))
                                .collect::<Vec<_>>()
                                .join(" | ")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        Command::Search(a) => seed_c_cli::search(a, caller_dir(cli.cwd), json)?,
        Command::Save(a) => seed_c_cli::save(a, caller_dir(cli.cwd), json)?,
        Command::Timeline(a) => seed_c_cli::timeline(a, json)?,
        Command::Projects(c) => seed_c_cli::projects(c, json)?,
        Command::Conflicts(c) => seed_c_cli::conflicts(c, json)?,
        Command::Init(a) => {
            let dir =
                caller_dir(cli.cwd).ok_or_else(|| anyhow::anyhow!("init: no working directory"))?;
            seed_c_cli::init(a, &dir)?
        }
        Command::Version => println!("engram {}", env!("CARGO_PKG_VERSION")),
        Command::Stats => {
            let store = open_store_with_model()?;
            let out = store.stats()?;
            let reason = if store.embedder().is_none() {
                models::lexical_reason(&home()?, store.config())
            } else {
                None
            };
            output::stats(&out, reason.as_deref(), json);
        }
        Command::Backup(a) => {
            let home = home()?;
            let vault = vault_path(&home)?;
            let out = engram_store::backup::backup(&home.db_path(), vault.as_deref(), &a.path)?;
            output::value(&out, json, |o| {
                format!(
                    "backed up {} memories ({} bytes, schema {}) and {} vault files to {}",
                    o.memories,
                    o.bytes,
                    o.schema_version,
                    o.vault_files,
                    a.path.display()
                )
            });
        }
        Command::StressWriter(a) => {
            let mut store = open_store()?;
            stress::run(&mut store, &a.prefix, a.count, &a.room)?;
        }
        Command::Reindex => {
            let home = home()?;
            let config = load_config(&home)?;
            let mut store = Store::open(&home.db_path(), config.clone())?;
            let vault = store.vault_dir().is_some();
            if vault {
                vault_cli::reindex(&mut store, json)?;
            }
            vault_cli::reindex_vectors(&mut store, models::load(&home, &config)?, !vault, json)?;
        }
        Command::Export(a) => vault_cli::export(&open_store()?, a, json)?,
        Command::Import(a) => vault_cli::import(&mut open_store()?, a, json)?,
        Command::Bench(b) => bench::run(b, json)?,
        Command::Model(m) => models::run(m, json)?,
        Command::Mcp(a) => run_server(a.tools, a.room.or_else(env_project), None, None)?,
        Command::Serve(a) => {
            let port = std::env::var("ENGRAM_PORT").ok();
            let addr = cli::serve_addr(a.addr.as_deref(), port.as_deref())
                .map_err(|e| anyhow::anyhow!("serve: {e}"))?;
            run_server(a.tools, a.room.or_else(env_project), Some(addr), None)?
        }
        Command::Ui(a) => run_server("core".into(), None, Some(a.addr), Some(!a.no_open))?,
        Command::Setup(a) => {
            let ok = setup::run(
                setup::Options {
                    agents: match (a.agent, a.agents) {
                        (Some(one), Some(list)) => Some(format!("{one},{list}")),
                        (one, list) => one.or(list),
                    },
                    non_interactive: a.non_interactive,
                    dry_run: a.dry_run,
                    remove: a.remove,
                    no_model: a.no_model,
                },
                json,
            )?;
            if !ok {
                // The refused files are already reported (as text on stderr, or in the JSON).
                use std::io::Write;
                let _ = std::io::stdout().flush();
                std::process::exit(1);
            }
        }
        Command::Doctor | Command::Hook(_) => unreachable!("handled before run"),
        Command::Context(a) => {
            let store = open_store()?;
            let b = store.context(&engram_store::ContextRequest {
                room: a.room,
                cwd: caller_dir(cli.cwd),
                max_bytes: a.max_bytes,
                token_budget: a.token_budget,
            })?;
            output::value(&b, json, |b| b.text.trim_end().to_string());
        }
    }
    Ok(())
}
