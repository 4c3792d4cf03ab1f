//! A write transaction seen through a viewer: its reads filtered (`reads.rs`), new
//! memories stamped with the viewer as author, and writes aimed at a hidden memory refused
//! as "not found".

use super::{Viewer, owns, private_room};
use crate::storage::rows::*;
use crate::storage::{Reads, Tx};
use crate::{Error, Result};
use engram_core::{InputError, LinkKind, Memory, MemoryId, Millis};

/// A write transaction seen through a viewer.
pub(super) struct VisibleTx<'a> {
    pub(super) tx: &'a mut dyn Tx,
    pub(super) viewer: Option<&'a Viewer>,
}

impl VisibleTx<'_> {
    pub(super) fn parts(&self) -> (&dyn Reads, Option<&Viewer>) {
        (&*self.tx, self.viewer)
    }

    pub(super) fn hidden_embedded(&self, _v: &Viewer) -> u64 {
        0
    }

    fn check(&self, id: MemoryId) -> Result<()> {
        self.viewer.map_or(Ok(()), |v| v.check_write(id))
    }

    /// A team user's new memory is theirs: written, or imported from a file that names
    /// someone else (nobody writes in another's name). Local use keeps what it is given.
    fn stamped(&self, m: &NewMemory) -> NewMemory {
        let mut m = m.clone();
        if let Some(v) = self.viewer {
            m.author = Some(v.name.clone());
        }
        m
    }
}

