//! Admin tools over the store's maintenance and judgment API: review, judge, maintain,
//! consolidation and skill candidates, mark_consolidated. Thin adapters, like every
//! profile; the logic is in `engram_store::maintain`.

use super::tools::*;
use engram_store::maintain::Verdict;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewArgs {
    /// `list` (default): memories whose review date has passed; `mark_reviewed`: confirm
    /// one is still true (its next review moves out by the same period).
    #[serde(default)]
    pub action: Option<String>,
    /// With `mark_reviewed`: the memory.
    #[serde(default, alias = "observation_id")]
    pub id: Option<IdValue>,
    /// Only this room (default: every room).
    #[serde(default)]
    pub room: Option<String>,
    /// Most items to list (default 10, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

pub(super) fn review(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: ReviewArgs = parse(args)?;
    match a.action.as_deref().unwrap_or("list") {
        "list" => {
            let limit = a.limit.unwrap_or(10);
            engram_core::limits::check_limit(limit)?;
            let items = ctx.store.review_list(a.room.as_deref(), limit)?;
            Ok(json!({ "count": items.len(), "items": items }))
        }
        "mark_reviewed" => {
            let Some(id) = a.id else {
                return Err(ToolError::field(
                    "id",
                    "mark_reviewed needs the memory's id",
                ));
            };
            let id = id.to_ref("id")?;
            let next = ctx.store.mark_reviewed(&id)?;
            Ok(json!({ "id": ctx.store.resolve_id(&id)?, "state": "active",
                       "review_after": next.map(engram_core::time::format) }))
        }
        other => Err(ToolError::field(
            "action",
            format!("{other:?} is not an action; use list or mark_reviewed"),
        )),
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct JudgeArgs {
    /// The judgment id a write returned with its candidates (`rel-…`).
    pub judgment_id: String,
    /// related, compatible, scoped, conflicts_with, supersedes (the new memory replaces the
    /// candidate) or not_conflict.
    pub relation: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub evidence: Option<String>,
    /// 0–1 (default 1).
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub session_id: Option<String>,
}

pub(super) fn judge(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: JudgeArgs = parse(args)?;
    let j = ctx.store.judge(Verdict {
        judgment_id: a.judgment_id,
        relation: a.relation,
        reason: a.reason,
        evidence: a.evidence,
        confidence: a.confidence,
        session_id: a.session_id,
        ..Default::default()
    })?;
    Ok(json!({ "relation": j }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MaintainArgs {
    /// Report what would change without changing anything.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

pub(super) fn maintain(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: MaintainArgs = parse(args)?;
    Ok(json(&ctx.store.maintain(a.dry_run.unwrap_or(false))?))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct CandidatesArgs {
    /// Only this room (default: every room).
    #[serde(default)]
    pub room: Option<String>,
}

pub(super) fn consolidation_candidates(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: CandidatesArgs = parse(args)?;
    let clusters = ctx.store.consolidation_candidates(a.room.as_deref())?;
    Ok(json!({ "count": clusters.len(), "clusters": clusters,
               "hint": "Summarise each cluster into one memory with remember, then call mark_consolidated." }))
}

pub(super) fn skill_candidates(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: CandidatesArgs = parse(args)?;
    let clusters = ctx.store.skill_candidates(a.room.as_deref())?;
    Ok(json!({ "count": clusters.len(), "clusters": clusters,
               "hint": "Each cluster repeats one way of working: consider remembering it once as a strategy or pattern." }))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct MarkConsolidatedArgs {
    /// The episodes that were summarised.
    pub episode_ids: Vec<IdValue>,
    /// The memory that summarises them.
    pub new_memory_id: IdValue,
}

pub(super) fn mark_consolidated(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let a: MarkConsolidatedArgs = parse(args)?;
    let eps = a
        .episode_ids
        .iter()
        .map(|i| i.to_ref("episode_ids"))
        .collect::<Result<Vec<_>, _>>()?;
    let new = a.new_memory_id.to_ref("new_memory_id")?;
    let done = ctx.store.mark_consolidated(&eps, &new)?;
    // `consolidated`, `new_memory_id` and `status` are seed B's reply.
    Ok(
        json!({ "archived": done, "consolidated": done, "new_memory_id": a.new_memory_id, "status": "ok" }),
    )
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

pub(super) fn reindex(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let _: NoArgs = parse(args)?;
    if ctx.store.vault_dir().is_none() {
        return Err(ToolError::field(
            "vault",
            "the vault is off (vault = \"off\" in config.toml); nothing to reindex",
        ));
    }
    let r = ctx.store.reindex_vault(&mut |_, _| {})?;
    let mut v = json(&r);
    // B's reply named new files `added` and files gone `removed`.
    if ctx.dialect.b_replies {
        v["added"] = json!(r.created + r.restored);
        v["removed"] = json!(r.trashed + r.gone);
    }
    Ok(v)
}

/// The `engram doctor` report (`ok`, `status`, `rows`) from the binary's checks, which
/// load the embedding model and read client registrations: neither is this crate's to do.
pub(super) fn doctor_report(ctx: &Ctx<'_>) -> ToolResult {
    match ctx.doctor {
        Some(report) => Ok(report()),
        None => Err(ToolError {
            field: None,
            message: "this server was started without the health checks".into(),
        }),
    }
}

pub(super) fn doctor(ctx: &mut Ctx<'_>, args: Value) -> ToolResult {
    let _: NoArgs = parse(args)?;
    doctor_report(ctx)
}

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "reindex",
            title: "Reindex the vault",
            description: "Read the Markdown vault back into the store: files edited, added, moved or deleted by hand (or on another machine) since engram last wrote them.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<NoArgs>,
            call: reindex,
        },
        ToolSpec {
            name: "doctor",
            title: "Health check",
            description: "engram's health rows (OK/NG/--): config, store integrity and schema, full-text index, model, vault, client registrations and hooks, recent tool latencies.",
            hints: READ,
            schema: schema_of::<NoArgs>,
            call: doctor,
        },
        ToolSpec {
            name: "review",
            title: "Review due memories",
            description: "Decisions are due for review after six months and preferences after three. `list` shows what is due; `mark_reviewed` confirms one is still true. Correct or forget the ones that are not.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<ReviewArgs>,
            call: review,
        },
        ToolSpec {
            name: "judge",
            title: "Judge related memories",
            description: "Record your verdict on a candidate a write returned (its judgment_id): supersedes retires the older memory, conflicts_with/related/compatible/scoped link the two, not_conflict dismisses it.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<JudgeArgs>,
            call: judge,
        },
        ToolSpec {
            name: "maintain",
            title: "Maintain the store",
            description: "Consolidate near-identical memories (the others archived, never deleted) and archive memories that faded, unless a strong linked memory protects them. dry_run previews. Runs by itself every 12 hours in a long-running server.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<MaintainArgs>,
            call: maintain,
        },
        ToolSpec {
            name: "consolidation_candidates",
            title: "Consolidation candidates",
            description: "Clusters of similar episodes older than two weeks, for you to summarise into one memory (then call mark_consolidated).",
            hints: READ,
            schema: schema_of::<CandidatesArgs>,
            call: consolidation_candidates,
        },
        ToolSpec {
            name: "mark_consolidated",
            title: "Mark consolidated",
            description: "After summarising episodes into a new memory: link them to it and archive them.",
            hints: WRITE_IDEMPOTENT,
            schema: schema_of::<MarkConsolidatedArgs>,
            call: mark_consolidated,
        },
        ToolSpec {
            name: "skill_candidates",
            title: "Skill candidates",
            description: "Groups of three or more closely similar memories: a repeated way of working worth recording once as a strategy or pattern.",
            hints: READ,
            schema: schema_of::<CandidatesArgs>,
            call: skill_candidates,
        },
    ]
}
