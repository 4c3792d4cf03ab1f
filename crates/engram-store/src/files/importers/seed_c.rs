//! Seed C's data: its SQLite database (in place or set aside) and its JSON export.
//!
//! The one use of rusqlite outside `sqlite/` on purpose: seed C's database is *another
//! program's* SQLite file (or, converted in place, its tables set aside inside ours), read
//! here as a foreign source like any importer's file. It is not the store's backend, and
//! what it reads goes into the store through `import_batch` on the storage interface.

use super::*;

use super::stream::{chunk_of, rows};
use crate::files::transfer::{CHUNK_MEMORIES, Sink};

/// C's four lists of records, in the order they are best read: relations name
/// observations, so they come last where the source lets the reader choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Section {
    Observations,
    Sessions,
    Prompts,
    Relations,
}

impl Section {
    const ALL: [Section; 4] = [
        Section::Observations,
        Section::Sessions,
        Section::Prompts,
        Section::Relations,
    ];

    /// The keys of C's export (and of engram's older readers) that hold this list.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Section::Observations => &["observations"],
            Section::Sessions => &["sessions"],
            Section::Prompts => &["prompts", "user_prompts"],
            Section::Relations => &["relations", "memory_relations"],
        }
    }

    /// The list's name in C's export, for warnings and errors.
    pub(super) fn name(self) -> &'static str {
        self.keys()[0]
    }

    /// The list a key of C's export holds.
    pub(super) fn of_key(key: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|s| s.keys().contains(&key))
    }

    /// C's table for this list.
    fn table(self) -> &'static str {
        match self {
            Section::Observations => "observations",
            Section::Sessions => "sessions",
            Section::Prompts => "user_prompts",
            Section::Relations => "memory_relations",
        }
    }
}

/// Turns C's records, one at a time and in any order, into a batch. Observations become
/// memories; a relation names two of them by sync id, and one naming an observation not
/// read yet waits for [`CReader::finish`].
pub(super) struct CReader {
    now: Millis,
    /// An observation's sync id to its memory's uid.
    by_sync: HashMap<String, String>,
    waiting: Vec<Map<String, Value>>,
    /// Records read of each list, for the warnings' `list[i]`.
    seen: [usize; 4],
    /// Whether the source had any of C's lists of observations, sessions or prompts.
    any_list: bool,
}

impl CReader {
    pub(super) fn new(now: Millis) -> CReader {
        CReader {
            now,
            by_sync: HashMap::new(),
            waiting: Vec::new(),
            seen: [0; 4],
            any_list: false,
        }
    }

    /// The source has the list `s` (perhaps empty).
    pub(super) fn has(&mut self, s: Section) {
        self.any_list |= s != Section::Relations;
    }

    /// One record of list `s` into the batch (or a warning saying why it was skipped).
    pub(super) fn record(&mut self, s: Section, o: &Map<String, Value>, batch: &mut Batch) {
        let i = self.seen[s as usize];
        self.seen[s as usize] += 1;
        let now = self.now;
        match s {
            Section::Observations => match c_observation(o, now) {
                Ok((sync_id, uid, im)) => {
                    self.by_sync.insert(sync_id, uid);
                    batch.memories.push(im);
                }
                Err(warning) => batch.warn(warning),
            },
            Section::Sessions => match c_session(o, now) {
                Some(row) => batch.sessions.push(row),
                None => batch.warn(format!("sessions[{i}]: no `id`; skipped")),
            },
            Section::Prompts => match c_prompt(o, now) {
                Some(row) => batch.prompts.push(row),
                None => batch.warn(format!("prompts[{i}]: no `content`; skipped")),
            },
            Section::Relations => {
                if !c_relation(o, &self.by_sync, now, batch) {
                    self.waiting.push(o.clone());
                }
            }
        }
    }

    /// The relations that waited, now that every observation is read; and the warning
    /// for a source that is not C's at all.
    pub(super) fn finish(&mut self, batch: &mut Batch) {
        for r in std::mem::take(&mut self.waiting) {
            if !c_relation(&r, &self.by_sync, self.now, batch) {
                batch.warn(format!(
                    "C relation {}: names an observation not in the source; skipped",
                    str_of(&r, "sync_id").unwrap_or("?")
                ));
            }
        }
        if !self.any_list {
            let known = ["observations", "sessions", "prompts", "user_prompts"];
            batch.warn(format!(
                "the source has none of {}: it is not seed C's export or database",
                known.map(|k| format!("`{k}`")).join(", ")
            ));
        }
    }
}

fn c_session(s: &Map<String, Value>, now: Millis) -> Option<SessionRow> {
    let id = str_of(s, "id")?;
    Some(SessionRow {
        id: id.to_string(),
        room: room_of(str_of(s, "project")),
        directory: str_of(s, "directory").map(str::to_string),
        source: Some("engram-c".into()),
        started_at: time_of(s, "started_at").unwrap_or(now),
        ended_at: time_of(s, "ended_at"),
        summary: str_of(s, "summary").map(str::to_string),
        outcome: None,
        outcome_at: None,
        author: None,
    })
}

