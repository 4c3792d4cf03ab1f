//! Seed A's tasks and checkpoints, over the engineering hub.
//!
//! A task is a memory of kind `project` whose metadata says `type: task` (its name, goal,
//! status and the caller's metadata), so recall, decay, the vault and export treat it like
//! any other memory and no table is added. Its id is the memory's id: A's `task_id`.
//!
//! A handoff, failure or progress entry written with a `task_id` is that task's
//! *checkpoint*: the hub record carries `task_id`, `checkpoint_version` (1, 2, … per task)
//! and `checkpoint_reason` (A's `MANUAL_HANDOFF`, `FAILURE`, `PROGRESS`) in its metadata,
//! and a `related` link to the task, which is how a task finds its memories without
//! scanning a room. A checkpoint is thus never a second copy of the state: restoring
//! version N reads the task's records up to N (the latest handoff gives the state).
//! Other memories join a task by a `task_id` in their metadata plus the same link
//! ([`Store::attach_to_task`]).

use crate::hub::{BriefItem, Origin};
use crate::ops::{RememberOutcome, embed_text};
use crate::storage::require_memory;
use crate::storage::rows::{ActiveOrder, ActiveQuery, LinkWrite, MemoryPatch, NewEvent};
use crate::{Error, Result, Store};
use engram_core::memory::IdRef;
use engram_core::room::RoomScope;
use engram_core::task::{self, RestoreCandidate, RestoreMode};
use engram_core::{EventKind, InputError, Kind, LinkKind, Memory, MemoryId, Millis, Tier, limits};
use serde::Serialize;
use serde_json::{Value, json};

/// A new task (A's `create_task`).
#[derive(Debug, Clone, Default)]
pub struct TaskRequest {
    pub name: String,
    pub goal: Option<String>,
    /// One of [`task::TASK_STATUSES`]; `planning` when absent.
    pub status: Option<String>,
    /// The caller's own fields (a JSON object).
    pub metadata: Option<Value>,
    pub origin: Origin,
}

/// A change to a task (A's `update_task`); at least one field.
#[derive(Debug, Clone, Default)]
pub struct TaskChange {
    pub status: Option<String>,
    pub goal: Option<String>,
    /// Replaces the caller's metadata.
    pub metadata: Option<Value>,
}

/// A task as A shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Task {
    pub task_id: MemoryId,
    pub name: String,
    pub goal: String,
    pub status: String,
    pub room: String,
    pub metadata: Value,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    #[serde(with = "engram_core::time::rfc3339")]
    pub updated_at: Millis,
}

/// One checkpoint of a task: the hub record that wrote it.
#[derive(Debug, Clone, Serialize)]
pub struct Checkpoint {
    pub task_id: MemoryId,
    pub checkpoint_id: MemoryId,
    pub version: u64,
    pub reason: String,
    pub kind: Kind,
    pub content: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
}

/// A task with everything written for it (A's `get_task`).
#[derive(Debug, Clone, Serialize)]
pub struct TaskView {
    #[serde(flatten)]
    pub task: Task,
    pub handoffs: Vec<BriefItem>,
    pub failures: Vec<BriefItem>,
    pub progress: Vec<BriefItem>,
    pub memories: Vec<BriefItem>,
    pub latest_checkpoint: Option<Checkpoint>,
}

/// The state a restore hands back: the task's goal and the latest handoff at or before
/// the checkpoint, with the fields A's handoff keeps beside its text.
#[derive(Debug, Clone, Serialize)]
pub struct RestoredState {
    pub goal: String,
    pub status: String,
    pub summary: Option<String>,
    pub completed: Vec<Value>,
    pub in_progress: Vec<Value>,
    pub blocked: Vec<Value>,
    pub next_steps: Vec<Value>,
    /// `[{action, reason}]`: what the next session must not do again.
    pub must_not_redo: Vec<Value>,
    pub must_preserve: Vec<Value>,
    /// `{files, tools}`.
    pub working_set: Value,
    /// The handoff the state comes from, if any.
    pub handoff_id: Option<MemoryId>,
}

