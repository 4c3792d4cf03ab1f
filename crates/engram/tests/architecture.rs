//! The invariants of ARCHITECTURE.md that a machine can check, each a test that fails when
//! the invariant breaks. They read the workspace's sources, `Cargo.toml` files and
//! `Cargo.lock` (never the network, never `cargo` itself), so they run in a second.
//!
//! When the layout changes, update the lists at the top of this file, not the tests: each
//! list says what it allows and why, and an entry that no longer matches anything fails too,
//! so the lists stay true.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Tokens that mean I/O, a clock, threads or a database: none may appear in the code of
/// `engram-core` (comments are not code). Times arrive there as Unix milliseconds.
const CORE_FORBIDDEN: &[&str] = &[
    "std::fs",
    "std::net",
    "std::process",
    "std::env",
    "std::io",
    "std::thread",
    "std::time",
    "SystemTime",
    "Instant::",
    "File::",
    "println!",
    "eprintln!",
    "print!",
    "eprint!",
    "dbg!",
    "rusqlite",
    "tokio",
];

/// (file under `crates/engram-core/src`, token, why) for the rare exception. Empty today.
const CORE_ALLOWED: &[(&str, &str, &str)] = &[];

/// What `engram-core` may depend on (ARCHITECTURE.md: serde, serde_json and regex).
const CORE_DEPENDENCIES: &[&str] = &["regex", "serde", "serde_json"];

/// Packages that are protocols, a runtime or the encoder: the libraries below the
/// surfaces must not reach them through any dependency, normal, build or dev (a dev
/// dependency on the encoder would make `cargo test -p engram-store` compile candle).
const PROTOCOL_AND_ENCODER: &[&str] = &[
    "axum",
    "candle-core",
    "candle-nn",
    "candle-transformers",
    "engram-embed",
    "hf-hub",
    "hyper",
    "rmcp",
    "tokenizers",
    "tokio",
];

/// Database drivers a library may use although they run a runtime inside: (package, why).
/// The walk for `PROTOCOL_AND_ENCODER` does not descend into them; everything else still
/// must not reach the list. An entry no library reaches fails too.
const DRIVERS: &[(&str, &str)] = &[(
    "postgres",
    "the PostgreSQL client's blocking calls drive tokio-postgres on a runtime of its own; \
     no async type crosses its API, so the engine stays synchronous",
)];

/// The crates that must stay clear of `PROTOCOL_AND_ENCODER` (add a new library here).
const PURE_LIBRARIES: &[&str] = &["engram-core", "engram-store"];

/// The crates that may hold SQL and depend on rusqlite. Every other crate's `src/` is a
/// surface or a library above the store: it calls the engine, never the database.
const SQL_OWNERS: &[&str] = &["engram-store"];

/// (crate, file under its `src`, why) for a surface file allowed to name SQL. Empty today.
const SQL_ALLOWED: &[(&str, &str, &str)] = &[];

/// Words that start an SQL statement inside a string literal (as the store writes them:
/// upper case, so that prose such as "Update the memory" is not taken for SQL).
const SQL_STARTS: &[&str] = &[
    "SELECT ",
    "INSERT INTO",
    "INSERT OR",
    "UPDATE ",
    "DELETE FROM",
    "CREATE TABLE",
    "CREATE INDEX",
    "CREATE TRIGGER",
    "DROP TABLE",
    "ALTER TABLE",
    "PRAGMA ",
    "VACUUM",
];

/// Invariants checked by tests elsewhere, named so that renaming or deleting one of those
/// tests fails here: (invariant, test file from the workspace root, test function).
const CHECKED_ELSEWHERE: &[(&str, &str, &str)] = &[
    (
        "the MCP stdio process writes only JSON-RPC to stdout",
        "crates/engram/tests/bare_engram.rs",
        "bare_engram_with_no_input_writes_only_json_rpc",
    ),
    (
        "bad JSON-RPC over stdio is answered as JSON-RPC errors and the server stays up",
        "crates/engram/tests/hostile.rs",
        "bad_requests_get_clear_errors_and_the_server_stays_up",
    ),
    (
        "hooks never fail their client and write at most one JSON line",
        "crates/engram/tests/setup_hooks.rs",
        "hooks_survive_garbage",
    ),
    (
        "no user text reaches FTS5 unquoted (planned queries run against real FTS5)",
        "crates/engram-store/tests/fuzz.rs",
        "every_planned_query_is_valid_fts5",
    ),
    (
        "every path in redacts",
        "crates/engram-store/tests/redaction_paths.rs",
        "remember_correct_update_topic_handoff_and_prompts_redact",
    ),
    (
        "a returned write is durable (writers killed with SIGKILL)",
        "crates/engram/tests/crash.rs",
        "no_acknowledged_write_is_lost_when_writers_are_killed",
    ),
];

