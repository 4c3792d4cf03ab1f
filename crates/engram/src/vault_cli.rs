//! The vault and data transfer verbs: `reindex`, `export`, `import`, and the vault upkeep
//! every other verb shares (the start-of-process check, the sync after a write).

use crate::cli::{ExportArgs, ImportArgs};
use crate::output;
use engram_store::Store;
use engram_store::importers::Source;
use std::io::IsTerminal;

/// A progress bar on stderr, hidden when stderr is not a terminal or output is JSON.
pub fn progress(message: &'static str, json: bool) -> indicatif::ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{msg:20} [{bar:30}] {pos}/{len}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(message);
    bar
}

fn tick(bar: &indicatif::ProgressBar) -> impl FnMut(u64, u64) + '_ {
    move |done, total| {
        bar.set_length(total);
        bar.set_position(done);
    }
}

/// The start-of-process vault check (`startup_index_check`): warnings go to stderr, never
/// to stdout (the MCP server's stdout is JSON-RPC only). A vault problem never stops the
/// command: the database is the store of record.
pub fn startup(store: &mut Store) {
    backlog_line(store);
    let bar = progress("reading the vault", false);
    match store.vault_startup(&mut tick(&bar)) {
        Ok((report, message)) => {
            bar.finish_and_clear();
            if let Some(m) = message {
                eprintln!("warning: {m}");
            }
            if let Some(r) = report {
                for w in &r.warnings {
                    eprintln!("warning: vault: {w}");
                }
            }
        }
        Err(e) => {
            bar.finish_and_clear();
            eprintln!("warning: vault: {e}");
        }
    }
}

/// Changes pending at least this many are announced on stderr before they are written.
const BACKLOG_LINE: u64 = 1000;

/// Says on stderr (always, not only on a terminal) that a large backlog is being written,
/// so a command that takes minutes after a big import is not silent.
fn backlog_line(store: &Store) {
    if let Ok(n) = store.vault_pending()
        && n >= BACKLOG_LINE
        && let Some(dir) = store.vault_dir()
    {
        eprintln!(
            "vault: writing {n} pending change(s) into {}",
            dir.display()
        );
    }
}

/// Writes the files of what the last command changed.
pub fn sync(store: &mut Store) {
    backlog_line(store);
    let bar = progress("writing the vault", false);
    let synced = store.sync_vault_with(&mut tick(&bar));
    bar.finish_and_clear();
    match synced {
        Ok(report) => {
            for w in &report.skipped {
                eprintln!("warning: vault: {w}");
            }
        }
        Err(e) => eprintln!("warning: vault: {e}"),
    }
}

pub fn reindex(store: &mut Store, json: bool) -> anyhow::Result<()> {
    let Some(root) = store.vault_dir() else {
        anyhow::bail!("the vault is off (vault = \"off\" in config.toml); nothing to reindex");
    };
    let bar = progress("reindexing", json);
    let report = store.reindex_vault(&mut tick(&bar))?;
    bar.finish_and_clear();
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    output::value(&report, json, |r| {
        format!(
            "{}: {} files; {} unchanged, {} new, {} restored, {} updated, {} trashed, {} with changed links; {} skipped",
            root.display(),
            r.files,
            r.unchanged,
            r.created,
            r.restored,
            r.updated,
            r.trashed,
            r.links_changed,
            r.warnings.len()
        )
    });
    Ok(())
}

/// The vector half of `reindex`: embeds what lacks a vector of the configured model, then
/// builds and saves the HNSW index when the store is past `ann_threshold`. Reported on
/// stdout when it is all `reindex` does (`main`), else on stderr after the vault report.
pub fn reindex_vectors(
    store: &mut Store,
    model: Option<std::sync::Arc<dyn engram_core::embed::Embedder>>,
    main: bool,
    json: bool,
) -> anyhow::Result<()> {
    let Some(model) = model else {
        if main {
            anyhow::bail!("no vault and no embedding model: nothing to reindex");
        }
        return Ok(());
    };
    let model_id = model.model_id().to_string();
    store.set_embedder(Some(model));
    let bar = progress("embedding", json);
    let embedded = store.embed_missing(|n| bar.inc(n as u64))?;
    bar.finish_and_clear();
    let indexed = store.build_vector_index()?;
    let (vectors, _) = store.vector_search_state().unwrap_or((0, false));
    let report = serde_json::json!({
        "model": model_id,
        "embedded": embedded,
        "vectors": vectors,
        "hnsw_index": indexed.is_some(),
    });
    let line = format!(
        "{model_id}: {embedded} memories embedded; {vectors} vectors, {}",
        if indexed.is_some() {
            "HNSW index built and saved"
        } else {
            "searched by exact scan (below ann_threshold)"
        }
    );
    if main {
        output::value(&report, json, |_| line.clone());
    } else if !json {
        eprintln!("{line}");
    }
    Ok(())
}

