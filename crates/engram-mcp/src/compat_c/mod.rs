//! Seed C's `mem_*` tools (profile `compat-c`): C's names, integer ids, required fields and
//! text results (with the structured fields beside them), over the same store methods.
//! C's `project` is engram's room; `scope: personal` is the shared `common` room.

use crate::compat_a::rename_id;
use crate::tools::*;
use engram_core::memory::IdRef;
use engram_core::{Kind, Memory};
use engram_store::hub::Origin;
use engram_store::{MemoryUpdate, RecallRequest, RememberAction, RememberRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;

mod context;
mod manage;
mod relations;
mod save;
mod search;

pub use context::{ContextArgs, c_context};
pub use context::{SessionEndArgs, SessionStartArgs, SessionSummaryArgs};
pub use manage::{
    CompareArgs, CurrentProjectArgs, DeleteArgs, DoctorArgs, MergeProjectsArgs, NoArgs, ReviewArgs,
    StatsArgs,
};
pub(crate) use relations::relation_json;
pub use save::{PassiveArgs, SaveArgs, SavePromptArgs, SuggestArgs, UpdateArgs};
pub use search::{GetArgs, SearchArgs, TimelineArgs};

/// C's agent tools that engram serves, then its admin tools.
pub const PROFILE: &[&str] = &[
    "mem_save",
    "mem_search",
    "mem_context",
    "mem_session_summary",
    "mem_session_start",
    "mem_session_end",
    "mem_get_observation",
    "mem_suggest_topic_key",
    "mem_capture_passive",
    "mem_update",
    "mem_current_project",
    "mem_pin",
    "mem_unpin",
    "mem_delete",
    "mem_stats",
    "mem_timeline",
    "mem_save_prompt",
    "mem_list_projects",
    "mem_judge",
    "mem_compare",
    "mem_review",
    "mem_merge_projects",
    "mem_doctor",
];

/// C's project and scope, and the caller's directory.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Project {
    /// The project (engram's room). Defaults to the project of `cwd`/`directory`.
    #[serde(default)]
    pub project: Option<String>,
    /// `project` (default), or `personal` / `global` (shared across projects).
    #[serde(default)]
    pub scope: Option<String>,
    /// The caller's working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The caller's working directory (C's name for `cwd`).
    #[serde(default)]
    pub directory: Option<PathBuf>,
}

/// C's answer when a directory holds several repositories and no project was named.
pub(crate) const AMBIGUOUS: &str = "ambiguous";

impl Project {
    /// `cwd`, else `directory`.
    pub fn dir(&self) -> Option<PathBuf> {
        self.cwd.clone().or_else(|| self.directory.clone())
    }

    /// Whether `scope` is C's shared scope (`personal` or `global`: the `common` room).
    fn shared_scope(&self) -> Result<bool, ToolError> {
        match self.scope.as_deref().map(str::trim) {
            None | Some("") | Some("project") => Ok(false),
            Some("personal") | Some("global") => Ok(true),
            Some(other) => Err(ToolError::field(
                "scope",
                format!("{other:?} is not a scope; use project, personal or global"),
            )),
        }
    }

    fn room(&self, ctx: &Ctx<'_>) -> Result<Option<String>, ToolError> {
        if self.shared_scope()? {
            return Ok(Some(engram_core::room::COMMON.to_string()));
        }
        Ok(ctx.room(self.project.clone(), &self.dir()))
    }

    /// The resolved room and where it came from; a directory holding several repositories
    /// (and no project of its own) is `("", "ambiguous")`, one repository is that one.
    fn resolve(&self, ctx: &Ctx<'_>) -> Result<(String, String), ToolError> {
        let room = self.room(ctx)?;
        let dir = self.dir();
        let (r, src) =
            engram_store::rooms::resolve(ctx.store.config(), room.as_deref(), dir.as_deref())?;
        if src == engram_store::rooms::RoomSource::Default
            && let Some(d) = &dir
        {
            let children = engram_store::rooms::git_children(d);
            match children.len() {
                0 => {}
                1 => {
                    return Ok((
                        engram_core::room::normalize_room(&children[0])?,
                        "git_child".into(),
                    ));
                }
                _ => return Ok((String::new(), AMBIGUOUS.into())),
            }
        }
        Ok((r, json!(src).as_str().unwrap_or("default").to_string()))
    }

    /// The room a write goes to. Refused, as C refuses, when the directory is ambiguous
    /// and no project was named: C's `ambiguous_project` error, listing the choices.
    fn write_room(&self, ctx: &Ctx<'_>) -> Result<String, ToolError> {
        let (room, src) = self.resolve(ctx)?;
        if src != AMBIGUOUS {
            return Ok(room);
        }
        let choices = self
            .dir()
            .map(|d| engram_store::rooms::git_children(&d))
            .unwrap_or_default();
        Err(ToolError {
            field: Some("project".into()),
            message: json!({
                "error_code": "ambiguous_project",
                "message": "this directory holds several repositories; name the project to write to",
                "available_projects": choices,
                "hint": "ask the user which project, then call again with project set to it and project_choice_reason: user_selected_after_ambiguous_project",
            })
            .to_string(),
        })
    }
}

