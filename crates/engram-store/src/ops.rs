//! The operations that change or describe memories: reinforce, correct, forget, restore,
//! purge, link, pin, show, stats (`remember` is in `engine/remember.rs`). Each runs in one
//! `IMMEDIATE` transaction, checks its input before writing anything, and says what it did.

use crate::Result;
use engram_core::limits;
use engram_core::memory::IdRef;
use engram_core::{InputError, Kind, LinkKind, Memory, MemoryId, Millis, Tier};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What to remember. Only `content` is required.
#[derive(Debug, Clone, Default)]
pub struct RememberRequest {
    pub content: String,
    pub title: Option<String>,
    pub kind: Option<Kind>,
    /// 0–1; the configured default when absent.
    pub importance: Option<f64>,
    pub tags: Vec<String>,
    /// Explicit room; else resolved from `cwd`; else `common`.
    pub room: Option<String>,
    /// The caller's working directory, for room resolution.
    pub cwd: Option<PathBuf>,
    pub topic_key: Option<String>,
    pub pinned: bool,
    /// Which client or hook wrote it; `unknown` when absent.
    pub source: Option<String>,
    pub session_id: Option<String>,
    /// A JSON object; `{}` when absent.
    pub metadata: Option<serde_json::Value>,
    /// Memories this one relates to: each gets an `explicit` link from the new memory.
    pub related: Vec<IdRef>,
    /// Words that describe the memory's surroundings (the conversation turn before it, the
    /// task it came from): searched with the memory but not part of its content. Kept in
    /// `metadata.context`.
    pub context: Option<String>,
    /// When the memory happened, for imports and replays (default: now). Its create event
    /// is dated then, so activation reflects its real age.
    pub created_at: Option<Millis>,
    /// Resolve against similar memories (default: the `resolve` setting). Exact repeats
    /// and topic keys apply either way.
    pub resolve: Option<bool>,
    /// May resolution retire a memory this write contradicts (default yes)? `false` leaves
    /// the conflict pending as a judgment with the old memory as a candidate (seed C's
    /// protocol: the agent judges with `mem_judge`).
    pub supersede: Option<bool>,
    /// May resolution merge this write into a similar memory (default yes)? `false`
    /// creates it beside that memory, linked and offered as a candidate (seed B's
    /// protocol: duplicates reinforce, everything else is a new memory).
    pub merge: Option<bool>,
    /// Seed C's dedupe key: the same content folds into a memory only when its title and
    /// kind match too (C's `mem_save`: the same text saved under another title is another
    /// observation). Near copies under another title are created beside, linked and
    /// offered for judgment.
    pub fold_only_same_title: bool,
}

/// Fields to change in [`Store::update`]; `None` keeps the current value.
#[derive(Debug, Clone, Default)]
pub struct MemoryUpdate {
    pub content: Option<String>,
    pub title: Option<String>,
    pub importance: Option<f64>,
    pub kind: Option<Kind>,
    pub topic_key: Option<String>,
}

/// What `remember` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RememberAction {
    /// A new memory was stored.
    Created,
    /// The same or nearly the same content already lived in the room; it was reinforced.
    Reinforced,
    /// A close memory took the new information; its prior text is kept as a revision.
    Merged,
    /// A new memory was stored and replaced the memories it contradicts (`touched`).
    Superseded,
    /// The memory with the same `topic_key` took the new text (prior text as a revision).
    Updated,
}

