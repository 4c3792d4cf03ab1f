//! `engram doctor [--json]`: one row per check, `OK`, `NG` (needs fixing) or `--` (not
//! applicable or informational). Exits nonzero when any row is NG.

use crate::setup::{self, Client, edit};
use engram_store::settings::Home;
use serde_json::{Value, json};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Status {
    #[serde(rename = "OK")]
    Ok,
    #[serde(rename = "NG")]
    Ng,
    #[serde(rename = "--")]
    Na,
}

impl Status {
    fn mark(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Ng => "NG",
            Status::Na => "--",
        }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub check: String,
    pub status: Status,
    pub detail: String,
}

fn row(rows: &mut Vec<Row>, check: impl Into<String>, status: Status, detail: impl Into<String>) {
    rows.push(Row {
        check: check.into(),
        status,
        detail: detail.into(),
    });
}

/// Every check, in order.
pub fn rows() -> Vec<Row> {
    let mut rows = Vec::new();
    let home = match engram_mcp::environment::home() {
        Ok(h) => h,
        Err(e) => {
            row(&mut rows, "home", Status::Ng, format!("{e:#}"));
            return rows;
        }
    };
    let config = config_rows(&mut rows, &home);
    if let Some(config) = &config {
        store_rows(&mut rows, &home, config);
    }
    if let Ok(user) = setup::user_home() {
        for c in setup::ALL {
            client_rows(&mut rows, &user, c);
        }
    }
    seed_a_row(&mut rows, &home, config.as_ref());
    perf_rows(&mut rows, &home);
    let log = home.logs().join("hooks.log");
    if let Ok(text) = std::fs::read_to_string(&log) {
        let last = text.lines().last().unwrap_or("");
        row(
            &mut rows,
            "hooks log",
            Status::Na,
            format!(
                "{} errors logged in {}; last: {last}",
                text.lines().count(),
                log.display()
            ),
        );
    }
    rows
}

fn config_rows(rows: &mut Vec<Row>, home: &Home) -> Option<engram_core::Config> {
    let path = home.config_path();
    let env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("ENGRAM_"))
        .collect();
    match engram_store::settings::load(&path, &env) {
        Ok(loaded) => {
            let mut notes = Vec::new();
            if !loaded.unknown_keys.is_empty() {
                notes.push(format!(
                    "unknown keys ignored: {}",
                    loaded.unknown_keys.join(", ")
                ));
            }
            if !loaded.unknown_env.is_empty() {
                notes.push(format!(
                    "unknown variables ignored: {}",
                    loaded.unknown_env.join(", ")
                ));
            }
            let (status, detail) = if !notes.is_empty() {
                (
                    Status::Ng,
                    format!("{}: {}", path.display(), notes.join("; ")),
                )
            } else if path.exists() {
                (Status::Ok, format!("{} parses", path.display()))
            } else {
                (Status::Ok, format!("{} absent: defaults", path.display()))
            };
            row(rows, "config", status, detail);
            if !loaded.seed_b_notes.is_empty() {
                row(
                    rows,
                    "config: seed B keys",
                    Status::Na,
                    loaded.seed_b_notes.join("; "),
                );
            }
            Some(loaded.config)
        }
        Err(e) => {
            row(rows, "config", Status::Ng, format!("{e}"));
            None
        }
    }
}

fn store_rows(rows: &mut Vec<Row>, home: &Home, config: &engram_core::Config) {
    if !config.store.trim().is_empty() {
        return server_store_rows(rows, home, config);
    }
    let db = home.db_path();
    if !db.exists() {
        row(
            rows,
            "store",
            Status::Na,
            format!("{} not created yet (created on first use)", db.display()),
        );
        vault_row(rows, home, config, None);
        model_rows(rows, home, config, None);
        return;
    }
    let store = match engram_store::Store::open(&db, config.clone()) {
        Ok(s) => s,
        Err(e) => {
            row(rows, "store", Status::Ng, format!("{}: {e}", db.display()));
            return;
        }
    };
    let health = match store.health() {
        Ok(h) => h,
        Err(e) => {
            row(rows, "store", Status::Ng, format!("{}: {e}", db.display()));
            return;
        }
    };
    if health.quick_check == "ok" {
        row(
            rows,
            "store integrity",
            Status::Ok,
            format!(
                "{}: quick_check ok, {} memories",
                db.display(),
                health.memories
            ),
        );
    } else {
        row(
            rows,
            "store integrity",
            Status::Ng,
            format!("{}: quick_check: {}", db.display(), health.quick_check),
        );
    }
    let want = engram_store::SCHEMA_VERSION;
    if health.schema_version == want {
        row(rows, "schema", Status::Ok, format!("version {want}"));
    } else {
        row(
            rows,
            "schema",
            Status::Ng,
            format!(
                "version {} (this engram writes {want})",
                health.schema_version
            ),
        );
    }
    fts_row(rows, &health);
    vault_row(rows, home, config, Some((&store, health.memories)));
    // A backlog (a big import, an interrupted sync) is said, not written: doctor only reads.
    match store.vault_pending() {
        Ok(0) => {}
        Ok(n) => row(
            rows,
            "vault backlog",
            Status::Na,
            format!("{n} change(s) not written to the vault yet; the next command writes them"),
        ),
        Err(e) => row(rows, "vault backlog", Status::Ng, format!("{e}")),
    }
    model_rows(rows, home, config, Some((&store, &health)));
}