#[test]
fn the_core_does_no_io() {
    let root = workspace().join("crates/engram-core/src");
    let mut found = Vec::new();
    let mut allowed_used = BTreeSet::new();
    for file in rust_files(&root) {
        let rel = rel(&root, &file);
        let code = strip_comments(&read(&file));
        for token in CORE_FORBIDDEN {
            if !code.contains(token) {
                continue;
            }
            match CORE_ALLOWED
                .iter()
                .find(|(f, t, _)| *f == rel && t == token)
            {
                Some(entry) => {
                    allowed_used.insert(*entry);
                }
                None => found.push(format!("{rel}: {token}")),
            }
        }
    }
    assert!(
        found.is_empty(),
        "engram-core must do no I/O (ARCHITECTURE.md, invariants); found:\n{}",
        found.join("\n")
    );
    let stale: Vec<_> = CORE_ALLOWED
        .iter()
        .filter(|e| !allowed_used.contains(*e))
        .collect();
    assert!(
        stale.is_empty(),
        "CORE_ALLOWED entries that match nothing: {stale:?}"
    );
}

#[test]
fn the_core_depends_only_on_serde_and_regex() {
    let deps = manifest_dependencies("engram-core", "dependencies");
    let allowed: BTreeSet<String> = CORE_DEPENDENCIES.iter().map(|s| s.to_string()).collect();
    let extra: Vec<_> = deps.difference(&allowed).collect();
    assert!(
        extra.is_empty(),
        "engram-core's dependencies beyond {CORE_DEPENDENCIES:?}: {extra:?}"
    );
}

#[test]
fn libraries_reach_no_protocol_runtime_or_encoder() {
    let mut lock = lock_graph();
    let mut drivers_reached = BTreeSet::new();
    for lib in PURE_LIBRARIES {
        drivers_reached.extend(
            DRIVERS
                .iter()
                .filter(|(d, _)| closure(&lock, lib).contains(*d))
                .map(|(d, _)| *d),
        );
    }
    for (driver, _) in DRIVERS {
        lock.insert(driver.to_string(), BTreeSet::new());
    }
    let stale: Vec<_> = DRIVERS
        .iter()
        .filter(|(d, _)| !drivers_reached.contains(d))
        .collect();
    assert!(
        stale.is_empty(),
        "DRIVERS entries no library reaches: {stale:?}"
    );
    for lib in PURE_LIBRARIES {
        assert!(lock.contains_key(*lib), "{lib} is not in Cargo.lock");
        let reach = closure(&lock, lib);
        let bad: Vec<_> = PROTOCOL_AND_ENCODER
            .iter()
            .filter(|p| reach.contains(**p))
            .collect();
        assert!(
            bad.is_empty(),
            "{lib} reaches {bad:?} through its dependencies (normal, build or dev, as Cargo.lock \
             records them); protocols live in the surfaces, the encoder behind the Embedder trait"
        );
    }
}

