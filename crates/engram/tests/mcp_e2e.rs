//! Drives the built binary with the official MCP Python SDK over stdio and HTTP, through
//! every tool profile (the client script is `tests/e2e/mcp_e2e.py`). `scripts/test`
//! provides the SDK; run without it, this test fails and says how to get it.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn mcp_end_to_end_with_the_python_sdk() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = std::env::var("ENGRAM_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "ENGRAM_TEST_PYTHON is not set: run the suite with scripts/test, which installs the MCP \
             Python SDK into target/e2e-venv and points this variable at it"
        )
    });
    let out = Command::new(&python)
        .arg(root.join("tests/e2e/mcp_e2e.py"))
        .arg(env!("CARGO_BIN_EXE_engram"))
        .env_remove("ENGRAM_HOME")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "MCP end-to-end failures:\n{stderr}\n{stdout}"
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}