/// The full-text row: each index exists, and no memory whose text has something for an
/// index lacks its row (an English memory has no gram row, a memory of CJK and
/// punctuation alone no word row: neither is a gap), and no row outlives its memory.
fn fts_row(rows: &mut Vec<Row>, health: &engram_store::health::Health) {
    let one = |name: &str, n: Option<u64>, gaps: engram_store::health::IndexGaps| match n {
        None => (false, format!("{name} missing")),
        Some(n) if gaps.missing == 0 && gaps.orphans == 0 => (true, format!("{name} {n} rows")),
        Some(n) => (
            false,
            format!(
                "{name} {n} rows: {} memories lack theirs, {} rows of no memory",
                gaps.missing, gaps.orphans
            ),
        ),
    };
    let (a, da) = one("fts_words", health.fts_words, health.words_gaps);
    let (b, dbb) = one("fts_grams", health.fts_grams, health.grams_gaps);
    let status = if a && b { Status::Ok } else { Status::Ng };
    row(
        rows,
        "full-text index",
        status,
        format!("{da}; {dbb} for {} memories", health.memories),
    );
}

/// The vault against the store. With a store, the comparison is the store's own
/// (`vault_status`: the same walk and records the start-of-process check uses), so files
/// not read in yet (B's folder before engram's first command) are said as that, not as a
/// fault.
fn vault_row(
    rows: &mut Vec<Row>,
    home: &Home,
    config: &engram_core::Config,
    store: Option<(&engram_store::Store, u64)>,
) {
    // The same rule the store follows (`Home::vault`): `vault_dir`, else `memories/`.
    let Some(dir) = home.vault(config) else {
        row(
            rows,
            "vault",
            Status::Na,
            "vault = \"off\": no files are written",
        );
        return;
    };
    if !dir.is_dir() {
        row(
            rows,
            "vault",
            Status::Na,
            format!("{} not built yet", dir.display()),
        );
        return;
    }
    let Some((store, live)) = store else {
        return row(
            rows,
            "vault",
            Status::Na,
            format!("{}, no store yet", dir.display()),
        );
    };
    let st = match store.vault_status() {
        Ok(st) => st,
        Err(e) => return row(rows, "vault", Status::Ng, format!("{}: {e}", dir.display())),
    };
    if !st.is_clean() {
        // Neither OK nor NG: B's folder before engram's first command, or a file that does
        // not parse (the reading command names it), is the user's to look at, not a fault.
        let then = match config.startup_index_check {
            engram_core::config::IndexCheck::Auto => {
                "the next engram command reads them in (`engram reindex` names any that do not parse)"
            }
            _ => "run `engram reindex` to read them in",
        };
        let what = format!(
            "{} file(s) new, changed or unreadable and {} gone in {} since engram last read it",
            st.changed,
            st.gone,
            dir.display()
        );
        return row(rows, "vault", Status::Na, format!("{what}; {then}"));
    }
    if st.files as u64 == live {
        row(
            rows,
            "vault",
            Status::Ok,
            format!("{live} files for {live} memories"),
        )
    } else {
        row(
            rows,
            "vault",
            Status::Ng,
            format!(
                "{} files in {} for {live} memories",
                st.files,
                dir.display()
            ),
        )
    }
}

