//! Files written so that a crash never leaves half of one, readable by their owner only.
//!
//! [`write_atomic`] (and [`write_atomic_with`] for streamed content or a file that is not
//! ours) is how anything but SQLite writes a file (vault Markdown, exports, backup
//! manifests, the HNSW index's pointer, hooks state, agents' settings): the bytes go to a temporary file in the same
//! directory, are synced, and are renamed over the target, then the directory is synced.
//! A reader (or a restart after `kill -9` or a power cut) sees the old file or the new one,
//! never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Permission bits of every file engram creates (owner read and write).
pub const PRIVATE_FILE_MODE: u32 = 0o600;
/// Permission bits of every directory engram creates.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

/// Who may read a file that [`write_atomic_with`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Owner only (0600): everything engram owns under `ENGRAM_HOME`.
    Private,
    /// The replaced file's permission bits, or the process default for a new file: files
    /// that belong to someone else (an agent's settings that `engram setup` edits).
    KeepExisting,
}

/// Writes `bytes` to `path` atomically and durably, mode 0600. The parent directory must
/// exist. A leftover temporary file from an interrupted write (`.NAME.tmp-*`) is harmless
/// and is never read as the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, Mode::Private, |w| w.write_all(bytes))
}

/// [`write_atomic`] for content produced as it is written (an export streamed into the
/// file) and for either [`Mode`]: `fill` writes into a buffered temporary file in the
/// target's folder, which is then synced, renamed over `path`, and the folder synced. If
/// `fill` or any step fails, the temporary file is removed and `path` is untouched.
pub fn write_atomic_with<T, E: From<io::Error>>(
    path: &Path,
    mode: Mode,
    fill: impl FnOnce(&mut dyn Write) -> Result<T, E>,
) -> Result<T, E> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let mut attempt = 0u32;
    let (tmp, file) = loop {
        let tmp = dir.join(format!(
            ".{}.tmp-{}-{}",
            name.to_string_lossy(),
            std::process::id(),
            unique()
        ));
        let created = match mode {
            Mode::Private => create_private(&tmp),
            Mode::KeepExisting => OpenOptions::new().write(true).create_new(true).open(&tmp),
        };
        match created {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
            Err(e) => return Err(e.into()),
        }
    };
    let result = (|| {
        let mut w = io::BufWriter::new(file);
        let value = fill(&mut w)?;
        let file = w.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        drop(file);
        if mode == Mode::KeepExisting
            && let Ok(meta) = fs::metadata(path)
        {
            fs::set_permissions(&tmp, meta.permissions())?;
        }
        fs::rename(&tmp, path)?;
        sync_dir(&dir)?;
        Ok(value)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates a new file (failing if it exists) with mode 0600.
pub fn create_private(path: &Path) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(PRIVATE_FILE_MODE);
    }
    o.open(path)
}

/// Makes an existing file readable by its owner only (no-op off Unix).
pub fn make_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = fs::metadata(path)?;
        let mode = if meta.is_dir() {
            PRIVATE_DIR_MODE
        } else {
            PRIVATE_FILE_MODE
        };
        if meta.permissions().mode() & 0o777 != mode {
            fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Flushes a directory's entries (a rename or a new file in it) to disk. A no-op where
/// directories cannot be opened (Windows).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Copies a directory tree file by file (each copy written atomically, mode 0600;
/// directories 0700). Symbolic links are skipped, never followed.
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<u64> {
    let mut copied = 0;
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(PRIVATE_DIR_MODE);
    }
    b.create(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copied += copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            write_atomic(&target, &fs::read(entry.path())?)?;
            copied += 1;
        }
    }
    sync_dir(to)?;
    Ok(copied)
}

pub(crate) fn unique() -> u128 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    nanos ^ (u128::from(COUNTER.fetch_add(1, Ordering::Relaxed)) << 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replaces_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("note.md");
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second, longer").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second, longer");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("note.md")]);
    }

    #[cfg(unix)]
    #[test]
    fn files_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a");
        fs::write(&p, b"old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let q = dir.path().join("b");
        fs::write(&q, b"x").unwrap();
        fs::set_permissions(&q, fs::Permissions::from_mode(0o666)).unwrap();
        make_private(&q).unwrap();
        assert_eq!(
            fs::metadata(&q).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn missing_directory_is_an_error_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("nope").join("x");
        assert!(write_atomic(&p, b"x").is_err());
        assert!(!p.exists());
    }

    #[test]
    fn copies_a_tree_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir_all(src.join("room")).unwrap();
        fs::write(src.join("room").join("a.md"), b"A").unwrap();
        fs::write(src.join("top.md"), b"T").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink("/etc/passwd", src.join("link")).unwrap();
        let dst = dir.path().join("dst");
        assert_eq!(copy_tree(&src, &dst).unwrap(), 2);
        assert_eq!(fs::read(dst.join("room").join("a.md")).unwrap(), b"A");
        assert!(!dst.join("link").exists());
    }

    /// Many threads replacing one file: every read sees one whole version, never a mix.
    #[test]
    fn concurrent_replacements_are_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        write_atomic(&p, &[b'0'; 4096]).unwrap();
        let writers: Vec<_> = (0..4u8)
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        write_atomic(&p, &[b'a' + t; 4096]).unwrap();
                    }
                })
            })
            .collect();
        for _ in 0..200 {
            let b = fs::read(&p).unwrap();
            assert_eq!(b.len(), 4096);
            assert!(b.iter().all(|c| *c == b[0]), "a torn file");
        }
        for w in writers {
            w.join().unwrap();
        }
    }

    #[test]
    fn streamed_write_that_fails_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("export.jsonl");
        write_atomic(&p, b"old").unwrap();
        let r: io::Result<()> = write_atomic_with(&p, Mode::Private, |w| {
            w.write_all(b"half of a new file")?;
            Err(io::Error::other("the export failed"))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let n = write_atomic_with(&p, Mode::Private, |w| {
            w.write_all(b"new")?;
            Ok::<_, io::Error>(3)
        })
        .unwrap();
        assert_eq!((n, fs::read(&p).unwrap()), (3, b"new".to_vec()));
    }

    #[cfg(unix)]
    #[test]
    fn keep_existing_keeps_the_replaced_files_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        fs::write(&p, b"{}").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic_with(&p, Mode::KeepExisting, |w| w.write_all(b"{\"a\":1}")).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"{\"a\":1}");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o644
        );
    }

    /// The vault's sweep of temporaries a killed process left reads the names this writes.
    #[test]
    fn temporary_names_carry_the_process_id() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.md");
        let seen = write_atomic_with(&p, Mode::Private, |_| {
            let names: Vec<String> = fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            Ok::<_, io::Error>(names)
        })
        .unwrap();
        assert_eq!(seen.len(), 1, "{seen:?}");
        let prefix = format!(".a.md.tmp-{}-", std::process::id());
        assert!(seen[0].starts_with(&prefix), "{seen:?}");
        assert!(seen[0][prefix.len()..].parse::<u128>().is_ok(), "{seen:?}");
    }
}