#[test]
fn surfaces_write_no_sql() {
    let ws = workspace();
    let mut found = Vec::new();
    let mut allowed_used = BTreeSet::new();
    for krate in crates(&ws) {
        if SQL_OWNERS.contains(&krate.as_str()) {
            continue;
        }
        for kind in ["dependencies", "build-dependencies"] {
            if manifest_dependencies(&krate, kind).contains("rusqlite") {
                found.push(format!("crates/{krate}/Cargo.toml: rusqlite in [{kind}]"));
            }
        }
        let src = ws.join("crates").join(&krate).join("src");
        for file in rust_files(&src) {
            let rel = rel(&src, &file);
            let text = read(&file);
            let code = strip_comments(&text);
            let mut hits: Vec<String> = Vec::new();
            if code.contains("rusqlite") {
                hits.push("rusqlite".into());
            }
            for lit in string_literals(&code) {
                let lit_start = lit.trim_start();
                if let Some(s) = SQL_STARTS.iter().find(|s| lit_start.starts_with(**s)) {
                    hits.push(format!("SQL {s:?} in \"{}\"", lit.trim()));
                }
            }
            if hits.is_empty() {
                continue;
            }
            match SQL_ALLOWED
                .iter()
                .find(|(c, f, _)| *c == krate && *f == rel)
            {
                Some(entry) => {
                    allowed_used.insert(*entry);
                }
                None => found.extend(
                    hits.into_iter()
                        .map(|h| format!("crates/{krate}/src/{rel}: {h}")),
                ),
            }
        }
    }
    assert!(
        found.is_empty(),
        "a surface calls the engine and never the database (ARCHITECTURE.md, one engine API); \
         found:\n{}",
        found.join("\n")
    );
    let stale: Vec<_> = SQL_ALLOWED
        .iter()
        .filter(|e| !allowed_used.contains(*e))
        .collect();
    assert!(
        stale.is_empty(),
        "SQL_ALLOWED entries that match nothing: {stale:?}"
    );
}

#[test]
fn invariants_checked_elsewhere_still_have_their_tests() {
    let ws = workspace();
    let mut missing = Vec::new();
    for (invariant, file, test) in CHECKED_ELSEWHERE {
        let path = ws.join(file);
        let code = std::fs::read_to_string(&path)
            .map(|t| strip_comments(&t))
            .unwrap_or_default();
        if !code.contains(&format!("fn {test}(")) {
            missing.push(format!("{invariant}: {file} has no fn {test}"));
        }
    }
    assert!(
        missing.is_empty(),
        "update CHECKED_ELSEWHERE (and ARCHITECTURE.md) when such a test moves:\n{}",
        missing.join("\n")
    );
}