fn model_rows(
    rows: &mut Vec<Row>,
    home: &Home,
    config: &engram_core::Config,
    store: Option<(&engram_store::Store, &engram_store::health::Health)>,
) {
    let name = config.model.trim();
    if name.is_empty() || name.eq_ignore_ascii_case("none") {
        row(
            rows,
            "model",
            Status::Na,
            "model = \"none\": recall is lexical",
        );
        return;
    }
    let embedder = match crate::models::load(home, config) {
        Ok(Some(e)) => e,
        Ok(None) => {
            // A folder the user named that holds no model, or a name engram cannot pull, is
            // a mistake to fix (NG); a known model not pulled yet is a choice still to make.
            let status = if crate::models::unusable_model_name(name) {
                Status::Ng
            } else {
                Status::Na
            };
            let advice = crate::models::missing_model_advice(name);
            row(
                rows,
                "model",
                status,
                format!("{advice}: recall is lexical"),
            );
            return;
        }
        Err(e) => {
            row(rows, "model", Status::Ng, format!("{e:#}"));
            return;
        }
    };
    let (id, dim) = (embedder.model_id().to_string(), embedder.dim());
    let Some((_, health)) = store else {
        row(rows, "model", Status::Ok, format!("{id} loads, {dim}-d"));
        return;
    };
    let mismatch: Vec<String> = health
        .vectors
        .iter()
        .filter(|v| v.model == id && v.dim != dim)
        .map(|v| format!("{} vectors of {}-d", v.count, v.dim))
        .collect();
    let mine: u64 = health
        .vectors
        .iter()
        .filter(|v| v.model == id && v.dim == dim)
        .map(|v| v.count)
        .sum();
    let others: u64 = health
        .vectors
        .iter()
        .filter(|v| v.model != id)
        .map(|v| v.count)
        .sum();
    let mut detail = format!(
        "{id} loads, {dim}-d; {mine} vectors of it for {} memories",
        health.live_memories
    );
    if others > 0 {
        detail.push_str(&format!(
            " ({others} vectors of other models, ignored until re-embedded)"
        ));
    }
    if mismatch.is_empty() {
        row(rows, "model", Status::Ok, detail);
    } else {
        row(
            rows,
            "model",
            Status::Ng,
            format!("{detail}; dimension mismatch: {}", mismatch.join(", ")),
        );
    }
}

/// The `command` of an MCP entry or hook points at an existing file (a bare name is
/// looked up on PATH).
fn command_exists(cmd: &str) -> bool {
    let p = Path::new(cmd);
    if p.is_absolute() {
        return p.is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(cmd).is_file()))
}

/// The program of a hook command line (`"<path>" hook …` or `path hook …`).
fn hook_program(command: &str) -> String {
    let c = command.trim();
    if let Some(rest) = c.strip_prefix('"') {
        rest.split('"').next().unwrap_or("").to_string()
    } else {
        c.split_whitespace().next().unwrap_or("").to_string()
    }
}

fn client_rows(rows: &mut Vec<Row>, home: &Path, c: Client) {
    let name = c.name();
    let mcp_path = c.mcp_file(home);
    let text = std::fs::read_to_string(&mcp_path).ok();
    if !c.detected(home) && text.is_none() {
        row(rows, name, Status::Na, "not installed");
        return;
    }
    mcp_row(rows, c, &mcp_path, text.as_deref());
    if let Some(path) = c.hooks_file(home) {
        hooks_row(rows, c, &path);
        if c == Client::Claude {
            seed_c_plugin_row(rows, &path);
        }
    }
    if let Some(path) = c.instructions_file(home) {
        let has = std::fs::read_to_string(&path)
            .is_ok_and(|t| t.contains(edit::BEGIN) && t.contains(edit::END));
        // A seed user's own protocol (B's `@…/MEMORY_PROTOCOL.md`, C's `mem_*` rules) is
        // one: setup left it as it is and serves that seed's profile.
        let seed = c.seed_protocol(home).filter(|(_, f)| *f == path);
        if has {
            row(
                rows,
                format!("{name}: instructions"),
                Status::Ok,
                format!("memory protocol in {}", path.display()),
            );
        } else if let Some((s, _)) = seed {
            row(
                rows,
                format!("{name}: instructions"),
                Status::Ok,
                format!(
                    "seed {s:?}'s memory protocol in {} (served by {})",
                    path.display(),
                    s.profile()
                ),
            );
        } else {
            row(
                rows,
                format!("{name}: instructions"),
                Status::Na,
                format!("no memory protocol in {}", path.display()),
            );
        }
    }
}

