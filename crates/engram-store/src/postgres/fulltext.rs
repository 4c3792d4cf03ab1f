//! The one writer of `memory_text`: a memory's indexed words (a `tsvector` with the
//! `english` configuration: stemming and stopwords, as SQLite's Porter tokenizer) and its
//! CJK runs (plain text under a `pg_trgm` GIN index). What the rows hold is decided in
//! `engram_core::text`, exactly as for SQLite's two FTS5 tables.

use super::Db;
use crate::Result;
use engram_core::MemoryId;

/// Writes a memory's text row (replacing any earlier one).
pub(crate) fn index(
    db: &mut dyn Db,
    id: MemoryId,
    title: Option<&str>,
    content: &str,
    tags: &[String],
    context: Option<&str>,
) -> Result<()> {
    let all = engram_core::text::indexed_text(title, content, tags, context);
    let words = engram_core::text::word_index_text(&all);
    let grams = engram_core::text::gram_index_text(&all);
    if words.is_empty() && grams.is_empty() {
        db.execute("DELETE FROM memory_text WHERE memory_id = $1", &[&id])?;
        return Ok(());
    }
    db.execute(
        "INSERT INTO memory_text (memory_id, words, grams) VALUES ($1, to_tsvector('english', $2), $3)
         ON CONFLICT (memory_id) DO UPDATE SET words = excluded.words, grams = excluded.grams",
        &[&id, &words, &grams],
    )?;
    Ok(())
}
