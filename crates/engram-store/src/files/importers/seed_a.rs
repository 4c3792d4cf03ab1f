//! Seed A's DuckDB `memories` table written as JSON lines, its `graph.json` (NetworkX
//! node-link data: `nodes` and `links`, or `edges` in newer NetworkX) whose edges between
//! A's memories become links, and its `tasks` table (JSON lines too) whose rows become task
//! memories that the memories naming them (`metadata.task_id`) belong to.

use super::stream::LineFormat;
use super::*;
use engram_core::task;

/// Seed A's lines: one memory each; then the graph's edges between them.
pub(super) struct AJsonl {
    now: Millis,
    edges: Vec<AEdge>,
    /// A's id (as [`a_key`] writes it) → the imported memory's uid and creation time; kept
    /// only when there are edges to resolve.
    ids: HashMap<String, (String, Millis)>,
    /// A's tasks by A's task id, stored after every memory (so A's memory ids stay free).
    tasks: Vec<(String, ImportedMemory)>,
    task_warnings: Vec<String>,
    /// (memory uid, A's task id) for every memory whose metadata names a task.
    members: Vec<(String, String)>,
}

impl AJsonl {
    pub(super) fn new(now: Millis, edges: Vec<AEdge>, tasks: ATasks) -> AJsonl {
        AJsonl {
            now,
            edges,
            ids: HashMap::new(),
            tasks: tasks.tasks,
            task_warnings: tasks.warnings,
            members: Vec::new(),
        }
    }

    /// (memory uid, task uid) for each imported memory that names one of the imported
    /// tasks, and how many named a task the tasks file does not hold.
    pub(super) fn task_members(&self) -> (Vec<(String, String)>, usize) {
        let uids: HashMap<&str, &str> = self
            .tasks
            .iter()
            .map(|(k, t)| (k.as_str(), t.memory.uid.as_str()))
            .collect();
        let mut unknown = 0;
        let pairs = self
            .members
            .iter()
            .filter_map(|(m, t)| {
                let found = uids.get(t.as_str()).map(|u| (m.clone(), u.to_string()));
                unknown += usize::from(found.is_none());
                found
            })
            .collect();
        (pairs, unknown)
    }
}

impl LineFormat for AJsonl {
    fn line(&mut self, batch: &mut Batch, line_no: usize, t: &str) {
        match a_memory(t, line_no, self.now) {
            Ok((key, im)) => {
                if !self.tasks.is_empty()
                    && let Some(t) = im.memory.metadata.get("task_id")
                {
                    self.members.push((im.memory.uid.clone(), a_key(t)));
                }
                if !self.edges.is_empty() {
                    self.ids
                        .insert(key, (im.memory.uid.clone(), im.memory.created_at));
                }
                batch.memories.push(im)
            }
            Err(w) => batch.warn(w),
        }
    }

    fn finish(&mut self, batch: &mut Batch) {
        for w in std::mem::take(&mut self.task_warnings) {
            batch.warn(w);
        }
        batch
            .memories
            .extend(self.tasks.iter().map(|(_, t)| t.clone()));
        let mut unknown = 0;
        for e in std::mem::take(&mut self.edges) {
            let (Some((src, a)), Some((dst, b))) =
                (self.ids.get(&e.source), self.ids.get(&e.target))
            else {
                unknown += 1;
                continue;
            };
            let kind = LinkKind::parse(&e.relation).unwrap_or(LinkKind::Related);
            let at = *a.max(b);
            batch.links.push(LinkRow {
                src: src.clone(),
                dst: dst.clone(),
                kind,
                weight: e.weight,
                created_at: at,
                updated_at: at,
                note: (kind == LinkKind::Related && !e.relation.eq_ignore_ascii_case("related"))
                    .then(|| format!("seed A relation {:?}", e.relation)),
            });
        }
        if unknown > 0 {
            batch.warn(format!(
                "graph.json: {unknown} edges name memories that are not in the table; skipped"
            ));
        }
    }
}

/// One edge of A's graph, by A's memory ids.
#[derive(Debug, Clone)]
pub(super) struct AEdge {
    source: String,
    target: String,
    relation: String,
    weight: f64,
}

