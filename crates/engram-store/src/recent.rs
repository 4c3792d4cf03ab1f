//! The most recent sessions, prompts and memories of a room, newest first: what seed C's
//! `mem_context` sections and its HTTP `…/recent` routes list, and prompt search/delete.

use crate::hub::SessionInfo;
use crate::{Result, Store};
use engram_core::{Memory, Millis, limits};
use rusqlite::params;
use serde::Serialize;

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

fn prompt_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PromptInfo> {
    Ok(PromptInfo {
        id: r.get(0)?,
        session_id: r.get(1)?,
        room: r.get(2)?,
        content: r.get(3)?,
        created_at: r.get(4)?,
    })
}

impl Store {
    /// Sessions of `room` (every room when `None`), by latest activity: the session's end,
    /// its newest memory, or its start.
    pub fn recent_sessions(&self, room: Option<&str>, limit: usize) -> Result<Vec<SessionInfo>> {
        limits::check_limit(limit)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.id, s.room, s.directory, s.started_at, s.ended_at, s.summary, s.outcome
             FROM sessions s
             WHERE ?1 IS NULL OR s.room = ?1
             ORDER BY max(coalesce(s.ended_at, 0), s.started_at,
                          coalesce((SELECT max(m.created_at) FROM memories m WHERE m.session_id = s.id), 0)) DESC,
                      s.id
             LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![room, limit as i64], |r| {
            Ok(SessionInfo {
                id: r.get(0)?,
                room: r.get(1)?,
                directory: r.get(2)?,
                started_at: r.get(3)?,
                ended_at: r.get(4)?,
                summary: r.get(5)?,
                outcome: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Prompts of `room` (every room when `None`), newest first.
    pub fn recent_prompts(&self, room: Option<&str>, limit: usize) -> Result<Vec<PromptInfo>> {
        limits::check_limit(limit)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, session_id, room, content, created_at FROM prompts
             WHERE ?1 IS NULL OR room = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![room, limit as i64], prompt_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
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
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, session_id, room, content, created_at FROM prompts
             WHERE (?1 IS NULL OR room = ?1) AND instr(lower(content), lower(?2)) > 0
             ORDER BY created_at DESC, id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![room, query, limit as i64], prompt_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Deletes one prompt (C's `DELETE /prompts/{id}`); false when there was none.
    pub fn delete_prompt(&mut self, id: i64) -> Result<bool> {
        Ok(self
            .conn
            .execute("DELETE FROM prompts WHERE id = ?1", [id])?
            > 0)
    }

    /// Memories of `room` (every room when `None`) outside the trash, newest first.
    pub fn recent_memories(&self, room: Option<&str>, limit: usize) -> Result<Vec<Memory>> {
        limits::check_limit(limit)?;
        let cols = crate::store::MEMORY_COLUMNS;
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {cols} FROM memories WHERE (?1 IS NULL OR room = ?1) AND tier != 'trash'
             ORDER BY created_at DESC, id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![room, limit as i64], crate::store::row_to_memory)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many memories a session holds (outside the trash).
    pub fn session_memory_count(&self, session_id: &str) -> Result<u64> {
        let n: i64 = self.conn.query_row(
            "SELECT count(*) FROM memories WHERE session_id = ?1 AND tier != 'trash'",
            [session_id],
            |r| r.get(0),
        )?;
        Ok(n as u64)
    }
}

impl Store {
    /// Judgments with `status` (any when `None`) between memories of `room` (every room when
    /// `None`), newest first: C's conflict list.
    pub fn judgments(
        &self,
        room: Option<&str>,
        status: Option<&str>,
        limit: usize,
    ) -> Result<Vec<crate::maintain::Judgment>> {
        limits::check_limit(limit)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT j.uid, j.src, j.dst, j.relation, j.status, j.score, j.reason, j.evidence, j.confidence,
                    j.actor, j.actor_kind, j.model, j.session_id
             FROM judgments j JOIN memories m ON m.id = j.src
             WHERE (?1 IS NULL OR m.room = ?1) AND (?2 IS NULL OR j.status = ?2)
             ORDER BY j.updated_at DESC, j.id DESC LIMIT ?3",
        )?;
        let rows = stmt.query_map(
            params![room, status, limit as i64],
            crate::maintain::row_to_judgment,
        )?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

impl Store {
    /// The newest session of `room` that has not ended, and the time of the room's newest
    /// memory: what seed C's save nudge is decided from.
    pub fn room_activity(&self, room: &str) -> Result<(Option<Millis>, Option<Millis>)> {
        let started: Option<Millis> = self.conn.query_row(
            "SELECT max(started_at) FROM sessions WHERE room = ?1 AND ended_at IS NULL",
            [room],
            |r| r.get(0),
        )?;
        let last: Option<Millis> = self.conn.query_row(
            "SELECT max(created_at) FROM memories WHERE room = ?1",
            [room],
            |r| r.get(0),
        )?;
        Ok((started, last))
    }
}

impl Store {
    /// Every memory outside the trash, sessions and prompts, oldest first: what seed C's
    /// `GET /export` writes (C exports its live rows; soft-deleted ones stay behind).
    pub fn c_export_rows(&self) -> Result<(Vec<Memory>, Vec<SessionInfo>, Vec<PromptInfo>)> {
        let cols = crate::store::MEMORY_COLUMNS;
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {cols} FROM memories WHERE tier != 'trash' ORDER BY id"
        ))?;
        let memories = stmt
            .query_map([], crate::store::row_to_memory)?
            .collect::<rusqlite::Result<_>>()?;
        let mut stmt = self.conn.prepare(
            "SELECT id, room, directory, started_at, ended_at, summary, outcome FROM sessions ORDER BY started_at, id",
        )?;
        let sessions = stmt
            .query_map([], |r| {
                Ok(SessionInfo {
                    id: r.get(0)?,
                    room: r.get(1)?,
                    directory: r.get(2)?,
                    started_at: r.get(3)?,
                    ended_at: r.get(4)?,
                    summary: r.get(5)?,
                    outcome: r.get(6)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut stmt = self
            .conn
            .prepare("SELECT id, session_id, room, content, created_at FROM prompts ORDER BY id")?;
        let prompts = stmt
            .query_map([], prompt_row)?
            .collect::<rusqlite::Result<_>>()?;
        Ok((memories, sessions, prompts))
    }
}
