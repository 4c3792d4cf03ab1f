//! `engram bench locomo`: retrieval quality on LoCoMo-shaped data (LoCoMo itself and BEAM
//! converted to its layout). Every turn is ingested as a memory through the capture path
//! (one store per conversation), every scored question goes through the same recall as
//! the MCP `recall` tool, and the retrieved turns are scored: Hit@1/5/10, Recall@5/10 and
//! MRR per LoCoMo category or BEAM type, BEAM's "update above its predecessor", recall
//! latency, ingest rate, and the settings the run used.

use crate::cli::BenchLocomoArgs;
use anyhow::Context;
use engram_store::Match;
use engram_store::{RecallRequest, RememberRequest, Store};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Write;
use std::time::Instant;

/// How much of the previous turn a memory keeps as searchable context. A chat turn fits
/// whole; a long pasted message would swamp the turn's own words in BM25 and is clipped
/// (at a character boundary) for the context only: the turn itself is stored in full.
const PREVIOUS_TURN_BYTES: usize = 1024;

/// LoCoMo's session dates, like "1:56 pm on 8 May, 2023", as Unix milliseconds (UTC).
pub(crate) fn locomo_date(raw: &str) -> Option<i64> {
    let (clock, date) = raw.split_once(" on ")?;
    let mut parts = date.split_whitespace();
    let day: i64 = parts.next()?.parse().ok()?;
    let month = parts.next()?.trim_end_matches(',');
    let year: i64 = parts.next()?.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let m = MONTHS
        .iter()
        .position(|x| x.starts_with(&month.to_lowercase()[..3.min(month.len())]))?
        as i64
        + 1;
    let (hm, ampm) = clock.trim().split_once(' ')?;
    let (h, mi) = hm.split_once(':')?;
    let mut h: i64 = h.parse().ok()?;
    let mi: i64 = mi.parse().ok()?;
    if ampm.eq_ignore_ascii_case("pm") && h < 12 {
        h += 12;
    }
    if ampm.eq_ignore_ascii_case("am") && h == 12 {
        h = 0;
    }
    engram_core::time::parse(&format!("{year:04}-{m:02}-{day:02}T{h:02}:{mi:02}:00Z"))
}

/// Evidence ids as LoCoMo writes them, tolerating `"D8:6; D9:17"` and similar.
fn evidence_ids(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for e in v.as_array().into_iter().flatten() {
        for part in e.as_str().unwrap_or("").split([';', ',', ' ']) {
            let p = part.trim();
            if let Some((d, t)) = p.strip_prefix('D').and_then(|r| r.split_once(':'))
                && let (Ok(d), Ok(t)) = (d.parse::<u32>(), t.parse::<u32>())
            {
                out.push(format!("D{d}:{t}"));
            }
        }
    }
    out
}

/// LoCoMo's category numbers, named (the paper's prose orders them differently).
fn category_name(c: u64) -> &'static str {
    match c {
        1 => "multi-hop",
        2 => "temporal",
        3 => "open-domain",
        4 => "single-hop",
        _ => "other",
    }
}

/// Scores of one group of questions.
#[derive(Default)]
struct Tally {
    n: usize,
    hit1: usize,
    hit5: usize,
    hit10: usize,
    recall5: f64,
    recall10: f64,
    mrr: f64,
}

impl Tally {
    fn add(&mut self, retrieved: &[String], evidence: &[String]) {
        self.n += 1;
        let rank = retrieved.iter().position(|r| evidence.contains(r));
        if let Some(r) = rank {
            self.hit1 += usize::from(r < 1);
            self.hit5 += usize::from(r < 5);
            self.hit10 += usize::from(r < 10);
            self.mrr += 1.0 / (r as f64 + 1.0);
        }
        let found = |k: usize| {
            let top: Vec<&String> = retrieved.iter().take(k).collect();
            evidence.iter().filter(|e| top.contains(e)).count() as f64 / evidence.len() as f64
        };
        self.recall5 += found(5);
        self.recall10 += found(10);
    }

    fn json(&self) -> Value {
        let n = self.n.max(1) as f64;
        json!({
            "n": self.n,
            "hit@1": 100.0 * self.hit1 as f64 / n,
            "hit@5": 100.0 * self.hit5 as f64 / n,
            "hit@10": 100.0 * self.hit10 as f64 / n,
            "recall@5": 100.0 * self.recall5 / n,
            "recall@10": 100.0 * self.recall10 / n,
            "mrr": self.mrr / n,
        })
    }
}

