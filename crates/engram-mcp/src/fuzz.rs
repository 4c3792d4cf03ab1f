//! Property-based fuzzing (proptest, stable) of the MCP request path:
//!
//! - [`stdio::check_line`](super::stdio::check_line), the framing check every stdin line
//!   passes: any bytes give either a line to forward that is a JSON-RPC object, or an error
//!   reply that is itself valid JSON-RPC;
//! - [`Shared::call`], the dispatch to every tool of every profile, with arbitrary JSON
//!   arguments shaped like each tool's schema: never a panic, and an error always comes
//!   back as a tool error with a message.
//!
//! Cases per property: `ENGRAM_FUZZ_CASES` (default 256). Long run:
//! `ENGRAM_FUZZ_CASES=20000 cargo test -p engram-mcp --release --lib fuzz`.

use super::{Shared, stdio};
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::sync::Arc;

fn cases() -> u32 {
    std::env::var("ENGRAM_FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(256)
}

fn hostile_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "", " ", "1", "#1", "2", "#999999", "-1", "0", "*", "common", "..", "../../etc/passwd",
            "/", "/tmp", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "fact", "decision", "failure", "deep",
            "exhaustive", "fast", "all", "any", "critical", "blocked", "done", "success",
            "supersedes", "related", "NaN", "1e308", "true", "null", "記憶", "\0", "a\u{0}b",
            "\"AND\" OR NEAR(", "'; DROP TABLE memories; --",
        ]).prop_map(str::to_string),
        2 => any::<String>(),
        1 => (0usize..3).prop_map(|k| "x".repeat([257, 4097, 65_537][k])),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..60).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        hostile_string().prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(3, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(hostile_string(), inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The servers under test (one per profile) over one temporary store, seeded with a few
/// memories so that ids hit real rows.
struct Fixture {
    _dir: tempfile::TempDir,
    servers: Vec<Arc<Shared>>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engram.db");
    let opener: super::Opener = Arc::new(move || {
        Ok(engram_store::Store::open(
            &path,
            engram_core::Config::default(),
        )?)
    });
    let servers: Vec<_> = ["all", "compat-a", "compat-b", "compat-c"]
        .iter()
        .map(|p| Shared::new(opener.clone(), None, p, None).unwrap())
        .inspect(|s| s.model_unavailable("this test loads no model".into()))
        .collect();
    for i in 0..8 {
        let r = servers[0].call(
            "remember",
            json!({"content": format!("seed memory {i} about the build"), "room": "common"}),
            "fuzz",
        );
        assert_ne!(r.is_error, Some(true));
    }
    Fixture { _dir: dir, servers }
}

thread_local! {
    static FIXTURE: Fixture = fixture();
}

fn property_names(spec: &super::tools::ToolSpec) -> Vec<String> {
    let schema = (spec.schema)();
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    names.push("unknown_field".into());
    names
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn framing_answers_any_bytes_with_json_rpc(line in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        json_value().prop_map(|v| v.to_string().into_bytes()),
        (json_value(), hostile_string()).prop_map(|(p, m)| json!({"jsonrpc": "2.0", "id": 1, "method": m, "params": p}).to_string().into_bytes()),
    ]) {
        match stdio::check_line(&line) {
            Ok(()) => {
                let v: Value = serde_json::from_slice(&line).expect("forwarded lines are JSON");
                prop_assert_eq!(v["jsonrpc"].as_str(), Some("2.0"));
            }
            Err(reply) => {
                prop_assert_eq!(reply["jsonrpc"].as_str(), Some("2.0"));
                let code = reply["error"]["code"].as_i64().unwrap();
                prop_assert!(code == -32700 || code == -32600, "code {}", code);
                prop_assert!(reply["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
                // The reply is one line: it can be written to stdout as it is.
                prop_assert!(!reply.to_string().contains('\n'));
            }
        }
    }

    #[test]
    fn every_tool_answers_any_arguments(
        profile in 0usize..4,
        tool in any::<prop::sample::Index>(),
        fields in prop::collection::vec((any::<prop::sample::Index>(), json_value()), 0..6),
        whole in prop::option::weighted(0.1, json_value()),
    ) {
        FIXTURE.with(|f| {
            let server = &f.servers[profile];
            let spec = tool.get(&server.tools);
            let args = match whole {
                Some(v) => v,
                None => {
                    let names = property_names(spec);
                    let mut m = Map::new();
                    for (k, v) in fields {
                        m.insert(k.get(&names).clone(), v);
                    }
                    Value::Object(m)
                }
            };
            let r = server.call(spec.name, args.clone(), "fuzz");
            if r.is_error == Some(true) {
                let msg = r.structured_content.as_ref().and_then(|s| s["error"]["message"].as_str().map(str::to_string));
                prop_assert!(msg.is_some_and(|m| !m.is_empty()), "{} {}: an error without a message", spec.name, args);
            } else {
                prop_assert!(r.structured_content.is_some(), "{} {}: a result without structured content", spec.name, args);
            }
            Ok(())
        })?;
    }
}
