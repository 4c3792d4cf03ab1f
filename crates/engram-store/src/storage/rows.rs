//! The plain data that crosses the storage boundary: what the engine asks a backend to
//! write and what it reads back. No backend's types appear here (no rusqlite rows, no
//! SQL fragments): a query's shape is an enum or a struct, and each backend turns it into
//! its own statement.

use engram_core::{EventKind, Kind, LinkKind, Millis, Tier};
use serde::Serialize;

/// A memory row to insert. The backend assigns the id and derives what is derived from
/// the content (its dedup hash, which the engine never sees).
#[derive(Debug, Clone)]
pub struct NewMemory {
    pub uid: String,
    pub content: String,
    pub title: Option<String>,
    pub kind: Kind,
    pub importance: f64,
    pub tags: Vec<String>,
    pub room: String,
    pub topic_key: Option<String>,
    pub pinned: bool,
    pub tier: Tier,
    pub created_at: Millis,
    pub updated_at: Millis,
    pub valid_from: Millis,
    pub valid_to: Option<Millis>,
    pub source: String,
    pub session_id: Option<String>,
    pub metadata: serde_json::Value,
    /// C's review date (decisions and preferences); not part of [`engram_core::Memory`].
    pub review_after: Option<Millis>,
}

/// Columns of one memory to change; `None` keeps a column as it is (so `Some(None)` clears
/// an optional one). A new `content` also renews the content hash.
#[derive(Debug, Clone, Default)]
pub struct MemoryPatch {
    pub content: Option<String>,
    pub title: Option<Option<String>>,
    pub kind: Option<Kind>,
    pub importance: Option<f64>,
    pub tags: Option<Vec<String>>,
    pub room: Option<String>,
    pub topic_key: Option<Option<String>>,
    pub pinned: Option<bool>,
    pub tier: Option<Tier>,
    /// Rewritten only by the vault's read-back of a hand-edited file.
    pub created_at: Option<Millis>,
    pub valid_from: Option<Millis>,
    pub source: Option<String>,
    pub updated_at: Option<Millis>,
    pub valid_to: Option<Option<Millis>>,
    pub session_id: Option<Option<String>>,
    pub metadata: Option<serde_json::Value>,
    pub review_after: Option<Option<Millis>>,
    /// Write only if the memory is in this tier now (a compare-and-set inside the
    /// transaction: maintenance archives only what is still active).
    pub if_tier: Option<Tier>,
}

impl MemoryPatch {
    /// A patch that sets `updated_at` only (a reinforce that keeps the text).
    pub fn touch(at: Millis) -> MemoryPatch {
        MemoryPatch {
            updated_at: Some(at),
            ..Default::default()
        }
    }

    /// A move to `tier`, dated `at`.
    pub fn tier(tier: Tier, at: Millis) -> MemoryPatch {
        MemoryPatch {
            tier: Some(tier),
            updated_at: Some(at),
            ..Default::default()
        }
    }

    /// Superseded at `at`: the memory stopped being true then.
    pub fn superseded(at: Millis) -> MemoryPatch {
        MemoryPatch {
            tier: Some(Tier::Superseded),
            valid_to: Some(Some(at)),
            updated_at: Some(at),
            ..Default::default()
        }
    }
}

/// One event to append to a memory's log.
#[derive(Debug, Clone, Copy)]
pub struct NewEvent<'a> {
    pub memory_id: engram_core::MemoryId,
    pub kind: EventKind,
    pub weight: f64,
    pub at: Millis,
    pub session_id: Option<&'a str>,
    pub detail: Option<&'a str>,
}

/// How an existing link's weight changes on an upsert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkWeight {
    /// Replaced by the new weight.
    Set,
    /// Grown by the new weight (Hebbian co-recall).
    Add,
}

/// A link to insert or update; the weight never exceeds `cap`.
#[derive(Debug, Clone, Copy)]
pub struct LinkWrite {
    pub src: engram_core::MemoryId,
    pub dst: engram_core::MemoryId,
    pub kind: LinkKind,
    pub weight: f64,
    pub mode: LinkWeight,
    pub cap: f64,
    pub at: Millis,
}

impl LinkWrite {
    /// A link set to `weight` (capped at 1).
    pub fn set(
        src: engram_core::MemoryId,
        dst: engram_core::MemoryId,
        kind: LinkKind,
        weight: f64,
        at: Millis,
    ) -> LinkWrite {
        LinkWrite {
            src,
            dst,
            kind,
            weight,
            mode: LinkWeight::Set,
            cap: 1.0,
            at,
        }
    }
}

/// One link as `show` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct LinkView {
    pub src: engram_core::MemoryId,
    pub dst: engram_core::MemoryId,
    pub kind: LinkKind,
    pub weight: f64,
}

/// One event as `show` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct EventView {
    pub kind: String,
    pub weight: f64,
    #[serde(with = "engram_core::time::rfc3339")]
    pub at: Millis,
    pub session_id: Option<String>,
    pub detail: Option<String>,
}

/// A memory's text before one change.
#[derive(Debug, Clone, Serialize)]
pub struct Revision {
    /// 1 = the first text the memory had.
    pub number: u64,
    pub content: String,
    pub title: Option<String>,
    pub kind: String,
    pub importance: f64,
    /// What replaced it: `topic_update`, `merge`, `update`, `consolidate`, `vault_edit`.
    pub reason: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub at: Millis,
    pub session_id: Option<String>,
}

