//! `checksums.txt`: the sha256 of each model file, recorded when it was downloaded and
//! checked on every load, so a truncated copy or a bit flip in the cache is reported
//! instead of silently producing wrong vectors. The format is `sha256sum`'s (`HEX  NAME`),
//! so `sha256sum -c checksums.txt` works in the folder too.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::Error;

/// File name of the checksum list inside a model folder.
pub const CHECKSUMS_FILE: &str = "checksums.txt";

/// Lower-case hex sha256 of a byte slice.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(digest.len() * 2);
    for b in digest {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

/// Lower-case hex sha256 of a file, streamed (model files are up to hundreds of MB).
pub fn sha256_file(path: &Path) -> Result<String, Error> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

/// The recorded checksums of a folder, file name → hex; `None` when the folder has no
/// `checksums.txt` (a folder prepared by hand is loaded without verification).
pub(crate) fn read_checksums(dir: &Path) -> Result<Option<BTreeMap<String, String>>, Error> {
    let path = dir.join(CHECKSUMS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut map = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // `HEX  NAME` (text mode) or `HEX *NAME` (binary mode), as sha256sum writes them.
        let parsed = line.split_once(char::is_whitespace).and_then(|(h, n)| {
            let name = n.trim_start().trim_start_matches('*');
            let ok = h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) && !name.is_empty();
            ok.then(|| (name.to_string(), h.to_ascii_lowercase()))
        });
        let Some((name, hash)) = parsed else {
            return Err(Error::invalid(
                &path,
                format!("line {} is not `SHA256  FILE`: {line:?}", i + 1),
            ));
        };
        map.insert(name, hash);
    }
    Ok(Some(map))
}

/// Writes `checksums.txt` for `files` (names relative to `dir`), hashing each file.
pub(crate) fn write_checksums(dir: &Path, files: &[&str]) -> Result<(), Error> {
    let mut text = String::new();
    for name in files {
        let hash = sha256_file(&dir.join(name))?;
        text.push_str(&format!("{hash}  {name}\n"));
    }
    let path = dir.join(CHECKSUMS_FILE);
    std::fs::write(&path, text).map_err(|e| Error::io(&path, e))
}

/// Compares `bytes` (the content of `dir/name`) with its recorded checksum, if any.
pub(crate) fn check_bytes(
    recorded: Option<&BTreeMap<String, String>>,
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<(), Error> {
    let Some(expected) = recorded.and_then(|m| m.get(name)) else {
        return Ok(());
    };
    let actual = sha256_hex(bytes);
    if &actual == expected {
        Ok(())
    } else {
        Err(Error::Checksum {
            path: dir.join(name),
            expected: expected.clone(),
            actual,
        })
    }
}

/// Verifies every file listed in `dir/checksums.txt` (reading them whole). Returns the
/// number of files checked: 0 when the folder has no `checksums.txt`.
pub fn verify_checksums(dir: &Path) -> Result<usize, Error> {
    let Some(recorded) = read_checksums(dir)? else {
        return Ok(0);
    };
    for (name, expected) in &recorded {
        let path = dir.join(name);
        let actual = sha256_file(&path)?;
        if &actual != expected {
            return Err(Error::Checksum {
                path,
                expected: expected.clone(),
                actual,
            });
        }
    }
    Ok(recorded.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_input() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn write_then_verify_then_detect_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), b"{}").unwrap();
        std::fs::write(dir.path().join("b.bin"), b"\x00\x01").unwrap();
        write_checksums(dir.path(), &["a.json", "b.bin"]).unwrap();
        assert_eq!(verify_checksums(dir.path()).unwrap(), 2);

        std::fs::write(dir.path().join("b.bin"), b"\x00\x02").unwrap();
        let err = verify_checksums(dir.path()).unwrap_err();
        assert!(matches!(err, Error::Checksum { .. }), "{err}");
        assert!(err.to_string().contains("b.bin"), "{err}");
    }

    #[test]
    fn reads_sha256sum_binary_mode_and_rejects_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let h = "a".repeat(64);
        std::fs::write(dir.path().join(CHECKSUMS_FILE), format!("{h} *x.bin\n\n")).unwrap();
        let m = read_checksums(dir.path()).unwrap().unwrap();
        assert_eq!(m.get("x.bin"), Some(&h));

        std::fs::write(dir.path().join(CHECKSUMS_FILE), "not a checksum line\n").unwrap();
        let err = read_checksums(dir.path()).unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }

    #[test]
    fn missing_listed_file_names_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let h = "0".repeat(64);
        std::fs::write(dir.path().join(CHECKSUMS_FILE), format!("{h}  gone.bin\n")).unwrap();
        let err = verify_checksums(dir.path()).unwrap_err();
        assert!(err.to_string().contains("gone.bin"), "{err}");
    }
}
