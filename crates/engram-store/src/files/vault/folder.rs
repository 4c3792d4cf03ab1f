//! The vault folder on disk: walking it, file hashes and times, the one way a vault file
//! is written, refusing symbolic links, and sweeping a killed process's temporaries.

use super::*;

pub(super) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(super) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

pub(super) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

/// Writes a vault file: its folder is made (0700) if missing, then the one
/// [`fsutil::write_atomic`].
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        crate::db::create_private_dir(dir)?;
    }
    fsutil::write_atomic(path, bytes).map_err(io_err(path))
}

/// The first part of `rel` under `root` that is a symbolic link, if any. engram never writes
/// or reads through a link inside the vault: one that points out of the home would put
/// memories where the user does not look, and a scan that does not follow it would take its
/// files for deleted ones.
pub(crate) fn link_in_path(root: &Path, rel: &str) -> Option<PathBuf> {
    let mut p = root.to_path_buf();
    for part in rel.split('/').filter(|s| !s.is_empty()) {
        p.push(part);
        match std::fs::symlink_metadata(&p) {
            Ok(meta) if meta.file_type().is_symlink() => return Some(p),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

pub(super) fn refuse_link(link: &Path) -> Error {
    Error::Io {
        path: link.to_path_buf(),
        source: std::io::Error::other(
            "is a symbolic link inside the vault; engram does not follow links out of the vault \
             (replace it with a real folder, or point `vault_dir` at the target)",
        ),
    }
}

/// Removes temporary files (`.<name>.tmp-<pid>-<n>`) that a killed process left in the
/// vault: those of a process that no longer runs, or older than an hour where that cannot
/// be told. Returns how many went.
pub(crate) fn clean_stray_temporaries(root: &Path) -> usize {
    let mut removed = 0;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(ft) = entry.file_type() else { continue };
            let name = entry.file_name().to_string_lossy().into_owned();
            if ft.is_dir() && !name.starts_with('.') {
                stack.push(entry.path());
                continue;
            }
            if !ft.is_file() || !name.starts_with('.') {
                continue;
            }
            let Some(pid) = temporary_pid(&name) else {
                continue;
            };
            if pid == std::process::id() {
                continue;
            }
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 3600);
            let proc_fs = Path::new("/proc/self").exists();
            let dead = proc_fs && !Path::new(&format!("/proc/{pid}")).exists();
            if (dead || old) && std::fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// The process id in a `write_atomic` temporary's name.
pub(super) fn temporary_pid(name: &str) -> Option<u32> {
    let (_, tail) = name.rsplit_once(".tmp-")?;
    let (pid, n) = tail.split_once('-')?;
    n.parse::<u128>().ok()?;
    pid.parse().ok()
}

/// Every `.md` file under `root` (relative, `/`-separated), skipping hidden entries
/// (`.obsidian/`, temporary files) and folder documents ([`is_folder_document`]).
pub(crate) fn walk(root: &Path) -> Result<Vec<String>> {
    Ok(walk_all(root)?.0)
}

/// The Markdown files under `root` (as [`walk`]) and, apart, the symbolic links met on the
/// way: never followed, and named by the callers that read a folder so the user learns
/// why those files were not read.
pub(crate) fn walk_all(root: &Path) -> Result<(Vec<String>, Vec<String>)> {
    let mut out = Vec::new();
    let mut links = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err(&dir)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io_err(&dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let child_rel = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let ft = entry.file_type().map_err(io_err(&entry.path()))?;
            if ft.is_dir() {
                stack.push((entry.path(), child_rel));
            } else if ft.is_file() && name.ends_with(".md") && !is_folder_document(&name) {
                out.push(child_rel);
            } else if ft.is_symlink() {
                links.push(child_rel);
            }
        }
    }
    out.sort();
    links.sort();
    Ok((out, links))
}

/// Files that describe a folder rather than hold a memory: a `README.md` in B's memories
/// folder or an Obsidian vault is the user's note about the folder, and reading it in would
/// put it in every recall. engram never names a memory's file this way (its names carry a
/// date and a uid), so the rule costs no memory.
pub(crate) fn is_folder_document(name: &str) -> bool {
    const NAMES: [&str; 6] = [
        "readme",
        "index",
        "_index",
        "license",
        "changelog",
        "contributing",
    ];
    let stem = name.strip_suffix(".md").unwrap_or(name);
    NAMES.iter().any(|n| stem.eq_ignore_ascii_case(n))
}

pub(crate) fn stem_of(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.strip_suffix(".md").unwrap_or(name)
}

/// The uid a file stem ends with, if any.
pub(super) fn uid_in_stem(stem: &str) -> Option<String> {
    if stem.len() < 26 {
        return None;
    }
    let tail = &stem[stem.len() - 26..];
    ulid::Ulid::from_string(tail)
        .ok()
        .map(|_| tail.to_ascii_uppercase())
}

pub(super) fn remove_file(root: &Path, rel: &str) -> Result<()> {
    let full = root.join(rel);
    match std::fs::remove_file(&full) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_err(&full)(e)),
    }
}