/// One of C's errors: its JSON (`error_code`, `message`, `available_projects`, `hint`) as
/// the message, so a C client reads the code it knows, and the field at fault beside it.
pub(crate) fn c_error(
    field: &str,
    code: &str,
    message: String,
    available: Vec<String>,
    hint: &str,
) -> ToolError {
    ToolError {
        field: Some(field.into()),
        message: json!({
            "error_code": code,
            "message": message,
            "available_projects": available,
            "hint": hint,
        })
        .to_string(),
    }
}

/// The projects a store holds (C's `available_projects`).
fn known_projects(ctx: &Ctx<'_>) -> Vec<String> {
    ctx.store
        .rooms()
        .map(|r| r.into_iter().map(|r| r.name).collect())
        .unwrap_or_default()
}

/// The project of the newest open session that a host started (C's per-project
/// `manual-save-…` sessions are no host's), if any.
fn current_session_room(ctx: &Ctx<'_>) -> Result<Option<String>, ToolError> {
    Ok(ctx
        .store
        .recent_sessions(None, 20)?
        .into_iter()
        .find(|s| s.ended_at.is_none() && !s.id.starts_with("manual-save-"))
        .map(|s| s.room))
}

/// The session a write names, which must exist: C creates only its own per-project
/// default session implicitly, and refuses a named one it does not know (`unknown_session`)
/// rather than filing the write under a session nobody started.
fn named_session(
    ctx: &Ctx<'_>,
    session_id: Option<&str>,
) -> Result<Option<engram_store::hub::SessionInfo>, ToolError> {
    let Some(id) = session_id.filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    match ctx.store.session(id)? {
        Some(s) => Ok(Some(s)),
        None => Err(c_error(
            "session_id",
            "unknown_session",
            format!("session {id:?} does not exist"),
            known_projects(ctx),
            "start it first (mem_session_start with its id and directory), or leave session_id out to use the project's default session",
        )),
    }
}

impl Project {
    /// The room a read of C's searches when it names none: C detects the current project,
    /// and a stdio server's own directory says nothing of the caller's. So: the project or
    /// directory the call names (unless it holds several repositories), else the server's
    /// `--project`, else the project of the newest open host session (what C's session-start hook records from the agent's
    /// directory), else `common`.
    fn read_room(&self, ctx: &Ctx<'_>) -> Result<Option<String>, ToolError> {
        let named = self
            .project
            .as_deref()
            .is_some_and(|p| !p.trim().is_empty());
        if named || ctx.default_room.is_some() || self.shared_scope()? {
            return self.room(ctx);
        }
        // A directory that names one project reads it; one holding several repositories
        // names none (writes there are refused), so it reads as if no directory was given.
        if self.dir().is_some() {
            let (room, src) = self.resolve(ctx)?;
            if src != AMBIGUOUS {
                return Ok(Some(room));
            }
        }
        Ok(current_session_room(ctx)?.or_else(|| self.room(ctx).ok().flatten()))
    }

    /// When the call names no project and its directory holds several repositories, the
    /// warning a read answers with: which project it read instead, and how to choose
    /// (tester-c: a read there silently answered for one repository).
    fn ambiguity_warning(&self, ctx: &Ctx<'_>, read: Option<&str>) -> Option<String> {
        let named = self
            .project
            .as_deref()
            .is_some_and(|p| !p.trim().is_empty());
        if named || ctx.default_room.is_some() {
            return None;
        }
        let dir = self.dir()?;
        let (_, src) = self.resolve(ctx).ok()?;
        if src != AMBIGUOUS {
            return None;
        }
        let choices = engram_store::rooms::git_children(&dir);
        Some(format!(
            "this folder holds several repositories ({}); read project {:?} (the newest open session's); pass project to read another",
            choices.join(", "),
            read.unwrap_or(engram_core::room::COMMON)
        ))
    }