/// A memory id as the table and the graph both write it: `5` and `"5"` are one id.
fn a_key(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_string(),
        other => other.to_string(),
    }
}

/// Reads A's `graph.json` whole (A wrote it whole), before anything is stored: a file that
/// is not node-link data is an error naming the file, not half an import.
pub(super) fn read_graph(path: &Path) -> Result<Vec<AEdge>> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let doc: Value = serde_json::from_slice(&bytes).map_err(|e| bad_file(path, e))?;
    let edges = doc
        .get("links")
        .or_else(|| doc.get("edges"))
        .and_then(Value::as_array)
        .ok_or_else(|| {
            bad_file(
                path,
                "not NetworkX node-link data (no `links` or `edges` list)",
            )
        })?;
    Ok(edges
        .iter()
        .filter_map(|e| {
            Some(AEdge {
                source: a_key(e.get("source")?),
                target: a_key(e.get("target")?),
                relation: str_of(e.as_object()?, "relation")
                    .unwrap_or("semantic")
                    .to_string(),
                weight: e
                    .get("weight")
                    .and_then(Value::as_f64)
                    .filter(|w| w.is_finite())
                    .unwrap_or(1.0)
                    .clamp(0.0, 1.0),
            })
        })
        .collect())
}

/// A's `tasks` table as read: (A's task id, the task memory) and the lines skipped.
#[derive(Default)]
pub(super) struct ATasks {
    tasks: Vec<(String, ImportedMemory)>,
    warnings: Vec<String>,
}

/// Reads A's `tasks` table written as JSON lines (`COPY tasks TO 'a-tasks.jsonl' (FORMAT
/// json)`) whole, before anything is stored: a project has tens of tasks, and the memories
/// that name them need their uids. Each row is a task memory as `create_task` writes one.
pub(super) fn read_tasks(path: &Path, now: Millis) -> Result<ATasks> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut out = ATasks::default();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match a_task(line, now) {
            Ok(t) => out.tasks.push(t),
            Err(why) => out.warnings.push(format!(
                "{}: line {}: {why}; skipped",
                path.display(),
                i + 1
            )),
        }
    }
    Ok(out)
}

/// One row of A's `tasks(id, name, goal, status, user_id, created_at, updated_at,
/// metadata)` as the task memory engram's `create_task` would have written.
fn a_task(line: &str, now: Millis) -> std::result::Result<(String, ImportedMemory), String> {
    let o: Map<String, Value> =
        serde_json::from_str(line).map_err(|e| format!("not a JSON object ({e})"))?;
    let key = o.get("id").map(a_key).ok_or("no id")?;
    let name = str_of(&o, "name")
        .filter(|n| !n.trim().is_empty())
        .ok_or("no name")?;
    let goal = str_of(&o, "goal").unwrap_or("");
    let raw_status = str_of(&o, "status").unwrap_or("planning");
    let status = task::task_status(raw_status).map_err(|e| e.message)?;
    let user = str_of(&o, "user_id").unwrap_or("default");
    let created = time_of(&o, "created_at").unwrap_or(now);
    let caller = a_metadata(&o);
    let mut m = blank_memory(
        derived_uid(created, &format!("a-task:{user}:{key}")),
        task::task_text(name, goal, &status),
        created,
    );
    m.kind = Kind::Project;
    m.importance = task::task_importance(&status);
    m.room = a_room(user);
    m.updated_at = time_of(&o, "updated_at").unwrap_or(created).max(created);
    m.source = "engram-a".into();
    m.metadata = json!({
        "type": "task", "name": name.trim(), "goal": goal, "status": status,
        "metadata": caller, "a": {"task_id": o.get("id"), "user_id": user},
    });
    Ok((key, ImportedMemory::new(m)))
}

/// A row's `metadata` column: DuckDB writes JSON columns as JSON, or as a string holding
/// JSON.
fn a_metadata(o: &Map<String, Value>) -> Value {
    match o.get("metadata") {
        Some(Value::Object(m)) => Value::Object(m.clone()),
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
        _ => json!({}),
    }
}

/// The room of A's `user_id`: A's single-user default is everyone's `common` room.
fn a_room(user: &str) -> String {
    if user == "default" {
        room::COMMON.to_string()
    } else {
        room_of(Some(user))
    }
}

