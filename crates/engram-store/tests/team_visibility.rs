//! A team store's visibility, through the engine on a real store (SQLite, or the backend
//! `ENGRAM_TEST_STORE` names): users and tokens, authors, and one user's private memories
//! absent from everything another user's call can read, count, walk, judge or export,
//! while shared ones are seen by both with their author.

mod support;

use engram_core::memory::IdRef;
use engram_core::{Kind, LinkKind};
use engram_store::browse::{ListRequest, Order};
use engram_store::{RecallRequest, RememberAction, RememberRequest, Store};
use support::{no_resolution, temp_store};

fn remember(s: &mut Store, user: &str, content: &str, room: &str, kind: Kind) -> i64 {
    s.as_viewer(Some(user), |s| {
        s.remember(RememberRequest {
            content: content.into(),
            room: Some(room.into()),
            kind: Some(kind),
            source: Some("test-client".into()),
            ..Default::default()
        })
    })
    .unwrap()
    .unwrap()
    .id
}

/// Everything `user` gets back from a recall of `query` in `room`, as JSON text.
fn recall(s: &mut Store, user: Option<&str>, query: &str, room: &str) -> String {
    s.as_viewer(user, |s| {
        let mut req = RecallRequest::new(query);
        req.room = Some(room.into());
        req.mode = engram_store::Mode::Exhaustive;
        serde_json::to_string(&s.recall(&req).unwrap()).unwrap()
    })
    .unwrap()
}

struct Team {
    store: Store,
    _dir: tempfile::TempDir,
    private: i64,
    preference: i64,
    shared: i64,
}

fn team() -> Team {
    let (mut store, dir) = temp_store(no_resolution());
    store.team_add_user("alice").unwrap();
    store.team_add_user("bob").unwrap();
    let private = remember(
        &mut store,
        "alice",
        "Alice's locker code is kumquat-42",
        "private",
        Kind::Fact,
    );
    let preference = remember(
        &mut store,
        "alice",
        "Alice prefers kumquat themed editors",
        "app",
        Kind::Preference,
    );
    let shared = remember(
        &mut store,
        "alice",
        "The app deploys kumquat builds with Helm",
        "app",
        Kind::Decision,
    );
    // A shared memory linked to a private one: its neighbours must not reveal it.
    store
        .as_viewer(Some("alice"), |s| {
            s.link(
                &IdRef::Id(shared),
                &IdRef::Id(private),
                LinkKind::Related,
                None,
            )
        })
        .unwrap()
        .unwrap();
    Team {
        store,
        _dir: dir,
        private,
        preference,
        shared,
    }
}

#[test]
fn tokens_authenticate_their_user_until_revoked() {
    let (mut s, _dir) = temp_store(no_resolution());
    assert!(!s.team_mode().unwrap());
    let token = s.team_add_user("alice").unwrap();
    assert!(
        token.starts_with("engram_") && token.len() == 7 + 64,
        "{token}"
    );
    assert!(s.team_mode().unwrap());
    assert_eq!(
        s.team_authenticate(&token).unwrap().as_deref(),
        Some("alice")
    );
    assert_eq!(s.team_authenticate("engram_0000").unwrap(), None);
    assert_eq!(s.team_authenticate("").unwrap(), None);
    let err = s.team_add_user("alice").unwrap_err();
    assert_eq!(err.field(), Some("name"), "{err}");
    assert_eq!(s.team_add_user("a b").unwrap_err().field(), Some("name"));

    s.team_revoke("alice").unwrap();
    assert_eq!(s.team_authenticate(&token).unwrap(), None);
    assert!(s.team_mode().unwrap(), "revoking never leaves team mode");
    let fresh = s.team_new_token("alice").unwrap();
    assert_ne!(fresh, token);
    assert_eq!(
        s.team_authenticate(&fresh).unwrap().as_deref(),
        Some("alice")
    );
    assert_eq!(s.team_authenticate(&token).unwrap(), None);
    assert_eq!(s.team_revoke("nobody").unwrap_err().field(), Some("name"));
    let users = s.team_users().unwrap();
    assert_eq!(users.len(), 1);
    assert!(users[0].active);
}

