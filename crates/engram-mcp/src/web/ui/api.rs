//! The UI's JSON API under `/ui/api/`. Each handler parses its parameters (a clear 4xx
//! naming the field on bad input), then calls `Store` methods on a blocking thread through
//! [`Shared::with_store`]; it never writes SQL, re-ranks or re-filters what the engine
//! returns. Reads never log recall hits: looking at a memory is not using it.

use super::{CSRF_HEADER, harden, same_origin};
use crate::Shared;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use engram_core::memory::IdRef;
use engram_core::{InputError, Kind, Tier};
use engram_store::browse::{ListRequest, Order};
use engram_store::{RecallRequest, Store};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

type Params = Result<Query<HashMap<String, String>>, axum::extract::rejection::QueryRejection>;

/// An error as the page shows it: the status, the field at fault and what to do.
pub struct ApiError {
    status: StatusCode,
    field: Option<String>,
    message: String,
}

impl ApiError {
    fn bad(field: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            field: Some(field.to_string()),
            message: message.into(),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": {"field": self.field, "message": self.message}});
        harden((self.status, axum::Json(body)).into_response())
    }
}

impl From<engram_store::Error> for ApiError {
    fn from(e: engram_store::Error) -> ApiError {
        let status = match &e {
            engram_store::Error::NotFound { .. } => StatusCode::NOT_FOUND,
            e if e.is_caller_error() => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError {
            status,
            field: e.field().map(str::to_string),
            message: e.to_string(),
        }
    }
}

impl From<InputError> for ApiError {
    fn from(e: InputError) -> ApiError {
        engram_store::Error::from(e).into()
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> ApiError {
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            field: None,
            message: format!("{e:#}"),
        }
    }
}

type ApiResult = Result<Response, ApiError>;

/// Runs `f` on the store on a blocking thread and answers its value as JSON.
async fn run<T: serde::Serialize + Send + 'static>(
    shared: Arc<Shared>,
    write: bool,
    f: impl FnOnce(&mut Store) -> Result<T, ApiError> + Send + 'static,
) -> ApiResult {
    let user = crate::auth::current_user();
    let out = tokio::task::spawn_blocking(move || shared.with_store(write, user.as_deref(), f))
        .await
        .map_err(|e| anyhow::anyhow!("the request failed: {e}"))??;
    let value = out?;
    Ok(harden(axum::Json(value).into_response()))
}

pub fn routes(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/overview", get(overview))
        .route("/search", get(search))
        .route("/memories", get(memories))
        .route("/rooms", get(rooms))
        .route("/memory/{id}", get(memory))
        .route("/memory/{id}/curve", get(curve))
        .route("/memory/{id}/{action}", post(act))
        .route("/graph", get(graph))
        .route("/work", get(work))
        .fallback(|| async {
            ApiError {
                status: StatusCode::NOT_FOUND,
                field: None,
                message: "no such UI API path".into(),
            }
        })
        .with_state(shared)
}

fn params(p: Params) -> Result<HashMap<String, String>, ApiError> {
    p.map(|Query(q)| q)
        .map_err(|e| ApiError::bad("query", format!("the query string is malformed: {e}")))
}

fn number(q: &HashMap<String, String>, field: &str, default: usize) -> Result<usize, ApiError> {
    match q.get(field).map(|s| s.trim()).filter(|s| !s.is_empty()) {
        None => Ok(default),
        Some(s) => s
            .parse()
            .map_err(|_| ApiError::bad(field, format!("{s:?} is not a whole number"))),
    }
}

fn text<'a>(q: &'a HashMap<String, String>, field: &str) -> Option<&'a str> {
    q.get(field).map(|s| s.trim()).filter(|s| !s.is_empty())
}

fn kinds(q: &HashMap<String, String>) -> Result<Vec<Kind>, ApiError> {
    let Some(raw) = text(q, "kind") else {
        return Ok(Vec::new());
    };
    Ok(crate::adapt::kinds(
        raw.split(','),
        crate::adapt::AllKinds::Refused,
    )?)
}

fn id_of(raw: &str) -> Result<IdRef, ApiError> {
    Ok(IdRef::parse(raw)?)
}

async fn overview(State(s): State<Arc<Shared>>) -> ApiResult {
    run(s, false, |st| {
        let active = |order| ListRequest {
            tiers: vec![Tier::Active],
            order,
            limit: 8,
            ..Default::default()
        };
        Ok(json!({
            "stats": st.stats()?,
            "activity": st.activity(30)?,
            "strongest": st.list_memories(&active(Order::Strongest))?,
            "fading": st.list_memories(&active(Order::Fading))?,
            "pending_judgments": st.pending_judgments(20)?,
            "reviews_due": st.review_list(None, 20)?,
            "vector_search": st.vector_search_state().map(|(n, approx)| json!({
                "vectors": n, "index": if approx { "hnsw" } else { "exact" }
            })),
            "last_maintenance": st.maintenance_log(1)?.into_iter().next(),
            "last_maintenance_at": st.last_maintenance()?.map(engram_core::time::format),
        }))
    })
    .await
}

