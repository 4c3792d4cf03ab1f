//! Readers for the seeds' data and the official MCP memory server's file. Each turns its
//! source into batches that the store keeps as they are (no resolution, original dates
//! kept), streamed a chunk at a time except seed B's folder ([`stream`]). Uids are derived from the source's own ids, so
//! importing the same source twice creates nothing the second time.
//!
//! - `b`: seed B's Markdown folder (the vault format engram's own vault extends).
//! - `c-db`: seed C's SQLite database (observations, sessions, prompts, relations).
//! - `c-json`: seed C's `engram export` JSON (`{version, sessions, observations, prompts}`).
//! - `mcp-memory`: the official MCP memory server's `memory.json` (JSONL of entities and
//!   relations).
//! - `a-jsonl`: seed A's DuckDB `memories` table written as JSON lines (`COPY memories TO
//!   'a.jsonl'` in the duckdb CLI); engram does not link DuckDB itself.

mod mcp_memory;
mod seed_a;
mod seed_b;
mod seed_b_index;
mod seed_c;
mod seed_c_json;
mod stream;

use crate::files::frontmatter;
use crate::files::transfer::{
    Batch, ImportReport, ImportedMemory, JudgmentRow, LinkRow, PromptRow, SessionRow, Sink,
    blank_memory, derived_uid,
};
use crate::files::vault::{self, parse_kind};
use crate::{Error, Result};
use engram_core::{Kind, LinkKind, Millis, Tier, room, time};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::Path;

use mcp_memory::McpMemory;
use seed_b::read_b;
pub(crate) use seed_b_index::{
    VaultHistory as SeedBHistory, vault_history as seed_b_history,
    with_create as seed_b_with_create,
};
pub(crate) use seed_c::read_c_tables;
pub use seed_c::read_c_value;

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

impl Source {
    /// The `--from` name of the source.
    pub fn name(self) -> &'static str {
        match self {
            Source::Engram => "engram",
            Source::B => "b",
            Source::CDb => "c-db",
            Source::CJson => "c-json",
            Source::McpMemory => "mcp-memory",
            Source::AJsonl => "a-jsonl",
        }
    }

    /// The source a file is, read from its first bytes, for an import that names none: a
    /// folder is B's, a SQLite file C's database, a JSON object with C's `observations`
    /// or `sessions` C's export, one with `entities` (or a first line with `entityType` or
    /// `relationType`) the MCP memory server's, JSON lines with A's `recall_count` and `category`
    /// columns A's table, anything else engram's JSONL (its header line says `engram-export`).
    pub fn sniff(path: &Path) -> Source {
        use std::io::Read;
        if path.is_dir() {
            return Source::B;
        }
        // The first line whole (A's rows carry a 768-float embedding before their other
        // columns: about 8 KB), up to 1 MiB.
        let mut head = Vec::with_capacity(16 * 1024);
        if let Ok(f) = std::fs::File::open(path) {
            let mut r = std::io::BufReader::new(f.take(1 << 20));
            let _ = std::io::BufRead::read_until(&mut r, b'\n', &mut head);
            if head.len() < 4096 {
                let _ = r.take(4096).read_to_end(&mut head);
            }
        }
        if head.starts_with(b"SQLite format 3\0") {
            return Source::CDb;
        }
        let text = String::from_utf8_lossy(&head);
        let first_line = text.lines().next().unwrap_or("");
        let has = |k: &str| text.contains(&format!("\"{k}\""));
        let first_has = |k: &str| first_line.contains(&format!("\"{k}\""));
        if first_line.contains("engram-export") {
            Source::Engram
        } else if text.trim_start().starts_with('{') && (has("observations") || has("sessions")) {
            Source::CJson
        } else if has("entities") || first_has("entityType") || first_has("relationType") {
            Source::McpMemory
        } else if first_has("recall_count") && first_has("category") {
            Source::AJsonl
        } else {
            Source::Engram
        }
    }
}

/// Reads `path` as `source` into one batch (the whole source in memory: `engram import`
/// streams instead, through [`crate::Store::import_file`]). `room` puts everything in one
/// room (sources without rooms otherwise land in `common`); `now` dates what the source
/// leaves undated.
pub fn read(source: Source, path: &Path, room: Option<&str>, now: Millis) -> Result<Batch> {
    read_in(source, path, room, now, None)
}

