//! Sessions (C's start/end/summary, A's outcome) and the prompts they saw.

use crate::hub::{ImportanceChange, Origin, Outcome, RoomInfo, SessionInfo, SessionOutcome};
use crate::storage::rows::{MemoryPatch, NewEvent, SessionWrite};
use crate::{Error, Result, Store};
use engram_core::redact::stored_name;
use engram_core::{EventKind, InputError, Kind, MemoryId, limits};
use serde_json::json;

impl Store {
    /// Starts (or re-opens) a session in a room.
    pub fn session_start(
        &mut self,
        id: &str,
        origin: &Origin,
        directory: Option<&str>,
    ) -> Result<SessionInfo> {
        limits::check_name("session_id", id)?;
        // Names are stored redacted, as every write path stores them (`redact_names`).
        let id = &*stored_name(id);
        let given_room = origin.room.as_deref().map(stored_name);
        let (room, _) =
            crate::rooms::resolve(&self.config, given_room.as_deref(), origin.cwd.as_deref())?;
        let now = self.now();
        let source = origin.source.as_deref().map(stored_name);
        let source = source.as_deref();
        // A path can hold a secret too (`/srv/deploy-ghp_…`): stored as every text is.
        let directory = directory.map(|d| engram_core::redact::redact(d).0);
        self.write(|tx| {
            tx.write_session(&SessionWrite::Start {
                id,
                room: &room,
                directory: directory.as_deref(),
                source,
                at: now,
            })
        })?;
        self.session(id)?
            .ok_or_else(|| Error::not_found("session_id", id))
    }

    /// Ends a session, keeping its summary.
    pub fn session_end(&mut self, id: &str, summary: Option<&str>) -> Result<SessionInfo> {
        limits::check_name("session_id", id)?;
        let id = &*stored_name(id);
        if let Some(s) = summary {
            limits::check_len("summary", s, limits::MAX_CONTENT_BYTES)?;
        }
        let summary = summary.map(|s| engram_core::redact::redact(s).0);
        let now = self.now();
        let found = self.write(|tx| {
            tx.write_session(&SessionWrite::End {
                id,
                summary: summary.as_deref(),
                at: now,
            })
        })?;
        if !found {
            return Err(Error::not_found("session_id", format!("session {id:?}")));
        }
        self.session(id)?
            .ok_or_else(|| Error::not_found("session_id", id))
    }

    pub fn session(&self, id: &str) -> Result<Option<SessionInfo>> {
        self.reads().session(&stored_name(id))
    }

    /// Seed A's session outcome: every memory recalled in the session gains 0.10 importance
    /// on success, or loses 0.05 on failure (0.05 more when it was recalled in two or more
    /// failed sessions). A failure with notes is stored as a lesson. Recorded once per session.
    pub fn session_outcome(
        &mut self,
        session_id: &str,
        outcome: Outcome,
        notes: Option<&str>,
        origin: &Origin,
    ) -> Result<SessionOutcome> {
        limits::check_name("session_id", session_id)?;
        let session_id = &*stored_name(session_id);
        if let Some(n) = notes {
            limits::check_len("notes", n, limits::MAX_CONTENT_BYTES / 2)?;
        }
        let now = self.now();
        let label = if outcome == Outcome::Success {
            "success"
        } else {
            "failure"
        };
        let config = self.config.clone();
        let adjusted = self.write(|tx| {
            if let Some(Some(prev)) = tx.session_outcome(session_id)? {
                return Err(InputError::new(
                    "session_id",
                    format!("session {session_id:?} already has outcome {prev}"),
                )
                .into());
            }
            let mut adjusted = Vec::new();
            for (id, from) in tx.recalled_in_session(session_id)? {
                let delta = match outcome {
                    Outcome::Success => 0.10,
                    Outcome::Failure => {
                        let failed = tx.failed_sessions_recalling(id)?;
                        // This session counts as the newest failure.
                        if failed + 1 >= 2 { -0.10 } else { -0.05 }
                    }
                };
                let to: f64 = (from + delta).clamp(0.0, 1.0);
                if (to - from).abs() > 1e-12 {
                    adjust_importance(tx, id, from, to, now, session_id, label)?;
                    adjusted.push(ImportanceChange { id, from, to });
                }
            }
            let room =
                crate::rooms::resolve(&config, origin.room.as_deref(), origin.cwd.as_deref())?.0;
            tx.write_session(&SessionWrite::Outcome {
                id: session_id,
                room: &room,
                outcome: label,
                at: now,
            })?;
            Ok(adjusted)
        })?;
        let lesson_id = match (outcome, notes.filter(|n| !n.trim().is_empty())) {
            (Outcome::Failure, Some(n)) => Some(
                self.remember_hub(
                    format!("Session failure lesson ({session_id}): {}", n.trim()),
                    Kind::Failure,
                    0.7,
                    json!({"type": "session_failure", "session_id": session_id}),
                    origin,
                )?
                .id,
            ),
            _ => None,
        };
        Ok(SessionOutcome {
            session_id: session_id.to_string(),
            outcome,
            adjusted,
            lesson_id,
        })
    }

    /// Records a prompt the user sent in a session (seed C's `mem_save_prompt`).
    pub fn save_prompt(
        &mut self,
        content: &str,
        session_id: Option<&str>,
        origin: &Origin,
    ) -> Result<i64> {
        limits::check_content("content", content)?;
        if let Some(s) = session_id {
            limits::check_name("session_id", s)?;
        }
        let session_id = session_id.map(stored_name);
        let session_id = session_id.as_deref();
        let given_room = origin.room.as_deref().map(stored_name);
        let (room, _) =
            crate::rooms::resolve(&self.config, given_room.as_deref(), origin.cwd.as_deref())?;
        let now = self.now();
        let content = engram_core::redact::redact(content).0;
        self.write(|tx| tx.add_prompt(session_id, &room, &content, now))
    }

    /// Every room with its counts of memories (outside the trash), sessions and prompts.
    pub fn rooms(&self) -> Result<Vec<RoomInfo>> {
        self.reads().rooms()
    }
}

/// A session outcome's importance change, logged on the memory.
fn adjust_importance(
    tx: &mut dyn crate::storage::Tx,
    id: MemoryId,
    from: f64,
    to: f64,
    now: engram_core::Millis,
    session_id: &str,
    label: &str,
) -> Result<()> {
    tx.patch_memory(
        id,
        &MemoryPatch {
            importance: Some(to),
            ..MemoryPatch::touch(now)
        },
    )?;
    tx.append_event(&NewEvent {
        memory_id: id,
        kind: EventKind::Update,
        weight: 0.0,
        at: now,
        session_id: Some(session_id),
        detail: Some(&format!(
            "session outcome {label}: importance {from:.2} -> {to:.2}"
        )),
    })
}