/// `scripts/code-map` (the code map's counts, before and after a change) still reads this
/// layout: every crate is found with its files, and functions are found.
#[test]
fn the_code_map_script_reads_this_workspace() {
    let ws = workspace();
    let out = std::process::Command::new("python3")
        .arg(ws.join("scripts/code-map"))
        .arg("--json")
        .arg(&ws)
        .output()
        .expect("python3 runs scripts/code-map (scripts/test needs python3 too)");
    assert!(
        out.status.success(),
        "scripts/code-map failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let map: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let counted: BTreeSet<String> = map["crates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["src"]["files"].as_u64() > Some(0))
        .map(|c| c["crate"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(counted, crates(&ws).into_iter().collect::<BTreeSet<_>>());
    assert_eq!(map["longest_functions"].as_array().unwrap().len(), 20);
}

/// The checks' own reading of Rust: a comment is not code, a string is not a comment.
#[test]
fn the_checks_read_comments_and_strings_right() {
    let code = strip_comments(
        "let a = \"// not a comment\"; // std::fs here is a comment\n/* std::net /* nested */ */ let b = r#\"\"SELECT 1\"#; let c = '\"';",
    );
    assert!(code.contains("// not a comment"));
    assert!(!code.contains("std::fs") && !code.contains("std::net"));
    assert_eq!(
        string_literals(&code),
        vec!["// not a comment".to_string(), "\"SELECT 1".to_string()]
    );
    let lock = lock_graph();
    assert!(
        closure(&lock, "engram").contains("rmcp"),
        "the lock graph is read: the binary reaches rmcp"
    );
    assert!(manifest_dependencies("engram-core", "dependencies").contains("serde"));
}

// ---------------------------------------------------------------- reading the workspace

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|p| p.join("Cargo.lock").is_file())
        .expect("the workspace root holds Cargo.lock")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rel(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// Every `*.rs` under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The workspace's crates: the directories under `crates/` with a Cargo.toml.
fn crates(ws: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(ws.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// The keys of one table (`dependencies`, `dev-dependencies`, …) of a crate's Cargo.toml,
/// target-specific tables included.
fn manifest_dependencies(krate: &str, table: &str) -> BTreeSet<String> {
    let path = workspace().join("crates").join(krate).join("Cargo.toml");
    let doc: toml::Table = read(&path)
        .parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeSet::new();
    let mut add = |t: Option<&toml::Value>| {
        if let Some(t) = t.and_then(|v| v.as_table()) {
            out.extend(t.keys().cloned());
        }
    };
    add(doc.get(table));
    if let Some(targets) = doc.get("target").and_then(|t| t.as_table()) {
        for cfg in targets.values() {
            add(cfg.get(table));
        }
    }
    out
}

/// Cargo.lock as package name → the names it depends on (every kind, every version of a
/// name folded into one node: stricter, never looser).
fn lock_graph() -> BTreeMap<String, BTreeSet<String>> {
    let lock: toml::Table = read(&workspace().join("Cargo.lock")).parse().unwrap();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in lock["package"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap().to_string();
        let deps = graph.entry(name).or_default();
        for d in p
            .get("dependencies")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
        {
            let d = d.as_str().unwrap();
            deps.insert(d.split(' ').next().unwrap().to_string());
        }
    }
    graph
}

fn closure(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start.to_string()];
    while let Some(p) = stack.pop() {
        for d in graph.get(&p).into_iter().flatten() {
            if seen.insert(d.clone()) {
                stack.push(d.clone());
            }
        }
    }
    seen
}

/// The source with `//` and (nested) `/* */` comments removed; strings, raw strings and
/// char literals are kept as they are, so a `//` inside a string stays.
fn strip_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let mut from = 0; // start of the pending run of code to copy
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&src[from..i]);
                i = src[i..].find('\n').map_or(b.len(), |n| i + n);
                from = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&src[from..i]);
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                out.push(' ');
                from = i;
            }
            b'"' => i = string_end(b, i),
            b'r' if raw_string_start(b, i).is_some() => {
                let (hashes, open) = raw_string_start(b, i).unwrap();
                let close = format!("\"{}", "#".repeat(hashes));
                i = src[open..]
                    .find(&close)
                    .map_or(b.len(), |n| open + n + close.len());
            }
            b'\'' => i += char_literal_len(b, i).unwrap_or(1),
            _ => i += 1,
        }
    }
    out.push_str(&src[from..]);
    out
}

/// The length of a char literal at `i` (`'"'`, `'\''`, `'\u{7f}'`); None for a lifetime.
fn char_literal_len(b: &[u8], i: usize) -> Option<usize> {
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b'\\'), Some(b'u')) => b[i..].iter().position(|&c| c == b'}').map(|n| n + 2),
        (Some(b'\\'), Some(_)) => (b.get(i + 3) == Some(&b'\'')).then_some(4),
        (Some(_), Some(b'\'')) => Some(3),
        _ => None,
    }
}

/// Where a raw string starting at `i` (`r"`, `r#"`, …) opens: (number of `#`, index after `"`).
fn raw_string_start(b: &[u8], i: usize) -> Option<(usize, usize)> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') && b[i - 1] != b'b' {
        return None;
    }
    let mut j = i + 1;
    while b.get(j) == Some(&b'#') {
        j += 1;
    }
    (b.get(j) == Some(&b'"')).then_some((j - i - 1, j + 1))
}

/// The index just past the string literal whose opening quote is at `i`.
fn string_end(b: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while j < b.len() && b[j] != b'"' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    j + 1
}

/// The contents of every string literal (plain and raw) in code without comments.
fn string_literals(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            let end = string_end(b, i).min(b.len());
            out.push(code[i + 1..end.saturating_sub(1).max(i + 1)].to_string());
            i = end;
        } else if b[i] == b'r'
            && let Some((hashes, open)) = raw_string_start(b, i)
        {
            let close = format!("\"{}", "#".repeat(hashes));
            let end = code[open..].find(&close).map_or(b.len(), |n| open + n);
            out.push(code[open..end].to_string());
            i = end + close.len();
        } else if b[i] == b'\'' {
            i += char_literal_len(b, i).unwrap_or(1);
        } else {
            i += 1;
        }
    }
    out
}