/// Whether the client's MCP entry names engram at a path that exists.
fn mcp_row(rows: &mut Vec<Row>, c: Client, mcp_path: &Path, text: Option<&str>) {
    let name = c.name();
    let command: Result<Option<String>, String> = match c {
        Client::Codex => match text.unwrap_or("").parse::<toml::Table>() {
            Ok(t) => Ok(t
                .get("mcp_servers")
                .and_then(|s| s.get("engram"))
                .and_then(|e| e.get("command"))
                .and_then(|c| c.as_str())
                .map(str::to_string)),
            Err(e) => Err(format!("{} does not parse: {e}", mcp_path.display())),
        },
        Client::OpenCode => crate::setup::opencode::registered_command(text)
            .map_err(|e| format!("{}: {e:#}", mcp_path.display())),
        _ => match edit::parse_json(text) {
            Ok(doc) => Ok(doc
                .get("mcpServers")
                .and_then(|s| s.get("engram"))
                .and_then(|e| e.get("command"))
                .and_then(Value::as_str)
                .map(str::to_string)),
            Err(e) => Err(format!("{}: {e:#}", mcp_path.display())),
        },
    };
    match command {
        Err(e) => row(rows, format!("{name}: MCP server"), Status::Ng, e),
        Ok(None) => row(
            rows,
            format!("{name}: MCP server"),
            Status::Na,
            format!("not registered (`engram setup --agents {name}`)"),
        ),
        Ok(Some(cmd)) if command_exists(&cmd) => row(
            rows,
            format!("{name}: MCP server"),
            Status::Ok,
            format!("{cmd} in {}", mcp_path.display()),
        ),
        Ok(Some(cmd)) => row(
            rows,
            format!("{name}: MCP server"),
            Status::Ng,
            format!(
                "stale path {cmd} in {} (run `engram setup`)",
                mcp_path.display()
            ),
        ),
    }
}

/// Whether each of the client's hook events runs engram at a path that exists.
fn hooks_row(rows: &mut Vec<Row>, c: Client, path: &Path) {
    let name = c.name();
    let text = std::fs::read_to_string(path).ok();
    match edit::parse_json(text.as_deref()) {
        Err(e) => row(
            rows,
            format!("{name}: hooks"),
            Status::Ng,
            format!("{}: {e:#}", path.display()),
        ),
        Ok(doc) => {
            let mut present = Vec::new();
            let mut stale = Vec::new();
            for (event, _, _) in c.hook_events() {
                let cmds: Vec<String> = doc
                    .get("hooks")
                    .and_then(|h| h.get(*event))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|g| g.get("hooks").and_then(Value::as_array))
                    .flatten()
                    .filter_map(|h| h.get("command").and_then(Value::as_str))
                    .filter(|c| edit::is_our_hook(c))
                    .map(str::to_string)
                    .collect();
                if let Some(cmd) = cmds.first() {
                    present.push(*event);
                    if !command_exists(&hook_program(cmd)) {
                        stale.push(format!("{event} → {}", hook_program(cmd)));
                    }
                }
            }
            let all = c.hook_events().len();
            if !stale.is_empty() {
                row(
                    rows,
                    format!("{name}: hooks"),
                    Status::Ng,
                    format!("stale path: {} (run `engram setup`)", stale.join(", ")),
                );
            } else if present.is_empty() {
                row(rows, format!("{name}: hooks"), Status::Na, "not installed");
            } else if present.len() < all {
                row(
                    rows,
                    format!("{name}: hooks"),
                    Status::Ng,
                    format!(
                        "only {} of {all} in {} (run `engram setup`)",
                        present.join(", "),
                        path.display()
                    ),
                );
            } else {
                row(
                    rows,
                    format!("{name}: hooks"),
                    Status::Ok,
                    format!("{} in {}", present.join(", "), path.display()),
                );
            }
        }
    }
}

