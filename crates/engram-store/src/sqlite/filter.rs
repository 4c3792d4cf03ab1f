//! A recall [`Filter`] as SQL: the `AND …` conditions every candidate query of the SQLite
//! backend appends to its scan of `memories m`.

use super::memories::placeholders;
use crate::storage::candidates::Filter;
use rusqlite::types::Value;

/// `AND …` conditions on the memories alias `m`, and their parameters.
pub(crate) fn filter_sql(filter: &Filter) -> (String, Vec<Value>) {
    let mut sql = String::new();
    let mut params: Vec<Value> = Vec::new();
    sql.push_str(&format!(
        " AND m.tier IN ({})",
        placeholders(filter.tiers.len())
    ));
    params.extend(filter.tiers.iter().map(|t| Value::Text(t.as_str().into())));
    if let Some(kinds) = &filter.kinds {
        sql.push_str(&format!(" AND m.kind IN ({})", placeholders(kinds.len())));
        params.extend(kinds.iter().map(|k| Value::Text(k.as_str().into())));
    }
    if !filter.exclude_kinds.is_empty() {
        sql.push_str(&format!(
            " AND m.kind NOT IN ({})",
            placeholders(filter.exclude_kinds.len())
        ));
        params.extend(
            filter
                .exclude_kinds
                .iter()
                .map(|k| Value::Text(k.as_str().into())),
        );
    }
    if let Some(rooms) = &filter.rooms {
        sql.push_str(&format!(" AND m.room IN ({})", placeholders(rooms.len())));
        params.extend(rooms.iter().map(|r| Value::Text(r.clone())));
    }
    if let Some(at) = filter.valid_at {
        sql.push_str(" AND m.valid_from <= ? AND (m.valid_to IS NULL OR m.valid_to > ?)");
        params.extend([Value::Integer(at), Value::Integer(at)]);
    }
    if !filter.hidden.is_empty() {
        // One JSON array, however many ids: a list of placeholders could pass SQLite's
        // variable limit on a team with many private memories.
        sql.push_str(" AND m.id NOT IN (SELECT value FROM json_each(?))");
        params.push(Value::Text(
            serde_json::to_string(&filter.hidden).expect("ids serialise"),
        ));
    }
    if let Some(tag) = &filter.tag {
        // `instr` skips rows without the quoted tag cheaply; `json_each` makes it exact.
        sql.push_str(
            " AND instr(m.tags, ?) > 0 AND EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value = ?)",
        );
        params.push(Value::Text(
            serde_json::to_string(tag).expect("a tag serialises"),
        ));
        params.push(Value::Text(tag.clone()));
    }
    (sql, params)
}