/// One line of A's table as a memory (with A's id as [`a_key`] writes it), or why it was
/// skipped.
fn a_memory(
    t: &str,
    line_no: usize,
    now: Millis,
) -> std::result::Result<(String, ImportedMemory), String> {
    let o: Map<String, Value> = serde_json::from_str(t)
        .map_err(|e| format!("line {line_no}: not a JSON object ({e}); skipped"))?;
    let Some(content) = str_of(&o, "content") else {
        return Err(format!("line {line_no}: no content; skipped"));
    };
    let key = o.get("id").map(a_key).unwrap_or_default();
    let id = o
        .get("id")
        .map(|v| v.to_string())
        .unwrap_or_else(|| format!("line{line_no}"));
    let user = str_of(&o, "user_id").unwrap_or("default");
    let created = time_of(&o, "created_at").unwrap_or(now);
    let meta = a_metadata(&o);
    let category = str_of(&o, "category").unwrap_or("fact");
    let kind = meta
        .get("type")
        .and_then(Value::as_str)
        .and_then(|t| Kind::parse(t).ok())
        .or_else(|| Kind::parse(category).ok())
        .unwrap_or(Kind::Fact);
    let mut m = blank_memory(
        derived_uid(created, &format!("a:{user}:{id}")),
        content.to_string(),
        created,
    );
    m.kind = kind;
    m.importance = o
        .get("importance")
        .and_then(Value::as_f64)
        .unwrap_or(0.5)
        .clamp(0.0, 1.0);
    m.room = a_room(user);
    m.updated_at = time_of(&o, "last_accessed_at")
        .unwrap_or(created)
        .max(created);
    m.source = "engram-a".into();
    let mut md = meta;
    if let Some(mo) = md.as_object_mut() {
        mo.insert(
            "a".into(),
            drop_nulls(json!({
                "id": o.get("id"),
                "user_id": user,
                "category": category,
                "recall_count": o.get("recall_count"),
                "last_accessed_at": o.get("last_accessed_at"),
            })),
        );
    }
    m.metadata = md;
    let recalls = o.get("recall_count").and_then(Value::as_u64).unwrap_or(0);
    let last = time_of(&o, "last_accessed_at");
    let events = a_events(&m, recalls, last);
    // A's integer ids stay the memory's ids where the store has them free, so an id an
    // agent's notes or handoffs name (`update_memory 13`) is still that memory.
    let a_id = o.get("id").and_then(Value::as_i64).filter(|&i| i > 0);
    if let Some(i) = a_id {
        m.id = i;
    }
    let mut im = ImportedMemory::new(m);
    im.keep_id = a_id.is_some();
    im.events = Some(events);
    Ok((key, im))
}

/// At most this many recall events stand for an A memory's `recall_count`.
const A_RECALL_EVENTS_MAX: u64 = 20;

/// An A memory's history as events: its creation, and its `recall_count` recalls spread
/// evenly up to `last_accessed_at` (A kept only the count and the last time). Without them
/// the dynamics saw a memory never used since it was written, and the first maintenance
/// archived what A's users recalled last week. A's `last_accessed_at` equals its creation
/// until a recall, so a later one with no count still counts as one recall then.
fn a_events(
    m: &engram_core::Memory,
    recalls: u64,
    last_accessed: Option<Millis>,
) -> Vec<crate::files::transfer::EventRow> {
    use crate::files::transfer::EventRow;
    let defaults = engram_core::Config::default();
    let mut events = vec![EventRow {
        kind: "create".into(),
        weight: engram_core::dynamics::create_weight(m.importance, &defaults.actr),
        at: m.created_at,
        session_id: None,
        detail: None,
    }];
    let last = last_accessed.filter(|&t| t > m.created_at);
    let n = match last {
        Some(_) => recalls.clamp(1, A_RECALL_EVENTS_MAX),
        None => 0,
    };
    let Some(last) = last else { return events };
    let span = last - m.created_at;
    for i in 1..=n {
        events.push(EventRow {
            kind: "recall_hit".into(),
            weight: defaults.recall_hit_weight,
            at: m.created_at + span * i as i64 / n as i64,
            session_id: None,
            detail: (i == n).then(|| format!("seed A: recall_count {recalls}, last accessed")),
        });
    }
    events
}
