//! Where every engram file lives: one [`Home`] names them all, so no surface builds a path
//! by hand (and none can disagree with the store about where, say, the vault is).
//!
//! ```text
//! ENGRAM_HOME/
//!   engram.db            the store (plus -wal, -shm, .ann.json and HNSW files beside it)
//!   config.toml          settings (see `settings`)
//!   memories/            the Markdown vault, unless `vault_dir` moves it or `vault = "off"`
//!   hooks/               the hooks' state between calls
//!   logs/                hook errors, tool latency, proactive-recall log
//!   models/              embedding models (`engram model pull`)
//!   .seed-b-notes        seed B's keys already reported
//!   memories.duckdb, graph.json   seed A's files, when a user of A moved over
//! ```

use crate::{Error, Result};
use engram_core::Config;
use engram_core::config::Switch;
use std::path::{Path, PathBuf};

/// The store's file name under a home.
pub const DB_FILE: &str = "engram.db";
/// The settings file's name under a home.
pub const CONFIG_FILE: &str = "config.toml";
/// The vault folder's name, in a home (when `vault_dir` is empty) and in a backup folder.
pub const VAULT_DIR: &str = "memories";
/// Seed A's files: their presence in a home means a user of A moved over.
pub const SEED_A_FILES: [&str; 2] = ["memories.duckdb", "graph.json"];
/// Seed B's files: its index (`index.db`, B's schema) and the protocol its installer
/// wrote (`MEMORY_PROTOCOL.md`, which B's users `@`-include from their instructions).
pub const SEED_B_FILES: [&str; 2] = ["index.db", "MEMORY_PROTOCOL.md"];

/// The files under one engram home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    pub root: PathBuf,
}

impl Home {
    /// `ENGRAM_HOME` if set, else `~/.engram`.
    pub fn from_env(engram_home: Option<&str>, user_home: Option<&str>) -> Result<Home> {
        let root = match (
            engram_home.filter(|s| !s.is_empty()),
            user_home.filter(|s| !s.is_empty()),
        ) {
            (Some(h), _) => PathBuf::from(h),
            (None, Some(u)) => Path::new(u).join(".engram"),
            (None, None) => {
                return Err(Error::Config {
                    path: PathBuf::from("~/.engram"),
                    message: "neither ENGRAM_HOME nor HOME is set; set ENGRAM_HOME to a directory"
                        .into(),
                });
            }
        };
        Ok(Home { root })
    }

