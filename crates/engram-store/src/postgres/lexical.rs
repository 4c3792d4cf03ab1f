//! The lexical candidate source on PostgreSQL: the word channel (a `tsvector` match ranked
//! by `ts_rank_cd`), the gram channel (CJK trigrams found in the CJK runs through the
//! `pg_trgm` index) and the substring channel (`ILIKE` for CJK words of one or two
//! characters, stopword-only queries and exhaustive recall's partial words).
//!
//! Each channel yields a relevance in `[0, 1]` and a memory found by several gets their
//! noisy-or `1 − Π(1 − r)`, as in `sqlite/lexical.rs`. The word channel's relevance is
//! `1 − e^{−rank / RANK_SCALE}` (`ts_rank_cd` is 0.1 per occurrence of a term, unbounded
//! above); the gram and substring channels weigh each string by its rarity
//! (`like_relevance`, as SQLite's substring scan does) and average over the strings.

use super::Db;
use super::filter::{Args, filter_sql};
use crate::Result;
use crate::storage::candidates::Filter;
use engram_core::MemoryId;
use engram_core::scoring::{Candidates, like_relevance, sort_desc};
use engram_core::text::{QueryPlan, like_escape};
use std::collections::HashMap;

/// `ts_rank_cd` of one occurrence of one query term (weight D): relevance ≈ 0.63.
const RANK_SCALE: f64 = 0.1;

/// `to_tsquery` of many words, OR-ed; each word is a bound value, so no query text can
/// form an operator.
fn words_query(words: &[String], args: &mut Args) -> String {
    words
        .iter()
        .map(|w| format!("plainto_tsquery('english', {})", args.push(w.clone())))
        .collect::<Vec<_>>()
        .join(" || ")
}

fn contains(s: &str) -> String {
    format!("%{}%", like_escape(s))
}

pub(crate) fn lexical_candidates(
    db: &mut dyn Db,
    plan: &QueryPlan,
    filter: &Filter,
    k: usize,
    extra_substrings: &[String],
) -> Result<Candidates> {
    let mut channels: Vec<HashMap<MemoryId, f64>> = Vec::new();
    if !plan.words.is_empty() {
        channels.push(word_channel(db, &plan.words, filter, k)?);
    }
    if !plan.grams.is_empty() {
        channels.push(scan_channel(db, &plan.grams, Scan::Grams, filter)?);
    }
    let mut subs: Vec<String> = plan.substrings.clone();
    for s in extra_substrings {
        if !subs.contains(s) {
            subs.push(s.clone());
        }
    }
    if !subs.is_empty() {
        channels.push(scan_channel(db, &subs, Scan::Text, filter)?);
    }
    let mut fused: HashMap<MemoryId, f64> = HashMap::new();
    for ch in channels {
        for (id, r) in ch {
            let e = fused.entry(id).or_insert(0.0);
            *e = 1.0 - (1.0 - *e) * (1.0 - r.clamp(0.0, 1.0));
        }
    }
    let mut out: Candidates = fused.into_iter().collect();
    sort_desc(&mut out);
    out.truncate(k);
    Ok(out)
}

fn word_channel(
    db: &mut dyn Db,
    words: &[String],
    filter: &Filter,
    k: usize,
) -> Result<HashMap<MemoryId, f64>> {
    let mut args = Args::default();
    let q = words_query(words, &mut args);
    let f = filter_sql(filter, &mut args);
    let limit = args.push(k as i64);
    let sql = format!(
        "SELECT m.id, ts_rank_cd(t.words, q.q)::float8 AS s
         FROM memory_text t JOIN memories m ON m.id = t.memory_id, (SELECT {q} AS q) q
         WHERE t.words @@ q.q{f} ORDER BY s DESC, m.id LIMIT {limit}"
    );
    Ok(db
        .query(&sql, &args.refs())?
        .iter()
        .map(|r| {
            let rank: f64 = r.get(1);
            (r.get(0), 1.0 - (-rank / RANK_SCALE).exp())
        })
        .collect())
}

/// Where a scan channel looks.
#[derive(Clone, Copy)]
enum Scan {
    /// The CJK runs (trigram-indexed).
    Grams,
    /// The content and title, as SQLite's `LIKE` scan.
    Text,
}

fn scan_channel(
    db: &mut dyn Db,
    strings: &[String],
    scan: Scan,
    filter: &Filter,
) -> Result<HashMap<MemoryId, f64>> {
    let mut args = Args::default();
    let f = filter_sql(filter, &mut args);
    let total = super::count(
        db,
        &format!("SELECT count(*) FROM memories m WHERE true{f}"),
        &args.refs(),
    )?;
    let mut out: HashMap<MemoryId, f64> = HashMap::new();
    for s in strings {
        let mut args = Args::default();
        let f = filter_sql(filter, &mut args);
        let p = args.push(contains(s));
        let sql = match scan {
            Scan::Grams => format!(
                "SELECT m.id FROM memory_text t JOIN memories m ON m.id = t.memory_id
                 WHERE t.grams LIKE {p}{f}"
            ),
            Scan::Text => format!(
                "SELECT m.id FROM memories m
                 WHERE (m.content ILIKE {p} OR coalesce(m.title, '') ILIKE {p}){f}"
            ),
        };
        let ids: Vec<MemoryId> = db
            .query(&sql, &args.refs())?
            .iter()
            .map(|r| r.get(0))
            .collect();
        let rel = like_relevance(total as usize, ids.len()) / strings.len() as f64;
        for id in ids {
            *out.entry(id).or_insert(0.0) += rel;
        }
    }
    Ok(out)
}

/// The share of the query's terms each of `ids` holds, in `[0, 1]`; with `partial`, a word
/// also counts inside a longer word. One statement per term over the whole id list.
pub(crate) fn coverage(
    db: &mut dyn Db,
    plan: &QueryPlan,
    ids: &[MemoryId],
    partial: bool,
) -> Result<HashMap<MemoryId, f64>> {
    let terms = plan.words.len() + plan.grams.len() + plan.substrings.len();
    if ids.is_empty() || terms == 0 {
        return Ok(HashMap::new());
    }
    // $1 the ids, $2 the word (for `@@`), $3 its `ILIKE` pattern.
    let word = "t.words @@ plainto_tsquery('english', $2)";
    let text = "(m.content ILIKE $3 OR coalesce(m.title, '') ILIKE $3)";
    let grams = "t.grams LIKE $3";
    let partial_word = format!("({word} OR {text})");
    let mut asks: Vec<(&str, &String)> = Vec::with_capacity(terms);
    for w in &plan.words {
        asks.push((if partial { &partial_word } else { word }, w));
    }
    asks.extend(plan.grams.iter().map(|g| (grams, g)));
    asks.extend(plan.substrings.iter().map(|s| (text, s)));
    let ids = ids.to_vec();
    let mut got: HashMap<MemoryId, usize> = HashMap::new();
    for (cond, term) in asks {
        let sql = format!(
            "SELECT m.id FROM memories m LEFT JOIN memory_text t ON t.memory_id = m.id
             WHERE m.id = ANY($1) AND $2::text IS NOT NULL AND $3::text IS NOT NULL AND {cond}"
        );
        for r in db.query(&sql, &[&ids, term, &contains(term)])? {
            *got.entry(r.get(0)).or_insert(0) += 1;
        }
    }
    Ok(got
        .into_iter()
        .map(|(id, n)| (id, (n as f64 / terms as f64).min(1.0)))
        .collect())
}
