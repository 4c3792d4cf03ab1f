//! Readers for the seeds' data and the official MCP memory server's file. Each turns its
//! source into a [`Batch`] that [`crate::Store::import_batch`] stores as it is (no
//! resolution, original dates kept). Uids are derived from the source's own ids, so
//! importing the same source twice creates nothing the second time.
//!
//! - `b`: seed B's Markdown folder (the vault format engram's own vault extends).
//! - `c-db`: seed C's SQLite database (observations, sessions, prompts, relations).
//! - `c-json`: seed C's `engram export` JSON (`{version, sessions, observations, prompts}`).
//! - `mcp-memory`: the official MCP memory server's `memory.json` (JSONL of entities and
//!   relations).
//! - `a-jsonl`: seed A's DuckDB `memories` table written as JSON lines (`COPY memories TO
//!   'a.jsonl'` in the duckdb CLI); engram does not link DuckDB itself.

use crate::files::frontmatter;
use crate::files::transfer::{
    Batch, ImportedMemory, JudgmentRow, LinkRow, PromptRow, SessionRow, blank_memory, derived_uid,
};
use crate::files::vault::{self, parse_kind};
use crate::{Error, Result};
use engram_core::{Kind, LinkKind, Millis, Tier, room, time};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::Path;

/// Where an import comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// engram's own JSONL export.
    Engram,
    B,
    CDb,
    CJson,
    McpMemory,
    AJsonl,
}

impl Source {
    pub fn parse(raw: &str) -> Result<Source> {
        Ok(match raw.trim().to_ascii_lowercase().as_str() {
            "engram" | "jsonl" => Source::Engram,
            "b" => Source::B,
            "c-db" | "c" => Source::CDb,
            "c-json" => Source::CJson,
            "mcp-memory" | "mcp" => Source::McpMemory,
            "a-jsonl" | "a" => Source::AJsonl,
            other => {
                return Err(engram_core::InputError::new(
                    "from",
                    format!(
                        "{other:?} is not a known source; use engram, b, c-db, c-json, mcp-memory or a-jsonl"
                    ),
                )
                .into());
            }
        })
    }
}

/// Reads `path` as `source`. `room` puts everything in one room (sources without rooms
/// otherwise land in `common`); `now` dates what the source leaves undated.
pub fn read(source: Source, path: &Path, room: Option<&str>, now: Millis) -> Result<Batch> {
    let room = room.map(room::normalize_room).transpose()?;
    let mut batch = match source {
        Source::Engram => {
            let f = open(path)?;
            crate::files::transfer::read_jsonl(&mut std::io::BufReader::new(f))?
        }
        Source::B => read_b(path, now)?,
        Source::CDb => read_c_db(path, now)?,
        Source::CJson => {
            let text = read_text(path)?;
            let v: Value = serde_json::from_str(&text).map_err(|e| bad_file(path, e))?;
            read_c_value(&v, now)
        }
        Source::McpMemory => {
            let f = open(path)?;
            read_mcp_memory(
                crate::files::transfer::capped_lines(&mut std::io::BufReader::new(f)),
                now,
            )?
        }
        Source::AJsonl => {
            let f = open(path)?;
            read_a_jsonl(
                crate::files::transfer::capped_lines(&mut std::io::BufReader::new(f)),
                now,
            )?
        }
    };
    if let Some(r) = room {
        put_in_room(&mut batch, &r);
    }
    Ok(batch)
}

/// `import --room`: every memory, session and prompt of the batch into one room.
pub(crate) fn put_in_room(batch: &mut Batch, room: &str) {
    for m in &mut batch.memories {
        m.memory.room = room.to_string();
    }
    for s in &mut batch.sessions {
        s.room = room.to_string();
    }
    for p in &mut batch.prompts {
        p.room = room.to_string();
    }
}

