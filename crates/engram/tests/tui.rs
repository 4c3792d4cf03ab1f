//! `engram tui` through a pseudo-terminal (`tests/e2e/tui_pty.py`, Python's `pty` module):
//! the newest memories listed, one opened with its history and links, a link followed,
//! a search, and a clean exit.

mod support;

use std::path::Path;
use support::command;

fn engram(home: &Path, args: &[&str]) -> String {
    let out = command(home).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn id_of(json: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    v["id"]
        .as_i64()
        .or_else(|| v["memory"]["id"].as_i64())
        .unwrap_or_else(|| panic!("no id in {v}"))
        .to_string()
}

#[test]
fn tui_browses_searches_and_opens_history_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    // A memory with an earlier text (a topic update keeps it as a revision) and a link.
    let first = engram(
        &home,
        &[
            "--json",
            "save",
            "Deploy target",
            "Deploys go to the staging cluster first",
            "--topic",
            "ops/deploy",
        ],
    );
    let deploy = id_of(&first);
    engram(
        &home,
        &[
            "save",
            "Deploy target",
            "Deploys go to the blue-green production pool",
            "--topic",
            "ops/deploy",
        ],
    );
    let other = id_of(&engram(
        &home,
        &[
            "--json",
            "save",
            "Rollback plan",
            "Rollbacks flip the load balancer back",
        ],
    ));
    engram(&home, &["link", &deploy, &other, "--kind", "related"]);

    let python = std::env::var("ENGRAM_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/e2e/tui_pty.py");
    // The best hit is selected first (deep recall also brings the linked memory).
    let best = format!("expect:> #{other} [fact] common · Rollback plan");
    let out = std::process::Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_engram"))
        .args([
            "expect:Recent memories (2)",
            "expect:Rollback plan",
            // The newest is first; move to the deploy memory and open it.
            "send:j",
            "send:\\r",
            "expect:blue-green production pool",
            "expect:History (1 earlier texts)",
            "expect:staging cluster first",
            "expect:Links (1)",
            "expect:Rollback plan",
            // Follow the link, then back twice to the list.
            "send:\\r",
            "expect:load balancer back",
            "send:q",
            "expect:blue-green",
            "send:q",
            "expect:Recent memories",
            // Search.
            "send:/",
            "expect:Search: _",
            "send:rollback\\r",
            "expect:Search: rollback (",
            &best,
            "send:q",
        ])
        .envs(
            command(&home)
                .get_envs()
                .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned()))),
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
