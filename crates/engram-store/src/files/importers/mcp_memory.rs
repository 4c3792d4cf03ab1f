//! The official MCP memory server's `memory.json`: JSONL of entities and relations.
//!
//! Each observation of an entity is a memory titled with the entity's name; a relation is
//! a link between the entities' first memories. The server writes every entity before the
//! first relation, so a relation is resolved as it is read; one naming an entity that
//! comes later waits for the end of the file.

use super::stream::LineFormat;
use super::*;

#[derive(Default)]
pub(super) struct McpMemory {
    pub now: Millis,
    /// An entity's name to the uid of its first memory, which relations link.
    anchor: HashMap<String, String>,
    /// Relations naming an entity not read yet: (line, from, to, relation type).
    waiting: Vec<(usize, String, String, String)>,
}

impl McpMemory {
    pub fn new(now: Millis) -> McpMemory {
        McpMemory {
            now,
            ..Default::default()
        }
    }

    fn entity(&mut self, batch: &mut Batch, line_no: usize, v: &Value) {
        let Some(name) = v.get("name").and_then(Value::as_str) else {
            batch.warn(format!("line {line_no}: entity without a name; skipped"));
            return;
        };
        let ety = v.get("entityType").and_then(Value::as_str).unwrap_or("");
        let mut obs: Vec<String> = v
            .get("observations")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter(|s| !s.trim().is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if obs.is_empty() {
            obs.push(if ety.is_empty() {
                name.to_string()
            } else {
                format!("{name} ({ety})")
            });
        }
        for o in obs {
            let uid = derived_uid(0, &format!("mcp-memory:{name}\n{o}"));
            self.anchor
                .entry(name.to_string())
                .or_insert_with(|| uid.clone());
            batch.memories.push(ImportedMemory::new(observation(
                uid, name, ety, o, self.now,
            )));
        }
    }

    /// A relation as a link, or `false` when an entity it names is not known (yet).
    fn relation(&self, batch: &mut Batch, from: &str, to: &str, ty: &str) -> bool {
        let (Some(a), Some(b)) = (self.anchor.get(from), self.anchor.get(to)) else {
            return false;
        };
        batch.links.push(LinkRow {
            src: a.clone(),
            dst: b.clone(),
            kind: LinkKind::Related,
            weight: 1.0,
            created_at: self.now,
            updated_at: self.now,
            note: Some(ty.to_string()).filter(|s| !s.is_empty()),
        });
        true
    }
}

/// One observation of an entity as a memory.
fn observation(uid: String, name: &str, ety: &str, o: String, now: Millis) -> engram_core::Memory {
    let mut m = blank_memory(uid, o, now);
    m.title = Some(name.to_string());
    m.tags = [name, ety]
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty() && t.len() <= engram_core::limits::MAX_TAG_BYTES)
        .map(str::to_string)
        .collect();
    m.tags.dedup();
    m.source = "mcp-memory".into();
    m.metadata = json!({ "mcp_memory": { "entity": name, "entityType": ety } });
    m
}

impl LineFormat for McpMemory {
    fn line(&mut self, batch: &mut Batch, line_no: usize, t: &str) {
        let v: Value = match serde_json::from_str(t) {
            Ok(v) => v,
            Err(e) => {
                batch.warn(format!("line {line_no}: not JSON ({e}); skipped"));
                return;
            }
        };
        match v.get("type").and_then(Value::as_str) {
            Some("entity") => self.entity(batch, line_no, &v),
            Some("relation") => {
                let get = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                let (from, to, ty) = (get("from"), get("to"), get("relationType"));
                if !self.relation(batch, &from, &to, &ty) {
                    self.waiting.push((line_no, from, to, ty));
                }
            }
            other => batch.warn(format!("line {line_no}: unknown type {other:?}; skipped")),
        }
    }

    fn finish(&mut self, batch: &mut Batch) {
        for (line, from, to, ty) in std::mem::take(&mut self.waiting) {
            if !self.relation(batch, &from, &to, &ty) {
                batch.warn(format!(
                    "line {line}: relation {from:?} -> {to:?} names an unknown entity; skipped"
                ));
            }
        }
    }
}
