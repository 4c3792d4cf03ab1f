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
    /// The team user writing it ([`engram_core::Memory::author`]).
    pub author: Option<String>,
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

/// A session or a prompt: the rows a team user owns besides memories (issue 18). The
/// visibility layer reads and stamps their owner; the engine never sees it.
#[derive(Debug, Clone, Copy)]
pub enum Owned<'a> {
    Session(&'a str),
    Prompt(i64),
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
    /// When the relation was found, and when its verdict (or last change) was written.
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    #[serde(with = "engram_core::time::rfc3339")]
    pub updated_at: Millis,
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

// --- whole tables, in pages: export, import, the vault's full sync ---

/// One event of a memory's log, as exported and imported.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct EventRow {
    pub kind: String,
    pub weight: f64,
    #[serde(with = "engram_core::time::rfc3339")]
    pub at: Millis,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub detail: Option<String>,
}

/// A previous text of a memory, as exported and imported.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct RevisionRow {
    pub content: String,
    #[serde(default)]
    pub title: Option<String>,
    pub kind: String,
    pub importance: f64,
    #[serde(default)]
    pub tags: Vec<String>,
    pub reason: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub at: Millis,
    #[serde(default)]
    pub session_id: Option<String>,
}

/// A link between two memories. `M` is how a memory is named: by uid in a file
/// (`LinkRow`, the default), by id at the storage boundary (`LinkRow<MemoryId>`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct LinkRow<M = String> {
    pub src: M,
    pub dst: M,
    pub kind: LinkKind,
    pub weight: f64,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    #[serde(with = "engram_core::time::rfc3339")]
    pub updated_at: Millis,
    #[serde(default)]
    pub note: Option<String>,
}

/// A whole `sessions` row.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SessionRow {
    pub id: String,
    pub room: String,
    #[serde(default)]
    pub directory: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(with = "engram_core::time::rfc3339")]
    pub started_at: Millis,
    #[serde(default, with = "engram_core::time::rfc3339_opt")]
    pub ended_at: Option<Millis>,
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub outcome: Option<String>,
    #[serde(default, with = "engram_core::time::rfc3339_opt")]
    pub outcome_at: Option<Millis>,
    /// The team user who started it (`None`: local use, or from before authors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

/// A whole `prompts` row but its id (prompts have no uid: one with the same session,
/// time and text is the same prompt).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PromptRow {
    #[serde(default)]
    pub session_id: Option<String>,
    pub room: String,
    pub content: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    /// The team user who sent it (`None`: local use, or from before authors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

/// A whole `judgments` row; `M` names memories as in [`LinkRow`].
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct JudgmentRow<M = String> {
    pub uid: String,
    pub src: M,
    pub dst: M,
    #[serde(default)]
    pub relation: Option<String>,
    pub status: String,
    #[serde(default)]
    pub score: Option<f64>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub actor: Option<String>,
    #[serde(default)]
    pub actor_kind: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    #[serde(with = "engram_core::time::rfc3339")]
    pub updated_at: Millis,
}

/// A table read whole, page by page ([`crate::storage::Reads::rows_after`]), in the
/// export's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// By id.
    Memories,
    /// By memory, then id (so are evidence and events).
    Revisions,
    Evidence,
    Events,
    /// By source, destination, kind.
    Links,
    /// By start, then id.
    Sessions,
    /// By id (so are judgments).
    Prompts,
    Judgments,
}

/// Where a page of [`Section`] rows ended: the next page starts after it. Plain data, so
/// any backend turns it into a keyset condition (no offsets: a page costs the same at the
/// end of a large table as at its start).
#[derive(Debug, Clone, PartialEq)]
pub enum RowKey {
    /// The last row's id (memories, prompts, judgments).
    Id(i64),
    /// The last memory whose rows were all returned (revisions, evidence, events: a page
    /// holds whole memories, so it may run past the limit for a memory with many rows).
    Memory(engram_core::MemoryId),
    /// The last link: source, destination, kind.
    Link(engram_core::MemoryId, engram_core::MemoryId, String),
    /// The last session: its start and id.
    Session(Millis, String),
}

