//! The lexical candidate source: FTS5 over words (Porter-stemmed, stopwords removed) and
//! CJK trigrams, plus a substring scan for what those indexes cannot see (CJK words of one
//! or two characters, stopword-only queries, and partial words in exhaustive recall).
//!
//! Each channel yields a relevance in `[0, 1]`; a memory found by several channels gets
//! their noisy-or, `1 − Π(1 − r)`. Recall fuses it with the vector source in
//! `engram_core::ranking`; both reach recall through [`crate::storage::candidates`].

use super::filter::filter_sql;
use super::memories::placeholders;
use crate::Result;
use crate::storage::candidates::Filter;
use engram_core::MemoryId;
use engram_core::scoring::{Candidates, like_relevance, sort_desc};
use engram_core::text::{QueryPlan, like_escape};
use rusqlite::Connection;
use rusqlite::types::Value;
use std::collections::{HashMap, HashSet};

/// Ids per coverage query: far below SQLite's limit on bound variables.
const COVERAGE_CHUNK: usize = 400;
/// A term's row list is read whole for coverage up to this many rows (about a millisecond);
/// past it, candidates are checked one by one.
const TERM_ROWS_MAX: usize = 8_000;

/// Lexical candidates for `plan`: `(id, relevance)`, best first, at most `k`.
/// `extra_substrings` are scanned for as well (exhaustive recall passes the query's words).
pub(crate) fn lexical_candidates(
    conn: &Connection,
    bm25_scale: f64,
    plan: &QueryPlan,
    filter: &Filter,
    k: usize,
    extra_substrings: &[String],
) -> Result<Candidates> {
    let mut channels: Vec<HashMap<MemoryId, f64>> = Vec::new();
    let scale = bm25_scale;
    if let Some(m) = plan.word_match() {
        channels.push(fts_channel(conn, "fts_words", &m, filter, k, scale)?);
    }
    if let Some(m) = plan.gram_match() {
        channels.push(fts_channel(conn, "fts_grams", &m, filter, k, scale)?);
    }
    let mut subs: Vec<String> = plan.substrings.clone();
    for s in extra_substrings {
        if !subs.contains(s) {
            subs.push(s.clone());
        }
    }
    if !subs.is_empty() {
        channels.push(substring_channel(conn, &subs, filter)?);
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

/// The share of the query's terms each memory holds, in `[0, 1]`: an absolute measure
/// (BM25 is relative to the corpus and tiny in a small store) used to decide whether a
/// result is weak enough to look harder. With `partial`, a word also counts when it
/// appears inside a longer word (exhaustive recall).
pub(crate) fn coverage(
    conn: &Connection,
    plan: &QueryPlan,
    ids: &[MemoryId],
    partial: bool,
) -> Result<HashMap<MemoryId, f64>> {
    let terms = plan.words.len() + plan.grams.len() + plan.substrings.len();
    if ids.is_empty() || terms == 0 {
        return Ok(HashMap::new());
    }
    if ids.len() > COVERAGE_CHUNK {
        let mut out = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(COVERAGE_CHUNK) {
            out.extend(coverage(conn, plan, chunk, partial)?);
        }
        return Ok(out);
    }
    let ph = placeholders(ids.len());
    let ids_sql = format!("m.id IN ({ph})");
    let contains = "(m.content LIKE ? ESCAPE '\\' OR ifnull(m.title, '') LIKE ? ESCAPE '\\')";
    let word_sql =
        "EXISTS (SELECT 1 FROM fts_words WHERE fts_words MATCH ? AND fts_words.rowid = m.id)";
    let gram_sql =
        "EXISTS (SELECT 1 FROM fts_grams WHERE fts_grams MATCH ? AND fts_grams.rowid = m.id)";
    let mut got: HashMap<MemoryId, usize> = HashMap::new();
    let mut run = |cond: &str, params: Vec<Value>| -> Result<()> {
        let sql = format!("SELECT m.id FROM memories m WHERE {ids_sql} AND {cond}");
        let mut all: Vec<Value> = ids.iter().map(|i| Value::Integer(*i)).collect();
        all.extend(params);
        let mut stmt = conn.prepare_cached(&sql)?;
        for id in stmt.query_map(rusqlite::params_from_iter(all), |r| r.get::<_, i64>(0))? {
            *got.entry(id?).or_insert(0) += 1;
        }
        Ok(())
    };
    let like = |s: &str| Value::Text(format!("%{}%", like_escape(s)));
    let wanted: HashSet<MemoryId> = ids.iter().copied().collect();
    let mut listed: HashMap<MemoryId, usize> = HashMap::new();
    for w in &plan.words {
        let q = Value::Text(engram_core::text::fts_quote(w));
        if partial {
            run(
                &format!("({word_sql} OR {contains})"),
                vec![q, like(w), like(w)],
            )?;
        } else if !term_rows(conn, "fts_words", w, &wanted, &mut listed)? {
            run(word_sql, vec![q])?;
        }
    }
    for g in &plan.grams {
        if !term_rows(conn, "fts_grams", g, &wanted, &mut listed)? {
            run(gram_sql, vec![Value::Text(engram_core::text::fts_quote(g))])?;
        }
    }
    for sub in &plan.substrings {
        run(contains, vec![like(sub), like(sub)])?;
    }
    for (id, n) in listed {
        *got.entry(id).or_insert(0) += n;
    }
    Ok(got
        .into_iter()
        .map(|(id, n)| (id, (n as f64 / terms as f64).min(1.0)))
        .collect())
}

/// Counts `term` for each of `wanted` whose row holds it, by reading the term's whole
/// row list once — when it is short (a term in at most [`TERM_ROWS_MAX`] memories).
/// Returns false, counting nothing, for a commoner term: the caller then asks per
/// candidate (one FTS lookup each, which costs more than reading a short list).
fn term_rows(
    conn: &Connection,
    table: &str,
    term: &str,
    wanted: &HashSet<MemoryId>,
    got: &mut HashMap<MemoryId, usize>,
) -> Result<bool> {
    let sql = format!(
        "SELECT rowid FROM {table} WHERE {table} MATCH ?1 LIMIT {}",
        TERM_ROWS_MAX + 1
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows: Vec<MemoryId> = stmt
        .query_map([engram_core::text::fts_quote(term)], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if rows.len() > TERM_ROWS_MAX {
        return Ok(false);
    }
    for id in rows.into_iter().filter(|id| wanted.contains(id)) {
        *got.entry(id).or_insert(0) += 1;
    }
    Ok(true)
}

/// One FTS5 index: relevance `1 − e^{bm25 / scale}` (bm25 is negative; lower is better).
fn fts_channel(
    conn: &Connection,
    table: &str,
    expr: &str,
    filter: &Filter,
    k: usize,
    scale: f64,
) -> Result<HashMap<MemoryId, f64>> {
    let (fsql, fparams) = filter_sql(filter);
    let sql = format!(
        "SELECT m.id, bm25({table}) AS s FROM {table} JOIN memories m ON m.id = {table}.rowid \
         WHERE {table} MATCH ?{fsql} ORDER BY s LIMIT ?"
    );
    let mut params: Vec<Value> = vec![Value::Text(expr.to_string())];
    params.extend(fparams);
    params.push(Value::Integer(k as i64));
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, f64>(1)?))
    })?;
    let mut out = HashMap::new();
    for row in rows {
        let (id, bm25) = row?;
        out.insert(id, engram_core::scoring::bm25_relevance(bm25, scale));
    }
    Ok(out)
}

