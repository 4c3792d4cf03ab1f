//! The servers' wiring: `engram mcp`, `engram serve`, `engram ui` and bare `engram`. The
//! server itself is `engram_mcp`'s; here it gets the store opener, the `doctor` report,
//! the embedding model (loaded on a background thread: `initialize` never waits for it),
//! the maintenance thread and a tokio runtime.

use crate::cli::Cli;
use engram_mcp::environment::{env_project, home, load_config};
use engram_mcp::{Opener, Shared};
use engram_store::settings::Home;

/// Bare `engram`: help on a terminal; otherwise a client started it with no arguments
/// (seed A's client line is `{"command": "engram"}`), so serve MCP over stdio with the
/// profile [`bare_profile`] picks.
pub fn bare() -> anyhow::Result<()> {
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
/// A kept them in `~/.engram` too) or was imported into the store, else `core`.
fn bare_profile(configured: &str, home: &Home) -> String {
    let configured = configured.trim();
    if !configured.is_empty() {
        return configured.to_string();
    }
    let a_data = ["memories.duckdb", "graph.json"]
        .iter()
        .any(|f| home.root.join(f).exists())
        || a_imported();
    if a_data { "compat-a" } else { "core" }.to_string()
}

/// Whether the store took in seed A's data (`import --from a-jsonl`): an A user whose A
/// files were moved away after the import still runs A's tools (tester-a).
fn a_imported() -> bool {
    crate::open::open_store().is_ok_and(|s| s.seed_a_imported().ok().flatten().is_some())
}

/// The `doctor` tool's report: the same rows as `engram doctor`; `ok` is false when any
/// row is NG.
fn doctor_report() -> serde_json::Value {
    let rows = crate::doctor::rows();
    let ok = rows.iter().all(|r| r.status != crate::doctor::Status::Ng);
    serde_json::json!({ "ok": ok, "status": if ok { "ok" } else { "error" }, "rows": rows })
}

/// `engram serve`: the address from `--addr`, else `ENGRAM_PORT`, else the default; or,
/// with seed C's `ENGRAM_SOCKET` set (and no address given), that Unix socket.
pub fn serve(a: crate::cli::ServeArgs) -> anyhow::Result<()> {
    let port = std::env::var("ENGRAM_PORT").ok();
    let addr = crate::cli::serve_addr(a.addr.as_deref(), port.as_deref())
        .map_err(|e| anyhow::anyhow!("serve: {e}"))?;
    crate::open::check_server_store()?;
    let tools = match a.tools {
        Some(t) => t,
        None => {
            let home = home()?;
            bare_profile(&load_config(&home)?.tools, &home)
        }
    };
    let socket = std::env::var_os("ENGRAM_SOCKET").filter(|s| !s.is_empty() && a.addr.is_none());
    let listen = match socket {
        Some(path) => Listen::Unix(path.into()),
        None => Listen::Tcp(addr),
    };
    run(tools, a.room.or_else(env_project), listen, None)
}

/// Where a server listens.
enum Listen {
    Stdio,
    Tcp(std::net::SocketAddr),
    /// Seed C's `ENGRAM_SOCKET`.
    Unix(std::path::PathBuf),
}

/// Starts the model's life in the server (`preload`, `idle_unload_sec`; see
/// `engram_mcp::Shared::start_model`): by default loaded on a background thread, so
/// `initialize` and the first calls never wait for it.
fn start_model(shared: &std::sync::Arc<Shared>) -> anyhow::Result<()> {
    use engram_mcp::LoadOutcome;
    let home = home()?;
    let config = load_config(&home)?;
    let (preload, idle) = (
        config.preload.clone(),
        std::time::Duration::from_secs(config.idle_unload_sec),
    );
    let loader: engram_mcp::Loader =
        std::sync::Arc::new(move || match crate::models::load(&home, &config) {
            Ok(Some(e)) => LoadOutcome::Loaded(e),
            Ok(None) => {
                // Said at warn level (the default log level shows it): every search of
                // this server is lexical, and the reason names the model and the fix.
                let reason = crate::models::lexical_reason(&home, &config).unwrap_or_else(|| {
                    "no embedding model is installed (`engram model pull`)".into()
                });
                if config.model.trim().eq_ignore_ascii_case("none") {
                    tracing::info!("{reason}");
                } else {
                    tracing::warn!("{reason}");
                }
                LoadOutcome::Unavailable(reason)
            }
            Err(e) => {
                tracing::warn!("{e:#}; recall is lexical");
                LoadOutcome::Unavailable(format!("the embedding model did not load: {e:#}"))
            }
        });
    shared.start_model(loader, &preload, idle);
    Ok(())
}

/// Runs the MCP server. Logs go to stderr (level from ENGRAM_LOG, default warn); stdout is
/// JSON-RPC only. The store opens on the first tool call.
pub fn run_server(
    profile: String,
    room: Option<String>,
    http: Option<std::net::SocketAddr>,
    ui: Option<bool>,
) -> anyhow::Result<()> {
    run(profile, room, http.map_or(Listen::Stdio, Listen::Tcp), ui)
}

fn run(
    profile: String,
    room: Option<String>,
    listen: Listen,
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
    let opener: Opener = std::sync::Arc::new(crate::open::open_store);
    // A stdio server runs where the host launched it: the agent's project directory.
    let launch_dir = matches!(listen, Listen::Stdio)
        .then(|| std::env::current_dir().ok())
        .flatten();
    let shared = Shared::new(opener, Some(doctor_report), &profile, room)?
        .with_stores(crate::open::serving_stores()?)
        .with_launch_dir(launch_dir);
    start_model(&shared)?;
    // Maintenance in the background, after the model has had time to load.
    {
        let shared = shared.clone();
        std::thread::spawn(move || shared.maintenance_loop(std::time::Duration::from_secs(30)));
    }
    if matches!(listen, Listen::Stdio) && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
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
        match listen {
            Listen::Stdio => engram_mcp::stdio::serve(shared).await,
            Listen::Unix(path) => engram_mcp::unix_socket::serve(shared, &path, Some(token)).await,
            Listen::Tcp(addr) => {
                engram_mcp::http::serve_then(shared, addr, Some(token), |bound| {
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
