//! C's project and admin tools: `mem_current_project`, pins, `mem_delete`, `mem_stats`,
//! `mem_list_projects`, `mem_compare`, `mem_judge`, `mem_review`, `mem_doctor`,
//! `mem_merge_projects`.

use super::*;

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
        json!({ "result": format!("Memory #{} {}", m.id, if pin { "pinned" } else { "unpinned" }), "id": m.id, "sync_id": sync_id_of(&m), "pinned": m.pinned }),
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
pub struct NoArgs {}

fn mem_list_projects(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let _: NoArgs = parse(args)?;
    let rooms = ctx.store.rooms()?;
    let mut projects: Vec<Value> = Vec::with_capacity(rooms.len());
    for r in &rooms {
        // C lists the directories its sessions were started in.
        let mut dirs: Vec<String> = ctx
            .store
            .recent_sessions(Some(&r.name), 100)?
            .into_iter()
            .filter_map(|s| s.directory)
            .filter(|d| !d.is_empty())
            .collect();
        dirs.sort();
        dirs.dedup();
        projects.push(
            json!({ "name": r.name, "observation_count": r.memories, "session_count": r.sessions,
                              "prompt_count": r.prompts, "directories": dirs }),
        );
    }
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
    let (ida, idb) = (id_ref(a.memory_id_a)?, id_ref(a.memory_id_b)?);
    // C compares memories of one project only.
    let (ma, mb) = (ctx.store.get(&ida)?, ctx.store.get(&idb)?);
    if ma.room != mb.room {
        return Err(ToolError::field(
            "memory_id_b",
            format!(
                "#{} is in project {:?} and #{} in {:?}: C compares memories of one project only",
                ma.id, ma.room, mb.id, mb.room
            ),
        ));
    }
    let j = ctx.store.compare(
        &ida,
        &idb,
        engram_store::maintain::Verdict {
            relation: a.relation,
            reason: Some(a.reasoning),
            confidence: Some(a.confidence),
            model: a.model,
            ..Default::default()
        },
    )?;
    Ok(json!({ "sync_id": j.judgment_id, "relation": super::relation_json(ctx.store, &j) }))
}

/// C's `mem_judge`: engram's verdict, answered with C's relation row.
fn mem_judge(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let r = crate::admin::judge(ctx, args)?;
    let id = r["relation"]["judgment_id"].as_str().unwrap_or_default();
    let j = ctx.store.judgment(id)?;
    Ok(json!({ "relation": super::relation_json(ctx.store, &j) }))
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
                    let sync_id = ctx.store.get(&IdRef::Id(i.id)).map(|m| sync_id_of(&m)).ok();
                    json!({ "id": i.id, "sync_id": sync_id, "title": i.title, "type": i.kind, "state": "needs_review",
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
            Ok(
                json!({ "id": m.id, "sync_id": sync_id_of(&m), "state": "active",
                       "review_after": next.map(engram_core::time::format) }),
            )
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
    let mut report = crate::admin::doctor_report(ctx)?;
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
    // The reply names the projects as stored (redacted), never the raw input.
    let shown = |s: &str| engram_core::redact::redact(s).0;
    let to = shown(&a.to);
    let from: Vec<String> = from.iter().map(|f| shown(f)).collect();
    Ok(
        json!({ "project": to, "result": format!("Merged {} into {to:?}: {moved} observations moved", from.join(", ")), "moved": moved }),
    )
}

/// This file's tools, for [`super::tools`].
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "mem_judge",
            title: "Judge a relation",
            description: "Record your verdict on a pending relation mem_save returned (judgment_id): related, compatible, scoped, conflicts_with, supersedes or not_conflict.",
            hints: WRITE_IDEMPOTENT,
            // C's arguments are engram's own `judge`; the result is C's relation row.
            schema: schema_of::<crate::admin::JudgeArgs>,
            call: mem_judge,
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
            name: "mem_list_projects",
            title: "List projects",
            description: "Every project (room) with its counts of memories, sessions and prompts.",
            hints: READ,
            schema: schema_of::<NoArgs>,
            call: mem_list_projects,
        },
    ]
}
