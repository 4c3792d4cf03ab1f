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
    fn user_names() {
        assert!(check_user_name("alice").is_ok());
        assert!(check_user_name("bob.smith-2").is_ok());
        for bad in ["", "-x", "a b", "é", &"a".repeat(65)] {
            assert!(check_user_name(bad).is_err(), "{bad:?}");
        }
    }
}
