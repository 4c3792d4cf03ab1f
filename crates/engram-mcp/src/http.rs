//! MCP over streamable HTTP at `/mcp` (plus `GET /health`). Loopback by default; binding
//! any other address requires a bearer token, and with a token set every request must
//! carry it (compared in constant time). Request bodies are bounded.

use super::{EngramServer, Shared};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;

/// Largest accepted request body (4 MiB): a 64 KiB memory plus generous JSON overhead.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Shortest token accepted for a bind beyond loopback: a token is all that guards a
/// reachable server, and a short one is guessed.
pub const MIN_PUBLIC_TOKEN_CHARS: usize = 16;

/// The token of an `Authorization` header value: the scheme `Bearer` in any case (RFC 7235
/// makes auth schemes case-insensitive), then the token.
pub fn bearer_token(header_value: &str) -> Option<&str> {
    let (scheme, token) = header_value.trim().split_once(char::is_whitespace)?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// A JSON-RPC error reply over HTTP, shaped as stdio's are.
fn rpc_error(status: StatusCode, id: serde_json::Value, code: i64, message: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            .to_string(),
    )
        .into_response()
}

/// Answers what the transport would answer with a bare HTTP status as JSON-RPC errors, as
/// over stdio: a body that is not JSON is `-32700`, a call before `initialize` (no
/// `Mcp-Session-Id`) is `-32600` naming the fix, `tools/call` arguments that are not an
/// object are `-32602`. Everything else passes through unchanged.
///
/// A session's `DELETE` is answered `200 OK` where the transport says `202 Accepted`: the
/// session is gone when the reply leaves, and the official SDK logs every other status as
/// "Session termination failed".
async fn json_rpc_errors(req: Request, next: Next) -> Response {
    if req.method() == axum::http::Method::DELETE {
        let mut reply = next.run(req).await;
        if reply.status() == StatusCode::ACCEPTED {
            *reply.status_mut() = StatusCode::OK;
        }
        return reply;
    }
    if req.method() != axum::http::Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return (StatusCode::PAYLOAD_TOO_LARGE, "request body over 4 MiB\n").into_response();
        }
    };
    let value: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                serde_json::Value::Null,
                -32700,
                format!("Parse error: the body is not JSON ({e})"),
            );
        }
    };
    if let Some(msg) = value.as_object() {
        let id = msg.get("id").cloned().unwrap_or(serde_json::Value::Null);
        let method = msg.get("method").and_then(|m| m.as_str()).unwrap_or("");
        let has_session = parts.headers.contains_key("mcp-session-id");
        if let Some(bad) = msg
            .get("id")
            .filter(|i| !(i.is_string() || i.is_i64() || i.is_u64() || i.is_null()))
        {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                serde_json::Value::Null,
                -32600,
                format!("Invalid Request: `id` must be a string or an integer, not {bad}"),
            );
        }
        if !method.is_empty()
            && !id.is_null()
            && let Some((code, message)) = crate::stdio::session_error(method, has_session)
        {
            let message = if code == -32600 && !has_session {
                format!("{message} and then the Mcp-Session-Id it returns")
            } else {
                message
            };
            let status = if code == -32601 {
                StatusCode::OK
            } else {
                StatusCode::BAD_REQUEST
            };
            return rpc_error(status, id, code, message);
        }
        if method == "tools/call"
            && !id.is_null()
            && !msg
                .get("params")
                .and_then(|p| p.get("name"))
                .is_some_and(|n| n.is_string())
        {
            return rpc_error(
                StatusCode::OK,
                id,
                -32602,
                "Invalid params: `tools/call` needs `params.name`, the tool to call (see tools/list)"
                    .into(),
            );
        }
        if method == "tools/call"
            && let Some(args) = msg.get("params").and_then(|p| p.get("arguments"))
            && !args.is_object()
            && !args.is_null()
        {
            return rpc_error(
                StatusCode::OK,
                id,
                -32602,
                "Invalid params: `arguments` must be a JSON object".into(),
            );
        }
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// Equal-length-independent comparison whose time does not depend on where inputs differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() ^ b.len()) as u8 | u8::from(a.len() != b.len());
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= x ^ y;
    }
    diff == 0
}

/// What the token layer checks against: the single token of a one-person server, and the
/// server itself for a team store's users.
#[derive(Clone)]
struct Auth {
    token: Option<Arc<String>>,
    shared: Arc<Shared>,
    /// Set once the store is seen to be a team's: users are never deleted, so it stays one
    /// and later requests skip the check. While unset, every request asks the store (a
    /// user added by `engram team user add` while the server runs counts at once).
    team: Arc<std::sync::atomic::AtomicBool>,
}

