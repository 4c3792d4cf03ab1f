//! C's writes: `mem_save` (with its topic-key upsert and the ambiguous-project refusal),
//! `mem_update`, `mem_capture_passive`, `mem_save_prompt`, `mem_suggest_topic_key`.

use super::*;

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
    /// The tool that made the observation (C's HTTP `POST /observations`), kept and shown.
    #[serde(default)]
    pub tool_name: Option<String>,
    #[serde(flatten)]
    pub project: Project,
    #[serde(flatten)]
    pub choice: Choice,
}

/// The room of a write C does not validate (prompts, passive captures): the project it
/// names, else its session's project when the session exists (as for `mem_save`), else
/// the caller's directory or the server's project.
fn session_or_write_room(
    ctx: &Ctx<'_>,
    project: &Project,
    session_id: Option<&str>,
) -> Result<String, ToolError> {
    let named = project
        .project
        .as_deref()
        .is_some_and(|p| !p.trim().is_empty());
    if !named
        && !project.shared_scope()?
        && let Some(id) = session_id.filter(|s| !s.trim().is_empty())
        && let Some(s) = ctx.store.session(id)?
    {
        return Ok(s.room);
    }
    project.write_room(ctx)
}

/// C's session for a save that names none: one per project.
fn default_session(room: &str) -> String {
    format!("manual-save-{room}")
}

/// What C's row held that engram's memory has no column for: the type as written, a
/// shared scope's own name (`global` or `personal`) and the project it was saved from,
/// the tool that made it.
fn c_metadata(ctx: &Ctx<'_>, a: &SaveArgs, ctype: &str) -> Result<Value, ToolError> {
    let mut meta = json!({ "c_type": ctype });
    if a.project.shared_scope()? {
        meta["c_scope"] = json!(a.project.scope.as_deref().map(str::trim));
        let from = ctx.room(a.project.project.clone(), &a.project.dir());
        if let Some(p) = from.filter(|p| p != engram_core::room::COMMON) {
            meta["c_project"] = json!(p);
        }
    }
    if let Some(t) = a.tool_name.as_deref().filter(|t| !t.trim().is_empty()) {
        meta["tool_name"] = json!(t);
    }
    Ok(meta)
}

