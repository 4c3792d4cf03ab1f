//! Property-based fuzzing (proptest, runs on stable) of what turns user text into SQL:
//! SQLite by nature (FTS5's syntax and the SQLite file), so it opens SQLite directly.
//!
//! - the FTS query planner: every string becomes MATCH expressions that FTS5 accepts, run
//!   for real against both full-text tables of an in-memory database;
//! - the engine: any query string recalls without an error, any content is stored whole or
//!   refused with an input error, never a database error or a panic.
//!
//! Cases per property: `ENGRAM_FUZZ_CASES` (default 256). Long run:
//!
//! ```sh
//! ENGRAM_FUZZ_CASES=100000 cargo test -p engram-store --release --test fuzz
//! ```

use engram_core::text::{fts_quote, plan_query};
use engram_store::{RecallRequest, RememberRequest, Store};
use proptest::prelude::*;
use rusqlite::Connection;
use std::cell::RefCell;

fn cases() -> u32 {
    std::env::var("ENGRAM_FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(256)
}

/// Strings that are mostly FTS5's syntax: operators, quotes, column filters, prefixes,
/// parentheses, CJK, control characters, mixed with plain words.
fn hostile_text() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "\"",
        "\"\"",
        "'",
        "*",
        "^",
        "NEAR",
        "NEAR(",
        "AND",
        "OR",
        "NOT",
        "(",
        ")",
        ":",
        "body:",
        "-",
        "+",
        "{",
        "}",
        "[",
        "]",
        ",",
        "\\",
        "\0",
        "\u{1}",
        "\n",
        "\t",
        " ",
        "  ",
        "a",
        "ab",
        "abc",
        "the",
        "of",
        "記憶",
        "会議の予定",
        "한국어",
        "é",
        "e\u{301}",
        "🧠",
        "\u{202e}",
        "\u{feff}",
        "\u{fffd}",
        "%",
        "_",
        "NULL",
        "rowid",
        "MATCH",
        "1",
        "0x",
        "ﬁ",
        "ß",
    ]);
    prop_oneof![
        prop::collection::vec(atoms, 0..24).prop_map(|v| v.concat()),
        any::<String>(),
        prop::collection::vec(any::<char>(), 0..64).prop_map(|v| v.into_iter().collect()),
    ]
}

fn fts_db() -> Connection {
    let c = Connection::open_in_memory().unwrap();
    c.execute_batch(
        "CREATE VIRTUAL TABLE fts_words USING fts5 (body, tokenize = 'porter unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE fts_grams USING fts5 (body, tokenize = 'trigram case_sensitive 0 remove_diacritics 1');
         INSERT INTO fts_words (body) VALUES ('the quick brown fox'), ('記憶 会議の予定 NEAR body');
         INSERT INTO fts_grams (body) VALUES ('the quick brown fox'), ('記憶 会議の予定 NEAR body');",
    )
    .unwrap();
    c
}

fn run_match(c: &Connection, table: &str, expr: &str) -> Result<usize, String> {
    let sql = format!("SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ?1");
    let mut st = c.prepare(&sql).map_err(|e| e.to_string())?;
    let rows = st
        .query_map([expr], |r| r.get::<_, i64>(0))
        .map_err(|e| e.to_string())?;
    let mut n = 0;
    for r in rows {
        r.map_err(|e| e.to_string())?;
        n += 1;
    }
    Ok(n)
}

thread_local! {
    static FTS: Connection = fts_db();
    static STORE: RefCell<(tempfile::TempDir, Store)> = {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("engram.db"), engram_core::Config::default()).unwrap();
        RefCell::new((dir, store))
    };
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_planned_query_is_valid_fts5(q in hostile_text()) {
        let plan = plan_query(&q);
        FTS.with(|c| {
            if let Some(e) = plan.word_match() {
                prop_assert!(run_match(c, "fts_words", &e).is_ok(), "word index rejected {e:?} from {q:?}: {:?}", run_match(c, "fts_words", &e));
            }
            if let Some(e) = plan.gram_match() {
                prop_assert!(run_match(c, "fts_grams", &e).is_ok(), "gram index rejected {e:?} from {q:?}: {:?}", run_match(c, "fts_grams", &e));
            }
            Ok(())
        })?;
    }

    #[test]
    fn any_quoted_term_is_valid_fts5(t in hostile_text()) {
        // fts_quote alone (what plan_query builds on) must hold for any term at all.
        prop_assume!(!t.is_empty());
        let e = fts_quote(&t);
        FTS.with(|c| {
            for table in ["fts_words", "fts_grams"] {
                let r = run_match(c, table, &e);
                prop_assert!(r.is_ok(), "{table} rejected {e:?}: {r:?}");
            }
            Ok(())
        })?;
    }

    #[test]
    fn the_engine_stores_and_recalls_any_text(content in hostile_text(), query in hostile_text()) {
        STORE.with(|s| {
            let store = &mut s.borrow_mut().1;
            match store.remember(RememberRequest {
                content: content.clone(),
                room: Some("fuzz".into()),
                ..Default::default()
            }) {
                Ok(o) if o.action == engram_store::RememberAction::Created => {
                    let m = store.get(&engram_core::memory::IdRef::Id(o.id)).unwrap();
                    prop_assert_eq!(m.content, content, "content is stored whole");
                }
                Ok(_) => {}
                Err(e) => prop_assert!(e.is_caller_error(), "remember {content:?}: {e}"),
            }
            let mut req = RecallRequest::new(query.clone());
            req.room = Some("fuzz".into());
            for mode in [engram_store::Mode::Fast, engram_store::Mode::Exhaustive] {
                req.mode = mode;
                match store.recall(&req) {
                    Ok(r) => prop_assert!(r.hits.len() <= req.limit),
                    Err(e) => prop_assert!(e.is_caller_error(), "recall {query:?}: {e}"),
                }
            }
            Ok(())
        })?;
    }
}
