//! Seed B's reply vocabulary for the `compat-b` profile: B named every memory by its ULID
//! and its tiers `hot`, `cold`, `superseded`, `trash`. engram's tools answer with integer
//! ids and `active`/`archived`; this rewrites a reply's memory ids to uids and its tier
//! names to B's, so a B agent (or a script written against B) reads what it always read.
//! Input is unchanged: every tool takes an integer id or a ULID. `tools/list` shows B's
//! argument names too ([`rename_arguments`]), which the tools accept as aliases.

use engram_core::memory::IdRef;
use engram_store::Store;
use serde_json::Value;

/// Keys whose integer value is a memory id in a B reply.
const ID_KEYS: &[&str] = &["id", "new_id", "old_id", "src", "dst", "new_memory_id"];
/// Keys whose value is a list of memory ids.
const ID_LIST_KEYS: &[&str] = &["reinforced", "consolidated", "ids", "touched", "parts"];

/// engram's tier name as B spelled it.
fn b_tier(t: &str) -> &str {
    match t {
        "active" => "hot",
        "archived" => "cold",
        other => other,
    }
}

/// Rewrites `v` in place (see the module doc). An id that names no memory is left as it
/// was.
pub fn rewrite(v: &mut Value, store: &Store) {
    let uid = |n: i64| store.get(&IdRef::Id(n)).ok().map(|m| m.uid);
    walk(v, &uid);
}

fn walk(v: &mut Value, uid: &dyn Fn(i64) -> Option<String>) {
    match v {
        Value::Array(items) => items.iter_mut().for_each(|i| walk(i, uid)),
        Value::Object(o) => {
            for (k, val) in o.iter_mut() {
                match (k.as_str(), &mut *val) {
                    (k, Value::Number(n)) if ID_KEYS.contains(&k) => {
                        if let Some(u) = n.as_i64().and_then(uid) {
                            *val = Value::String(u);
                        }
                    }
                    (k, Value::Array(ids)) if ID_LIST_KEYS.contains(&k) => {
                        for i in ids.iter_mut() {
                            if let Some(u) = i.as_i64().and_then(uid) {
                                *i = Value::String(u);
                            } else {
                                walk(i, uid);
                            }
                        }
                    }
                    ("tier", Value::String(t)) => *t = b_tier(t).to_string(),
                    ("by_tier", Value::Object(tiers)) => {
                        let renamed = std::mem::take(tiers)
                            .into_iter()
                            .map(|(t, n)| (b_tier(&t).to_string(), n))
                            .collect();
                        *tiers = renamed;
                    }
                    _ => walk(val, uid),
                }
            }
        }
        _ => {}
    }
}

/// engram's argument name and B's, per tool: what a B agent reads in `tools/list` is what
/// B's own server listed (`type`, `corrected_content`). The tools take both names.
const B_ARGUMENTS: &[(&str, &str, &str)] = &[
    ("remember", "kind", "type"),
    ("recall", "kind", "type"),
    ("correct", "content", "corrected_content"),
];

/// Renames `tool`'s properties (and their `required` entries) in its input `schema` to
/// B's names.
pub fn rename_arguments(tool: &str, schema: &mut Value) {
    for (_, ours, theirs) in B_ARGUMENTS.iter().filter(|(t, _, _)| *t == tool) {
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut)
            && let Some(p) = props.remove(*ours)
        {
            props.insert(theirs.to_string(), p);
        }
        if let Some(req) = schema.get_mut("required").and_then(Value::as_array_mut) {
            for r in req.iter_mut().filter(|r| r.as_str() == Some(ours)) {
                *r = Value::String(theirs.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_become_uids_and_tiers_take_bs_names() {
        let uid = |n: i64| (n == 7).then(|| "01HZX3K5Q8M2N4P6R8T0V2W4Y6".to_string());
        let mut v = json!({
            "hits": [{"id": 7, "tier": "active", "score": 0.5}, {"id": 9, "tier": "archived"}],
            "reinforced": [7], "by_tier": {"active": 3, "archived": 1, "trash": 2},
            "clusters": [{"ids": [7, 8], "contents": ["a", "b"]}],
        });
        walk(&mut v, &uid);
        assert_eq!(v["hits"][0]["id"], "01HZX3K5Q8M2N4P6R8T0V2W4Y6");
        assert_eq!(v["hits"][0]["tier"], "hot");
        assert_eq!(v["hits"][1]["id"], 9, "an unknown id stays");
        assert_eq!(v["hits"][1]["tier"], "cold");
        assert_eq!(v["reinforced"][0], "01HZX3K5Q8M2N4P6R8T0V2W4Y6");
        assert_eq!(v["clusters"][0]["ids"][0], "01HZX3K5Q8M2N4P6R8T0V2W4Y6");
        assert_eq!(v["by_tier"], json!({"hot": 3, "cold": 1, "trash": 2}));
        assert_eq!(v["hits"][0]["score"], 0.5);
    }

    #[test]
    fn schemas_carry_bs_argument_names() {
        let mut correct = json!({
            "properties": {"id": {}, "content": {"type": "string"}, "reason": {}},
            "required": ["id", "content", "reason"],
        });
        rename_arguments("correct", &mut correct);
        assert!(correct["properties"].get("content").is_none());
        assert_eq!(correct["properties"]["corrected_content"]["type"], "string");
        assert_eq!(
            correct["required"],
            json!(["id", "corrected_content", "reason"])
        );
        let mut forget = json!({"properties": {"id": {}}, "required": ["id"]});
        rename_arguments("forget", &mut forget);
        assert_eq!(
            forget,
            json!({"properties": {"id": {}}, "required": ["id"]})
        );
    }
}