/// Everything a run accumulates across conversations.
#[derive(Default)]
struct Run {
    by_group: BTreeMap<String, Tally>,
    all: Tally,
    latency_ms: Vec<f64>,
    /// BEAM knowledge updates: (questions with `old_evidence`, update in the top 5 above it).
    updates: (usize, usize),
    memories: usize,
    /// Seconds in `remember_capture` (writes, indexing; resolution when it applies).
    ingest_s: f64,
    /// Seconds embedding the stored turns in batches afterwards.
    embed_s: f64,
    /// The best hit's absolute relevance per question: the conversation's own questions
    /// and (with `--foreign`) the other conversations' ones.
    own: Vec<(f64, Match)>,
    foreign: Vec<(f64, Match)>,
}

/// The `match` verdicts and the spread of best absolute relevances of one question set.
fn verdicts(results: &[(f64, Match)]) -> Value {
    let mut sorted: Vec<f64> = results.iter().map(|r| r.0).collect();
    sorted.sort_by(f64::total_cmp);
    let count = |m: Match| results.iter().filter(|r| r.1 == m).count();
    let q = |p: f64| crate::bench::percentile(&sorted, p);
    json!({
        "n": results.len(),
        "good": count(Match::Good),
        "weak": count(Match::Weak),
        "none": count(Match::None),
        "best_absolute": {"p10": q(0.1), "p25": q(0.25), "p50": q(0.5), "p75": q(0.75), "p90": q(0.9)},
    })
}

/// The best absolute relevance among a result's hits (0 without hits), and its verdict.
fn best_absolute(r: &engram_store::RecallResult) -> (f64, Match) {
    let best = r.hits.iter().map(|h| h.absolute).fold(0.0, f64::max);
    (best, r.matched)
}

/// Asks one conversation's store up to `max` questions of the other conversations (none of
/// them about this one), for the calibration of the absolute scale.
fn ask_foreign(
    data: &[Value],
    id: &str,
    ing: &mut Ingested,
    k: usize,
    max: usize,
    run: &mut Run,
) -> anyhow::Result<()> {
    let others: Vec<&Value> = data
        .iter()
        .filter(|c| c["sample_id"].as_str() != Some(id))
        .collect();
    let per = max.div_ceil(others.len().max(1));
    for conv in others {
        let questions = conv["qa"].as_array().into_iter().flatten();
        for qa in questions.filter(|qa| qa["category"] != 5).take(per) {
            let mut req = RecallRequest::new(qa["question"].as_str().unwrap_or(""));
            req.limit = k;
            req.room = Some(id.to_string());
            req.kinds = vec![engram_core::Kind::Episode];
            req.record_hits = false;
            let r = ing.store.recall(&req)?;
            run.foreign.push(best_absolute(&r));
        }
    }
    Ok(())
}

/// One conversation's store and which turn each memory came from.
struct Ingested {
    store: Store,
    mem_to_dia: BTreeMap<i64, String>,
    _dir: tempfile::TempDir,
}

