//! Seed C's database found where engram keeps its own.
//!
//! C and engram both default to `~/.engram/engram.db`, so a C user's first engram command
//! meets C's tables (`sessions` among them) instead of an empty file. Rather than fail on
//! C's `CREATE TABLE` clash, opening converts the file in place, in three steps that each
//! leave a usable file behind if the process dies between them:
//!
//! 1. **Backup**: `VACUUM INTO <db>.seed-c-<ms>.bak`, a consistent copy including C's WAL.
//! 2. **Set aside** (one `IMMEDIATE` transaction, so two processes never both do it): C's
//!    triggers, views, indexes and full-text tables (all derived from its rows) are
//!    dropped, C's tables are renamed `seed_c_<name>`, and `user_version` is reset so
//!    engram's migrations run on the same file.
//! 3. **Import** (after migration): the `seed_c_*` rows become memories, sessions, prompts,
//!    judgments and links through the `c-db` importer, keeping C's integer ids so `#42` in an
//!    agent's notes is still memory 42. `meta.seed_c_imported` records that it is done;
//!    the import is idempotent (uids derive from C's sync ids), so a crash before that key
//!    is written only means the next open imports again and creates nothing twice.
//!
//! Nothing of C's is lost: the backup is C's file as it was. Once imported, the set-aside
//! `seed_c_*` tables are dropped with `secure_delete` on, because their text is C's raw
//! text and engram redacts secrets on the way in: the converted store holds no secret C
//! had. The store and the backup are made readable by their owner only (0600).

use crate::storage::Backend;
use crate::{Result, Store};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};

/// What C's tables are called once set aside.
pub const PREFIX: &str = "seed_c_";

/// `meta` key written when C's rows have been imported.
const IMPORTED_KEY: &str = "seed_c_imported";

fn table_exists(conn: &Connection, name: &str) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [name],
        |r| r.get(0),
    )?)
}

/// True when the database holds C's schema and not (yet) engram's.
pub fn is_seed_c(conn: &Connection) -> Result<bool> {
    Ok(table_exists(conn, "observations")? && !table_exists(conn, "memories")?)
}

/// Where the backup of `db` taken at `now_ms` goes.
fn backup_path(db: &Path, now_ms: i64) -> PathBuf {
    let name = db
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "engram.db".into());
    db.with_file_name(format!("{name}.seed-c-{now_ms}.bak"))
}