async fn search(State(s): State<Arc<Shared>>, p: Params) -> ApiResult {
    let q = params(p)?;
    let query = q.get("q").cloned().unwrap_or_default();
    let mut req = RecallRequest::new(query);
    req.mode = engram_store::Mode::parse(text(&q, "mode").unwrap_or("fast"))?;
    req.limit = number(&q, "limit", 20)?;
    req.kinds = kinds(&q)?;
    req.room = Some(text(&q, "room").unwrap_or("*").to_string());
    req.record_hits = false;
    req.include_superseded = match text(&q, "tier").unwrap_or("current") {
        "current" => false,
        "all" => true,
        other => {
            return Err(ApiError::bad(
                "tier",
                format!("{other:?} is not a choice; use current or all (superseded included)"),
            ));
        }
    };
    if let Some(raw) = text(&q, "as_of") {
        req.as_of = Some(engram_core::time::parse(raw).ok_or_else(|| {
            ApiError::bad(
                "as_of",
                format!("{raw:?} is not a date; give YYYY-MM-DD or an RFC 3339 time"),
            )
        })?);
    }
    run(s, false, move |st| Ok(st.recall(&req)?)).await
}

async fn memories(State(s): State<Arc<Shared>>, p: Params) -> ApiResult {
    let q = params(p)?;
    let order = match text(&q, "order").unwrap_or("recent") {
        "recent" => Order::Recent,
        "strongest" => Order::Strongest,
        "fading" => Order::Fading,
        other => {
            return Err(ApiError::bad(
                "order",
                format!("{other:?} is not an order; use recent, strongest or fading"),
            ));
        }
    };
    let tiers = match text(&q, "tier") {
        None => Vec::new(),
        Some(t) => vec![Tier::parse(t)?],
    };
    let req = ListRequest {
        kinds: kinds(&q)?,
        tiers,
        room: text(&q, "room").map(str::to_string),
        order,
        limit: number(&q, "limit", 50)?,
    };
    run(s, false, move |st| Ok(st.list_memories(&req)?)).await
}

async fn rooms(State(s): State<Arc<Shared>>) -> ApiResult {
    run(s, false, |st| Ok(st.rooms()?)).await
}

/// How far the supersession chain is followed each way.
const CHAIN_STEPS: usize = 20;

async fn memory(State(s): State<Arc<Shared>>, Path(raw): Path<String>) -> ApiResult {
    let id = id_of(&raw)?;
    run(s, false, move |st| {
        let detail = st.show(&id)?;
        let me = detail.memory.id;
        // Newer: follow each successor. Older: follow `supersedes` links out of each memory.
        let mut newer = Vec::new();
        let mut next = detail.superseded_by;
        while let Some(n) = next.filter(|_| newer.len() < CHAIN_STEPS) {
            newer.push(n);
            next = st.show(&IdRef::Id(n))?.superseded_by.filter(|x| *x != me);
        }
        let mut older = Vec::new();
        let mut cur = detail.clone();
        while older.len() < CHAIN_STEPS {
            let Some(prev) = cur
                .links
                .iter()
                .find(|l| l.src == cur.memory.id && l.kind == engram_core::LinkKind::Supersedes)
                .map(|l| l.dst)
                .filter(|p| *p != me && !older.contains(p))
            else {
                break;
            };
            older.push(prev);
            cur = st.show(&IdRef::Id(prev))?;
        }
        let mut ids: Vec<i64> = detail
            .links
            .iter()
            .flat_map(|l| [l.src, l.dst])
            .chain(detail.judgments.iter().flat_map(|j| [j.src, j.dst]))
            .chain(newer.iter().copied())
            .chain(older.iter().copied())
            .filter(|i| *i != me)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids.truncate(300);
        let mut names = serde_json::Map::new();
        for i in ids {
            if let Ok(m) = st.get(&IdRef::Id(i)) {
                names.insert(
                    i.to_string(),
                    json!({"label": label(&m), "kind": m.kind, "tier": m.tier}),
                );
            }
        }
        Ok(json!({
            "detail": detail,
            "chain": {"older": older, "newer": newer},
            "names": names,
        }))
    })
    .await
}

fn label(m: &engram_core::Memory) -> String {
    let raw = m
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| m.content.lines().next().unwrap_or("").to_string());
    raw.chars().take(80).collect()
}

async fn curve(State(s): State<Arc<Shared>>, Path(raw): Path<String>, p: Params) -> ApiResult {
    let id = id_of(&raw)?;
    let q = params(p)?;
    let ahead = number(&q, "days_ahead", 30)?;
    let points = number(&q, "points", 120)?;
    if !(2..=engram_core::curve::MAX_POINTS).contains(&points) {
        return Err(ApiError::bad(
            "points",
            format!(
                "is {points}, it must be 2–{}",
                engram_core::curve::MAX_POINTS
            ),
        ));
    }
    let ahead = u32::try_from(ahead).unwrap_or(u32::MAX);
    run(s, false, move |st| {
        Ok(st.activation_curve(&id, ahead, points)?)
    })
    .await
}

