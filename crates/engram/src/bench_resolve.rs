//! `engram bench resolve`: the accuracy of write-path resolution on labelled cases.
//!
//! Each case is an existing memory (or several), a new text and the action a careful human
//! would expect (`created`, `reinforced`, `merged`, `superseded`). Every case runs in a
//! fresh on-disk store through the real `remember`; the report gives accuracy by language
//! and by expected action, and lists the misses. The built-in cases (`data/
//! resolution-cases.jsonl`, written for engram, English, Japanese and Chinese) are used
//! unless `--cases FILE` names others.

use crate::cli::BenchResolveArgs;
use anyhow::Context;
use engram_store::{RememberRequest, Store};
use serde::Deserialize;
use serde_json::json;
use std::collections::BTreeMap;

const BUILT_IN: &str = include_str!("../data/resolution-cases.jsonl");

#[derive(Deserialize)]
struct Case {
    lang: String,
    existing: Vec<String>,
    new: String,
    expect: String,
}

/// The labelled cases: `--cases FILE` (JSON lines), else the built-in set.
fn read_cases(a: &BenchResolveArgs) -> anyhow::Result<Vec<Case>> {
    let text = match &a.cases {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?
        }
        None => BUILT_IN.to_string(),
    };
    let mut cases = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        cases.push(
            serde_json::from_str::<Case>(line)
                .with_context(|| format!("case on line {}", i + 1))?,
        );
    }
    Ok(cases)
}

/// One case's report line: what was expected and got, and the measures resolution saw
/// (to help calibrate the bands).
fn case_detail(
    c: &Case,
    got: &str,
    ok: bool,
    conflict: &impl serde::Serialize,
    embedder: &Option<std::sync::Arc<dyn engram_core::embed::Embedder>>,
) -> serde_json::Value {
    let old_text = c.existing.last().map(String::as_str).unwrap_or("");
    let (ot, nt) = (
        engram_core::resolve::terms(old_text),
        engram_core::resolve::terms(&c.new),
    );
    let lexical = engram_core::resolve::jaccard(&ot, &nt);
    let contained = engram_core::resolve::containment(&ot, &nt);
    let cosine = embedder.as_ref().and_then(|e| {
        let v = e.embed_documents(&[old_text, c.new.as_str()]).ok()?;
        Some(engram_core::embed::dot(&v[0], &v[1]))
    });
    json!({ "lang": c.lang, "existing": c.existing, "new": c.new,
            "expected": c.expect, "got": got,
            "ok": ok,
            "lexical": (lexical * 100.0).round() / 100.0,
            "contained": (contained * 100.0).round() / 100.0,
            "cosine": cosine.map(|c| (c * 100.0).round() / 100.0),
            "conflict": conflict })
}

pub fn run(a: BenchResolveArgs, as_json: bool) -> anyhow::Result<()> {
    let cases = read_cases(&a)?;
    if a.lexical {
        // SAFETY: before any thread starts.
        unsafe { std::env::set_var("ENGRAM_MODEL", "none") };
    } else if let Some(m) = &a.model {
        // SAFETY: before any thread starts.
        unsafe { std::env::set_var("ENGRAM_MODEL", m) };
    }
    let config = crate::bench::config()?;
    let embedder = crate::models::load(&engram_mcp::environment::home()?, &config)?;
    let model = embedder
        .as_ref()
        .map(|e| e.model_id().to_string())
        .unwrap_or_else(|| "none (lexical)".into());
    let dir = tempfile::tempdir()?;
    let mut by_lang: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut by_expect: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let mut store = Store::open(&dir.path().join(format!("c{i}.db")), config.clone())?;
        store.set_embedder(embedder.clone());
        for e in &c.existing {
            store.remember(RememberRequest {
                content: e.clone(),
                room: Some("bench".into()),
                ..Default::default()
            })?;
        }
        let out = store.remember(RememberRequest {
            content: c.new.clone(),
            room: Some("bench".into()),
            ..Default::default()
        })?;
        let got = serde_json::to_value(out.action)?
            .as_str()
            .unwrap_or("")
            .to_string();
        let ok = got == c.expect;
        for (map, key) in [(&mut by_lang, &c.lang), (&mut by_expect, &c.expect)] {
            let e = map.entry(key.clone()).or_default();
            e.0 += ok as usize;
            e.1 += 1;
        }
        if !ok || a.all {
            misses.push(case_detail(c, &got, ok, &out.conflict, &embedder));
        }
    }
    let correct: usize = by_lang.values().map(|v| v.0).sum();
    // With --all every case was collected; the report's misses are the wrong ones.
    let (misses, listed): (Vec<serde_json::Value>, Vec<serde_json::Value>) = if a.all {
        (
            misses
                .iter()
                .filter(|m| m["ok"] == json!(false))
                .cloned()
                .collect(),
            misses,
        )
    } else {
        (misses, Vec::new())
    };
    let pct = |(ok, n): (usize, usize)| 100.0 * ok as f64 / n.max(1) as f64;
    let report = json!({
        "model": model,
        "cases": cases.len(),
        "correct": correct,
        "accuracy_pct": (pct((correct, cases.len())) * 10.0).round() / 10.0,
        "by_language": by_lang.iter().map(|(k, v)| (k.clone(), json!({"correct": v.0, "cases": v.1}))).collect::<serde_json::Map<_, _>>(),
        "by_expected_action": by_expect.iter().map(|(k, v)| (k.clone(), json!({"correct": v.0, "cases": v.1}))).collect::<serde_json::Map<_, _>>(),
        "misses": misses,
    });
    if a.all {
        for m in &listed {
            println!("{m}");
        }
        return Ok(());
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "resolution accuracy with model {model}: {correct}/{} = {:.1}%",
        cases.len(),
        pct((correct, cases.len()))
    );
    for (k, v) in &by_lang {
        println!("  {k}: {}/{} ({:.0}%)", v.0, v.1, pct(*v));
    }
    for (k, v) in &by_expect {
        println!("  expected {k}: {}/{} ({:.0}%)", v.0, v.1, pct(*v));
    }
    for m in &misses {
        println!(
            "  miss [{}] expected {} got {} (lexical {}, cosine {}): {} → {}",
            m["lang"].as_str().unwrap_or(""),
            m["expected"],
            m["got"],
            m["lexical"],
            m["cosine"],
            m["existing"],
            m["new"]
        );
    }
    Ok(())
}
