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

/// The name two spellings of one project share (seed C's `projects consolidate`): case,
/// surrounding space and runs of separators (`-`, `_`, `.`, spaces) do not count.
pub fn variant_key(room: &str) -> String {
    let mut out = String::new();
    let mut sep = false;
    for c in room.trim().to_lowercase().chars() {
        if matches!(c, '-' | '_' | '.') || c.is_whitespace() {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('-');
            }
            sep = false;
            out.push(c);
        }
    }
    out
}

/// The merges `projects consolidate` proposes: for each group of two or more rooms with
/// one [`variant_key`], every room into the one holding the most memories (ties: the
/// shorter, then the first name). Input: each room with its memory count; output:
/// `(into, from)` pairs, sorted by `into`.
pub fn consolidation_plan(rooms: &[(String, u64)]) -> Vec<(String, Vec<String>)> {
    let mut groups: std::collections::BTreeMap<String, Vec<&(String, u64)>> = Default::default();
    for r in rooms {
        groups.entry(variant_key(&r.0)).or_default().push(r);
    }
    let mut plan: Vec<(String, Vec<String>)> = groups
        .into_values()
        .filter(|g| g.len() > 1)
        .map(|g| {
            let into = g
                .iter()
                .max_by(|a, b| {
                    a.1.cmp(&b.1)
                        .then(b.0.len().cmp(&a.0.len()))
                        .then(b.0.cmp(&a.0))
                })
                .map(|r| r.0.clone())
                .expect("a group has members");
            let mut from: Vec<String> = g
                .iter()
                .map(|r| r.0.clone())
                .filter(|n| *n != into)
                .collect();
            from.sort();
            (into, from)
        })
        .collect();
    plan.sort();
    plan
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

    #[test]
    fn consolidation_groups_spelling_variants() {
        assert_eq!(variant_key(" My__App "), "my-app");
        assert_eq!(variant_key("my.app"), "my-app");
        let rooms = [
            ("my-app".to_string(), 5),
            ("my_app".to_string(), 2),
            ("my--app".to_string(), 1),
            ("other".to_string(), 3),
        ];
        assert_eq!(
            consolidation_plan(&rooms),
            [(
                "my-app".to_string(),
                vec!["my--app".to_string(), "my_app".to_string()]
            )]
        );
        assert!(consolidation_plan(&rooms[3..]).is_empty());
    }
}
