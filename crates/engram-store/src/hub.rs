//! The engineering state hub and sessions: handoffs, failures, progress (seed A), session
//! start/end and outcomes, and `context`, the briefing a new session starts from.
//!
//! Everything here is stored as ordinary memories (kinds `handoff`, `failure`, `progress`)
//! with structured metadata, so recall, decay and the vault treat them like any other.

use crate::ops::{RememberOutcome, RememberRequest};
use crate::storage::rows::{ActiveOrder, ActiveQuery, SessionWrite};
use crate::{Result, Store};
use engram_core::hub;
use engram_core::limits;
use engram_core::room::RoomScope;
use engram_core::{InputError, Kind, Memory, MemoryId, Millis};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Where a hub write goes and who made it.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub room: Option<String>,
    pub cwd: Option<PathBuf>,
    pub session_id: Option<String>,
    pub source: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct HandoffRequest {
    pub summary: String,
    pub completed: Vec<String>,
    pub in_progress: Vec<String>,
    pub blocked: Vec<String>,
    pub next_steps: Vec<String>,
    /// A's must-not-redo, must-preserve and working set, kept for a restore.
    pub extras: crate::tasks::HandoffExtras,
    /// The task this handoff checkpoints (A's `task_id`).
    pub task_id: Option<MemoryId>,
    pub origin: Origin,
}

#[derive(Debug, Clone, Default)]
pub struct FailureRequest {
    pub error: String,
    pub component: String,
    pub root_cause: Option<String>,
    /// `critical`, `major` (default) or `minor`.
    pub severity: Option<String>,
    pub fix: Option<String>,
    pub related_tests: Vec<String>,
    pub task_id: Option<MemoryId>,
    pub origin: Origin,
}

#[derive(Debug, Clone, Default)]
pub struct ProgressRequest {
    pub feature: String,
    /// `planning`, `in_progress`, `blocked`, `review` or `done`.
    pub status: String,
    /// 0–100.
    pub completion: Option<f64>,
    pub blockers: Vec<String>,
    /// 0–1.
    pub quality: Option<f64>,
    pub notes: Option<String>,
    pub task_id: Option<MemoryId>,
    pub origin: Origin,
}

/// How a session ended, for [`Store::session_outcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Success,
    Failure,
}