    /// Whether an explicit project is one C would accept: an existing project, the
    /// session's, the server's own (`--project`), a `[room_paths]` room, the project the
    /// caller's directory detects (its `.engram/config.json`, git remote or root, or a
    /// repository inside it), or the user's choice after an ambiguity.
    fn backed(
        &self,
        ctx: &Ctx<'_>,
        name: &str,
        choice: &Choice,
        session: Option<&engram_store::hub::SessionInfo>,
    ) -> Result<bool, ToolError> {
        let config = ctx.store.config();
        let norm = |r: &str| {
            engram_store::rooms::resolve(config, Some(r), None)
                .map(|(n, _)| n)
                .ok()
        };
        if name == engram_core::room::COMMON
            || choice.project_choice_reason.is_some()
            || session.is_some_and(|s| s.room == name)
            || ctx.default_room.and_then(norm).as_deref() == Some(name)
            || config
                .room_paths
                .values()
                .any(|r| norm(r.as_str()).as_deref() == Some(name))
        {
            return Ok(true);
        }
        if let Some(d) = self.dir() {
            let (detected, src) = engram_store::rooms::resolve(config, None, Some(&d))?;
            if src != engram_store::rooms::RoomSource::Default && detected == name {
                return Ok(true);
            }
            if engram_store::rooms::git_children(&d)
                .iter()
                .any(|c| norm(c.as_str()).as_deref() == Some(name))
            {
                return Ok(true);
            }
        }
        Ok(ctx.store.rooms()?.iter().any(|r| r.name == name))
    }

    /// The room of one of C's writes (`mem_save`, `mem_session_summary`), in C's order: the
    /// shared room for `personal`/`global`; a validated explicit project (an unbacked name
    /// is C's `unknown_project`, so a typo never starts a project of its own); the
    /// session's project; the server's project, else the caller's directory.
    fn write_room_in(
        &self,
        ctx: &Ctx<'_>,
        choice: &Choice,
        session: Option<&engram_store::hub::SessionInfo>,
    ) -> Result<String, ToolError> {
        if self.shared_scope()? {
            return Ok(engram_core::room::COMMON.into());
        }
        if let Some(p) = self.project.as_deref().filter(|p| !p.trim().is_empty()) {
            let (name, _) = engram_store::rooms::resolve(ctx.store.config(), Some(p), None)?;
            if self.backed(ctx, &name, choice, session)? {
                return Ok(name);
            }
            return Err(c_error(
                "project",
                "unknown_project",
                format!("project {name:?} has no memories, sessions or configuration here"),
                known_projects(ctx),
                "use a project from available_projects (or mem_current_project), send your directory, or start a session there with mem_session_start",
            ));
        }
        match session {
            Some(s) => Ok(s.room.clone()),
            None => self.write_room(ctx),
        }
    }
}

/// C's fields for recovering from an ambiguous project; the choice itself is `project`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Choice {
    /// `user_selected_after_ambiguous_project` when `project` is the user's choice.
    #[serde(default)]
    pub project_choice_reason: Option<String>,
    /// Accepted from C's error for its callers; engram needs only `project`.
    #[serde(default, rename = "recovery_token")]
    pub _recovery_token: Option<String>,
}

impl Choice {
    /// C accepts one reason, and only with a project named.
    fn check(&self, project: &Project) -> Result<(), ToolError> {
        match self.project_choice_reason.as_deref() {
            None => Ok(()),
            Some("user_selected_after_ambiguous_project") if project.project.is_some() => Ok(()),
            Some("user_selected_after_ambiguous_project") => Err(ToolError::field(
                "project",
                "project_choice_reason needs the project the user chose",
            )),
            Some(other) => Err(ToolError::field(
                "project_choice_reason",
                format!("{other:?} is not a reason; use user_selected_after_ambiguous_project"),
            )),
        }
    }
}

fn scope_of(m: &Memory) -> &'static str {
    if m.room == engram_core::room::COMMON {
        "personal"
    } else {
        "project"
    }
}

/// C's scope as C's user set it: `global` kept apart from `personal` (both live in the
/// shared `common` room), from a save through compat-c (`c_scope`) or C's own row (`c.scope`).
fn c_scope(m: &Memory) -> String {
    let shared = scope_of(m);
    let kept = m
        .metadata
        .get("c_scope")
        .or_else(|| m.metadata.get("c").and_then(|c| c.get("scope")))
        .and_then(Value::as_str);
    match kept {
        Some(s @ ("personal" | "global")) if shared == "personal" => s.to_string(),
        _ => shared.to_string(),
    }
}

/// C's project of a memory: a shared-scope memory lives in `common`, and the project C
/// (or the compat-c save) gave it is kept beside (`c_project`, `c.project`) and shown.
fn c_project(m: &Memory) -> String {
    let kept = m
        .metadata
        .get("c_project")
        .or_else(|| m.metadata.get("c").and_then(|c| c.get("project")))
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty());
    match kept {
        Some(p) if m.room == engram_core::room::COMMON => p.to_string(),
        _ => m.room.clone(),
    }
}

/// The tool that made an observation (C's `tool_name`), when C or a POST said it.
fn tool_name_of(m: &Memory) -> Option<&str> {
    m.metadata
        .get("tool_name")
        .or_else(|| m.metadata.get("c").and_then(|c| c.get("tool_name")))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
}

