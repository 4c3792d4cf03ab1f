//! The store's wire format: the plain request and result structs every surface
//! serialises (the MCP tools, the HTTP APIs, the CLI's `--json`), gathered in one place.
//!
//! These are the API, on purpose: a surface serialises these types (adding a profile's
//! own keys beside them, never re-ranking or re-filtering), not the store's internals.
//! Each is plain data with `serde` derives; the fields' doc comments are their
//! documentation. The types live next to the operation that makes them (`ops.rs`,
//! `recall.rs`, `hub.rs`, …) and are re-exported here, so this module is the list.
//!
//! [`API_VERSION`] versions their serialised form together.

/// The version of the serialised form of the structs re-exported here. **Bump on a
/// breaking change of these structs' serialised form** (a field removed, renamed or given
/// another type or meaning; an enum word changed); adding a field is not breaking. The
/// MCP server reports it as `api_version` in the `stats` tool's result.
pub const API_VERSION: u32 = 1;

// Writes and their outcomes.
pub use crate::ops::{
    CorrectOutcome, LinkOutcome, MemoryUpdate, PurgeOutcome, ReinforceOutcome, RememberAction,
    RememberOutcome, RememberRequest, TierChange,
};
// Reads.
pub use crate::ops::{MemoryDetail, Stats};
pub use crate::recall::{Hit, Match, Mode, RecallRequest, RecallResult, Via};
// The engineering hub, sessions and the `context` briefing.
pub use crate::hub::{
    BriefItem, Briefing, ContextRequest, EngineeringStats, FailureRequest, FeatureState,
    HandoffRequest, HandoffView, ImportanceChange, Origin, Outcome, ProgressRequest,
    SessionOutcome, StepStatus,
};
// Maintenance, judgments and the web UI's reads.
pub use crate::browse::{Curve, DayCount, Edge, Graph, ListRequest, Listed, Node, Order};
pub use crate::maintain::{Archival, Cluster, Consolidation, MaintenanceReport};
pub use crate::resolution::ConflictCandidate;
// Rows as the operations return them (the storage boundary's plain rows).
pub use crate::storage::rows::{
    EventView, Evidence, Health, IndexGaps, Judgment, LinkView, PromptInfo, ReviewItem, Revision,
    RoomInfo, SessionInfo, VectorSet, Verdict,
};
// Files beside the database.
pub use crate::embedding::EmbeddingStatus;
pub use crate::files::transfer::{ExportReport, ImportReport};
pub use crate::files::vault::{ReindexReport, SyncReport, VaultStatus, VaultWarning};
