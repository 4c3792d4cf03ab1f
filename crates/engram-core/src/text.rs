//! Text handling for search: tokens, English stopwords, CJK runs, and FTS5 query strings
//! that can never raise a syntax error.
//!
//! The store keeps two full-text indexes. The *word* index holds Latin-script words with
//! stopwords removed and is stemmed by FTS5's Porter tokenizer; the *gram* index holds CJK
//! runs under FTS5's trigram tokenizer. A query is split the same way: words go to the
//! word index, CJK runs of three or more characters to the gram index, and shorter CJK runs
//! (Japanese and Chinese words are often two characters) to a substring scan.

/// Whether `c` belongs to a script written without spaces (Han, Kana, Hangul), which the
/// word tokenizer cannot split.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x31F0..=0x31FF    // Katakana phonetic extensions
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // CJK compatibility ideographs
        | 0xFF66..=0xFF9F    // half-width Katakana
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0x1100..=0x11FF    // Hangul Jamo
        | 0x20000..=0x2FA1F  // CJK extensions B–F and supplements
        | 0x3005 | 0x3006    // 々 〆
    )
}

/// English words too common to tell memories apart. Written for engram: negations ("not",
/// "no", "never") are kept, since they change what a memory says.
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "d",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "else",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "let",
    "ll",
    "m",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "shall",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "upon",
    "us",
    "ve",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Whether a lower-cased word is an English stopword.
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// A piece of text split the way the indexes see it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Terms {
    /// Lower-cased words outside CJK runs, stopwords removed, in order, repeats kept.
    pub words: Vec<String>,
    /// Stopwords that were removed (used when a query has nothing else).
    pub stopwords: Vec<String>,
    /// Maximal runs of CJK characters, in order.
    pub cjk_runs: Vec<String>,
}

/// Splits text into words (alphanumeric runs, lower-cased) and CJK runs.
pub fn split(text: &str) -> Terms {
    let mut out = Terms::default();
    let mut word = String::new();
    let mut run = String::new();
    let flush_word = |w: &mut String, out: &mut Terms| {
        if !w.is_empty() {
            let lw = w.to_lowercase();
            if is_stopword(&lw) {
                out.stopwords.push(lw);
            } else {
                out.words.push(lw);
            }
            w.clear();
        }
    };
    for c in text.chars() {
        if is_cjk(c) {
            flush_word(&mut word, &mut out);
            run.push(c);
        } else {
            if !run.is_empty() {
                out.cjk_runs.push(std::mem::take(&mut run));
            }
            if c.is_alphanumeric() {
                word.push(c);
            } else {
                flush_word(&mut word, &mut out);
            }
        }
    }
    flush_word(&mut word, &mut out);
    if !run.is_empty() {
        out.cjk_runs.push(run);
    }
    out
}

/// Everything of a memory that lexical search sees, in one text: title, content, search
/// context and tags, a line each. Both backends index exactly this (the word and gram
/// rows are then derived by [`word_index_text`] and [`gram_index_text`]).
pub fn indexed_text(
    title: Option<&str>,
    content: &str,
    tags: &[String],
    context: Option<&str>,
) -> String {
    let mut all = String::with_capacity(content.len() + 64);
    if let Some(t) = title {
        all.push_str(t);
        all.push('\n');
    }
    all.push_str(content);
    if let Some(c) = context {
        all.push('\n');
        all.push_str(c);
    }
    for t in tags {
        all.push('\n');
        all.push_str(t);
    }
    all
}

/// The text the word index stores for a document: its words without stopwords.
pub fn word_index_text(text: &str) -> String {
    split(text).words.join(" ")
}

/// The text the gram index stores for a document: its CJK runs, or nothing.
pub fn gram_index_text(text: &str) -> String {
    split(text).cjk_runs.join(" ")
}

/// Quotes one term for FTS5: inside double quotes every character is literal text, so
/// operators (`AND`, `NEAR`, `*`, `-`, parentheses) cannot be formed. NUL characters are
/// dropped: FTS5 reads a quoted string only up to a NUL and then reports it unterminated
/// (found by the fuzz tests; no tokenizer ever produces a NUL inside a term).
pub fn fts_quote(term: &str) -> String {
    format!("\"{}\"", term.replace('\0', "").replace('"', "\"\""))
}

/// What a query asks of each index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryPlan {
    /// Distinct words for the word index (stopwords removed), in query order.
    pub words: Vec<String>,
    /// Distinct CJK trigrams for the gram index, from runs of three or more characters.
    pub grams: Vec<String>,
    /// Strings to find by substring scan: CJK runs of 1–2 characters, or, when the query
    /// has no word and no CJK run, its stopwords.
    pub substrings: Vec<String>,
}

impl QueryPlan {
    /// Whether the query holds a word that says what it is about: a non-stopword, or a CJK
    /// run. "a", "the", "to" do not, so a match on them is no match (their substring scan
    /// finds every memory).
    pub fn has_content(&self) -> bool {
        !self.words.is_empty()
            || !self.grams.is_empty()
            || self.substrings.iter().any(|s| !s.is_ascii())
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.grams.is_empty() && self.substrings.is_empty()
    }

    /// FTS5 MATCH expression for the word index: every word quoted, OR-ed (a memory need
    /// not hold every word; BM25 ranks those that hold more, and rarer, words higher).
    pub fn word_match(&self) -> Option<String> {
        or_expression(&self.words)
    }

