//! The perf log: one JSON line per MCP tool call, `{ts, tool, ms, ok}`, in
//! `ENGRAM_HOME/logs/perf.jsonl`, rotated to `perf.jsonl.old` past 1 MiB. `doctor` reads it
//! back as p50/p95 per tool. Logging never fails a call: errors are ignored.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub const ROTATE_BYTES: u64 = 1 << 20;

pub fn log_path(home: &engram_store::settings::Home) -> PathBuf {
    home.root.join("logs").join("perf.jsonl")
}

/// Where this process logs, decided once: `None` when `perf_log = false` or no home.
fn target() -> Option<&'static Path> {
    static TARGET: OnceLock<Option<PathBuf>> = OnceLock::new();
    TARGET
        .get_or_init(|| {
            let home = crate::environment::home().ok()?;
            let pairs: Vec<(String, String)> = std::env::vars()
                .filter(|(k, _)| k.starts_with("ENGRAM_"))
                .collect();
            let on = engram_store::settings::load(&home.config_path(), &pairs)
                .map(|l| l.config.hooks.perf_log)
                .unwrap_or(true);
            on.then(|| log_path(&home))
        })
        .as_deref()
}

/// Appends one line for a tool call.
pub fn record(tool: &str, ms: f64, ok: bool) {
    let Some(path) = target() else { return };
    let _ = append(path, tool, ms, ok);
}

fn append(path: &Path, tool: &str, ms: f64, ok: bool) -> std::io::Result<()> {
    // `ENGRAM_HOME/logs/perf.jsonl`: the home is two levels up.
    let dir = path.parent().unwrap_or(path);
    let home = engram_store::settings::Home {
        root: dir.parent().unwrap_or(dir).to_path_buf(),
    };
    let ts = engram_core::time::format(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0),
    );
    let line =
        serde_json::json!({ "ts": ts, "tool": tool, "ms": (ms * 100.0).round() / 100.0, "ok": ok });
    // One write per line: concurrent servers append whole lines.
    home.append_log(path, format!("{line}\n").as_bytes(), ROTATE_BYTES)
}

/// Latency summary of one tool over the last lines read.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ToolLatency {
    pub tool: String,
    pub calls: usize,
    pub errors: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

/// p50/p95 per tool over the last `last` lines (the rotated file fills in when short).
pub fn summary(path: &Path, last: usize) -> Vec<ToolLatency> {
    let mut lines: Vec<String> = Vec::new();
    for p in [path.with_extension("jsonl.old"), path.to_path_buf()] {
        if let Ok(t) = std::fs::read_to_string(&p) {
            lines.extend(t.lines().map(str::to_string));
        }
    }
    let from = lines.len().saturating_sub(last);
    let mut by: std::collections::BTreeMap<String, (Vec<f64>, usize)> = Default::default();
    for l in &lines[from..] {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(l) else {
            continue;
        };
        let (Some(tool), Some(ms)) = (
            v.get("tool").and_then(|t| t.as_str()),
            v.get("ms").and_then(|m| m.as_f64()),
        ) else {
            continue;
        };
        let e = by.entry(tool.to_string()).or_default();
        e.0.push(ms);
        if v.get("ok").and_then(|o| o.as_bool()) == Some(false) {
            e.1 += 1;
        }
    }
    by.into_iter()
        .map(|(tool, (mut ms, errors))| {
            ms.sort_by(f64::total_cmp);
            ToolLatency {
                tool,
                calls: ms.len(),
                errors,
                p50_ms: percentile(&ms, 0.50),
                p95_ms: percentile(&ms, 0.95),
            }
        })
        .collect()
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
