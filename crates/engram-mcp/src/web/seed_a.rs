//! Seed A's REST API (`engram-http`, `/v1/*`), beside `/mcp` on the one server.
//!
//! A generated its request bodies from its tool schemas, so each `POST /v1/…` route is one
//! compat-a tool: the JSON body is the tool's arguments and the answer is the tool's
//! result, run through [`Shared::run_tool`], the same path an MCP call takes (argument
//! check, model wait, vault sync). Whatever `--tools` profile the server offers over MCP,
//! these routes speak A's tools. A refused call (bad input, an unknown id) is HTTP 400
//! with `{"ok": false, "error", "field"}`; a body that is not a JSON object is 400 before
//! any tool runs, so nothing is written; an engine that cannot serve (the store cannot be
//! opened, the disk fails) is 503, as A's degraded mode was. `GET /v1/tools` lists the
//! tools and their routes; `GET /health` and `GET /v1/health` report A's fields from
//! engram's own state.

use crate::Shared;
use crate::server::ModelState;
use crate::tools::{ToolError, ToolResult, ToolSpec};
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::sync::Arc;

type S = State<Arc<Shared>>;

/// Who the memories' `source` names for writes through this API.
const CLIENT: &str = "http:seed-a";

/// A's routes and the compat-a tool each one runs.
pub const ROUTES: &[(&str, &str)] = &[
    ("/v1/recall", "recall_memory"),
    ("/v1/store", "store_memory"),
    ("/v1/update", "update_memory"),
    ("/v1/handoff", "session_handoff"),
    ("/v1/consolidate", "consolidate_memory"),
    ("/v1/stats", "memory_stats"),
    ("/v1/failure", "track_failure"),
    ("/v1/progress", "track_progress"),
    ("/v1/session-outcome", "session_outcome"),
    ("/v1/tasks", "create_task"),
    ("/v1/tasks/update", "update_task"),
    ("/v1/tasks/get", "get_task"),
    ("/v1/tasks/list", "list_tasks"),
];

/// This surface's routes.
pub fn routes(shared: Arc<Shared>) -> Router {
    let mut r = Router::new();
    for (path, tool) in ROUTES {
        let tool: &'static str = tool;
        r = r.route(
            path,
            post(move |State(s): S, body: Bytes| call(s, tool, body)),
        );
    }
    r.route("/v1/tools", get(catalogue))
        .route("/health", get(health))
        .route("/v1/health", get(health))
        .with_state(shared)
}

/// The compat-a tool named `name` (the registry holds every profile's tools).
fn spec(name: &str) -> Option<ToolSpec> {
    crate::tools::registry()
        .into_iter()
        .find(|t| t.name == name)
}

fn refused(status: StatusCode, field: Option<String>, message: String) -> Response {
    let mut body = json!({ "ok": false, "error": message });
    if let Some(f) = field {
        body["field"] = json!(f);
    }
    (status, Json(body)).into_response()
}

/// The body as tool arguments: empty means `{}`; anything but a JSON object is refused.
fn arguments(body: &[u8]) -> Result<Value, ToolError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(ToolError {
            field: Some("body".into()),
            message: format!(
                "invalid `body`: the request body must be a JSON object of the tool's arguments, not {}",
                match other {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    _ => "null",
                }
            ),
        }),
        Err(e) => Err(ToolError {
            field: Some("body".into()),
            message: format!("invalid `body`: not JSON ({e})"),
        }),
    }
}

/// A tool result as A's answer: the result itself, or 400 / 503 with `ok: false`.
fn answer(r: ToolResult) -> Response {
    match r {
        Ok(v) if v.get("ok") == Some(&Value::Bool(false)) => {
            let message = match &v["error"] {
                Value::String(m) => m.clone(),
                other => other.to_string(),
            };
            refused(StatusCode::BAD_REQUEST, None, message)
        }
        Ok(v) => Json(v).into_response(),
        // Caller errors name their field (or say the arguments were invalid).
        Err(e) if e.field.is_some() || e.message.starts_with("invalid") => {
            refused(StatusCode::BAD_REQUEST, e.field, e.message)
        }
        Err(e) => refused(StatusCode::SERVICE_UNAVAILABLE, None, e.message),
    }
}

