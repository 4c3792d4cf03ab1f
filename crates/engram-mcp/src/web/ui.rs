//! The web UI at `/ui`: a page shell, hand-written CSS and JavaScript embedded in the binary
//! (no build step, nothing fetched from elsewhere), and a JSON API under `/ui/api/` whose
//! handlers call only `engram_store::Store` methods ([`api`]).
//!
//! Safety: every response carries a Content-Security-Policy that allows only this origin's
//! scripts and styles (no inline script, no CDN, no framing); memory text reaches the page
//! only through `textContent` and DOM nodes, never as HTML. State-changing requests must
//! carry the `X-Engram-UI` header (which a cross-site form cannot set, and which a
//! cross-site script cannot send without a CORS preflight this server never answers) and
//! must not come from another site by `Sec-Fetch-Site` or `Origin`.
//!
//! Sign-in: with a bearer token configured, the token layer (`mcp::http`) also accepts the
//! token from this UI's session cookie, which the sign-in form sets once per browser
//! session ([`sign_in_page`], `POST /ui/login`).

mod api;

use crate::Shared;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::sync::Arc;

/// The cookie that carries the (hex-encoded) token for the UI's requests.
pub const COOKIE: &str = "engram_ui_token";

/// The header every state-changing UI request carries.
pub const CSRF_HEADER: &str = "x-engram-ui";

/// Only this origin's files; no inline script or style, no plugins, no framing.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// The embedded files: name, content type, bytes.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript",
        include_str!("ui/assets/app.js"),
    ),
    (
        "dom.js",
        "text/javascript",
        include_str!("ui/assets/dom.js"),
    ),
    (
        "markdown.js",
        "text/javascript",
        include_str!("ui/assets/markdown.js"),
    ),
    (
        "charts.js",
        "text/javascript",
        include_str!("ui/assets/charts.js"),
    ),
    (
        "graph.js",
        "text/javascript",
        include_str!("ui/assets/graph.js"),
    ),
    (
        "pages.js",
        "text/javascript",
        include_str!("ui/assets/pages.js"),
    ),
    (
        "memory.js",
        "text/javascript",
        include_str!("ui/assets/memory.js"),
    ),
    ("style.css", "text/css", include_str!("ui/assets/style.css")),
    (
        "icon.svg",
        "image/svg+xml",
        include_str!("ui/assets/icon.svg"),
    ),
];

const INDEX: &str = include_str!("ui/assets/index.html");
const SIGN_IN: &str = include_str!("ui/assets/sign-in.html");

/// This surface's routes: the page, its assets, the sign-in form and the API.
pub fn routes(shared: Arc<Shared>) -> axum::Router {
    axum::Router::new()
        .route("/ui", get(|| async { redirect("/ui/") }))
        .route("/ui/", get(|| async { page(StatusCode::OK, INDEX) }))
        .route("/ui/assets/{name}", get(asset))
        .route("/ui/login", post(sign_in))
        .nest("/ui/api", api::routes(shared))
}

fn redirect(to: &'static str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, HeaderValue::from_static(to))],
    )
        .into_response()
}

/// Headers every UI response carries.
pub fn harden(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn page(status: StatusCode, html: &'static str) -> Response {
    harden(
        (
            status,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            html,
        )
            .into_response(),
    )
}

async fn asset(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, ty, body)) => harden(([(header::CONTENT_TYPE, *ty)], *body).into_response()),
        None => harden((StatusCode::NOT_FOUND, format!("no UI asset {name:?}\n")).into_response()),
    }
}

/// The page the token layer answers with when a `/ui` request lacks the token.
pub fn sign_in_page() -> Response {
    page(StatusCode::UNAUTHORIZED, SIGN_IN)
}

/// Whether a request's `Sec-Fetch-Site` and `Origin` say it came from this same origin (or
/// from no page at all, like a typed address or a non-browser client).
pub fn same_origin(headers: &HeaderMap) -> bool {
    // Browsers that send Sec-Fetch-Site say it outright; older ones are judged by Origin
    // (which a form under a no-referrer policy sends as `null`: refused, unless the
    // browser also said same-origin above).
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return site == "same-origin" || site == "none";
    }
    match headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        None => true,
        Some(origin) => {
            let host = headers
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let bare = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"))
                .unwrap_or("");
            !host.is_empty() && bare == host
        }
    }
}

/// The token the UI's cookie carries, if any.
pub fn cookie_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
        .find_map(unhex)
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<String> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// `POST /ui/login` (a form with `token`): stores the token in a session cookie that only
/// this server's `/ui` paths see, then goes to the UI. A wrong token lands on the sign-in
/// page again. The token layer lets this one request through without a token.
async fn sign_in(headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if !same_origin(&headers) {
        return harden(
            (
                StatusCode::FORBIDDEN,
                "sign-in refused: the form was sent from another site\n",
            )
                .into_response(),
        );
    }
    let token = String::from_utf8_lossy(&body)
        .split('&')
        .find_map(|kv| kv.strip_prefix("token=").map(form_decode))
        .unwrap_or_default();
    let cookie = format!(
        "{COOKIE}={}; Path=/ui; HttpOnly; SameSite=Strict",
        hex(token.trim())
    );
    let mut r = redirect("/ui/");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    harden(r)
}

/// Decodes one `application/x-www-form-urlencoded` value.
fn form_decode(s: &str) -> String {
    let b = s.as_bytes();
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let escaped = (b[i] == b'%' && i + 2 < b.len())
            .then(|| Some(digit(b[i + 1])? * 16 + digit(b[i + 2])?))
            .flatten();
        match (b[i], escaped) {
            (_, Some(v)) => {
                out.push(v);
                i += 3;
            }
            (b'+', None) => {
                out.push(b' ');
                i += 1;
            }
            (c, None) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_round_trip_and_form_decoding() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("a=b; {COOKIE}={}", hex("s3cr&t =x"))).unwrap(),
        );
        assert_eq!(cookie_token(&h).as_deref(), Some("s3cr&t =x"));
        assert_eq!(form_decode("a%26b+c%3D"), "a&b c=");
        assert_eq!(form_decode("100%"), "100%");
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn cross_site_requests_are_told_apart() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("127.0.0.1:9"));
        assert!(same_origin(&h), "no browser headers: a direct client");
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://127.0.0.1:9"),
        );
        assert!(same_origin(&h));
        h.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.example"),
        );
        assert!(!same_origin(&h));
        h.remove(header::ORIGIN);
        h.insert("sec-fetch-site", HeaderValue::from_static("cross-site"));
        assert!(!same_origin(&h));
    }
}