async fn graph(State(s): State<Arc<Shared>>, p: Params) -> ApiResult {
    let q = params(p)?;
    let limit = number(&q, "limit", 2000)?;
    let room = text(&q, "room").map(str::to_string);
    run(s, false, move |st| Ok(st.graph(room.as_deref(), limit)?)).await
}

async fn work(State(s): State<Arc<Shared>>, p: Params) -> ApiResult {
    let q = params(p)?;
    let room = text(&q, "room").unwrap_or("*").to_string();
    run(s, false, move |st| {
        let scope = engram_store::rooms::scope(st.config(), Some(&room), None)?;
        let of = |kinds: Vec<Kind>| ListRequest {
            kinds,
            tiers: vec![Tier::Active],
            room: (room != "*").then(|| room.clone()),
            limit: 20,
            ..Default::default()
        };
        Ok(json!({
            "sessions": st.sessions(50)?,
            "handoffs": st.list_memories(&of(vec![Kind::Handoff]))?,
            "failures": st.list_memories(&of(vec![Kind::Failure, Kind::Bugfix]))?,
            "engineering": st.engineering_stats(&scope)?,
            "briefing": st.context(&engram_store::ContextRequest {
                room: Some(room.clone()),
                ..Default::default()
            })?,
        }))
    })
    .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Edit {
    content: Option<String>,
    title: Option<String>,
    importance: Option<f64>,
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Correction {
    content: String,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pin {
    pinned: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JudgeBody {
    judgment_id: String,
    relation: String,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

fn body<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let bytes = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}".as_slice()
    } else {
        bytes
    };
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad("body", format!("the request body is not accepted: {e}")))
}

/// One state change, run on the store.
type Action = Box<dyn FnOnce(&mut Store) -> Result<Value, ApiError> + Send>;

/// `POST /ui/api/memory/{id}/{action}`: edit, correct, reinforce, pin, forget, restore,
/// judge. Refused unless it carries the UI's header and comes from this origin.
async fn act(
    State(s): State<Arc<Shared>>,
    Path((raw, action)): Path<(String, String)>,
    headers: HeaderMap,
    bytes: axum::body::Bytes,
) -> ApiResult {
    if headers.get(CSRF_HEADER).is_none() || !same_origin(&headers) {
        return Err(ApiError {
            status: StatusCode::FORBIDDEN,
            field: None,
            message: format!(
                "refused: changes must come from engram's own page (same origin, with the {CSRF_HEADER} header)"
            ),
        });
    }
    let id = id_of(&raw)?;
    let call: Action = match action.as_str() {
        "edit" => {
            let e: Edit = body(&bytes)?;
            let kind = e.kind.as_deref().map(Kind::parse).transpose()?;
            Box::new(move |st| {
                let m = st.update(
                    &id,
                    engram_store::MemoryUpdate {
                        content: e.content,
                        title: e.title,
                        importance: e.importance,
                        kind,
                        topic_key: None,
                    },
                )?;
                Ok(json!(m))
            })
        }
        "correct" => {
            let c: Correction = body(&bytes)?;
            Box::new(move |st| Ok(json!(st.correct(&id, &c.content, &c.reason, Some("ui"))?)))
        }
        "reinforce" => {
            body::<Empty>(&bytes)?;
            Box::new(move |st| Ok(json!(st.reinforce(&[id], 1.0, None)?)))
        }
        "pin" => {
            let p: Pin = body(&bytes)?;
            Box::new(move |st| Ok(json!(st.set_pinned(&id, p.pinned)?)))
        }
        "forget" => {
            body::<Empty>(&bytes)?;
            Box::new(move |st| Ok(json!(st.forget(&id)?)))
        }
        "restore" => {
            body::<Empty>(&bytes)?;
            Box::new(move |st| Ok(json!(st.restore(&id)?)))
        }
        "judge" => {
            let j: JudgeBody = body(&bytes)?;
            Box::new(move |st| {
                // The judgment names its own memories; the path's id only checks it exists.
                st.get(&id)?;
                Ok(json!(st.judge(engram_store::maintain::Verdict {
                    judgment_id: j.judgment_id,
                    relation: j.relation,
                    reason: j.reason,
                    actor: Some("ui".into()),
                    actor_kind: Some("human".into()),
                    ..Default::default()
                })?))
            })
        }
        other => {
            return Err(ApiError {
                status: StatusCode::NOT_FOUND,
                field: Some("action".into()),
                message: format!(
                    "{other:?} is not an action; use edit, correct, reinforce, pin, forget, restore or judge"
                ),
            });
        }
    };
    run(s, true, call).await
}