/// [`read`], with the store's home where seed B's `index.db` may sit.
fn read_in(
    source: Source,
    path: &Path,
    room: Option<&str>,
    now: Millis,
    home: Option<&Path>,
) -> Result<Batch> {
    let room = room.map(room::normalize_room).transpose()?;
    let mut batch = match source {
        Source::Engram => {
            let f = open(path)?;
            crate::files::transfer::read_jsonl(&mut std::io::BufReader::new(f))?
        }
        Source::B => read_b(path, home, now)?,
        _ => stream::collect(|sink| feed(source, path, now, sink))?,
    };
    if let Some(r) = room {
        put_in_room(&mut batch, &r);
    }
    Ok(batch)
}

/// A streamed source read into the sink from its start.
fn feed(source: Source, path: &Path, now: Millis, sink: &mut Sink<'_>) -> Result<()> {
    match source {
        Source::AJsonl => stream::feed_lines(
            path,
            &mut seed_a::AJsonl::new(now, Vec::new(), Default::default()),
            sink,
        ),
        Source::McpMemory => stream::feed_lines(path, &mut McpMemory::new(now), sink),
        Source::CJson => seed_c_json::feed_json(path, now, sink),
        Source::CDb => seed_c::feed_db(path, now, sink),
        Source::Engram | Source::B => unreachable!("{source:?} is not read by a feed"),
    }
}

impl crate::Store {
    /// `engram import`: `path` read as `source` and stored in one transaction, streamed
    /// (one chunk in memory at a time) for every source but seed B's folder, whose
    /// Markdown files are each capped instead. `progress(read, total)` in bytes, or in
    /// rows for C's database.
    pub fn import_file(
        &mut self,
        source: Source,
        path: &Path,
        room: Option<&str>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ImportReport> {
        let now = self.now();
        match source {
            Source::Engram => {
                let mut reopen = || -> Result<(Box<dyn std::io::Read>, u64)> {
                    let f = open(path)?;
                    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                    Ok((Box::new(f), len))
                };
                self.import_jsonl(&mut reopen, room, progress)
            }
            Source::B => {
                let home = crate::files::home::Home::of_db(&self.path).root;
                let batch = read_in(source, path, room, now, Some(&home))?;
                self.import_batch(batch, progress)
            }
            _ => self.import_stream(&mut |sink| feed(source, path, now, sink), room, progress),
        }
    }
}

impl crate::Store {
    /// `engram import --from a-jsonl FILE --graph graph.json`: seed A's table as
    /// [`Self::import_file`] imports it, then the edges of A's graph between its memories
    /// as links (A's `relation`, `semantic` when none; an unknown one as `related`, named
    /// in the link's note). The graph is read first: a file that is not A's fails before
    /// anything is stored. Importing again creates nothing.
    pub fn import_seed_a(
        &mut self,
        jsonl: &Path,
        a: SeedAFiles<'_>,
        room: Option<&str>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ImportReport> {
        let edges = match a.graph {
            Some(g) => seed_a::read_graph(g)?,
            None => Vec::new(),
        };
        let tasks = match a.tasks {
            Some(t) => seed_a::read_tasks(t, self.now())?,
            None => Default::default(),
        };
        let mut format = seed_a::AJsonl::new(self.now(), edges, tasks);
        let mut report = self.import_stream(
            &mut |sink| stream::feed_lines(jsonl, &mut format, sink),
            room,
            progress,
        )?;
        let (members, unknown) = format.task_members();
        self.bind_to_tasks(&members)?;
        if unknown > 0 {
            report.warnings.push(format!(
                "{unknown} memories name a task_id the tasks file does not hold; kept as they are"
            ));
        }
        if !report.nothing_readable() {
            let now = self.now().to_string();
            self.write(|tx| tx.set_meta(META_SEED_A_IMPORTED, &now))?;
        }
        Ok(report)
    }

    /// When seed A's memories were last imported into this store (`import --from
    /// a-jsonl`), so `doctor` and `setup` stop asking for an import that was done.
    pub fn seed_a_imported(&self) -> Result<Option<Millis>> {
        Ok(self
            .reads()
            .meta(META_SEED_A_IMPORTED)?
            .and_then(|v| v.parse().ok()))
    }
}

/// The `meta` key [`Store::seed_a_imported`] reads.
const META_SEED_A_IMPORTED: &str = "seed_a_imported";

/// Seed A's files beside its memories table: `graph.json` and the `tasks` table.
#[derive(Debug, Clone, Copy, Default)]
pub struct SeedAFiles<'a> {
    pub graph: Option<&'a Path>,
    pub tasks: Option<&'a Path>,
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