fn open(path: &Path) -> Result<std::fs::File> {
    std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// A whole-document import, read up to [`limits::MAX_IMPORT_DOCUMENT_BYTES`]: past that the
/// file is refused, so `/dev/zero` or a runaway file cannot fill memory.
fn read_text(path: &Path) -> Result<String> {
    use std::io::Read;
    let cap = engram_core::limits::MAX_IMPORT_DOCUMENT_BYTES;
    let mut bytes = Vec::new();
    open(path)?
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > cap {
        return Err(engram_core::InputError::new(
            "file",
            format!(
                "{} is larger than the import limit of {} MiB for a JSON document",
                path.display(),
                cap >> 20
            ),
        )
        .into());
    }
    String::from_utf8(bytes).map_err(|e| bad_file(path, e))
}

fn bad_file(path: &Path, e: impl std::fmt::Display) -> Error {
    engram_core::InputError::new("file", format!("{}: {e}", path.display())).into()
}

/// A room from a source's project or namespace; `common` when it has none or it is unusable.
fn room_of(raw: Option<&str>) -> String {
    raw.map(str::trim)
        .filter(|r| !r.is_empty())
        .and_then(|r| room::normalize_room(r).ok())
        .unwrap_or_else(|| room::COMMON.to_string())
}

fn str_of<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    o.get(k)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

fn time_of(o: &Map<String, Value>, k: &str) -> Option<Millis> {
    str_of(o, k).and_then(time::parse)
}

fn drop_nulls(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.retain(|_, x| !x.is_null());
    }
    v
}

// ---- seed B -------------------------------------------------------------------------

fn read_b(dir: &Path, now: Millis) -> Result<Batch> {
    if !dir.is_dir() {
        return Err(bad_file(
            dir,
            "not a folder (seed B's memories are a folder of Markdown files)",
        ));
    }
    let mut batch = Batch::default();
    let (files, links) = vault::walk_all(dir)?;
    for rel in links {
        batch.warn(format!(
            "{}: a symbolic link; not followed, skipped",
            dir.join(rel).display()
        ));
    }
    let mut parsed = Vec::new();
    let mut stems: HashMap<String, String> = HashMap::new();
    for rel in &files {
        let full = dir.join(rel);
        let cap = engram_core::limits::MAX_MARKDOWN_FILE_BYTES;
        if let Ok(meta) = std::fs::metadata(&full)
            && meta.len() > cap
        {
            batch.warn(format!(
                "{}: {} bytes, over the limit of {} MiB for one Markdown file; skipped",
                full.display(),
                meta.len(),
                cap >> 20
            ));
            continue;
        }
        let text = match std::fs::read_to_string(&full) {
            Ok(t) => t,
            Err(e) => {
                batch.warn(format!("{}: {e}; skipped", full.display()));
                continue;
            }
        };
        match frontmatter::parse(&text).and_then(|d| vault::record_from_doc(&d)) {
            Ok(mut r) => {
                r.content = r.content.trim().to_string();
                let created = r.created_at.unwrap_or(now);
                let uid = r
                    .uid
                    .clone()
                    .map(|u| u.trim().to_ascii_uppercase())
                    .filter(|u| ulid::Ulid::from_string(u).is_ok())
                    .unwrap_or_else(|| derived_uid(created, &format!("b:{rel}")));
                stems.insert(vault::stem_of(rel).to_string(), uid.clone());
                parsed.push((rel.clone(), uid, r));
            }
            Err(e) => batch.warn(format!(
                "{}:{}: {}; skipped",
                full.display(),
                e.line,
                e.message
            )),
        }
    }
    for (rel, uid, r) in parsed {
        let in_trash = rel.starts_with(&format!("{}/", vault::TRASH_DIR));
        let mut m = vault::memory_from_record(&r, uid.clone(), now, 0.5, in_trash);
        if r.source.is_none() {
            m.source = "b".into();
        }
        m.id = 0;
        for l in r.links.iter().flatten() {
            let dst = if ulid::Ulid::from_string(&l.target).is_ok() && l.target.len() == 26 {
                Some(l.target.to_ascii_uppercase())
            } else {
                stems.get(&l.target).cloned()
            };
            match dst {
                Some(d) => batch.links.push(LinkRow {
                    src: uid.clone(),
                    dst: d,
                    kind: l.kind,
                    weight: l.weight,
                    created_at: m.created_at,
                    updated_at: m.created_at,
                    note: None,
                }),
                None => batch.warn(format!(
                    "{rel}: link [[{}]] names no memory; ignored",
                    l.target
                )),
            }
        }
        batch.memories.push(ImportedMemory::new(m));
    }
    Ok(batch)
}

