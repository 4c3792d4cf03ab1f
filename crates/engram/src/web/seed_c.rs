//! Seed C's HTTP API (`/observations`, `/search`, `/context`, …).

use crate::mcp::Shared;
use std::sync::Arc;

/// This surface's routes (none yet).
pub fn routes(_shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
}
