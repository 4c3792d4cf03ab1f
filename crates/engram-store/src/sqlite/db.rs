//! Opening the database: pragmas, retries on a busy first open, and versioned migrations.
//!
//! Many processes (CLI calls, one MCP server per client) share one file. WAL lets readers
//! and a writer run together; every write transaction starts `IMMEDIATE`, so a writer waits
//! for the lock (up to the busy timeout) instead of failing on a read-to-write upgrade.

use crate::{Error, Result};
use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a statement waits for another process's lock before giving up.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Each entry moves the schema up one version. Never edit a released entry; append.
pub const MIGRATIONS: &[&str] = &[
    // 1: memories, events, links, meta, and the two full-text indexes.
    r#"
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE memories (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    uid          TEXT NOT NULL UNIQUE,
    content      TEXT NOT NULL,
    title        TEXT,
    kind         TEXT NOT NULL,
    importance   REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
    tags         TEXT NOT NULL DEFAULT '[]',
    room         TEXT NOT NULL DEFAULT 'common',
    topic_key    TEXT,
    pinned       INTEGER NOT NULL DEFAULT 0,
    tier         TEXT NOT NULL DEFAULT 'active',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    valid_from   INTEGER NOT NULL,
    valid_to     INTEGER,
    source       TEXT NOT NULL DEFAULT 'unknown',
    session_id   TEXT,
    metadata     TEXT NOT NULL DEFAULT '{}',
    content_hash TEXT NOT NULL
);
CREATE INDEX memories_room_tier ON memories (room, tier);
CREATE INDEX memories_hash ON memories (content_hash, room);
CREATE INDEX memories_topic ON memories (topic_key, room) WHERE topic_key IS NOT NULL;
CREATE TABLE events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id  INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    weight     REAL NOT NULL,
    at         INTEGER NOT NULL,
    session_id TEXT,
    detail     TEXT
);
CREATE INDEX events_memory ON events (memory_id, at);
CREATE TABLE links (
    src        INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    dst        INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    weight     REAL NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    note       TEXT,
    PRIMARY KEY (src, dst, kind)
) WITHOUT ROWID;
CREATE INDEX links_dst ON links (dst);
CREATE VIRTUAL TABLE fts_words USING fts5 (body, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE fts_grams USING fts5 (body, tokenize = 'trigram case_sensitive 0 remove_diacritics 1');
"#,
    // 2: sessions (C's start/end/summary, A's outcome).
    r#"
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    room       TEXT NOT NULL,
    directory  TEXT,
    source     TEXT,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER,
    summary    TEXT,
    outcome    TEXT,
    outcome_at INTEGER
);
CREATE INDEX events_session ON events (session_id) WHERE session_id IS NOT NULL;
"#,
    // 3: one embedding per memory, tagged with the model that made it. `seq` grows with every
    // write, so a process can pick up what others wrote since it last looked.
    r#"
CREATE TABLE embeddings (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id INTEGER NOT NULL UNIQUE REFERENCES memories (id) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    dim       INTEGER NOT NULL,
    vector    BLOB NOT NULL
);
CREATE INDEX embeddings_model ON embeddings (model);
"#,
    // 4: the prompts a session saw (seed C's user_prompts).
    r#"
