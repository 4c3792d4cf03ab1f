//! `engram bench …`: speed and quality measured on demand, never asserted in tests.
//!
//! * `bench recall` builds a synthetic store in a temporary directory (the real on-disk
//!   SQLite, WAL, synchronous=FULL), times ingest through `remember` one transaction per
//!   memory as clients do, then times recall and prints p50/p95/p99.
//! * `bench locomo` (in `bench_locomo.rs`) ingests every LoCoMo or BEAM turn as a memory,
//!   asks each scored question, and scores the retrieved turns (Hit@k, Recall@k, MRR by
//!   category or type). `--out` writes JSONL for the reference evaluators in `shared/bench`.

use crate::cli::{BenchCommand, BenchRecallArgs};
use anyhow::{Context, bail};
use engram_core::Config;
use engram_store::{Mode, RecallRequest, RememberRequest, Store};
use serde_json::json;
use std::io::Write;
use std::io::{BufRead, BufReader};
use std::time::Instant;

/// Benchmarks use the built-in defaults plus `ENGRAM_*` variables (never the user's
/// config file), so a setting can be tried with `ENGRAM_W_RELEVANCE=0.7 engram bench …`.
/// The configured model (from `ENGRAM_HOME/models`, or `ENGRAM_MODEL` as a folder), if installed.
fn bench_model() -> anyhow::Result<Option<std::sync::Arc<dyn engram_core::embed::Embedder>>> {
    crate::models::load(&engram_mcp::environment::home()?, &bench_config()?)
}

/// `--model` for a benchmark: the same as setting ENGRAM_MODEL for this process.
fn apply_model_flag(model: &Option<String>) {
    if let Some(m) = model {
        // SAFETY: called before the benchmark starts any thread.
        unsafe { std::env::set_var("ENGRAM_MODEL", m) };
    }
}

pub(crate) fn model() -> anyhow::Result<Option<std::sync::Arc<dyn engram_core::embed::Embedder>>> {
    bench_model()
}

pub(crate) fn config() -> anyhow::Result<Config> {
    bench_config()
}

fn bench_config() -> anyhow::Result<Config> {
    let env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("ENGRAM_"))
        .collect();
    Ok(engram_store::settings::load(
        std::path::Path::new("/nonexistent/engram-bench-config.toml"),
        &env,
    )?
    .config)
}

pub fn run(cmd: BenchCommand, as_json: bool) -> anyhow::Result<()> {
    match cmd {
        BenchCommand::Recall(a) => recall(a, as_json),
        BenchCommand::Locomo(a) => crate::bench_locomo::run(a, as_json),
        BenchCommand::McpStartup(a) => mcp_startup(a.runs, as_json),
        BenchCommand::Embed(a) => embed(a, as_json),
        BenchCommand::Resolve(a) => crate::bench_resolve::run(a, as_json),
        BenchCommand::Hook(a) => crate::bench_hook::run(a.memories, a.runs, as_json),
        BenchCommand::Load(a) => crate::bench_load::run(a, as_json),
    }
}

pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn recall(a: BenchRecallArgs, as_json: bool) -> anyhow::Result<()> {
    use crate::bench_corpus::{Rng, query};
    if a.memories == 0 || a.queries == 0 || a.batch == 0 {
        bail!("--memories, --queries and --batch must be at least 1");
    }
    let mode = Mode::parse(&a.mode)?;
    apply_model_flag(&a.model);
    let dir = tempfile::tempdir().context("creating a temporary directory")?;
    let mut config = bench_config()?;
    if a.exact {
        config.ann_threshold = 0;
    }
    // `--store postgres://…`: the same run on a server database (which must be empty: the
    // run writes its synthetic memories there and leaves them).
    let server = crate::open::store_flag().map(str::to_string);
    let mut store = match &server {
        None => Store::open(&dir.path().join("engram.db"), config.clone())?,
        Some(url) => empty_server_store(url, &config, dir.path())?,
    };
    let mut model = if a.lexical { None } else { bench_model()? };
    if let (Some(m), Some(path)) = (&model, &a.vector_cache) {
        let cached = crate::bench_vectors::CachedEmbedder::open(m.clone(), path)?;
        model = Some(std::sync::Arc::new(cached));
    }
    let model_id = model.as_ref().map(|m| m.model_id().to_string());
    store.set_embedder(model.clone());
    let mut rng = Rng(a.seed.max(1));
    let ingest_s = ingest(&mut store, &a, &mut rng, dir.path())?;

    let queries: Vec<String> = (0..a.queries).map(|_| query(&mut rng)).collect();
    let rooms: Vec<String> = (0..a.queries)
        .map(|_| format!("room{}", rng.below(3)))
        .collect();
    // The query embedding alone, to show its share of the latency.
    let mut embed_lat = Vec::new();
    if let Some(m) = &model {
        for q in &queries {
            let t = Instant::now();
            m.embed_query(q)?;
            embed_lat.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        embed_lat.sort_by(f64::total_cmp);
    }
    let db_bytes = store.stats()?.db_bytes;
    let path = dir.path().join("engram.db");
    let mut runs = Vec::new();
    if server.is_some() {
        // pgvector's HNSW index is built as rows arrive: one way of searching to time.
        let name = match &model {
            Some(_) => store.embedding_status()?.vector_index,
            None => "lexical",
        };
        runs.push(time_recalls(
            &mut store,
            format!("postgres {name}"),
            None,
            &model,
            &queries,
            &rooms,
            mode,
        )?);
    } else {
        drop(store);
        // Each way of searching vectors, on the same store: the exact scan, and the HNSW
        // index (built as a server would in the background) for each quantisation asked for.
        for (name, c) in vector_variants(&a, &config, model.is_some())? {
            runs.push(time_variant(
                &path, name, &c, &model, &queries, &rooms, mode,
            )?);
        }
    }
    let result = json!({
        "memories": a.memories,
        "queries": a.queries,
        "mode": a.mode,
        "batch": a.batch,
        "ingest_seconds": ingest_s,
        "ingest_per_second": a.memories as f64 / ingest_s,
        "ann_ef_search": config.ann_ef_search,
        "query_embedding_ms": (!embed_lat.is_empty()).then(|| json!({ "p50": percentile(&embed_lat, 0.5), "p95": percentile(&embed_lat, 0.95) })),
        "runs": runs,
        "db_bytes": db_bytes,
        "model": model_id,
        "embed_threads": config.embed_threads,
        "peak_rss_mb": peak_rss_mb(),
    });
    if as_json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print_recall(
            &a,
            &config,
            model_id.as_deref(),
            ingest_s,
            &embed_lat,
            &runs,
        );
    }
    Ok(())
}

/// Writes `a.memories` synthetic memories (four kinds, three rooms and `common`), one
/// remember each or in batches of `a.batch`; returns the seconds it took.
fn ingest(
    store: &mut Store,
    a: &BenchRecallArgs,
    rng: &mut crate::bench_corpus::Rng,
    dir: &std::path::Path,
) -> anyhow::Result<f64> {
    let kinds = [
        engram_core::Kind::Fact,
        engram_core::Kind::Decision,
        engram_core::Kind::Preference,
        engram_core::Kind::Failure,
    ];

    eprintln!("ingesting {} memories into {} …", a.memories, dir.display());
    let progress = indicatif::ProgressBar::new(a.memories as u64);
    let start = Instant::now();
    let mut i = 0;
    while i < a.memories {
        let n = a.batch.min(a.memories - i);
        let reqs: Vec<RememberRequest> = (i..i + n)
            .map(|j| RememberRequest {
                content: crate::bench_corpus::sentence(rng, j),
                kind: Some(kinds[j % kinds.len()]),
                importance: Some((1 + rng.below(10)) as f64 / 10.0),
                room: Some(if j % 4 == 0 {
                    "common".into()
                } else {
                    format!("room{}", j % 3)
                }),
                source: Some("bench".into()),
                ..Default::default()
            })
            .collect();
        if n == 1 {
            store.remember(reqs.into_iter().next().expect("one"))?;
        } else {
            for r in store.remember_batch(reqs)? {
                r?;
            }
        }
        i += n;
        progress.set_position(i as u64);
    }
    progress.finish_and_clear();
    Ok(start.elapsed().as_secs_f64())
}

/// Each way of searching vectors to time on the same store: the exact scan, and the HNSW
/// index for each quantisation asked for (when the store is large enough to build one).
fn vector_variants(
    a: &BenchRecallArgs,
    config: &Config,
    has_model: bool,
) -> anyhow::Result<Vec<(String, Config)>> {
    let mut variants: Vec<(String, Config)> = Vec::new();
    let mut exact = config.clone();
    exact.ann_threshold = 0;
    variants.push(("exact".into(), exact));
    if !a.exact && has_model && config.ann_threshold > 0 && a.memories >= config.ann_threshold {
        let wanted = match &a.quantizations {
            Some(list) => list
                .split(',')
                .map(|q| {
                    serde_json::from_value(json!(q.trim()))
                        .with_context(|| format!("unknown quantization {q:?}: use f32, f16 or i8"))
                })
                .collect::<anyhow::Result<Vec<engram_core::config::AnnQuantization>>>()?,
            None => vec![config.ann_quantization],
        };
        for q in wanted {
            let mut c = config.clone();
            c.ann_quantization = q;
            variants.push((format!("hnsw {q:?}").to_lowercase(), c));
        }
    }
    Ok(variants)
}

