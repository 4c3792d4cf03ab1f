//! C's context text (shared with its HTTP `/context`) and its session tools:
//! `mem_context`, `mem_session_start`, `mem_session_end`, `mem_session_summary`.

use super::*;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ContextArgs {
    /// Budget in bytes (default 16384, at most 65536).
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// A shorter context: fewer sessions, prompts and observations, shorter previews.
    #[serde(default)]
    pub compact: Option<bool>,
    #[serde(flatten)]
    pub project: Project,
}

/// C's context: its Recent Sessions, Recent User Prompts, Pinned and Recent Observations sections
/// (C's `- [type] **title**: content` lines, the newest first), and C's stats footer, cut to `max_bytes` on a character boundary.
/// Returns the text, the project and whether it was cut. Shared with the HTTP `/context`.
pub fn c_context(
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
    // Pinned first, in a section of their own (C's later versions, at most 20), so a
    // pinned memory never falls out behind newer ones; recent lists the others.
    let mut pinned = store.pinned_memories(only, 20)?;
    if resolved != engram_core::room::COMMON {
        // A pinned personal or global memory saved from this project is the project's too.
        let shared = store.pinned_memories(Some(engram_core::room::COMMON), 20)?;
        pinned.extend(shared.into_iter().filter(|m| c_project(m) == resolved));
        pinned.truncate(20);
    }
    let n_recent = if compact { 10 } else { 20 };
    let mut recent: Vec<Memory> = store.recent_memories(only, n_recent + pinned.len())?;
    // C's personal and global memories belong to the project they were saved from (they
    // live in `common`, that project kept beside): its context lists them with its own
    // (tester-c: the user's preferences had gone from the session-start context).
    if resolved != engram_core::room::COMMON {
        let shared = store.recent_memories(Some(engram_core::room::COMMON), 100)?;
        recent.extend(shared.into_iter().filter(|m| c_project(m) == resolved));
        recent.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
    }
    let recent: Vec<Memory> = recent
        .into_iter()
        .filter(|m| !m.pinned)
        .take(n_recent)
        .collect();
    if sessions.is_empty() && prompts.is_empty() && recent.is_empty() && pinned.is_empty() {
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
    let line = |m: &Memory| {
        format!(
            "- [{}] **{}**: {}\n",
            c_type(m),
            title_of(m),
            preview(&m.content, if compact { 120 } else { 300 })
        )
    };
    if !pinned.is_empty() {
        t.push_str("\n### Pinned\n");
        for m in &pinned {
            t.push_str(&line(m));
        }
    }
    t.push_str("\n### Recent Observations\n");
    for m in &recent {
        t.push_str(&line(m));
    }
    let rooms = store.rooms()?;
    let memories: u64 = rooms.iter().map(|r| r.memories).sum();
    let all_sessions: u64 = rooms.iter().map(|r| r.sessions).sum();
    let names: Vec<&str> = rooms.iter().map(|r| r.name.as_str()).collect();
    let footer = format!(
        "\n---\nMemory stats: {all_sessions} sessions, {memories} observations across projects: {}",
        names.join(", ")
    );
    let mut truncated = false;
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
    // The project a search without one searches: what the agent reads first at session
    // start and what it searches next agree.
    let room = a.project.read_room(ctx)?;
    let warning = a.project.ambiguity_warning(ctx, room.as_deref());
    let (text, project, truncated) = c_context(
        ctx.store,
        room,
        a.project.dir(),
        a.compact.unwrap_or(false),
        a.max_bytes.unwrap_or(16 * 1024),
    )?;
    let mut v = json!({ "project": project, "result": text, "truncated": truncated });
    if let Some(w) = warning {
        v["warning"] = json!(w);
    }
    Ok(v)
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
    let session = named_session(ctx, a.session_id.as_deref())?;
    let room = a.project.write_room_in(ctx, &a.choice, session.as_ref())?;
    let out = ctx.store.remember_capture(RememberRequest {
        content: a.content,
        title: Some(format!("Session summary: {room}")),
        kind: Some(Kind::Episode),
        importance: Some(0.6),
        room: Some(room.clone()),
        source: ctx.source(None),
        session_id: a.session_id,
        metadata: Some(json!({ "c_type": "session_summary" })),
        supersede: Some(ctx.store.config().compat_c_auto_supersede),
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
    // C refuses to start again a session that has ended.
    if ctx
        .store
        .session(&a.id)?
        .is_some_and(|s| s.ended_at.is_some())
    {
        return Err(super::c_error(
            "id",
            "session_already_ended",
            format!("session {:?} has ended", a.id),
            Vec::new(),
            "start a new session with a new id",
        ));
    }
    // A directory holding several repositories is C's `ambiguous_project`, not a session
    // in `common`; one repository inside is that one (C's `git_child`).
    let room = match a.project.room(ctx)? {
        Some(r) => Some(r),
        None if a.project.dir().is_some() => Some(a.project.write_room(ctx)?),
        None => None,
    };
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

/// This file's tools, for [`super::tools`].
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
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
    ]
}
