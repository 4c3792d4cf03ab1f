//! Switching from seed C, through the built binary: C's database at engram's path, C's
//! HTTP API beside `/mcp`, C's tools answering as C does, and C's post-compaction hook.

mod support;

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;
use support::{Mcp, command};

/// C's tables as its DDL has them (the columns engram reads), with its full-text index.
const C_DDL: &str = r#"
PRAGMA journal_mode = WAL;
CREATE TABLE sessions (id TEXT PRIMARY KEY, project TEXT NOT NULL, directory TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT, summary TEXT);
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), type TEXT NOT NULL, title TEXT NOT NULL,
    content TEXT NOT NULL, tool_name TEXT, project TEXT, scope TEXT NOT NULL DEFAULT 'project',
    topic_key TEXT, normalized_hash TEXT, revision_count INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1, last_seen_at TEXT, pinned BOOLEAN NOT NULL DEFAULT 0,
    review_after TEXT, expires_at TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now')), deleted_at TEXT, created_by TEXT);
CREATE VIRTUAL TABLE observations_fts USING fts5(title, content, tool_name, type, project, topic_key,
    content='observations', content_rowid='id');
CREATE TRIGGER obs_fts_insert AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, content, tool_name, type, project, topic_key)
    VALUES (new.id, new.title, new.content, new.tool_name, new.type, new.project, new.topic_key);
END;
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), content TEXT NOT NULL, project TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')));
CREATE TABLE memory_relations (id INTEGER PRIMARY KEY, sync_id TEXT UNIQUE, source_id TEXT, target_id TEXT,
    relation TEXT, reason TEXT, evidence TEXT, confidence REAL, judgment_status TEXT, marked_by_actor TEXT,
    marked_by_kind TEXT, marked_by_model TEXT, session_id TEXT, created_at TEXT, updated_at TEXT,
    superseded_at TEXT, superseded_by_relation_id INTEGER);
INSERT INTO sessions VALUES ('s-1', 'webapp', '/home/u/webapp', '2026-01-10 09:00:00', '2026-01-10 10:00:00', 'Set up auth');
INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at)
    VALUES (17, 'obs-aaaaaaaaaaaaaaaa', 's-1', 'architecture', 'Auth model', 'JWT in httpOnly cookies, rotated hourly', 'webapp',
            '2026-01-10 09:10:00', '2026-01-10 09:10:00');
INSERT INTO user_prompts (session_id, content, project, created_at) VALUES ('s-1', 'add login', 'webapp', '2026-01-10 09:01:00');
"#;

fn write_c_db(home: &Path) {
    std::fs::create_dir_all(home).unwrap();
    rusqlite::Connection::open(home.join("engram.db"))
        .unwrap()
        .execute_batch(C_DDL)
        .unwrap();
}

struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `engram serve 127.0.0.1:0` (C's positional address), waiting for the line naming its port.
fn serve(home: &Path) -> Server {
    let mut child = command(home)
        .args(["serve", "127.0.0.1:0", "--tools", "compat-c"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = support::http_addr(&mut child);
    Server { child, addr }
}

/// One HTTP/1.1 request; the status and the JSON body.
fn req(addr: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    req_as(addr, method, path, body, "application/json")
}

/// [`req`] with another `Content-Type` (`curl -d` sends form data's).
fn req_as(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
    content_type: &str,
) -> (u16, Value) {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    c.write_all(head.as_bytes()).unwrap();
    c.write_all(body.as_bytes()).unwrap();
    let mut out = Vec::new();
    c.read_to_end(&mut out).expect("a reply within 60 s");
    let text = String::from_utf8_lossy(&out);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text}"));
    let (_, raw) = text.split_once("\r\n\r\n").unwrap_or(("", ""));
    let v = serde_json::from_str(raw.trim()).unwrap_or(Value::Null);
    (status, v)
}

/// C's relation rows travel as C's: `GET /conflicts` lists a pending relation as C's
/// `memory_relations` row (sync ids of both observations, `judgment_status`, C's
/// provenance fields), `GET /export` carries the relations (C's backup format 0.2.0 has
/// them), and importing that export elsewhere brings the relation back, still pending.
/// Before, /conflicts listed engram's judgment fields and the export had no relations.
#[test]
fn cs_relations_are_listed_exported_and_imported_as_cs_rows() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    write_c_db(&home);
    rusqlite::Connection::open(home.join("engram.db"))
        .unwrap()
        .execute_batch(
            "INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at)
                 VALUES (18, 'obs-bbbbbbbbbbbbbbbb', 's-1', 'architecture', 'Auth model v2',
                         'Opaque session ids in a server-side store', 'webapp',
                         '2026-01-11 09:10:00', '2026-01-11 09:10:00');
             INSERT INTO memory_relations (id, sync_id, source_id, target_id, relation, judgment_status,
                 marked_by_actor, marked_by_kind, created_at, updated_at)
                 VALUES (1, 'rel-0123456789abcdef', 'obs-bbbbbbbbbbbbbbbb', 'obs-aaaaaaaaaaaaaaaa',
                         'pending', 'pending', 'agent', 'agent', '2026-01-11 09:10:01', '2026-01-11 09:10:01');",
        )
        .unwrap();
    let srv = serve(&home);
    let (st, v) = req(&srv.addr, "GET", "/conflicts", None);
    assert_eq!(st, 200, "{v}");
    let row = &v[0];
    assert_eq!(row["sync_id"], "rel-0123456789abcdef", "{v}");
    assert_eq!(row["source_id"], "obs-bbbbbbbbbbbbbbbb", "{v}");
    assert_eq!(row["target_id"], "obs-aaaaaaaaaaaaaaaa", "{v}");
    assert_eq!(row["judgment_status"], "pending", "{v}");
    assert_eq!(row["relation"], "pending", "{v}");
    assert_eq!(row["marked_by_actor"], "agent", "{v}");
    assert!(row["created_at"].is_string(), "{v}");
    let (_, exported) = req(&srv.addr, "GET", "/export", None);
    assert_eq!(
        exported["relations"][0]["sync_id"], "rel-0123456789abcdef",
        "{exported}"
    );
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let srv2 = serve(&other);
    let (st, v) = req(&srv2.addr, "POST", "/import", Some(exported));
    assert_eq!(st, 200, "{v}");
    let (_, v) = req(&srv2.addr, "GET", "/conflicts", None);
    assert_eq!(v[0]["sync_id"], "rel-0123456789abcdef", "{v}");
    assert_eq!(v[0]["judgment_status"], "pending", "{v}");
}

#[test]
fn seed_cs_database_and_http_api_work_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    write_c_db(&home);
    let srv = serve(&home);
    let a = srv.addr.as_str();

    // C's id still names C's observation (the server opens, and converts, the store on
    // its first request), and C's original is kept beside it.
    let (st, v) = req(a, "GET", "/observations/17", None);
    assert_eq!(st, 200, "{v}");
    let backups: Vec<_> = std::fs::read_dir(&home)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".seed-c-"))
        .collect();
    assert_eq!(backups.len(), 1, "one backup of C's database");
    assert!(v["result"].as_str().unwrap().contains("Auth model"), "{v}");
    let (st, _) = req(a, "GET", "/observations/9999", None);
    assert_eq!(st, 404);

    // A plugin's session and save, with C's body fields.
    let (st, v) = req(
        a,
        "POST",
        "/sessions",
        Some(json!({"id": "s-2", "project": "webapp", "directory": "/tmp"})),
    );
    assert_eq!(st, 201, "{v}");
    let (st, v) = req(
        a,
        "POST",
        "/observations",
        Some(
            json!({"session_id": "s-2", "type": "decision", "title": "Cache layer",
                    "content": "Use Redis for the cache layer with a five minute expiry",
                    "project": "webapp", "tool_name": "Edit"}),
        ),
    );
    assert_eq!(st, 201, "{v}");
    let new_id = v["id"].as_i64().expect("an id");
    assert!(new_id > 17);

    let (st, v) = req(a, "GET", "/search?q=Redis%20cache&project=webapp", None);
    assert_eq!(st, 200, "{v}");
    // C's bare array of whole observations.
    assert_eq!(v[0]["id"], new_id, "{v}");
    assert_eq!(
        v[0]["content"], "Use Redis for the cache layer with a five minute expiry",
        "{v}"
    );
    let (st, v) = req(a, "GET", "/search?q=zyzzyva&project=webapp", None);
    assert_eq!((st, v), (200, json!([])));

    let (st, v) = req(
        a,
        "GET",
        &format!("/timeline?observation_id={new_id}"),
        None,
    );
    // C's timeline object, whole observations.
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["focus"]["id"], new_id, "{v}");
    assert_eq!(v["total_in_range"], 1, "{v}");
    assert!(v["before"].is_array() && v["after"].is_array(), "{v}");
    assert!(v["session_info"]["id"].is_string(), "{v}");

    // Prompts: save, list, search, delete.
    let (st, v) = req(
        a,
        "POST",
        "/prompts",
        Some(
            json!({"content": "how do we cache sessions?", "session_id": "s-2", "project": "webapp"}),
        ),
    );
    assert_eq!(st, 201, "{v}");
    let pid = v["id"].as_i64().unwrap();
    let (_, v) = req(a, "GET", "/prompts/recent?project=webapp", None);
    assert_eq!(v.as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v[0]["project"], "webapp", "C's key: {v}");
    assert!(v[0].get("room").is_none(), "{v}");
    let (_, v) = req(a, "GET", "/prompts/search?q=CACHE", None);
    assert_eq!(v.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v[0]["project"], "webapp", "{v}");
    let (st, _) = req(a, "DELETE", &format!("/prompts/{pid}"), None);
    assert_eq!(st, 200);
    let (_, v) = req(a, "GET", "/prompts/search?q=cache", None);
    assert_eq!(v, json!([]), "an empty list is [], never null");

    // Context: C's sections and footer; the compaction variant asks for the summary first.
    let (st, v) = req(a, "GET", "/context?project=webapp", None);
    assert_eq!(st, 200, "{v}");
    let ctx = v["context"].as_str().unwrap();
    for part in [
        "### Recent Sessions",
        "### Recent User Prompts",
        "add login",
        "Memory stats: 2 sessions",
    ] {
        assert!(ctx.contains(part), "{part:?} missing from {ctx}");
    }
    let (_, v) = req(a, "GET", "/context/compaction?session_id=s-2", None);
    assert!(
        v["context"]
            .as_str()
            .unwrap()
            .contains("FIRST ACTION REQUIRED: Call mem_session_summary"),
        "{v}"
    );

    let (_, v) = req(a, "GET", "/stats", None);
    assert_eq!(
        (v["sessions"].clone(), v["prompts"].clone()),
        (json!(2), json!(1)),
        "{v}"
    );
    let (_, v) = req(a, "GET", "/sessions/recent?project=webapp", None);
    assert_eq!(v[0]["id"], "s-2", "{v}");
    assert_eq!(v[0]["project"], "webapp", "C's key: {v}");
    let (_, v) = req(a, "GET", "/sessions/s-2", None);
    assert_eq!(v["project"], "webapp", "{v}");
    let (st, v) = req(a, "GET", "/conflicts", None);
    assert_eq!(st, 200, "{v}");
    assert!(v.is_array());
    let (st, v) = req(
        a,
        "POST",
        "/sessions/s-2/end",
        Some(json!({"summary": "cache chosen"})),
    );
    assert_eq!(st, 200, "{v}");
    // Export in C's format, and import it into a fresh server: C's ids come along.
    let (st, exported) = req(a, "GET", "/export", None);
    assert_eq!(st, 200, "{exported}");
    assert_eq!(exported["version"], "0.2.0");
    assert_eq!(
        exported["observations"].as_array().unwrap().len(),
        2,
        "{exported}"
    );
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let srv2 = serve(&other);
    let (st, v) = req(&srv2.addr, "POST", "/import", Some(exported.clone()));
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["observations_imported"], 2, "{v}");
    let (_, v) = req(&srv2.addr, "GET", "/observations/17", None);
    assert!(v["result"].as_str().unwrap().contains("Auth model"), "{v}");
    let (_, v) = req(&srv2.addr, "POST", "/import", Some(exported));
    assert_eq!(
        v["observations_imported"], 0,
        "re-import creates nothing: {v}"
    );
    let (st, _) = req(&srv2.addr, "POST", "/import", Some(json!({"nope": 1})));
    assert_eq!(st, 400);

    let (st, v) = req(a, "GET", "/search?q=x&limit=many", None);
    assert_eq!(st, 400);
    assert!(v["error"].as_str().unwrap().contains("limit"), "{v}");
}

fn text(r: &Value) -> String {
    r["structuredContent"]["result"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| r.to_string())
}

