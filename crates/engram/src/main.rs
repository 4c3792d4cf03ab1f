//! The `engram` binary: a thin command-line adapter over `engram_store::Store`.
//!
//! This file only dispatches: each verb is a function of [`commands`] (the store verbs),
//! [`serve`] (the servers), [`seed_c_cli`], [`vault_cli`], [`bench`], [`models`] or
//! [`setup`]; MCP and the hooks are the `engram_mcp` library's. Parsing and printing live
//! in the binary; every decision lives in the library crates. Exit codes: 0 success, 2 a
//! request the caller can fix (bad input, unknown id), 1 anything else.

mod bench;
mod bench_corpus;
mod bench_hook;
mod bench_load;
mod bench_locomo;
mod bench_resolve;
mod bench_vectors;
mod cli;
mod commands;
mod doctor;
mod models;
mod open;
mod output;
mod seed_b_cli;
mod seed_c_cli;
mod serve;
mod setup;
mod stress;
mod team_cli;
mod tui;
mod vault_cli;

use clap::Parser;
use cli::{Cli, Command};
use engram_mcp::environment::{env_pairs, env_project, home};
use engram_store::settings;
use open::caller_dir;
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
    if let Some(url) = &cli.store {
        open::set_store_flag(url.clone());
        // What reads the settings without opening a store (doctor, the hooks, the
        // benchmarks) sees the flag as `ENGRAM_STORE`.
        // SAFETY: single-threaded here; nothing else reads or writes the environment yet.
        unsafe { std::env::set_var("ENGRAM_STORE", url) };
    }
    let json = cli.json;
    // Hooks always exit 0, whatever happens; doctor and setup choose their own exit code.
    match &cli.command {
        Some(Command::Hook(a)) => {
            engram_mcp::hooks::run(&a.event, a.agent.as_deref(), a.tools.as_deref());
            return ExitCode::SUCCESS;
        }
        Some(Command::Doctor) => {
            return match doctor::run(json, true) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("error: {}", describe(&e));
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
            let message = describe(&e);
            if json {
                let v = serde_json::json!({ "error": { "message": message, "field": field } });
                println!("{v}");
            }
            eprintln!("error: {message}");
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

/// Runs one verb (hooks and doctor are handled before, for their own exit codes).
fn run(cli: Cli) -> anyhow::Result<()> {
    let json = cli.json;
    let cwd = cli.cwd;
    let Some(command) = cli.command else {
        return serve::bare();
    };
    match command {
        Command::Remember(a) => commands::remember(a, cwd, json)?,
        Command::Recall(a) => commands::recall(a, cwd, json)?,
        Command::Reinforce(a) => commands::reinforce(a, json)?,
        Command::Correct(a) => commands::correct(a, json)?,
        Command::Forget(a) => commands::forget(a, json)?,
        Command::Restore(a) => commands::restore(a, json)?,
        Command::Unsupersede(a) => commands::unsupersede(a, json)?,
        Command::Purge(a) => commands::purge(a, json)?,
        Command::Link(a) => commands::link(a, json)?,
        Command::Pin(a) => commands::set_pinned(&a.id, true, json)?,
        Command::Unpin(a) => commands::set_pinned(&a.id, false, json)?,
        Command::Show(a) => commands::show(a, json)?,
        Command::Explain(a) => commands::explain(a, json)?,
        Command::Judge(a) => commands::judge(a, json)?,
        Command::Maintain(a) => commands::maintain(a, json)?,
        Command::Review(a) => commands::review(a, json)?,
        Command::Candidates(a) => commands::candidates(a, json)?,
        Command::ConsolidationCandidates(a) => seed_b_cli::consolidation_candidates(a, json)?,
        Command::SkillCandidates(a) => seed_b_cli::skill_candidates(a, json)?,
        Command::MarkConsolidated(a) => seed_b_cli::mark_consolidated(a, json)?,
        Command::Surface(a) => seed_b_cli::surface(a, json)?,
        Command::Search(a) => seed_c_cli::search(a, caller_dir(cwd), json)?,
        Command::Save(a) => seed_c_cli::save(a, caller_dir(cwd), json)?,
        Command::Timeline(a) => seed_c_cli::timeline(a, json)?,
        Command::Projects(c) => seed_c_cli::projects(c, caller_dir(cwd.clone()), json)?,
        Command::Conflicts(c) => seed_c_cli::conflicts(c, json)?,
        Command::Sync(a) => seed_c_cli::sync(a, caller_dir(cwd), json)?,
        Command::Cloud(_) => seed_c_cli::cloud()?,
        Command::Tui => tui::run()?,
        Command::Init(a) => {
            let dir =
                caller_dir(cwd).ok_or_else(|| anyhow::anyhow!("init: no working directory"))?;
            seed_c_cli::init(a, &dir)?
        }
        Command::Version => println!("engram {}", env!("CARGO_PKG_VERSION")),
        Command::Stats => commands::stats(json)?,
        Command::Backup(a) => commands::backup(a, json)?,
        Command::StressWriter(a) => {
            let mut store = open::open_store()?;
            stress::run(&mut store, &a.prefix, a.count, &a.room)?;
        }
        Command::Reindex => commands::reindex(json)?,
        Command::Export(a) => vault_cli::export(&open::open_store()?, a, json)?,
        Command::Import(a) => {
            let mut store = if a.no_embed {
                open::open_store()?
            } else {
                open::open_store_with_model()?
            };
            vault_cli::import(&mut store, a, json)?
        }
        Command::Bench(b) => bench::run(b, json)?,
        Command::Model(m) => models::run(m, json)?,
        Command::Team(t) => team_cli::run(t, json)?,
        Command::Mcp(a) => serve::run_server(a.tools, a.room.or_else(env_project), None, None)?,
        Command::Serve(a) => serve::serve(a)?,
        Command::Ui(a) => serve::run_server("core".into(), None, Some(a.addr), Some(!a.no_open))?,
        Command::Setup(a) => commands::setup(a, json)?,
        Command::Doctor | Command::Hook(_) => unreachable!("handled before run"),
        Command::Context(a) => commands::context(a, cwd, json)?,
    }
    Ok(())
}

/// An error with its causes, each cause added only when the message does not already say
/// it: engram's errors quote their cause (`path: No such file …`), and anyhow's chain would
/// say it twice.
fn describe(e: &anyhow::Error) -> String {
    let mut message = e.to_string();
    for cause in e.chain().skip(1) {
        let c = cause.to_string();
        if !message.contains(&c) {
            message = format!("{message}: {c}");
        }
    }
    message
}