/// C's free-form `type` as an engram kind: a kind or a known alias, else `fact` (the type
/// itself is kept in `metadata.c_type` and shown back).
fn kind_of_type(t: &str) -> Kind {
    Kind::parse(t).unwrap_or(Kind::Fact)
}

/// C's type as C's user wrote it: saved through compat-c (`c_type`) or imported from C's
/// database (`c.type`), else engram's kind.
fn c_type(m: &Memory) -> String {
    m.metadata
        .get("c_type")
        .or_else(|| m.metadata.get("c").and_then(|c| c.get("type")))
        .and_then(|t| t.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| m.kind.to_string())
}

/// C's sync id of a memory (`engram_store::files::git_sync::sync_id`).
pub(crate) fn sync_id_of(m: &Memory) -> String {
    engram_store::files::git_sync::sync_id(m)
}

/// One of C's counters (`revision_count`, `duplicate_count`) as C had it when the memory
/// was imported; 1 (C's default) for a memory that began in engram.
fn c_count(m: &Memory, key: &str) -> u64 {
    m.metadata
        .get("c")
        .and_then(|c| c.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1)
}

fn title_of(m: &Memory) -> String {
    m.title
        .clone()
        .unwrap_or_else(|| m.content.chars().take(60).collect())
}

/// One memory as C's observation JSON (its HTTP lists).
/// The whole store in C's export format (`version` 0.2.0: sessions, observations, prompts,
/// relations): what `GET /export` answers and `engram export --format c-json` writes, and
/// what C's `engram import` and engram's `import` read back.
pub fn export_json(store: &engram_store::Store) -> engram_store::Result<Value> {
    let engram_store::recent::CExport {
        memories,
        sessions,
        prompts,
        judgments,
    } = store.c_export_rows()?;
    let time = |ms: engram_core::Millis| engram_core::time::format(ms);
    Ok(json!({
        "version": "0.2.0",
        "exported_at": time(store.now()),
        "sessions": sessions.iter().map(|s| json!({
            "id": s.id, "project": s.room, "directory": s.directory.clone().unwrap_or_default(),
            "started_at": time(s.started_at), "ended_at": s.ended_at.map(time), "summary": s.summary,
        })).collect::<Vec<_>>(),
        "observations": memories.iter().map(observation_json).collect::<Vec<_>>(),
        "prompts": prompts.iter().map(|p| {
            let mut v = json!({
                "id": p.id, "session_id": p.session_id, "content": p.content, "project": p.room,
                "created_at": time(p.created_at),
            });
            v["sync_id"] = json!(engram_store::git_sync::prompt_sync_id(&v));
            v
        }).collect::<Vec<_>>(),
        "relations": judgments.iter().map(|j| relations::relation_json(store, j)).collect::<Vec<_>>(),
    }))
}

pub(crate) fn observation_json(m: &Memory) -> Value {
    json!({
        "id": m.id,
        "sync_id": sync_id_of(m),
        "session_id": m.session_id,
        "type": c_type(m),
        "title": title_of(m),
        "content": m.content,
        "project": c_project(m),
        "scope": c_scope(m),
        "topic_key": m.topic_key,
        "tool_name": tool_name_of(m),
        "revision_count": c_count(m, "revision_count"),
        "duplicate_count": c_count(m, "duplicate_count"),
        "pinned": m.pinned,
        "created_at": engram_core::time::format(m.created_at),
        "updated_at": engram_core::time::format(m.updated_at),
    })
}

/// C's nudge when the project's open session has gone ten minutes without a save (empty
/// when it has not, or the store cannot say).
fn save_nudge(store: &engram_store::Store, room: &str) -> String {
    store
        .room_activity(room)
        .ok()
        .and_then(|(started, last)| {
            engram_core::activity::save_nudge_minutes(store.now(), started, last)
        })
        .map(engram_core::activity::save_nudge_text)
        .unwrap_or_default()
}

/// What C tells an agent right after its context was compacted.
pub(crate) fn compaction_instruction(project: &str) -> String {
    format!(
        "FIRST ACTION REQUIRED: Call mem_session_summary with the content of the compacted summary above. Use project: '{project}'."
    )
}

fn preview(s: &str, n: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > n {
        format!("{}…", flat.chars().take(n).collect::<String>())
    } else {
        flat
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IdArg {
    /// The memory's integer id.
    pub id: i64,
}

fn id_ref(id: i64) -> Result<IdRef, ToolError> {
    IdRef::parse(&id.to_string()).map_err(|e| ToolError::field("id", e.message))
}

/// Every `mem_*` tool (the order of `tools/list` comes from [`PROFILE`]).
pub fn tools() -> Vec<ToolSpec> {
    let mut all = save::tools();
    all.extend(search::tools());
    all.extend(context::tools());
    all.extend(manage::tools());
    all
}
