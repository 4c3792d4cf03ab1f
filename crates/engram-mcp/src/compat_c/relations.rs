//! C's marks on a search hit: its `state` (`needs_review` once its review date has passed
//! or while a judgment on it is pending) and its relation lines (`supersedes: #id
//! (title)`, `superseded_by: …`, `conflicts: …`, `conflict: contested by #<sync_id>
//! (pending)`), formatted from what the engine records; nothing is re-ranked or dropped.

use super::{sync_id_of, title_of};
use engram_core::memory::IdRef;
use engram_core::{Memory, MemoryId, Tier};
use serde_json::{Value, json};

/// A hit's C state and relation lines.
pub(super) struct Marks {
    pub state: &'static str,
    pub review_after: Option<i64>,
    pub lines: Vec<String>,
}

/// `#id (title)`, or `#id (deleted)` when the memory is gone or in the trash.
fn other(store: &engram_store::Store, id: MemoryId) -> (String, Option<Memory>) {
    match store.get(&IdRef::Id(id)) {
        Ok(m) if m.tier != Tier::Trash => (format!("#{id} ({})", title_of(&m)), Some(m)),
        _ => (format!("#{id} (deleted)"), None),
    }
}

pub(super) fn marks(
    store: &engram_store::Store,
    m: &Memory,
    superseded_by: Option<MemoryId>,
) -> Marks {
    let review_after = store.review_after(m.id).ok().flatten();
    let mut pending = false;
    let mut lines = Vec::new();
    let mut successor_named = false;
    for j in store.judgments_of(m.id).unwrap_or_default() {
        let (is_src, peer) = if j.src == m.id {
            (true, j.dst)
        } else {
            (false, j.src)
        };
        if j.status == "pending" {
            pending = true;
            if !is_src {
                let (_, peer_m) = other(store, peer);
                let name = peer_m.map(|p| sync_id_of(&p)).unwrap_or("deleted".into());
                lines.push(format!("conflict: contested by #{name} (pending)"));
            }
            continue;
        }
        let (label, _) = other(store, peer);
        match (j.relation.as_deref(), is_src) {
            (Some("supersedes"), true) => lines.push(format!("supersedes: {label}")),
            (Some("supersedes"), false) => {
                successor_named = true;
                lines.push(format!("superseded_by: {label}"));
            }
            (Some("conflicts_with"), _) => lines.push(format!("conflicts: {label}")),
            _ => {}
        }
    }
    if let Some(next) = superseded_by.filter(|_| !successor_named) {
        lines.push(format!("superseded_by: {}", other(store, next).0));
    }
    let due = review_after.is_some_and(|at| at <= store.now());
    Marks {
        state: if due || pending {
            "needs_review"
        } else {
            "active"
        },
        review_after,
        lines,
    }
}

/// One judgment as C's `memory_relations` row (`mem_judge`, `mem_compare`, `GET
/// /conflicts`, `GET /export`): its sync id, the two observations' sync ids (`source_id`,
/// `target_id`), the verdict and its `marked_by_*` provenance under C's names, `relation`
/// `pending` until judged as C wrote it; the memories' integer ids, engram's earlier
/// `status` key and its closeness (`score`) beside.
pub(crate) fn relation_json(
    store: &engram_store::Store,
    j: &engram_store::maintain::Judgment,
) -> Value {
    let sync = |id: MemoryId| {
        store
            .get(&IdRef::Id(id))
            .map(|m| sync_id_of(&m))
            .unwrap_or_default()
    };
    let time = engram_core::time::format;
    json!({
        "sync_id": j.judgment_id,
        "source_id": sync(j.src),
        "target_id": sync(j.dst),
        "source_observation_id": j.src,
        "target_observation_id": j.dst,
        "relation": j.relation.as_deref().unwrap_or("pending"),
        "reason": j.reason,
        "evidence": j.evidence,
        "confidence": j.confidence,
        "judgment_status": j.status,
        // engram's earlier key, which its own clients read.
        "status": j.status,
        "marked_by_actor": j.actor,
        "marked_by_kind": j.actor_kind,
        "marked_by_model": j.model,
        "session_id": j.session_id,
        "created_at": time(j.created_at),
        "updated_at": time(j.updated_at),
        "superseded_at": Value::Null,
        "superseded_by_relation_id": Value::Null,
        "score": j.score,
    })
}