impl Tx for VisibleTx<'_> {
    fn insert_memory(&mut self, m: &NewMemory) -> Result<MemoryId> {
        let m = self.stamped(m);
        self.tx.insert_memory(&m)
    }
    fn patch_memory(&mut self, id: MemoryId, patch: &MemoryPatch) -> Result<bool> {
        if self.viewer.is_some_and(|v| !v.sees_id(id)) {
            return Ok(false);
        }
        self.tx.patch_memory(id, patch)
    }
    fn delete_memory(&mut self, id: MemoryId) -> Result<()> {
        self.check(id)?;
        self.tx.delete_memory(id)
    }
    fn index_text(
        &mut self,
        id: MemoryId,
        title: Option<&str>,
        content: &str,
        tags: &[String],
        context: Option<&str>,
    ) -> Result<()> {
        self.check(id)?;
        self.tx.index_text(id, title, content, tags, context)
    }
    fn set_embedding(&mut self, id: MemoryId, vector: Option<(&str, &[f32])>) -> Result<()> {
        self.check(id)?;
        self.tx.set_embedding(id, vector)
    }
    fn append_event(&mut self, e: &NewEvent<'_>) -> Result<()> {
        self.check(e.memory_id)?;
        self.tx.append_event(e)
    }
    fn upsert_link(&mut self, l: &LinkWrite) -> Result<()> {
        self.check(l.src)?;
        self.check(l.dst)?;
        self.tx.upsert_link(l)
    }
    fn add_revision(
        &mut self,
        m: &Memory,
        reason: &str,
        at: Millis,
        session_id: Option<&str>,
    ) -> Result<()> {
        self.check(m.id)?;
        self.tx.add_revision(m, reason, at, session_id)
    }
    fn add_evidence(&mut self, memory_id: MemoryId, e: &Evidence) -> Result<()> {
        self.check(memory_id)?;
        self.tx.add_evidence(memory_id, e)
    }
    fn pending_judgment(
        &mut self,
        src: MemoryId,
        dst: MemoryId,
        score: f64,
        session_id: Option<&str>,
        at: Millis,
    ) -> Result<String> {
        self.check(src)?;
        self.check(dst)?;
        self.tx.pending_judgment(src, dst, score, session_id, at)
    }
    fn record_verdict(&mut self, v: &Verdict, relation: &str, at: Millis) -> Result<bool> {
        if self.viewer.is_some() && self.judgment(&v.judgment_id)?.is_none() {
            return Ok(false);
        }
        self.tx.record_verdict(v, relation, at)
    }
    /// A team user starts sessions of their own: ending, handing off or recording the
    /// outcome of another user's session is refused (a private room's is "not found", as
    /// a missing id); a session the write creates is stamped with its owner.
    fn write_session(&mut self, w: &SessionWrite<'_>) -> Result<bool> {
        let Some(v) = self.viewer else {
            return self.tx.write_session(w);
        };
        let id = match *w {
            SessionWrite::Start { id, .. }
            | SessionWrite::End { id, .. }
            | SessionWrite::Handoff { id, .. }
            | SessionWrite::Outcome { id, .. } => id,
        };
        let existing = self.tx.session(id)?;
        if let Some(s) = &existing
            && !matches!(w, SessionWrite::Start { .. })
            && !owns(&*self.tx, v, Owned::Session(id))?
        {
            if private_room(&s.room) {
                return Err(Error::not_found("session_id", format!("session {id:?}")));
            }
            return Err(Error::Input(InputError::new(
                "session_id",
                "another user's session: only the user who started it may end it, hand it off or record its outcome",
            )));
        }
        let written = self.tx.write_session(w)?;
        if existing.is_none() && written {
            self.tx.set_owner(Owned::Session(id), &v.name)?;
        }
        Ok(written)
    }
    fn set_owner(&mut self, what: Owned<'_>, user: &str) -> Result<()> {
        self.tx.set_owner(what, user)
    }
    fn add_prompt(
        &mut self,
        session_id: Option<&str>,
        room: &str,
        content: &str,
        at: Millis,
    ) -> Result<i64> {
        let id = self.tx.add_prompt(session_id, room, content, at)?;
        if let Some(v) = self.viewer {
            self.tx.set_owner(Owned::Prompt(id), &v.name)?;
        }
        Ok(id)
    }
    /// A team user deletes only their own prompts: another's of a shared room is refused,
    /// one of a private room is "not found" (`false`, as a missing id).
    fn delete_prompt(&mut self, id: i64) -> Result<bool> {
        let Some(v) = self.viewer else {
            return self.tx.delete_prompt(id);
        };
        let Some(p) = self.tx.all_prompts()?.into_iter().find(|p| p.id == id) else {
            return Ok(false);
        };
        if !owns(&*self.tx, v, Owned::Prompt(id))? {
            if private_room(&p.room) {
                return Ok(false);
            }
            return Err(Error::Input(InputError::new(
                "id",
                "another user's prompt: only the user who saved it may delete it",
            )));
        }
        self.tx.delete_prompt(id)
    }
    fn set_meta(&mut self, key: &str, value: &str) -> Result<()> {
        self.tx.set_meta(key, value)
    }
    fn move_room(&mut self, from: &str, to: &str) -> Result<u64> {
        if self.viewer.is_some() {
            // Moving a room moves every user's memories in it, private ones included:
            // only the server's own admin (no viewer) may.
            return Err(Error::Input(engram_core::InputError::new(
                "room",
                "merging rooms moves every user's memories: run it on the server (`engram` without a team token)",
            )));
        }
        self.tx.move_room(from, to)
    }
    fn log_maintenance(
        &mut self,
        started: Millis,
        finished: Millis,
        dry_run: bool,
        report: &str,
    ) -> Result<()> {
        self.tx.log_maintenance(started, finished, dry_run, report)
    }
    fn prune_changes(&mut self, all: bool) -> Result<()> {
        self.tx.prune_changes(all)
    }
    fn insert_memory_with_id(&mut self, id: MemoryId, m: &NewMemory) -> Result<MemoryId> {
        let m = self.stamped(m);
        // An id held by a memory the viewer may not see looked free to the caller; it gets
        // a new id, as a taken id does, instead of a constraint error that would tell the
        // caller the hidden memory exists.
        if self.viewer.is_some_and(|v| !v.sees_id(id)) {
            return self.tx.insert_memory(&m);
        }
        self.tx.insert_memory_with_id(id, &m)
    }
    fn insert_rows(&mut self, rows: &[StoredRow]) -> Result<Vec<bool>> {
        let Some(v) = self.viewer else {
            return self.tx.insert_rows(rows);
        };
        if rows.iter().any(|r| !v.row_ok(r)) {
            return Err(Error::not_found("id", "named by these rows"));
        }
        // A team user's imported sessions and prompts are theirs, whatever the file says:
        // nobody imports in another's name.
        let rows: Vec<StoredRow> = rows
            .iter()
            .cloned()
            .map(|r| match r {
                StoredRow::Session(s) => StoredRow::Session(SessionRow {
                    author: Some(v.name.clone()),
                    ..s
                }),
                StoredRow::Prompt(p) => StoredRow::Prompt(PromptRow {
                    author: Some(v.name.clone()),
                    ..p
                }),
                other => other,
            })
            .collect();
        self.tx.insert_rows(&rows)
    }
    fn delete_link(&mut self, src: MemoryId, dst: MemoryId, kind: LinkKind) -> Result<bool> {
        self.check(src)?;
        self.check(dst)?;
        self.tx.delete_link(src, dst, kind)
    }
    fn write_vault_file(&mut self, w: &VaultFileWrite<'_>) -> Result<()> {
        self.tx.write_vault_file(w)
    }
    fn add_team_user(&mut self, name: &str, token_hash: &str, at: Millis) -> Result<bool> {
        self.tx.add_team_user(name, token_hash, at)
    }
    fn set_team_token(&mut self, name: &str, token_hash: Option<&str>, at: Millis) -> Result<bool> {
        self.tx.set_team_token(name, token_hash, at)
    }
}