/// The 401 every refused request gets: JSON naming only what to send, never a user.
fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [
            (header::WWW_AUTHENTICATE, "Bearer"),
            (header::CONTENT_TYPE, "application/json"),
        ],
        serde_json::json!({
            "error": {
                "code": "unauthorized",
                "message": "missing, wrong or revoked bearer token: send Authorization: Bearer TOKEN"
            }
        })
        .to_string(),
    )
        .into_response()
}

/// A store question asked off the async runtime; `Err` is the reason it has no answer.
async fn store_answer<T: Send + 'static>(
    shared: Arc<Shared>,
    f: impl FnOnce(&mut engram_store::Store) -> engram_store::Result<T> + Send + 'static,
) -> Result<T, String> {
    match tokio::task::spawn_blocking(move || shared.probe_store(false, None, f)).await {
        Ok(Ok(Ok(v))) => Ok(v),
        Ok(Ok(Err(e))) => Err(e.to_string()),
        Ok(Err(e)) => Err(format!("{e:#}")),
        Err(e) => Err(e.to_string()),
    }
}

/// 503 while the store cannot be read, with the reason when the caller may be told it.
fn unavailable(detail: Option<String>) -> Response {
    let message = match detail {
        Some(d) => format!("the engram store cannot be read: {d}"),
        None => "the engram store cannot be read".to_string(),
    };
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::json!({"error": {"code": "unavailable", "message": message}}).to_string(),
    )
        .into_response()
}

/// The token a request presents: its bearer header, or for the web UI its sign-in cookie.
fn presented_token(req: &Request) -> String {
    let mut given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .unwrap_or("")
        .to_string();
    let ui = req.uri().path() == "/ui" || req.uri().path().starts_with("/ui/");
    if ui && given.is_empty() {
        given = crate::web::ui::cookie_token(req.headers()).unwrap_or_default();
    }
    given
}

/// A team store (any user exists, `Store::team_mode`): every request must carry a current
/// user's token; the user found goes with the request (`crate::auth`). Otherwise the
/// single-token check of one person's server. A refused request reaches no handler, so it
/// touches nothing.
async fn require_token(State(auth): State<Auth>, mut req: Request, next: Next) -> Response {
    use std::sync::atomic::Ordering;
    let shared = auth.shared.clone();
    let team = if auth.team.load(Ordering::Acquire) {
        Ok(true)
    } else {
        store_answer(shared.clone(), |s| s.team_mode()).await
    };
    if team == Ok(true) {
        auth.team.store(true, Ordering::Release);
    }
    let team = match team {
        Ok(team) => team,
        Err(detail) => {
            // The store's error names the database (never its password); only a caller the
            // single token admits (or any, on a server without one) is told which.
            let admitted = auth
                .token
                .as_ref()
                .is_none_or(|t| constant_time_eq(presented_token(&req).as_bytes(), t.as_bytes()));
            return unavailable(admitted.then_some(detail));
        }
    };
    if team {
        let ui = req.uri().path() == "/ui" || req.uri().path().starts_with("/ui/");
        if ui && req.uri().path() == "/ui/login" && req.method() == axum::http::Method::POST {
            return next.run(req).await;
        }
        let given = presented_token(&req);
        let shared = auth.shared.clone();
        let user = match store_answer(shared, move |s| s.team_authenticate(&given)).await {
            Ok(user) => user,
            // The database is away: not a wrong token, so not a 401.
            Err(_) => return unavailable(None),
        };
        let Some(user) = user else {
            if ui && !req.uri().path().starts_with("/ui/api/") {
                return crate::web::ui::sign_in_page();
            }
            return unauthorized();
        };
        req.extensions_mut()
            .insert(crate::auth::Principal(user.clone()));
        return crate::auth::with_user(Some(user), next.run(req)).await;
    }
    let token = auth.token;
    if let Some(expected) = token {
        // The web UI: a browser cannot send a bearer header when it opens a page, so the
        // UI's sign-in form keeps the token in a session cookie, sent only to `/ui`.
        let given = presented_token(&req);
        let ui = req.uri().path() == "/ui" || req.uri().path().starts_with("/ui/");
        if ui && req.uri().path() == "/ui/login" && req.method() == axum::http::Method::POST {
            return next.run(req).await;
        }
        if !constant_time_eq(given.as_bytes(), expected.as_bytes()) {
            if ui && !req.uri().path().starts_with("/ui/api/") {
                return crate::web::ui::sign_in_page();
            }
            return (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "missing or wrong bearer token\n",
            )
                .into_response();
        }
    }
    next.run(req).await
}