pub fn export(store: &Store, mut a: ExportArgs, json: bool) -> anyhow::Result<()> {
    // C's `engram export FILE` names the file without a flag; a `.json` file named so is
    // C's export (C wrote `engram-export.json`; engram's own is JSON lines, `.jsonl`).
    let c_named = a.format == "engram"
        && a.file
            .as_ref()
            .is_some_and(|f| f.extension().is_some_and(|e| e == "json"));
    if c_named {
        a.format = "c-json".into();
    }
    a.out = a.out.take().or(a.file.take());
    match a.format.as_str() {
        "engram" | "jsonl" => {}
        "c-json" | "c" => return export_c(store, a.out.as_deref(), json),
        other => anyhow::bail!("--format: {other:?} is not a format; use engram or c-json"),
    }
    let report = match &a.out {
        Some(path) => {
            let tmp = path.with_extension("jsonl.partial");
            let file = std::fs::File::create(&tmp)
                .map_err(|e| anyhow::anyhow!("{}: {e}", tmp.display()))?;
            let mut w = std::io::BufWriter::new(file);
            let r = store.export_jsonl(&mut w)?;
            let file = w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
            file.sync_all()?;
            std::fs::rename(&tmp, path)?;
            r
        }
        None => {
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            store.export_jsonl(&mut w)?
        }
    };
    if let Some(path) = &a.out {
        output::value(&report, json, |r| {
            let parts: Vec<String> = r.written.iter().map(|(k, n)| format!("{n} {k}")).collect();
            format!("exported to {}: {}", path.display(), parts.join(", "))
        });
    } else {
        let parts: Vec<String> = report
            .written
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        eprintln!("exported {}", parts.join(", "));
    }
    Ok(())
}

/// Seed C's export (`--format c-json`), written whole and renamed into place.
fn export_c(store: &Store, out: Option<&std::path::Path>, json: bool) -> anyhow::Result<()> {
    let value = engram_mcp::compat_c::export_json(store)?;
    let text = serde_json::to_string_pretty(&value)?;
    let Some(path) = out else {
        println!("{text}");
        return Ok(());
    };
    let tmp = path.with_extension("json.partial");
    std::fs::write(&tmp, text.as_bytes()).map_err(|e| anyhow::anyhow!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path)?;
    let count = |k: &str| value[k].as_array().map_or(0, Vec::len);
    let report = serde_json::json!({
        "file": path, "format": "c-json", "observations": count("observations"),
        "sessions": count("sessions"), "prompts": count("prompts"), "relations": count("relations"),
    });
    output::value(&report, json, |r| {
        format!(
            "exported to {} in seed C's format: {} observations, {} sessions, {} prompts, {} relations",
            path.display(),
            r["observations"],
            r["sessions"],
            r["prompts"],
            r["relations"]
        )
    });
    Ok(())
}

pub fn import(store: &mut Store, a: ImportArgs, json: bool) -> anyhow::Result<()> {
    // Without --from the file says what it is (C's export, C's database, B's folder, …).
    let source = match &a.from {
        Some(f) => Source::parse(f)?,
        None => Source::sniff(&a.file),
    };
    let bar = progress("importing", json);
    // Streamed (one chunk in memory at a time) for every source but seed B's folder.
    let a_files = engram_store::importers::SeedAFiles {
        graph: a.graph.as_deref(),
        tasks: a.tasks.as_deref(),
    };
    let report = if source == Source::AJsonl {
        store.import_seed_a(&a.file, a_files, a.room.as_deref(), &mut tick(&bar))?
    } else if a.graph.is_some() {
        anyhow::bail!("--graph: only with --from a-jsonl (seed A's graph.json)")
    } else if a.tasks.is_some() {
        anyhow::bail!("--tasks: only with --from a-jsonl (seed A's tasks table)")
    } else {
        store.import_file(source, &a.file, a.room.as_deref(), &mut tick(&bar))?
    };
    bar.finish_and_clear();
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if report.warnings_omitted > 0 {
        eprintln!(
            "warning: … and {} more problems like these (only the first {} are listed)",
            report.warnings_omitted,
            engram_store::transfer::MAX_WARNINGS
        );
    }
    if report.nothing_readable() {
        // A file of nothing but bad lines is a failed import, not an empty one.
        anyhow::bail!(
            "nothing imported from {}: none of its records could be read ({} problems, listed above); is it {} data?",
            a.file.display(),
            report.warnings.len() + report.warnings_omitted,
            a.from.as_deref().unwrap_or(source.name())
        );
    }
    sync(store);
    let mut report = report;
    report.embedded = embed_imported(store, &report, a.no_embed, json)?;
    output::value(&report, json, |r| {
        let kinds: std::collections::BTreeSet<&str> =
            r.created.keys().chain(r.skipped.keys()).copied().collect();
        let parts: Vec<String> = kinds
            .iter()
            .map(|k| {
                format!(
                    "{k}: {} created, {} skipped",
                    r.created_count(k),
                    r.skipped_count(k)
                )
            })
            .collect();
        let vectors = match r.embedded {
            Some(n) => format!("; {n} memories embedded"),
            None if r.created_count("memories") > 0 => "; not embedded: recall by meaning finds them once a server or `engram reindex` has given them vectors".into(),
            None => String::new(),
        };
        if parts.is_empty() {
            "nothing to import".to_string()
        } else {
            format!("imported {}{vectors}", parts.join("; "))
        }
    });
    Ok(())
}

/// Gives the memories an import created vectors of the configured model, so that recall by
/// meaning finds them at once (before, they waited for a server's background fill and were
/// searched by words only). `None`: no model loaded, `--no-embed`, or nothing created.
fn embed_imported(
    store: &mut Store,
    report: &engram_store::ImportReport,
    no_embed: bool,
    json: bool,
) -> anyhow::Result<Option<usize>> {
    if no_embed || store.embedder().is_none() || report.created_count("memories") == 0 {
        return Ok(None);
    }
    let bar = progress("embedding", json);
    let n = store.embed_missing(|n| bar.inc(n as u64))?;
    bar.finish_and_clear();
    Ok(Some(n))
}
