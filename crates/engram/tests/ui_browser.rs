//! The web UI in a real browser: the built binary runs `engram ui --no-open` on a temporary
//! store with the real MiniLM model, and `tests/ui/ui_test.cjs` drives Debian's headless
//! Chromium through playwright-core (search by meaning, edit and revision, forget and
//! restore, supersession, the graph, untrusted text, keyboard, phone width, bad parameters,
//! a cross-site form). Screenshots land in `target/ui-screenshots/`.
//!
//! `scripts/test` installs playwright-core (pinned by `tests/ui/package-lock.json`) under
//! `target/ui-node/` and points `ENGRAM_TEST_PLAYWRIGHT` at it; without it, or without the
//! model or Chromium, this test fails and says what is missing (it never skips).

mod support;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn engram(home: &Path, model: &str, args: &[&str]) -> Value {
    let out = support::command(home)
        .env("ENGRAM_MODEL", model)
        .args(args)
        .arg("--json")
        .stdin(Stdio::null())
        .output()
        .expect("engram runs");
    assert!(
        out.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// The server, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn required(var: &str, why: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set: {why}"))
}

/// Starts `engram ui --no-open` (with a token when given) and waits for its address.
fn start_ui(home: &Path, model: &str, token: Option<&str>) -> (Server, String) {
    let mut cmd = support::command(home);
    cmd.env("ENGRAM_MODEL", model);
    if let Some(t) = token {
        cmd.env("ENGRAM_HTTP_TOKEN", t);
    }
    let mut child = cmd
        .args(["ui", "--no-open"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("engram ui starts");
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("engram ui prints its address");
    (server, url)
}

#[test]
fn the_web_ui_in_headless_chromium() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let model = required(
        "ENGRAM_TEST_MODEL_DIR",
        "run scripts/test, which fetches the all-MiniLM-L6-v2 weights",
    );
    let playwright = required(
        "ENGRAM_TEST_PLAYWRIGHT",
        "run scripts/test, which runs `npm ci` for tests/ui into target/ui-node and points this at its playwright-core",
    );
    let chromium =
        std::env::var("ENGRAM_TEST_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is missing: install Debian's chromium (`apt-get install -y chromium`; .ci/run does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path();
    let id = |v: &Value| v["id"].as_i64().expect("an id");
    let remember = |text: &str, extra: &[&str]| {
        let mut args = vec!["remember", text];
        args.extend_from_slice(extra);
        id(&engram(h, &model, &args))
    };
    let meaning = remember(
        "We store every session in SQLite because it needs no server",
        &["--room", "app", "--kind", "decision"],
    );
    remember(
        "Alice prefers tabs over spaces in the Go services",
        &["--room", "app", "--kind", "preference"],
    );
    remember(
        "The release checklist lives in the wiki under Operations",
        &["--room", "ops"],
    );
    let xss = remember(
        "XSS probe: <script>window.__xss = 1</script> <img src=x onerror=\"window.__xss = 2\"> \
         [click me](javascript:window.__xss=3) <b class=\"raw\">raw html</b>",
        &["--room", "ops", "--title", "XSS probe"],
    );
    let old = remember("Login tokens expire after twelve hours", &["--room", "app"]);
    let fixed = engram(
        h,
        &model,
        &[
            "correct",
            &old.to_string(),
            "--content",
            "Login tokens expire after two hours",
            "--reason",
            "the limit was lowered",
        ],
    );
    let successor = fixed["new_id"].as_i64().expect("new_id");
    engram(
        h,
        &model,
        &["link", &meaning.to_string(), &successor.to_string()],
    );
    let total = 6;

    let (server, url) = start_ui(h, &model, None);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/ui/"),
        "{url}"
    );

    // A second server on the same store with a token: the sign-in path.
    let token = "ui-browser-test-token-0123456789";
    let (token_server, token_url) = start_ui(h, &model, Some(token));

    let shots = root.join("target/ui-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let fixture = json!({
        "total": total,
        "graph_nodes": total,
        "meaning_query": "which database engine do we rely on",
        "meaning_hit": "SQLite",
        "meaning_id": meaning,
        "edited_content": "We store every session in SQLite because it needs no server and backs up as one file",
        "superseded_id": old,
        "successor_id": successor,
        "xss_id": xss,
        "xss_query": "XSS probe script",
        "token_url": token_url,
        "token": token,
    });
    let out = Command::new("node")
        .arg(root.join("tests/ui/ui_test.cjs"))
        .arg(&url)
        .arg(&shots)
        .arg(fixture.to_string())
        .env("ENGRAM_TEST_PLAYWRIGHT", &playwright)
        .env("ENGRAM_TEST_CHROMIUM", &chromium)
        .output()
        .expect("node runs (install Node.js 20 or later)");
    drop(server);
    drop(token_server);
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "browser scenarios failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