/// A's `restore_checkpoint` result.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    pub task: Task,
    pub checkpoint: Checkpoint,
    pub memory_restore_mode: RestoreMode,
    pub state: RestoredState,
    /// The task's memories the mode brings back (none for NONE).
    pub memories: Vec<BriefItem>,
}

/// The extra handoff fields A keeps for a restore.
#[derive(Debug, Clone, Default)]
pub struct HandoffExtras {
    /// `(action, reason)` pairs.
    pub must_not_redo: Vec<(String, Option<String>)>,
    pub must_preserve: Vec<String>,
    pub working_files: Vec<String>,
    pub working_tools: Vec<String>,
}

impl HandoffExtras {
    /// Checks the limits (100 items, 4 KiB each) and adds the fields to a handoff's metadata.
    pub(crate) fn add_to(&self, meta: &mut Value) -> Result<(), InputError> {
        let actions: Vec<String> = self.must_not_redo.iter().map(|(a, _)| a.clone()).collect();
        let reasons: Vec<String> = self
            .must_not_redo
            .iter()
            .filter_map(|(_, r)| r.clone())
            .collect();
        for (field, items) in [
            ("must_not_redo", &actions),
            ("must_not_redo.reason", &reasons),
            ("must_preserve", &self.must_preserve),
            ("working_set.files", &self.working_files),
            ("working_set.tools", &self.working_tools),
        ] {
            crate::hub::check_items(field, items)?;
        }
        if let Some((a, _)) = self.must_not_redo.iter().find(|(a, _)| a.trim().is_empty()) {
            return Err(InputError::new(
                "must_not_redo",
                format!("an entry has an empty action ({a:?}); give {{action, reason}}"),
            ));
        }
        meta["must_not_redo"] = json!(
            self.must_not_redo
                .iter()
                .map(|(a, r)| json!({"action": a, "reason": r}))
                .collect::<Vec<_>>()
        );
        meta["must_preserve"] = json!(self.must_preserve);
        meta["working_set"] = json!({"files": self.working_files, "tools": self.working_tools});
        Ok(())
    }
}

