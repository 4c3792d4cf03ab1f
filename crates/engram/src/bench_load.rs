//! `engram bench load`: many clients at once against running servers, over HTTP, as a
//! team's agents would call them. Each client is a thread that, until the time is up,
//! sends one request after another (a remember with probability `--writes`, else a
//! recall) over seed A's REST routes (`POST /v1/store`, `POST /v1/recall`: one tool call
//! per request, no MCP session to set up), to the servers named by `--url` in turn (client
//! `i` uses server `i mod n`, as a load balancer would spread them). It reports the
//! throughput, p50/p95/p99 per operation and the errors (a refused connection, a status
//! other than 200, or an `ok: false` body), so a run against one PostgreSQL server, two on
//! one database, and a SQLite server can be compared on one machine.
//!
//! The HTTP client is a few lines over `std::net::TcpStream` (one connection per request,
//! `Connection: close`), so the benchmark needs no client library; connecting over
//! loopback costs tens of microseconds, small beside a tool call.

use crate::bench::percentile;
use crate::bench_corpus::{Rng, query, sentence};
use crate::cli::BenchLoadArgs;
use anyhow::{Context, bail};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// One operation's outcome (`error`: what a failed one said, its body or the I/O error).
struct Sample {
    write: bool,
    ms: f64,
    ok: bool,
    error: Option<String>,
}

pub fn run(a: BenchLoadArgs, as_json: bool) -> anyhow::Result<()> {
    if a.url.is_empty() {
        bail!("--url: name at least one server (http://HOST:PORT)");
    }
    if a.clients == 0 || a.seconds == 0 {
        bail!("--clients and --seconds must be at least 1");
    }
    if !(0.0..=1.0).contains(&a.writes) {
        bail!("--writes: {} is out of range: give 0–1", a.writes);
    }
    let servers: Vec<String> = a
        .url
        .iter()
        .map(|u| host_port(u))
        .collect::<anyhow::Result<_>>()?;
    let token = a
        .token
        .clone()
        .or_else(|| std::env::var("ENGRAM_HTTP_TOKEN").ok());
    let deadline = Instant::now() + Duration::from_secs(a.seconds);
    let started = Instant::now();
    let handles: Vec<_> = (0..a.clients)
        .map(|i| {
            let server = servers[i % servers.len()].clone();
            let token = token.clone();
            let (writes, seed) = (a.writes, a.seed);
            std::thread::spawn(move || client(i, &server, token.as_deref(), writes, seed, deadline))
        })
        .collect();
    let mut samples = Vec::new();
    for h in handles {
        samples.extend(
            h.join()
                .map_err(|_| anyhow::anyhow!("a client thread panicked"))?,
        );
    }
    let elapsed = started.elapsed().as_secs_f64();
    let result = report(&a, &samples, elapsed);
    if as_json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print(&result);
    }
    Ok(())
}

/// `http://HOST:PORT[/…]` → `HOST:PORT`.
fn host_port(url: &str) -> anyhow::Result<String> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("--url {url:?}: give http://HOST:PORT"))?;
    let hp = rest.split('/').next().unwrap_or(rest);
    if hp.is_empty() || !hp.contains(':') {
        bail!("--url {url:?}: give http://HOST:PORT");
    }
    Ok(hp.to_string())
}

