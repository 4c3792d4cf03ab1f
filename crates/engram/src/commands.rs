//! The verbs of `engram` other than the servers and the hooks: each parses its flags
//! through the shared adapter layer (`engram_mcp::adapt`), makes one `Store` call, syncs
//! the vault after a write and prints through [`crate::output`]. `main.rs` only dispatches.

use crate::cli;
use crate::open::{caller_dir, content_arg, open_store, open_store_with_model, vault_path};
use crate::{models, output, setup, vault_cli};
use engram_core::LinkKind;
use engram_core::memory::IdRef;
use engram_mcp::adapt;
use engram_mcp::environment::{home, load_config};
use engram_store::{Mode, RecallRequest, RememberRequest};
use std::path::PathBuf;

/// `engram remember`: one write through the engine, then the vault sync.
pub fn remember(a: cli::RememberArgs, cwd: Option<PathBuf>, json: bool) -> anyhow::Result<()> {
    let content = content_arg(a.content, "content")?;
    let kind = a
        .kind
        .as_deref()
        .map(engram_core::Kind::parse)
        .transpose()?;
    let importance = adapt::importance_text(a.importance.as_deref())?;
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
        cwd: caller_dir(cwd),
        topic_key: a.topic_key,
        pinned: a.pin,
        source: Some(a.source),
        session_id: a.session,
        metadata,
        related: adapt::id_list(&a.related)?,
        resolve: if a.no_resolve { Some(false) } else { a.resolve },
        ..Default::default()
    })?;
    vault_cli::sync(&mut store);
    output::remember(&out, json);
    Ok(())
}

/// `engram recall`: the query as a `RecallRequest`, the hits printed.
pub fn recall(a: cli::RecallArgs, cwd: Option<PathBuf>, json: bool) -> anyhow::Result<()> {
    let mode = if a.deep {
        Mode::Deep
    } else {
        Mode::parse(&a.mode)?
    };
    let kinds = adapt::kinds(
        a.kind.iter().flat_map(|k| k.split(',')),
        adapt::AllKinds::Refused,
    )?;
    let mut store = open_store_with_model()?;
    let req = RecallRequest {
        query: a.query,
        mode,
        limit: a.limit,
        kinds,
        room: a.room,
        cwd: caller_dir(cwd),
        record_hits: !a.no_record,
        session_id: a.session,
        token_budget: a.token_budget,
        as_of: adapt::as_of(a.as_of.as_deref())?,
        min_coverage: None,
        min_similarity: None,
        include_superseded: a.include_superseded,
        whole_records: false,
    };
    let out = store.recall(&req)?;
    output::recall(&out, json);
    Ok(())
}

/// `engram reinforce`: the memories that helped.
pub fn reinforce(a: cli::ReinforceArgs, json: bool) -> anyhow::Result<()> {
    let mut store = open_store()?;
    let out = store.reinforce(&adapt::id_list(&a.ids)?, a.strength, a.session.as_deref())?;
    vault_cli::sync(&mut store);
    output::value(&out, json, |o| {
        format!(
            "reinforced {} (event weight {:.2})",
            output::id_list(&o.reinforced),
            o.weight
        )
    });
    Ok(())
}

/// `engram correct`: a new memory supersedes the wrong one.
pub fn correct(a: cli::CorrectArgs, json: bool) -> anyhow::Result<()> {
    let id = IdRef::parse(&a.id)?;
    let content = content_arg(a.content, "content")?;
    let mut store = open_store_with_model()?;
    let out = store.correct(&id, &content, &a.reason, Some(&a.source))?;
    vault_cli::sync(&mut store);
    output::value(&out, json, |o| {
        format!("corrected #{} -> new memory #{}", o.old_id, o.new_id)
    });
    Ok(())
}

/// `engram forget`: to the trash (restorable).
pub fn forget(a: cli::IdArg, json: bool) -> anyhow::Result<()> {
    let mut store = open_store()?;
    let out = store.forget(&IdRef::parse(&a.id)?)?;
    vault_cli::sync(&mut store);
    output::value(&out, json, |o| {
        format!(
            "#{} moved to the trash (was {}); `engram restore {}` brings it back",
            o.id, o.from, o.id
        )
    });
    Ok(())
}