CREATE TABLE prompts (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT,
    room       TEXT NOT NULL,
    content    TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX prompts_session ON prompts (session_id, id);
"#,
    // 5: write-path resolution and everything that watches memories change.
    // - revisions: the text a memory had before a topic upsert, merge, update or correction.
    // - judgments: C's relation verdicts between two memories (pending until judged).
    // - maintenance_runs: what each `maintain` run did or would do.
    // - review_after: C's review date by kind.
    // - changes: every insert, update and delete of a memory or link, written by triggers so
    //   no write path can forget it; the vault and other followers drain it by `seq`.
    r#"
CREATE TABLE revisions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id  INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    content    TEXT NOT NULL,
    title      TEXT,
    kind       TEXT NOT NULL,
    importance REAL NOT NULL,
    tags       TEXT NOT NULL DEFAULT '[]',
    reason     TEXT NOT NULL,
    at         INTEGER NOT NULL,
    session_id TEXT
);
CREATE INDEX revisions_memory ON revisions (memory_id, id);
CREATE TABLE judgments (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    uid        TEXT NOT NULL UNIQUE,
    src        INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    dst        INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    relation   TEXT,
    status     TEXT NOT NULL DEFAULT 'pending',
    score      REAL,
    reason     TEXT,
    evidence   TEXT,
    confidence REAL,
    actor      TEXT,
    actor_kind TEXT,
    model      TEXT,
    session_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (src, dst)
);
CREATE INDEX judgments_dst ON judgments (dst);
CREATE TABLE maintenance_runs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER NOT NULL,
    dry_run     INTEGER NOT NULL,
    report      TEXT NOT NULL
);
ALTER TABLE memories ADD COLUMN review_after INTEGER;
CREATE TABLE changes (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id INTEGER NOT NULL,
    uid       TEXT
);
CREATE TRIGGER memories_ins_change AFTER INSERT ON memories
BEGIN INSERT INTO changes (memory_id, uid) VALUES (new.id, new.uid); END;
CREATE TRIGGER memories_upd_change AFTER UPDATE ON memories
BEGIN INSERT INTO changes (memory_id, uid) VALUES (new.id, new.uid); END;
CREATE TRIGGER memories_del_change AFTER DELETE ON memories
BEGIN INSERT INTO changes (memory_id, uid) VALUES (old.id, old.uid); END;
CREATE TRIGGER links_ins_change AFTER INSERT ON links
BEGIN INSERT INTO changes (memory_id) VALUES (new.src); END;
CREATE TRIGGER links_del_change AFTER DELETE ON links
BEGIN INSERT INTO changes (memory_id) VALUES (old.src); END;
"#,
    // 6: the Markdown vault's view of its files: which file holds which memory, and the hash,
    // size and modification time it had when engram last wrote or read it (a file that no
    // longer matches was edited by hand or by another machine).
    r#"
CREATE TABLE vault_files (
    path  TEXT PRIMARY KEY,
    uid   TEXT NOT NULL,
    hash  TEXT NOT NULL,
    size  INTEGER NOT NULL,
    mtime INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX vault_files_uid ON vault_files (uid);
"#,
    // 7: evidence: a write folded into another memory (reinforce, merge) keeps its own text,
    // title, source, session and time here, so no acknowledged word is ever lost.
    r#"
CREATE TABLE evidence (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id  INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    content    TEXT NOT NULL,
    title      TEXT,
    source     TEXT NOT NULL,
    session_id TEXT,
    action     TEXT NOT NULL,
    at         INTEGER NOT NULL
);
CREATE INDEX evidence_memory ON evidence (memory_id, id);
"#,
    // 8: a team server's people (issue 18): who wrote each memory, and the users with the
    // SHA-256 of their current token (`NULL` once revoked; the token itself is never
    // stored). Owned by `team.rs`. Users are never deleted: their memories name them.
    r#"
ALTER TABLE memories ADD COLUMN author TEXT;
-- The private memories, for a team user's hidden set (`team.rs`), without a scan of all.
CREATE INDEX memories_private ON memories (author)
    WHERE (room = 'private' OR substr(room, 1, 8) = 'private/' OR kind = 'preference');
CREATE TABLE team_users (
    name             TEXT PRIMARY KEY,
    token_hash       TEXT UNIQUE,
    created_at       INTEGER NOT NULL,
    token_changed_at INTEGER NOT NULL
);
"#,
    // 9: who started each session and saved each prompt (issue 18), so a team user cannot
    // end, hand off or delete another's. `NULL`: one person's, or from before. Owned by
    // `sessions.rs`.
    r#"
ALTER TABLE sessions ADD COLUMN author TEXT;
ALTER TABLE prompts ADD COLUMN author TEXT;
"#,
];

/// Opens (creating if needed) the store at `path` and brings its schema up to date.
pub fn open(path: &Path) -> Result<Connection> {
    Ok(open_converting(path)?.0)
}