    /// FTS5 MATCH expression for the gram index.
    pub fn gram_match(&self) -> Option<String> {
        or_expression(&self.grams)
    }
}

fn or_expression(terms: &[String]) -> Option<String> {
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| fts_quote(t))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// Most distinct terms sent to one index; longer queries keep their first terms.
/// This bounds the work one query can cause; it is documented with the other limits.
pub const MAX_QUERY_TERMS: usize = 64;

/// Most bigrams taken from one CJK run for the substring scan (each is a table scan).
pub const MAX_CJK_BIGRAMS: usize = 12;

/// Plans a user query. Any string is accepted; none can produce an FTS5 syntax error,
/// because every term reaches FTS5 quoted.
pub fn plan_query(query: &str) -> QueryPlan {
    let terms = split(query);
    let mut plan = QueryPlan::default();
    for w in terms.words {
        if !plan.words.contains(&w) && plan.words.len() < MAX_QUERY_TERMS {
            plan.words.push(w);
        }
    }
    for run in &terms.cjk_runs {
        let chars: Vec<char> = run.chars().collect();
        if chars.len() >= 3 {
            for win in chars.windows(3) {
                let g: String = win.iter().collect();
                if !plan.grams.contains(&g) && plan.grams.len() < MAX_QUERY_TERMS {
                    plan.grams.push(g);
                }
            }
            // Two-character words inside a longer run (会議 in 会議の予定) have no trigram of
            // their own in the documents that hold them: scan for the run's bigrams too.
            for win in chars.windows(2).take(MAX_CJK_BIGRAMS) {
                let b: String = win.iter().collect();
                if !plan.substrings.contains(&b) && plan.substrings.len() < MAX_QUERY_TERMS {
                    plan.substrings.push(b);
                }
            }
        } else if !plan.substrings.contains(run) && plan.substrings.len() < MAX_QUERY_TERMS {
            plan.substrings.push(run.clone());
        }
    }
    if plan.is_empty() {
        for s in terms.stopwords {
            if !plan.substrings.contains(&s) && plan.substrings.len() < 8 {
                plan.substrings.push(s);
            }
        }
    }
    plan
}

/// Escapes `%`, `_` and `\` for a SQL `LIKE … ESCAPE '\'` pattern.
pub fn like_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether a text is mostly Chinese, Japanese or Korean (a third or more of its letters).
pub fn mostly_cjk(s: &str) -> bool {
    let (mut cjk, mut other) = (0usize, 0usize);
    for c in s.chars() {
        if is_cjk(c) {
            cjk += 1;
        } else if c.is_alphanumeric() {
            other += 1;
        }
    }
    cjk > 0 && cjk * 3 >= (cjk + other)
}

/// Content normalised for exact-duplicate detection: whitespace collapsed, lower-cased.
pub fn normalize_for_dedup(content: &str) -> String {
    content
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopword_list_is_sorted_for_binary_search() {
        let mut sorted = STOPWORDS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, STOPWORDS);
        assert!(is_stopword("the"));
        assert!(!is_stopword("not"));
        assert!(!is_stopword("database"));
    }

    #[test]
    fn split_separates_words_stopwords_and_cjk() {
        let t = split("The DB is PostgreSQL; 会議の議事録 at 3pm");
        assert_eq!(t.words, vec!["db", "postgresql", "3pm"]);
        assert_eq!(t.stopwords, vec!["the", "is", "at"]);
        assert_eq!(t.cjk_runs, vec!["会議の議事録"]);
        assert_eq!(word_index_text("The cat sat"), "cat sat");
        assert_eq!(gram_index_text("hello 世界 and 数据库"), "世界 数据库");
    }

    #[test]
    fn hostile_queries_are_quoted_terms() {
        let p = plan_query(r#"foo" OR bar* NEAR(baz) -qux AND (x) 🚀"#);
        let m = p.word_match().unwrap();
        assert_eq!(m, r#""foo" OR "bar" OR "near" OR "baz" OR "qux" OR "x""#);
        let p = plan_query("\"\"\"");
        assert!(p.is_empty());
        let p = plan_query("AND OR NOT");
        // `and` and `or` are stopwords; `not` is kept and searched as a word, not an operator.
        assert_eq!(p.word_match().unwrap(), r#""not""#);
    }

    #[test]
    fn cjk_queries_use_trigrams_and_substrings() {
        let p = plan_query("会議");
        assert_eq!(p.substrings, vec!["会議"]);
        assert!(p.gram_match().is_none());
        let p = plan_query("議事録を");
        assert_eq!(p.gram_match().unwrap(), r#""議事録" OR "事録を""#);
        assert_eq!(p.substrings, vec!["議事", "事録", "録を"]);
        let p = plan_query("数据库 migration");
        assert!(p.word_match().is_some() && p.gram_match().is_some());
    }

    #[test]
    fn stopword_only_queries_fall_back_to_substrings() {
        let p = plan_query("the");
        assert_eq!(p.substrings, vec!["the"]);
    }

    #[test]
    fn like_escaping_and_dedup_normalisation() {
        assert_eq!(like_escape(r"50%_a\b"), r"50\%\_a\\b");
        assert_eq!(normalize_for_dedup("  Hello\n  World "), "hello world");
    }
}