/// A stdio server launched in a folder holding several repositories (C's #248 setup) is
/// in C's ambiguous case: it says so and refuses writes that name no project, as when the
/// folder is passed as `cwd` (tester-c: it filed them in `common`).
#[test]
fn a_server_launched_above_several_repositories_refuses_unnamed_writes() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let work = dir.path().join("work");
    for repo in ["api", "web"] {
        std::fs::create_dir_all(work.join(repo).join(".git")).unwrap();
    }
    let mut m = Mcp::start_in(&home, &work, &["--tools", "compat-c"], "c-user");
    let r = m.call("mem_current_project", json!({}));
    assert_eq!(r["structuredContent"]["project_source"], "ambiguous", "{r}");
    let r = m.call(
        "mem_save",
        json!({"title": "Ambig", "content": "where does this go"}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("ambiguous_project"), "{r}");
    // Reads there say which project they read, and how to choose (tester-c).
    for (tool, args) in [
        ("mem_search", json!({"query": "axum routers"})),
        ("mem_context", json!({})),
    ] {
        let r = m.call(tool, args);
        let w = r["structuredContent"]["warning"].as_str().unwrap_or("");
        assert!(w.contains("several repositories (api, web)"), "{tool}: {r}");
    }
    let r = m.call(
        "mem_save",
        json!({"title": "Router", "content": "The API uses axum routers", "project": "api",
               "project_choice_reason": "user_selected_after_ambiguous_project"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    // Launched in one of them, the server files there.
    let mut one = Mcp::start_in(&home, &work.join("web"), &["--tools", "compat-c"], "c-user");
    let r = one.call(
        "mem_save",
        json!({"title": "Build", "content": "The web app builds with vite"}),
    );
    assert_eq!(r["structuredContent"]["project"], "web", "{r}");
}

#[test]
fn seed_cs_tools_answer_as_c_does() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let work = dir.path().join("work");
    for repo in ["api", "web"] {
        std::fs::create_dir_all(work.join(repo).join(".git")).unwrap();
    }
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");

    // A folder of several repositories: C reports the ambiguity and refuses writes.
    let r = m.call("mem_current_project", json!({"cwd": work}));
    assert_eq!(r["structuredContent"]["project_source"], "ambiguous", "{r}");
    assert_eq!(
        r["structuredContent"]["available_projects"],
        json!(["api", "web"])
    );
    let r = m.call(
        "mem_save",
        json!({"title": "t", "content": "some content here", "cwd": work}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("ambiguous_project"), "{r}");
    // Starting a session there is refused alike, not stored under `common`.
    let r = m.call(
        "mem_session_start",
        json!({"id": "s-amb", "directory": work}),
    );
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.to_string().contains("ambiguous_project"), "{r}");
    let r = m.call(
        "mem_save",
        json!({"title": "Router", "content": "The API uses axum routers", "cwd": work,
               "project": "api", "project_choice_reason": "user_selected_after_ambiguous_project"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let saved = r["structuredContent"]["id"].as_i64().unwrap();

    // scope global is C's shared scope, shown back as global with the project it came from.
    let r = m.call(
        "mem_save",
        json!({"title": "Editor", "content": "The user prefers tabs over spaces", "scope": "global",
               "project": "api"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let editor = r["structuredContent"]["id"].as_i64().unwrap();
    let t = text(&m.call("mem_get_observation", json!({"id": editor})));
    assert!(
        t.contains("Scope: global") && t.contains("Project: api"),
        "{t}"
    );

    // Sessions are sessions, and prompts are counted.
    let r = m.call(
        "mem_session_start",
        json!({"id": "sess-9", "directory": work.join("api")}),
    );
    assert_eq!(r["structuredContent"]["project"], "api", "{r}");
    m.call(
        "mem_save_prompt",
        json!({"content": "wire the router", "session_id": "sess-9", "project": "api"}),
    );
    let r = m.call("mem_stats", json!({}));
    let t = text(&r);
    // sess-9, and the sessions C creates for saves that name none: manual-save-api and
    // manual-save-common.
    assert!(t.contains("- Sessions: 3"), "{t}");
    assert!(t.contains("- Prompts: 1"), "{t}");

    // The timeline stays in the memory's session.
    let r = m.call("mem_timeline", json!({"observation_id": saved}));
    let t = text(&r);
    assert!(t.contains("Total observations in session: 1"), "{t}");
    assert!(!t.contains("Editor"), "a memory of another session: {t}");

    // C's contract fields are in the schemas.
    let tools = m.request("tools/list", json!({}));
    let schema = |name: &str| {
        tools["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["inputSchema"]["properties"]
            .clone()
    };
    for (tool, field) in [
        ("mem_context", "compact"),
        ("mem_get_observation", "include_history"),
        ("mem_get_observation", "history_cursor"),
        ("mem_review", "id"),
        ("mem_save", "project_choice_reason"),
        ("mem_save", "recovery_token"),
        ("mem_save", "observation"),
        ("mem_session_summary", "recovery_token"),
        ("mem_save_prompt", "project_choice_reason"),
        ("mem_search", "response_format"),
        ("mem_session_start", "directory"),
        ("mem_update", "scope"),
    ] {
        assert!(schema(tool).get(field).is_some(), "{tool} lacks {field}");
    }

    // C's Japanese passive-capture header.
    let r = m.call(
        "mem_capture_passive",
        json!({"content": "## 重要な学び：\n- マイグレーションはテストの前に必ず実行すること、忘れると失敗する\n", "project": "api"}),
    );
    assert!(text(&r).contains("extracted=1"), "{r}");
}

#[test]
fn post_compaction_hook_asks_for_the_summary_first() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut child = command(&home)
        .args(["hook", "session-start"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let input = json!({"session_id": "x", "cwd": dir.path(), "source": "compact"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("FIRST ACTION REQUIRED: Call mem_session_summary"),
        "{ctx}"
    );
}

/// Runs the built binary in `dir`; its stdout, failing the test on a non-zero exit.
fn engram_in(home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = command(home).current_dir(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn seed_cs_cli_verbs() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let proj = dir.path().join("Shop Front");
    std::fs::create_dir_all(&proj).unwrap();
    let out = engram_in(&home, &proj, &["init", "shop"]);
    assert!(out.contains("\"shop\""), "{out}");
    let cfg = std::fs::read_to_string(proj.join(".engram/config.json")).unwrap();
    assert!(cfg.contains("\"project_name\": \"shop\""), "{cfg}");
    let again = command(&home)
        .current_dir(&proj)
        .args(["init", "shop"])
        .output()
        .unwrap();
    assert!(
        !again.status.success(),
        "init refuses to replace without --force"
    );

    let out = engram_in(
        &home,
        &proj,
        &[
            "save",
            "Checkout flow",
            "Payments go through Stripe checkout sessions",
            "--type",
            "decision",
        ],
    );
    assert!(
        out.starts_with("Memory saved: \"Checkout flow\" (decision)"),
        "{out}"
    );
    let out = engram_in(&home, &proj, &["--json", "search", "Stripe checkout"]);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["results"][0]["project"], "shop", "{v}");
    let id = v["results"][0]["id"].as_i64().unwrap();
    let out = engram_in(&home, &proj, &["timeline", &id.to_string()]);
    assert!(
        out.contains(&format!(">>> #{id} [decision] Checkout flow <<<")),
        "{out}"
    );
    let out = engram_in(&home, &proj, &["projects", "list"]);
    assert!(out.contains("shop\t1 observations\t1 sessions"), "{out}");
    let out = engram_in(&home, &proj, &["conflicts", "list"]);
    assert_eq!(out.trim(), "No pending conflicts.");
    let out = engram_in(&home, &proj, &["version"]);
    assert!(out.starts_with("engram "), "{out}");
    // C's `engram context PROJECT`, from a folder that is another project.
    let out = engram_in(&home, dir.path(), &["--json", "context", "shop"]);
    assert!(out.contains("Stripe checkout"), "{out}");
    // …in C's words (tester-c: it printed engram's briefing).
    let out = engram_in(&home, dir.path(), &["context", "shop"]);
    assert!(out.starts_with("## Memory from Previous Sessions"), "{out}");
    assert!(out.contains("### Recent Observations"), "{out}");

    // C's ENGRAM_DATA_DIR names the store's folder when ENGRAM_HOME is not set.
    let data = dir.path().join("c-data");
    let out = command(&home)
        .env_remove("ENGRAM_HOME")
        .env("ENGRAM_DATA_DIR", &data)
        .current_dir(&proj)
        .args(["save", "Data dir", "The store follows ENGRAM_DATA_DIR"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(data.join("engram.db").is_file());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("ENGRAM_DATA_DIR is not"),
        "not flagged unknown"
    );
}

/// C's `conflicts scan` over memories written with resolution off: the dry run lists the
/// pair a write would have offered and writes nothing; `--apply` opens it pending for
/// `mem_judge` (a second scan finds nothing new); `conflicts stats` counts it; C's LLM
/// flag is refused naming `mem_judge`.
#[test]
fn conflicts_scan_opens_what_a_write_would_have_offered_and_stats_count_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "resolve = false\n").unwrap();
    for text in [
        "The checkout API timeout is 30 seconds",
        "The checkout API timeout is 10 seconds",
        "The office plants are watered on Mondays",
    ] {
        engram_ok(
            &home,
            &["remember", text, "--room", "shop", "--kind", "fact"],
        );
    }
    let dry: Value = serde_json::from_str(&engram_ok(
        &home,
        &["--json", "conflicts", "scan", "--project", "shop"],
    ))
    .unwrap();
    assert_eq!(dry["scanned"], 3, "{dry}");
    let pairs = dry["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{dry}");
    assert!(pairs[0]["judgment_id"].is_null(), "{dry}");
    assert_eq!(
        engram_ok(&home, &["conflicts", "list"]).trim(),
        "No pending conflicts.",
        "a dry run writes nothing"
    );
    let applied: Value = serde_json::from_str(&engram_ok(
        &home,
        &[
            "--json",
            "conflicts",
            "scan",
            "--project",
            "shop",
            "--apply",
        ],
    ))
    .unwrap();
    let id = applied["pairs"][0]["judgment_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(engram_ok(&home, &["conflicts", "list"]).contains(&id));
    let again: Value = serde_json::from_str(&engram_ok(
        &home,
        &[
            "--json",
            "conflicts",
            "scan",
            "--project",
            "shop",
            "--apply",
        ],
    ))
    .unwrap();
    assert_eq!(
        again["pairs"],
        json!([]),
        "a pair with a judgment is not opened twice"
    );
    let stats: Value =
        serde_json::from_str(&engram_ok(&home, &["--json", "conflicts", "stats"])).unwrap();
    assert_eq!(
        (
            stats["total"].clone(),
            stats["by_status"]["pending"].clone()
        ),
        (json!(1), json!(1)),
        "{stats}"
    );
    let out = command(&home)
        .args(["conflicts", "scan", "--semantic"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("mem_judge"));
}

#[test]
fn setup_keeps_seed_cs_protocol_and_registers_compat_c() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    let home = dir.path().join("engram-home");
    std::fs::create_dir_all(user.join(".gemini")).unwrap();
    let protocol =
        "## Engram memory\nCall mem_save after every decision; mem_search before work.\n";
    std::fs::write(user.join(".gemini/GEMINI.md"), protocol).unwrap();
    let out = command(&home)
        .env("HOME", &user)
        .env("PATH", "/nonexistent")
        .args(["setup", "gemini", "--non-interactive", "--no-model"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("profile compat-c"),
        "setup says which profile: {stdout}"
    );
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(user.join(".gemini/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["mcpServers"]["engram"]["args"],
        json!(["mcp", "--tools=compat-c"]),
        "{settings}"
    );
    assert_eq!(
        std::fs::read_to_string(user.join(".gemini/GEMINI.md")).unwrap(),
        protocol,
        "C's instructions are left as they are"
    );

    // Codex, C's protocol in C's engram-instructions.md: compat-c in config.toml.
    std::fs::create_dir_all(user.join(".codex")).unwrap();
    std::fs::write(user.join(".codex/engram-instructions.md"), protocol).unwrap();
    let out = command(&home)
        .env("HOME", &user)
        .env("PATH", "/nonexistent")
        .args(["setup", "codex", "--non-interactive", "--no-model"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = std::fs::read_to_string(user.join(".codex/config.toml")).unwrap();
    assert!(
        toml.contains(r#"args = ["mcp", "--tools=compat-c"]"#),
        "{toml}"
    );

    // Claude Code, C's protocol in CLAUDE.md: compat-c, and C's SubagentStop capture.
    std::fs::create_dir_all(user.join(".claude")).unwrap();
    std::fs::write(user.join(".claude/CLAUDE.md"), protocol).unwrap();
    let out = command(&home)
        .env("HOME", &user)
        .env("PATH", "/nonexistent")
        .args(["setup", "claude", "--non-interactive", "--no-model"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(user.join(".claude/settings.json")).unwrap())
            .unwrap();
    let stop = settings["hooks"]["SubagentStop"].to_string();
    assert!(stop.contains("hook subagent-stop"), "{settings}");
    assert_eq!(
        std::fs::read_to_string(user.join(".claude/CLAUDE.md")).unwrap(),
        protocol
    );
}

#[test]
fn subagent_stop_hook_saves_key_learnings() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut child = command(&home)
        .args(["hook", "subagent-stop"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let input = json!({"session_id": "x", "cwd": dir.path(),
        "last_assistant_message": "Done.\n## Key Learnings\n- The build cache must be cleared after a toolchain upgrade\n"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let found = command(&home)
        .args(["--json", "search", "build cache toolchain"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&found.stdout).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn a_quiet_open_session_gets_cs_save_nudge() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    write_c_db(&home);
    // C's session s-1 ended; this one is still open, started 40 minutes ago, its last
    // save 35 minutes ago. One left open for months (`stale`) never nudges.
    rusqlite::Connection::open(home.join("engram.db"))
        .unwrap()
        .execute_batch(
            "INSERT INTO sessions VALUES ('s-open', 'legacy', '/home/u/legacy', datetime('now', '-40 minutes'), NULL, NULL);
             INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at)
             VALUES (30, 'obs-dddddddddddddddd', 's-open', 'bugfix', 'Flaky login', 'The login test waited on a fixed sleep', 'legacy',
                     datetime('now', '-35 minutes'), datetime('now', '-35 minutes'));
             INSERT INTO sessions VALUES ('s-stale', 'stale', '/home/u/stale', '2026-01-10 09:00:00', NULL, NULL);
             INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at)
             VALUES (31, 'obs-eeeeeeeeeeeeeeee', 's-stale', 'bugfix', 'Flaky signup', 'The signup test waited on a fixed sleep', 'stale',
                     '2026-01-10 09:05:00', '2026-01-10 09:05:00');",
        )
        .unwrap();
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    let r = m.call(
        "mem_search",
        json!({"query": "login test", "project": "legacy"}),
    );
    let t = text(&r);
    assert!(t.contains("#30"), "{t}");
    assert!(
        t.contains("⚠️ No mem_save calls for this project in"),
        "{t}"
    );
    let r = m.call("mem_context", json!({"project": "legacy"}));
    assert!(text(&r).contains("No mem_save calls"), "{r}");
    let r = m.call(
        "mem_search",
        json!({"query": "signup test", "project": "stale"}),
    );
    let t = text(&r);
    assert!(t.contains("#31") && !t.contains("No mem_save calls"), "{t}");
    // A project whose session is closed is not nudged.
    let r = m.call(
        "mem_search",
        json!({"query": "JWT cookies", "project": "webapp"}),
    );
    assert!(!text(&r).contains("No mem_save calls"), "{r}");
}

#[test]
fn projects_consolidate_merges_spellings_of_one_project() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    for (room, text) in [
        ("my-app", "The app ships weekly on Tuesdays"),
        ("my-app", "The app logs to stderr in JSON"),
        ("my_app", "The app's cache lives in Redis"),
        ("my__app", "The app's queue is SQS"),
        ("other", "Other things live here"),
    ] {
        engram_in(&home, dir.path(), &["remember", text, "--room", room]);
    }
    let out = engram_in(
        &home,
        dir.path(),
        &["projects", "consolidate", "--all", "--dry-run"],
    );
    assert_eq!(out.trim(), "Would merge my__app, my_app into my-app");
    let out = engram_in(&home, dir.path(), &["projects", "consolidate", "--all"]);
    assert_eq!(
        out.trim(),
        "Merged my__app, my_app into my-app (2 memories moved)"
    );
    let out = engram_in(&home, dir.path(), &["projects", "list"]);
    assert!(out.contains("my-app\t4 observations"), "{out}");
    assert!(!out.contains("my_app") && out.contains("other\t1"), "{out}");
    let out = engram_in(&home, dir.path(), &["projects", "consolidate", "--all"]);
    assert_eq!(out.trim(), "No project spellings to consolidate.");
    // An unknown relation is a caller's error naming the field.
    let out = command(&home)
        .args(["conflicts", "show", "rel-0000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("judgment_id"));
}

/// A reply quotes what was stored, never the raw input: a token in `mem_save`'s title or
/// in `mem_save_prompt`'s text is redacted in the result as in the store.
#[test]
fn seed_cs_save_replies_do_not_echo_secrets() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let token = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    // A session there makes `webapp` a known project (C refuses an unknown one).
    m.call(
        "mem_session_start",
        json!({"id": "s-w", "project": "webapp"}),
    );
    let saved = m.call(
        "mem_save",
        json!({ "title": format!("deploy token {token}"), "content": "the CI deploy key", "project": "webapp" }),
    );
    let prompt = m.call(
        "mem_save_prompt",
        json!({ "content": format!("use DB_PASSWORD=hunter2secret and {token}"), "project": "webapp" }),
    );
    for r in [&saved, &prompt] {
        let all = r.to_string();
        assert!(!all.contains(token), "token echoed: {all}");
        assert!(!all.contains("hunter2secret"), "password echoed: {all}");
        assert!(
            text(r).contains("REDACTED") || text(r).contains("redacted"),
            "{r}"
        );
    }
    m.finish();
}

/// C's dedupe key is content, title and type: the same text saved under another title is
/// another observation; under the same title (case and spaces aside) it is the same one,
/// reinforced. With resolution on, the near copy under another title is offered as a
/// candidate, never folded. Before, engram reinforced the other title's memory.
#[test]
fn cs_save_folds_only_the_same_title_and_type() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    for resolve in ["false", "true"] {
        let mut m = Mcp::start_with(
            &home,
            &["--tools", "compat-c"],
            "c-user",
            &[("ENGRAM_RESOLVE", resolve)],
        );
        let project = format!("webapp-{resolve}");
        m.call(
            "mem_session_start",
            json!({"id": format!("s-{resolve}"), "project": project}),
        );
        let content = "Retry the payment webhook three times with exponential backoff";
        let save = |m: &mut Mcp, title: &str, kind: &str| {
            m.call(
                "mem_save",
                json!({"title": title, "content": content, "type": kind, "project": project}),
            )["structuredContent"]
                .clone()
        };
        let first = save(&mut m, "Webhook retries", "decision");
        let other_title = save(&mut m, "Payment provider notes", "decision");
        assert_ne!(first["id"], other_title["id"], "{resolve}: {other_title}");
        let same = save(&mut m, " webhook RETRIES", "decision");
        assert_eq!(first["id"], same["id"], "{resolve}: {same}");
        let other_type = save(&mut m, "Webhook retries", "bugfix");
        assert_ne!(first["id"], other_type["id"], "{resolve}: {other_type}");
        m.finish();
    }
}

/// C's cloud verbs are refused by name, pointing at the team server, and write nothing:
/// a C user learns what to run instead of reading "unknown command".
#[test]
fn cloud_verbs_are_refused_naming_the_team_server() {
    let home = tempfile::tempdir().unwrap();
    for args in [
        &["cloud", "enroll", "--token", "x"][..],
        &["cloud", "status"][..],
        &["sync", "--cloud"][..],
    ] {
        let out = command(home.path()).args(args).output().unwrap();
        assert!(!out.status.success(), "engram {args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no cloud service") && err.contains("serve --store postgres://"),
            "engram {args:?}: {err}"
        );
        assert!(!err.contains("unrecognized subcommand"), "{err}");
    }
    assert!(
        !home.path().join(".engram").exists(),
        "a refused sync wrote a sync folder"
    );
}

// What an outside seed-C user found after switching: C never recorded use, so a
// converted memory's forgetting clock starts at its conversion; C's required fields.

/// C's observations table (the columns engram reads) with three memories written a year
/// before the switch and never recalled (C keeps no usage history).
const C_DDL_A_YEAR_AGO: &str = r#"
CREATE TABLE sessions (id TEXT PRIMARY KEY, project TEXT NOT NULL, directory TEXT NOT NULL,
    started_at TEXT NOT NULL DEFAULT (datetime('now')), ended_at TEXT, summary TEXT);
CREATE TABLE observations (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), type TEXT NOT NULL, title TEXT NOT NULL,
    content TEXT NOT NULL, tool_name TEXT, project TEXT, scope TEXT NOT NULL DEFAULT 'project',
    topic_key TEXT, normalized_hash TEXT, revision_count INTEGER NOT NULL DEFAULT 1,
    duplicate_count INTEGER NOT NULL DEFAULT 1, last_seen_at TEXT, pinned BOOLEAN NOT NULL DEFAULT 0,
    review_after TEXT, expires_at TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')),
    updated_at TEXT NOT NULL DEFAULT (datetime('now')), deleted_at TEXT, created_by TEXT);
CREATE TABLE user_prompts (id INTEGER PRIMARY KEY AUTOINCREMENT, sync_id TEXT,
    session_id TEXT NOT NULL REFERENCES sessions(id), content TEXT NOT NULL, project TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')));
INSERT INTO sessions VALUES ('s-1', 'webapp', '/home/u/webapp', datetime('now', '-400 days'), NULL, NULL);
INSERT INTO observations (id, sync_id, session_id, type, title, content, project, created_at, updated_at) VALUES
    (3, 'obs-aaaaaaaaaaaaaaaa', 's-1', 'bugfix', 'Cache TTL', 'Redis cache TTL is 300s for sessions', 'webapp',
        datetime('now', '-400 days'), datetime('now', '-400 days')),
    (4, 'obs-bbbbbbbbbbbbbbbb', 's-1', 'discovery', 'Flaky test', 'The login test flakes when the clock skews', 'webapp',
        datetime('now', '-380 days'), datetime('now', '-380 days')),
    (5, 'obs-cccccccccccccccc', 's-1', 'decision', 'Auth model', 'JWT in httpOnly cookies, rotated hourly', 'webapp',
        datetime('now', '-365 days'), datetime('now', '-365 days'));
"#;

fn engram_ok(home: &Path, args: &[&str]) -> String {
    let out = command(home).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn maintenance_keeps_converted_c_memories_that_c_never_recorded_use_of() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(".engram");
    std::fs::create_dir_all(&home).unwrap();
    rusqlite::Connection::open(home.join("engram.db"))
        .unwrap()
        .execute_batch(C_DDL_A_YEAR_AGO)
        .unwrap();
    engram_ok(&home, &["stats"]);
    engram_ok(&home, &["maintain"]);
    let stats = engram_ok(&home, &["stats", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stats).unwrap();
    assert_eq!(
        v["by_tier"],
        serde_json::json!({"active": 3}),
        "maintenance archived converted memories: {stats}"
    );
    assert_eq!(v["events_by_kind"]["import"], 3, "{stats}");
    let shown = engram_ok(&home, &["show", "3"]);
    assert!(shown.contains("tier:       active"), "{shown}");
}

#[test]
fn c_post_observations_refuses_a_body_without_its_required_fields() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(".engram");
    std::fs::create_dir_all(&home).unwrap();
    let server = serve(&home);
    let (status, body) = req(
        &server.addr,
        "POST",
        "/observations",
        Some(json!({"title": "x"})),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["field"], "session_id", "{body}");
    let (status, body) = req(
        &server.addr,
        "POST",
        "/observations",
        Some(json!({"session_id": "s-1", "title": "x"})),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["field"], "content", "{body}");
    // A session nobody started is C's unknown_session; once started, the save goes in.
    let save = json!({"session_id": "s-1", "title": "x", "content": "a fact", "type": "discovery"});
    let (status, body) = req(&server.addr, "POST", "/observations", Some(save.clone()));
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("unknown_session"), "{body}");
    let (status, body) = req(
        &server.addr,
        "POST",
        "/sessions",
        Some(json!({"id": "s-1", "project": "webapp", "directory": "/tmp"})),
    );
    assert_eq!(status, 201, "{body}");
    let (status, body) = req(&server.addr, "POST", "/observations", Some(save));
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["project"], "webapp", "the session's project: {body}");
    // C cut a long observation at 50 KB; engram stores every word, as linked parts.
    let log: String = (0..6000)
        .map(|i| format!("line {i} of the pasted build log: step ok\n"))
        .collect();
    assert!(log.len() > 150_000);
    let long =
        json!({"session_id": "s-1", "title": "build log", "content": log, "type": "discovery"});
    let (status, body) = req(&server.addr, "POST", "/observations", Some(long));
    assert_eq!(status, 201, "{body}");
    let mut ids = vec![body["id"].as_i64().unwrap()];
    ids.extend(
        body["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_i64().unwrap()),
    );
    assert!(ids.len() >= 3, "{body}");
    assert!(
        body["result"].as_str().unwrap().contains("linked parts"),
        "{body}"
    );
    let mut joined = String::new();
    for id in ids {
        let (status, o) = req(&server.addr, "GET", &format!("/observations/{id}"), None);
        assert_eq!(status, 200, "GET /observations/{id}");
        assert_eq!(o["id"], id);
        // C's row, as a plugin reads it.
        assert!(
            o["content"].as_str().is_some_and(|c| log.contains(c)) && o["project"] == "webapp",
            "GET /observations/{id} has C's fields"
        );
        let shown: Value =
            serde_json::from_str(&engram_ok(&home, &["show", &id.to_string(), "--json"])).unwrap();
        joined.push_str(shown["memory"]["content"].as_str().unwrap());
    }
    // C's error object is the body, not a string inside it.
    let stray = json!({"session_id": "s-nobody", "title": "t", "content": "some text here"});
    let (status, body) = req(&server.addr, "POST", "/observations", Some(stray));
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error_code"], "unknown_session", "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| !e.starts_with('{')),
        "{body}"
    );
    // C served no soft-deleted observation.
    let one = json!({"session_id": "s-1", "title": "gone", "content": "a fact soon deleted", "type": "discovery"});
    let (_, body) = req(&server.addr, "POST", "/observations", Some(one));
    let gone = body["id"].as_i64().unwrap();
    let (status, _) = req(
        &server.addr,
        "DELETE",
        &format!("/observations/{gone}"),
        None,
    );
    assert_eq!(status, 200);
    let (status, body) = req(&server.addr, "GET", &format!("/observations/{gone}"), None);
    assert_eq!(status, 404, "{body}");
    assert!(
        joined == log,
        "the parts are the whole text ({} of {} bytes)",
        joined.len(),
        log.len()
    );
}

/// A stdio server's own directory is wherever its client started it (here: the store's
/// folder), so C's tools take the caller's `directory`/`cwd`: it decides the project
/// (`[room_paths]` first, then the repository), a write naming only its session follows
/// the session's project, and a search naming neither searches the open host session's.
#[test]
fn the_callers_directory_and_session_decide_cs_project() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let shop = dir.path().join("code").join("shop");
    std::fs::create_dir_all(shop.join(".git")).unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(notes.join("ops")).unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[room_paths]\n{:?} = \"ops-room\"\n",
            notes.to_string_lossy()
        ),
    )
    .unwrap();
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    let project = |r: &Value| r["structuredContent"]["project"].clone();

    let r = m.call(
        "mem_session_start",
        json!({"id": "host-1", "directory": shop}),
    );
    assert_eq!(project(&r), "shop", "{r}");
    let r = m.call(
        "mem_save",
        json!({"title": "Checkout", "content": "The checkout retries card payments twice",
               "session_id": "host-1"}),
    );
    assert_eq!(project(&r), "shop", "the session's project: {r}");
    let r = m.call(
        "mem_session_summary",
        json!({"content": "Goal: payments. Done: retries.", "session_id": "host-1"}),
    );
    assert_eq!(project(&r), "shop", "{r}");
    m.call(
        "mem_save_prompt",
        json!({"content": "make checkout retry", "session_id": "host-1"}),
    );
    let r = m.call("mem_list_projects", json!({}));
    let projects = r["structuredContent"]["projects"]
        .as_array()
        .unwrap()
        .clone();
    let shop_row = projects.iter().find(|p| p["name"] == "shop").expect("shop");
    assert_eq!(shop_row["prompt_count"], 1, "{r}");
    assert_eq!(shop_row["directories"], json!([shop]), "{r}");
    assert!(
        projects.iter().all(|p| p["name"] != "common"),
        "nothing went to common: {r}"
    );

    // The directory decides: a `[room_paths]` room.
    let r = m.call(
        "mem_save",
        json!({"title": "Runbook", "content": "Restart the ingest worker after a deploy",
               "directory": notes.join("ops")}),
    );
    assert_eq!(project(&r), "ops-room", "{r}");
    let r = m.call(
        "mem_search",
        json!({"query": "ingest worker deploy", "cwd": notes.join("ops")}),
    );
    assert_eq!(
        r["structuredContent"]["results"][0]["project"], "ops-room",
        "{r}"
    );
    // No project and no directory: C searches the current project, the open session's.
    let r = m.call("mem_search", json!({"query": "checkout card payments"}));
    assert_eq!(
        r["structuredContent"]["results"][0]["project"], "shop",
        "{r}"
    );
    m.finish();
}

/// C's refusals: a write naming a session nobody started (`unknown_session`; C creates
/// only its own per-project default session), and an explicit project nothing backs
/// (`unknown_project`: no memories, session, configuration or ambiguity choice), in C's
/// error shape; nothing is written.
#[test]
fn cs_writes_refuse_unknown_sessions_and_projects() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let api = dir.path().join("work").join("api");
    std::fs::create_dir_all(api.join(".git")).unwrap();
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    let refused = |r: &Value, code: &str| {
        assert_eq!(r["isError"], true, "{r}");
        let body: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap())
            .unwrap_or_else(|_| panic!("C's JSON error: {r}"));
        assert_eq!(body["error_code"], code, "{r}");
        assert!(body["available_projects"].is_array(), "{r}");
    };

    let r = m.call(
        "mem_save",
        json!({"title": "t", "content": "a fact", "session_id": "never-started"}),
    );
    refused(&r, "unknown_session");
    let r = m.call(
        "mem_session_summary",
        json!({"content": "Goal: x", "session_id": "never-started"}),
    );
    refused(&r, "unknown_session");
    let r = m.call(
        "mem_save",
        json!({"title": "Router", "content": "The API uses axum routers", "project": "apii"}),
    );
    refused(&r, "unknown_project");
    let r = m.call("mem_stats", json!({}));
    assert!(text(&r).contains("- Observations: 0"), "{r}");

    // Backed: the project the caller's directory detects, then an existing project.
    let r = m.call(
        "mem_save",
        json!({"title": "Router", "content": "The API uses axum routers", "project": "api",
               "directory": api}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let r = m.call(
        "mem_save",
        json!({"title": "Errors", "content": "API errors are JSON bodies", "project": "api"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    m.finish();
}

/// C's ids survive the conversion: `sync_id` is C's own (`obs-…`), and C's
/// `revision_count`/`duplicate_count` are shown, counting on from C's; archiving and
/// restoring change no text and are no revision, an edit is one.
#[test]
fn cs_sync_ids_and_counts_survive_the_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    write_c_db(&home);
    rusqlite::Connection::open(home.join("engram.db"))
        .unwrap()
        .execute_batch(
            "UPDATE observations SET revision_count = 4, duplicate_count = 3, tool_name = 'Edit' WHERE id = 17;
             INSERT INTO observations (id, sync_id, session_id, type, title, content, project, scope, created_at, updated_at)
                 VALUES (18, 'obs-dddddddddddddddd', 's-1', 'preference', 'Brevity', 'Answer concisely', 'webapp', 'global',
                         '2026-01-11 09:00:00', '2026-01-11 09:00:00');",
        )
        .unwrap();
    let get = |home: &Path| {
        let mut m = Mcp::start(home, &["--tools", "compat-c"], "c-user");
        let r = m.call("mem_get_observation", json!({"id": 17}));
        m.finish();
        r["structuredContent"].clone()
    };
    let v = get(&home);
    assert_eq!(v["sync_id"], "obs-aaaaaaaaaaaaaaaa", "{v}");
    assert_eq!(v["revision_count"], 4, "{v}");
    assert_eq!(v["duplicate_count"], 3, "{v}");
    let t = v["result"].as_str().unwrap();
    assert!(
        t.contains("Revisions: 4") && t.contains("Duplicates: 3") && t.contains("Tool: Edit"),
        "{t}"
    );
    // A global memory lives in `common` but is served back with C's scope and project
    // (tester-c: it came back as personal, project common).
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    let t = text(&m.call("mem_get_observation", json!({"id": 18})));
    assert!(
        t.contains("Project: webapp") && t.contains("Scope: global"),
        "{t}"
    );
    // …and its project's context lists it with the project's own, pinned first when it
    // is pinned (tester-c).
    let t = text(&m.call("mem_context", json!({"project": "webapp"})));
    assert!(t.contains("Answer concisely"), "{t}");
    m.call("mem_pin", json!({"id": 18}));
    let t = text(&m.call("mem_context", json!({"project": "webapp"})));
    let pinned = t.find("### Pinned").expect("a pinned section");
    let line = t.find("Answer concisely").unwrap();
    assert!(
        pinned < line && line < t.find("### Recent Observations").unwrap(),
        "{t}"
    );
    m.finish();

    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    let r = m.call(
        "mem_search",
        json!({"query": "JWT cookies", "project": "webapp"}),
    );
    assert_eq!(
        r["structuredContent"]["results"][0]["sync_id"], "obs-aaaaaaaaaaaaaaaa",
        "{r}"
    );
    let r = m.call("mem_pin", json!({"id": 17}));
    assert_eq!(r["structuredContent"]["sync_id"], "obs-aaaaaaaaaaaaaaaa");
    m.finish();

    engram_ok(&home, &["forget", "17"]);
    engram_ok(&home, &["restore", "17"]);
    assert_eq!(get(&home)["revision_count"], 4, "archiving is no revision");
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    let r = m.call(
        "mem_update",
        json!({"id": 17, "content": "JWT in httpOnly cookies, rotated every 30 minutes"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    m.finish();
    assert_eq!(get(&home)["revision_count"], 5, "an edit is one");
}

/// The empty-search and merge replies quote their input redacted, as every reply does.
#[test]
fn cs_search_and_merge_replies_do_not_echo_secrets() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let token = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5";
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    let r = m.call(
        "mem_search",
        json!({"query": format!("where is {token}"), "project": "webapp"}),
    );
    assert!(text(&r).starts_with("No memories found for:"), "{r}");
    let merged = m.call(
        "mem_merge_projects",
        json!({"from": format!("old-{token}"), "to": "webapp"}),
    );
    for r in [&r, &merged] {
        assert!(!r.to_string().contains(token), "token echoed: {r}");
    }
    m.finish();
}

/// C's users' scripts post with plain `curl -d` (form data's `Content-Type`): the body is
/// read as JSON all the same. And C's export of this store imported back finds the
/// memories engram made itself instead of copying them.
#[test]
fn cs_api_reads_curl_bodies_and_its_export_imports_back_without_copies() {
    let dir = tempfile::tempdir().unwrap();
    let server = serve(dir.path());
    let addr = server.addr.clone();
    let form = "application/x-www-form-urlencoded";
    let (status, body) = req_as(
        &addr,
        "POST",
        "/sessions",
        Some(json!({"id": "s-curl", "project": "shop"})),
        form,
    );
    assert_eq!(status, 201, "{body}");
    let (status, body) = req_as(
        &addr,
        "POST",
        "/observations",
        Some(
            json!({"session_id": "s-curl", "title": "Cache", "content": "The cart cache lives in Redis for ten minutes", "type": "decision"}),
        ),
        form,
    );
    assert_eq!(status, 201, "{body}");
    let (status, body) = req_as(&addr, "POST", "/sessions", None, form);
    assert!(status == 400 || status == 200, "{status} {body}");
    let (_, export) = req(&addr, "GET", "/export", None);
    let count = |addr: &str| {
        let (_, all) = req(addr, "GET", "/export", None);
        all["observations"].as_array().map_or(0, Vec::len)
    };
    let before = count(&addr);
    let (status, body) = req(&addr, "POST", "/import", Some(export));
    assert_eq!(status, 200, "{body}");
    assert_eq!(count(&addr), before, "the import copied memories: {body}");
}

/// A host launches the stdio server in the agent's project: with no project, directory or
/// session named, C's writes and reads land in that project, as in C's own server. A
/// server launched outside any project keeps `common`.
#[test]
fn a_stdio_server_launched_in_a_project_writes_there() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let shop = dir.path().join("code").join("shop");
    std::fs::create_dir_all(shop.join(".git")).unwrap();
    let project = |r: &Value| r["structuredContent"]["project"].clone();
    let mut m = Mcp::start_in(&home, &shop, &["--tools", "compat-c"], "c-user");
    let r = m.call(
        "mem_save",
        json!({"title": "Queue", "content": "The order queue drains every five minutes"}),
    );
    assert_eq!(project(&r), "shop", "{r}");
    let r = m.call("mem_search", json!({"query": "order queue"}));
    assert!(r.to_string().contains("five minutes"), "{r}");
    drop(m);
    let elsewhere = dir.path().join("tmp");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let mut m = Mcp::start_in(&home, &elsewhere, &["--tools", "compat-c"], "c-user");
    let r = m.call(
        "mem_save",
        json!({"title": "Tea", "content": "The team prefers green tea at stand-ups"}),
    );
    assert_eq!(project(&r), "common", "{r}");
}

/// C's refusals and scopes kept: an ended session does not start again, memories of two
/// projects are not compared, and `mem_context` with no project reads the project a
/// search with none searches (the newest open session's).
#[test]
fn cs_ended_sessions_cross_project_compares_and_context_follow_c() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut m = Mcp::start(&home, &["--tools", "compat-c"], "c-user");
    m.call(
        "mem_session_start",
        json!({"id": "s-a", "project": "alpha"}),
    );
    let a = m.call(
        "mem_save",
        json!({"title": "A", "content": "Alpha deploys from the main branch", "session_id": "s-a"}),
    );
    m.call("mem_session_end", json!({"id": "s-a"}));
    let again = m.call(
        "mem_session_start",
        json!({"id": "s-a", "project": "alpha"}),
    );
    assert!(
        again.to_string().contains("session_already_ended"),
        "{again}"
    );
    m.call("mem_session_start", json!({"id": "s-b", "project": "beta"}));
    let b = m.call(
        "mem_save",
        json!({"title": "B", "content": "Beta deploys from the release branch", "session_id": "s-b"}),
    );
    let compare = m.call(
        "mem_compare",
        json!({"memory_id_a": a["structuredContent"]["id"], "memory_id_b": b["structuredContent"]["id"],
               "relation": "conflicts_with", "confidence": 0.9, "reasoning": "branches"}),
    );
    assert!(
        compare.to_string().contains("one project only"),
        "{compare}"
    );
    let ctx = m.call("mem_context", json!({}));
    assert_eq!(ctx["structuredContent"]["project"], "beta", "{ctx}");
    // C's observation lines, not engram's briefing.
    let t = text(&ctx);
    let obs = t
        .split("### Recent Observations\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{t}"));
    let first = obs.lines().next().unwrap();
    assert_eq!(
        first, "- [manual] **B**: Beta deploys from the release branch",
        "{t}"
    );
}

/// C's backup scripts: `engram export FILE` names the file without a flag, `--format
/// c-json` writes C's export, and `engram import FILE` reads C's export (or engram's)
/// without being told which it is (tester-c: both needed flags a C user would not know).
#[test]
fn cs_export_and_import_need_no_flags() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join(".engram");
    write_c_db(&home);
    let c_json = dir.path().join("c-export.json");
    // C's spelling: a positional `.json` file is C's format.
    engram_ok(&home, &["export", c_json.to_str().unwrap()]);
    let exported: Value = serde_json::from_str(&std::fs::read_to_string(&c_json).unwrap()).unwrap();
    assert_eq!(exported["version"], "0.2.0");
    assert!(
        exported["observations"]
            .as_array()
            .is_some_and(|o| !o.is_empty())
    );
    let jsonl = dir.path().join("backup.jsonl");
    engram_ok(&home, &["export", jsonl.to_str().unwrap()]);
    assert!(
        std::fs::read_to_string(&jsonl)
            .unwrap()
            .contains("engram-export")
    );

    for file in [&c_json, &jsonl] {
        let fresh = dir.path().join(format!(
            "fresh-{}",
            file.file_name().unwrap().to_string_lossy()
        ));
        std::fs::create_dir_all(&fresh).unwrap();
        engram_ok(&fresh, &["import", file.to_str().unwrap(), "--no-embed"]);
        let found = engram_ok(&fresh, &["recall", "JWT cookies", "--room", "*"]);
        assert!(found.contains("httpOnly"), "{}: {found}", file.display());
    }
}

/// C lists pinned observations before the recent ones, so a pinned memory never falls
/// behind newer saves (tester-c: it sat 19th of 20); and none of C's writes supersedes by
/// itself: a passive learning that contradicts a decision leaves it active for mem_judge
/// (tester-c: a passive capture retired an agent's decision).
#[test]
fn cs_context_lists_pins_first_and_passive_captures_never_supersede() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut m = Mcp::start_with(
        &home,
        &["--tools", "compat-c", "--project", "shop"],
        "c-user",
        &[("ENGRAM_RESOLVE", "true")],
    );
    let r = m.call(
        "mem_save",
        json!({"title": "CI", "type": "decision", "content": "We run CI builds on Jenkins"}),
    );
    let ci = r["structuredContent"]["id"].as_i64().unwrap();
    m.call("mem_pin", json!({"id": ci}));
    for i in 0..22 {
        m.call(
            "mem_save",
            json!({"title": format!("Note {i}"), "content": format!("Checkout step {i} validates cart item {i}")}),
        );
    }
    let r = m.call("mem_context", json!({}));
    let t = text(&r);
    let pinned = t.find("### Pinned").expect("a pinned section");
    let recent = t.find("### Recent Observations").unwrap();
    let line = t.find("**CI**").unwrap();
    assert!(pinned < line && line < recent, "{t}");

    let r = m.call(
        "mem_capture_passive",
        json!({"content": "## Key Learnings\n- We switched CI builds from Jenkins to GitHub Actions last week\n"}),
    );
    assert_ne!(r["isError"], true, "{r}");
    let r = m.call("mem_get_observation", json!({"id": ci}));
    assert_eq!(r["structuredContent"]["tier"], "active", "{r}");
}