/// Substring scan (`LIKE`, case-insensitive for ASCII). A memory's relevance is the mean
/// over the substrings of `N / (N + df)` for those it contains: rare strings weigh more.
fn substring_channel(
    conn: &Connection,
    subs: &[String],
    filter: &Filter,
) -> Result<HashMap<MemoryId, f64>> {
    let (fsql, fparams) = filter_sql(filter);
    let total: i64 = {
        let sql = format!("SELECT count(*) FROM memories m WHERE 1 = 1{fsql}");
        conn.query_row(&sql, rusqlite::params_from_iter(fparams.clone()), |r| {
            r.get(0)
        })?
    };
    let sql = format!(
        "SELECT m.id FROM memories m WHERE (m.content LIKE ?1 ESCAPE '\\' OR ifnull(m.title, '') LIKE ?1 ESCAPE '\\'){fsql}"
    );
    let mut out: HashMap<MemoryId, f64> = HashMap::new();
    for s in subs {
        let mut params: Vec<Value> = vec![Value::Text(format!("%{}%", like_escape(s)))];
        params.extend(fparams.iter().cloned());
        let mut stmt = conn.prepare_cached(&sql)?;
        let ids: Vec<i64> = stmt
            .query_map(rusqlite::params_from_iter(params), |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let rel = like_relevance(total.max(0) as usize, ids.len()) / subs.len() as f64;
        for id in ids {
            *out.entry(id).or_insert(0.0) += rel;
        }
    }
    Ok(out)
}