fn c_prompt(p: &Map<String, Value>, now: Millis) -> Option<PromptRow> {
    let content = str_of(p, "content")?;
    Some(PromptRow {
        session_id: str_of(p, "session_id").map(str::to_string),
        room: room_of(str_of(p, "project")),
        content: content.to_string(),
        created_at: time_of(p, "created_at").unwrap_or(now),
        author: None,
    })
}

/// C's data as one JSON value (its export, or a request body), into a batch.
pub fn read_c_value(v: &Value, now: Millis) -> Batch {
    let mut batch = Batch::default();
    let mut reader = CReader::new(now);
    for s in Section::ALL {
        let Some(list) = s
            .keys()
            .iter()
            .find_map(|k| v.get(*k).and_then(Value::as_array))
        else {
            continue;
        };
        reader.has(s);
        for o in list.iter().filter_map(Value::as_object) {
            reader.record(s, o, &mut batch);
        }
    }
    reader.finish(&mut batch);
    batch
}

// ---- C's database, a page at a time --------------------------------------------------

fn sql_to_json(v: rusqlite::types::Value) -> Value {
    use rusqlite::types::Value as V;
    match v {
        V::Null | V::Blob(_) => Value::Null,
        V::Integer(i) => json!(i),
        V::Real(f) => json!(f),
        V::Text(s) => json!(s),
    }
}

fn table_exists(conn: &rusqlite::Connection, table: &str) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [table],
        |r| r.get(0),
    )?)
}

/// One page of a table's rows after rowid `after` (vectors left out): the rows as
/// objects, and the last rowid read.
fn table_page(
    conn: &rusqlite::Connection,
    table: &str,
    after: i64,
) -> Result<(Vec<Map<String, Value>>, i64)> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT rowid, * FROM \"{table}\" WHERE rowid > ?1 ORDER BY rowid LIMIT {CHUNK_MEMORIES}"
    ))?;
    let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let mut rows = stmt.query([after])?;
    let (mut out, mut last) = (Vec::new(), after);
    while let Some(r) = rows.next()? {
        last = r.get(0)?;
        let mut o = Map::new();
        for (i, n) in names.iter().enumerate().skip(1) {
            if n != "embedding" {
                o.insert(n.clone(), sql_to_json(r.get(i)?));
            }
        }
        out.push(o);
    }
    Ok((out, last))
}

/// C's database read a page at a time into the sink.
pub(super) fn feed_db(path: &Path, now: Millis, sink: &mut Sink<'_>) -> Result<()> {
    if !path.exists() {
        return Err(bad_file(path, "no such file"));
    }
    if !path.is_file() {
        return Err(bad_file(
            path,
            "not a regular file (seed C's database is a SQLite file)",
        ));
    }
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    feed_tables(&conn, "", now, sink)
}

/// C's four tables (named with `prefix`: "" in C's own database, `seed_c_` once engram has
/// set them aside in place) into the sink, a page at a time; progress counts rows.
fn feed_tables(
    conn: &rusqlite::Connection,
    prefix: &str,
    now: Millis,
    sink: &mut Sink<'_>,
) -> Result<()> {
    let mut tables = Vec::new();
    let mut total = 0u64;
    for s in Section::ALL {
        let table = format!("{prefix}{}", s.table());
        if table_exists(conn, &table)? {
            let n: i64 = conn.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| {
                r.get(0)
            })?;
            total += n as u64;
            tables.push((s, table));
        }
    }
    let mut reader = CReader::new(now);
    let mut batch = Batch::default();
    let mut done = 0u64;
    for (s, table) in tables {
        reader.has(s);
        let mut after = i64::MIN;
        loop {
            let (page, last) = table_page(conn, &table, after)?;
            let n = page.len();
            for o in &page {
                reader.record(s, o, &mut batch);
            }
            done += n as u64;
            if rows(&batch) >= CHUNK_MEMORIES {
                sink(chunk_of(&mut batch, false), (done, total))?;
            }
            if n < CHUNK_MEMORIES {
                break;
            }
            after = last;
        }
    }
    reader.finish(&mut batch);
    sink(chunk_of(&mut batch, true), (done, total))
}

/// C's tables set aside in place, into one batch (the conversion reads them whole).
pub(crate) fn read_c_tables(
    conn: &rusqlite::Connection,
    prefix: &str,
    now: Millis,
) -> Result<Batch> {
    super::stream::collect(|sink| feed_tables(conn, prefix, now, sink))
}

fn relation_kind(raw: &str) -> LinkKind {
    match raw.trim().to_ascii_lowercase().as_str() {
        "supersedes" | "superseded_by" | "replaces" => LinkKind::Supersedes,
        "conflicts_with" | "conflicts" | "contradicts" => LinkKind::ConflictsWith,
        "compatible" => LinkKind::Compatible,
        "scoped" => LinkKind::Scoped,
        "derived_from" => LinkKind::DerivedFrom,
        _ => LinkKind::Related,
    }
}

