//! Evidence: what a write said when resolution folded it into another memory.
//!
//! DESIGN.md's rule is that nothing is lost. A reinforce keeps the memory's text and a
//! merge rewrites it, so the incoming write's own words, title, source and time would
//! vanish; they are kept here instead (one row per folded write), shown by
//! `show --history`, carried by export and import and listed in the vault file. Only a
//! write equal to the memory after normalisation (the exact-duplicate path) leaves none:
//! its words are the memory's words.
//!
//! `unsupersede` is here too: the other half of "a supersession is reversible".

use crate::{Result, Store};
use engram_core::{EventKind, InputError, MemoryId, Millis, Tier, memory::IdRef};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

/// One write folded into a memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// Keeps a folded write, unless the memory already says exactly that.
pub(crate) fn write(
    conn: &Connection,
    memory_id: MemoryId,
    memory_content: &str,
    e: &Evidence,
) -> Result<bool> {
    let norm = engram_core::text::normalize_for_dedup;
    if norm(memory_content) == norm(&e.content) && e.title.is_none() {
        return Ok(false);
    }
    insert(conn, memory_id, e)?;
    Ok(true)
}

/// The raw insert, shared with import.
pub(crate) fn insert(conn: &Connection, memory_id: MemoryId, e: &Evidence) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO evidence (memory_id, content, title, source, session_id, action, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        memory_id,
        e.content,
        e.title,
        e.source,
        e.session_id,
        e.action,
        e.at
    ])?;
    Ok(())
}

/// A memory's evidence, oldest first.
pub(crate) fn of(conn: &Connection, memory_id: MemoryId) -> Result<Vec<Evidence>> {
    let mut stmt = conn.prepare_cached(
        "SELECT content, title, source, session_id, action, at FROM evidence WHERE memory_id = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map([memory_id], |r| {
        Ok(Evidence {
            content: r.get(0)?,
            title: r.get(1)?,
            source: r.get(2)?,
            session_id: r.get(3)?,
            action: r.get(4)?,
            at: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// What `unsupersede` did.
#[derive(Debug, Clone, Serialize)]
pub struct Unsupersede {
    pub id: MemoryId,
    pub uid: String,
    /// The memory that had replaced it (still active; the link stays as history).
    pub superseded_by: Option<MemoryId>,
}

impl Store {
    /// Every evidence row of a memory, oldest first.
    pub fn evidence_of(&self, id: MemoryId) -> Result<Vec<Evidence>> {
        of(&self.conn, id)
    }

    /// Undoes a supersession in one step: the memory is active and valid again, the event
    /// is logged, and the `supersedes` link is kept as history (so `explain` still shows
    /// what once replaced it). Refused for a memory that is not superseded.
    pub fn unsupersede(&mut self, id: &IdRef) -> Result<Unsupersede> {
        let now = self.now();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let m = crate::store::load_in(&tx, id, "id")?;
        if m.tier != Tier::Superseded {
            return Err(InputError::new(
                "id",
                format!("#{} is {}, not superseded; nothing to undo", m.id, m.tier),
            )
            .into());
        }
        let by: Option<MemoryId> = tx
            .query_row(
                "SELECT src FROM links WHERE dst = ?1 AND kind = 'supersedes' ORDER BY created_at DESC LIMIT 1",
                [m.id],
                |r| r.get(0),
            )
            .optional()?;
        tx.execute(
            "UPDATE memories SET tier = 'active', valid_to = NULL, updated_at = ?2 WHERE id = ?1",
            params![m.id, now],
        )?;
        let detail = match by {
            Some(s) => format!("unsupersede: active again beside #{s}"),
            None => "unsupersede: active again".to_string(),
        };
        crate::store::add_event(&tx, m.id, EventKind::Update, 0.0, now, None, Some(&detail))?;
        tx.commit()?;
        Ok(Unsupersede {
            id: m.id,
            uid: m.uid,
            superseded_by: by,
        })
    }
}