fn meta_str(m: &Memory, key: &str) -> String {
    m.metadata
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn is_task(m: &Memory) -> bool {
    m.kind == Kind::Project && m.metadata.get("type").and_then(Value::as_str) == Some("task")
}

fn as_task(m: &Memory) -> Task {
    Task {
        task_id: m.id,
        name: meta_str(m, "name"),
        goal: meta_str(m, "goal"),
        status: meta_str(m, "status"),
        room: m.room.clone(),
        metadata: m.metadata.get("metadata").cloned().unwrap_or(json!({})),
        created_at: m.created_at,
        updated_at: m.updated_at,
    }
}

fn as_checkpoint(task_id: MemoryId, m: &Memory) -> Option<Checkpoint> {
    let version = m.metadata.get("checkpoint_version")?.as_u64()?;
    Some(Checkpoint {
        task_id,
        checkpoint_id: m.id,
        version,
        reason: meta_str(m, "checkpoint_reason"),
        kind: m.kind,
        content: m.content.clone(),
        created_at: m.created_at,
    })
}

fn check_object(field: &'static str, v: &Option<Value>) -> Result<(), InputError> {
    match v {
        Some(v) if !v.is_object() => Err(InputError::new(field, "must be a JSON object")),
        Some(v) => limits::check_metadata(v).map_err(|e| InputError::new(field, e.message)),
        None => Ok(()),
    }
}

impl Store {
    /// A's `create_task`: a task memory (kind `project`, importance from its status).
    pub fn create_task(&mut self, req: TaskRequest) -> Result<(Task, RememberOutcome)> {
        limits::check_name("name", &req.name)?;
        let goal = req.goal.unwrap_or_default();
        limits::check_len("goal", &goal, limits::MAX_CONTENT_BYTES / 2)?;
        let status = task::task_status(req.status.as_deref().unwrap_or("planning"))?;
        check_object("metadata", &req.metadata)?;
        let meta = json!({
            "type": "task", "name": req.name.trim(), "goal": goal, "status": status,
            "metadata": req.metadata.unwrap_or(json!({})),
        });
        let out = self.remember_hub(
            task::task_text(&req.name, &goal, &status),
            Kind::Project,
            task::task_importance(&status),
            meta,
            &req.origin,
        )?;
        Ok((self.task(out.id)?, out))
    }

    /// The task with this id, or an error naming `task_id`.
    pub fn task(&self, id: MemoryId) -> Result<Task> {
        Ok(as_task(&self.task_memory(id)?))
    }

    /// The task memory `id` names: the task with that id, else the task imported from
    /// seed A with that A id (`a.task_id`): A's agents and scripts keep the task ids A
    /// gave them, and an imported task gets a new id because A's memory ids hold theirs.
    fn task_memory(&self, id: MemoryId) -> Result<Memory> {
        if let Some(m) = self.reads().memory(&IdRef::Id(id))?
            && is_task(&m)
            && m.tier != Tier::Trash
        {
            return Ok(m);
        }
        let pool = self.reads().active_memories(&ActiveQuery {
            kinds: &[Kind::Project],
            rooms: None,
            pinned_only: false,
            order: ActiveOrder::Id,
            limit: 100_000,
        })?;
        pool.into_iter()
            .find(|m| is_task(m) && m.metadata["a"]["task_id"].as_i64() == Some(id))
            .ok_or_else(|| Error::not_found("task_id", format!("task {id}")))
    }

    /// A's `update_task`: the task's text, status and metadata rewritten in one write (the
    /// previous version kept as a revision; importance follows the status).
    pub fn update_task(&mut self, id: MemoryId, change: TaskChange) -> Result<Task> {
        if change.status.is_none() && change.goal.is_none() && change.metadata.is_none() {
            return Err(
                InputError::new("status", "give at least one of status, goal, metadata").into(),
            );
        }
        let status = change
            .status
            .as_deref()
            .map(task::task_status)
            .transpose()?;
        if let Some(g) = &change.goal {
            limits::check_len("goal", g, limits::MAX_CONTENT_BYTES / 2)?;
        }
        check_object("metadata", &change.metadata)?;
        let m = self.task_memory(id)?;
        let id = m.id;
        let mut meta = m.metadata.clone();
        if let Some(s) = &status {
            meta["status"] = json!(s);
        }
        if let Some(g) = &change.goal {
            meta["goal"] = json!(engram_core::redact::redact(g).0);
        }
        if let Some(md) = &change.metadata {
            let mut md = md.clone();
            engram_core::redact::redact_json(&mut md);
            meta["metadata"] = md;
        }
        let t = as_task(&Memory {
            metadata: meta.clone(),
            ..m.clone()
        });
        let content = task::task_text(&t.name, &t.goal, &t.status);
        let now = self.now();
        self.write(|tx| {
            let cur = require_memory(tx, &IdRef::Id(id), "task_id")?;
            tx.add_revision(&cur, "update", now, None)?;
            tx.patch_memory(
                id,
                &MemoryPatch {
                    content: Some(content.clone()),
                    importance: Some(task::task_importance(&t.status)),
                    metadata: Some(meta.clone()),
                    updated_at: Some(now),
                    ..Default::default()
                },
            )?;
            tx.index_text(
                id,
                cur.title.as_deref(),
                &content,
                &cur.tags,
                meta.get("context").and_then(Value::as_str),
            )?;
            tx.set_embedding(id, None)?;
            tx.append_event(&NewEvent {
                memory_id: id,
                kind: EventKind::Update,
                weight: 1.0,
                at: now,
                session_id: None,
                detail: Some("task updated"),
            })
        })?;
        if let Some((model, v)) = self.embed_document(&embed_text(m.title.as_deref(), &content)) {
            self.write(|tx| tx.set_embedding(id, Some((&model, &v))))?;
        }
        self.task(id)
    }

    /// A's `list_tasks`: the tasks in scope, most recently updated first, optionally of one
    /// status. At most `limit` (the caller's limit is checked by the caller).
    pub fn tasks(
        &self,
        scope: &RoomScope,
        status: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Task>> {
        let status = status.map(task::task_status).transpose()?;
        let rooms = scope.rooms();
        let pool = self.reads().active_memories(&ActiveQuery {
            kinds: &[Kind::Project],
            rooms: rooms.as_deref(),
            pinned_only: false,
            order: ActiveOrder::UpdatedThenId,
            limit: 100_000,
        })?;
        Ok(pool
            .iter()
            .filter(|m| is_task(m))
            .map(as_task)
            .filter(|t| status.as_ref().is_none_or(|s| &t.status == s))
            .take(limit)
            .collect())
    }

    /// Every memory linked to the task (its checkpoints and attached memories), oldest first.
    fn task_members(&self, id: MemoryId) -> Result<Vec<Memory>> {
        // A memory names its task by engram's id, or by A's own id of an imported task
        // (an A agent writes the ids A gave it; tester-a).
        let a_id = self
            .reads()
            .memory(&IdRef::Id(id))?
            .and_then(|t| t.metadata["a"]["task_id"].as_i64());
        let ids: Vec<MemoryId> = self
            .reads()
            .links_around(id)?
            .into_iter()
            .filter(|l| l.kind == LinkKind::Related && l.dst == id)
            .map(|l| l.src)
            .collect();
        let mut ms: Vec<Memory> = self
            .reads()
            .memories(&ids)?
            .into_iter()
            .filter(|m| {
                let named = m.metadata.get("task_id").and_then(Value::as_i64);
                m.tier != Tier::Trash && (named == Some(id) || (named.is_some() && named == a_id))
            })
            .collect();
        ms.sort_by_key(|m| (m.created_at, m.id));
        Ok(ms)
    }

    /// A's `get_task`: the task with its handoffs, failures, progress and other memories
    /// (newest first) and its latest checkpoint.
    pub fn task_view(&self, id: MemoryId) -> Result<TaskView> {
        let task = self.task(id)?;
        let id = task.task_id;
        let members = self.task_members(id)?;
        let pick = |f: &dyn Fn(Kind) -> bool| -> Vec<BriefItem> {
            members
                .iter()
                .rev()
                .filter(|m| f(m.kind))
                .map(BriefItem::from)
                .collect()
        };
        let latest_checkpoint = members.iter().rev().find_map(|m| as_checkpoint(id, m));
        Ok(TaskView {
            handoffs: pick(&|k| k == Kind::Handoff),
            failures: pick(&|k| matches!(k, Kind::Failure | Kind::Bugfix)),
            progress: pick(&|k| k == Kind::Progress),
            memories: pick(&|k| {
                !matches!(
                    k,
                    Kind::Handoff | Kind::Failure | Kind::Bugfix | Kind::Progress
                )
            }),
            latest_checkpoint,
            task,
        })
    }

    /// A's `list_checkpoints`: the task's checkpoints, newest first, at most `limit`.
    pub fn checkpoints(&self, id: MemoryId, limit: usize) -> Result<Vec<Checkpoint>> {
        let id = self.task(id)?.task_id;
        let mut cps: Vec<Checkpoint> = self
            .task_members(id)?
            .iter()
            .filter_map(|m| as_checkpoint(id, m))
            .collect();
        cps.sort_by_key(|c| std::cmp::Reverse(c.version));
        cps.truncate(limit);
        Ok(cps)
    }

    /// The task a restore means when none is named: the most recently updated open task in
    /// scope.
    pub fn current_task(&self, scope: &RoomScope) -> Result<Option<Task>> {
        Ok(self
            .tasks(scope, None, usize::MAX)?
            .into_iter()
            .find(|t| task::task_is_open(&t.status)))
    }

    /// The task a `restore_checkpoint` without a task id restores: the most recently
    /// updated open task that has a checkpoint, else the current task (whose restore then
    /// says it has none). A task touched since its last checkpoint (a status update) with
    /// no checkpoint of its own does not hide the one that has them (tester-a).
    pub fn task_to_restore(&self, scope: &RoomScope) -> Result<Option<Task>> {
        let open: Vec<Task> = self
            .tasks(scope, None, usize::MAX)?
            .into_iter()
            .filter(|t| task::task_is_open(&t.status))
            .collect();
        for t in &open {
            let members = self.task_members(t.task_id)?;
            if members
                .iter()
                .any(|m| as_checkpoint(t.task_id, m).is_some())
            {
                return Ok(Some(t.clone()));
            }
        }
        Ok(open.into_iter().next())
    }

    /// A's `restore_checkpoint`: the state at checkpoint `version` (the latest when absent)
    /// and the task's memories up to it that `mode` brings back.
    pub fn restore_checkpoint(
        &self,
        id: MemoryId,
        version: Option<u64>,
        mode: RestoreMode,
    ) -> Result<Restored> {
        let task = self.task(id)?;
        let id = task.task_id;
        let members = self.task_members(id)?;
        let cps: Vec<(usize, Checkpoint)> = members
            .iter()
            .enumerate()
            .filter_map(|(i, m)| as_checkpoint(id, m).map(|c| (i, c)))
            .collect();
        let chosen = match version {
            Some(v) => cps.iter().find(|(_, c)| c.version == v),
            None => cps.iter().max_by_key(|(_, c)| c.version),
        };
        let Some((at, checkpoint)) = chosen.cloned() else {
            return Err(match version {
                Some(v) => InputError::new(
                    "version",
                    format!("task {id} has no checkpoint version {v} (it has {})", cps.len()),
                ),
                None => InputError::new(
                    "task_id",
                    format!("task {id} has no checkpoint yet; a session_handoff, track_failure or track_progress with this task_id writes one"),
                ),
            }
            .into());
        };
        let upto = &members[..=at];
        let handoff = upto.iter().rev().find(|m| m.kind == Kind::Handoff);
        // A handoff imported from A may hold its fields only in its text (A's format).
        let from_text = handoff.and_then(|h| engram_core::hub::parse_handoff_text(&h.content));
        let texts = |v: &[String]| v.iter().map(|s| json!(s)).collect::<Vec<Value>>();
        let list = |key: &str, parsed: Option<&[String]>| -> Vec<Value> {
            handoff
                .and_then(|h| h.metadata.get(key))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_else(|| parsed.map(texts).unwrap_or_default())
        };
        let summary = handoff.map(|h| match meta_str(h, "summary") {
            s if s.is_empty() => from_text.as_ref().map(|f| f.0.clone()).unwrap_or_default(),
            s => s,
        });
        let parsed = from_text.as_ref();
        let state = RestoredState {
            goal: task.goal.clone(),
            status: task.status.clone(),
            summary,
            completed: list("completed", parsed.map(|f| &f.1[..])),
            in_progress: list("in_progress", parsed.map(|f| &f.2[..])),
            blocked: list("blocked", parsed.map(|f| &f.3[..])),
            next_steps: list("next_steps", parsed.map(|f| &f.4[..])),
            must_not_redo: list("must_not_redo", None),
            must_preserve: list("must_preserve", None),
            working_set: handoff
                .and_then(|h| h.metadata.get("working_set").cloned())
                .unwrap_or(json!({"files": [], "tools": []})),
            handoff_id: handoff.map(|h| h.id),
        };
        let candidates: Vec<RestoreCandidate> = upto
            .iter()
            .map(|m| RestoreCandidate {
                importance: m.importance,
                is_failure: matches!(m.kind, Kind::Failure | Kind::Bugfix),
                created_at: m.created_at,
            })
            .collect();
        let memories = task::restore_selection(mode, &candidates)
            .into_iter()
            .map(|i| BriefItem::from(&upto[i]))
            .collect();
        Ok(Restored {
            task,
            checkpoint,
            memory_restore_mode: mode,
            state,
            memories,
        })
    }

    /// A hub write for a task: checks the task, numbers the checkpoint, writes the record
    /// with `task_id`, `checkpoint_version` and `checkpoint_reason` in its metadata, and
    /// links it to the task. Without a task it is a plain hub write.
    pub(crate) fn remember_for_task(
        &mut self,
        content: String,
        kind: Kind,
        importance: f64,
        mut metadata: Value,
        origin: &Origin,
        task_id: Option<MemoryId>,
    ) -> Result<RememberOutcome> {
        let Some(tid) = task_id else {
            return self.remember_hub(content, kind, importance, metadata, origin);
        };
        let tid = self.task(tid)?.task_id;
        let version = self
            .task_members(tid)?
            .iter()
            .filter_map(|m| m.metadata.get("checkpoint_version").and_then(Value::as_u64))
            .max()
            .unwrap_or(0)
            + 1;
        metadata["task_id"] = json!(tid);
        metadata["checkpoint_version"] = json!(version);
        metadata["checkpoint_reason"] = json!(task::checkpoint_reason(kind));
        let out = self.remember_hub(content, kind, importance, metadata, origin)?;
        self.link_to_task(out.id, tid)?;
        Ok(out)
    }

    /// Seed A's import: each (memory uid, task uid) pair makes the memory the task's, as
    /// [`Store::attach_to_task`] would (its `task_id` becomes engram's id of the task, A's
    /// kept as `a.task_id`, plus the link). A's handoffs, failures and progress entries of
    /// a task become its checkpoints 1, 2, … in the order they were written, so
    /// `restore_checkpoint` works on imported tasks. One transaction; running it again
    /// changes nothing.
    pub(crate) fn bind_to_tasks(&mut self, pairs: &[(String, String)]) -> Result<()> {
        if pairs.is_empty() {
            return Ok(());
        }
        let now = self.now();
        self.write(|tx| {
            let mut by_task: std::collections::BTreeMap<MemoryId, Vec<Memory>> = Default::default();
            for (member, task) in pairs {
                let m = require_memory(&*tx, &IdRef::Uid(member.clone()), "task_id")?;
                let t = require_memory(&*tx, &IdRef::Uid(task.clone()), "task_id")?;
                by_task.entry(t.id).or_default().push(m);
            }
            for (tid, mut members) in by_task {
                members.sort_by_key(|m| (m.created_at, m.id));
                let mut version = members
                    .iter()
                    .filter_map(|m| m.metadata.get("checkpoint_version")?.as_u64())
                    .max()
                    .unwrap_or(0);
                for m in members {
                    let mut meta = m.metadata.clone();
                    if meta.get("task_id").and_then(Value::as_i64) != Some(tid) {
                        meta["a"]["task_id"] = meta["task_id"].clone();
                        meta["task_id"] = json!(tid);
                    }
                    let hub = matches!(m.kind, Kind::Handoff | Kind::Failure | Kind::Progress);
                    if hub && meta.get("checkpoint_version").is_none() {
                        version += 1;
                        meta["checkpoint_version"] = json!(version);
                        meta["checkpoint_reason"] = json!(task::checkpoint_reason(m.kind));
                    }
                    if meta != m.metadata {
                        let patch = MemoryPatch {
                            metadata: Some(meta),
                            ..Default::default()
                        };
                        tx.patch_memory(m.id, &patch)?;
                    }
                    tx.upsert_link(&LinkWrite::set(m.id, tid, LinkKind::Related, 1.0, now))?;
                }
            }
            Ok(())
        })
    }

    /// Links a memory whose metadata names a task (`task_id`) to that task, so `get_task`
    /// and restores find it. An unknown task is an error naming `task_id`.
    pub fn attach_to_task(&mut self, memory: MemoryId, task_id: MemoryId) -> Result<()> {
        let task_id = self.task(task_id)?.task_id;
        self.link_to_task(memory, task_id)
    }

    fn link_to_task(&mut self, memory: MemoryId, task_id: MemoryId) -> Result<()> {
        if memory == task_id {
            return Ok(());
        }
        let now = self.now();
        self.write(|tx| {
            tx.upsert_link(&LinkWrite::set(
                memory,
                task_id,
                LinkKind::Related,
                1.0,
                now,
            ))
        })
    }
}