/// Times every query on one way of searching vectors: the index build, the recall
/// latencies, the hits, and the HNSW index's top-10 agreement with the exact scan.
fn time_variant(
    path: &std::path::Path,
    name: String,
    c: &Config,
    model: &Option<std::sync::Arc<dyn engram_core::embed::Embedder>>,
    queries: &[String],
    rooms: &[String],
    mode: Mode,
) -> anyhow::Result<serde_json::Value> {
    let mut store = Store::open(path, c.clone())?;
    store.set_embedder(model.clone());
    let t = Instant::now();
    let indexed = store.build_vector_index()?;
    let index_s = t.elapsed().as_secs_f64();
    time_recalls(
        &mut store,
        name,
        indexed.map(|n| (n, index_s)),
        model,
        queries,
        rooms,
        mode,
    )
}

/// A store on the server database `url` for `bench recall`, refused unless it is empty.
fn empty_server_store(url: &str, config: &Config, dir: &std::path::Path) -> anyhow::Result<Store> {
    let store =
        engram_store::postgres::PgBackend::open_store(url, config.clone(), &dir.join("engram.db"))?;
    let held = store.health()?.memories;
    if held > 0 {
        bail!(
            "--store: bench recall writes its synthetic memories into the database and leaves them; name an empty one (this one holds {held} memories)"
        );
    }
    Ok(store)
}

/// Times every query on `store`: the recall latencies, the hits, and (when an HNSW index
/// was built, `indexed`: its size and build seconds) its top-10 agreement with the exact
/// scan.
fn time_recalls(
    store: &mut Store,
    name: String,
    indexed: Option<(usize, f64)>,
    model: &Option<std::sync::Arc<dyn engram_core::embed::Embedder>>,
    queries: &[String],
    rooms: &[String],
    mode: Mode,
) -> anyhow::Result<serde_json::Value> {
    let mut lat = Vec::with_capacity(queries.len());
    let mut hits_total = 0usize;
    for (q, room) in queries.iter().zip(rooms) {
        let mut req = RecallRequest::new(q.clone());
        req.mode = mode;
        req.limit = 10;
        req.room = Some(room.clone());
        let t = Instant::now();
        let r = store.recall(&req)?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        hits_total += r.hits.len();
    }
    lat.sort_by(f64::total_cmp);
    let agreement = match (model, indexed) {
        (Some(m), Some(_)) => {
            let vecs: Vec<Vec<f32>> = queries
                .iter()
                .take(100)
                .map(|q| m.embed_query(q))
                .collect::<Result<_, _>>()?;
            store.vector_index_agreement(&vecs, 10)?
        }
        _ => None,
    };
    Ok(json!({
        "vector_search": name,
        "index_build_seconds": indexed.map(|(_, s)| s),
        "hnsw_recall_at_10": agreement,
        "recall_ms": { "p50": percentile(&lat, 0.5), "p95": percentile(&lat, 0.95), "p99": percentile(&lat, 0.99), "max": lat.last() },
        "mean_hits": hits_total as f64 / queries.len() as f64,
    }))
}

/// `bench recall`'s text report.
fn print_recall(
    a: &BenchRecallArgs,
    config: &Config,
    model_id: Option<&str>,
    ingest_s: f64,
    embed_lat: &[f64],
    runs: &[serde_json::Value],
) {
    println!(
        "model: {} · {} embedding thread(s) · peak RSS {:.0} MB",
        model_id.unwrap_or("none (lexical)"),
        config.embed_threads,
        peak_rss_mb().unwrap_or(0.0)
    );
    println!(
        "ingest: {} memories in {:.2} s = {:.0} memories/s ({})",
        a.memories,
        ingest_s,
        a.memories as f64 / ingest_s,
        if a.batch == 1 {
            "one remember per memory".to_string()
        } else {
            format!("remember_batch of {}", a.batch)
        }
    );
    if !embed_lat.is_empty() {
        println!(
            "query embedding alone: p50 {:.2} ms · p95 {:.2} ms",
            percentile(embed_lat, 0.5),
            percentile(embed_lat, 0.95)
        );
    }
    for r in runs {
        let ms = &r["recall_ms"];
        let mut line = format!(
            "recall, {} ({}, {} queries, limit 10, hits recorded, query embedding included): p50 {:.2} ms · p95 {:.2} ms · p99 {:.2} ms · mean hits {:.1}",
            r["vector_search"].as_str().unwrap_or("?"),
            a.mode,
            a.queries,
            ms["p50"].as_f64().unwrap_or(0.0),
            ms["p95"].as_f64().unwrap_or(0.0),
            ms["p99"].as_f64().unwrap_or(0.0),
            r["mean_hits"].as_f64().unwrap_or(0.0),
        );
        if let (Some(b), Some(ag)) = (
            r["index_build_seconds"].as_f64(),
            r["hnsw_recall_at_10"].as_f64(),
        ) {
            line += &format!(
                " · index built in {b:.1} s, top-10 agreement with exact {:.1} %",
                ag * 100.0
            );
        }
        println!("{line}");
    }
}

