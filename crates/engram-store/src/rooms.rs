//! Resolving the room of a request from what the caller says: an explicit room, else the
//! caller's directory (`cwd`), which is matched against `[room_paths]` and then searched
//! upwards for a project (`.engram/config.json`, a git remote, a git root).
//!
//! `cwd` is always an argument. Library code never asks the process where it is running:
//! an MCP server's own directory is wherever its client happened to start it.

use engram_core::room::{self, COMMON};
use engram_core::{Config, InputError};
use std::path::Path;

/// Where a resolved room came from, for explanations and `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoomSource {
    Explicit,
    RoomPaths,
    ProjectConfig,
    GitRemote,
    GitRoot,
    Default,
}

/// A room name as stored: redacted like every name (a project's own `.engram/config.json`
/// or remote may hold a token), then normalised. Writes and reads resolve alike, so a read
/// finds the room its write went to.
fn named(raw: &str) -> Result<String, InputError> {
    room::normalize_room(&engram_core::redact::stored_name(raw))
}

/// Resolves the room for a write (or the home room of a read).
pub fn resolve(
    config: &Config,
    explicit: Option<&str>,
    cwd: Option<&Path>,
) -> Result<(String, RoomSource), InputError> {
    if let Some(r) = explicit.filter(|r| !r.trim().is_empty()) {
        return Ok((named(r)?, RoomSource::Explicit));
    }
    // An empty directory is no directory; a relative one would be read against the
    // process's own working directory, which is exactly what must never decide a room.
    let Some(cwd) = cwd.filter(|c| !c.as_os_str().is_empty()) else {
        return Ok((COMMON.to_string(), RoomSource::Default));
    };
    if !cwd.is_absolute() {
        return Err(InputError::new(
            "cwd",
            format!(
                "{:?} is relative; send the absolute path of your working directory",
                cwd.display().to_string()
            ),
        ));
    }
    let dir = cwd.to_string_lossy();
    if let Some(r) = room::room_for_path(
        &dir,
        config
            .room_paths
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str())),
    ) {
        return Ok((named(&r)?, RoomSource::RoomPaths));
    }
    if let Some((r, src)) = detect_project(cwd)
        && let Ok(r) = named(&r)
    {
        return Ok((r, src));
    }
    Ok((COMMON.to_string(), RoomSource::Default))
}

/// The rooms a read searches: every room for `*`, else the resolved room (plus `common`,
/// see [`RoomScope::rooms`]).
pub fn scope(
    config: &Config,
    explicit: Option<&str>,
    cwd: Option<&Path>,
) -> Result<room::RoomScope, InputError> {
    match explicit.map(str::trim) {
        Some(room::ALL) => Ok(room::RoomScope::All),
        explicit => Ok(room::RoomScope::Room(resolve(config, explicit, cwd)?.0)),
    }
}

/// Seed C's child scan, for a directory that is no project itself: the git repositories
/// directly inside `dir` (at most 20 entries looked at; hidden folders and build or
/// dependency folders skipped), sorted. One means "that repository"; several mean the
/// caller must choose.
pub fn git_children(dir: &Path) -> Vec<String> {
    const SKIP: &[&str] = &[
        "node_modules",
        "vendor",
        ".venv",
        "__pycache__",
        "target",
        "dist",
        "build",
        ".idea",
        ".vscode",
    ];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .take(20)
        .filter(|e| e.path().join(".git").exists())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| !n.starts_with('.') && !SKIP.contains(&n.as_str()))
        .collect();
    names.sort();
    names
}