async fn call(shared: Arc<Shared>, tool: &'static str, body: Bytes) -> Response {
    let args = match arguments(&body) {
        Ok(a) => a,
        Err(e) => return answer(Err(e)),
    };
    let Some(spec) = spec(tool) else {
        return refused(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            format!("no tool {tool}"),
        );
    };
    let dialect = crate::adapt::Dialect::for_profile("compat-a");
    let user = crate::auth::current_user();
    let r = tokio::task::spawn_blocking(move || {
        shared.run_tool(&spec, args, CLIENT, dialect, user.as_deref())
    })
    .await
    .unwrap_or_else(|e| {
        Err(ToolError {
            field: None,
            message: format!("the request failed: {e}"),
        })
    });
    answer(r)
}

/// `GET /v1/tools`: every compat-a tool with its schema and, where A had one, its route.
async fn catalogue() -> Response {
    let reg = crate::tools::registry();
    let tools: Vec<Value> = crate::compat_a::PROFILE
        .iter()
        .filter_map(|n| reg.iter().find(|t| t.name == *n))
        .map(|t| {
            let route = ROUTES.iter().find(|(_, tool)| *tool == t.name);
            json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": (t.schema)(),
                "method": route.map(|_| "POST"),
                "path": route.map(|(p, _)| *p),
            })
        })
        .collect();
    Json(json!({ "count": tools.len(), "tools": tools })).into_response()
}

/// `GET /health`: A's fields, filled from engram's state. `degraded` when the store
/// cannot be read or no embedding model is loaded (recall is then lexical only, which is
/// what A's degraded mode meant); `embedding_stale` when memories still wait for a vector
/// of the loaded model.
async fn health(State(shared): S) -> Response {
    let model = shared.model_state();
    let s2 = shared.clone();
    let user = crate::auth::current_user();
    let stats =
        tokio::task::spawn_blocking(move || s2.probe_store(false, user.as_deref(), |s| s.stats()))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| format!("{e:#}")))
            .and_then(|r| r.map_err(|e| e.to_string()));
    let (embedding_degraded, embedding_reason) = match &model {
        ModelState::Ready => (false, None),
        ModelState::Loading => (
            true,
            Some("the embedding model is still loading".to_string()),
        ),
        ModelState::Unavailable(r) => (true, Some(r.clone())),
        // Freed on purpose (`preload = "off"`, `idle_unload_sec`): the next call loads it.
        ModelState::Unloaded => (
            false,
            Some("the embedding model is not in memory; the next call loads it".to_string()),
        ),
    };
    let transports = json!({
        "mcp": "/mcp", "rest": "/v1", "seed_c_http": "/observations, /search, …", "ui": "/ui",
    });
    let version = env!("CARGO_PKG_VERSION");
    let body = match stats {
        Ok(st) => {
            let degraded = embedding_degraded;
            json!({
                "status": if degraded { "degraded" } else { "ok" },
                "version": version,
                "db": st.db_path,
                "db_readonly": false,
                "db_bytes": st.db_bytes,
                // A kept its graph in graph.json; engram keeps links in the database.
                "graph": { "store": "database", "links": st.links_by_kind.values().sum::<u64>() },
                "fts": true,
                "embedding_degraded": embedding_degraded,
                "embedding_reason": embedding_reason,
                "embedding_model": st.embeddings.model,
                "embedding_stale": st.embeddings.model.is_some() && st.embeddings.missing > 0,
                "residue_files": [],
                "engram_meta": {
                    "schema_version": st.schema_version,
                    "memories": st.total_memories,
                    "search": st.search,
                },
                "transports": transports,
            })
        }
        Err(e) => json!({
            "status": "degraded",
            "version": version,
            "db": Value::Null,
            "db_error": e,
            "db_readonly": Value::Null,
            "graph": Value::Null,
            "fts": false,
            "embedding_degraded": embedding_degraded,
            "embedding_reason": embedding_reason,
            "embedding_stale": false,
            "residue_files": [],
            "engram_meta": Value::Null,
            "transports": transports,
        }),
    };
    Json(body).into_response()
}
