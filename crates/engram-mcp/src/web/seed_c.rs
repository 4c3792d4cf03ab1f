//! Seed C's HTTP API (`engram serve`, `127.0.0.1:7437`): C's paths, query parameters and
//! JSON bodies, answered by the same adapters as C's MCP tools (`mcp::compat_c`) or, for
//! lists C's tools do not have, by one store call each. Errors are `{"error": "…"}` with
//! 400 (bad input) or 404 (no such id); empty lists are `[]`, never null. The bearer-token
//! layer around the whole server applies here as to `/mcp`.

use crate::Shared;
use crate::compat_c;
use crate::tools::{Ctx, ToolError, ToolResult};
use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;

type Params = Query<HashMap<String, String>>;
type S = State<Arc<Shared>>;

/// Who the memories' `source` names for writes through this API.
const CLIENT: &str = "http:seed-c";

/// C's routes, beside `/mcp` on the one server.
pub fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/sessions", post(session_start))
        .route("/sessions/recent", get(sessions_recent))
        .route("/sessions/{id}", get(session_get))
        .route("/sessions/{id}/end", post(session_end))
        .route("/observations", post(observation_save))
        .route("/observations/passive", post(observation_passive))
        .route("/observations/recent", get(observations_recent))
        .route(
            "/observations/{id}",
            get(observation_get)
                .patch(observation_update)
                .delete(observation_delete),
        )
        .route("/observations/{id}/pin", put(pin).delete(unpin))
        .route("/topic-keys/suggest", post(suggest_topic_key))
        .route("/search", get(search))
        .route("/timeline", get(timeline))
        .route("/prompts", post(prompt_save))
        .route("/prompts/recent", get(prompts_recent))
        .route("/prompts/search", get(prompts_search))
        .route("/prompts/{id}", delete(prompt_delete))
        .route("/context", get(context))
        .route("/context/compaction", get(context_compaction))
        .route("/export", get(export))
        .route("/import", post(import))
        .route("/stats", get(stats))
        .route("/doctor", get(doctor))
        .route("/project/current", get(project_current))
        .route("/review", get(review))
        .route("/review/mark_reviewed", post(mark_reviewed))
        .route("/conflicts", get(conflicts))
        .route("/sync/status", get(sync_status))
        .with_state(shared)
}

/// A tool result as C's HTTP answer.
fn answer(r: ToolResult) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => error(e),
    }
}

fn error(e: ToolError) -> Response {
    let status = if e.message.contains("not found") || e.message.contains("no memory") {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::BAD_REQUEST
    };
    // One of C's own errors (`error_code`, `available_projects`, `hint`) is its object,
    // its message the `error` (tester-c: it came as a JSON string inside `error`).
    let mut body = match serde_json::from_str::<Value>(&e.message) {
        Ok(Value::Object(mut o)) if o.contains_key("error_code") => {
            let message = o.remove("message").unwrap_or_else(|| json!(e.message));
            o.insert("error".into(), message);
            Value::Object(o)
        }
        _ => json!({ "error": e.message }),
    };
    if let Some(f) = e.field {
        body["field"] = json!(f);
    }
    (status, Json(body)).into_response()
}

/// A C write that creates something: `201 Created` with C's `id` and `status` beside the
/// tool's answer (`POST /sessions`, `/observations`, `/prompts`).
async fn created(
    shared: Arc<Shared>,
    name: &'static str,
    args: Value,
    status: &'static str,
) -> Response {
    let session = (name == "mem_session_start")
        .then(|| args.get("id").cloned())
        .flatten();
    let r = tool_then(shared, name, args, move |mut v| {
        if let Some(id) = session {
            v["id"] = id;
        }
        v["status"] = json!(status);
        v
    })
    .await;
    if r.status() == StatusCode::OK {
        let (mut parts, body) = r.into_parts();
        parts.status = StatusCode::CREATED;
        return Response::from_parts(parts, body);
    }
    r
}

