//! C's reads of observations: `mem_search` (all words or any), `mem_get_observation`
//! with its history, `mem_timeline` around one observation.

use super::*;

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
        a.project.read_room(ctx)?
    };
    let warning = if a.all_projects.unwrap_or(false) {
        None
    } else {
        a.project.ambiguity_warning(ctx, room.as_deref())
    };
    // Every kind (session summaries are episodes, which plain recall leaves out), or the
    // one asked for.
    let kinds: Vec<Kind> = match a.kind.as_deref() {
        Some(t) => vec![kind_of_type(t)],
        None => Kind::ALL.to_vec(),
    };
    // `all`: the engine keeps only hits that hold every word of the query.
    let req = RecallRequest {
        limit,
        kinds,
        room: room.clone(),
        cwd: a.project.dir(),
        min_coverage: all_words.then_some(0.999),
        min_similarity: None,
        // C shows a superseded memory, marked with its successor, rather than hiding it.
        include_superseded: true,
        // C kept a long text as one observation: its parts are one hit, the whole text.
        whole_records: true,
        ..RecallRequest::new(a.query.clone())
    };
    let out = ctx.store.recall(&req)?;
    let hits: Vec<_> = out.hits.iter().collect();
    if hits.is_empty() {
        let mut v = json!({ "result": format!("No memories found for: {:?}", engram_core::redact::redact(&a.query).0), "results": [], "match": out.matched });
        if let Some(w) = warning {
            v["warning"] = json!(w);
        }
        return Ok(v);
    }
    let mut text = format!("Found {} memories:\n", hits.len());
    let mut results = Vec::new();
    for (i, h) in hits.iter().enumerate() {
        let m = &h.memory;
        let marks = relations::marks(ctx.store, m, h.superseded_by);
        let state = if marks.state == "active" {
            String::new()
        } else {
            format!(" | state: {}", marks.state)
        };
        text.push_str(&format!(
            "\n[{}] #{} ({}) — {}\n    {}\n    {} | project: {} | scope: {}{state}\n",
            i + 1,
            m.id,
            c_type(m),
            title_of(m),
            preview(&m.content, 300),
            engram_core::time::format(m.created_at),
            c_project(m),
            c_scope(m)
        ));
        for line in &marks.lines {
            text.push_str(&format!("    {line}\n"));
        }
        results.push(json!({ "id": m.id, "sync_id": sync_id_of(m), "title": title_of(m), "type": c_type(m), "state": marks.state, "scope": c_scope(m), "pinned": m.pinned, "project": c_project(m), "review_after": marks.review_after.map(engram_core::time::format), "score": h.score }));
    }
    text.push_str(
        "\nResults above are previews (300 chars); use mem_get_observation for the full text.",
    );
    // engram's absolute verdict, as a line of its own after C's text.
    if let Some(n) = out.matched.notice() {
        text.push_str(&format!("\nMatch: {n}."));
    }
    let searched = match &room {
        Some(r) if r != "*" => Some(r.clone()),
        Some(_) => None,
        None => a.project.resolve(ctx).ok().map(|(r, _)| r),
    };
    if let Some(room) = searched {
        text.push_str(&save_nudge(ctx.store, &room));
    }
    if let Some(w) = &warning {
        text.push_str(&format!("\nWarning: {w}."));
    }
    if json_only {
        // No text preview beside them: each result carries its content (C's HTTP search
        // answers with whole observations).
        for (r, h) in results.iter_mut().zip(&hits) {
            r["content"] = json!(h.memory.content);
        }
        let mut v = json!({ "results": results, "count": results.len(), "match": out.matched });
        if let Some(w) = warning {
            v["warning"] = json!(w);
        }
        return Ok(v);
    }
    let mut v = json!({ "result": text, "results": results, "match": out.matched, "notice": crate::native::RECALL_NOTICE });
    if let Some(w) = warning {
        v["warning"] = json!(w);
    }
    Ok(v)
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
    let mut d = ctx.store.show(&id_ref(a.id)?)?;
    // C kept a long text as one observation: its first part shows the whole text.
    d.memory.content = ctx.store.whole_content(&d.memory)?;
    let m = &d.memory;
    // C served no soft-deleted observation: one in engram's trash is not found here
    // (engram's own `show` and `restore` still reach it).
    if m.tier == engram_core::Tier::Trash {
        return Err(ToolError::field(
            "id",
            format!("observation #{} not found (deleted)", m.id),
        ));
    }
    // C's counts as imported, plus what engram added since: each earlier text kept is a
    // revision (archiving or re-tiering changes no text, so it is none), each reinforcing
    // write a duplicate.
    let revisions = c_count(m, "revision_count") + d.revisions.len() as u64;
    let duplicates =
        c_count(m, "duplicate_count") + d.event_counts.get("reinforce").copied().unwrap_or(0);
    let text = format!(
        "#{} [{}] {}\n{}\nSession: {}\nProject: {}\nScope: {}\nTopic: {}\nTool: {}\nDuplicates: {duplicates}\nRevisions: {revisions}\nCreated: {}",
        m.id,
        c_type(m),
        title_of(m),
        m.content,
        m.session_id.as_deref().unwrap_or("-"),
        c_project(m),
        c_scope(m),
        m.topic_key.as_deref().unwrap_or("-"),
        tool_name_of(m).unwrap_or("-"),
        engram_core::time::format(m.created_at)
    );
    let mut v = json!({ "result": text, "id": m.id, "sync_id": sync_id_of(m), "tier": m.tier,
                        "superseded_by": d.superseded_by, "revision_count": revisions,
                        "duplicate_count": duplicates });
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
    let mut session_info = Value::Null;
    let mut in_session = 0;
    if let Some(sid) = &focus.session_id {
        let s = ctx.store.session(sid)?;
        in_session = ctx.store.session_memory_count(sid)?;
        if let Some(s) = &s {
            session_info = json!({
                "id": s.id, "project": s.room, "directory": s.directory,
                "started_at": engram_core::time::format(s.started_at),
                "ended_at": s.ended_at.map(engram_core::time::format), "summary": s.summary,
            });
        }
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
            in_session
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
    // C's HTTP `/timeline` answers its timeline object: whole observations around the
    // focus, the session and how many observations it holds.
    let timeline = json!({
        "focus": observation_json(&focus),
        "before": prev.iter().map(observation_json).collect::<Vec<_>>(),
        "after": next.iter().map(observation_json).collect::<Vec<_>>(),
        "session_info": session_info,
        "total_in_range": in_session,
    });
    Ok(
        json!({ "result": text, "before": prev.iter().map(|m| m.id).collect::<Vec<_>>(), "after": next.iter().map(|m| m.id).collect::<Vec<_>>(), "timeline": timeline }),
    )
}

