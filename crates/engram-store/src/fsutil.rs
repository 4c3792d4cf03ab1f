//! Files written so that a crash never leaves half of one, readable by their owner only.
//!
//! [`write_atomic`] is how anything but SQLite writes a file under `ENGRAM_HOME` (vault
//! Markdown, exports, backup manifests): the bytes go to a temporary file in the same
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

/// Writes `bytes` to `path` atomically and durably, mode 0600. The parent directory must
/// exist. A leftover temporary file from an interrupted write (`.NAME.tmp-*`) is harmless
/// and is never read as the target.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let mut attempt = 0u32;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(
            ".{}.tmp-{}-{}",
            name.to_string_lossy(),
            std::process::id(),
            unique()
        ));
        match create_private(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    let result = (|| {
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)?;
        sync_dir(&dir)
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
}