/// Runs a C tool adapter on a blocking thread (the store is synchronous).
async fn run(
    shared: Arc<Shared>,
    read_only: bool,
    f: impl FnOnce(&mut Ctx<'_>) -> ToolResult + Send + 'static,
) -> Response {
    let user = crate::auth::current_user();
    let r =
        tokio::task::spawn_blocking(move || shared.with_ctx(CLIENT, read_only, user.as_deref(), f))
            .await
            .unwrap_or_else(|e| {
                Err(ToolError {
                    field: None,
                    message: format!("the request failed: {e}"),
                })
            });
    answer(r)
}

/// Calls C's MCP tool `name` with `args`.
async fn tool(shared: Arc<Shared>, name: &'static str, args: Value) -> Response {
    tool_then(shared, name, args, |v| v).await
}

/// Calls C's MCP tool `name` with `args` and answers with `shape` of its result: where
/// C's HTTP route answers another shape than the MCP tool (`/search`, `/timeline`, the
/// creating POSTs).
async fn tool_then(
    shared: Arc<Shared>,
    name: &'static str,
    args: Value,
    shape: impl FnOnce(Value) -> Value + Send + 'static,
) -> Response {
    let spec = compat_c::tools().into_iter().find(|t| t.name == name);
    let Some(spec) = spec else {
        return error(ToolError {
            field: None,
            message: format!("no tool {name}"),
        });
    };
    let read_only = spec.hints.read_only;
    run(shared, read_only, move |ctx| {
        Ok(shape((spec.call)(ctx, args)?))
    })
    .await
}

/// Query parameters as tool arguments: `numeric` keys become numbers (an unparsable one
/// is a clear error), `flags` become booleans, `renames` map C's HTTP names to the tool's.
fn args_of(
    params: HashMap<String, String>,
    numeric: &[&str],
    renames: &[(&str, &str)],
) -> Result<Value, ToolError> {
    let mut o = Map::new();
    for (k, v) in params {
        let key = renames
            .iter()
            .find(|(from, _)| *from == k)
            .map(|(_, to)| to.to_string())
            .unwrap_or(k);
        let val = if numeric.contains(&key.as_str()) {
            json!(
                v.parse::<i64>()
                    .map_err(|_| ToolError::field(&key, format!("{v:?} is not a whole number")))?
            )
        } else if matches!(key.as_str(), "all_projects" | "compact" | "hard") {
            json!(matches!(v.as_str(), "1" | "true" | "yes"))
        } else {
            json!(v)
        };
        o.insert(key, val);
    }
    Ok(Value::Object(o))
}

/// A JSON body whatever its `Content-Type`: C's server reads the body of a plain
/// `curl -d '{…}'` (sent as form data) as JSON, and C's users' scripts rely on it. A body
/// that is not JSON is a 400 naming the parse error; an empty one is `{}`.
pub(crate) struct CBody(pub Value);

impl<S: Send + Sync> axum::extract::FromRequest<S> for CBody {
    type Rejection = Response;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Response> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(CBody(Value::Object(Map::new())));
        }
        serde_json::from_slice(&bytes).map(CBody).map_err(|e| {
            let error = json!({ "error": format!("the request body is not JSON: {e}") });
            (StatusCode::BAD_REQUEST, Json(error)).into_response()
        })
    }
}

fn body_object(body: Value) -> Map<String, Value> {
    match body {
        Value::Object(o) => o,
        _ => Map::new(),
    }
}

fn id_of(raw: &str) -> Result<i64, ToolError> {
    raw.parse::<i64>()
        .map_err(|_| ToolError::field("id", format!("{raw:?} is not an observation id")))
}

fn limit_of(params: &HashMap<String, String>, default: usize) -> Result<usize, ToolError> {
    match params.get("limit") {
        None => Ok(default),
        Some(v) => Ok(crate::adapt::whole_number("limit", v)?),
    }
}

fn project_of(params: &HashMap<String, String>) -> Option<String> {
    params
        .get("project")
        .filter(|p| !p.trim().is_empty())
        .map(|p| p.trim().to_string())
}

// ---- sessions -------------------------------------------------------------------------

/// C's name for engram's room in a session or prompt (or a list of them): `project`.
fn c_project(mut v: Value) -> Value {
    let rename = |o: &mut serde_json::Map<String, Value>| {
        if let Some(room) = o.remove("room") {
            o.insert("project".into(), room);
        }
    };
    match &mut v {
        Value::Array(items) => items
            .iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(rename),
        Value::Object(o) => rename(o),
        _ => {}
    }
    v
}

