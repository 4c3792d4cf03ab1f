//! `engram bench hook`: the prompt hook's wall time, as an agent's client pays it (a
//! process spawned per prompt), on a synthetic store.

use engram_store::settings::Home;
use engram_store::{RememberRequest, Store};
use serde_json::json;
use std::io::Write;

const SUBJECTS: &[&str] = &[
    "database",
    "deploy",
    "cache",
    "login",
    "parser",
    "backup",
    "queue",
    "schema",
    "api",
    "frontend",
    "logging",
    "metrics",
    "billing",
    "search",
    "upload",
    "session",
    "worker",
    "router",
    "config",
    "migration",
    "test",
    "build",
    "docker",
    "index",
    "token",
];
const VERBS: &[&str] = &[
    "uses",
    "needs",
    "broke after",
    "was moved to",
    "depends on",
    "replaced",
    "talks to",
    "is slow because of",
    "was fixed by",
    "must not touch",
];
const OBJECTS: &[&str] = &[
    "SQLite",
    "PostgreSQL",
    "Redis",
    "the retry loop",
    "a feature flag",
    "the nightly job",
    "Kubernetes",
    "the staging cluster",
    "a mutex",
    "the rate limiter",
    "JSON schema",
    "the CDN",
    "an LRU map",
    "OAuth",
    "the message bus",
    "protobuf",
    "the cron runner",
];

/// `engram bench hook`: spawns `engram hook user-prompt-submit` `runs` times against a
/// synthetic store of `memories` English-like memories and reports p50/p95 wall time.
pub fn run(memories: usize, runs: usize, as_json: bool) -> anyhow::Result<()> {
    anyhow::ensure!(
        memories > 0 && runs > 0,
        "--memories and --runs must be at least 1"
    );
    let dir = tempfile::tempdir()?;
    let home = Home {
        root: dir.path().to_path_buf(),
    };
    let config = engram_core::Config {
        model: "none".into(),
        ..Default::default()
    };
    let mut store = Store::open(&home.db_path(), config)?;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let started = std::time::Instant::now();
    for i in 0..memories {
        let content = format!(
            "The {} {} {} (note {i}); the {} {} {}.",
            SUBJECTS[next(SUBJECTS.len())],
            VERBS[next(VERBS.len())],
            OBJECTS[next(OBJECTS.len())],
            SUBJECTS[next(SUBJECTS.len())],
            VERBS[next(VERBS.len())],
            OBJECTS[next(OBJECTS.len())],
        );
        store.remember(RememberRequest {
            content,
            // The same room the hook resolves from its `cwd`.
            cwd: Some(dir.path().to_path_buf()),
            ..Default::default()
        })?;
    }
    drop(store);
    let ingest_s = started.elapsed().as_secs_f64();
    let exe = std::env::current_exe()?;
    let mut lat = Vec::with_capacity(runs);
    let mut injected = 0;
    for r in 0..runs {
        let prompt = format!(
            "why does the {} keep failing with {} in the {}?",
            SUBJECTS[r % SUBJECTS.len()],
            OBJECTS[(r * 7) % OBJECTS.len()],
            SUBJECTS[(r * 3 + 1) % SUBJECTS.len()]
        );
        let input = json!({ "session_id": format!("bench-{r}"), "prompt": prompt, "cwd": dir.path(), "hook_event_name": "UserPromptSubmit" });
        let t = std::time::Instant::now();
        let mut child = std::process::Command::new(&exe)
            .args(["hook", "user-prompt-submit"])
            .env("ENGRAM_HOME", dir.path())
            .env("ENGRAM_MODEL", "none")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()?;
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(input.to_string().as_bytes())?;
        let out = child.wait_with_output()?;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        if !out.stdout.is_empty() {
            injected += 1;
        }
    }
    lat.sort_by(f64::total_cmp);
    let (p50, p95) = (
        engram_mcp::perf::percentile(&lat, 0.5),
        engram_mcp::perf::percentile(&lat, 0.95),
    );
    if as_json {
        println!(
            "{}",
            json!({ "memories": memories, "runs": runs, "ingest_s": ingest_s, "injected": injected,
                    "hook_ms": { "p50": p50, "p95": p95, "min": lat[0], "max": lat[lat.len() - 1] } })
        );
    } else {
        println!(
            "hook user-prompt-submit, {memories} memories, {runs} runs: p50 {p50:.1} ms · p95 {p95:.1} ms · min {:.1} ms ({injected} runs injected context)",
            lat[0]
        );
    }
    Ok(())
}