/// Walks up from `dir` (at most 64 levels) looking for a project marker.
fn detect_project(dir: &Path) -> Option<(String, RoomSource)> {
    for d in dir.ancestors().take(64) {
        let cfg = d.join(".engram").join("config.json");
        if let Ok(text) = std::fs::read_to_string(&cfg)
            && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        {
            let name = v
                .get("room")
                .or_else(|| v.get("project_name"))
                .and_then(|n| n.as_str());
            if let Some(n) = name.filter(|n| !n.trim().is_empty()) {
                return Some((n.to_string(), RoomSource::ProjectConfig));
            }
        }
        let git = d.join(".git");
        if git.exists() {
            let config_file = if git.is_dir() {
                Some(git.join("config"))
            } else {
                gitdir_config(&git)
            };
            if let Some(remote) = config_file
                .and_then(|c| std::fs::read_to_string(c).ok())
                .and_then(|t| origin_url(&t))
                && let Some(name) = room::repo_name_from_remote(&remote)
            {
                return Some((name, RoomSource::GitRemote));
            }
            return room::basename(&d.to_string_lossy()).map(|n| (n, RoomSource::GitRoot));
        }
    }
    None
}

/// For a worktree or submodule, `.git` is a file `gitdir: PATH`; the config sits in the common dir.
fn gitdir_config(git_file: &Path) -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string(git_file).ok()?;
    let gitdir = text.trim().strip_prefix("gitdir:")?.trim();
    let base = git_file.parent()?;
    let gd = base.join(gitdir);
    let common = std::fs::read_to_string(gd.join("commondir"))
        .ok()
        .map(|c| gd.join(c.trim()));
    Some(common.unwrap_or(gd).join("config"))
}

/// The `url` of `[remote "origin"]` in a git config file.
fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_origin = l.replace(' ', "") == "[remote\"origin\"]";
            continue;
        }
        if in_origin
            && let Some((k, v)) = l.split_once('=')
            && k.trim() == "url"
        {
            return Some(v.trim().to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_wins_then_room_paths_then_project_then_common() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("work").join("myrepo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join(".git/config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@example.com:me/Engram-App.git\n").unwrap();

        let mut c = Config::default();
        assert_eq!(
            resolve(&c, Some("Mine"), Some(&repo)).unwrap(),
            ("mine".into(), RoomSource::Explicit)
        );
        assert_eq!(
            resolve(&c, None, Some(&repo.join("src"))).unwrap(),
            ("engram-app".into(), RoomSource::GitRemote)
        );
        assert_eq!(
            resolve(&c, None, None).unwrap(),
            ("common".into(), RoomSource::Default)
        );
        assert_eq!(
            resolve(&c, None, Some(dir.path())).unwrap(),
            ("common".into(), RoomSource::Default)
        );

        std::fs::write(repo.join(".git/config"), "[core]\n").unwrap();
        assert_eq!(
            resolve(&c, None, Some(&repo)).unwrap(),
            ("myrepo".into(), RoomSource::GitRoot)
        );

        std::fs::create_dir_all(repo.join("src/.engram")).unwrap();
        std::fs::write(
            repo.join("src/.engram/config.json"),
            r#"{"project_name": "Sub"}"#,
        )
        .unwrap();
        assert_eq!(
            resolve(&c, None, Some(&repo.join("src"))).unwrap(),
            ("sub".into(), RoomSource::ProjectConfig)
        );
        // A token in a project's own config names no room: the room is stored redacted,
        // and a read from the same folder resolves to the same name.
        std::fs::write(
            repo.join("src/.engram/config.json"),
            r#"{"room": "team-ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"}"#,
        )
        .unwrap();
        let (r, _) = resolve(&c, None, Some(&repo.join("src"))).unwrap();
        assert!(r.starts_with("team-") && !r.contains("a1b2c3d4"), "{r}");
        assert_eq!(
            scope(&c, None, Some(&repo.join("src"))).unwrap(),
            room::RoomScope::Room(r)
        );

        c.room_paths
            .insert(repo.to_string_lossy().into_owned(), "mapped".into());
        assert_eq!(
            resolve(&c, None, Some(&repo.join("src"))).unwrap(),
            ("mapped".into(), RoomSource::RoomPaths)
        );
        assert!(resolve(&c, Some("bad*room"), None).is_err());
        assert_eq!(
            resolve(&c, None, Some(Path::new(""))).unwrap(),
            ("common".into(), RoomSource::Default)
        );
        assert_eq!(
            resolve(&c, None, Some(Path::new("."))).unwrap_err().field,
            "cwd"
        );
    }
}