#[test]
fn every_memory_records_its_author_and_local_writes_none() {
    let mut t = team();
    let m = t.store.get(&IdRef::Id(t.shared)).unwrap();
    assert_eq!(
        (m.author.as_deref(), m.source.as_str()),
        (Some("alice"), "test-client")
    );
    let local = t
        .store
        .remember(RememberRequest {
            content: "A local note".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(t.store.get(&IdRef::Id(local.id)).unwrap().author, None);
}

#[test]
fn another_users_private_memories_do_not_exist_for_bob() {
    let mut t = team();
    let (private, preference, shared) = (t.private, t.preference, t.shared);
    let s = &mut t.store;

    // Recall in every room and mode: the shared memory, with its author; nothing private.
    let found = recall(s, Some("bob"), "kumquat", "app");
    assert!(
        found.contains("Helm") && found.contains("\"author\":\"alice\""),
        "{found}"
    );
    assert!(!found.contains("themed editors"), "{found}");
    assert!(!recall(s, Some("bob"), "kumquat locker", "private").contains("locker"));
    assert!(recall(s, Some("alice"), "kumquat locker", "private").contains("locker"));
    assert!(recall(s, None, "kumquat locker", "private").contains("locker"));

    s.as_viewer(Some("bob"), |s| {
        // By id: not found, worded exactly as a missing id.
        for id in [private, preference] {
            let hidden = s.get(&IdRef::Id(id)).unwrap_err().to_string();
            let missing = s.get(&IdRef::Id(999_999)).unwrap_err().to_string();
            assert_eq!(
                hidden.replace(&id.to_string(), "N"),
                missing.replace("999999", "N")
            );
            assert!(s.show(&IdRef::Id(id)).is_err());
            assert!(s.timeline(&IdRef::Id(id), 5, 5).is_err());
        }
        // The shared memory's links, timeline and graph leave the private one out.
        let detail = s.show(&IdRef::Id(shared)).unwrap();
        assert!(detail.links.is_empty(), "{:?}", detail.links);
        let (before, _, after) = s.timeline(&IdRef::Id(shared), 10, 10).unwrap();
        assert!(
            before
                .iter()
                .chain(&after)
                .all(|m| m.id != private && m.id != preference)
        );
        let graph = serde_json::to_string(&s.graph(None, 100).unwrap()).unwrap();
        assert!(
            !graph.contains("locker") && !graph.contains("themed"),
            "{graph}"
        );
        // Lists and counts.
        let listed = s
            .list_memories(&ListRequest {
                kinds: vec![],
                tiers: vec![],
                room: None,
                order: Order::default(),
                limit: 50,
            })
            .unwrap();
        assert_eq!(listed.len(), 1, "only the shared memory");
        let stats = s.stats().unwrap();
        assert_eq!(stats.total_memories, 1);
        assert!(
            !stats.by_room.contains_key("private"),
            "{:?}",
            stats.by_room
        );
        assert!(stats.links_by_kind.is_empty(), "{:?}", stats.links_by_kind);
        let health = s.health().unwrap();
        assert_eq!(
            (health.memories, health.live_memories),
            (1, 1),
            "doctor's counts"
        );
        let days = s.activity(30).unwrap();
        assert_eq!(days.iter().map(|d| d.created).sum::<u64>(), 1, "{days:?}");
        let recalls: u64 = days.iter().map(|d| d.recalls).sum();
        assert!(
            recalls >= 1,
            "bob's own recall of the shared memory counts: {days:?}"
        );
        // Export.
        let mut out = Vec::new();
        s.export_jsonl(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Helm") && !text.contains("locker") && !text.contains("themed"));
        // Writes aimed at it fail as for a missing id.
        assert!(s.forget(&IdRef::Id(private)).is_err());
        assert!(
            s.link(
                &IdRef::Id(shared),
                &IdRef::Id(private),
                LinkKind::Related,
                None
            )
            .is_err()
        );
    })
    .unwrap();

    // The recall hits on alice's memories are not in bob's activity.
    let hits = |s: &mut Store, user: Option<&str>| -> u64 {
        s.as_viewer(user, |s| {
            s.activity(30).unwrap().iter().map(|d| d.recalls).sum()
        })
        .unwrap()
    };
    let (bob_hits, all_hits) = (hits(s, Some("bob")), hits(s, None));
    assert!(bob_hits < all_hits, "bob {bob_hits}, everyone {all_hits}");

    // Alice still sees all three, untouched; the store itself sees all.
    s.as_viewer(Some("alice"), |s| {
        assert_eq!(s.stats().unwrap().total_memories, 3);
        assert_eq!(s.show(&IdRef::Id(shared)).unwrap().links.len(), 1);
    })
    .unwrap();
    assert_eq!(s.stats().unwrap().total_memories, 3);
}

#[test]
fn a_write_by_bob_never_folds_into_alices_private_memory() {
    let (mut s, _dir) = temp_store(engram_core::Config::default());
    s.team_add_user("alice").unwrap();
    s.team_add_user("bob").unwrap();
    let a = remember(
        &mut s,
        "alice",
        "My locker code is kumquat-42",
        "private",
        Kind::Fact,
    );
    // The same words in the same room: for alice a repeat, for bob a memory of his own.
    let b = s
        .as_viewer(Some("bob"), |s| {
            s.remember(RememberRequest {
                content: "My locker code is kumquat-42".into(),
                room: Some("private".into()),
                kind: Some(Kind::Fact),
                ..Default::default()
            })
        })
        .unwrap()
        .unwrap();
    assert_eq!(b.action, RememberAction::Created, "{b:?}");
    assert_ne!(b.id, a);
    assert!(
        serde_json::to_string(&b)
            .unwrap()
            .find(&format!("\"id\":{a}"))
            .is_none(),
        "bob is never told of alice's memory: {b:?}"
    );
    let m = s.get(&IdRef::Id(b.id)).unwrap();
    assert_eq!(m.author.as_deref(), Some("bob"));
    let again = s
        .as_viewer(Some("alice"), |s| {
            s.remember(RememberRequest {
                content: "My locker code is kumquat-42".into(),
                room: Some("private".into()),
                kind: Some(Kind::Fact),
                ..Default::default()
            })
        })
        .unwrap()
        .unwrap();
    assert_eq!(
        again.id, a,
        "alice's own repeat still reinforces hers: {again:?}"
    );

    // A changed value that would supersede hers (it does for alice herself, below) is a
    // memory of bob's own, offered against nothing of hers.
    let change = |s: &mut Store, user: &str, text: &str| {
        s.as_viewer(Some(user), |s| {
            s.remember(RememberRequest {
                content: text.into(),
                room: Some("private".into()),
                kind: Some(Kind::Fact),
                ..Default::default()
            })
        })
        .unwrap()
        .unwrap()
    };
    // (It supersedes bob's own earlier memory of the same words, #b, never alice's.)
    let b2 = change(&mut s, "bob", "My locker code is now kumquat-43");
    let told: serde_json::Value = serde_json::to_value(&b2).unwrap();
    assert_eq!(told["touched"], serde_json::json!([b.id]), "{told}");
    assert!(!told.to_string().contains(&format!("#{a}")), "{told}");
    let alices = s.get(&IdRef::Id(a)).unwrap();
    assert_eq!(
        alices.tier,
        engram_core::Tier::Active,
        "bob superseded nothing of hers"
    );
    let a2 = change(&mut s, "alice", "My locker code is now kumquat-44");
    let hers = serde_json::to_value(&a2).unwrap();
    assert_eq!(
        hers["touched"],
        serde_json::json!([a]),
        "alice's own change resolves against her memory, not bob's: {hers}"
    );
}

/// Sessions and prompts record no user: on a team server those of a private room are
/// shown to no team user (the store itself still sees them), those of shared rooms to all.
#[test]
fn sessions_and_prompts_of_private_rooms_are_shown_to_their_owner_only() {
    let mut t = team();
    let s = &mut t.store;
    let origin = |room: &str| engram_store::Origin {
        room: Some(room.into()),
        ..Default::default()
    };
    s.as_viewer(Some("alice"), |s| {
        s.session_start("s-private", &origin("private"), None)
            .unwrap();
        s.save_prompt("what is my kumquat locker code", None, &origin("private"))
            .unwrap();
        s.session_start("s-app", &origin("app"), None).unwrap();
        s.save_prompt("how do we deploy kumquat builds", None, &origin("app"))
            .unwrap();
    })
    .unwrap();
    // Alice, who wrote them, sees her private session and prompt in every list; bob sees
    // neither, not even as a count.
    for (user, owner) in [("alice", true), ("bob", false)] {
        s.as_viewer(Some(user), |s| {
            let prompts = format!("{:?}", s.recent_prompts(None, 10).unwrap());
            assert!(
                prompts.contains("deploy") && prompts.contains("locker") == owner,
                "{user}: {prompts}"
            );
            let sessions = format!("{:?}", s.recent_sessions(None, 10).unwrap());
            assert!(
                sessions.contains("s-app") && sessions.contains("s-private") == owner,
                "{user}: {sessions}"
            );
            let listed = format!("{:?}", s.recent_sessions(Some("private"), 10).unwrap());
            assert_eq!(listed.contains("s-private"), owner, "{user}: {listed}");
            let rooms = s.rooms().unwrap();
            let private = rooms.iter().find(|r| r.name == "private");
            assert_eq!(
                private.map(|r| (r.sessions, r.prompts)),
                owner.then_some((1, 1)),
                "{user}: {rooms:?}"
            );
        })
        .unwrap();
    }
    let all = format!("{:?}", s.recent_prompts(None, 10).unwrap());
    assert!(
        all.contains("locker"),
        "the store itself sees every prompt: {all}"
    );
}

/// Maintenance runs as the server, which sees everything: its consolidation must still
/// never fold one author's private memory into another's (the words would move across),
/// and the run's report read by a team user names none of another's private memories.
#[test]
fn maintenance_never_folds_private_memories_across_authors() {
    let (mut s, _dir) = temp_store(no_resolution());
    s.team_add_user("alice").unwrap();
    s.team_add_user("bob").unwrap();
    let a = remember(
        &mut s,
        "alice",
        "The quarterly audit of vendor contracts is handled by Miriam muword nuword xiword",
        "private/hr",
        Kind::Fact,
    );
    let b = remember(
        &mut s,
        "bob",
        "The quarterly audit of vendor contracts is handled by Miriam",
        "private/hr",
        Kind::Fact,
    );
    let report = s.maintain(false).unwrap();
    assert!(
        report
            .consolidated
            .iter()
            .all(|c| !(c.keeper == a && c.archived.contains(&b)
                || c.keeper == b && c.archived.contains(&a))),
        "{report:?}"
    );
    let bobs = s.get(&IdRef::Id(b)).unwrap();
    assert!(!bobs.content.contains("muword"), "{bobs:?}");
    assert_eq!(
        s.get(&IdRef::Id(a)).unwrap().tier,
        engram_core::Tier::Active
    );
    // The same pair written by one author is a cluster: the rule, not the threshold, held.
    let a2 = remember(
        &mut s,
        "alice",
        "The quarterly audit of vendor contracts is handled by Miriam",
        "private/hr",
        Kind::Fact,
    );
    let again = s.consolidate_now(Some("private/hr")).unwrap();
    assert!(
        again
            .iter()
            .any(|c| [c.keeper].iter().chain(&c.archived).any(|x| *x == a2)),
        "{again:?}"
    );
    let log = s
        .as_viewer(Some("bob"), |s| s.maintenance_log(5).unwrap())
        .unwrap();
    let text = serde_json::to_string(&log).unwrap();
    for id in [a, a2] {
        assert!(!text.contains(&format!(":{id},")), "{text}");
        assert!(!text.contains(&format!("[{id}")), "{text}");
        assert!(!text.contains(&format!(",{id}]")), "{text}");
    }
    assert!(!text.contains("examined"), "{text}");
}

/// A write of what the team reads and a private memory of the same author never act on
/// each other: otherwise the shared memory's history would name and quote the private one
/// ("replaces #id: 47 → 10") to every user.
#[test]
fn a_shared_write_never_resolves_against_a_private_memory() {
    let (mut s, _dir) = temp_store(engram_core::Config::default());
    s.team_add_user("alice").unwrap();
    s.team_add_user("bob").unwrap();
    let private = remember(
        &mut s,
        "alice",
        "I always set the request timeout to 47s in my local config",
        "r6",
        Kind::Preference,
    );
    let fact = remember(
        &mut s,
        "alice",
        "The request timeout in the local config was lowered to 10s",
        "r6",
        Kind::Fact,
    );
    let shown = s
        .as_viewer(Some("bob"), |s| {
            serde_json::to_string(&s.show(&IdRef::Id(fact)).unwrap()).unwrap()
        })
        .unwrap();
    assert!(!shown.contains(&format!("#{private}")), "{shown}");
    // "47s", not "47": a bare "47" turns up in timestamps and uids by chance.
    assert!(!shown.contains("47s"), "{shown}");
    assert_eq!(
        s.get(&IdRef::Id(private)).unwrap().tier,
        engram_core::Tier::Active
    );
}

/// An import naming an id that another user's private memory holds gets a new id, as a
/// taken id does: never a constraint error that says the hidden memory exists.
#[test]
fn an_import_at_a_hidden_id_gets_a_new_id() {
    let (mut s, _dir) = temp_store(no_resolution());
    s.team_add_user("alice").unwrap();
    s.team_add_user("bob").unwrap();
    let a = remember(
        &mut s,
        "alice",
        "Alice's locker code is kumquat-42",
        "private",
        Kind::Fact,
    );
    let line = serde_json::json!({
        "type": "memory", "id": a, "uid": "01JA0000000000000000000099",
        "content": "Bob's imported note about builds", "kind": "fact", "importance": 0.5,
        "tags": [], "room": "app", "tier": "active",
        "created_at": "2026-09-21T00:00:00Z", "updated_at": "2026-09-21T00:00:00Z",
        "valid_from": "2026-09-21T00:00:00Z", "valid_to": null, "pinned": false,
        "source": "import", "metadata": {},
    });
    let batch =
        engram_store::transfer::read_jsonl(&mut std::io::Cursor::new(format!("{line}\n"))).unwrap();
    let out = s
        .as_viewer(Some("bob"), |s| s.import_batch(batch, &mut |_, _| {}))
        .unwrap();
    assert_eq!(out.unwrap().created_count("memories"), 1);
    assert!(s.get(&IdRef::Id(a)).unwrap().content.contains("kumquat-42"));
}

/// Sessions and prompts carry their user: bob can neither end alice's shared session nor
/// delete her shared prompt (a clear refusal), and her private room's session and prompt
/// do not exist for him (the answers of a missing id). Alice's own always work, and one
/// person's store (no viewer) is unchanged.
#[test]
fn another_users_sessions_and_prompts_cannot_be_ended_or_deleted() {
    let mut t = team();
    let s = &mut t.store;
    let origin = |room: &str| engram_store::Origin {
        room: Some(room.into()),
        ..Default::default()
    };
    let (shared_prompt, private_prompt) = s
        .as_viewer(Some("alice"), |s| {
            s.session_start("s-app", &origin("app"), None).unwrap();
            s.session_start("s-mine", &origin("private"), None).unwrap();
            (
                s.save_prompt(
                    "how do we deploy kumquat builds",
                    Some("s-app"),
                    &origin("app"),
                )
                .unwrap(),
                s.save_prompt("what is my kumquat locker code", None, &origin("private"))
                    .unwrap(),
            )
        })
        .unwrap();
    s.as_viewer(Some("bob"), |s| {
        let refused = s.session_end("s-app", Some("bob was here")).unwrap_err();
        assert!(
            refused.to_string().contains("another user's session"),
            "{refused}"
        );
        let missing = s.session_end("s-none", None).unwrap_err().to_string();
        let hidden = s.session_end("s-mine", None).unwrap_err().to_string();
        assert_eq!(hidden, missing.replace("s-none", "s-mine"));
        assert!(s.session("s-mine").unwrap().is_none());
        assert!(s.session("s-app").unwrap().is_some());
        let refused = s.delete_prompt(shared_prompt).unwrap_err();
        assert!(
            refused.to_string().contains("another user's prompt"),
            "{refused}"
        );
        assert!(!s.delete_prompt(private_prompt).unwrap());
        assert!(!s.delete_prompt(999_999).unwrap());
    })
    .unwrap();
    s.as_viewer(Some("alice"), |s| {
        let app = s.session("s-app").unwrap().unwrap();
        assert!(app.ended_at.is_none() && app.summary.is_none(), "{app:?}");
        assert!(s.session("s-mine").unwrap().is_some());
        s.session_end("s-app", None).unwrap();
        s.session_end("s-mine", None).unwrap();
        assert!(s.delete_prompt(shared_prompt).unwrap());
        assert!(s.delete_prompt(private_prompt).unwrap());
    })
    .unwrap();
    // The store itself (no viewer): every session, whoever started it.
    s.session_start("s-local", &origin("app"), None).unwrap();
    s.session_end("s-app", Some("closed by the admin")).unwrap();
    s.session_end("s-local", None).unwrap();
}

/// `doctor`'s vectors-by-model count only the memories the viewer may see: bob sees
/// alice's one shared memory's vector, never her private ones'.
#[test]
fn doctor_counts_only_the_vectors_of_memories_the_viewer_sees() {
    let mut t = team();
    let s = &mut t.store;
    s.set_embedder(Some(std::sync::Arc::new(
        engram_core::embed::HashEmbedder::new(32),
    )));
    s.embed_missing(|_| {}).unwrap();
    let count = |h: &engram_store::storage::rows::Health| -> u64 {
        h.vectors
            .iter()
            .filter(|v| v.model == "engram/hash-ngram")
            .map(|v| v.count)
            .sum()
    };
    assert_eq!(
        count(&s.health().unwrap()),
        3,
        "the store itself: every vector"
    );
    let bob = s.as_viewer(Some("bob"), |s| s.health().unwrap()).unwrap();
    assert_eq!(count(&bob), 1, "{:?}", bob.vectors);
    let alice = s.as_viewer(Some("alice"), |s| s.health().unwrap()).unwrap();
    assert_eq!(count(&alice), 3, "{:?}", alice.vectors);
}

/// A session's and a prompt's author travels in the export and comes back on import (the
/// store moved to another server keeps alice's private session hers), and a team user
/// who imports a file imports in their own name, whatever the file says.
#[test]
fn sessions_and_prompts_keep_their_author_through_export_and_import() {
    let mut t = team();
    let origin = |room: &str| engram_store::Origin {
        room: Some(room.into()),
        ..Default::default()
    };
    t.store
        .as_viewer(Some("alice"), |s| {
            s.session_start("s-mine", &origin("private"), None).unwrap();
            s.save_prompt(
                "my kumquat locker prompt",
                Some("s-mine"),
                &origin("private"),
            )
            .unwrap();
        })
        .unwrap();
    let mut dump = Vec::new();
    t.store.export_jsonl(&mut dump).unwrap();
    let dump = String::from_utf8(dump).unwrap();
    assert!(dump.contains("\"author\":\"alice\""), "{dump}");
    let batch =
        || engram_store::transfer::read_jsonl(&mut std::io::Cursor::new(dump.clone())).unwrap();
    // Into a second store, by its own CLI (no viewer): alice's rows stay alice's.
    let (mut moved, _dir) = temp_store(no_resolution());
    moved.team_add_user("alice").unwrap();
    moved.team_add_user("bob").unwrap();
    moved.import_batch(batch(), &mut |_, _| {}).unwrap();
    for (user, sees) in [("alice", true), ("bob", false)] {
        moved
            .as_viewer(Some(user), |s| {
                assert_eq!(s.session("s-mine").unwrap().is_some(), sees, "{user}");
                let prompts = format!("{:?}", s.recent_prompts(None, 10).unwrap());
                assert_eq!(prompts.contains("locker prompt"), sees, "{user}: {prompts}");
            })
            .unwrap();
    }
    // Bob imports the same file into a third store: the rows become bob's, not alice's.
    let (mut third, _dir3) = temp_store(no_resolution());
    third.team_add_user("alice").unwrap();
    third.team_add_user("bob").unwrap();
    third
        .as_viewer(Some("bob"), |s| s.import_batch(batch(), &mut |_, _| {}))
        .unwrap()
        .unwrap();
    third
        .as_viewer(Some("alice"), |s| {
            assert!(
                s.session("s-mine").unwrap().is_none(),
                "bob imported as alice"
            );
        })
        .unwrap();
}
