//! What `engram doctor` asks of a store: integrity, schema version, whether the two
//! full-text indexes match the memories, which vectors it holds, and the count of old
//! episodes the consolidation nudge watches.

use crate::Result;
use rusqlite::params;

pub use crate::storage::rows::{Health, IndexGaps, VectorSet};

/// Which index a gap count is for.
#[derive(Clone, Copy)]
enum Index {
    Words,
    Grams,
}

impl Index {
    fn table(self) -> &'static str {
        match self {
            Index::Words => "fts_words",
            Index::Grams => "fts_grams",
        }
    }

    /// Whether a memory with this text must have a row (the same functions that write
    /// the rows decide; the `context` metadata is left out, so this never claims a gap
    /// that is not there).
    fn wants_row(self, text: &str) -> bool {
        match self {
            Index::Words => !engram_core::text::word_index_text(text).is_empty(),
            Index::Grams => !engram_core::text::gram_index_text(text).is_empty(),
        }
    }
}

impl super::SqliteBackend {
    /// Reads the store's health. Costs a full scan of the file (`quick_check`).
    pub(crate) fn read_health(&self) -> Result<Health> {
        let mut problems = Vec::new();
        {
            let mut st = self.conn.prepare("PRAGMA quick_check(5)")?;
            let rows = st.query_map([], |r| r.get::<_, String>(0))?;
            for r in rows {
                problems.push(r?);
            }
        }
        let quick_check = problems.join("; ");
        let schema_version = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?;
        let count = |sql: &str| -> Result<u64> {
            Ok(self.conn.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64)
        };
        let memories = count("SELECT count(*) FROM memories")?;
        let live_memories = count("SELECT count(*) FROM memories WHERE tier != 'trash'")?;
        let exists = |name: &str| -> Result<bool> {
            Ok(self.conn.query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                params![name],
                |r| r.get::<_, i64>(0),
            )? > 0)
        };
        let fts_words = if exists("fts_words")? {
            Some(count("SELECT count(*) FROM fts_words")?)
        } else {
            None
        };
        let fts_grams = if exists("fts_grams")? {
            Some(count("SELECT count(*) FROM fts_grams")?)
        } else {
            None
        };
        let words_gaps = match fts_words {
            Some(_) => self.index_gaps(Index::Words)?,
            None => IndexGaps::default(),
        };
        let grams_gaps = match fts_grams {
            Some(_) => self.index_gaps(Index::Grams)?,
            None => IndexGaps::default(),
        };
        let mut vectors = Vec::new();
        if exists("embeddings")? {
            let mut st = self.conn.prepare(
                "SELECT model, dim, count(*) FROM embeddings GROUP BY model, dim ORDER BY count(*) DESC",
            )?;
            let rows = st.query_map([], |r| {
                Ok(VectorSet {
                    model: r.get(0)?,
                    dim: r.get::<_, i64>(1)? as usize,
                    count: r.get::<_, i64>(2)? as u64,
                })
            })?;
            for r in rows {
                vectors.push(r?);
            }
        }
        Ok(Health {
            quick_check,
            schema_version,
            memories,
            live_memories,
            fts_words,
            fts_grams,
            words_gaps,
            grams_gaps,
            vectors,
        })
    }

    /// Memories lacking a row they should have in `index`, and rows without a memory.
    /// Reads only the memories that have no row (every memory of an English store for
    /// the gram index: a scan, like `quick_check`).
    fn index_gaps(&self, index: Index) -> Result<IndexGaps> {
        let table = index.table();
        let mut st = self.conn.prepare(&format!(
            "SELECT title, content, tags FROM memories WHERE id NOT IN (SELECT rowid FROM {table})"
        ))?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut missing = 0;
        for row in rows {
            let (title, content, tags) = row?;
            let tags: Vec<String> = serde_json::from_str(&tags).unwrap_or_default();
            let mut text = title.unwrap_or_default();
            text.push('\n');
            text.push_str(&content);
            for t in tags {
                text.push('\n');
                text.push_str(&t);
            }
            if index.wants_row(&text) {
                missing += 1;
            }
        }
        let orphans = self.conn.query_row(
            &format!("SELECT count(*) FROM {table} WHERE rowid NOT IN (SELECT id FROM memories)"),
            [],
            |r| r.get::<_, i64>(0),
        )? as u64;
        Ok(IndexGaps { missing, orphans })
    }
}