fn mem_save(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let mut a: SaveArgs = parse(args)?;
    // C's Go zero value: an empty topic key is no topic key (`engram save --topic ""`).
    a.topic_key = a.topic_key.take().filter(|t| !t.trim().is_empty());
    if a.content.is_none() {
        a.content = a.observation.take();
    }
    let ctype = a.kind.clone().unwrap_or_else(|| "manual".into());
    let kind = kind_of_type(&ctype);
    a.choice.check(&a.project)?;
    let session = named_session(ctx, a.session_id.as_deref())?;
    let room = a.project.write_room_in(ctx, &a.choice, session.as_ref())?;
    let session_id = a
        .session_id
        .clone()
        .unwrap_or_else(|| default_session(&room));
    // C creates its per-project default session when it is new (a named one exists).
    if session.is_none() {
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
    }
    // C cut a long observation at 50 KB and still reported success; engram keeps every
    // word: content over the limit is stored as linked parts (a capture), named below.
    let out = ctx.store.remember_capture(RememberRequest {
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
        metadata: Some(c_metadata(ctx, &a, &ctype)?),
        // C leaves contradictions for the agent to judge (`mem_judge`) unless the user
        // opted in to engram's automatic supersession.
        supersede: Some(ctx.store.config().compat_c_auto_supersede),
        // C's dedupe key is content, title and type: the same text saved under another
        // title is another observation (the near one offered as a candidate).
        fold_only_same_title: true,
        ..Default::default()
    })?;
    // The reply quotes the title as stored (redacted), never the raw input.
    let title = engram_core::redact::redact(&a.title).0;
    let mut text = match out.action {
        RememberAction::Created => format!("Memory saved: {title:?} ({ctype})"),
        RememberAction::Reinforced => format!(
            "Memory already known, reinforced: {title:?} ({ctype}) #{}",
            out.id
        ),
        RememberAction::Merged => {
            format!("Memory merged into #{}: {title:?} ({ctype})", out.id)
        }
        RememberAction::Superseded => format!(
            "Memory saved: {title:?} ({ctype}); it supersedes {}",
            out.touched
                .iter()
                .map(|i| format!("#{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        RememberAction::Updated => format!(
            "Memory updated: {title:?} ({ctype}) #{}, revision {}",
            out.id,
            out.revision.unwrap_or(1)
        ),
    };
    if !out.parts.is_empty() {
        text.push_str(&format!(
            "\nLong content: stored as {} linked parts, #{} then {} (nothing was cut)",
            out.parts.len() + 1,
            out.id,
            out.parts
                .iter()
                .map(|i| format!("#{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
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
            let sync_id = ctx.store.get(&IdRef::Id(c.id)).map(|m| sync_id_of(&m)).ok();
            json!({ "id": c.id, "sync_id": sync_id, "title": c.title, "type": c.kind,
                    "score": c.score, "judgment_id": c.judgment_id })
        })
        .collect();
    let mut v = json!({ "project": out.room, "result": text, "id": out.id, "sync_id": ctx.store.get(&IdRef::Id(out.id)).map(|m| sync_id_of(&m)).unwrap_or_else(|_| out.uid.clone()),
                        "action": out.action, "judgment_required": !candidates.is_empty() });
    if let Some(first) = out.candidates.first() {
        v["judgment_status"] = json!("pending");
        v["judgment_id"] = json!(first.judgment_id);
        v["candidates"] = json!(candidates);
    }
    if !out.redacted.is_empty() {
        v["redacted"] = json!(out.redacted);
    }
    if !out.parts.is_empty() {
        v["parts"] = json!(out.parts);
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
    let room = Some(session_or_write_room(
        ctx,
        &a.project,
        a.session_id.as_deref(),
    )?);
    let (mut saved, mut duplicates) = (0, 0);
    let mut ids = Vec::new();
    for item in &items {
        let title: String = if item.chars().count() > 60 {
            format!("{}...", item.chars().take(60).collect::<String>())
        } else {
            item.clone()
        };
        let out = ctx.store.remember_capture(RememberRequest {
            content: item.clone(),
            title: Some(title),
            kind: Some(Kind::Knowledge),
            tags: vec!["passive".into()],
            room: room.clone(),
            cwd: a.project.dir(),
            source: Some(a.source.clone().unwrap_or_else(|| "mcp-passive".into())),
            session_id: a.session_id.clone(),
            metadata: Some(json!({ "c_type": "passive" })),
            // As mem_save: C never supersedes on its own (tester-c: a passive learning
            // retired an agent's decision).
            supersede: Some(ctx.store.config().compat_c_auto_supersede),
            ..Default::default()
        })?;
        match out.action {
            RememberAction::Reinforced => duplicates += 1,
            _ => saved += 1,
        }
        ids.push(out.id);
        ids.extend(out.parts);
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
        json!({ "result": format!("Memory updated: #{} {:?} ({}, scope={})", m.id, title_of(&m), c_type(&m), c_scope(&m)), "id": m.id }),
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
    let room = Some(session_or_write_room(
        ctx,
        &a.project,
        a.session_id.as_deref(),
    )?);
    let origin = Origin {
        room,
        cwd: a.project.dir(),
        session_id: None,
        source: ctx.source(None),
    };
    let id = ctx
        .store
        .save_prompt(&a.content, a.session_id.as_deref(), &origin)?;
    // The reply quotes the prompt as stored (redacted), never the raw input.
    let head: String = engram_core::redact::redact(&a.content)
        .0
        .chars()
        .take(80)
        .collect();
    Ok(json!({ "result": format!("Prompt saved: {head:?}"), "id": id }))
}

/// This file's tools, for [`super::tools`].
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "mem_save",
            title: "Save memory",
            description: "Save a decision, bug fix, pattern, config or discovery with a short title. Save when it happens.",
            hints: WRITE,
            schema: schema_of::<SaveArgs>,
            call: mem_save,
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
            name: "mem_save_prompt",
            title: "Save prompt",
            description: "Record the user's prompt in the session, so later sessions can see what was asked.",
            hints: WRITE,
            schema: schema_of::<SavePromptArgs>,
            call: mem_save_prompt,
        },
    ]
}
