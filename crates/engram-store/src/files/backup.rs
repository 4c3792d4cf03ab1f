//! Online backups and restores.
//!
//! A backup is a folder: `engram.db`, a consistent copy of the store made with `VACUUM INTO`
//! inside one read transaction (other processes keep writing meanwhile; the copy holds
//! exactly the transactions committed when it started), plus the Markdown vault
//! (`memories/`) copied file by file when the store has one, and `backup.json` describing
//! both. A restore validates the backup first (SQLite's `integrity_check`, the schema
//! version), keeps the store it replaces as `engram.db.before-restore-<timestamp>`, then
//! copies the backup in through SQLite's online backup API, so processes that have the
//! store open see the restored content on their next transaction instead of a file
//! swapped under them.

use super::fsutil;
use crate::storage::Backend;
use crate::{Error, Result, SCHEMA_VERSION, db};
use engram_core::InputError;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The database file's name inside a backup folder (the same as in a home).
pub const BACKUP_DB: &str = super::home::DB_FILE;
/// The vault folder's name, in `ENGRAM_HOME` and in a backup folder.
pub use super::home::VAULT_DIR;

/// What a backup holds.
#[derive(Debug, Clone, Serialize)]
pub struct BackupInfo {
    /// The backup's database file.
    pub db: PathBuf,
    pub schema_version: i64,
    pub memories: i64,
    pub bytes: u64,
    /// Vault files copied (0 without a vault).
    pub vault_files: u64,
}

/// What a restore did.
#[derive(Debug, Clone, Serialize)]
pub struct RestoreOutcome {
    pub restored_from: PathBuf,
    pub memories: i64,
    pub schema_version: i64,
    /// Where the replaced store was kept (none when the store was empty or absent).
    pub previous_db: Option<PathBuf>,
    /// Where the replaced vault was moved, when the backup carried one.
    pub previous_vault: Option<PathBuf>,
    pub vault_files: u64,
}

/// Writes a backup of the store at `db_path` (and of `vault`, when it exists) into the
/// folder `dest`, which must not exist or be empty.
pub fn backup(db_path: &Path, vault: Option<&Path>, dest: &Path) -> Result<BackupInfo> {
    let conn = db::open(db_path)?;
    let backend = crate::sqlite::SqliteBackend::over(conn, db_path, &Default::default());
    backup_with(&backend, vault, dest)
}

/// [`backup`] of any backend: its consistent copy ([`Backend::copy_to`], which a server
/// database refuses, naming its own tool) and the vault beside it.
pub fn backup_with(backend: &dyn Backend, vault: Option<&Path>, dest: &Path) -> Result<BackupInfo> {
    if dest.exists() {
        let empty = dest.is_dir()
            && std::fs::read_dir(dest)
                .map_err(|source| Error::io(dest, source))?
                .next()
                .is_none();
        if !empty {
            return Err(InputError::new(
                "path",
                format!(
                    "{} already exists and is not an empty folder; choose a new path",
                    dest.display()
                ),
            )
            .into());
        }
    }
    db::create_private_dir(dest)?;
    let target = dest.join(BACKUP_DB);
    backend.copy_to(&target)?;
    fsutil::make_private(&target).map_err(|source| Error::io(&target, source))?;
    let mut info = inspect(&target)?;
    if let Some(v) = vault.filter(|v| v.is_dir()) {
        let to = dest.join(VAULT_DIR);
        info.vault_files = fsutil::copy_tree(v, &to).map_err(|source| Error::io(&to, source))?;
    }
    let manifest = serde_json::json!({
        "format": "engram-backup-1",
        "schema_version": info.schema_version,
        "memories": info.memories,
        "vault_files": info.vault_files,
    });
    let mpath = dest.join("backup.json");
    fsutil::write_atomic(&mpath, format!("{manifest:#}\n").as_bytes())
        .map_err(|source| Error::io(&mpath, source))?;
    fsutil::sync_dir(dest).map_err(|source| Error::io(dest, source))?;
    Ok(info)
}

/// Resolves a backup path (a backup folder or a database file) to its database file.
pub fn backup_db_path(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(BACKUP_DB)
    } else {
        path.to_path_buf()
    }
}

/// Validates a backup's database: SQLite's `integrity_check`, an engram schema no newer than
/// this build's. Opens it read-only; never changes it.
pub fn inspect(db_file: &Path) -> Result<BackupInfo> {
    let invalid = |why: String| -> Error {
        InputError::new(
            "backup",
            format!("{} is not a usable engram backup: {why}", db_file.display()),
        )
        .into()
    };
    if !db_file.is_file() {
        return Err(invalid("no such file".into()));
    }
    let (version, memories) = match crate::sqlite::backup_file::read(db_file)? {
        Ok(found) => found,
        Err(why) => return Err(invalid(why)),
    };
    if version < 1 {
        return Err(invalid("it has no engram schema".into()));
    }
    if version > SCHEMA_VERSION {
        return Err(Error::SchemaTooNew {
            path: db_file.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    let bytes = std::fs::metadata(db_file)
        .map_err(|source| Error::io(db_file, source))?
        .len();
    Ok(BackupInfo {
        db: db_file.to_path_buf(),
        schema_version: version,
        memories,
        bytes,
        vault_files: 0,
    })
}

/// Restores the backup at `from` (a backup folder or a database file) into the store at
/// `db_path` and, when the backup has a vault, into `vault`. Refuses a store that holds
/// memories unless `force`.
pub fn restore(
    db_path: &Path,
    vault: Option<&Path>,
    from: &Path,
    force: bool,
) -> Result<RestoreOutcome> {
    let source_db = backup_db_path(from);
    let info = inspect(&source_db)?;
    if std::fs::canonicalize(&source_db).ok() == std::fs::canonicalize(db_path).ok() {
        return Err(InputError::new("path", "the backup is the store itself").into());
    }
    let stamp = timestamp();
    let keep = sibling(db_path, &format!(".before-restore-{stamp}"));
    let (previous_db, memories) =
        crate::sqlite::backup_file::copy_in(db_path, &source_db, force, &keep)?;

    let mut previous_vault = None;
    let mut vault_files = 0;
    let backup_vault = from.join(VAULT_DIR);
    if let Some(v) = vault.filter(|_| from.is_dir() && backup_vault.is_dir()) {
        if v.exists() {
            let keep = sibling(v, &format!(".before-restore-{stamp}"));
            std::fs::rename(v, &keep).map_err(|source| Error::io(v, source))?;
            previous_vault = Some(keep);
        }
        vault_files = fsutil::copy_tree(&backup_vault, v).map_err(|source| Error::io(v, source))?;
    }
    Ok(RestoreOutcome {
        restored_from: source_db,
        memories,
        schema_version: SCHEMA_VERSION.max(info.schema_version),
        previous_db,
        previous_vault,
        vault_files,
    })
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// `YYYYMMDDTHHMMSSZ` in UTC, for file names.
fn timestamp() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    engram_core::time::format(ms)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(15)
        .collect::<String>()
        + "Z"
}
