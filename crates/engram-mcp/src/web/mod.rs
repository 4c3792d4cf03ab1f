//! HTTP surfaces beside MCP on the one `engram serve --http` server: seed A's REST API
//! (`/v1/*`), seed C's HTTP API (`/observations`, `/search`, …) and the web UI (`/ui`).
//! Each is a thin adapter over the same engine calls as the MCP tools; the bearer-token
//! layer in `mcp::http` wraps all of them.

pub mod seed_a;
pub mod seed_c;
pub mod ui;

use crate::Shared;
use std::sync::Arc;

/// Every non-MCP route, merged into the server's router before its auth and body layers.
pub fn routes(shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
        .merge(seed_a::routes(shared.clone()))
        .merge(seed_c::routes(shared.clone()))
        .merge(ui::routes(shared))
}