async fn session_start(State(s): S, CBody(body): CBody) -> Response {
    created(s, "mem_session_start", body, "created").await
}

async fn session_end(State(s): S, Path(id): Path<String>, CBody(body): CBody) -> Response {
    let mut o = body_object(body);
    o.insert("id".into(), json!(id));
    tool(s, "mem_session_end", Value::Object(o)).await
}

async fn sessions_recent(State(s): S, Query(p): Params) -> Response {
    run(s, true, move |ctx| {
        let limit = limit_of(&p, 5)?;
        let room = if p.get("all_projects").is_some_and(|v| v == "true") {
            None
        } else {
            project_of(&p)
        };
        Ok(c_project(json!(
            ctx.store.recent_sessions(room.as_deref(), limit)?
        )))
    })
    .await
}

async fn session_get(State(s): S, Path(id): Path<String>) -> Response {
    run(s, true, move |ctx| match ctx.store.session(&id)? {
        Some(info) => Ok(c_project(json!(info))),
        None => Err(ToolError {
            field: Some("id".into()),
            message: format!("session {id:?} not found"),
        }),
    })
    .await
}

// ---- observations ---------------------------------------------------------------------

async fn observation_save(State(s): S, CBody(body): CBody) -> Response {
    let o = body_object(body);
    // C's handler refuses a body without these (400); mem_save would default them.
    for field in ["session_id", "title", "content"] {
        if o.get(field)
            .and_then(Value::as_str)
            .is_none_or(|v| v.trim().is_empty())
        {
            return error(ToolError::field(
                field,
                format!(
                    "{field} is required (C's POST /observations needs session_id, title and content)"
                ),
            ));
        }
    }
    created(s, "mem_save", Value::Object(o), "saved").await
}

async fn observation_passive(State(s): S, CBody(body): CBody) -> Response {
    tool(s, "mem_capture_passive", body).await
}

async fn observations_recent(State(s): S, Query(p): Params) -> Response {
    run(s, true, move |ctx| {
        let limit = limit_of(&p, 20)?;
        let ms = ctx
            .store
            .recent_memories(project_of(&p).as_deref(), limit)?;
        Ok(json!(
            ms.iter()
                .map(compat_c::observation_json)
                .collect::<Vec<_>>()
        ))
    })
    .await
}