#[derive(Debug, Clone, Serialize)]
pub struct RememberOutcome {
    pub action: RememberAction,
    /// The memory the content landed on.
    pub id: MemoryId,
    pub uid: String,
    pub room: String,
    /// Other memories the write touched: linked to explicitly, or superseded.
    pub touched: Vec<MemoryId>,
    /// A capture over the content limit stored in parts (`Store::remember_capture`): the
    /// later parts, in order (`id` is the first).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<MemoryId>,
    /// Related memories (at most 3) the agent may judge against this one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<crate::resolution::ConflictCandidate>,
    /// Why the superseded memories were replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<engram_core::contradiction::Conflict>,
    /// After a merge or topic update: the memory's revision number (1 = never revised).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// Secrets removed before storing, by rule.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<engram_core::redact::Redaction>,
    /// What resolution read against the nearest memory and why the action followed
    /// (absent when nothing was compared: exact repeats, topic keys, resolution off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReinforceOutcome {
    pub reinforced: Vec<MemoryId>,
    /// The event weight each received.
    pub weight: f64,
    /// Co-recall links strengthened, as `[a, b]` pairs.
    pub co_recall_links: Vec<[MemoryId; 2]>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CorrectOutcome {
    pub new_id: MemoryId,
    pub old_id: MemoryId,
    pub status: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct TierChange {
    pub id: MemoryId,
    pub from: Tier,
    pub to: Tier,
}

#[derive(Debug, Clone, Serialize)]
pub struct PurgeOutcome {
    pub id: MemoryId,
    pub uid: String,
    pub events_removed: usize,
    pub links_removed: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkOutcome {
    pub src: MemoryId,
    pub dst: MemoryId,
    pub kind: LinkKind,
    pub weight: f64,
}

pub use crate::storage::rows::{EventView, LinkView};

/// Everything known about one memory.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryDetail {
    pub memory: Memory,
    /// Activation now, under the configured dynamics.
    pub activation: f64,
    pub event_counts: BTreeMap<String, u64>,
    /// The newest events, newest first (at most 50).
    pub recent_events: Vec<EventView>,
    pub links: Vec<LinkView>,
    /// The memory that replaced this one, if it was superseded or corrected.
    pub superseded_by: Option<MemoryId>,
    /// Seed A's strength now (what maintenance archives by).
    pub strength: f64,
    /// Why the memory sits in its tier, in words.
    pub tier_reason: String,
    /// C's review date, for decisions and preferences.
    #[serde(with = "engram_core::time::rfc3339_opt")]
    pub review_after: Option<Millis>,
    /// Earlier texts, oldest first (topic updates, merges, edits, consolidations).
    pub revisions: Vec<Revision>,
    /// Verdicts, pending or judged, on this memory and related ones.
    pub judgments: Vec<crate::maintain::Judgment>,
    /// Writes folded into this memory (reinforce, merge), each with its own words, title,
    /// source and time, oldest first.
    pub evidence: Vec<crate::evidence::Evidence>,
}

pub use crate::storage::rows::Revision;

#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// Memories in every tier (B's name).
    pub total_memories: u64,
    pub by_kind: BTreeMap<String, u64>,
    pub by_tier: BTreeMap<String, u64>,
    pub by_room: BTreeMap<String, u64>,
    pub links_by_kind: BTreeMap<String, u64>,
    pub event_count: u64,
    pub events_by_kind: BTreeMap<String, u64>,
    pub schema_version: i64,
    /// `lexical`, or `hybrid` when an embedding model is loaded.
    pub search: &'static str,
    /// The model and how many memories it has embedded.
    pub embeddings: crate::embedding::EmbeddingStatus,
    pub dynamics: engram_core::dynamics::DynamicsModel,
    pub db_path: String,
    pub db_bytes: u64,
}

/// The text a memory's vector is computed from: its title, then its content.
pub(crate) fn embed_text(title: Option<&str>, content: &str) -> String {
    match title {
        Some(t) if !t.trim().is_empty() => format!("{t}\n{content}"),
        _ => content.to_string(),
    }
}

/// C's review dates: decisions are due for review after six months, preferences after
/// three; other kinds never.
pub(crate) fn review_after(kind: Kind, from: Millis) -> Option<Millis> {
    const MONTH: Millis = 2_629_746_000; // 30.436875 days
    match kind {
        Kind::Decision => Some(from + 6 * MONTH),
        Kind::Preference => Some(from + 3 * MONTH),
        _ => None,
    }
}

pub(crate) fn check_optional_name(
    field: &'static str,
    v: &Option<String>,
) -> Result<(), InputError> {
    match v {
        Some(s) => limits::check_name(field, s),
        None => Ok(()),
    }
}

/// 80 random bits for a ULID, from the standard library's per-process random hasher keys
/// mixed with a counter: unique enough without another dependency.
/// 64 random bits (judgment ids).
pub(crate) fn random_u64() -> u64 {
    rand_bits() as u64
}

pub(crate) fn rand_bits() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut a = std::collections::hash_map::RandomState::new().build_hasher();
    a.write_u64(n);
    let mut b = std::collections::hash_map::RandomState::new().build_hasher();
    b.write_u64(n ^ 0x9e37_79b9_7f4a_7c15);
    ((u128::from(a.finish()) << 64) | u128::from(b.finish())) & ((1u128 << 80) - 1)
}