/// Spawns `engram mcp` (this very binary) `runs` times against a fresh store and times
/// spawn → `initialize` reply, the wait a client sees before it can use any tool.
fn mcp_startup(runs: usize, as_json: bool) -> anyhow::Result<()> {
    if runs == 0 {
        bail!("--runs must be at least 1");
    }
    let exe = std::env::current_exe()?;
    let dir = tempfile::tempdir()?;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let mut lat = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let mut child = std::process::Command::new(&exe)
            .arg("mcp")
            .env("ENGRAM_HOME", dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        let mut stdin = child.stdin.take().context("child stdin")?;
        writeln!(stdin, "{init}")?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().context("child stdout")?).read_line(&mut line)?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        if !line.contains("\"serverInfo\"") {
            bail!("unexpected reply to initialize: {line}");
        }
        drop(stdin);
        let _ = child.wait();
    }
    lat.sort_by(f64::total_cmp);
    let result = json!({ "runs": runs, "initialize_ms": { "p50": percentile(&lat, 0.5), "p95": percentile(&lat, 0.95), "min": lat[0] } });
    if as_json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        println!(
            "spawn → initialize reply over {runs} runs: p50 {:.1} ms · p95 {:.1} ms · min {:.1} ms",
            percentile(&lat, 0.5),
            percentile(&lat, 0.95),
            lat[0]
        );
    }
    Ok(())
}

/// Peak resident memory of this process (Linux `VmHWM`), in MB.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Sentences per second of the configured model at batch 1 and batch 32.
fn embed(a: crate::cli::BenchEmbedArgs, as_json: bool) -> anyhow::Result<()> {
    apply_model_flag(&a.model);
    let model = bench_model()?.context("no embedding model installed: run `engram model pull all-MiniLM-L6-v2` or pass --model DIR")?;
    // Ordinary English sentences of about fourteen words, like the memories agents write
    // (the synthetic words of `bench recall` split into about four times more tokens).
    const SENTENCES: &[&str] = &[
        "We decided to keep the session store in SQLite because it runs everywhere",
        "The user prefers short answers with code first and explanations after it",
        "The deploy failed because the migration ran before the new schema existed",
        "Always run the formatter and the linter before committing any change here",
        "The flaky test was caused by a race between the writer and the reader",
        "Staging uses a smaller database instance than production to save money",
        "The API returns dates in UTC and the client converts them to local time",
        "We moved the build cache to a shared volume to speed up the pipeline",
    ];
    let texts: Vec<String> = (0..a.sentences.max(1))
        .map(|i| format!("{} (note {i})", SENTENCES[i % SENTENCES.len()]))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let t = Instant::now();
    for s in &refs {
        model.embed_documents(&[s])?;
    }
    let one = refs.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for chunk in refs.chunks(32) {
        model.embed_documents(chunk)?;
    }
    let batch = refs.len() as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for s in refs.iter().take(50) {
        model.embed_query(s)?;
    }
    let query_ms = t.elapsed().as_secs_f64() * 1000.0 / refs.len().min(50) as f64;
    let v = json!({ "model": model.model_id(), "sentences": refs.len(), "batch1_per_s": one, "batch32_per_s": batch, "query_ms": query_ms, "peak_rss_mb": peak_rss_mb() });
    if as_json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "{}: batch 1 {one:.0} sentences/s · batch 32 {batch:.0} sentences/s · one query {query_ms:.1} ms · peak RSS {:.0} MB",
            model.model_id(),
            peak_rss_mb().unwrap_or(0.0)
        );
    }
    Ok(())
}
