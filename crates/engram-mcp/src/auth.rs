//! Who an HTTP request is, on a team server: the bearer token checked against the
//! store's users (`Store::team_authenticate`, a lookup by the token's SHA-256), the user
//! found carried with the request to every surface.
//!
//! The user travels two ways, because the surfaces run in two kinds of task: as a
//! [`Principal`] in the request's extensions (rmcp hands `/mcp` calls the request's
//! `http::request::Parts`, read in `EngramServer::call_tool`), and as a task-local for the
//! request's own handler future (seed A's REST, seed C's API, the UI's API: they read
//! [`current_user`] before moving to a blocking thread). Both end with the request.

/// The team user a request authenticated as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal(pub String);

tokio::task_local! {
    static USER: Option<String>;
}

/// The team user of the request being handled on this task (`None`: local use).
pub fn current_user() -> Option<String> {
    USER.try_with(|u| u.clone()).ok().flatten()
}

/// Runs a request's handler with its user set for [`current_user`].
pub async fn with_user<F: std::future::Future>(user: Option<String>, f: F) -> F::Output {
    USER.scope(user, f).await
}