/// How an event's detail is matched (the newest matching event wins).
#[derive(Debug, Clone, Copy)]
pub enum DetailMatch<'a> {
    /// The detail starts with this text (ASCII case aside).
    Prefix(&'a str),
    /// The detail contains this text (ASCII case aside).
    Contains(&'a str),
}

/// Which side of a memory, in id order, a timeline reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Older memories, nearest first.
    Before,
    /// Newer memories, nearest first.
    After,
}

/// Which memories a browsing list reads (the web UI's list and graph), newest first.
#[derive(Debug, Clone, Copy)]
pub struct ListQuery<'a> {
    pub kinds: &'a [Kind],
    /// Empty: every tier but the trash.
    pub tiers: &'a [Tier],
    pub room: Option<&'a str>,
    pub limit: usize,
}

/// What [`crate::storage::Reads::daily_counts`] counts per UTC day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Daily {
    /// Memories by their creation day.
    Created,
    /// Recall-hit events by their day.
    RecallHits,
}

/// Counts over a whole table, grouped by one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tally {
    MemoriesByTier,
    MemoriesByKind,
    MemoriesByRoom,
    LinksByKind,
    EventsByKind,
}

/// The order of an [`ActiveQuery`]'s results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveOrder {
    /// Oldest id first.
    Id,
    /// Newest id first.
    IdDesc,
    /// Most recently updated first (ties in no particular order).
    Updated,
    /// Most recently updated first, then newest id.
    UpdatedThenId,
    /// Most important first, then newest id.
    ImportanceThenId,
    /// Most important first, then most recently updated.
    ImportanceThenUpdated,
}

/// Active memories of some kinds, in some rooms (all when `None`), at most `limit`.
#[derive(Debug, Clone)]
pub struct ActiveQuery<'a> {
    pub kinds: &'a [Kind],
    pub rooms: Option<&'a [String]>,
    /// Only pinned memories.
    pub pinned_only: bool,
    pub order: ActiveOrder,
    pub limit: usize,
}

/// A write to the `sessions` table; each variant is one statement of the session
/// lifecycle, so a backend never sees a half-described row.
#[derive(Debug, Clone, Copy)]
pub enum SessionWrite<'a> {
    /// Starts a session; an existing one is left as it is.
    Start {
        id: &'a str,
        room: &'a str,
        directory: Option<&'a str>,
        source: Option<&'a str>,
        at: Millis,
    },
    /// Ends an existing session, keeping the summary when given.
    End {
        id: &'a str,
        summary: Option<&'a str>,
        at: Millis,
    },
    /// A handoff ends the session (if not ended yet) and sets its summary; creates it if
    /// unknown.
    Handoff {
        id: &'a str,
        room: &'a str,
        summary: &'a str,
        at: Millis,
    },
    /// Records the session's outcome; creates it if unknown.
    Outcome {
        id: &'a str,
        room: &'a str,
        outcome: &'a str,
        at: Millis,
    },
}

/// One write folded into a memory (reinforce, merge): its own words, title, source and
/// time.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Evidence {
    pub content: String,
    #[serde(default)]
    pub title: Option<String>,
    pub source: String,
    #[serde(default)]
    pub session_id: Option<String>,
    /// What resolution did with the write: `reinforce` or `merge`.
    pub action: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub at: Millis,
}

/// A session row.
#[derive(Debug, Clone, Serialize)]
pub struct SessionInfo {
    pub id: String,
    pub room: String,
    pub directory: Option<String>,
    #[serde(with = "engram_core::time::rfc3339")]
    pub started_at: Millis,
    #[serde(with = "engram_core::time::rfc3339_opt")]
    pub ended_at: Option<Millis>,
    pub summary: Option<String>,
    pub outcome: Option<String>,
}

/// A room and how much it holds, for seed C's `mem_list_projects`.
#[derive(Debug, Clone, Serialize)]
pub struct RoomInfo {
    pub name: String,
    pub memories: u64,
    pub sessions: u64,
    pub prompts: u64,
}

/// A judgment row (C's memory relation).
#[derive(Debug, Clone, Serialize)]
pub struct Judgment {
    pub judgment_id: String,
    pub src: engram_core::MemoryId,
    pub dst: engram_core::MemoryId,
    pub relation: Option<String>,
    pub status: String,
    pub score: Option<f64>,
    pub reason: Option<String>,
    pub evidence: Option<String>,
    pub confidence: Option<f64>,
    pub actor: Option<String>,
    pub actor_kind: Option<String>,
    pub model: Option<String>,
    pub session_id: Option<String>,
}

/// A verdict on two related memories.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    pub judgment_id: String,
    pub relation: String,
    pub reason: Option<String>,
    pub evidence: Option<String>,
    pub confidence: Option<f64>,
    pub session_id: Option<String>,
    pub actor: Option<String>,
    pub actor_kind: Option<String>,
    pub model: Option<String>,
}

/// A memory due for review.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewItem {
    pub id: engram_core::MemoryId,
    pub title: Option<String>,
    pub kind: Kind,
    pub room: String,
    pub excerpt: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub review_after: Millis,
}

/// One prompt a user sent (C's `user_prompts` row).
#[derive(Debug, Clone, Serialize)]
pub struct PromptInfo {
    pub id: i64,
    pub session_id: Option<String>,
    pub room: String,
    pub content: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
}