/// `engram restore`: a memory from the trash, or (`--from`) the whole store from a backup.
pub fn restore(a: cli::RestoreArgs, json: bool) -> anyhow::Result<()> {
    if let Some(from) = a.from {
        let home = home()?;
        let vault = vault_path(&home)?;
        let out = engram_store::backup::restore(&home.db_path(), vault.as_deref(), &from, a.force)?;
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
    Ok(())
}

/// `engram unsupersede`: the one-step undo of a supersession.
pub fn unsupersede(a: cli::IdArg, json: bool) -> anyhow::Result<()> {
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
    Ok(())
}

/// `engram purge`: the only deletion.
pub fn purge(a: cli::PurgeArgs, json: bool) -> anyhow::Result<()> {
    let mut store = open_store()?;
    let out = store.purge(&IdRef::parse(&a.id)?, a.force)?;
    vault_cli::sync(&mut store);
    output::value(&out, json, |o| {
        format!(
            "#{} ({}) deleted for good, with {} events and {} links",
            o.id, o.uid, o.events_removed, o.links_removed
        )
    });
    Ok(())
}

/// `engram link`: an explicit link between two memories.
pub fn link(a: cli::LinkArgs, json: bool) -> anyhow::Result<()> {
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
    Ok(())
}

/// `engram show`: a memory (and with `--history`, its events).
pub fn show(a: cli::ShowArgs, json: bool) -> anyhow::Result<()> {
    let store = open_store()?;
    let out = store.show(&IdRef::parse(&a.id)?)?;
    output::show(&out, a.history, json);
    Ok(())
}

/// `engram explain`: why a memory stands where it does.
pub fn explain(a: cli::IdArg, json: bool) -> anyhow::Result<()> {
    let store = open_store()?;
    let out = store.show(&IdRef::parse(&a.id)?)?;
    output::explain(&out, json);
    Ok(())
}

/// `engram judge`: a verdict on a candidate a write returned.
pub fn judge(a: cli::JudgeArgs, json: bool) -> anyhow::Result<()> {
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
    Ok(())
}

/// `engram maintain`: a maintenance run, or (`--log`) the last runs.
pub fn maintain(a: cli::MaintainArgs, json: bool) -> anyhow::Result<()> {
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
    Ok(())
}

/// `engram review`: what is due, or (`--done`) one confirmed.
pub fn review(a: cli::ReviewArgs, json: bool) -> anyhow::Result<()> {
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
    Ok(())
}

/// `engram candidates`: consolidation or skill clusters.
pub fn candidates(a: cli::CandidatesArgs, json: bool) -> anyhow::Result<()> {
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
    Ok(())
}

/// `engram stats`, with why search is lexical when it is.
pub fn stats(json: bool) -> anyhow::Result<()> {
    let store = open_store_with_model()?;
    let out = store.stats()?;
    let reason = if store.embedder().is_none() {
        models::lexical_reason(&home()?, store.config())
    } else {
        None
    };
    output::stats(&out, reason.as_deref(), json);
    Ok(())
}

/// `engram backup`: the database and the vault folder.
pub fn backup(a: cli::BackupArgs, json: bool) -> anyhow::Result<()> {
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
    Ok(())
}

/// `engram reindex`: the vault read back, then missing vectors embedded.
pub fn reindex(json: bool) -> anyhow::Result<()> {
    let home = home()?;
    let config = load_config(&home)?;
    let mut store = crate::open::open_configured(&home, config.clone())?;
    let vault = store.vault_dir().is_some();
    if vault {
        vault_cli::reindex(&mut store, json)?;
    }
    vault_cli::reindex_vectors(&mut store, models::load(&home, &config)?, !vault, json)?;
    Ok(())
}

/// `engram context`: the session briefing.
pub fn context(a: cli::ContextArgs, cwd: Option<PathBuf>, json: bool) -> anyhow::Result<()> {
    let store = open_store()?;
    // C's spelling, `engram context PROJECT`, prints C's context (what its `mem_context`
    // and `GET /context` answer); `--room` is engram's briefing.
    if let Some(project) = a.project {
        let budget = a.max_bytes.unwrap_or(16 * 1024);
        let (text, project, truncated) =
            engram_mcp::compat_c::c_context(&store, Some(project), None, false, budget)
                .map_err(|e| anyhow::anyhow!("{}", e.message))?;
        let v = serde_json::json!({ "project": project, "context": text, "truncated": truncated });
        output::value(&v, json, |v| {
            v["context"].as_str().unwrap_or("").trim_end().to_string()
        });
        return Ok(());
    }
    let b = store.context(&engram_store::ContextRequest {
        room: a.room.or(a.project),
        cwd: caller_dir(cwd),
        max_bytes: a.max_bytes,
        token_budget: a.token_budget,
    })?;
    output::value(&b, json, |b| b.text.trim_end().to_string());
    Ok(())
}

/// `engram setup`: client registrations; exits 1 when a file was refused.
pub fn setup(a: cli::SetupArgs, json: bool) -> anyhow::Result<()> {
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
    Ok(())
}

/// `engram pin` / `engram unpin`.
pub fn set_pinned(id: &str, pin: bool, json: bool) -> anyhow::Result<()> {
    let mut store = open_store()?;
    let out = store.set_pinned(&IdRef::parse(id)?, pin)?;
    vault_cli::sync(&mut store);
    output::value(&out, json, |m| {
        format!("#{} {}", m.id, if m.pinned { "pinned" } else { "unpinned" })
    });
    Ok(())
}