/// [`open`], also setting seed C's tables aside when the file holds C's database (see
/// `seed_c`); returns the backup taken then.
pub fn open_converting(path: &Path) -> Result<(Connection, Option<std::path::PathBuf>)> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_private_dir(dir)?;
    }
    create_private_db_file(path)?;
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let mut conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Switching to WAL needs a brief exclusive lock; when several processes open a new store
    // at once, one of them may see SQLITE_BUSY here despite the timeout, so retry.
    retry_busy(|| {
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .map(|_| ())
    })?;
    // FULL: a transaction that returned is on disk, even if the machine loses power.
    conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")?;
    // A page cache of up to 64 MiB (SQLite's default is 2 MiB), filled only as pages are
    // read. Past ~50k memories FTS5 ranking reads the same index and docsize pages on
    // every query; from the process's cache instead of a pread each, lexical recall at
    // 100k went from 28 to 23 ms p50 (`engram bench recall --memories 100000 --lexical`).
    // At 10k it changes nothing measurable and costs ~10 MB of RSS.
    conn.execute_batch("PRAGMA cache_size = -65536")?;
    let backup = crate::seed_c::set_aside(&mut conn, path)?;
    refuse_foreign(&conn, path)?;
    migrate(&mut conn, path)?;
    Ok((conn, backup))
}

/// A database with tables but not engram's (nor C's, which was set aside above) is some
/// other program's: say so instead of failing on the first clashing `CREATE TABLE`.
fn refuse_foreign(conn: &Connection, path: &Path) -> Result<()> {
    // Both reads in one snapshot: another process creating this new store commits its
    // tables and its `user_version` together, and two separate reads could see the version
    // before that commit and the tables after it (a fresh store taken for a foreign one).
    let snapshot = conn.unchecked_transaction()?;
    let version: i64 = snapshot.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version != 0 {
        return Ok(());
    }
    let mut stmt = snapshot.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
         AND name NOT LIKE 'seed_c_%' ORDER BY name LIMIT 6",
    )?;
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if tables.is_empty() {
        return Ok(());
    }
    Err(Error::Config {
        path: path.to_path_buf(),
        message: format!(
            "is not an engram database (it holds the tables {}); move it away or set ENGRAM_HOME to another folder",
            tables.join(", ")
        ),
    })
}

fn retry_busy(mut f: impl FnMut() -> rusqlite::Result<()>) -> Result<()> {
    let start = Instant::now();
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return Ok(other?),
        }
    }
}

fn migrate(conn: &mut Connection, path: &Path) -> Result<()> {
    let supported = MIGRATIONS.len() as i64;
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > supported {
        return Err(Error::SchemaTooNew {
            path: path.to_path_buf(),
            found: current,
            supported,
        });
    }
    if current == supported {
        return Ok(());
    }
    // Another process may migrate at the same moment: take the write lock, then look again.
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current.max(0) as usize) {
        tx.execute_batch(sql)?;
        let version = i as i64 + 1;
        tx.execute_batch(&format!("PRAGMA user_version = {version}"))?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [version.to_string()],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// Creates the database file with mode 0600 before SQLite opens it, so SQLite (which gives
/// its `-wal` and `-shm` files the database file's permissions) never makes a file others
/// can read. An existing file is left as it is; an empty file is a valid empty database.
fn create_private_db_file(path: &Path) -> Result<()> {
    if path
        .to_str()
        .is_some_and(|p| p == ":memory:" || p.starts_with("file:"))
        || path.exists()
    {
        return Ok(());
    }
    match crate::fsutil::create_private(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(Error::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Creates a directory readable by its owner only (on Unix); leaves an existing one alone.
pub fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// A consistent copy of an open database (one read transaction) into a new file.
pub(crate) fn vacuum_into(conn: &Connection, target: &Path) -> Result<()> {
    let t = target.to_str().ok_or_else(|| {
        engram_core::InputError::new("path", format!("{} is not valid UTF-8", target.display()))
    })?;
    conn.execute("VACUUM INTO ?1", [t])?;
    // VACUUM INTO writes without syncing (unless synchronous is set on a fresh connection):
    // make the copy durable before anyone relies on it.
    std::fs::File::open(target)
        .and_then(|f| f.sync_all())
        .map_err(|source| Error::io(target, source))?;
    Ok(())
}