/// Serves until Ctrl-C, calling `on_ready` with the bound address once the server listens
/// (`engram ui` prints it and opens the browser there). Refuses a non-loopback address
/// without a token.
pub async fn serve_then(
    shared: Arc<Shared>,
    addr: SocketAddr,
    token: Option<String>,
    on_ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let token = token.filter(|t| !t.is_empty());
    // A team store's users' tokens guard it as the single token would.
    let team = !addr.ip().is_loopback()
        && token.is_none()
        && shared
            .probe_store(false, None, |s| s.team_mode())
            .ok()
            .and_then(|r| r.ok())
            .unwrap_or(false);
    if !addr.ip().is_loopback() && token.is_none() && !team {
        anyhow::bail!(
            "refusing to serve on {addr} without a bearer token: set ENGRAM_HTTP_TOKEN (or http_token in config.toml), or bind 127.0.0.1"
        );
    }
    if let Some(t) = &token
        && !addr.ip().is_loopback()
        && t.chars().count() < MIN_PUBLIC_TOKEN_CHARS
    {
        anyhow::bail!(
            "refusing to serve on {addr}: the bearer token (ENGRAM_HTTP_TOKEN / http_token) is {} characters, a bind beyond loopback needs at least {MIN_PUBLIC_TOKEN_CHARS}",
            t.chars().count()
        );
    }
    let app = router(shared.clone(), token, addr.ip().is_loopback());
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        // A port another server holds is the caller's to change, so it is a usage error
        // (exit 2), as seed A's server exited 2 on a busy port; other bind failures are not.
        if e.kind() == std::io::ErrorKind::AddrInUse {
            anyhow::Error::new(engram_core::InputError::new(
                "port",
                format!(
                    "port {} on {} is already in use (another engram serve?); stop that server or give `engram serve --http` another port (or ENGRAM_PORT)",
                    addr.port(),
                    addr.ip()
                ),
            ))
        } else {
            anyhow::anyhow!("cannot listen on {addr}: {e}")
        }
    })?;
    let bound = listener.local_addr()?;
    eprintln!(
        "engram: MCP over HTTP at http://{bound}/mcp ({} tools)",
        shared.tool_names().len()
    );
    eprintln!("engram: web UI at http://{bound}/ui/");
    on_ready(bound);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

/// The whole HTTP app (MCP at `/mcp`, the web surfaces, the body limit, the token layer),
/// for any listener: a TCP address (`loopback` when it is one) or seed C's Unix socket.
pub(crate) fn router(shared: Arc<Shared>, token: Option<String>, loopback: bool) -> axum::Router {
    let mut config =
        StreamableHttpServerConfig::default().with_max_request_body_bytes(MAX_BODY_BYTES);
    if !loopback {
        // The token guards the server; accept whatever host name clients use for it.
        config = config.disable_allowed_hosts();
    }
    let factory_shared = shared.clone();
    let service = StreamableHttpService::new(
        move || Ok(EngramServer::new(factory_shared.clone())),
        LocalSessionManager::default().into(),
        config,
    );
    let app = axum::Router::new()
        .nest_service(
            "/mcp",
            axum::Router::new()
                .fallback_service(service)
                .layer(middleware::from_fn(json_rpc_errors)),
        )
        // `/health` is seed A's (`web::seed_a`): its status, version and engram's state.
        .merge(crate::web::routes(shared.clone()))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(
            Auth {
                token: token.map(Arc::new),
                shared: shared.clone(),
                team: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            },
            require_token,
        ));
    // On loopback the address is the guard, and DNS rebinding (a hostile page whose own
    // name resolves to 127.0.0.1) would get past it: every route, not only `/mcp` (rmcp
    // checks that one itself), answers only requests addressed to a loopback name.
    if loopback {
        app.layer(middleware::from_fn(loopback_host_only))
    } else {
        app
    }
}

/// Whether a `Host` header names this machine's loopback (`localhost`, `127.x.x.x`, `[::1]`,
/// with or without a port). A request without one (HTTP/1.0) names nothing foreign.
pub fn is_loopback_host(host: Option<&str>) -> bool {
    let Some(host) = host.map(str::trim) else {
        return true;
    };
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, _)) => ip,
            None => return false,
        }
    } else {
        host.rsplit_once(':').map_or(host, |(n, _)| n)
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

async fn loopback_host_only(req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .map(|v| v.to_str().unwrap_or("\u{fffd}"));
    if !is_loopback_host(host) {
        return (
            StatusCode::FORBIDDEN,
            "Host header is not allowed: this server listens on loopback and answers only localhost, 127.0.0.1 or [::1]\n",
        )
            .into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::{bearer_token, constant_time_eq, is_loopback_host};

    #[test]
    fn only_loopback_host_names_pass_on_a_loopback_bind() {
        for ok in [
            "localhost",
            "LOCALHOST:7437",
            "127.0.0.1",
            "127.0.0.1:8123",
            "127.1.2.3:1",
            "[::1]",
            "[::1]:7437",
        ] {
            assert!(is_loopback_host(Some(ok)), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:7812",
            "localhost.evil.example",
            "10.0.0.1:80",
            "[::2]:80",
            "[::1",
            "",
        ] {
            assert!(!is_loopback_host(Some(bad)), "{bad}");
        }
        assert!(is_loopback_host(None));
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER   abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearerabc"), None);
    }

    #[test]
    fn token_comparison() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