/// C's observation row (`title`, `content`, `type`, `project`, `session_id`,
/// `topic_key`, …, as `/observations/recent` gives it) beside `mem_get_observation`'s
/// answer: C's plugins read the row's fields.
async fn observation_get(State(s): S, Path(id): Path<String>) -> Response {
    let id = match id_of(&id) {
        Ok(id) => id,
        Err(e) => return error(e),
    };
    let Some(spec) = compat_c::tools()
        .into_iter()
        .find(|t| t.name == "mem_get_observation")
    else {
        return error(ToolError::field("id", "no mem_get_observation tool"));
    };
    run(s, true, move |ctx| {
        let reply = (spec.call)(ctx, json!({ "id": id }))?;
        let m = ctx
            .store
            .get(&engram_core::memory::IdRef::Id(id))
            .map_err(ToolError::from)?;
        let mut row = compat_c::observation_json(&m);
        if let (Some(r), Some(extra)) = (row.as_object_mut(), reply.as_object()) {
            for (k, v) in extra {
                r.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        Ok(row)
    })
    .await
}

async fn observation_update(State(s): S, Path(id): Path<String>, CBody(body): CBody) -> Response {
    let mut o = body_object(body);
    match id_of(&id) {
        Ok(id) => {
            o.insert("id".into(), json!(id));
            tool(s, "mem_update", Value::Object(o)).await
        }
        Err(e) => error(e),
    }
}

async fn observation_delete(State(s): S, Path(id): Path<String>, Query(p): Params) -> Response {
    let hard = p.get("hard").is_some_and(|v| v == "true" || v == "1");
    match id_of(&id) {
        Ok(id) => tool(s, "mem_delete", json!({ "id": id, "hard_delete": hard })).await,
        Err(e) => error(e),
    }
}

async fn pin(State(s): S, Path(id): Path<String>) -> Response {
    match id_of(&id) {
        Ok(id) => tool(s, "mem_pin", json!({ "id": id })).await,
        Err(e) => error(e),
    }
}

async fn unpin(State(s): S, Path(id): Path<String>) -> Response {
    match id_of(&id) {
        Ok(id) => tool(s, "mem_unpin", json!({ "id": id })).await,
        Err(e) => error(e),
    }
}

async fn suggest_topic_key(State(s): S, CBody(body): CBody) -> Response {
    tool(s, "mem_suggest_topic_key", body).await
}

// ---- search, timeline, prompts, context -------------------------------------------------

/// `GET /search`: C's bare array of results (`[]` when nothing matches), each a whole
/// observation, as C's server answers (tester-c: scripts read `.[0]`).
async fn search(State(s): S, Query(p): Params) -> Response {
    let mut a = match args_of(p, &["limit"], &[("q", "query")]) {
        Ok(a) => a,
        Err(e) => return error(e),
    };
    a["response_format"] = json!("json");
    tool_then(s, "mem_search", a, |mut v| v["results"].take()).await
}

/// `GET /timeline`: C's timeline object (`focus`, `before`, `after` as whole
/// observations, `session_info`, `total_in_range`), not the MCP tool's text.
async fn timeline(State(s): S, Query(p): Params) -> Response {
    let a = match args_of(p, &["observation_id", "before", "after"], &[]) {
        Ok(a) => a,
        Err(e) => return error(e),
    };
    tool_then(s, "mem_timeline", a, |mut v| v["timeline"].take()).await
}

async fn prompt_save(State(s): S, CBody(body): CBody) -> Response {
    created(s, "mem_save_prompt", body, "saved").await
}

async fn prompts_recent(State(s): S, Query(p): Params) -> Response {
    run(s, true, move |ctx| {
        let limit = limit_of(&p, 20)?;
        Ok(c_project(json!(
            ctx.store.recent_prompts(project_of(&p).as_deref(), limit)?
        )))
    })
    .await
}

async fn prompts_search(State(s): S, Query(p): Params) -> Response {
    run(s, true, move |ctx| {
        let limit = limit_of(&p, 10)?;
        let q = p
            .get("q")
            .filter(|q| !q.trim().is_empty())
            .ok_or_else(|| ToolError::field("q", "give the text to search prompts for"))?;
        Ok(c_project(json!(ctx.store.search_prompts(
            q,
            project_of(&p).as_deref(),
            limit
        )?)))
    })
    .await
}

async fn prompt_delete(State(s): S, Path(id): Path<String>) -> Response {
    run(s, false, move |ctx| {
        let id = id_of(&id)?;
        if ctx.store.delete_prompt(id)? {
            Ok(json!({ "id": id, "deleted": true }))
        } else {
            Err(ToolError {
                field: Some("id".into()),
                message: format!("prompt {id} not found"),
            })
        }
    })
    .await
}

/// `GET /context` → `{"context": "…"}`, C's text.
async fn context(State(s): S, Query(p): Params) -> Response {
    run(s, true, move |ctx| {
        let max_bytes = match p.get("max_bytes") {
            Some(v) => v
                .parse()
                .map_err(|_| ToolError::field("max_bytes", format!("{v:?} is not a number")))?,
            None => 16 * 1024,
        };
        let compact = p.get("compact").is_some_and(|v| v == "true" || v == "1");
        let room = match p.get("scope").map(String::as_str) {
            Some("personal") | Some("global") => Some(engram_core::room::COMMON.to_string()),
            _ => project_of(&p),
        };
        let (text, project, truncated) =
            compat_c::c_context(ctx.store, room, None, compact, max_bytes)?;
        Ok(json!({ "context": text, "project": project, "truncated": truncated }))
    })
    .await
}

/// `GET /context/compaction?session_id=` → the context of the session's project, then C's
/// instruction to save the compacted summary first.
async fn context_compaction(State(s): S, Query(p): Params) -> Response {
    run(s, true, move |ctx| {
        let session = p.get("session_id").filter(|v| !v.trim().is_empty());
        let room = match session {
            Some(id) => ctx.store.session(id)?.map(|s| s.room),
            None => None,
        }
        .or_else(|| project_of(&p));
        let (text, project, truncated) =
            compat_c::c_context(ctx.store, room, None, false, 16 * 1024)?;
        let project = project.unwrap_or_default();
        Ok(json!({
            "context": format!("{text}\n\n{}", compat_c::compaction_instruction(&project)),
            "project": project,
            "truncated": truncated,
        }))
    })
    .await
}

// ---- data and admin -------------------------------------------------------------------

async fn stats(State(s): S) -> Response {
    tool(s, "mem_stats", json!({})).await
}

async fn doctor(State(s): S) -> Response {
    tool(s, "mem_doctor", json!({})).await
}

async fn project_current(State(s): S, Query(p): Params) -> Response {
    let mut a = Map::new();
    if let Some(cwd) = p.get("cwd").filter(|c| !c.is_empty()) {
        a.insert("cwd".into(), json!(cwd));
    }
    tool(s, "mem_current_project", Value::Object(a)).await
}

async fn review(State(s): S, Query(p): Params) -> Response {
    match args_of(p, &["limit"], &[]) {
        Ok(mut a) => {
            a["action"] = json!("list");
            tool(s, "mem_review", a).await
        }
        Err(e) => error(e),
    }
}

async fn mark_reviewed(State(s): S, CBody(body): CBody) -> Response {
    let mut o = body_object(body);
    o.insert("action".into(), json!("mark_reviewed"));
    tool(s, "mem_review", Value::Object(o)).await
}

/// `GET /conflicts?project=&status=pending`: the relations awaiting (or given) a verdict.
async fn conflicts(State(s): S, Query(p): Params) -> Response {
    run(s, true, move |ctx| {
        let limit = limit_of(&p, 50)?;
        let status = p.get("status").map(String::as_str).unwrap_or("pending");
        let js = ctx
            .store
            .judgments(project_of(&p).as_deref(), Some(status), limit)?;
        Ok(json!(
            js.iter()
                .map(|j| compat_c::relation_json(ctx.store, j))
                .collect::<Vec<_>>()
        ))
    })
    .await
}

/// `GET /sync/status`: the store's git-chunk sync state (`engram sync`); with `dir` (the
/// sync folder) or `cwd` (a working directory, whose repository's `.engram` is used), also
/// that folder's chunks, those pending here and the memories no chunk holds yet (of
/// `project`, else every project).
async fn sync_status(State(s): S, Query(p): Params) -> Response {
    run(s, true, move |ctx| {
        let folder = match (p.get("dir"), p.get("cwd")) {
            (Some(d), _) if !d.is_empty() => Some(std::path::PathBuf::from(d)),
            (_, Some(c)) if !c.is_empty() => {
                Some(engram_store::git_sync::folder_for(std::path::Path::new(c)))
            }
            _ => None,
        };
        let status = ctx
            .store
            .sync_status(folder.as_deref(), project_of(&p).as_deref())?;
        Ok(json!(status))
    })
    .await
}

/// `GET /export`: C's export format (`version` 0.2.0: sessions, observations, prompts),
/// which C's `engram import` and engram's `import --from c-json` read back.
async fn export(State(s): S) -> Response {
    run(s, true, |ctx| Ok(compat_c::export_json(ctx.store)?)).await
}

/// `POST /import` with C's export JSON: stored as `import --from c-json` stores it, in one
/// transaction; importing the same export again creates nothing.
async fn import(State(s): S, CBody(body): CBody) -> Response {
    run(s, false, move |ctx| {
        if !body.is_object() || body.get("observations").is_none_or(|o| !o.is_array()) {
            return Err(ToolError::field(
                "observations",
                "the body must be C's export: an object with an observations list",
            ));
        }
        let batch = engram_store::importers::read_c_value(&body, ctx.store.now());
        let report = ctx.store.import_batch(batch, &mut |_, _| {})?;
        Ok(json!({
            "observations_imported": report.created_count("memories"),
            "sessions_imported": report.created_count("sessions"),
            "prompts_imported": report.created_count("prompts"),
            "skipped": report.skipped_count("memories"),
            "warnings": report.warnings,
        }))
    })
    .await
}
