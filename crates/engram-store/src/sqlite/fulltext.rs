//! The one writer of the two FTS5 tables (`fts_words`, `fts_grams`): a memory's indexed
//! text, rebuilt whenever its title, content, tags or search context change. What the
//! rows hold is decided in `engram_core::text`; the lexical candidate source reads them.

use crate::Result;
use engram_core::MemoryId;
use rusqlite::{Connection, params};

/// Writes both full-text rows of a memory (replacing any earlier ones).
pub(crate) fn index(
    conn: &Connection,
    id: MemoryId,
    title: Option<&str>,
    content: &str,
    tags: &[String],
    context: Option<&str>,
) -> Result<()> {
    let all = engram_core::text::indexed_text(title, content, tags, context);
    remove(conn, id)?;
    let words = engram_core::text::word_index_text(&all);
    if !words.is_empty() {
        conn.prepare_cached("INSERT INTO fts_words (rowid, body) VALUES (?1, ?2)")?
            .execute(params![id, words])?;
    }
    let grams = engram_core::text::gram_index_text(&all);
    if !grams.is_empty() {
        conn.prepare_cached("INSERT INTO fts_grams (rowid, body) VALUES (?1, ?2)")?
            .execute(params![id, grams])?;
    }
    Ok(())
}

/// Drops a memory's full-text rows.
pub(crate) fn remove(conn: &Connection, id: MemoryId) -> Result<()> {
    conn.prepare_cached("DELETE FROM fts_words WHERE rowid = ?1")?
        .execute([id])?;
    conn.prepare_cached("DELETE FROM fts_grams WHERE rowid = ?1")?
        .execute([id])?;
    Ok(())
}