/// Seed C's Claude Code plugin still on beside engram's hooks briefs every session twice:
/// NG, with the fix. Not installed: no row.
fn seed_c_plugin_row(rows: &mut Vec<Row>, settings: &Path) {
    let text = std::fs::read_to_string(settings).ok();
    if !setup::seed_c_plugin::installed(text.as_deref()) {
        return;
    }
    let on = setup::seed_c_plugin::enabled(text.as_deref());
    if on.is_empty() {
        row(
            rows,
            "claude: seed C plugin",
            Status::Ok,
            format!("disabled in {}", settings.display()),
        );
    } else {
        row(
            rows,
            "claude: seed C plugin",
            Status::Ng,
            format!(
                "{} still enabled in {}: its hooks brief every session beside engram's (run `engram setup`)",
                on.join(", "),
                settings.display()
            ),
        );
    }
}

/// Seed A left `memories.duckdb` (and `graph.json`) in the same `~/.engram`: say so, with
/// the exact commands that bring the memories in (informational: never NG).
fn seed_a_row(rows: &mut Vec<Row>, home: &Home, config: Option<&engram_core::Config>) {
    let [duck, graph] = home.seed_a_files();
    if !duck.exists() {
        return;
    }
    if let Some(at) = seed_a_imported(home, config) {
        row(
            rows,
            "seed A data",
            Status::Ok,
            format!(
                "{} imported {} (importing again creates nothing)",
                duck.display(),
                engram_core::time::format(at)
            ),
        );
        return;
    }
    // A's graph.json holds its links between those memories: imported with them.
    let links = if graph.exists() {
        format!(" --graph \"{}\"", graph.display())
    } else {
        String::new()
    };
    row(
        rows,
        "seed A data",
        Status::Na,
        format!(
            "{} found; to import it (once: importing again creates nothing): duckdb -readonly \"{d}\" -c \"COPY memories TO 'a.jsonl' (FORMAT json)\" && engram import --from a-jsonl a.jsonl{links}; with A's tasks (A versions that have the tasks table), also run duckdb -readonly \"{d}\" -c \"COPY tasks TO 'a-tasks.jsonl' (FORMAT json)\" first and add --tasks a-tasks.jsonl",
            duck.display(),
            d = duck.display()
        ),
    );
}

/// When this home's SQLite store last imported seed A's memories (a server store is not
/// opened for it).
fn seed_a_imported(
    home: &Home,
    config: Option<&engram_core::Config>,
) -> Option<engram_core::Millis> {
    let config = config.filter(|c| c.store.trim().is_empty())?;
    let db = home.db_path();
    if !db.exists() {
        return None;
    }
    let store = engram_store::Store::open(&db, config.clone()).ok()?;
    store.seed_a_imported().ok().flatten()
}

fn perf_rows(rows: &mut Vec<Row>, home: &Home) {
    let path = engram_mcp::perf::log_path(home);
    let summary = engram_mcp::perf::summary(&path, 500);
    if summary.is_empty() {
        row(rows, "latency", Status::Na, "no tool calls logged yet");
        return;
    }
    for t in summary {
        row(
            rows,
            format!("latency: {}", t.tool),
            Status::Ok,
            format!(
                "p50 {:.1} ms, p95 {:.1} ms over {} calls ({} errors)",
                t.p50_ms, t.p95_ms, t.calls, t.errors
            ),
        );
    }
}

/// Prints the rows; returns whether none is NG.
pub fn run(json_out: bool, fail_on_ng: bool) -> anyhow::Result<bool> {
    let rows = rows();
    let ok = rows.iter().all(|r| r.status != Status::Ng);
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "ok": ok, "rows": rows }))?
        );
    } else {
        for r in &rows {
            println!("[{}] {:<22} {}", r.status.mark(), r.check, r.detail);
        }
    }
    let _ = fail_on_ng;
    Ok(ok)
}

/// A server database (`store = "postgres://…"`): whether it opens and answers, named
/// without its password, then the vault and model rows as for a file.
fn server_store_rows(rows: &mut Vec<Row>, home: &Home, config: &engram_core::Config) {
    let name = without_password(config.store.trim());
    match crate::open::open_configured(home, config.clone()).and_then(|s| Ok(s.health()?)) {
        Ok(h) => row(
            rows,
            "store",
            Status::Ok,
            format!("{name}: answers, {} memories", h.memories),
        ),
        Err(e) => row(rows, "store", Status::Ng, format!("{name}: {e:#}")),
    }
    vault_row(rows, home, config, None);
    model_rows(rows, home, config, None);
}

/// `postgres://user:secret@host/db` as `postgres://user@host/db`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    match rest.split_once('@') {
        Some((user, host)) => {
            let user = user.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_string(),
    }
}
