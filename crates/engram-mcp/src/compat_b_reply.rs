//! Seed B's reply vocabulary for the `compat-b` profile: B named every memory by its ULID
//! and its tiers `hot`, `cold`, `superseded`, `trash`. engram's tools answer with integer
//! ids and `active`/`archived`; this rewrites a reply's memory ids to uids and its tier
//! names to B's, so a B agent (or a script written against B) reads what it always read.
//! Input is unchanged: every tool takes an integer id or a ULID.

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
}
