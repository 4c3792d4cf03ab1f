//! Seed C's `mem_*` tools (profile `compat-c`): C's names, integer ids, required fields and
//! text results (with the structured fields beside them), over the same store methods.
//! C's `project` is engram's room; `scope: personal` is the shared `common` room.

use super::compat_a::rename_id;
use super::tools::*;
use engram_core::memory::IdRef;
use engram_core::{Kind, Memory};
use engram_store::hub::{ContextRequest, Origin};
use engram_store::{MemoryUpdate, RecallRequest, RememberAction, RememberRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;

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

    fn room(&self, ctx: &Ctx<'_>) -> Result<Option<String>, ToolError> {
        match self.scope.as_deref().map(str::trim) {
            None | Some("") | Some("project") => Ok(ctx.room(self.project.clone(), &self.dir())),
            Some("personal") | Some("global") => Ok(Some(engram_core::room::COMMON.to_string())),
            Some(other) => Err(ToolError::field(
                "scope",
                format!("{other:?} is not a scope; use project, personal or global"),
            )),
        }
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

fn title_of(m: &Memory) -> String {
    m.title
        .clone()
        .unwrap_or_else(|| m.content.chars().take(60).collect())
}

/// One memory as C's observation JSON (its HTTP lists).
pub(crate) fn observation_json(m: &Memory) -> Value {
    json!({
        "id": m.id,
        "sync_id": m.uid,
        "session_id": m.session_id,
        "type": c_type(m),
        "title": title_of(m),
        "content": m.content,
        "project": m.room,
        "scope": scope_of(m),
        "topic_key": m.topic_key,
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
pub struct SaveArgs {
    /// A short, searchable title.
    pub title: String,
    /// What happened, why, where and what was learned (the title alone is stored when absent).
    #[serde(default)]
    pub content: Option<String>,
    /// C's legacy name for `content`.
    #[serde(default)]
    pub observation: Option<String>,
    /// decision, architecture, bugfix, pattern, config, discovery, learning, manual (default).
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    /// A stable key for an evolving topic (see mem_suggest_topic_key).
    #[serde(default)]
    pub topic_key: Option<String>,
    /// Accepted for compatibility; prompts are not captured.
    #[serde(default, rename = "capture_prompt")]
    pub _capture_prompt: Option<bool>,
    #[serde(flatten)]
    pub project: Project,
    #[serde(flatten)]
    pub choice: Choice,
}

/// C's session for a save that names none: one per project.
fn default_session(room: &str) -> String {
    format!("manual-save-{room}")
}

fn mem_save(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let mut a: SaveArgs = parse(args)?;
    if a.content.is_none() {
        a.content = a.observation.take();
    }
    let ctype = a.kind.clone().unwrap_or_else(|| "manual".into());
    let kind = kind_of_type(&ctype);
    a.choice.check(&a.project)?;
    let room = a.project.write_room(ctx)?;
    let session_id = a
        .session_id
        .clone()
        .unwrap_or_else(|| default_session(&room));
    // C creates the session a save names (or its per-project default) when it is new.
    let dir = a.project.dir();
    ctx.store.session_start(
        &session_id,
        &Origin {
            room: Some(room.clone()),
            cwd: None,
            session_id: None,
            source: ctx.source(None),
        },
        dir.as_deref().and_then(|d| d.to_str()),
    )?;
    let out = ctx.store.remember(RememberRequest {
        content: a
            .content
            .clone()
            .filter(|c| !c.trim().is_empty())
            .unwrap_or_else(|| a.title.clone()),
        title: Some(a.title.clone()),
        kind: Some(kind),
        room: Some(room),
        cwd: a.project.dir(),
        topic_key: a.topic_key.clone(),
        source: ctx.source(None),
        session_id: Some(session_id),
        metadata: Some(json!({ "c_type": ctype })),
        // C leaves contradictions for the agent to judge (`mem_judge`) unless the user
        // opted in to engram's automatic supersession.
        supersede: Some(ctx.store.config().compat_c_auto_supersede),
        ..Default::default()
    })?;
    let mut text = match out.action {
        RememberAction::Created => format!("Memory saved: {:?} ({ctype})", a.title),
        RememberAction::Reinforced => format!(
            "Memory already known, reinforced: {:?} ({ctype}) #{}",
            a.title, out.id
        ),
        RememberAction::Merged => {
            format!("Memory merged into #{}: {:?} ({ctype})", out.id, a.title)
        }
        RememberAction::Superseded => format!(
            "Memory saved: {:?} ({ctype}); it supersedes {}",
            a.title,
            out.touched
                .iter()
                .map(|i| format!("#{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        RememberAction::Updated => format!(
            "Memory updated: {:?} ({ctype}) #{}, revision {}",
            a.title,
            out.id,
            out.revision.unwrap_or(1)
        ),
    };
    if a.topic_key.is_none() {
        text.push_str(&format!(
            "\nSuggested topic_key: {}",
            engram_core::topic::suggest_topic_key(
                &ctype,
                &a.title,
                a.content.as_deref().unwrap_or("")
            )
        ));
    }
    if !out.candidates.is_empty() {
        text.push_str(&format!(
            "\nCONFLICT REVIEW PENDING — {} candidate(s); use mem_judge to record verdicts.",
            out.candidates.len()
        ));
    }
    let candidates: Vec<Value> = out
        .candidates
        .iter()
        .map(|c| {
            json!({ "id": c.id, "title": c.title, "type": c.kind, "score": c.score,
                    "judgment_id": c.judgment_id })
        })
        .collect();
    let mut v = json!({ "project": out.room, "result": text, "id": out.id, "sync_id": out.uid,
                        "action": out.action, "judgment_required": !candidates.is_empty() });
    if let Some(first) = out.candidates.first() {
        v["judgment_status"] = json!("pending");
        v["judgment_id"] = json!(first.judgment_id);
        v["candidates"] = json!(candidates);
    }
    if !out.redacted.is_empty() {
        v["redacted"] = json!(out.redacted);
    }
    Ok(v)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    pub query: String,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Search every project.
    #[serde(default)]
    pub all_projects: Option<bool>,
    /// all (default: every word must match) or any.
    #[serde(default)]
    pub match_mode: Option<String>,
    /// Default 10; more than 20 is capped at 20.
    #[serde(default)]
    pub limit: Option<usize>,
    /// `text` (default: previews with the structured results beside them) or `json` (the
    /// structured results only).
    #[serde(default)]
    pub response_format: Option<String>,
    #[serde(flatten)]
    pub project: Project,
}

fn mem_search(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: SearchArgs = parse(args)?;
    let json_only = match a.response_format.as_deref().unwrap_or("text") {
        "text" => false,
        "json" => true,
        other => {
            return Err(ToolError::field(
                "response_format",
                format!("{other:?} is not a format; use text or json"),
            ));
        }
    };
    let all_words = match a.match_mode.as_deref().unwrap_or("all") {
        "all" => true,
        "any" => false,
        other => {
            return Err(ToolError::field(
                "match_mode",
                format!("{other:?} is not a match mode; use all or any"),
            ));
        }
    };
    // C caps the limit at 20 (and treats 0 as the default).
    let limit = match a.limit.unwrap_or(10) {
        0 => 10,
        n => n.min(20),
    };
    let room = if a.all_projects.unwrap_or(false) {
        Some("*".to_string())
    } else {
        a.project.room(ctx)?
    };
    // Every kind (session summaries are episodes, which plain recall leaves out), or the
    // one asked for.
    let kinds: Vec<Kind> = match a.kind.as_deref() {
        Some(t) => vec![kind_of_type(t)],
        None => Kind::ALL.to_vec(),
    };
    let req = RecallRequest {
        limit: if all_words { 100 } else { limit },
        kinds,
        room,
        cwd: a.project.dir(),
        ..RecallRequest::new(a.query.clone())
    };
    let out = ctx.store.recall(&req)?;
    let hits: Vec<_> = out
        .hits
        .iter()
        .filter(|h| !all_words || h.coverage >= 0.999)
        .take(limit)
        .collect();
    if hits.is_empty() {
        return Ok(
            json!({ "result": format!("No memories found for: {:?}", a.query), "results": [] }),
        );
    }
    let mut text = format!("Found {} memories:\n", hits.len());
    let mut results = Vec::new();
    for (i, h) in hits.iter().enumerate() {
        let m = &h.memory;
        text.push_str(&format!(
            "\n[{}] #{} ({}) — {}\n    {}\n    {} | project: {} | scope: {}\n",
            i + 1,
            m.id,
            c_type(m),
            title_of(m),
            preview(&m.content, 300),
            engram_core::time::format(m.created_at),
            m.room,
            scope_of(m)
        ));
        results.push(json!({ "id": m.id, "sync_id": m.uid, "title": title_of(m), "type": c_type(m), "scope": scope_of(m), "pinned": m.pinned, "project": m.room, "score": h.score }));
    }
    text.push_str(
        "\nResults above are previews (300 chars); use mem_get_observation for the full text.",
    );
    if !a.all_projects.unwrap_or(false)
        && let Ok((room, _)) = a.project.resolve(ctx)
    {
        text.push_str(&save_nudge(ctx.store, &room));
    }
    if json_only {
        return Ok(json!({ "results": results, "count": results.len() }));
    }
    Ok(json!({ "result": text, "results": results, "notice": super::native::RECALL_NOTICE }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContextArgs {
    /// Budget in bytes (default 16384, at most 65536).
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// A shorter context: fewer sessions and prompts, titles instead of the briefing.
    #[serde(default)]
    pub compact: Option<bool>,
    #[serde(flatten)]
    pub project: Project,
}

/// C's context: its Recent Sessions and Recent User Prompts sections, engram's briefing as
/// the observations, and C's stats footer, cut to `max_bytes` on a character boundary.
/// Returns the text, the project and whether it was cut. Shared with the HTTP `/context`.
pub(crate) fn c_context(
    store: &engram_store::Store,
    room: Option<String>,
    cwd: Option<PathBuf>,
    compact: bool,
    max_bytes: usize,
) -> Result<(String, Option<String>, bool), ToolError> {
    if max_bytes == 0 || max_bytes > 64 * 1024 {
        return Err(ToolError::field(
            "max_bytes",
            format!("is {max_bytes}; it must be between 1 and 65536"),
        ));
    }
    let (resolved, _) =
        engram_store::rooms::resolve(store.config(), room.as_deref(), cwd.as_deref())?;
    let only = Some(resolved.as_str());
    let (n_sessions, n_prompts, preview_len) = if compact { (3, 5, 100) } else { (5, 10, 200) };
    let sessions = store.recent_sessions(only, n_sessions)?;
    let prompts = store.recent_prompts(only, n_prompts)?;
    let b = store.context(&ContextRequest {
        room: Some(resolved.clone()),
        cwd: None,
        max_bytes: Some(max_bytes),
        token_budget: None,
    })?;
    let recent = store.recent_memories(only, if compact { 10 } else { 20 })?;
    if sessions.is_empty() && prompts.is_empty() && recent.is_empty() {
        return Ok((
            "No previous session memories found.".into(),
            Some(resolved),
            false,
        ));
    }
    let mut t = String::from("## Memory from Previous Sessions\n");
    if !sessions.is_empty() {
        t.push_str("\n### Recent Sessions\n");
        for s in &sessions {
            let n = store.session_memory_count(&s.id)?;
            t.push_str(&format!(
                "- **{}** ({}): {} [{n} observations]\n",
                s.room,
                engram_core::time::format(s.started_at),
                preview(s.summary.as_deref().unwrap_or("(no summary)"), preview_len)
            ));
        }
    }
    if !prompts.is_empty() {
        t.push_str("\n### Recent User Prompts\n");
        for p in &prompts {
            t.push_str(&format!(
                "- {}: {}\n",
                engram_core::time::format(p.created_at),
                preview(&p.content, preview_len)
            ));
        }
    }
    t.push_str("\n### Recent Observations\n");
    if compact || b.text.trim().is_empty() {
        for m in &recent {
            t.push_str(&format!(
                "- [{}] **{}**: {}\n",
                c_type(m),
                title_of(m),
                preview(&m.content, if compact { 120 } else { 300 })
            ));
        }
    } else {
        t.push_str(&b.text);
        if !b.text.ends_with('\n') {
            t.push('\n');
        }
    }
    let rooms = store.rooms()?;
    let memories: u64 = rooms.iter().map(|r| r.memories).sum();
    let all_sessions: u64 = rooms.iter().map(|r| r.sessions).sum();
    let names: Vec<&str> = rooms.iter().map(|r| r.name.as_str()).collect();
    let footer = format!(
        "\n---\nMemory stats: {all_sessions} sessions, {memories} observations across projects: {}",
        names.join(", ")
    );
    let mut truncated = b.truncated;
    let room_for_footer = max_bytes.saturating_sub(footer.len() + "\n[truncated]".len());
    if t.len() > room_for_footer {
        let mut cut = room_for_footer;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
        t.push_str("\n[truncated]");
        truncated = true;
    }
    t.push_str(&footer);
    t.push_str(&save_nudge(store, &resolved));
    Ok((t, Some(resolved), truncated))
}

fn mem_context(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: ContextArgs = parse(args)?;
    let room = a.project.room(ctx)?;
    let (text, project, truncated) = c_context(
        ctx.store,
        room,
        a.project.dir(),
        a.compact.unwrap_or(false),
        a.max_bytes.unwrap_or(16 * 1024),
    )?;
    Ok(json!({ "project": project, "result": text, "truncated": truncated }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionSummaryArgs {
    /// Goal, discoveries, accomplished, next steps, relevant files.
    pub content: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(flatten)]
    pub project: Project,
    #[serde(flatten)]
    pub choice: Choice,
}

fn mem_session_summary(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: SessionSummaryArgs = parse(args)?;
    a.choice.check(&a.project)?;
    let room = a.project.write_room(ctx)?;
    let out = ctx.store.remember(RememberRequest {
        content: a.content,
        title: Some(format!("Session summary: {room}")),
        kind: Some(Kind::Episode),
        importance: Some(0.6),
        room: Some(room.clone()),
        source: ctx.source(None),
        session_id: a.session_id,
        metadata: Some(json!({ "c_type": "session_summary" })),
        ..Default::default()
    })?;
    Ok(
        json!({ "project": room, "result": format!("Session summary saved for project {room:?}"), "id": out.id }),
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionStartArgs {
    pub id: String,
    #[serde(flatten)]
    pub project: Project,
}

fn mem_session_start(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: SessionStartArgs = parse(args)?;
    let room = a.project.room(ctx)?;
    let dir = a.project.dir().map(|p| p.to_string_lossy().into_owned());
    let origin = Origin {
        room,
        cwd: a.project.dir(),
        session_id: None,
        source: ctx.source(None),
    };
    let s = ctx.store.session_start(&a.id, &origin, dir.as_deref())?;
    Ok(
        json!({ "project": s.room, "result": format!("Session {:?} started for project {:?}", s.id, s.room) }),
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionEndArgs {
    pub id: String,
    #[serde(default)]
    pub summary: Option<String>,
    /// Ignored, as in seed C.
    #[serde(default, rename = "project")]
    pub _project: Option<String>,
}

fn mem_session_end(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: SessionEndArgs = parse(args)?;
    let s = ctx.store.session_end(&a.id, a.summary.as_deref())?;
    Ok(json!({ "project": s.room, "result": format!("Session {:?} completed", s.id) }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct IdArg {
    /// The memory's integer id.
    pub id: i64,
}

fn id_ref(id: i64) -> Result<IdRef, ToolError> {
    IdRef::parse(&id.to_string()).map_err(|e| ToolError::field("id", e.message))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetArgs {
    /// The memory's integer id.
    pub id: i64,
    /// Also list the memory's earlier versions (oldest first).
    #[serde(default)]
    pub include_history: Option<bool>,
    /// With include_history: the version number to continue after (from `next_history_cursor`).
    #[serde(default)]
    pub history_cursor: Option<u64>,
}

/// Versions returned per call with include_history.
const HISTORY_PAGE: usize = 20;

fn mem_get_observation(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: GetArgs = parse(args)?;
    let d = ctx.store.show(&id_ref(a.id)?)?;
    let m = &d.memory;
    let revisions = d.event_counts.get("update").copied().unwrap_or(0) + 1;
    let duplicates = d.event_counts.get("reinforce").copied().unwrap_or(0) + 1;
    let text = format!(
        "#{} [{}] {}\n{}\nSession: {}\nProject: {}\nScope: {}\nTopic: {}\nDuplicates: {duplicates}\nRevisions: {revisions}\nCreated: {}",
        m.id,
        c_type(m),
        title_of(m),
        m.content,
        m.session_id.as_deref().unwrap_or("-"),
        m.room,
        scope_of(m),
        m.topic_key.as_deref().unwrap_or("-"),
        engram_core::time::format(m.created_at)
    );
    let mut v = json!({ "result": text, "id": m.id, "sync_id": m.uid, "tier": m.tier, "superseded_by": d.superseded_by });
    if a.include_history.unwrap_or(false) || a.history_cursor.is_some() {
        let after = a.history_cursor.unwrap_or(0);
        let page: Vec<_> = d
            .revisions
            .iter()
            .filter(|r| r.number > after)
            .take(HISTORY_PAGE)
            .collect();
        let more = d.revisions.iter().filter(|r| r.number > after).count() > page.len();
        v["next_history_cursor"] = json!(if more {
            page.last().map(|r| r.number)
        } else {
            None
        });
        v["history"] = json!(page);
    }
    Ok(v)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SuggestArgs {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
}

fn mem_suggest_topic_key(_ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: SuggestArgs = parse(args)?;
    if a.title.as_deref().unwrap_or("").trim().is_empty()
        && a.content.as_deref().unwrap_or("").trim().is_empty()
    {
        return Err(ToolError::field("title", "give a title or content"));
    }
    let key = engram_core::topic::suggest_topic_key(
        a.kind.as_deref().unwrap_or(""),
        a.title.as_deref().unwrap_or(""),
        a.content.as_deref().unwrap_or(""),
    );
    Ok(json!({ "result": format!("Suggested topic_key: {key}"), "topic_key": key }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct PassiveArgs {
    /// Text holding a "## Key Learnings" (or "Learnings") section.
    pub content: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(flatten)]
    pub project: Project,
}

fn mem_capture_passive(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: PassiveArgs = parse(args)?;
    let items = engram_core::topic::extract_learnings(&a.content);
    let room = Some(a.project.write_room(ctx)?);
    let (mut saved, mut duplicates) = (0, 0);
    let mut ids = Vec::new();
    for item in &items {
        let title: String = if item.chars().count() > 60 {
            format!("{}...", item.chars().take(60).collect::<String>())
        } else {
            item.clone()
        };
        let out = ctx.store.remember(RememberRequest {
            content: item.clone(),
            title: Some(title),
            kind: Some(Kind::Knowledge),
            tags: vec!["passive".into()],
            room: room.clone(),
            cwd: a.project.dir(),
            source: Some(a.source.clone().unwrap_or_else(|| "mcp-passive".into())),
            session_id: a.session_id.clone(),
            metadata: Some(json!({ "c_type": "passive" })),
            ..Default::default()
        })?;
        match out.action {
            RememberAction::Reinforced => duplicates += 1,
            _ => saved += 1,
        }
        ids.push(out.id);
    }
    Ok(json!({
        "result": format!("Passive capture complete: extracted={} saved={saved} duplicates={duplicates}", items.len()),
        "ids": ids,
    }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UpdateArgs {
    pub id: i64,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub topic_key: Option<String>,
    /// The memory's scope (`project`, `personal`/`global`); moving a memory between scopes
    /// is refused, naming the field.
    #[serde(default)]
    pub scope: Option<String>,
}

fn mem_update(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: UpdateArgs = parse(args)?;
    if let Some(scope) = a.scope.as_deref().map(str::trim) {
        let current = scope_of(&ctx.store.get(&id_ref(a.id)?)?);
        let wanted = match scope {
            "project" => "project",
            "personal" | "global" => "personal",
            other => {
                return Err(ToolError::field(
                    "scope",
                    format!("{other:?} is not a scope; use project, personal or global"),
                ));
            }
        };
        if wanted != current {
            return Err(ToolError::field(
                "scope",
                format!(
                    "memory #{} is {current}-scoped; engram does not move a memory between scopes (save it again in the other scope)",
                    a.id
                ),
            ));
        }
    }
    let kind = a.kind.as_deref().map(kind_of_type);
    let m = ctx.store.update(
        &id_ref(a.id)?,
        MemoryUpdate {
            content: a.content,
            title: a.title,
            kind,
            topic_key: a.topic_key,
            importance: None,
        },
    )?;
    Ok(
        json!({ "result": format!("Memory updated: #{} {:?} ({}, scope={})", m.id, title_of(&m), c_type(&m), scope_of(&m)), "id": m.id }),
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CurrentProjectArgs {
    #[serde(flatten)]
    pub project: Project,
}

fn mem_current_project(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: CurrentProjectArgs = parse(args).unwrap_or(CurrentProjectArgs {
        project: Project::default(),
    });
    let (project, source) = a
        .project
        .resolve(ctx)
        .unwrap_or_else(|_| ("common".into(), "default".into()));
    let dir = a.project.dir();
    let mut v = json!({
        "project": project,
        "project_source": source,
        "project_path": dir,
        "cwd": dir,
    });
    if source == AMBIGUOUS {
        let choices = dir
            .map(|d| engram_store::rooms::git_children(&d))
            .unwrap_or_default();
        v["available_projects"] = json!(choices);
        v["warning"] = json!(
            "this directory holds several repositories; writes are refused until a project is named"
        );
        v["error_hint"] = json!("ask the user which project, then pass it as project");
    } else {
        let available: Vec<String> = ctx
            .store
            .rooms()
            .map(|r| r.into_iter().map(|r| r.name).collect())
            .unwrap_or_default();
        v["available_projects"] = json!(available);
    }
    Ok(v)
}

fn pin_common(ctx: &mut Ctx<'_>, args: Value, pin: bool) -> ToolResult {
    let a: IdArg = parse(args)?;
    let m = ctx.store.set_pinned(&id_ref(a.id)?, pin)?;
    Ok(
        json!({ "result": format!("Memory #{} {}", m.id, if pin { "pinned" } else { "unpinned" }), "id": m.id, "sync_id": m.uid, "pinned": m.pinned }),
    )
}

fn mem_pin(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    pin_common(ctx, args, true)
}

fn mem_unpin(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    pin_common(ctx, args, false)
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DeleteArgs {
    pub id: i64,
    /// Delete for good instead of moving to the trash.
    #[serde(default)]
    pub hard_delete: Option<bool>,
}

fn mem_delete(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: DeleteArgs = parse(args)?;
    let id = id_ref(a.id)?;
    if a.hard_delete.unwrap_or(false) {
        ctx.store.purge(&id, true)?;
        Ok(json!({ "result": format!("Memory #{} permanently deleted", a.id) }))
    } else {
        ctx.store.forget(&id).map_err(|e| rename_id(e, "id"))?;
        Ok(json!({ "result": format!("Memory #{} soft-deleted", a.id) }))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct StatsArgs {
    /// Only echoed, as in seed C.
    #[serde(default, rename = "project")]
    pub _project: Option<String>,
}

fn mem_stats(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let _: StatsArgs = parse(args)?;
    let rooms = ctx.store.rooms()?;
    let sessions: u64 = rooms.iter().map(|r| r.sessions).sum();
    let observations: u64 = rooms.iter().map(|r| r.memories).sum();
    let prompts: u64 = rooms.iter().map(|r| r.prompts).sum();
    let projects: Vec<&str> = rooms
        .iter()
        .filter(|r| r.memories > 0)
        .map(|r| r.name.as_str())
        .collect();
    let text = format!(
        "Memory System Stats:\n- Sessions: {sessions}\n- Observations: {observations}\n- Prompts: {prompts}\n- Projects: {}",
        projects.join(", ")
    );
    Ok(
        json!({ "result": text, "sessions": sessions, "observations": observations,
               "prompts": prompts, "projects": projects }),
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TimelineArgs {
    pub observation_id: i64,
    /// Default 5.
    #[serde(default)]
    pub before: Option<usize>,
    /// Default 5.
    #[serde(default)]
    pub after: Option<usize>,
    /// Accepted for compatibility; the timeline follows the memory's own session or room.
    #[serde(default, rename = "project")]
    pub _project: Option<String>,
}

fn mem_timeline(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: TimelineArgs = parse(args)?;
    let id = IdRef::parse(&a.observation_id.to_string())
        .map_err(|e| ToolError::field("observation_id", e.message))?;
    let (prev, focus, next) = ctx
        .store
        .timeline(&id, a.before.unwrap_or(5), a.after.unwrap_or(5))
        .map_err(|e| rename_id(e, "observation_id"))?;
    // C's timeline is the memory's session; engram's store falls back to the room for a
    // memory saved without one, which C never shows.
    let (prev, next) = if focus.session_id.is_some() {
        (prev, next)
    } else {
        (Vec::new(), Vec::new())
    };
    let line = |m: &Memory| {
        format!(
            "  #{} [{}] {} — {}",
            m.id,
            c_type(m),
            title_of(m),
            preview(&m.content, 150)
        )
    };
    let mut text = String::new();
    if let Some(sid) = &focus.session_id {
        let s = ctx.store.session(sid)?;
        let started = s
            .as_ref()
            .map(|s| engram_core::time::format(s.started_at))
            .unwrap_or_else(|| "-".into());
        let summary = s
            .as_ref()
            .and_then(|s| s.summary.clone())
            .unwrap_or_default();
        text.push_str(&format!(
            "Session: {} ({started}) — {}\nTotal observations in session: {}\n\n",
            focus.room,
            preview(&summary, 100),
            ctx.store.session_memory_count(sid)?
        ));
    }
    text.push_str("─── Before ───\n");
    for m in &prev {
        text.push_str(&line(m));
        text.push('\n');
    }
    text.push_str(&format!(
        ">>> #{} [{}] {} <<<\n{}\n─── After ───\n",
        focus.id,
        c_type(&focus),
        title_of(&focus),
        preview(&focus.content, 500)
    ));
    for m in &next {
        text.push_str(&line(m));
        text.push('\n');
    }
    Ok(
        json!({ "result": text, "before": prev.iter().map(|m| m.id).collect::<Vec<_>>(), "after": next.iter().map(|m| m.id).collect::<Vec<_>>() }),
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SavePromptArgs {
    /// The user's prompt, as sent.
    pub content: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(flatten)]
    pub project: Project,
    #[serde(flatten)]
    pub choice: Choice,
}

fn mem_save_prompt(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: SavePromptArgs = parse(args)?;
    a.choice.check(&a.project)?;
    let room = Some(a.project.write_room(ctx)?);
    let origin = Origin {
        room,
        cwd: a.project.dir(),
        session_id: None,
        source: ctx.source(None),
    };
    let id = ctx
        .store
        .save_prompt(&a.content, a.session_id.as_deref(), &origin)?;
    let head: String = a.content.chars().take(80).collect();
    Ok(json!({ "result": format!("Prompt saved: {head:?}"), "id": id }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

fn mem_list_projects(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let _: NoArgs = parse(args)?;
    let rooms = ctx.store.rooms()?;
    let projects: Vec<Value> = rooms
        .iter()
        .map(|r| json!({ "name": r.name, "observation_count": r.memories, "session_count": r.sessions, "prompt_count": r.prompts }))
        .collect();
    Ok(json!({ "count": projects.len(), "projects": projects }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CompareArgs {
    pub memory_id_a: i64,
    pub memory_id_b: i64,
    /// related, compatible, scoped, conflicts_with, supersedes (a replaces b) or not_conflict.
    pub relation: String,
    /// 0–1.
    pub confidence: f64,
    /// Why, in at most 200 characters.
    pub reasoning: String,
    /// The model that judged.
    #[serde(default)]
    pub model: Option<String>,
}

fn mem_compare(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: CompareArgs = parse(args)?;
    if a.reasoning.chars().count() > 200 {
        return Err(ToolError::field(
            "reasoning",
            format!(
                "has {} characters, the limit is 200",
                a.reasoning.chars().count()
            ),
        ));
    }
    let j = ctx.store.compare(
        &id_ref(a.memory_id_a)?,
        &id_ref(a.memory_id_b)?,
        engram_store::maintain::Verdict {
            relation: a.relation,
            reason: Some(a.reasoning),
            confidence: Some(a.confidence),
            model: a.model,
            ..Default::default()
        },
    )?;
    Ok(json!({ "sync_id": j.judgment_id, "relation": j }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewArgs {
    /// `list` or `mark_reviewed`.
    pub action: String,
    /// Only this project (default: all projects).
    #[serde(default)]
    pub project: Option<String>,
    /// Most to list (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
    /// With mark_reviewed: the memory.
    #[serde(default)]
    pub observation_id: Option<i64>,
    /// C's other name for `observation_id`.
    #[serde(default)]
    pub id: Option<i64>,
}

fn mem_review(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: ReviewArgs = parse(args)?;
    match a.action.as_str() {
        "list" => {
            let limit = a.limit.unwrap_or(10);
            engram_core::limits::check_limit(limit)?;
            let items = ctx.store.review_list(a.project.as_deref(), limit)?;
            if items.is_empty() {
                return Ok(json!({ "result": "No memories need review.", "observations": [] }));
            }
            let obs: Vec<Value> = items
                .iter()
                .map(|i| {
                    json!({ "id": i.id, "title": i.title, "type": i.kind, "state": "needs_review",
                            "project": i.room, "review_after": engram_core::time::format(i.review_after) })
                })
                .collect();
            Ok(
                json!({ "result": format!("Found {} memories needing review:", items.len()), "observations": obs }),
            )
        }
        "mark_reviewed" => {
            let Some(id) = a.observation_id.or(a.id) else {
                return Err(ToolError::field(
                    "observation_id",
                    "mark_reviewed needs the memory's id",
                ));
            };
            let r = id_ref(id)?;
            let next = ctx.store.mark_reviewed(&r)?;
            let m = ctx.store.get(&r)?;
            Ok(json!({ "id": m.id, "sync_id": m.uid, "state": "active",
                       "review_after": next.map(engram_core::time::format) }))
        }
        other => Err(ToolError::field(
            "action",
            format!("{other:?} is not an action; use list or mark_reviewed"),
        )),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MergeProjectsArgs {
    /// The projects to merge away (a comma list).
    pub from: String,
    /// The project they become.
    pub to: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DoctorArgs {
    /// Accepted for seed C's callers; the report covers the whole install.
    #[serde(default, rename = "project")]
    pub _project: Option<String>,
    /// Only this check (a row name); all rows when absent.
    #[serde(default)]
    pub check: Option<String>,
}

fn mem_doctor(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: DoctorArgs = parse(args)?;
    let mut report = super::admin::doctor_report(ctx)?;
    if let Some(check) = &a.check
        && let Some(rows) = report["rows"].as_array()
    {
        let kept: Vec<Value> = rows
            .iter()
            .filter(|r| {
                r["check"]
                    .as_str()
                    .is_some_and(|c| c.contains(check.as_str()))
            })
            .cloned()
            .collect();
        let ok = kept.iter().all(|r| r["status"] != "NG");
        report["rows"] = json!(kept);
        report["ok"] = json!(ok);
        report["status"] = json!(if ok { "ok" } else { "error" });
    }
    if report["status"] == "error" {
        // C: the report itself, as an error result.
        return Err(ToolError {
            field: None,
            message: report.to_string(),
        });
    }
    Ok(report)
}

fn mem_merge_projects(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: MergeProjectsArgs = parse(args)?;
    let from: Vec<String> = a
        .from
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let moved = ctx.store.merge_rooms(&from, &a.to)?;
    Ok(
        json!({ "project": a.to, "result": format!("Merged {} into {:?}: {moved} observations moved", from.join(", "), a.to), "moved": moved }),
    )
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "mem_judge",
            title: "Judge a relation",
            description: "Record your verdict on a pending relation mem_save returned (judgment_id): related, compatible, scoped, conflicts_with, supersedes or not_conflict.",
            hints: WRITE_IDEMPOTENT,
            // C's arguments and result are engram's own `judge`.
            schema: schema_of::<super::admin::JudgeArgs>,
            call: super::admin::judge,
        },
        ToolSpec {
            name: "mem_compare",
            title: "Compare two memories",
            description: "Record a verdict on two memories by id (relation, confidence, reasoning ≤ 200 characters). Returns the relation's sync_id.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<CompareArgs>,
            call: mem_compare,
        },
        ToolSpec {
            name: "mem_review",
            title: "Review memories",
            description: "list: memories due for review (decisions after 6 months, preferences after 3); mark_reviewed: confirm one is still current.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<ReviewArgs>,
            call: mem_review,
        },
        ToolSpec {
            name: "mem_doctor",
            title: "Doctor",
            description: "engram's health report (the same JSON as `engram doctor --json`); an error result when any check fails.",
            hints: READ,
            schema: schema_of::<DoctorArgs>,
            call: mem_doctor,
        },
        ToolSpec {
            name: "mem_merge_projects",
            title: "Merge projects",
            description: "Move every observation, session and prompt of the `from` projects (comma list) into `to`.",
            hints: DESTRUCTIVE,
            schema: schema_of::<MergeProjectsArgs>,
            call: mem_merge_projects,
        },
        ToolSpec {
            name: "mem_save",
            title: "Save memory",
            description: "Save a decision, bug fix, pattern, config or discovery with a short title. Save when it happens.",
            hints: WRITE,
            schema: schema_of::<SaveArgs>,
            call: mem_save,
        },
        ToolSpec {
            name: "mem_search",
            title: "Search memory",
            description: "Search memories of the current project (or all projects). match_mode all (default) needs every word; any needs one.",
            hints: Hints {
                read_only: false,
                destructive: false,
                idempotent: true,
            },
            schema: schema_of::<SearchArgs>,
            call: mem_search,
        },
        ToolSpec {
            name: "mem_context",
            title: "Session context",
            description: "The context a new session starts from: pinned memories, last handoff, active work, recent failures, strongest memories.",
            hints: READ,
            schema: schema_of::<ContextArgs>,
            call: mem_context,
        },
        ToolSpec {
            name: "mem_session_summary",
            title: "Session summary",
            description: "Save the session's summary: goal, discoveries, what was done, next steps, relevant files.",
            hints: WRITE,
            schema: schema_of::<SessionSummaryArgs>,
            call: mem_session_summary,
        },
        ToolSpec {
            name: "mem_session_start",
            title: "Start session",
            description: "Register a session and its directory.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<SessionStartArgs>,
            call: mem_session_start,
        },
        ToolSpec {
            name: "mem_session_end",
            title: "End session",
            description: "Mark a session completed, with an optional summary.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<SessionEndArgs>,
            call: mem_session_end,
        },
        ToolSpec {
            name: "mem_get_observation",
            title: "Get memory",
            description: "The full text and details of one memory by integer id.",
            hints: READ,
            schema: schema_of::<GetArgs>,
            call: mem_get_observation,
        },
        ToolSpec {
            name: "mem_suggest_topic_key",
            title: "Suggest topic key",
            description: "Suggest a family/segment topic key for an evolving topic from its type, title and content.",
            hints: READ,
            schema: schema_of::<SuggestArgs>,
            call: mem_suggest_topic_key,
        },
        ToolSpec {
            name: "mem_capture_passive",
            title: "Capture learnings",
            description: "Save each item of a '## Key Learnings' section of a text as its own memory (repeats are reinforced, not duplicated).",
            hints: WRITE,
            schema: schema_of::<PassiveArgs>,
            call: mem_capture_passive,
        },
        ToolSpec {
            name: "mem_update",
            title: "Update memory",
            description: "Change a memory's title, content, type or topic key; the previous version is kept in its history.",
            hints: DESTRUCTIVE,
            schema: schema_of::<UpdateArgs>,
            call: mem_update,
        },
        ToolSpec {
            name: "mem_current_project",
            title: "Current project",
            description: "The project (room) a directory belongs to and where that came from. Never fails.",
            hints: READ,
            schema: schema_of::<CurrentProjectArgs>,
            call: mem_current_project,
        },
        ToolSpec {
            name: "mem_pin",
            title: "Pin",
            description: "Pin a memory so it leads the context.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<IdArg>,
            call: mem_pin,
        },
        ToolSpec {
            name: "mem_unpin",
            title: "Unpin",
            description: "Unpin a memory so it no longer leads the context.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<IdArg>,
            call: mem_unpin,
        },
        ToolSpec {
            name: "mem_delete",
            title: "Delete memory",
            description: "Soft-delete a memory (to the trash, restorable), or with hard_delete remove it for good.",
            hints: DESTRUCTIVE,
            schema: schema_of::<DeleteArgs>,
            call: mem_delete,
        },
        ToolSpec {
            name: "mem_stats",
            title: "Statistics",
            description: "Totals of memories and sessions, and the projects known.",
            hints: READ,
            schema: schema_of::<StatsArgs>,
            call: mem_stats,
        },
        ToolSpec {
            name: "mem_save_prompt",
            title: "Save prompt",
            description: "Record the user's prompt in the session, so later sessions can see what was asked.",
            hints: WRITE,
            schema: schema_of::<SavePromptArgs>,
            call: mem_save_prompt,
        },
        ToolSpec {
            name: "mem_list_projects",
            title: "List projects",
            description: "Every project (room) with its counts of memories, sessions and prompts.",
            hints: READ,
            schema: schema_of::<NoArgs>,
            call: mem_list_projects,
        },
        ToolSpec {
            name: "mem_timeline",
            title: "Timeline",
            description: "The memories saved before and after one memory in the same session (or project).",
            hints: READ,
            schema: schema_of::<TimelineArgs>,
            call: mem_timeline,
        },
    ]
}
