//! Who may see a memory on a team server: the one rule, pure, shared by the engine's
//! visibility layer (`engram_store::storage::visibility`) and mirrored by each backend's
//! `private_of_others` query (tested to agree on both backends).
//!
//! Defaults (README "For teams"): a memory is **private** to its author when its room is
//! `private` or `private/<anything>`, or when it is a `preference` (a person's own way of
//! working); everything else (project rooms, `common`) is **shared** with every user.
//! A private memory without an author (written locally, before team mode) is visible
//! only to a caller without a principal: the server's own admin commands.

use crate::{InputError, Kind, Memory};

/// The room that holds a user's private notes (and its `private/…` sub-rooms).
pub const PRIVATE_ROOM: &str = "private";

/// Longest user name accepted.
pub const MAX_USER_NAME_CHARS: usize = 64;

/// Whether a memory in `room` of `kind` is private to its author.
pub fn is_private(room: &str, kind: Kind) -> bool {
    is_private_room(room) || kind == Kind::Preference
}

/// Whether a room is private (`private`, `private/…`). Sessions and prompts record no
/// user, so on a team server those of a private room are shown to no team user.
pub fn is_private_room(room: &str) -> bool {
    room == PRIVATE_ROOM || room.starts_with("private/")
}

/// Whether `viewer` (a user name; `None`: local use, which sees everything) may see `m`.
pub fn visible_to(viewer: Option<&str>, m: &Memory) -> bool {
    match viewer {
        None => true,
        Some(v) => !is_private(&m.room, m.kind) || m.author.as_deref() == Some(v),
    }
}

/// Whether two memories may act on each other (resolution, consolidation, links): each is
/// `(private, author)`. Shared memories meet whoever wrote them (a team resolves its shared
/// facts together); a private memory meets only memories private to the same author, so
/// nothing of it flows into what another user, or the team, can read (no merged text, no
/// `superseded by #id`, no `related to #id` in a shared memory's history). Memories
/// without an author (one person's store, or written before team mode) meet as before.
pub fn may_meet(a: (bool, Option<&str>), b: (bool, Option<&str>)) -> bool {
    match (a.0, b.0) {
        (false, false) => true,
        _ if a.1.is_none() && b.1.is_none() => true,
        (true, true) => a.1 == b.1,
        _ => false,
    }
}

/// [`may_meet`] for two stored memories.
pub fn memories_meet(a: &Memory, b: &Memory) -> bool {
    may_meet(
        (is_private(&a.room, a.kind), a.author.as_deref()),
        (is_private(&b.room, b.kind), b.author.as_deref()),
    )
}

/// Checks a user name: 1–64 characters of ASCII letters, digits, `.`, `_`, `-`, starting
/// with a letter or digit (it is shown in every memory a user writes and typed in commands).
pub fn check_user_name(name: &str) -> Result<(), InputError> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty() || name.chars().count() > MAX_USER_NAME_CHARS {
        return Err(InputError::new(
            "name",
            format!("a user name has 1 to {MAX_USER_NAME_CHARS} characters"),
        ));
    }
    if !name.chars().all(ok_char) || !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err(InputError::new(
            "name",
            format!(
                "{name:?} is not a user name: use ASCII letters, digits, '.', '_' or '-', starting with a letter or digit"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_rooms_and_preferences_are_private() {
        assert!(is_private("private", Kind::Fact));
        assert!(is_private("private/alice", Kind::Decision));
        assert!(is_private("engram", Kind::Preference));
        assert!(!is_private("engram", Kind::Decision));
        assert!(!is_private("common", Kind::Fact));
        assert!(!is_private("privateer", Kind::Fact));
    }

    #[test]
    fn private_memories_meet_only_their_authors_private_ones() {
        let shared = |a| (false, a);
        let private = |a| (true, a);
        assert!(may_meet(shared(Some("alice")), shared(Some("bob"))));
        assert!(may_meet(private(Some("alice")), private(Some("alice"))));
        assert!(!may_meet(private(Some("alice")), private(Some("bob"))));
        assert!(!may_meet(private(Some("alice")), shared(Some("alice"))));
        assert!(!may_meet(shared(Some("bob")), private(Some("alice"))));
        assert!(!may_meet(private(None), shared(Some("bob"))));
        // One person's store: nobody is an author, everything meets as before.
        assert!(may_meet(private(None), shared(None)));
        assert!(may_meet(private(None), private(None)));
    }

    #[test]
    fn user_names() {
        assert!(check_user_name("alice").is_ok());
        assert!(check_user_name("bob.smith-2").is_ok());
        for bad in ["", "-x", "a b", "é", &"a".repeat(65)] {
            assert!(check_user_name(bad).is_err(), "{bad:?}");
        }
    }
}
