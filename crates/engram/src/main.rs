//! The `engram` binary: a thin command-line adapter over `engram_store::Store`.
//!
//! Parsing and printing live here; every decision lives in the library crates. Exit codes:
//! 0 success, 2 a request the caller can fix (bad input, unknown id), 1 anything else.

mod bench;
mod cli;
mod output;

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
    let cli = Cli::parse();
    let json = cli.json;
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
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

fn env_pairs() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k.starts_with("ENGRAM_"))
        .collect()
}

fn open_store() -> anyhow::Result<Store> {
    let home = Home::from_env(
        std::env::var("ENGRAM_HOME").ok().as_deref(),
        std::env::var("HOME").ok().as_deref(),
    )?;
    let loaded = settings::load(&home.config_path(), &env_pairs())?;
    for k in &loaded.unknown_keys {
        eprintln!(
            "warning: {}: unknown setting `{k}` ignored",
            home.config_path().display()
        );
    }
    Ok(Store::open(&home.db_path(), loaded.config)?)
}

/// The caller's directory for room resolution: `--cwd`, else the shell's directory. The
/// CLI is run by a person (or a hook) in their project, so its directory means something;
/// the library never looks it up by itself.
fn caller_dir(flag: Option<PathBuf>) -> Option<PathBuf> {
    flag.or_else(|| std::env::current_dir().ok())
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

fn set_pinned(id: &str, pin: bool, json: bool) -> anyhow::Result<()> {
    let mut store = open_store()?;
    let out = store.set_pinned(&IdRef::parse(id)?, pin)?;
    output::value(&out, json, |m| {
        format!("#{} {}", m.id, if m.pinned { "pinned" } else { "unpinned" })
    });
    Ok(())
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let json = cli.json;
    match cli.command {
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
            let mut store = open_store()?;
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
            })?;
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
            let mut store = open_store()?;
            let req = RecallRequest {
                query: a.query,
                mode,
                limit: a.limit,
                kinds,
                room: a.room,
                cwd: caller_dir(cli.cwd),
                record_hits: !a.no_record,
                session_id: a.session,
            };
            let out = store.recall(&req)?;
            output::recall(&out, json);
        }
        Command::Reinforce(a) => {
            let mut store = open_store()?;
            let out = store.reinforce(&ids(&a.ids)?, a.strength, a.session.as_deref())?;
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
            let mut store = open_store()?;
            let out = store.correct(&id, &content, &a.reason, Some(&a.source))?;
            output::value(&out, json, |o| {
                format!("corrected #{} -> new memory #{}", o.old_id, o.new_id)
            });
        }
        Command::Forget(a) => {
            let mut store = open_store()?;
            let out = store.forget(&IdRef::parse(&a.id)?)?;
            output::value(&out, json, |o| {
                format!(
                    "#{} moved to the trash (was {}); `engram restore {}` brings it back",
                    o.id, o.from, o.id
                )
            });
        }
        Command::Restore(a) => {
            let mut store = open_store()?;
            let out = store.restore(&IdRef::parse(&a.id)?)?;
            output::value(&out, json, |o| {
                format!("#{} restored: {} -> {}", o.id, o.from, o.to)
            });
        }
        Command::Purge(a) => {
            let mut store = open_store()?;
            let out = store.purge(&IdRef::parse(&a.id)?, a.force)?;
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
            output::show(&out, json);
        }
        Command::Stats => {
            let store = open_store()?;
            let out = store.stats()?;
            output::stats(&out, json);
        }
        Command::Bench(b) => bench::run(b, json)?,
    }
    Ok(())
}