/// One row of a [`Section`], or one row to insert with [`crate::storage::Tx::insert_rows`].
#[derive(Debug, Clone, PartialEq)]
pub enum StoredRow {
    Memory {
        memory: engram_core::Memory,
        review_after: Option<Millis>,
    },
    Revision {
        memory_id: engram_core::MemoryId,
        row: RevisionRow,
    },
    Evidence {
        memory_id: engram_core::MemoryId,
        row: Evidence,
    },
    Event {
        memory_id: engram_core::MemoryId,
        row: EventRow,
    },
    Link(LinkRow<engram_core::MemoryId>),
    Session(SessionRow),
    Prompt(PromptRow),
    Judgment(JudgmentRow<engram_core::MemoryId>),
}

/// A page of rows and where the next one starts (`None`: the section is done).
#[derive(Debug, Clone, Default)]
pub struct RowPage {
    pub rows: Vec<StoredRow>,
    pub next: Option<RowKey>,
}

// --- the change log and the vault's file records ---

/// One entry of the change log that feeds the vault: a memory's row or its outgoing links
/// changed. `uid` is known when the memory row itself changed (so a purged memory's file
/// can still be found).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub seq: i64,
    pub memory_id: engram_core::MemoryId,
    pub uid: Option<String>,
}

/// What engram last wrote or read at a vault path (`vault_files`).
#[derive(Debug, Clone, PartialEq)]
pub struct VaultFile {
    /// Relative to the vault's folder, with `/`.
    pub path: String,
    pub uid: String,
    /// sha256 of the bytes, hex; empty when the file is marked to be written again.
    pub hash: String,
    pub size: i64,
    /// Modification time in nanoseconds.
    pub mtime: i64,
}

/// A write to the vault's file records; one statement each.
#[derive(Debug, Clone, Copy)]
pub enum VaultFileWrite<'a> {
    /// Inserts or replaces the record of `file.path`.
    Record(&'a VaultFile),
    /// Marks a path as holding `uid` with no hash, so the next sync writes the file again;
    /// an existing record keeps its hash, size and time and takes the uid.
    MarkForRewrite { path: &'a str, uid: &'a str },
    /// Drops the record of a path.
    Forget { path: &'a str },
    /// Drops every record (the vault moved).
    ForgetAll,
}

// --- health ---

/// A store's health, as read (nothing is repaired here). What `doctor` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Health {
    /// `ok`, or the first problems the backend's integrity check reports (SQLite's
    /// `PRAGMA quick_check`).
    pub quick_check: String,
    pub schema_version: i64,
    /// Rows in `memories` (every tier: the indexes hold every memory).
    pub memories: u64,
    /// Memories outside the trash.
    pub live_memories: u64,
    /// Rows in the word and trigram full-text indexes, `None` when a table is missing
    /// (or the backend indexes text inside the memory rows, as PostgreSQL does).
    pub fts_words: Option<u64>,
    pub fts_grams: Option<u64>,
    /// What each index lacks or holds in excess. A memory has a gram row only when its
    /// text has a CJK run (and a word row only when it has a word), so the row counts
    /// alone cannot say whether an index is whole: an English store has no gram rows.
    pub words_gaps: IndexGaps,
    pub grams_gaps: IndexGaps,
    /// Vectors held, by model and dimension.
    pub vectors: Vec<VectorSet>,
}

/// One full-text index measured against the memories.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IndexGaps {
    /// Memories whose title, text or tags hold something for this index but that have no row.
    pub missing: u64,
    /// Rows whose memory no longer exists.
    pub orphans: u64,
}

/// Vectors of one model and dimension.
#[derive(Debug, Clone, Serialize)]
pub struct VectorSet {
    pub model: String,
    pub dim: usize,
    pub count: u64,
}

/// The model whose vectors a backend searches: the loaded encoder's id and dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorModel<'a> {
    pub model: &'a str,
    pub dim: usize,
}

// --- team users ---

/// A team server's user as listed (`engram team user list`): never the token's hash.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TeamUser {
    pub name: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub created_at: Millis,
    /// Whether the user holds a token that authenticates (`false` after a revoke).
    pub active: bool,
    /// When the current token was issued, or the last one revoked.
    #[serde(with = "engram_core::time::rfc3339")]
    pub token_changed_at: Millis,
}
