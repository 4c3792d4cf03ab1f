//! Bare `engram` (no arguments) as seed A's client line starts it: the official MCP Python
//! SDK spawns it by name from PATH (`tests/e2e/bare_engram.py`), in a home holding A's
//! data (A's profile is served) and with `ENGRAM_TOOLS` (the named profile). On a
//! terminal it prints help instead; with stdin closed it serves and exits at end of input.

use std::path::PathBuf;
use std::process::{Command, Stdio};

#[test]
fn bare_engram_serves_mcp_to_a_real_client() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var("ENGRAM_TEST_PYTHON").unwrap_or_else(|_| {
        panic!("ENGRAM_TEST_PYTHON is not set: run with scripts/test, which provides the MCP SDK")
    });
    let out = Command::new(&python)
        .arg(root.join("tests/e2e/bare_engram.py"))
        .arg(env!("CARGO_BIN_EXE_engram"))
        .env_remove("ENGRAM_HOME")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}\n{stdout}");
    assert!(stdout.contains("2 passed, 0 failed"), "{stdout}");
}

#[test]
fn bare_engram_with_no_input_writes_only_json_rpc() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_engram"))
        .env("ENGRAM_HOME", dir.path())
        .env("ENGRAM_MODEL", "none")
        .env("ENGRAM_MAINTENANCE_INTERVAL_HOURS", "0")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "no help text on a client's stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
