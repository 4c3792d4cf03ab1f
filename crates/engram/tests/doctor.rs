//! `engram doctor` on healthy stores of each language (English, CJK, mixed) is green and
//! exits 0; a store whose index really lost a row is NG. The vault row follows the
//! configured folder and `vault = "off"`. The built binary on a temp `ENGRAM_HOME`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

mod support;

struct Home {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Home {
    fn new(config: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("engram-home");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        if !config.is_empty() {
            std::fs::write(root.join("config.toml"), config).unwrap();
        }
        Home { _dir: dir, root }
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut c = support::clean_engram();
        c.env("HOME", self.root.parent().unwrap().join("home"))
            .env("ENGRAM_HOME", &self.root)
            .env("ENGRAM_MODEL", "none")
            .env("PATH", "/nonexistent")
            .current_dir(&self.root)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }

    fn remember(&self, text: &str, extra: &[&str]) {
        let mut args = vec!["remember", text, "--room", "doctor"];
        args.extend_from_slice(extra);
        let out = self.run(&args);
        assert!(
            out.status.success(),
            "remember {text}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn doctor(&self) -> (bool, Value) {
        let out = self.run(&["doctor", "--json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "doctor --json not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        (out.status.success(), v)
    }
}

fn status<'a>(d: &'a Value, check: &str) -> (&'a str, &'a str) {
    let r = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["check"] == check)
        .unwrap_or_else(|| panic!("no {check} row: {d:#}"));
    (r["status"].as_str().unwrap(), r["detail"].as_str().unwrap())
}

fn assert_green(home: &Home, what: &str) -> Value {
    let (ok, d) = home.doctor();
    let ng: Vec<&Value> = d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "NG")
        .collect();
    assert!(ok && ng.is_empty() && d["ok"] == true, "{what}: {ng:#?}");
    assert_eq!(status(&d, "full-text index").0, "OK", "{what}: {d:#}");
    d
}

const ENGLISH: [&str; 3] = [
    "The deploy script lives in scripts/deploy.sh and needs AWS_PROFILE set",
    "We chose SQLite over Postgres for the local store",
    "Alice prefers tabs over spaces in Go code",
];
const CJK: [&str; 3] = [
    "デプロイは金曜日に行わない",
    "数据库使用本地文件存储",
    "会議は毎週月曜日の十時から",
];

#[test]
fn doctor_is_green_on_healthy_english_cjk_and_mixed_stores() {
    let english = Home::new("");
    for t in ENGLISH {
        english.remember(t, &[]);
    }
    english.remember("Release notes go in CHANGELOG.md", &["--title", "発表"]);
    let d = assert_green(&english, "English");
    assert_eq!(status(&d, "vault").0, "OK", "{d:#}");

    let cjk = Home::new("");
    for t in CJK {
        cjk.remember(t, &[]);
    }
    // Punctuation and CJK only: no word row, and that is no gap either.
    cjk.remember("「確認済み」", &[]);
    assert_green(&cjk, "CJK");

    let mixed = Home::new("");
    for (e, c) in ENGLISH.iter().zip(CJK) {
        mixed.remember(&format!("{e} ({c})"), &["--tags", "混合,mixed"]);
        mixed.remember(e, &[]);
        mixed.remember(c, &[]);
    }
    // A forgotten memory keeps its index rows (restorable): still green.
    let out = mixed.run(&["forget", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_green(&mixed, "mixed");
}

#[test]
fn doctor_reports_a_memory_whose_index_row_is_gone() {
    let home = Home::new("");
    home.remember("The cache is warmed at boot", &[]);
    home.remember("キャッシュは起動時に温める", &[]);
    assert_green(&home, "before");
    let db = rusqlite::Connection::open(home.root.join("engram.db")).unwrap();
    db.execute("DELETE FROM fts_grams WHERE rowid = 2", [])
        .unwrap();
    drop(db);
    let (ok, d) = home.doctor();
    assert!(!ok, "{d:#}");
    let (s, detail) = status(&d, "full-text index");
    assert_eq!(s, "NG");
    assert!(detail.contains("1 memories lack theirs"), "{detail}");
}

#[test]
fn doctor_reads_the_configured_vault_folder_and_vault_off() {
    let off = Home::new("vault = \"off\"\n");
    off.remember("Nothing is written to files here", &[]);
    // A stray folder where the default vault would be is not this store's vault.
    std::fs::create_dir_all(off.root.join("memories")).unwrap();
    std::fs::write(off.root.join("memories").join("stray.md"), "x").unwrap();
    let d = assert_green(&off, "vault off");
    let (s, detail) = status(&d, "vault");
    assert_eq!(s, "--");
    assert!(detail.contains("off"), "{detail}");

    let moved = Home::new("vault_dir = \"notes\"\n");
    moved.remember("The vault lives in notes/", &[]);
    moved.remember("A second memory", &[]);
    let d = assert_green(&moved, "vault in notes");
    let (s, detail) = status(&d, "vault");
    assert_eq!(s, "OK", "{detail}");
    assert!(detail.contains("2 files"), "{detail}");
    assert!(md_files(&moved.root.join("notes")) == 2);

    // An absolute `vault_dir` outside the home, with stray files where the default vault
    // would be: doctor counts the configured folder, as the store writes it.
    let outside = tempfile::tempdir().unwrap();
    let vault = outside.path().join("team-notes");
    let away = Home::new(&format!("vault_dir = \"{}\"\n", vault.display()));
    std::fs::create_dir_all(away.root.join("memories")).unwrap();
    for i in 0..3 {
        std::fs::write(away.root.join("memories").join(format!("stray{i}.md")), "x").unwrap();
    }
    away.remember("The vault lives outside the home", &[]);
    let d = assert_green(&away, "absolute vault_dir");
    let (s, detail) = status(&d, "vault");
    assert_eq!(s, "OK", "{detail}");
    assert!(detail.contains("1 files for 1 memories"), "{detail}");
    assert_eq!(md_files(&vault), 1);
}

fn md_files(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            n += md_files(&p);
        } else if p.extension().is_some_and(|x| x == "md") {
            n += 1;
        }
    }
    n
}

/// Seed B's `config.toml` as B's setup writes it and B's users edit it: every command
/// works, the keys take B's meaning, doctor stays green and lists what has no counterpart.
#[test]
fn seed_b_config_works_and_doctor_stays_green() {
    let home = Home::new("");
    let vault = home.root.join("b-memories");
    std::fs::write(
        home.root.join("config.toml"),
        format!(
            "memories_dir = \"{}\"\nembed_model = \"intfloat/multilingual-e5-small\"\nquery_prefix = \"query: \"\ndoc_prefix = \"passage: \"\ndup_threshold = 0.95\nauto_episode_importance = 3\ncorrection_min_importance = 7\nsurface_mode = \"active\"\n\n[room_paths]\n\"/work/app\" = \"app\"\n",
            vault.display()
        ),
    )
    .unwrap();
    let out = home.run(&["stats"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(said.contains("dup_threshold"), "told once: {said}");
    let again = home.run(&["stats"]);
    assert!(
        !String::from_utf8_lossy(&again.stderr).contains("dup_threshold"),
        "not on every command"
    );
    home.remember("B's memories_dir is the vault", &[]);
    assert_eq!(
        md_files(&vault),
        1,
        "the vault is written where B kept its files"
    );
    let d = assert_green(&home, "seed B config");
    assert_eq!(status(&d, "config").0, "OK", "{d:#}");
    let (s, notes) = status(&d, "config: seed B keys");
    assert_eq!(s, "--");
    assert!(
        notes.contains("query_prefix") && notes.contains("dup_threshold"),
        "{notes}"
    );
}

#[test]
fn doctor_notices_seed_a_data_and_prints_the_import_commands() {
    let home = Home::new("");
    std::fs::write(home.root.join("memories.duckdb"), b"DUCK").unwrap();
    home.remember("engram's own store beside A's file", &[]);
    let d = assert_green(&home, "A's data beside");
    let (s, detail) = status(&d, "seed A data");
    assert_eq!(s, "--");
    assert!(
        detail.contains("COPY memories TO 'a.jsonl' (FORMAT json)")
            && detail.contains("engram import --from a-jsonl a.jsonl")
            && detail.contains("COPY tasks TO 'a-tasks.jsonl' (FORMAT json)")
            && detail.contains("--tasks a-tasks.jsonl"),
        "{detail}"
    );
    // Once A's memories are imported, doctor says so instead of asking again.
    let jsonl = home.root.join("a.jsonl");
    std::fs::write(
        &jsonl,
        r#"{"id": 1, "content": "Deploys go out on Tuesdays", "category": "fact", "importance": 0.6}"#,
    )
    .unwrap();
    let out = home.run(&["import", "--from", "a-jsonl", jsonl.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let d = assert_green(&home, "A's data imported");
    let (s, detail) = status(&d, "seed A data");
    assert_eq!(s, "OK", "{detail}");
    assert!(
        detail.contains("imported") && !detail.contains("COPY memories"),
        "{detail}"
    );
}

/// A model folder that holds no model is a mistake `doctor` calls NG, naming the files a
/// folder needs (never advising to "pull" a path); `model list` stars the folder in use.
#[test]
fn a_model_folder_that_holds_no_model_is_named_with_what_it_needs() {
    let home = Home::new("");
    let missing = home.root.join("no-such-model");
    let run = |model: &Path, args: &[&str]| {
        let mut c = support::clean_engram();
        c.env("HOME", home.root.parent().unwrap().join("home"))
            .env("ENGRAM_HOME", &home.root)
            .env("ENGRAM_MODEL", model)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&missing, &["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (st, detail) = status(&d, "model");
    assert_eq!(st, "NG", "{detail}");
    assert!(
        detail.contains("model.safetensors") && !detail.contains("model pull"),
        "{detail}"
    );
    // Seed A's default, an MPNet engram cannot run: NG, named, with a fix that works
    // (before: "run `engram model pull all-mpnet-base-v2`", which then failed).
    let out = run(Path::new("all-mpnet-base-v2"), &["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (st, detail) = status(&d, "model");
    assert_eq!(st, "NG", "{detail}");
    assert!(
        detail.contains("not one engram can pull") && !detail.contains("model pull all-mpnet"),
        "{detail}"
    );
    let list = run(&missing, &["model", "list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    let line = text
        .lines()
        .find(|l| l.contains("no-such-model"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.starts_with('*') && line.contains("holds no model"),
        "{line}"
    );
}
