//! Rooms: the namespace a memory lives in.
//!
//! A room is resolved, in order, from an explicit argument, the `[room_paths]` table
//! (longest whole-component prefix of the caller's directory), the caller's project
//! (a `.engram` file, the git remote, the git root), and finally [`COMMON`]. The pure
//! parts of that chain live here; reading `.engram` and `.git` is the store's job.
//! Nothing here, nor anywhere in engram's library crates, reads the process's working
//! directory: an MCP server is started wherever its client pleases.

use crate::InputError;

/// The room every recall also searches, and where memories go when nothing says otherwise.
pub const COMMON: &str = "common";
/// The room filter that searches every room.
pub const ALL: &str = "*";

/// Which rooms a recall searches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoomScope {
    /// Every room.
    All,
    /// This room and [`COMMON`].
    Room(String),
}

impl RoomScope {
    /// The room names searched, or `None` for every room.
    pub fn rooms(&self) -> Option<Vec<String>> {
        match self {
            RoomScope::All => None,
            RoomScope::Room(r) if r == COMMON => Some(vec![COMMON.to_string()]),
            RoomScope::Room(r) => Some(vec![r.clone(), COMMON.to_string()]),
        }
    }
}

/// Normalises a room name: trimmed, lower-cased; refused when empty, too long, or holding
/// control characters or `*`.
pub fn normalize_room(raw: &str) -> Result<String, InputError> {
    let r = raw.trim().to_lowercase();
    crate::limits::check_name("room", &r)?;
    if r.contains('*') {
        return Err(InputError::new(
            "room",
            "must not contain `*` (use `*` alone to search all rooms)",
        ));
    }
    Ok(r)
}

/// Normalises a directory path for prefix matching: `\` becomes `/`, trailing slashes go,
/// and the result is case-folded (paths on macOS and Windows are case-insensitive).
pub fn normalize_path(path: &str) -> String {
    let p = path.replace('\\', "/").to_lowercase();
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() && p.starts_with('/') {
        "/".to_string()
    } else {
        trimmed.to_string()
    }
}

/// B's `[room_paths]`: the room of the longest prefix of `dir` that ends on a path
/// component boundary (`/work/app` matches `/work/app/src`, not `/work/apple`).
pub fn room_for_path<'a>(
    dir: &str,
    room_paths: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<String> {
    let d = normalize_path(dir);
    let mut best: Option<(usize, &str)> = None;
    for (prefix, room) in room_paths {
        let p = normalize_path(prefix);
        let matches =
            d == p || (d.starts_with(&p) && (p.ends_with('/') || d[p.len()..].starts_with('/')));
        if matches && best.is_none_or(|(len, _)| p.len() > len) {
            best = Some((p.len(), room));
        }
    }
    best.map(|(_, r)| r.to_string())
}

/// The repository name in a git remote URL: `git@host:owner/repo.git`, `https://host/owner/repo`
/// and `file:///x/repo` all give `repo`.
pub fn repo_name_from_remote(url: &str) -> Option<String> {
    let u = url.trim().trim_end_matches('/');
    let last = u.rsplit(['/', ':']).next()?;
    let name = last.strip_suffix(".git").unwrap_or(last);
    (!name.is_empty()).then(|| name.to_string())
}

/// The last component of a path, for rooms named after a directory.
pub fn basename(path: &str) -> Option<String> {
    let p = path.replace('\\', "/");
    let name = p.trim_end_matches('/').rsplit('/').next()?;
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_rooms() {
        assert_eq!(RoomScope::All.rooms(), None);
        assert_eq!(
            RoomScope::Room("app".into()).rooms(),
            Some(vec!["app".into(), "common".into()])
        );
        assert_eq!(
            RoomScope::Room("common".into()).rooms(),
            Some(vec!["common".into()])
        );
    }

    #[test]
    fn room_names() {
        assert_eq!(normalize_room(" MyApp ").unwrap(), "myapp");
        assert!(normalize_room("").is_err());
        assert!(normalize_room("a*").is_err());
        assert!(normalize_room("a\nb").is_err());
    }

    #[test]
    fn longest_prefix_on_component_boundary() {
        let table = [
            ("/work", "work"),
            ("/work/app", "app"),
            ("C:\\Users\\Me\\Proj", "proj"),
        ];
        let t = || table.iter().map(|(a, b)| (*a, *b));
        assert_eq!(room_for_path("/work/app/src", t()), Some("app".into()));
        assert_eq!(room_for_path("/work/apple", t()), Some("work".into()));
        assert_eq!(room_for_path("/work/app", t()), Some("app".into()));
        assert_eq!(room_for_path("/home", t()), None);
        assert_eq!(
            room_for_path("c:/users/me/proj/x", t()),
            Some("proj".into())
        );
    }

    #[test]
    fn remote_names() {
        assert_eq!(
            repo_name_from_remote("git@github.com:owner/engram.git"),
            Some("engram".into())
        );
        assert_eq!(
            repo_name_from_remote("https://github.com/owner/engram"),
            Some("engram".into())
        );
        assert_eq!(
            repo_name_from_remote("https://github.com/owner/engram.git/"),
            Some("engram".into())
        );
        assert_eq!(repo_name_from_remote(""), None);
        assert_eq!(basename("/a/b/proj/"), Some("proj".into()));
    }
}
