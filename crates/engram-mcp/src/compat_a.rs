//! Seed A's tools (profile `compat-a`): A's names, argument names and result shapes over
//! the same store methods. `track_failure` and `track_progress` are the native tools,
//! which already take A's arguments and answer with A's `result` and `memory_id`.

use super::native::{HandoffArgs, Place, StatsArgs, do_handoff, stats_value, user_room};
use super::tools::*;
use engram_core::Kind;
use engram_core::memory::IdRef;
use engram_store::{MemoryUpdate, RecallRequest, RememberAction, RememberRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The tools of `compat-a`: A's eight README tools, then the ones its code added
/// (`session_outcome`, the task tools and the checkpoint tools, in `compat_a_tasks.rs`).
pub const PROFILE: &[&str] = &[
    "recall_memory",
    "store_memory",
    "update_memory",
    "session_handoff",
    "track_failure",
    "track_progress",
    "consolidate_memory",
    "memory_stats",
    "session_outcome",
    "create_task",
    "update_task",
    "get_task",
    "list_tasks",
    "restore_checkpoint",
    "list_checkpoints",
];

/// A's four categories, from engram's kinds.
fn category(k: Kind) -> &'static str {
    match k {
        Kind::Failure | Kind::Bugfix => "failure",
        Kind::Assumption => "assumption",
        Kind::Strategy | Kind::Decision | Kind::Preference | Kind::Progress | Kind::Handoff => {
            "strategy"
        }
        _ => "fact",
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RecallMemoryArgs {
    /// What to look for.
    pub query: String,
    /// A's namespace; mapped to the room (`default`: the server's room).
    #[serde(default)]
    pub user_id: Option<String>,
    /// How many memories (default 5).
    #[serde(default)]
    pub top_k: Option<usize>,
    #[serde(default)]
    pub session_id: Option<String>,
    /// all (default), handoff, failure or progress.
    #[serde(default)]
    pub memory_type: Option<String>,
    #[serde(flatten)]
    pub place: Place,
}

/// A's vector floors: hits at cosine 0.50 or more, else (none there) at 0.20 or more; its
/// keyword-only matches never entered. Weaker hits came back as `similarity 0.0` noise.
const A_SIMILARITY_FLOORS: [f64; 2] = [0.5, 0.2];

fn recall_memory(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: RecallMemoryArgs = parse(args)?;
    let kinds = match a.memory_type.as_deref().unwrap_or("all") {
        "all" => vec![],
        "handoff" => vec![Kind::Handoff],
        "failure" => vec![Kind::Failure, Kind::Bugfix],
        "progress" => vec![Kind::Progress],
        other => {
            return Err(ToolError::field(
                "memory_type",
                format!("{other:?} is not one of all, handoff, failure, progress"),
            ));
        }
    };
    let all = kinds.is_empty();
    let limit = a.top_k.unwrap_or(5);
    let room = ctx.room(a.place.room.or(user_room(a.user_id)), &a.place.cwd);
    let req = RecallRequest {
        limit,
        kinds,
        room: room.clone(),
        cwd: a.place.cwd.clone(),
        session_id: a.session_id,
        min_similarity: Some(A_SIMILARITY_FLOORS),
        // A kept a long text as one row: its parts are one hit, with the whole text.
        whole_records: true,
        ..RecallRequest::new(a.query)
    };
    let out = ctx.store.recall(&req)?;
    let mut memories: Vec<Value> = out
        .hits
        .iter()
        .map(|h| {
            let mut v = json!({
                "id": h.memory.id,
                "content": h.memory.content,
                "category": category(h.memory.kind),
                "importance": h.memory.importance,
                // A's quality_score formula is not known (its code imported one that
                // was not there): engram reports the importance, so the key A's
                // scripts read is there.
                "quality_score": h.memory.importance,
                "strength": h.activation,
                // A's similarity is the cosine; searching lexically (no model), the
                // share of the query's words the memory holds.
                "similarity": h.cosine.unwrap_or(h.coverage),
                "score": h.score,
                "metadata": h.memory.metadata,
                "created_at": engram_core::time::format(h.memory.created_at),
                "source": h.memory.source,
            });
            // engram's own addition: the active memories this one conflicts with.
            if !h.conflicts_with.is_empty() {
                v["conflicts_with"] = json!(h.conflicts_with);
            }
            // A: non-failure hits carry up to three recent failures of their component.
            let component = h
                .memory
                .metadata
                .get("component")
                .or(h.memory.metadata.get("feature"));
            if !matches!(h.memory.kind, Kind::Failure | Kind::Bugfix)
                && let Some(c) = component.and_then(Value::as_str)
                && let Ok(fs) = ctx.store.failures_of(&h.memory.room, c, 3)
                && !fs.is_empty()
            {
                v["related_failures"] = json!(
                    fs.iter()
                        .map(|f| json!({ "id": f.id, "content": f.content,
                                      "created_at": engram_core::time::format(f.created_at) }))
                        .collect::<Vec<_>>()
                );
            }
            v
        })
        .collect();
    // A: with memory_type all, the latest handoff leads, each next step marked done or
    // pending by what was recorded after it.
    if all {
        let brief = ctx.store.context(&engram_store::hub::ContextRequest {
            room: room.clone(),
            cwd: a.place.cwd.clone(),
            ..Default::default()
        })?;
        if let Some(h) = brief.last_handoff {
            // Its scores as a hit when recall found it; else its strength now and no
            // similarity or score: A's entries always carry the three numbers, and this
            // one leads by rule, not by score (tester-a: its strength was always 0).
            let found = memories.iter().find(|m| m["id"] == json!(h.memory.id));
            let number = |k: &str| found.map_or(json!(0.0), |m| m[k].clone());
            let strength = match found {
                Some(m) => m["strength"].clone(),
                None => json!(ctx.store.activation_now(&h.memory)?),
            };
            let (similarity, score) = (number("similarity"), number("score"));
            memories.retain(|m| m["id"] != json!(h.memory.id));
            let steps: Vec<Value> = h
                .next_steps
                .iter()
                .map(|s| json!({ "step": s.step, "status": if s.status == "done" { "done" } else { "pending" } }))
                .collect();
            memories.insert(
                0,
                json!({
                    "id": h.memory.id,
                    "content": h.memory.content,
                    "category": category(h.memory.kind),
                    "importance": h.memory.importance,
                    "quality_score": h.memory.importance,
                    "strength": strength,
                    "similarity": similarity,
                    "score": score,
                    "metadata": h.memory.metadata,
                    "created_at": engram_core::time::format(h.memory.created_at),
                    "source": h.memory.source,
                    "handoff_validation": steps,
                }),
            );
            memories.truncate(limit.max(1));
        }
    }
    Ok(
        json!({ "memoriesFound": memories.len(), "memories": memories, "match": out.matched, "notice": super::native::RECALL_NOTICE }),
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StoreMemoryArgs {
    pub content: String,
    /// 0–1.
    pub importance: f64,
    /// fact (default), assumption, failure or strategy.
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub metadata: Option<Value>,
    #[serde(flatten)]
    pub place: Place,
}

/// Seed A's content limit (100 KB).
const A_CONTENT_MAX: usize = 100 * 1024;

fn store_memory(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: StoreMemoryArgs = parse(args)?;
    // A maps an unknown category to `fact`; engram does the same but says so.
    let (kind, warning) = match a.category.as_deref().map(str::trim).unwrap_or("fact") {
        "fact" => (Kind::Fact, None),
        "assumption" => (Kind::Assumption, None),
        "failure" => (Kind::Failure, None),
        "strategy" => (Kind::Strategy, None),
        other => (
            Kind::Fact,
            Some(format!("unknown category {other:?} stored as fact")),
        ),
    };
    if !(0.0..=1.0).contains(&a.importance) {
        return Err(ToolError::field(
            "importance",
            format!("{} is out of range: give 0–1", a.importance),
        ));
    }
    // A links a memory to a task by `metadata.task_id`; the task must exist.
    let task_id = match a.metadata.as_ref().and_then(|m| m.get("task_id")) {
        None | Some(Value::Null) => None,
        Some(t) => {
            let id = t.as_i64().ok_or_else(|| {
                ToolError::field("metadata.task_id", format!("{t} is not a task id"))
            })?;
            // A's own task id (an imported task) names the task as engram's does.
            let task = ctx
                .store
                .task(id)
                .map_err(|e| ToolError::field("metadata.task_id", ToolError::from(e).message))?;
            Some(task.task_id)
        }
    };
    // A took up to 100 KB; what engram's 64 KiB limit would refuse is stored whole as
    // linked parts (a capture), and only what A refused is refused.
    engram_core::limits::check_len("content", &a.content, A_CONTENT_MAX)?;
    let out = ctx.store.remember_capture(RememberRequest {
        content: a.content,
        kind: Some(kind),
        importance: Some(a.importance),
        room: ctx.room(a.place.room.or(user_room(a.user_id)), &a.place.cwd),
        cwd: a.place.cwd,
        source: ctx.source(None),
        metadata: a.metadata,
        ..Default::default()
    })?;
    let msg = match out.action {
        RememberAction::Created => format!("Stored new memory (id={})", out.id),
        RememberAction::Reinforced => format!("Reinforced existing memory (id={})", out.id),
        // A overwrote the old row, so its message names the memory that now holds the
        // text: engram's new one (the one it replaced is `replaced_id`; tester-a).
        RememberAction::Superseded => format!("Replaced contradicting memory (id={})", out.id),
        RememberAction::Merged => format!("Merged into existing memory (id={})", out.id),
        RememberAction::Updated => format!("Updated topic memory (id={})", out.id),
    };
    if let Some(t) = task_id {
        ctx.store.attach_to_task(out.id, t)?;
    }
    let mut v =
        json!({ "result": msg, "memory_id": out.id, "action": out.action, "room": out.room });
    if out.action == RememberAction::Superseded
        && let Some(old) = out.touched.last()
    {
        v["replaced_id"] = json!(old);
    }
    if let Some(w) = warning {
        v["warning"] = json!(w);
    }
    Ok(v)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateMemoryArgs {
    pub memory_id: i64,
    pub new_content: String,
    /// 0–1.
    #[serde(default)]
    pub importance: Option<f64>,
}

fn update_memory(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: UpdateMemoryArgs = parse(args)?;
    let id = IdRef::parse(&a.memory_id.to_string())
        .map_err(|e| ToolError::field("memory_id", e.message))?;
    // A replaced a contradicted memory in place, so its id stayed the memory's: a
    // superseded id updates the memory that replaced it (tester-a).
    let asked = ctx
        .store
        .get(&id)
        .map_err(|e| rename_id(e, "memory_id"))?
        .id;
    let current = ctx.store.current_of(asked)?;
    let m = ctx
        .store
        .update(
            &IdRef::Id(current),
            MemoryUpdate {
                content: Some(a.new_content),
                importance: a.importance,
                ..Default::default()
            },
        )
        .map_err(|e| rename_id(e, "memory_id"))?;
    let mut v = json!({ "result": format!("Updated memory (id={})", m.id), "memory_id": m.id });
    if current != asked {
        v["replaced_id"] = json!(asked);
    }
    Ok(v)
}

/// Reports an engine error about `id` under the seed's own argument name.
pub fn rename_id(e: engram_store::Error, field: &str) -> ToolError {
    let mut t = ToolError::from(e);
    if t.field.as_deref() == Some("id") {
        t.message = t.message.replacen("`id`", &format!("`{field}`"), 1);
        t.field = Some(field.to_string());
    }
    t
}

fn session_handoff(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: HandoffArgs = parse(args)?;
    let v = do_handoff(ctx, a)?;
    let mut out = json!({ "result": v["result"], "memory_id": v["memory_id"] });
    for k in [
        "task_id",
        "checkpoint_id",
        "checkpoint_version",
        "checkpoint_reason",
    ] {
        if !v[k].is_null() {
            out[k] = v[k].clone();
        }
    }
    Ok(out)
}

fn memory_stats(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: StatsArgs = parse(args)?;
    let room = ctx.room(
        a.place.room.clone().or(user_room(a.user_id.clone())),
        &a.place.cwd,
    );
    let scope =
        engram_store::rooms::scope(ctx.store.config(), room.as_deref(), a.place.cwd.as_deref())?;
    let avg = ctx.store.average_activation(&scope)?;
    let full = stats_value(ctx, a)?;
    let mut categories = serde_json::Map::new();
    if let Some(by_kind) = full["by_kind"].as_object() {
        for (k, n) in by_kind {
            if let Ok(kind) = Kind::parse(k) {
                let e = categories.entry(category(kind)).or_insert(json!(0));
                *e = json!(e.as_u64().unwrap_or(0) + n.as_u64().unwrap_or(0));
            }
        }
    }
    let eng = &full["engineering"];
    let active: serde_json::Map<String, Value> = eng["active_features"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            (
                f["feature"].as_str().unwrap_or("").to_string(),
                json!({"status": f["status"], "completion": f["completion"]}),
            )
        })
        .collect();
    Ok(json!({
        "total": full["total_memories"],
        "categories": categories,
        "avg_strength": avg,
        "last_maintenance": ctx.store.last_maintenance()?.map(engram_core::time::format),
        "fts_available": true,
        "engineering": {
            "failures": { "total": eng["failures_total"], "by_component": eng["failures_by_component"], "by_severity": eng["failures_by_severity"] },
            "features": { "total_tracked": eng["features_tracked"], "active": active },
        },
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConsolidateArgs {
    /// Seed A's namespace (engram's room); every room when absent.
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(flatten)]
    pub place: Place,
}

fn consolidate_memory(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: ConsolidateArgs = parse(args)?;
    let room = ctx.room(a.place.room.or(user_room(a.user_id)), &a.place.cwd);
    let room = match (&room, &a.place.cwd) {
        (None, Some(_)) => {
            Some(engram_store::rooms::resolve(ctx.store.config(), None, a.place.cwd.as_deref())?.0)
        }
        _ => room,
    };
    let done = ctx.store.consolidate_now(room.as_deref())?;
    let mut details = Vec::new();
    for c in &done {
        let kept = ctx.store.get(&engram_core::memory::IdRef::Id(c.keeper))?;
        details.push(json!({ "kept": c.keeper, "removed": c.archived, "content": kept.content }));
    }
    let archived: usize = done.iter().map(|c| c.archived.len()).sum();
    Ok(json!({
        "result": format!("Consolidated {} clusters ({archived} memories archived into their keepers; nothing deleted)", done.len()),
        "details": details,
    }))
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "consolidate_memory",
            title: "Consolidate memory",
            description: "Merge clusters of near-identical memories into their strongest member now. The others are archived with derived_from links (never deleted).",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<ConsolidateArgs>,
            call: consolidate_memory,
        },
        ToolSpec {
            name: "recall_memory",
            title: "Recall memory",
            description: "Search memories (hybrid ranking with decay). Use before acting. memory_type filters to handoff, failure or progress entries.",
            hints: Hints {
                read_only: false,
                destructive: false,
                idempotent: true,
            },
            schema: schema_of::<RecallMemoryArgs>,
            call: recall_memory,
        },
        ToolSpec {
            name: "store_memory",
            title: "Store memory",
            description: "Store a memory with an importance 0–1 and a category (fact, assumption, failure, strategy). Exact repeats reinforce the existing memory.",
            hints: WRITE,
            schema: schema_of::<StoreMemoryArgs>,
            call: store_memory,
        },
        ToolSpec {
            name: "update_memory",
            title: "Update memory",
            description: "Replace a memory's content (and importance); the previous text is kept in its history.",
            hints: DESTRUCTIVE,
            schema: schema_of::<UpdateMemoryArgs>,
            call: update_memory,
        },
        ToolSpec {
            name: "session_handoff",
            title: "Session handoff",
            description: "Record a handoff: summary, completed, in progress, blocked and next steps.",
            hints: WRITE,
            schema: schema_of::<HandoffArgs>,
            call: session_handoff,
        },
        ToolSpec {
            name: "memory_stats",
            title: "Memory statistics",
            description: "Totals by category, average strength, and the engineering section (failures by component and severity, active features).",
            hints: READ,
            schema: schema_of::<StatsArgs>,
            call: memory_stats,
        },
    ]
}
