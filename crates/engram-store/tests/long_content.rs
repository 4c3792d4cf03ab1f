//! Long text on a real on-disk store: a capture path stores over-limit content as linked
//! parts of one record (nothing refused, nothing cut), an agent's `remember` still gets the
//! limit error, and a long search context never counts against the metadata limit.

mod support;
use engram_core::limits::{MAX_CONTENT_BYTES, MAX_METADATA_BYTES};
use engram_core::memory::IdRef;
use engram_core::{Config, Kind, LinkKind};
use engram_store::{Error, RecallRequest, RememberRequest, Store};

fn store() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let s = support::open_in(dir.path(), Config::default());
    (s, dir)
}

/// A pasted log of about 350 KB whose only mention of a rare word is near its end.
fn long_log() -> String {
    let mut text = String::from("build log of the nightly pipeline\n");
    for i in 0..7000 {
        text.push_str(&format!(
            "step {i}: compiled module number {i} without warnings\n"
        ));
    }
    text.push_str("FATAL: linker ran out of memory on the quokka target\n");
    text
}

#[test]
fn capture_stores_over_limit_text_as_linked_parts_of_one_record() {
    let (mut s, _d) = store();
    let text = long_log();
    assert!(text.len() > 5 * MAX_CONTENT_BYTES);
    let out = s
        .remember_capture(RememberRequest {
            content: text.clone(),
            title: Some("nightly log".into()),
            kind: Some(Kind::Episode),
            room: Some("ci".into()),
            session_id: Some("s1".into()),
            metadata: Some(serde_json::json!({ "agent": "test" })),
            ..Default::default()
        })
        .unwrap();
    let first = s.get(&IdRef::Id(out.id)).unwrap();
    let mut ids = vec![out.id];
    ids.extend(&out.parts);
    let parts: Vec<_> = ids
        .iter()
        .map(|&id| s.get(&IdRef::Id(id)).unwrap())
        .collect();
    assert!(parts.len() >= 6, "{} parts", parts.len());
    // Nothing cut: the parts, in order, are exactly the text.
    let joined: String = parts.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(joined, text);
    for (i, m) in parts.iter().enumerate() {
        assert!(m.content.len() <= MAX_CONTENT_BYTES);
        assert_eq!(m.metadata["part"], i + 1);
        assert_eq!(m.metadata["parts"], parts.len());
        assert_eq!(m.metadata["agent"], "test");
        assert_eq!(m.room, "ci");
        assert_eq!(m.kind, Kind::Episode);
        assert_eq!(m.session_id.as_deref(), Some("s1"));
        if i > 0 {
            assert_eq!(m.metadata["part_of"], first.uid.as_str());
            let links = s.show(&IdRef::Id(m.id)).unwrap().links;
            assert!(
                links
                    .iter()
                    .any(|l| l.kind == LinkKind::Explicit
                        && (l.dst == first.id || l.src == first.id)),
                "part {} is linked to the first: {links:?}",
                i + 1
            );
        }
    }
    // The end of the log is searchable.
    let mut q = RecallRequest::new("quokka linker memory");
    q.room = Some("ci".into());
    let hits = s.recall(&q).unwrap().hits;
    assert_eq!(
        hits.first().map(|h| h.memory.id),
        parts.last().map(|m| m.id)
    );
}

#[test]
fn an_agents_remember_still_gets_the_limit_error() {
    let (mut s, _d) = store();
    let err = s
        .remember(RememberRequest {
            content: long_log(),
            ..Default::default()
        })
        .unwrap_err();
    match err {
        Error::Input(e) => {
            assert_eq!(e.field, "content");
            assert!(e.to_string().contains("65536"), "{e}");
        }
        other => panic!("expected an input error, got {other:?}"),
    }
    assert_eq!(s.stats().unwrap().total_memories, 0);
}

#[test]
fn a_long_context_does_not_count_against_the_metadata_limit() {
    let (mut s, _d) = store();
    let previous = "the previous message, long: ".to_string() + &"words and more ".repeat(2000);
    assert!(previous.len() > MAX_METADATA_BYTES);
    let out = s
        .remember(RememberRequest {
            content: "the answer to it".into(),
            metadata: Some(serde_json::json!({ "turn": "D1:2" })),
            context: Some(previous),
            ..Default::default()
        })
        .unwrap();
    let m = s.get(&IdRef::Id(out.id)).unwrap();
    assert_eq!(m.metadata["turn"], "D1:2");
    // The user's own metadata still has its limit.
    let err = s
        .remember(RememberRequest {
            content: "another".into(),
            metadata: Some(serde_json::json!({ "blob": "z".repeat(MAX_METADATA_BYTES) })),
            context: Some("short".into()),
            ..Default::default()
        })
        .unwrap_err();
    assert!(matches!(err, Error::Input(e) if e.field == "metadata"));
}

#[test]
fn an_import_stores_over_limit_content_in_parts_and_a_reimport_adds_nothing() {
    let (mut s, _d) = store();
    let text = long_log();
    let uid = engram_store::transfer::derived_uid(1_700_000_000_000, "source-item-1");
    let batch = || engram_store::Batch {
        memories: vec![engram_store::transfer::ImportedMemory::new(
            engram_store::transfer::blank_memory(uid.clone(), text.clone(), 1_700_000_000_000),
        )],
        ..Default::default()
    };
    let report = s.import_batch(batch(), &mut |_, _| {}).unwrap();
    let parts = report.created_count("memories");
    assert!(parts >= 6, "{report:?}");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.created_count("links"), parts - 1);
    let first = s.get(&IdRef::Uid(uid.clone())).unwrap();
    assert_eq!(first.metadata["parts"], parts);
    let again = s.import_batch(batch(), &mut |_, _| {}).unwrap();
    assert_eq!(again.created_count("memories"), 0);
    assert_eq!(again.skipped_count("memories"), parts);
    assert_eq!(s.stats().unwrap().total_memories, parts as u64);
}

/// A long text is one record: its whole text reads back from the first part, a recall for
/// whole records answers it once, and new content replaces all of it (the later parts go
/// to the trash, restorable).
#[test]
fn a_long_text_is_one_record_to_read_recall_and_update() {
    let (mut s, _d) = store();
    let text = long_log();
    let out = s
        .remember_capture(RememberRequest {
            content: text.clone(),
            room: Some("ci".into()),
            ..Default::default()
        })
        .unwrap();
    let first = s.get(&IdRef::Id(out.id)).unwrap();
    assert_eq!(s.whole_content(&first).unwrap(), text);
    let mut req = RecallRequest::new("quokka linker");
    req.room = Some("ci".into());
    req.whole_records = true;
    let r = s.recall(&req).unwrap();
    assert_eq!(r.hits.len(), 1, "one record");
    assert_eq!(r.hits[0].memory.id, out.id);
    assert_eq!(r.hits[0].memory.content, text);
    s.update(
        &IdRef::Id(out.id),
        engram_store::MemoryUpdate {
            content: Some("the nightly log, summarised: linker out of memory".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let first = s.get(&IdRef::Id(out.id)).unwrap();
    assert_eq!(
        s.whole_content(&first).unwrap(),
        "the nightly log, summarised: linker out of memory"
    );
    for p in &out.parts {
        assert_eq!(
            s.get(&IdRef::Id(*p)).unwrap().tier,
            engram_core::Tier::Trash
        );
    }
}
