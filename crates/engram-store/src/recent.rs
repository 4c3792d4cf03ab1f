//! The most recent sessions, prompts and memories of a room, newest first: what seed C's
//! `mem_context` sections and its HTTP `…/recent` routes list, and prompt search/delete.

use crate::hub::SessionInfo;
use crate::{Result, Store};
use engram_core::{Memory, Millis, limits};

pub use crate::storage::rows::PromptInfo;

impl Store {
    /// Sessions of `room` (every room when `None`), by latest activity: the session's end,
    /// its newest memory, or its start.
    pub fn recent_sessions(&self, room: Option<&str>, limit: usize) -> Result<Vec<SessionInfo>> {
        limits::check_limit(limit)?;
        self.reads().recent_sessions(room, limit)
    }

    /// Prompts of `room` (every room when `None`), newest first.
    pub fn recent_prompts(&self, room: Option<&str>, limit: usize) -> Result<Vec<PromptInfo>> {
        limits::check_limit(limit)?;
        self.reads().prompts(room, None, limit)
    }

    /// Prompts containing `query` (case-insensitive for ASCII, as a literal substring: no
    /// character of it is a pattern), newest first.
    pub fn search_prompts(
        &self,
        query: &str,
        room: Option<&str>,
        limit: usize,
    ) -> Result<Vec<PromptInfo>> {
        limits::check_limit(limit)?;
        limits::check_len("q", query, limits::MAX_TITLE_BYTES)?;
        self.reads().prompts(room, Some(query), limit)
    }

    /// Deletes one prompt (C's `DELETE /prompts/{id}`); false when there was none.
    pub fn delete_prompt(&mut self, id: i64) -> Result<bool> {
        self.write(|tx| tx.delete_prompt(id))
    }

    /// Memories of `room` (every room when `None`) outside the trash, newest first.
    pub fn recent_memories(&self, room: Option<&str>, limit: usize) -> Result<Vec<Memory>> {
        limits::check_limit(limit)?;
        self.reads().recent_memories(room, limit)
    }

    /// Pinned active memories of `room` (every room when `None`), the most recently
    /// updated first: what seed C's context lists before its recent observations.
    pub fn pinned_memories(&self, room: Option<&str>, limit: usize) -> Result<Vec<Memory>> {
        limits::check_limit(limit)?;
        let rooms: Option<Vec<String>> = room.map(|r| vec![r.to_string()]);
        self.reads()
            .active_memories(&crate::storage::rows::ActiveQuery {
                kinds: engram_core::Kind::ALL,
                rooms: rooms.as_deref(),
                pinned_only: true,
                order: crate::storage::rows::ActiveOrder::UpdatedThenId,
                limit,
            })
    }

    /// How many memories a session holds (outside the trash).
    pub fn session_memory_count(&self, session_id: &str) -> Result<u64> {
        self.reads().session_memory_count(session_id)
    }

    /// Judgments with `status` (any when `None`) between memories of `room` (every room when
    /// `None`), newest first: C's conflict list.
    pub fn judgments(
        &self,
        room: Option<&str>,
        status: Option<&str>,
        limit: usize,
    ) -> Result<Vec<crate::maintain::Judgment>> {
        limits::check_limit(limit)?;
        self.reads().judgments_in(room, status, limit)
    }

    /// The newest session of `room` that has not ended, and the time of the room's newest
    /// memory: what seed C's save nudge is decided from.
    pub fn room_activity(&self, room: &str) -> Result<(Option<Millis>, Option<Millis>)> {
        let db = self.reads();
        Ok((db.open_session_since(room)?, db.newest_in_room(room)?))
    }

    /// Every memory outside the trash, sessions, prompts and judgments: what seed C's
    /// `GET /export` writes (C exports its live rows; soft-deleted ones stay behind).
    pub fn c_export_rows(&self) -> Result<CExport> {
        let db = self.reads();
        let memories = db.live_memories()?;
        let live: std::collections::HashSet<_> = memories.iter().map(|m| m.id).collect();
        // C's relations between live observations (one that names a trashed memory stays
        // behind with it).
        let judgments = db
            .judgments_in(None, None, 1 << 40)?
            .into_iter()
            .filter(|j| live.contains(&j.src) && live.contains(&j.dst))
            .collect();
        Ok(CExport {
            memories,
            sessions: db.all_sessions()?,
            prompts: db.all_prompts()?,
            judgments,
        })
    }
}

/// What [`Store::c_export_rows`] reads.
pub struct CExport {
    pub memories: Vec<Memory>,
    pub sessions: Vec<SessionInfo>,
    pub prompts: Vec<PromptInfo>,
    pub judgments: Vec<crate::maintain::Judgment>,
}
