//! Seed A's task and checkpoint tools (profile `compat-a`): `create_task`, `update_task`,
//! `get_task`, `list_tasks`, `restore_checkpoint`, `list_checkpoints`, each one call to
//! the engine's tasks ([`engram_store::tasks`]) with A's argument names and result keys.
//! Checkpoints are written by `session_handoff`, `track_failure` and `track_progress`
//! given a `task_id` (the native tools' own arguments); this file also holds what those
//! tools share for it: the handoff fields A keeps for a restore ([`NotRedo`],
//! [`WorkingSet`]) and the checkpoint keys of their results ([`checkpoint_fields`]).

use super::native::{Place, user_room};
use super::tools::*;
use engram_core::task::RestoreMode;
use engram_store::RememberAction;
use engram_store::tasks::{TaskChange, TaskRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// One thing not to redo, and why.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NotRedo {
    Full {
        action: String,
        #[serde(default)]
        reason: Option<String>,
    },
    Action(String),
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct WorkingSet {
    #[serde(default)]
    pub files: Vec<String>,
    #[serde(default)]
    pub tools: Vec<String>,
}

/// Seed A's checkpoint keys (`task_id`, `checkpoint_id`, `checkpoint_version`,
/// `checkpoint_reason`) on a hub write's result, read from the record the write landed on.
pub fn checkpoint_fields(ctx: &mut Ctx<'_>, id: i64, v: &mut Value) -> Result<(), ToolError> {
    let m = ctx.store.get(&engram_core::memory::IdRef::Id(id))?;
    if let Some(version) = m.metadata.get("checkpoint_version") {
        v["task_id"] = m.metadata["task_id"].clone();
        v["checkpoint_id"] = json!(m.id);
        v["checkpoint_version"] = version.clone();
        v["checkpoint_reason"] = m.metadata["checkpoint_reason"].clone();
    }
    Ok(())
}

/// The most tasks or checkpoints one list returns.
const MAX_LIST: usize = 1000;

fn list_limit(field: &str, limit: Option<usize>, default: usize) -> Result<usize, ToolError> {
    match limit.unwrap_or(default) {
        0 => Err(ToolError::field(field, "is 0; give 1 or more")),
        n if n > MAX_LIST => Err(ToolError::field(
            field,
            format!("is {n}, the limit is {MAX_LIST}"),
        )),
        n => Ok(n),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateTaskArgs {
    /// A short name for the piece of work.
    pub name: String,
    /// What done looks like.
    #[serde(default)]
    pub goal: Option<String>,
    /// planning (default), in_progress, blocked, review, done or cancelled.
    #[serde(default)]
    pub status: Option<String>,
    /// Seed A's namespace; mapped to the room.
    #[serde(default)]
    pub user_id: Option<String>,
    /// Your own fields (a JSON object).
    #[serde(default)]
    pub metadata: Option<Value>,
    #[serde(flatten)]
    pub place: Place,
}

fn create_task(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: CreateTaskArgs = parse(args)?;
    let origin = engram_store::Origin {
        room: ctx.room(a.place.room.or(user_room(a.user_id)), &a.place.cwd),
        cwd: a.place.cwd,
        session_id: None,
        source: ctx.source(None),
    };
    let (task, out) = ctx.store.create_task(TaskRequest {
        name: a.name,
        goal: a.goal,
        status: a.status,
        metadata: a.metadata,
        origin,
    })?;
    let result = match out.action {
        RememberAction::Created => {
            format!("Created task {:?} (task_id={})", task.name, task.task_id)
        }
        _ => format!(
            "Task {:?} already exists with this goal and status (task_id={})",
            task.name, task.task_id
        ),
    };
    Ok(json!({ "result": result, "task_id": task.task_id, "task": task }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateTaskArgs {
    pub task_id: i64,
    /// planning, in_progress, blocked, review, done or cancelled.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub goal: Option<String>,
    /// Replaces the task's own fields (a JSON object).
    #[serde(default)]
    pub metadata: Option<Value>,
}

fn update_task(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: UpdateTaskArgs = parse(args)?;
    let task = ctx.store.update_task(
        a.task_id,
        TaskChange {
            status: a.status,
            goal: a.goal,
            metadata: a.metadata,
        },
    )?;
    Ok(json!({
        "result": format!("Updated task {:?} (task_id={}): {}", task.name, task.task_id, task.status),
        "task_id": task.task_id,
        "task": task,
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetTaskArgs {
    pub task_id: i64,
    /// Accepted for seed A's callers; a task id is unique across rooms.
    #[serde(default)]
    pub user_id: Option<String>,
}

fn get_task(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: GetTaskArgs = parse(args)?;
    Ok(json(&ctx.store.task_view(a.task_id)?))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListTasksArgs {
    /// Only tasks in this status.
    #[serde(default)]
    pub status: Option<String>,
    /// Seed A's namespace; mapped to the room (every room when absent and no cwd).
    #[serde(default)]
    pub user_id: Option<String>,
    /// At most this many (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(flatten)]
    pub place: Place,
}

fn list_tasks(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: ListTasksArgs = parse(args)?;
    let limit = list_limit("limit", a.limit, 50)?;
    let room = ctx.room(a.place.room.or(user_room(a.user_id)), &a.place.cwd);
    let scope =
        engram_store::rooms::scope(ctx.store.config(), room.as_deref(), a.place.cwd.as_deref())?;
    // One more than asked, to say whether the list was cut.
    let mut tasks = ctx.store.tasks(&scope, a.status.as_deref(), limit + 1)?;
    let truncated = tasks.len() > limit;
    tasks.truncate(limit);
    Ok(json!({ "count": tasks.len(), "tasks": tasks, "truncated": truncated }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RestoreCheckpointArgs {
    /// The task; when absent, the most recently updated open task of the room.
    #[serde(default)]
    pub task_id: Option<i64>,
    /// The checkpoint version (default: the latest).
    #[serde(default)]
    pub version: Option<u64>,
    /// FULL (every task memory, at most 20), SELECTIVE (default: importance ≥ 0.5 or a
    /// failure, at most 10) or NONE (the state only).
    #[serde(default)]
    pub memory_restore_mode: Option<String>,
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(flatten)]
    pub place: Place,
}

fn restore_checkpoint(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: RestoreCheckpointArgs = parse(args)?;
    let mode = RestoreMode::parse(a.memory_restore_mode.as_deref().unwrap_or("SELECTIVE"))?;
    let task_id = match a.task_id {
        Some(t) => t,
        None => {
            let room = ctx.room(a.place.room.or(user_room(a.user_id)), &a.place.cwd);
            let scope = engram_store::rooms::scope(
                ctx.store.config(),
                room.as_deref(),
                a.place.cwd.as_deref(),
            )?;
            match ctx.store.task_to_restore(&scope)? {
                Some(t) => t.task_id,
                None => {
                    return Err(ToolError::field(
                        "task_id",
                        "no open task in this room; give a task_id (list_tasks shows them)",
                    ));
                }
            }
        }
    };
    let r = ctx.store.restore_checkpoint(task_id, a.version, mode)?;
    let mut v = json(&r);
    v["ok"] = json!(true);
    v["result"] = json!(format!(
        "Restored task {:?} (task_id={}) at checkpoint version {} ({}), {} memories",
        r.task.name,
        task_id,
        r.checkpoint.version,
        r.checkpoint.reason,
        r.memories.len()
    ));
    v["task_id"] = json!(task_id);
    v["checkpoint_id"] = json!(r.checkpoint.checkpoint_id);
    v["checkpoint_version"] = json!(r.checkpoint.version);
    Ok(v)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListCheckpointsArgs {
    pub task_id: i64,
    /// At most this many, newest first (default 10, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
}

fn list_checkpoints(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: ListCheckpointsArgs = parse(args)?;
    let limit = list_limit("limit", a.limit, 10)?;
    let cps = ctx.store.checkpoints(a.task_id, limit)?;
    Ok(json!({ "task_id": a.task_id, "count": cps.len(), "checkpoints": cps }))
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "create_task",
            title: "Create a task",
            description: "Start tracking a piece of work (name, goal, status). Pass its task_id to session_handoff, track_failure and track_progress: each writes a checkpoint that restore_checkpoint brings back.",
            hints: WRITE,
            schema: schema_of::<CreateTaskArgs>,
            call: create_task,
        },
        ToolSpec {
            name: "update_task",
            title: "Update a task",
            description: "Change a task's status (planning, in_progress, blocked, review, done, cancelled), goal or metadata; the previous version is kept in its history.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<UpdateTaskArgs>,
            call: update_task,
        },
        ToolSpec {
            name: "get_task",
            title: "Get a task",
            description: "A task with its handoffs, failures, progress entries and other memories, and its latest checkpoint.",
            hints: READ,
            schema: schema_of::<GetTaskArgs>,
            call: get_task,
        },
        ToolSpec {
            name: "list_tasks",
            title: "List tasks",
            description: "The tasks of a room (or every room), most recently updated first, optionally of one status.",
            hints: READ,
            schema: schema_of::<ListTasksArgs>,
            call: list_tasks,
        },
        ToolSpec {
            name: "restore_checkpoint",
            title: "Restore a checkpoint",
            description: "Pick a task up where it was left: its goal, the last handoff's state (completed, in progress, blocked, next steps, must_not_redo, must_preserve, working_set) and, by memory_restore_mode, its memories (FULL, SELECTIVE, NONE).",
            hints: READ,
            schema: schema_of::<RestoreCheckpointArgs>,
            call: restore_checkpoint,
        },
        ToolSpec {
            name: "list_checkpoints",
            title: "List checkpoints",
            description: "A task's checkpoints, newest first: version, reason (MANUAL_HANDOFF, FAILURE, PROGRESS) and the record that wrote it.",
            hints: READ,
            schema: schema_of::<ListCheckpointsArgs>,
            call: list_checkpoints,
        },
    ]
}