/// Ingests one conversation: each turn through the capture path (long messages become
/// linked parts, all mapped to the turn), dated by its session, with the session date and
/// the previous turn as context.
fn ingest(conv: &Value, id: &str, run: &mut Run) -> anyhow::Result<Ingested> {
    let dir = tempfile::tempdir()?;
    let mut store = Store::open(&dir.path().join("engram.db"), crate::bench::config()?)?;
    let mut mem_to_dia: BTreeMap<i64, String> = BTreeMap::new();
    let c = &conv["conversation"];
    let started = Instant::now();
    let mut session = 1;
    while let Some(turns) = c
        .get(format!("session_{session}"))
        .and_then(Value::as_array)
    {
        let date_text = c
            .get(format!("session_{session}_date_time"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let at = locomo_date(date_text);
        let mut previous: Option<String> = None;
        for t in turns {
            let (Some(speaker), Some(dia), Some(body)) = (
                t["speaker"].as_str(),
                t["dia_id"].as_str(),
                t["text"].as_str(),
            ) else {
                continue;
            };
            // The turn, as said, and an image it shares, by its caption; searchable but not
            // part of the memory: its date and the turn it answers.
            let mut content = format!("{speaker}: \"{body}\"");
            if let Some(cap) = t["blip_caption"].as_str() {
                content.push_str(&format!(" [shares an image: {cap}]"));
            }
            let mut context = date_text.to_string();
            if let Some(p) = &previous {
                context.push('\n');
                context.push_str(clip(p, PREVIOUS_TURN_BYTES));
            }
            let r = store.remember_capture(RememberRequest {
                content,
                room: Some(id.to_string()),
                kind: Some(engram_core::Kind::Episode),
                source: Some("locomo".into()),
                session_id: Some(format!("{id}/session_{session}")),
                metadata: Some(json!({ "dia_id": dia })),
                context: Some(context),
                created_at: at,
                ..Default::default()
            })?;
            previous = Some(format!("{speaker}: {body}"));
            run.memories += 1 + r.parts.len();
            // A repeated turn reinforces the first; keep the first turn's id. A long turn's
            // parts are that turn too.
            let parts = r.parts.iter().chain(&r.touched).copied();
            for m in std::iter::once(r.id).chain(parts) {
                mem_to_dia.entry(m).or_insert_with(|| dia.to_string());
            }
        }
        session += 1;
    }
    run.ingest_s += started.elapsed().as_secs_f64();
    Ok(Ingested {
        store,
        mem_to_dia,
        _dir: dir,
    })
}

/// The first `max` bytes of `text`, ending on a character boundary.
fn clip(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Asks every scored question of one conversation and tallies the answers.
fn ask(
    conv: &Value,
    id: &str,
    ing: &mut Ingested,
    k: usize,
    run: &mut Run,
    out: &mut Option<std::fs::File>,
) -> anyhow::Result<()> {
    for (qi, qa) in conv["qa"].as_array().into_iter().flatten().enumerate() {
        let cat = qa["category"].as_u64().unwrap_or(0);
        if cat == 5 {
            continue;
        }
        let evidence = evidence_ids(&qa["evidence"]);
        let mut req = RecallRequest::new(qa["question"].as_str().unwrap_or(""));
        req.limit = k;
        req.room = Some(id.to_string());
        req.kinds = vec![engram_core::Kind::Episode];
        req.record_hits = false;
        let t = Instant::now();
        let r = ing.store.recall(&req)?;
        run.latency_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        run.own.push(best_absolute(&r));
        // Parts of one long turn name the turn once, where its best part ranks.
        let mut retrieved: Vec<String> = Vec::new();
        for h in &r.hits {
            if let Some(d) = ing.mem_to_dia.get(&h.memory.id)
                && !retrieved.contains(d)
            {
                retrieved.push(d.clone());
            }
        }
        // The reference evaluator repairs malformed evidence itself; score here only what parses.
        if !evidence.is_empty() {
            let group = match qa["beam_type"].as_str() {
                Some(t) => t.to_string(),
                None => format!("{cat} {}", category_name(cat)),
            };
            run.by_group
                .entry(group)
                .or_default()
                .add(&retrieved, &evidence);
            run.all.add(&retrieved, &evidence);
            let old = evidence_ids(&qa["old_evidence"]);
            if !old.is_empty() {
                let pos = |ids: &[String]| retrieved.iter().position(|r| ids.contains(r));
                let first = match (pos(&evidence), pos(&old)) {
                    (Some(n), Some(o)) => n < o && n < 5,
                    (Some(n), None) => n < 5,
                    _ => false,
                };
                run.updates.0 += 1;
                run.updates.1 += usize::from(first);
            }
        }
        if let Some(f) = out.as_mut() {
            writeln!(
                f,
                "{}",
                json!({ "conv": id, "qa_index": qi, "retrieved": retrieved })
            )?;
        }
    }
    Ok(())
}

/// The settings a run used, so a figure can be reproduced.
fn settings(a: &BenchLocomoArgs, model: Option<&str>) -> anyhow::Result<Value> {
    let config = crate::bench::config()?;
    let overrides: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("ENGRAM_") && k != "ENGRAM_HOME")
        .collect();
    Ok(json!({
        "retriever": match model {
            Some(m) => format!("hybrid: FTS5 BM25 + {m}"),
            None => "lexical: FTS5 BM25 (stopwords removed, Porter stemming) + query coverage".into(),
        },
        "fusion": serde_json::to_value(config.fusion)?,
        "resolve": config.resolve,
        "k": a.k,
        "ingest": "each turn through remember_capture; context = session date + previous turn (first 1024 bytes)",
        "environment": overrides,
    }))
}

pub fn run(a: BenchLocomoArgs, as_json: bool) -> anyhow::Result<()> {
    if let Some(m) = &a.model {
        // SAFETY: called before the benchmark starts any thread.
        unsafe { std::env::set_var("ENGRAM_MODEL", m) };
    }
    let text = std::fs::read_to_string(&a.data)
        .with_context(|| format!("reading {}", a.data.display()))?;
    let data: Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", a.data.display()))?;
    let wanted: Option<Vec<String>> = a
        .convs
        .as_ref()
        .map(|c| c.split(',').map(|s| s.trim().to_string()).collect());
    let mut out = match &a.out {
        Some(p) => {
            Some(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?)
        }
        None => None,
    };
    let embedder = if a.lexical {
        None
    } else {
        crate::bench::model()?
    };
    let mut run = Run::default();
    let start = Instant::now();
    for conv in data.as_array().context("LoCoMo data must be a JSON list")? {
        let id = conv["sample_id"].as_str().unwrap_or("?").to_string();
        if wanted.as_ref().is_some_and(|w| !w.contains(&id)) {
            continue;
        }
        let mut ing = ingest(conv, &id, &mut run)?;
        // Embed in batches after ingest (faster than one by one; recall sees the same vectors).
        if let Some(e) = &embedder {
            let t = Instant::now();
            ing.store.set_embedder(Some(e.clone()));
            ing.store.embed_missing(|_| {})?;
            run.embed_s += t.elapsed().as_secs_f64();
        }
        ask(conv, &id, &mut ing, a.k, &mut run, &mut out)?;
        if a.foreign > 0 {
            let all = data.as_array().map(Vec::as_slice).unwrap_or(&[]);
            ask_foreign(all, &id, &mut ing, a.k, a.foreign, &mut run)?;
        }
    }
    run.latency_ms.sort_by(f64::total_cmp);
    let result = report(&a, &run, embedder.as_ref().map(|e| e.model_id()), start)?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print_report(&result);
    }
    Ok(())
}

fn report(
    a: &BenchLocomoArgs,
    run: &Run,
    model: Option<&str>,
    start: Instant,
) -> anyhow::Result<Value> {
    let groups: BTreeMap<String, Value> = run
        .by_group
        .iter()
        .map(|(c, t)| (c.clone(), t.json()))
        .collect();
    let p = |q| crate::bench::percentile(&run.latency_ms, q);
    Ok(json!({
        "overall": run.all.json(),
        "by_category": groups,
        "update_first": (run.updates.0 > 0).then(|| json!({
            "n": run.updates.0,
            "percent": 100.0 * run.updates.1 as f64 / run.updates.0 as f64,
        })),
        "recall_ms": { "p50": p(0.5), "p95": p(0.95) },
        "match": {
            "own": verdicts(&run.own),
            "foreign": (!run.foreign.is_empty()).then(|| verdicts(&run.foreign)),
        },
        "ingest": {
            "memories": run.memories,
            "seconds": run.ingest_s,
            "per_second": run.memories as f64 / run.ingest_s.max(1e-9),
            "embed_seconds": run.embed_s,
        },
        "seconds": start.elapsed().as_secs_f64(),
        "settings": settings(a, model)?,
    }))
}

fn print_report(r: &Value) {
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    println!(
        "retriever: {}",
        r["settings"]["retriever"].as_str().unwrap_or("")
    );
    println!("settings: {}", r["settings"]);
    let o = &r["overall"];
    println!(
        "overall (n={}): Hit@1 {:.1} · Hit@5 {:.1} · Hit@10 {:.1} · Recall@5 {:.1} · Recall@10 {:.1} · MRR {:.3}",
        o["n"],
        f(o, "hit@1"),
        f(o, "hit@5"),
        f(o, "hit@10"),
        f(o, "recall@5"),
        f(o, "recall@10"),
        f(o, "mrr")
    );
    println!(
        "  {:<26} {:>4} {:>7} {:>9} {:>6}",
        "category / type", "n", "Hit@5", "Recall@10", "MRR"
    );
    for (c, t) in r["by_category"].as_object().into_iter().flatten() {
        println!(
            "  {c:<26} {:>4} {:>7.1} {:>9.1} {:>6.3}",
            t["n"],
            f(t, "hit@5"),
            f(t, "recall@10"),
            f(t, "mrr")
        );
    }
    if let Some(u) = r["update_first"].as_object() {
        println!(
            "knowledge updates: the update in the top 5 and above its predecessor in {:.1} % of {}",
            u["percent"].as_f64().unwrap_or(0.0),
            u["n"]
        );
    }
    for set in ["own", "foreign"] {
        let m = &r["match"][set];
        if m.is_object() {
            println!(
                "match of {set} questions (n={}): good {} · weak {} · none {} · best absolute p25 {:.2} · p50 {:.2} · p75 {:.2}",
                m["n"],
                m["good"],
                m["weak"],
                m["none"],
                f(&m["best_absolute"], "p25"),
                f(&m["best_absolute"], "p50"),
                f(&m["best_absolute"], "p75")
            );
        }
    }
    let i = &r["ingest"];
    println!(
        "ingest: {} memories in {:.1} s ({:.1}/s), then embedded in batches in {:.1} s · recall p50 {:.2} ms · p95 {:.2} ms",
        i["memories"],
        f(i, "seconds"),
        f(i, "per_second"),
        f(i, "embed_seconds"),
        f(&r["recall_ms"], "p50"),
        f(&r["recall_ms"], "p95")
    );
}