/// Steps 1 and 2: backs C's database up and renames its tables out of engram's way.
/// Returns the backup's path when this call did the work (`None`: not C's schema, or
/// another process set it aside first).
pub(crate) fn set_aside(conn: &mut Connection, db: &Path) -> Result<Option<PathBuf>> {
    if !is_seed_c(conn)? {
        return Ok(None);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let backup = backup_path(db, now);
    conn.execute("VACUUM INTO ?1", [backup.to_string_lossy()])?;
    owner_only(db);
    owner_only(&backup);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if !is_seed_c(&tx)? {
        // Another process converted it while this one copied; its backup is the one kept.
        drop(tx);
        let _ = std::fs::remove_file(&backup);
        return Ok(None);
    }
    let objects: Vec<(String, String, Option<String>)> = {
        let mut stmt = tx.prepare(
            "SELECT type, name, sql FROM sqlite_master
             WHERE name NOT LIKE 'sqlite_%' ORDER BY type = 'table', name",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let is_virtual = |sql: &Option<String>| {
        sql.as_deref().is_some_and(|s| {
            s.trim_start()
                .to_ascii_uppercase()
                .starts_with("CREATE VIRTUAL")
        })
    };
    // Derived objects first (a trigger names the full-text table it feeds).
    for (ty, name, sql) in &objects {
        let q = quote(name);
        match ty.as_str() {
            "trigger" => tx.execute_batch(&format!("DROP TRIGGER IF EXISTS {q}"))?,
            "view" => tx.execute_batch(&format!("DROP VIEW IF EXISTS {q}"))?,
            "table" if is_virtual(sql) => tx.execute_batch(&format!("DROP TABLE IF EXISTS {q}"))?,
            _ => {}
        }
    }
    for (ty, name, sql) in &objects {
        let q = quote(name);
        match ty.as_str() {
            // Indexes with SQL are C's own (automatic ones have none and move with the table).
            "index" if sql.is_some() => tx.execute_batch(&format!("DROP INDEX IF EXISTS {q}"))?,
            "table" if !is_virtual(sql) && table_exists(&tx, name)? => {
                tx.execute_batch(&format!(
                    "ALTER TABLE {q} RENAME TO {}",
                    quote(&format!("{PREFIX}{name}"))
                ))?
            }
            _ => {}
        }
    }
    tx.execute_batch("PRAGMA user_version = 0")?;
    tx.commit()?;
    Ok(Some(backup))
}

fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// What opening a store did with seed C's data it found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversion {
    /// The copy of C's database taken before anything changed (when this process took it).
    pub backup: Option<PathBuf>,
    pub memories: usize,
    pub sessions: usize,
    pub prompts: usize,
    pub judgments: usize,
    pub links: usize,
    pub warnings: Vec<String>,
}

impl Conversion {
    /// One line for a person (stderr): what was found, where the backup is, what came in.
    pub fn summary(&self, db: &Path) -> String {
        let backup = self
            .backup
            .as_ref()
            .map(|b| format!("; C's original is backed up at {}", b.display()))
            .unwrap_or_default();
        format!(
            "engram: {} held seed C's database; converted it in place{backup}: {} observations, {} sessions, {} prompts, {} relations (C's ids kept; C's rows, secrets included, only in the backup)",
            db.display(),
            self.memories,
            self.sessions,
            self.prompts,
            self.judgments,
        )
    }
}

/// Makes `path` readable by its owner only: C's file (and its backup) may hold secrets.
fn owner_only(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = path;
}

impl super::SqliteBackend {
    /// Drops the set-aside tables once their rows are imported, zeroing their pages, so
    /// the raw text of C's rows (which engram's import redacted) leaves the store.
    fn drop_set_aside(&self) -> Result<()> {
        let names: Vec<String> = self
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'seed\\_c\\_%' ESCAPE '\\'")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        // C's tables point at each other (observations at sessions): dropped as a set,
        // with the foreign keys, which are C's own and name nothing of engram's, off.
        self.conn
            .execute_batch("PRAGMA secure_delete = ON; PRAGMA foreign_keys = OFF")?;
        let dropped = names.iter().try_for_each(|n| {
            self.conn
                .execute_batch(&format!("DROP TABLE IF EXISTS {}", quote(n)))
        });
        self.conn.execute_batch("PRAGMA foreign_keys = ON")?;
        dropped?;
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .optional()?;
        Ok(())
    }

    /// The set-aside `seed_c_*` rows as a batch, when they are there and not imported yet.
    fn seed_c_pending(&self, now: i64) -> Result<Option<crate::transfer::Batch>> {
        if !table_exists(&self.conn, &format!("{PREFIX}observations"))? {
            return Ok(None);
        }
        let done: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = ?1",
                [IMPORTED_KEY],
                |r| r.get(0),
            )
            .optional()?;
        if done.is_some() {
            return Ok(None);
        }
        Ok(Some(crate::importers::read_c_tables(
            &self.conn, PREFIX, now,
        )?))
    }

    fn mark_seed_c_imported(&self, now: i64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
            rusqlite::params![IMPORTED_KEY, now.to_string()],
        )?;
        Ok(())
    }
}

impl Store {
    /// Step 3: imports the set-aside `seed_c_*` rows once. `None` when there is nothing to
    /// do (or the backend is not SQLite: only a SQLite file can be seed C's database).
    pub(crate) fn import_seed_c(&mut self, backup: Option<PathBuf>) -> Result<Option<Conversion>> {
        let now = self.now();
        let Some(batch) = self
            .backend
            .sqlite_ref()
            .map(|s| s.seed_c_pending(now))
            .transpose()?
            .flatten()
        else {
            return Ok(None);
        };
        let report = self.import_batch(batch, &mut |_, _| {})?;
        if let Some(s) = self.backend.sqlite_ref() {
            s.mark_seed_c_imported(self.now())?;
            s.drop_set_aside()?;
        }
        Ok(Some(Conversion {
            backup,
            memories: report.created_count("memories"),
            sessions: report.created_count("sessions"),
            prompts: report.created_count("prompts"),
            judgments: report.created_count("judgments"),
            links: report.created_count("links"),
            warnings: report.warnings,
        }))
    }
}