/// One of C's observations as a memory: (its sync id, the memory's uid, the memory), or
/// why it was skipped.
fn c_observation(
    o: &Map<String, Value>,
    now: Millis,
) -> Result<(String, String, ImportedMemory), String> {
    let id = o.get("id").and_then(Value::as_i64).unwrap_or(0);
    let Some(content) = str_of(o, "content") else {
        return Err(format!("C observation {id}: no content; skipped"));
    };
    let sync_id = str_of(o, "sync_id")
        .map(str::to_string)
        .unwrap_or_else(|| format!("obs-{id}"));
    let created = time_of(o, "created_at").unwrap_or(now);
    // engram's own C-format export names its memories by their uid: importing that
    // export back finds them instead of creating copies.
    let uid = if ulid::Ulid::from_string(&sync_id).is_ok() && sync_id.len() == 26 {
        sync_id.to_ascii_uppercase()
    } else {
        derived_uid(created, &format!("c:{sync_id}"))
    };
    let ty = str_of(o, "type").unwrap_or("manual");
    let mut m = blank_memory(uid.clone(), content.to_string(), created);
    m.title = str_of(o, "title").map(str::to_string);
    m.kind = parse_kind(ty).unwrap_or(Kind::Fact);
    m.room = room_of(str_of(o, "project"));
    // C's personal (and global) scope is the user's own, across projects: the shared
    // `common` room, as C's writes with that scope land today (C's project is kept in
    // the metadata).
    if matches!(str_of(o, "scope"), Some("personal" | "global")) {
        m.room = room::COMMON.to_string();
    }
    m.topic_key = str_of(o, "topic_key").map(str::to_string);
    m.pinned = match o.get("pinned") {
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0) != 0,
        _ => false,
    };
    if str_of(o, "deleted_at").is_some() {
        m.tier = Tier::Trash;
    }
    m.updated_at = time_of(o, "updated_at").unwrap_or(created).max(created);
    m.session_id = str_of(o, "session_id").map(str::to_string);
    m.source = str_of(o, "created_by").unwrap_or("engram-c").to_string();
    m.metadata = json!({ "c": drop_nulls(json!({
        "id": id,
        "sync_id": sync_id,
        "type": ty,
        "scope": o.get("scope"),
        "project": o.get("project"),
        "tool_name": o.get("tool_name"),
        "revision_count": o.get("revision_count"),
        "duplicate_count": o.get("duplicate_count"),
        "last_seen_at": o.get("last_seen_at"),
        "deleted_at": o.get("deleted_at"),
    })) });
    // C's integer id is what agents quote (`#42`); keep it wherever it is free.
    m.id = id;
    let mut im = ImportedMemory::new(m);
    im.keep_id = id > 0;
    im.review_after = time_of(o, "review_after");
    Ok((sync_id, uid, im))
}

/// One of C's relations: always C's judgment, and a link too when it was judged; `false`
/// (nothing added) while an observation it names is not read.
fn c_relation(
    r: &Map<String, Value>,
    by_sync: &HashMap<String, String>,
    now: Millis,
    batch: &mut Batch,
) -> bool {
    let (Some(src), Some(dst)) = (
        str_of(r, "source_id").and_then(|s| by_sync.get(s)),
        str_of(r, "target_id").and_then(|s| by_sync.get(s)),
    ) else {
        return false;
    };
    let at = time_of(r, "created_at").unwrap_or(now);
    let status = str_of(r, "judgment_status").unwrap_or("judged");
    let relation = str_of(r, "relation").filter(|x| *x != "pending");
    // Every relation is kept as C's judgment (its verdict and provenance); a pending one
    // stays open for mem_judge, a judged one is also a link the graph follows.
    batch.judgments.push(JudgmentRow {
        uid: str_of(r, "sync_id")
            .map(str::to_string)
            .unwrap_or_else(|| format!("rel-{}", r.get("id").and_then(Value::as_i64).unwrap_or(0))),
        src: src.clone(),
        dst: dst.clone(),
        relation: relation.map(str::to_string),
        status: status.to_string(),
        score: None,
        reason: str_of(r, "reason").map(str::to_string),
        evidence: str_of(r, "evidence").map(str::to_string),
        confidence: r.get("confidence").and_then(Value::as_f64),
        actor: str_of(r, "marked_by_actor").map(str::to_string),
        actor_kind: str_of(r, "marked_by_kind").map(str::to_string),
        model: str_of(r, "marked_by_model").map(str::to_string),
        session_id: str_of(r, "session_id").map(str::to_string),
        created_at: at,
        updated_at: time_of(r, "updated_at").unwrap_or(at),
    });
    if status != "judged" || relation.is_none_or(|x| x == "not_conflict") {
        return true;
    }
    batch.links.push(LinkRow {
        src: src.clone(),
        dst: dst.clone(),
        kind: relation_kind(relation.unwrap_or("related")),
        weight: r
            .get("confidence")
            .and_then(Value::as_f64)
            .unwrap_or(1.0)
            .clamp(0.0, 1.0),
        created_at: at,
        updated_at: time_of(r, "updated_at").unwrap_or(at),
        note: str_of(r, "reason").map(str::to_string),
    });
    true
}
