//! Seed A's REST API (`/v1/*`).

use crate::Shared;
use std::sync::Arc;

/// This surface's routes (none yet).
pub fn routes(_shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
}