/// One client's requests until `deadline`.
fn client(
    i: usize,
    server: &str,
    token: Option<&str>,
    writes: f64,
    seed: u64,
    deadline: Instant,
) -> Vec<Sample> {
    let mut rng = Rng((seed.max(1)).wrapping_mul(i as u64 + 1) | 1);
    let mut out = Vec::new();
    let mut n = 0usize;
    while Instant::now() < deadline {
        let write = (rng.below(1000) as f64) < writes * 1000.0;
        let room = format!("room{}", rng.below(3));
        let (path, body) = if write {
            // Distinct texts per client and request, so writes create (and resolve).
            let text = format!("{} (client {i}, note {n})", sentence(&mut rng, n));
            (
                "/v1/store",
                json!({ "content": text, "importance": 0.5, "user_id": room }),
            )
        } else {
            (
                "/v1/recall",
                json!({ "query": query(&mut rng), "user_id": room }),
            )
        };
        n += 1;
        let t = Instant::now();
        let error = match post(server, path, &body.to_string(), token) {
            Ok(None) => None,
            Ok(Some(reply)) => Some(reply),
            Err(e) => Some(e.to_string()),
        };
        out.push(Sample {
            write,
            ms: t.elapsed().as_secs_f64() * 1000.0,
            ok: error.is_none(),
            error,
        });
    }
    out
}

/// One request; `Ok(None)` for a 200 whose body is not `"ok": false`, else the reply.
fn post(
    server: &str,
    path: &str,
    body: &str,
    token: Option<&str>,
) -> anyhow::Result<Option<String>> {
    let mut c = TcpStream::connect(server)?;
    c.set_read_timeout(Some(Duration::from_secs(120)))?;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        c,
        "POST {path} HTTP/1.1\r\nHost: {server}\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut reply = String::new();
    c.read_to_string(&mut reply)?;
    let status_ok = reply.starts_with("HTTP/1.1 200");
    let refused = reply
        .split_once("\r\n\r\n")
        .is_some_and(|(_, b)| b.contains("\"ok\":false"));
    Ok((!status_ok || refused).then_some(reply))
}

fn latency(samples: &[&Sample]) -> serde_json::Value {
    let mut ms: Vec<f64> = samples.iter().map(|s| s.ms).collect();
    ms.sort_by(f64::total_cmp);
    json!({
        "count": ms.len(),
        "p50": percentile(&ms, 0.5),
        "p95": percentile(&ms, 0.95),
        "p99": percentile(&ms, 0.99),
    })
}

fn report(a: &BenchLoadArgs, samples: &[Sample], elapsed: f64) -> serde_json::Value {
    let ok: Vec<&Sample> = samples.iter().filter(|s| s.ok).collect();
    let writes: Vec<&Sample> = ok.iter().copied().filter(|s| s.write).collect();
    let reads: Vec<&Sample> = ok.iter().copied().filter(|s| !s.write).collect();
    // What the failures said: the first few distinct replies, for the report.
    let mut said: Vec<&str> = Vec::new();
    for e in samples.iter().filter_map(|s| s.error.as_deref()) {
        let body = e.split_once("\r\n\r\n").map_or(e, |(_, b)| b).trim();
        if said.len() < 5 && !said.contains(&body) {
            said.push(body);
        }
    }
    json!({
        "error_samples": said,
        "servers": a.url,
        "clients": a.clients,
        "seconds": elapsed,
        "writes_share": a.writes,
        "requests": samples.len(),
        "errors": samples.len() - ok.len(),
        "throughput_per_second": ok.len() as f64 / elapsed,
        "remember_ms": latency(&writes),
        "recall_ms": latency(&reads),
    })
}

fn print(r: &serde_json::Value) {
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(0.0);
    println!(
        "{} clients on {} server(s) for {:.1} s: {} requests, {} errors, {:.1} ok/s",
        r["clients"],
        r["servers"].as_array().map_or(0, Vec::len),
        f(r, "seconds"),
        r["requests"],
        r["errors"],
        f(r, "throughput_per_second"),
    );
    for e in r["error_samples"].as_array().into_iter().flatten() {
        println!("  error: {}", e.as_str().unwrap_or_default());
    }
    for (name, key) in [("remember", "remember_ms"), ("recall", "recall_ms")] {
        let v = &r[key];
        println!(
            "  {name:<8} {:>6} ok · p50 {:.1} ms · p95 {:.1} ms · p99 {:.1} ms",
            v["count"],
            f(v, "p50"),
            f(v, "p95"),
            f(v, "p99"),
        );
    }
}