impl Outcome {
    pub fn parse(raw: &str) -> Result<Outcome, InputError> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "success" | "succeeded" | "ok" => Ok(Outcome::Success),
            "failure" | "failed" | "fail" => Ok(Outcome::Failure),
            _ => Err(InputError::new(
                "outcome",
                format!("{raw:?} is not an outcome; use success or failure"),
            )),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ImportanceChange {
    pub id: MemoryId,
    pub from: f64,
    pub to: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct SessionOutcome {
    pub session_id: String,
    pub outcome: Outcome,
    /// Memories recalled in the session whose importance moved.
    pub adjusted: Vec<ImportanceChange>,
    /// The lesson stored for a failed session with notes.
    pub lesson_id: Option<MemoryId>,
}

pub use crate::storage::rows::SessionInfo;

/// A feature's latest progress entry.
#[derive(Debug, Clone, Serialize)]
pub struct FeatureState {
    pub feature: String,
    pub status: String,
    pub completion: f64,
    pub memory_id: MemoryId,
    #[serde(with = "engram_core::time::rfc3339")]
    pub updated_at: Millis,
}

#[derive(Debug, Clone, Serialize)]
pub struct EngineeringStats {
    pub failures_total: u64,
    pub failures_by_component: BTreeMap<String, u64>,
    pub failures_by_severity: BTreeMap<String, u64>,
    pub features_tracked: u64,
    /// The latest state of every feature not yet done.
    pub active_features: Vec<FeatureState>,
}

/// One next step of the latest handoff and whether later work covers it.
#[derive(Debug, Clone, Serialize)]
pub struct StepStatus {
    pub step: String,
    /// `done` (a later progress entry marked done, a later handoff's completed list, or a
    /// later fix covers it), `mentioned` (later work mentions it), or `pending`.
    pub status: &'static str,
    pub evidence: Option<MemoryId>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HandoffView {
    pub memory: Memory,
    pub next_steps: Vec<StepStatus>,
}

/// A short line about a memory in a briefing.
#[derive(Debug, Clone, Serialize)]
pub struct BriefItem {
    pub id: MemoryId,
    pub kind: Kind,
    pub room: String,
    pub content: String,
    pub importance: f64,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    /// Among the strongest memories: older active memories that set the same subject's
    /// slot to another value (`engram_core::conflicts`), left out of the current facts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub older_conflicting: Vec<MemoryId>,
}

impl From<&Memory> for BriefItem {
    fn from(m: &Memory) -> Self {
        BriefItem {
            id: m.id,
            kind: m.kind,
            room: m.room.clone(),
            content: m.content.clone(),
            importance: m.importance,
            created_at: m.created_at,
            older_conflicting: Vec::new(),
        }
    }
}

/// One of the briefing's strongest memories: a current fact and the older memories it
/// conflicts with.
struct Current {
    memory: Memory,
    older: Vec<MemoryId>,
}

#[derive(Debug, Clone, Default)]
pub struct ContextRequest {
    pub room: Option<String>,
    pub cwd: Option<PathBuf>,
    /// Budget for `text`, in bytes (default 8 KiB, at most 64 KiB).
    pub max_bytes: Option<usize>,
    /// Budget in tokens (about four bytes each); the smaller budget wins.
    pub token_budget: Option<usize>,
}

/// The briefing a new session needs.
#[derive(Debug, Clone, Serialize)]
pub struct Briefing {
    pub rooms: Option<Vec<String>>,
    pub pinned: Vec<BriefItem>,
    pub last_handoff: Option<HandoffView>,
    pub active_features: Vec<FeatureState>,
    pub recent_failures: Vec<BriefItem>,
    pub strongest: Vec<BriefItem>,
    /// All of the above as Markdown, within the budget.
    pub text: String,
    pub bytes: usize,
    pub max_bytes: usize,
    /// Whether lines were left out to stay within the budget.
    pub truncated: bool,
}

/// Default and largest briefing budgets.
pub const CONTEXT_DEFAULT_BYTES: usize = 8 * 1024;
pub const CONTEXT_MAX_BYTES: usize = 64 * 1024;

pub(crate) fn check_items(field: &'static str, items: &[String]) -> Result<(), InputError> {
    if items.len() > 100 {
        return Err(InputError::new(
            field,
            format!("has {} items, the limit is 100", items.len()),
        ));
    }
    for i in items {
        limits::check_len(field, i, 4096)?;
    }
    Ok(())
}

fn meta_str(m: &Memory, key: &str) -> Option<String> {
    m.metadata
        .get(key)
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

fn flat(s: &str, max: usize) -> String {
    let f = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if f.chars().count() <= max {
        f
    } else {
        format!(
            "{}…",
            f.chars().take(max.saturating_sub(1)).collect::<String>()
        )
    }
}

/// A memory as one briefing line: its id, kind, source and date, then its text as a quoted
/// string (JSON escapes). A memory is data: its own `## ` headings, list items or
/// "ignore the above" lines stay inside the quotes instead of reading as the briefing's.
fn quoted_item(m: &Memory, max: usize) -> String {
    format!(
        "- #{} [{}] from {}, {}: {}",
        m.id,
        m.kind,
        m.source,
        &engram_core::time::format(m.created_at)[..10],
        quote(&flat(&m.content, max))
    )
}

/// A text as a JSON string literal.
fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

impl Store {
    pub(crate) fn remember_hub(
        &mut self,
        content: String,
        kind: Kind,
        importance: f64,
        metadata: serde_json::Value,
        o: &Origin,
    ) -> Result<RememberOutcome> {
        self.remember(RememberRequest {
            content,
            kind: Some(kind),
            importance: Some(importance),
            room: o.room.clone(),
            cwd: o.cwd.clone(),
            source: o.source.clone(),
            session_id: o.session_id.clone(),
            metadata: Some(metadata),
            // Hub records share a template ("Failure in api: …\nRoot cause: …"), which
            // makes different failures look alike; only exact repeats reinforce.
            resolve: Some(false),
            ..Default::default()
        })
    }

    /// The newest failures (and fixes) recorded for a component, newest first (seed A
    /// annotates recall hits with them).
    pub fn failures_of(&self, room: &str, component: &str, limit: usize) -> Result<Vec<Memory>> {
        self.reads()
            .component_failures(room, component.trim(), limit)
    }

    /// Seed A's session handoff: importance 0.9, kind `handoff`. Ends the session if one is named.
    pub fn handoff(&mut self, req: HandoffRequest) -> Result<RememberOutcome> {
        limits::check_content("summary", &req.summary)?;
        for (f, v) in [
            ("completed", &req.completed),
            ("in_progress", &req.in_progress),
            ("blocked", &req.blocked),
            ("next_steps", &req.next_steps),
        ] {
            check_items(f, v)?;
        }
        let text = hub::handoff_text(
            &req.summary,
            &req.completed,
            &req.in_progress,
            &req.blocked,
            &req.next_steps,
        );
        let mut meta = json!({
            "type": "handoff", "summary": req.summary, "completed": req.completed,
            "in_progress": req.in_progress, "blocked": req.blocked, "next_steps": req.next_steps,
        });
        req.extras.add_to(&mut meta)?;
        let out =
            self.remember_for_task(text, Kind::Handoff, 0.9, meta, &req.origin, req.task_id)?;
        if let Some(sid) = &req.origin.session_id {
            let sid = &*engram_core::redact::stored_name(sid);
            let now = self.now();
            let summary = engram_core::redact::redact(&req.summary).0;
            self.write(|tx| {
                tx.write_session(&SessionWrite::Handoff {
                    id: sid,
                    room: &out.room,
                    summary: &summary,
                    at: now,
                })
            })?;
        }
        Ok(out)
    }

    /// Seed A's `track_failure`: kind `failure`, importance from severity.
    pub fn track_failure(&mut self, req: FailureRequest) -> Result<RememberOutcome> {
        limits::check_content("error", &req.error)?;
        limits::check_name("component", &req.component)?;
        let severity = req
            .severity
            .clone()
            .unwrap_or_else(|| "major".into())
            .trim()
            .to_ascii_lowercase();
        let importance = hub::severity_importance(&severity)?;
        check_items("related_test_ids", &req.related_tests)?;
        let text = hub::failure_text(
            &req.component,
            &req.error,
            req.root_cause.as_deref(),
            req.fix.as_deref(),
            &req.related_tests,
        );
        let meta = json!({
            "type": "failure", "error": req.error, "component": req.component.trim(), "severity": severity,
            "root_cause": req.root_cause, "fix": req.fix, "related_test_ids": req.related_tests,
        });
        let kind = if req.fix.as_deref().is_some_and(|f| !f.trim().is_empty()) {
            Kind::Bugfix
        } else {
            Kind::Failure
        };
        self.remember_for_task(text, kind, importance, meta, &req.origin, req.task_id)
    }

    /// Seed A's `track_progress`: kind `progress`, importance from status. The latest entry
    /// per feature is the feature's state.
    pub fn track_progress(&mut self, req: ProgressRequest) -> Result<RememberOutcome> {
        limits::check_name("feature", &req.feature)?;
        let status = hub::normalize_status(&req.status);
        let importance = hub::status_importance(&status)?;
        let completion = req
            .completion
            .unwrap_or(if status == "done" { 100.0 } else { 0.0 });
        if !(0.0..=100.0).contains(&completion) {
            return Err(InputError::new(
                "completion",
                format!("is {completion}, it must be between 0 and 100"),
            )
            .into());
        }
        if let Some(q) = req.quality
            && !(0.0..=1.0).contains(&q)
        {
            return Err(InputError::new(
                "quality_score",
                format!("is {q}, it must be between 0 and 1"),
            )
            .into());
        }
        check_items("blockers", &req.blockers)?;
        if let Some(n) = &req.notes {
            limits::check_len("notes", n, limits::MAX_CONTENT_BYTES / 2)?;
        }
        let text = hub::progress_text(
            &req.feature,
            &status,
            completion,
            &req.blockers,
            req.quality,
            req.notes.as_deref(),
        );
        let meta = json!({
            "type": "progress", "feature": req.feature.trim(), "status": status, "completion": completion,
            "blockers": req.blockers, "quality_score": req.quality, "notes": req.notes,
        });
        self.remember_for_task(
            text,
            Kind::Progress,
            importance,
            meta,
            &req.origin,
            req.task_id,
        )
    }

    fn active_of_kinds(
        &self,
        kinds: &[Kind],
        rooms: &Option<Vec<String>>,
        order: ActiveOrder,
        limit: usize,
    ) -> Result<Vec<Memory>> {
        self.reads().active_memories(&ActiveQuery {
            kinds,
            rooms: rooms.as_deref(),
            pinned_only: false,
            order,
            limit,
        })
    }

    fn feature_states(&self, rooms: &Option<Vec<String>>) -> Result<(Vec<FeatureState>, u64)> {
        let entries =
            self.active_of_kinds(&[Kind::Progress], rooms, ActiveOrder::UpdatedThenId, 2000)?;
        let mut seen = std::collections::HashSet::new();
        let mut active = Vec::new();
        for m in &entries {
            let Some(feature) = meta_str(m, "feature") else {
                continue;
            };
            if !seen.insert(feature.to_lowercase()) {
                continue;
            }
            let status = meta_str(m, "status").unwrap_or_default();
            if status != "done" {
                let completion = m
                    .metadata
                    .get("completion")
                    .and_then(|v| v.as_f64())
                    .unwrap_or(0.0);
                active.push(FeatureState {
                    feature,
                    status,
                    completion,
                    memory_id: m.id,
                    updated_at: m.updated_at,
                });
            }
        }
        Ok((active, seen.len() as u64))
    }

    /// Seed A's engineering statistics: failures by component and severity, feature states.
    pub fn engineering_stats(&self, scope: &RoomScope) -> Result<EngineeringStats> {
        let rooms = scope.rooms();
        let failures = self.active_of_kinds(
            &[Kind::Failure, Kind::Bugfix],
            &rooms,
            ActiveOrder::Id,
            100_000,
        )?;
        let mut by_component = BTreeMap::new();
        let mut by_severity = BTreeMap::new();
        let mut total = 0;
        for m in &failures {
            let Some(c) = meta_str(m, "component") else {
                continue;
            };
            total += 1;
            *by_component.entry(c).or_insert(0) += 1;
            *by_severity
                .entry(meta_str(m, "severity").unwrap_or_else(|| "major".into()))
                .or_insert(0) += 1;
        }
        let (active_features, tracked) = self.feature_states(&rooms)?;
        Ok(EngineeringStats {
            failures_total: total,
            failures_by_component: by_component,
            failures_by_severity: by_severity,
            features_tracked: tracked,
            active_features,
        })
    }

    /// The briefing for a new session: pinned memories, the latest handoff with the status
    /// of its next steps, active features, recent failures, and the room's strongest memories,
    /// rendered as Markdown within the budget.
    pub fn context(&self, req: &ContextRequest) -> Result<Briefing> {
        let mut max_bytes = req.max_bytes.unwrap_or(CONTEXT_DEFAULT_BYTES);
        if let Some(t) = req.token_budget {
            max_bytes = max_bytes.min(t.saturating_mul(4));
        }
        if max_bytes == 0 || max_bytes > CONTEXT_MAX_BYTES {
            return Err(InputError::new(
                "max_bytes",
                format!("is {max_bytes}, it must be 1–{CONTEXT_MAX_BYTES}"),
            )
            .into());
        }
        let scope = crate::rooms::scope(&self.config, req.room.as_deref(), req.cwd.as_deref())?;
        let rooms = scope.rooms();
        let all_kinds: Vec<Kind> = Kind::ALL.to_vec();
        let pinned: Vec<Memory> = {
            let mut p = self.reads().active_memories(&ActiveQuery {
                kinds: &all_kinds,
                rooms: rooms.as_deref(),
                pinned_only: true,
                order: ActiveOrder::ImportanceThenId,
                limit: 200,
            })?;
            p.truncate(20);
            p
        };
        let handoff_view = self.last_handoff(&rooms)?;
        let (active_features, _) = self.feature_states(&rooms)?;
        let recent_failures: Vec<Memory> = self.active_of_kinds(
            &[Kind::Failure, Kind::Bugfix],
            &rooms,
            ActiveOrder::UpdatedThenId,
            10,
        )?;
        let strongest = self.strongest_for_briefing(&rooms)?;

        let w = render_briefing(
            max_bytes,
            &pinned,
            handoff_view.as_ref(),
            &active_features,
            &recent_failures,
            &strongest,
        );
        Ok(Briefing {
            rooms,
            pinned: pinned.iter().map(BriefItem::from).collect(),
            last_handoff: handoff_view,
            active_features,
            recent_failures: recent_failures.iter().map(BriefItem::from).collect(),
            strongest: strongest
                .iter()
                .map(|c| BriefItem {
                    older_conflicting: c.older.clone(),
                    ..BriefItem::from(&c.memory)
                })
                .collect(),
            bytes: w.text.len(),
            max_bytes,
            truncated: w.truncated,
            text: w.text,
        })
    }

    /// The room's latest handoff with the status of each of its next steps, judged from
    /// the progress, handoffs and fixes written since.
    fn last_handoff(&self, rooms: &Option<Vec<String>>) -> Result<Option<HandoffView>> {
        let last_handoff = self
            .active_of_kinds(&[Kind::Handoff], rooms, ActiveOrder::UpdatedThenId, 1)?
            .into_iter()
            .next();
        Ok(match last_handoff {
            Some(h) => {
                let later: Vec<Memory> = self
                    .active_of_kinds(
                        &[Kind::Progress, Kind::Handoff, Kind::Bugfix],
                        rooms,
                        ActiveOrder::Updated,
                        300,
                    )?
                    .into_iter()
                    .filter(|m| m.updated_at >= h.updated_at && m.id != h.id)
                    .collect();
                let steps: Vec<String> = h
                    .metadata
                    .get("next_steps")
                    .and_then(|v| v.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let next_steps = steps
                    .into_iter()
                    .map(|step| step_status(step, &later))
                    .collect();
                Some(HandoffView {
                    memory: h,
                    next_steps,
                })
            }
            None => None,
        })
    }

    /// The briefing's strongest memories: the general kinds, unpinned, by activation and
    /// importance (0.6 / 0.4), at most eight. Of active memories setting one subject's slot
    /// to other values only the newest is a current fact, in the best place any of them
    /// held, naming the older ones (`engram_core::conflicts::current`).
    fn strongest_for_briefing(&self, rooms: &Option<Vec<String>>) -> Result<Vec<Current>> {
        {
            let general: Vec<Kind> = Kind::ALL
                .iter()
                .copied()
                .filter(|k| {
                    !matches!(
                        k,
                        Kind::Handoff
                            | Kind::Progress
                            | Kind::Failure
                            | Kind::Bugfix
                            | Kind::Episode
                    )
                })
                .collect();
            let pool =
                self.active_of_kinds(&general, rooms, ActiveOrder::ImportanceThenUpdated, 200)?;
            let traces = self.traces_of(&pool.iter().map(|m| m.id).collect::<Vec<_>>())?;
            let now = self.now();
            let mut scored: Vec<(f64, Memory)> = pool
                .into_iter()
                .filter(|m| !m.pinned)
                .map(|m| {
                    let act = engram_core::dynamics::activation(
                        self.config.dynamics,
                        traces.get(&m.id).map(Vec::as_slice).unwrap_or(&[]),
                        now,
                        m.importance,
                        m.kind.decay_class(),
                        &self.config.actr,
                    );
                    (0.6 * act + 0.4 * m.importance, m)
                })
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.id.cmp(&a.1.id)));
            let stated: Vec<engram_core::conflicts::Stated<'_>> = scored
                .iter()
                .map(|(_, m)| engram_core::conflicts::Stated::of(m))
                .collect();
            let current = engram_core::conflicts::current(&stated);
            drop(stated);
            let mut slots: Vec<Option<Memory>> = scored.into_iter().map(|(_, m)| Some(m)).collect();
            Ok(current
                .into_iter()
                .filter_map(|(i, older)| {
                    let memory = slots[i].take()?;
                    Some(Current { memory, older })
                })
                .take(8)
                .collect())
        }
    }
}

/// The briefing as Markdown within `max_bytes`, section by section.
fn render_briefing(
    max_bytes: usize,
    pinned: &[Memory],
    handoff_view: Option<&HandoffView>,
    active_features: &[FeatureState],
    recent_failures: &[Memory],
    strongest: &[Current],
) -> Budget {
    let mut w = Budget::new(max_bytes);
    if !pinned.is_empty() {
        w.line("## Pinned");
        for m in pinned {
            w.line(&quoted_item(m, 300));
        }
    }
    if let Some(h) = &handoff_view {
        w.line(&format!(
            "## Last handoff (#{}, {})",
            h.memory.id,
            &engram_core::time::format(h.memory.created_at)[..10]
        ));
        w.line(&quote(&flat(
            h.memory
                .metadata
                .get("summary")
                .and_then(|s| s.as_str())
                .unwrap_or(&h.memory.content),
            600,
        )));
        if !h.next_steps.is_empty() {
            w.line("Next steps:");
            for s in &h.next_steps {
                let ev = s.evidence.map(|e| format!(" (#{e})")).unwrap_or_default();
                w.line(&format!(
                    "- [{}] {}{ev}",
                    s.status,
                    quote(&flat(&s.step, 200))
                ));
            }
        }
    }
    if !active_features.is_empty() {
        w.line("## Active features");
        for f in active_features {
            w.line(&format!(
                "- {}: {} {:.0}% (#{})",
                f.feature, f.status, f.completion, f.memory_id
            ));
        }
    }
    if !recent_failures.is_empty() {
        w.line("## Recent failures");
        for m in recent_failures {
            let comp = meta_str(m, "component").unwrap_or_else(|| "-".into());
            w.line(&format!(
                "{} (component {})",
                quoted_item(m, 200),
                quote(&comp)
            ));
        }
    }
    if !strongest.is_empty() {
        w.line("## Strongest memories");
        for c in strongest {
            let older = if c.older.is_empty() {
                String::new()
            } else {
                let ids: Vec<String> = c.older.iter().map(|id| format!("#{id}")).collect();
                format!(" (older, conflicting: {})", ids.join(", "))
            };
            w.line(&format!("{}{older}", quoted_item(&c.memory, 300)));
        }
    }
    if w.text.is_empty() {
        w.line("No memories yet for this room.");
    }
    w
}

fn step_status(step: String, later: &[Memory]) -> StepStatus {
    const COVERED: f64 = 0.6;
    let mut mentioned = None;
    for m in later {
        let done = match m.kind {
            Kind::Progress => {
                meta_str(m, "status").as_deref() == Some("done")
                    && hub::term_coverage(&step, &meta_str(m, "feature").unwrap_or_default())
                        .max(hub::term_coverage(&step, &m.content))
                        >= COVERED
            }
            Kind::Handoff => m
                .metadata
                .get("completed")
                .and_then(|v| v.as_array())
                .is_some_and(|items| {
                    items
                        .iter()
                        .filter_map(|i| i.as_str())
                        .any(|i| hub::term_coverage(&step, i) >= COVERED)
                }),
            Kind::Bugfix => hub::term_coverage(&step, &m.content) >= COVERED,
            _ => false,
        };
        if done {
            return StepStatus {
                step,
                status: "done",
                evidence: Some(m.id),
            };
        }
        if mentioned.is_none() && hub::term_coverage(&step, &m.content) >= COVERED {
            mentioned = Some(m.id);
        }
    }
    match mentioned {
        Some(id) => StepStatus {
            step,
            status: "mentioned",
            evidence: Some(id),
        },
        None => StepStatus {
            step,
            status: "pending",
            evidence: None,
        },
    }
}

/// Appends whole lines while they fit.
struct Budget {
    text: String,
    max: usize,
    truncated: bool,
}

impl Budget {
    fn new(max: usize) -> Self {
        Budget {
            text: String::new(),
            max,
            truncated: false,
        }
    }

    fn line(&mut self, l: &str) {
        if self.truncated {
            return;
        }
        if self.text.len() + l.len() + 1 > self.max {
            self.truncated = true;
            return;
        }
        self.text.push_str(l);
        self.text.push('\n');
    }
}

impl Store {
    /// Mean activation of the active memories in scope (at most the 5,000 newest), for
    /// seed A's `avg_strength`.
    pub fn average_activation(&self, scope: &RoomScope) -> Result<f64> {
        let rooms = scope.rooms();
        let pool = self.active_of_kinds(Kind::ALL, &rooms, ActiveOrder::IdDesc, 5000)?;
        if pool.is_empty() {
            return Ok(0.0);
        }
        let traces = self.traces_of(&pool.iter().map(|m| m.id).collect::<Vec<_>>())?;
        let now = self.now();
        let sum: f64 = pool
            .iter()
            .map(|m| {
                engram_core::dynamics::activation(
                    self.config.dynamics,
                    traces.get(&m.id).map(Vec::as_slice).unwrap_or(&[]),
                    now,
                    m.importance,
                    m.kind.decay_class(),
                    &self.config.actr,
                )
            })
            .sum();
        Ok(sum / pool.len() as f64)
    }
}

pub use crate::storage::rows::RoomInfo;
