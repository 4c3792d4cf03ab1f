//! The HTTP app (MCP, seed C's API, the UI) on a Unix socket: seed C's `ENGRAM_SOCKET`.
//!
//! The socket file is the guard, as the loopback address is for TCP: it is created readable
//! and writable by the user only, and with a token set every request must still carry it.
//! A stale socket left by a server that is gone is replaced; a live one (another server
//! answers on it) or a path that is not a socket is refused, never removed.

use super::Shared;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;

/// Serves until Ctrl-C on the socket at `path`, then removes it.
pub async fn serve(shared: Arc<Shared>, path: &Path, token: Option<String>) -> anyhow::Result<()> {
    clear_stale(path)?;
    let listener = tokio::net::UnixListener::bind(path)
        .map_err(|e| anyhow::anyhow!("cannot listen on unix socket {}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    let app = crate::http::router(shared.clone(), token.filter(|t| !t.is_empty()), true);
    eprintln!(
        "engram: MCP over HTTP at unix socket {} (/mcp, {} tools; seed C's API beside it)",
        path.display(),
        shared.tool_names().len()
    );
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
    let _ = std::fs::remove_file(path);
    served?;
    Ok(())
}

/// Removes a socket file nobody listens on; refuses anything else at the path.
fn clear_stale(path: &Path) -> anyhow::Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !meta.file_type().is_socket() {
        anyhow::bail!(
            "ENGRAM_SOCKET: {} exists and is not a socket; left untouched",
            path.display()
        );
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        anyhow::bail!(
            "ENGRAM_SOCKET: a server already listens on {}",
            path.display()
        );
    }
    std::fs::remove_file(path)?;
    Ok(())
}
