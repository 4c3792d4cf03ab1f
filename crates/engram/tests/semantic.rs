//! Recall quality with a real sentence encoder (all-MiniLM-L6-v2 from
//! `ENGRAM_TEST_MODEL_DIR`, which `scripts/test` provides), and hybrid fusion logic with
//! the hashing encoder. Without the model this test fails and says how to get it.
//! It tests the store, but lives in the binary's crate, which links the encoder anyway, so
//! that `engram-store`'s own tests never compile candle.

use engram_core::embed::{Embedder, HashEmbedder};
use engram_core::memory::IdRef;
use engram_core::{Config, Kind};
use engram_store::{Mode, RecallRequest, RememberRequest, Store};
use std::sync::{Arc, OnceLock};

fn model() -> Arc<dyn Embedder> {
    static MODEL: OnceLock<Arc<dyn Embedder>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let dir = std::env::var("ENGRAM_TEST_MODEL_DIR").unwrap_or_else(|_| {
                panic!("ENGRAM_TEST_MODEL_DIR is not set: run scripts/test, or scripts/fetch-test-model.sh DIR and point the variable at DIR")
            });
            let e = engram_embed::CandleEmbedder::load(std::path::Path::new(&dir), engram_embed::EmbedOptions::default())
                .unwrap_or_else(|e| panic!("cannot load the test model from {dir}: {e}"));
            Arc::new(e)
        })
        .clone()
}

fn store_with(e: Arc<dyn Embedder>) -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Store::open(&dir.path().join("engram.db"), Config::default()).unwrap();
    s.set_embedder(Some(e));
    (s, dir)
}

fn remember(s: &mut Store, content: &str, kind: Kind) -> i64 {
    s.remember(RememberRequest {
        content: content.into(),
        kind: Some(kind),
        room: Some("app".into()),
        ..Default::default()
    })
    .unwrap()
    .id
}

fn recall(s: &mut Store, q: &str) -> engram_store::RecallResult {
    let mut r = RecallRequest::new(q);
    r.room = Some("app".into());
    r.limit = 5;
    s.recall(&r).unwrap()
}

const DISTRACTORS: &[&str] = &[
    "The CI pipeline runs clippy with warnings denied",
    "Release builds use thin LTO and strip symbols",
    "The user likes concise commit messages",
    "Integration tests spawn the real binary",
    "Logs go to stderr, never stdout",
    "The office coffee machine is on the third floor",
    "Quarterly planning happens in January",
];

#[test]
fn meaning_finds_memories_that_share_no_words_with_the_query() {
    let (mut s, _d) = store_with(model());
    for d in DISTRACTORS {
        remember(&mut s, d, Kind::Fact);
    }
    let db = remember(
        &mut s,
        "We switched the project database from PostgreSQL to SQLite",
        Kind::Decision,
    );
    let tabs = remember(
        &mut s,
        "Indent code with four spaces, never tabs",
        Kind::Preference,
    );
    let r = recall(&mut s, "which storage engine does the app use");
    assert_eq!(
        r.hits[0].memory.id,
        db,
        "{:?}",
        r.hits
            .iter()
            .map(|h| (&h.memory.content, h.cosine))
            .collect::<Vec<_>>()
    );
    assert!(r.hits[0].cosine.unwrap() > 0.2);
    let r = recall(&mut s, "whitespace style for source files");
    assert_eq!(r.hits[0].memory.id, tabs);
    let st = s.stats().unwrap();
    assert_eq!(st.search, "hybrid");
    assert_eq!(st.embeddings.missing, 0);
    assert_eq!(st.embeddings.dim, Some(384));
}

#[test]
fn the_latest_truth_wins_after_a_correction() {
    let (mut s, _d) = store_with(model());
    for d in DISTRACTORS {
        remember(&mut s, d, Kind::Fact);
    }
    let old = remember(&mut s, "The project database is PostgreSQL", Kind::Decision);
    let c = s
        .correct(
            &IdRef::Id(old),
            "We switched from PostgreSQL to SQLite",
            "moved to a local store",
            None,
        )
        .unwrap();
    for q in [
        "what database does the project use",
        "PostgreSQL",
        "project database",
    ] {
        let r = recall(&mut s, q);
        assert_eq!(r.hits[0].memory.id, c.new_id, "{q}");
        assert!(
            r.hits.iter().all(|h| h.memory.id != old),
            "{q}: the superseded memory stays out of fast recall"
        );
    }
}

#[test]
fn memories_written_before_the_model_are_embedded_later_and_other_models_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut s = Store::open(&path, Config::default()).unwrap();
    let a = remember(&mut s, "Deployments happen on Tuesdays", Kind::Fact);
    // A vector of another model and dimension is in the store too.
    s.set_embedder(Some(Arc::new(HashEmbedder::new(64))));
    assert_eq!(s.embed_missing(|_| {}).unwrap(), 1);
    s.set_embedder(Some(model()));
    assert_eq!(
        s.stats().unwrap().embeddings.missing,
        1,
        "the 64-d hash vector does not count for MiniLM"
    );
    let r = recall(&mut s, "when do we ship releases");
    assert!(
        r.hits.iter().all(|h| h.cosine.is_none()),
        "no vector of this model yet, and no dimension error"
    );
    assert_eq!(s.embed_missing(|_| {}).unwrap(), 1);
    let r = recall(&mut s, "when do we ship releases");
    assert_eq!(r.hits[0].memory.id, a);
    assert!(r.hits[0].cosine.is_some());
}