    /// The home a store at `db` belongs to: the database's folder. A store opened at a path
    /// of its own (tests, benchmarks, `--db`) keeps its vault beside it, as it always has.
    pub fn of_db(db: &Path) -> Home {
        Home {
            root: db.parent().map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    /// The store: `engram.db`.
    pub fn db_path(&self) -> PathBuf {
        self.root.join(DB_FILE)
    }

    /// The settings file: `config.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }

    /// The vault's folder as `config` places it, or `None` with `vault = "off"`. A relative
    /// `vault_dir` is taken from the home (an absolute one, e.g. seed B's expanded
    /// `memories_dir`, stands as it is); an empty one is `memories/`.
    pub fn vault(&self, config: &Config) -> Option<PathBuf> {
        if config.vault == Switch::Off {
            return None;
        }
        let dir = config.vault_dir.trim();
        Some(self.root.join(if dir.is_empty() { VAULT_DIR } else { dir }))
    }

    /// Where the hooks keep their state between calls (`hooks/`).
    pub fn hooks_state(&self) -> PathBuf {
        self.root.join("hooks")
    }

    /// Makes `dir`, a folder of the home (`logs/`, `hooks/surface/`), ready to write in.
    /// Refused when a part of it below the home is a symbolic link: engram writes nothing
    /// through a link in its home, which could put its logs and state files (or overwrite
    /// another's) anywhere the link points.
    pub fn ready_dir(&self, dir: &Path) -> std::io::Result<()> {
        let rel = dir.strip_prefix(&self.root).map_err(|_| {
            std::io::Error::other(format!(
                "{} is outside {}",
                dir.display(),
                self.root.display()
            ))
        })?;
        let mut p = self.root.clone();
        for part in rel.components() {
            p.push(part);
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(std::io::Error::other(format!(
                        "{} is a symbolic link; engram writes nothing through links in its home",
                        p.display()
                    )));
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        std::fs::create_dir_all(dir)
    }

    /// Appends `line` to the log file `path` (in `logs/`), renamed to `<name>.old` first
    /// once it is past `rotate_at` bytes. Refused, like [`Home::ready_dir`], when the
    /// folder or the file itself is a symbolic link: a log planted as a link to a file
    /// elsewhere would have engram append to that file.
    pub fn append_log(&self, path: &Path, line: &[u8], rotate_at: u64) -> std::io::Result<()> {
        use std::io::Write;
        if let Some(dir) = path.parent() {
            self.ready_dir(dir)?;
        }
        let refuse_link = |p: &Path| match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => Err(std::io::Error::other(format!(
                "{} is a symbolic link; engram writes nothing through links in its home",
                p.display()
            ))),
            _ => Ok(()),
        };
        refuse_link(path)?;
        if std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) > rotate_at {
            let old = path.with_extension(format!(
                "{}.old",
                path.extension().and_then(|e| e.to_str()).unwrap_or("log")
            ));
            refuse_link(&old)?;
            let _ = std::fs::rename(path, old);
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        f.write_all(line)
    }

    /// Where logs go (`logs/`): hook errors, tool latency, proactive recall.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// Where embedding models are installed (`models/`).
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }

    /// The record of seed B's keys already reported (`.seed-b-notes`).
    pub fn seed_b_notes(&self) -> PathBuf {
        self.root.join(".seed-b-notes")
    }

    /// Seed A's files in this home ([`SEED_A_FILES`]), present or not.
    pub fn seed_a_files(&self) -> [PathBuf; 2] {
        SEED_A_FILES.map(|f| self.root.join(f))
    }

    /// Seed B's files in this home ([`SEED_B_FILES`]), present or not.
    pub fn seed_b_files(&self) -> [PathBuf; 2] {
        SEED_B_FILES.map(|f| self.root.join(f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_resolution() {
        assert_eq!(
            Home::from_env(Some("/e"), Some("/u")).unwrap().root,
            PathBuf::from("/e")
        );
        assert_eq!(
            Home::from_env(None, Some("/u")).unwrap().root,
            PathBuf::from("/u/.engram")
        );
        assert_eq!(
            Home::from_env(Some(""), Some("/u")).unwrap().root,
            PathBuf::from("/u/.engram")
        );
        assert!(Home::from_env(None, None).is_err());
    }

    #[test]
    fn every_path_comes_from_the_root() {
        let h = Home {
            root: PathBuf::from("/h"),
        };
        assert_eq!(h.db_path(), PathBuf::from("/h/engram.db"));
        assert_eq!(h.config_path(), PathBuf::from("/h/config.toml"));
        assert_eq!(h.hooks_state(), PathBuf::from("/h/hooks"));
        assert_eq!(h.logs(), PathBuf::from("/h/logs"));
        assert_eq!(h.models(), PathBuf::from("/h/models"));
        assert_eq!(h.seed_b_notes(), PathBuf::from("/h/.seed-b-notes"));
        assert_eq!(
            h.seed_a_files(),
            [
                PathBuf::from("/h/memories.duckdb"),
                PathBuf::from("/h/graph.json")
            ]
        );
        assert_eq!(Home::of_db(Path::new("/h/engram.db")), h);
    }

    /// The vault honours `vault_dir` (relative to the home, or absolute) and `vault = "off"`.
    #[test]
    fn vault_follows_the_configuration() {
        let h = Home {
            root: PathBuf::from("/h"),
        };
        let mut c = Config::default();
        assert_eq!(h.vault(&c), Some(PathBuf::from("/h/memories")));
        c.vault_dir = " notes ".into();
        assert_eq!(h.vault(&c), Some(PathBuf::from("/h/notes")));
        c.vault_dir = "/elsewhere/b".into();
        assert_eq!(h.vault(&c), Some(PathBuf::from("/elsewhere/b")));
        c.vault = Switch::Off;
        assert_eq!(h.vault(&c), None);
    }
}