/// This file's tools, for [`super::tools`].
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
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
            name: "mem_get_observation",
            title: "Get memory",
            description: "The full text and details of one memory by integer id.",
            hints: READ,
            schema: schema_of::<GetArgs>,
            call: mem_get_observation,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `match_mode: all` is the engine's `min_coverage`: a memory holding every word is
    /// found, one holding only some is not, and `any` finds both.
    #[test]
    fn all_words_keeps_only_full_matches() {
        let dir = tempfile::tempdir().unwrap();
        let mut store =
            engram_store::Store::open(&dir.path().join("engram.db"), Default::default()).unwrap();
        for content in [
            "The billing worker retries payments through the queue",
            "The billing dashboard shows monthly totals",
        ] {
            store
                .remember(RememberRequest {
                    content: content.into(),
                    room: Some("shop".into()),
                    ..Default::default()
                })
                .unwrap();
        }
        let mut ctx = Ctx {
            store: &mut store,
            default_room: None,
            client: "test",
            dialect: Dialect::NATIVE,
            doctor: None,
        };
        let mut search = |mode: &str| {
            let v = mem_search(
                &mut ctx,
                json!({"query": "billing queue", "project": "shop", "match_mode": mode, "response_format": "json"}),
            )
            .unwrap();
            v["results"].as_array().map_or(0, Vec::len)
        };
        assert_eq!(search("all"), 1);
        assert_eq!(search("any"), 2);
    }
}