// ---- seed C ---------------------------------------------------------------------------
//
// The one use of rusqlite outside `sqlite/` on purpose: seed C's database is *another
// program's* SQLite file (or, converted in place, its tables set aside inside ours), read
// here as a foreign source like any importer's file. It is not the store's backend, and
// what it reads goes into the store through `import_batch` on the storage interface.

fn sql_to_json(v: rusqlite::types::Value) -> Value {
    use rusqlite::types::Value as V;
    match v {
        V::Null | V::Blob(_) => Value::Null,
        V::Integer(i) => json!(i),
        V::Real(f) => json!(f),
        V::Text(s) => json!(s),
    }
}

fn table_rows(conn: &rusqlite::Connection, table: &str) -> Result<Vec<Map<String, Value>>> {
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
        [table],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\" ORDER BY rowid"))?;
    let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut o = Map::new();
        for (i, n) in names.iter().enumerate() {
            if n == "embedding" {
                continue;
            }
            o.insert(n.clone(), sql_to_json(r.get(i)?));
        }
        out.push(o);
    }
    Ok(out)
}

fn read_c_db(path: &Path, now: Millis) -> Result<Batch> {
    if !path.is_file() {
        return Err(bad_file(path, "no such file"));
    }
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    read_c_tables(&conn, "", now)
}

/// C's four tables (named with `prefix`: "" in C's own database, `seed_c_` once engram has
/// set them aside in place) into a batch.
pub(crate) fn read_c_tables(
    conn: &rusqlite::Connection,
    prefix: &str,
    now: Millis,
) -> Result<Batch> {
    let v = json!({
        "sessions": table_rows(conn, &format!("{prefix}sessions"))?,
        "observations": table_rows(conn, &format!("{prefix}observations"))?,
        "prompts": table_rows(conn, &format!("{prefix}user_prompts"))?,
        "relations": table_rows(conn, &format!("{prefix}memory_relations"))?,
    });
    Ok(read_c_value(&v, now))
}

fn list<'a>(v: &'a Value, keys: &[&str]) -> Vec<&'a Map<String, Value>> {
    keys.iter()
        .find_map(|k| v.get(*k).and_then(Value::as_array))
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
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

