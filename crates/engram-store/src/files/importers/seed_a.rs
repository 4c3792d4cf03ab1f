//! Seed A's DuckDB `memories` table written as JSON lines.

use super::stream::LineFormat;
use super::*;

/// Seed A's lines: one memory each.
pub(super) struct AJsonl {
    pub now: Millis,
}

impl LineFormat for AJsonl {
    fn line(&mut self, batch: &mut Batch, line_no: usize, t: &str) {
        match a_memory(t, line_no, self.now) {
            Ok(im) => batch.memories.push(im),
            Err(w) => batch.warn(w),
        }
    }
}

/// One line of A's table as a memory, or why it was skipped.
fn a_memory(t: &str, line_no: usize, now: Millis) -> std::result::Result<ImportedMemory, String> {
    let o: Map<String, Value> = serde_json::from_str(t)
        .map_err(|e| format!("line {line_no}: not a JSON object ({e}); skipped"))?;
    let Some(content) = str_of(&o, "content") else {
        return Err(format!("line {line_no}: no content; skipped"));
    };
    let id = o
        .get("id")
        .map(|v| v.to_string())
        .unwrap_or_else(|| format!("line{line_no}"));
    let user = str_of(&o, "user_id").unwrap_or("default");
    let created = time_of(&o, "created_at").unwrap_or(now);
    // DuckDB writes JSON columns as JSON, or as a string holding JSON.
    let meta = match o.get("metadata") {
        Some(Value::Object(m)) => Value::Object(m.clone()),
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
        _ => json!({}),
    };
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
    m.room = if user == "default" {
        room::COMMON.to_string()
    } else {
        room_of(Some(user))
    };
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
    let mut im = ImportedMemory::new(m);
    im.events = Some(events);
    Ok(im)
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