#[test]
fn vectors_written_by_another_process_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let mut reader = Store::open(&path, Config::default()).unwrap();
    reader.set_embedder(Some(Arc::new(HashEmbedder::new(128))));
    recall(&mut reader, "warm up the index");
    let mut writer = Store::open(&path, Config::default()).unwrap();
    writer.set_embedder(Some(Arc::new(HashEmbedder::new(128))));
    let id = remember(
        &mut writer,
        "kubernetes cluster autoscaling notes",
        Kind::Fact,
    );
    let r = recall(&mut reader, "kubernetes autoscaling");
    assert_eq!(r.hits[0].memory.id, id);
    assert!(
        r.hits[0].cosine.is_some(),
        "the reader picked up the writer's vector"
    );
}

#[test]
fn fusion_modes_all_rank_an_exact_match_first() {
    for fusion in ["weighted", "max", "rrf"] {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            fusion: serde_json::from_value(serde_json::json!(fusion)).unwrap(),
            ..Config::default()
        };
        let mut s = Store::open(&dir.path().join("engram.db"), config).unwrap();
        s.set_embedder(Some(Arc::new(HashEmbedder::new(256))));
        for d in DISTRACTORS {
            remember(&mut s, d, Kind::Fact);
        }
        let id = remember(&mut s, "The staging cluster runs in eu-west-1", Kind::Fact);
        let r = recall(&mut s, "staging cluster region");
        assert_eq!(r.hits[0].memory.id, id, "{fusion}");
        assert!(!r.auto_deepened, "{fusion}");
        let mut deep = RecallRequest::new("staging cluster region");
        deep.room = Some("app".into());
        deep.mode = Mode::Exhaustive;
        assert_eq!(s.recall(&deep).unwrap().hits[0].memory.id, id, "{fusion}");
    }
}

/// Write-path resolution with the real model on the built-in labelled cases (English,
/// Japanese, Chinese). These are the cases the rules were developed against, so this
/// guards against regressions; `engram bench resolve --cases …` measures the blind sets.
#[test]
fn resolution_with_the_real_model_on_the_built_in_cases() {
    let cases = include_str!("../data/resolution-cases.jsonl");
    let mut wrong = Vec::new();
    let mut n = 0;
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        let (mut s, _dir) = store_with(model());
        for e in c["existing"].as_array().unwrap() {
            s.remember(RememberRequest {
                content: e.as_str().unwrap().into(),
                room: Some("app".into()),
                ..Default::default()
            })
            .unwrap();
        }
        let out = s
            .remember(RememberRequest {
                content: c["new"].as_str().unwrap().into(),
                room: Some("app".into()),
                ..Default::default()
            })
            .unwrap();
        let got = serde_json::to_value(out.action).unwrap();
        if got != c["expect"] {
            wrong.push(format!("{line} → {got}"));
        }
        n += 1;
    }
    assert!(n >= 50);
    // Every built-in case holds today; allow one miss so a model update can be judged by
    // `bench resolve` rather than by a red build.
    assert!(
        wrong.len() <= 1,
        "{} of {n} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Six memories about the login feature and one standing instruction that shares no word
/// with the question; `places` is the `standing_places` setting.
fn login_store(places: usize) -> (Store, tempfile::TempDir, i64) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        standing_places: places,
        ..Config::default()
    };
    let mut s = Store::open(&dir.path().join("engram.db"), cfg).unwrap();
    s.set_embedder(Some(model()));
    let rule = remember(
        &mut s,
        "Always format code snippets with syntax highlighting when I ask about implementation details.",
        Kind::Preference,
    );
    for t in [
        "The login feature checks the password hash with bcrypt",
        "Login sessions are stored in a signed cookie for seven days",
        "The login form posts the email and password to /auth/login",
        "Failed login attempts are rate limited to five per minute",
        "We show how to implement login with Flask-Login in the docs",
        "The login page links to the password reset feature",
    ] {
        remember(&mut s, t, Kind::Fact);
    }
    (s, dir, rule)
}

#[test]
fn a_standing_instruction_gets_its_own_place_when_it_applies() {
    let (mut s, _d, rule) = login_store(1);
    let stored = s.get(&IdRef::Id(rule)).unwrap();
    assert!(
        stored.tags.iter().any(|t| t == "standing"),
        "{:?}",
        stored.tags
    );
    let r = recall(
        &mut s,
        "Could you show me how to implement a login feature?",
    );
    assert_eq!(r.hits.len(), 5);
    let last = &r.hits[1];
    assert_eq!(
        last.memory.id,
        rule,
        "{:?}",
        r.hits.iter().map(|h| &h.memory.content).collect::<Vec<_>>()
    );
    assert_eq!(last.via, engram_store::Via::Standing);
    // Unrelated to the instruction's scope: the place stays topical.
    let r = recall(&mut s, "what is the office coffee machine like");
    assert!(r.hits.iter().all(|h| h.via != engram_store::Via::Standing));

    // With the places off, the topical memories crowd it out.
    let (mut s, _d, rule) = login_store(0);
    let r = recall(
        &mut s,
        "Could you show me how to implement a login feature?",
    );
    assert!(r.hits.iter().all(|h| h.memory.id != rule));
}