/// C's data as JSON (its export, or its database's rows), into a batch.
pub fn read_c_value(v: &Value, now: Millis) -> Batch {
    let mut batch = Batch::default();
    let mut by_sync: HashMap<String, String> = HashMap::new();
    for o in list(v, &["observations"]) {
        match c_observation(o, now) {
            Ok((sync_id, uid, im)) => {
                by_sync.insert(sync_id, uid);
                batch.memories.push(im);
            }
            Err(warning) => batch.warn(warning),
        }
    }
    let known = ["observations", "sessions", "prompts", "user_prompts"];
    if !known.iter().any(|k| v.get(*k).is_some_and(Value::is_array)) {
        batch.warn(format!(
            "the document has none of {}: it is not seed C's export",
            known.map(|k| format!("`{k}`")).join(", ")
        ));
    }
    for (i, s) in list(v, &["sessions"]).into_iter().enumerate() {
        let Some(id) = str_of(s, "id") else {
            batch.warn(format!("sessions[{i}]: no `id`; skipped"));
            continue;
        };
        let started = time_of(s, "started_at").unwrap_or(now);
        batch.sessions.push(SessionRow {
            id: id.to_string(),
            room: room_of(str_of(s, "project")),
            directory: str_of(s, "directory").map(str::to_string),
            source: Some("engram-c".into()),
            started_at: started,
            ended_at: time_of(s, "ended_at"),
            summary: str_of(s, "summary").map(str::to_string),
            outcome: None,
            outcome_at: None,
            author: None,
        });
    }
    for (i, p) in list(v, &["prompts", "user_prompts"])
        .into_iter()
        .enumerate()
    {
        let Some(content) = str_of(p, "content") else {
            batch.warn(format!("prompts[{i}]: no `content`; skipped"));
            continue;
        };
        batch.prompts.push(PromptRow {
            session_id: str_of(p, "session_id").map(str::to_string),
            room: room_of(str_of(p, "project")),
            content: content.to_string(),
            created_at: time_of(p, "created_at").unwrap_or(now),
            author: None,
        });
    }
    for r in list(v, &["relations", "memory_relations"]) {
        c_relation(r, &by_sync, now, &mut batch);
    }
    batch
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

/// One of C's relations: always C's judgment, and a link too when it was judged.
fn c_relation(
    r: &Map<String, Value>,
    by_sync: &HashMap<String, String>,
    now: Millis,
    batch: &mut Batch,
) {
    let (Some(src), Some(dst)) = (
        str_of(r, "source_id").and_then(|s| by_sync.get(s)),
        str_of(r, "target_id").and_then(|s| by_sync.get(s)),
    ) else {
        batch.warn(format!(
            "C relation {}: names an observation not in the source; skipped",
            str_of(r, "sync_id").unwrap_or("?")
        ));
        return;
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
        return;
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
}

// ---- the MCP memory server ----------------------------------------------------------

fn read_mcp_memory(lines: impl Iterator<Item = Result<String>>, now: Millis) -> Result<Batch> {
    let mut batch = Batch::default();
    let mut anchor: HashMap<String, String> = HashMap::new();
    let mut relations = Vec::new();
    for (i, line) in lines.enumerate() {
        let line = line?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let v: Value = match serde_json::from_str(t) {
            Ok(v) => v,
            Err(e) => {
                batch.warn(format!("line {}: not JSON ({e}); skipped", i + 1));
                continue;
            }
        };
        match v.get("type").and_then(Value::as_str) {
            Some("entity") => {
                let Some(name) = v.get("name").and_then(Value::as_str) else {
                    batch.warn(format!("line {}: entity without a name; skipped", i + 1));
                    continue;
                };
                let ety = v.get("entityType").and_then(Value::as_str).unwrap_or("");
                let mut obs: Vec<String> = v
                    .get("observations")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .filter(|s| !s.trim().is_empty())
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                if obs.is_empty() {
                    obs.push(if ety.is_empty() {
                        name.to_string()
                    } else {
                        format!("{name} ({ety})")
                    });
                }
                for o in obs {
                    let uid = derived_uid(0, &format!("mcp-memory:{name}\n{o}"));
                    anchor
                        .entry(name.to_string())
                        .or_insert_with(|| uid.clone());
                    let mut m = blank_memory(uid, o, now);
                    m.title = Some(name.to_string());
                    m.tags = [name, ety]
                        .iter()
                        .map(|t| t.trim())
                        .filter(|t| !t.is_empty() && t.len() <= engram_core::limits::MAX_TAG_BYTES)
                        .map(str::to_string)
                        .collect();
                    m.tags.dedup();
                    m.source = "mcp-memory".into();
                    m.metadata = json!({ "mcp_memory": { "entity": name, "entityType": ety } });
                    batch.memories.push(ImportedMemory::new(m));
                }
            }
            Some("relation") => relations.push((i + 1, v)),
            other => batch.warn(format!("line {}: unknown type {other:?}; skipped", i + 1)),
        }
    }
    for (line, r) in relations {
        let get = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        match (anchor.get(get("from")), anchor.get(get("to"))) {
            (Some(a), Some(b)) => batch.links.push(LinkRow {
                src: a.clone(),
                dst: b.clone(),
                kind: LinkKind::Related,
                weight: 1.0,
                created_at: now,
                updated_at: now,
                note: Some(get("relationType").to_string()).filter(|s| !s.is_empty()),
            }),
            _ => batch.warn(format!(
                "line {line}: relation {:?} -> {:?} names an unknown entity; skipped",
                get("from"),
                get("to")
            )),
        }
    }
    Ok(batch)
}

// ---- seed A ---------------------------------------------------------------------------

fn read_a_jsonl(lines: impl Iterator<Item = Result<String>>, now: Millis) -> Result<Batch> {
    let mut batch = Batch::default();
    for (i, line) in lines.enumerate() {
        let line = line?;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let o: Map<String, Value> = match serde_json::from_str(t) {
            Ok(v) => v,
            Err(e) => {
                batch.warn(format!("line {}: not a JSON object ({e}); skipped", i + 1));
                continue;
            }
        };
        let Some(content) = str_of(&o, "content") else {
            batch.warn(format!("line {}: no content; skipped", i + 1));
            continue;
        };
        let id = o
            .get("id")
            .map(|v| v.to_string())
            .unwrap_or_else(|| format!("line{}", i + 1));
        let user = str_of(&o, "user_id").unwrap_or("default");
        let created = time_of(&o, "created_at").unwrap_or(now);
        // DuckDB writes JSON columns as JSON, or as a string holding JSON.
        let meta = match o.get("metadata") {
            Some(Value::Object(m)) => Value::Object(m.clone()),
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| json!({})),
            _ => json!({}),
        };
        let category = str_of(&o, "category").unwrap_or("fact");
        let kind = meta
            .get("type")
            .and_then(Value::as_str)
            .and_then(|t| Kind::parse(t).ok())
            .or_else(|| Kind::parse(category).ok())
            .unwrap_or(Kind::Fact);
        let mut m = blank_memory(
            derived_uid(created, &format!("a:{user}:{id}")),
            content.to_string(),
            created,
        );
        m.kind = kind;
        m.importance = o
            .get("importance")
            .and_then(Value::as_f64)
            .unwrap_or(0.5)
            .clamp(0.0, 1.0);
        m.room = if user == "default" {
            room::COMMON.to_string()
        } else {
            room_of(Some(user))
        };
        m.updated_at = time_of(&o, "last_accessed_at")
            .unwrap_or(created)
            .max(created);
        m.source = "engram-a".into();
        let mut md = meta;
        if let Some(mo) = md.as_object_mut() {
            mo.insert(
                "a".into(),
                drop_nulls(json!({
                    "id": o.get("id"),
                    "user_id": user,
                    "category": category,
                    "recall_count": o.get("recall_count"),
                    "last_accessed_at": o.get("last_accessed_at"),
                })),
            );
        }
        m.metadata = md;
        let recalls = o.get("recall_count").and_then(Value::as_u64).unwrap_or(0);
        let last = time_of(&o, "last_accessed_at");
        let events = a_events(&m, recalls, last);
        let mut im = ImportedMemory::new(m);
        im.events = Some(events);
        batch.memories.push(im);
    }
    Ok(batch)
}

/// At most this many recall events stand for an A memory's `recall_count`.
const A_RECALL_EVENTS_MAX: u64 = 20;

/// An A memory's history as events: its creation, and its `recall_count` recalls spread
/// evenly up to `last_accessed_at` (A kept only the count and the last time). Without them
/// the dynamics saw a memory never used since it was written, and the first maintenance
/// archived what A's users recalled last week. A's `last_accessed_at` equals its creation
/// until a recall, so a later one with no count still counts as one recall then.
fn a_events(
    m: &engram_core::Memory,
    recalls: u64,
    last_accessed: Option<Millis>,
) -> Vec<crate::files::transfer::EventRow> {
    use crate::files::transfer::EventRow;
    let defaults = engram_core::Config::default();
    let mut events = vec![EventRow {
        kind: "create".into(),
        weight: engram_core::dynamics::create_weight(m.importance, &defaults.actr),
        at: m.created_at,
        session_id: None,
        detail: None,
    }];
    let last = last_accessed.filter(|&t| t > m.created_at);
    let n = match last {
        Some(_) => recalls.clamp(1, A_RECALL_EVENTS_MAX),
        None => 0,
    };
    let Some(last) = last else { return events };
    let span = last - m.created_at;
    for i in 1..=n {
        events.push(EventRow {
            kind: "recall_hit".into(),
            weight: defaults.recall_hit_weight,
            at: m.created_at + span * i as i64 / n as i64,
            session_id: None,
            detail: (i == n).then(|| format!("seed A: recall_count {recalls}, last accessed")),
        });
    }
    events
}
