//! Seed B's `index.db` (SQLite, in B's `data_dir` beside its Markdown folder): the usage
//! history and the links B keeps only there. The Markdown files say what a memory is; the
//! index says how it was used (`access_events`: create, recall hits, reinforcements) and
//! how memories relate (`links`: `co_recall` strengthened by reinforcement, `superseded_by`
//! written by `correct`). Carried so a B user's activations continue where B left them and
//! a corrected memory keeps its successor. Only these two plain tables are read: the
//! `vec0` and FTS tables need B's extensions and hold nothing engram keeps.

use super::*;
use crate::files::transfer::EventRow;
use engram_core::EventKind;
use std::path::PathBuf;

/// B's usage events (by B's memory id, oldest first) and its links.
#[derive(Default)]
pub(super) struct BIndex {
    pub events: HashMap<String, Vec<EventRow>>,
    pub links: Vec<BLink>,
}

/// One row of B's `links`, by B's ids.
pub(super) struct BLink {
    pub src: String,
    pub dst: String,
    pub kind: String,
    pub weight: f64,
}

/// B's index for the Markdown folder `dir`: in the folder, in its parent (B's default
/// layout: `~/.engram/index.db` beside `~/.engram/memories`), or in `home` (B's
/// `data_dir`, engram's home, when B's `memories_dir` pointed elsewhere: an Obsidian or
/// synced folder).
pub(super) fn find_index(dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    [Some(dir), dir.parent(), home]
        .into_iter()
        .flatten()
        .map(|d| d.join("index.db"))
        .find(|p| p.is_file())
}

/// B's index for a vault read in place (B's `memories_dir` as engram's vault, its
/// `index.db` beside it): each memory's usage history by B's id, and B's links by B's ids
/// (engram's kinds; times left 0 for the reader to date). The start-of-process scan gives
/// them to the memories it reads in from B's files, so activation continues where B left
/// it and a corrected memory keeps its successor (before, only `engram import --from b`
/// carried them, and once the scan had read the files that import created nothing, so
/// the history was lost). Empty when no index is found; what cannot be read of the index
/// is in `warnings`, for the reader's report.
#[derive(Default)]
pub(crate) struct VaultHistory {
    pub events: HashMap<String, Vec<EventRow>>,
    pub links: Vec<LinkRow>,
    /// The index read, and what could not be carried from it, for the reader's report.
    pub index: Option<PathBuf>,
    pub warnings: Vec<String>,
}

pub(crate) fn vault_history(root: &Path, home: &Path) -> VaultHistory {
    let Some(path) = find_index(root, Some(home)) else {
        return VaultHistory::default();
    };
    let mut batch = Batch::default();
    let index = read_index(&path, &mut batch).unwrap_or_else(|e| {
        batch.warn(format!("unreadable ({e}); usage history not carried"));
        BIndex::default()
    });
    let mut known = HashMap::new();
    for l in index.links {
        add_link(l, &HashMap::new(), &mut known, &mut batch);
    }
    VaultHistory {
        events: index.events,
        links: batch.links,
        index: Some(path),
        warnings: batch.warnings,
    }
}

/// Reads B's two tables. A file that is not B's index (no `access_events` table) is a
/// warning, never an error: the Markdown folder still imports.
pub(super) fn read_index(path: &Path, batch: &mut Batch) -> Result<BIndex> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let mut index = BIndex::default();
    match read_events(&conn, &mut index, batch) {
        Ok(()) => {}
        Err(e) => {
            batch.warn(format!(
                "{}: not seed B's index ({e}); usage history not carried",
                path.display()
            ));
            return Ok(BIndex::default());
        }
    }
    if let Err(e) = read_links(&conn, &mut index) {
        batch.warn(format!(
            "{}: links unreadable ({e}); not carried",
            path.display()
        ));
    }
    Ok(index)
}

fn read_events(
    conn: &rusqlite::Connection,
    index: &mut BIndex,
    batch: &mut Batch,
) -> rusqlite::Result<()> {
    let mut stmt =
        conn.prepare("SELECT memory_id, ts, kind, weight FROM access_events ORDER BY ts, id")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, f64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<f64>>(3)?,
        ))
    })?;
    for row in rows {
        let (id, ts, kind, weight) = row?;
        let weight = weight.unwrap_or(1.0);
        if EventKind::parse(&kind).is_none() || !ts.is_finite() || !weight.is_finite() {
            batch.warn(format!(
                "index.db: event {kind:?} at {ts} (weight {weight}) of {id}: not a kind or time engram keeps; skipped"
            ));
            continue;
        }
        index
            .events
            .entry(id.trim().to_ascii_uppercase())
            .or_default()
            .push(EventRow {
                kind,
                weight: weight.max(0.0),
                at: (ts * 1000.0).round() as Millis,
                session_id: None,
                detail: None,
            });
    }
    Ok(())
}

fn read_links(conn: &rusqlite::Connection, index: &mut BIndex) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare("SELECT src, dst, kind, weight FROM links")?;
    let rows = stmt.query_map([], |r| {
        Ok(BLink {
            src: r.get::<_, String>(0)?.trim().to_ascii_uppercase(),
            dst: r.get::<_, String>(1)?.trim().to_ascii_uppercase(),
            kind: r.get(2)?,
            weight: r.get::<_, Option<f64>>(3)?.unwrap_or(1.0),
        })
    })?;
    for l in rows {
        index.links.push(l?);
    }
    Ok(())
}

/// Carries the index into the batch read from B's files: each memory's events replace
/// the seeded history (a `create` added at its creation when B recorded none), and each
/// link becomes engram's (`superseded_by` old→new is engram's `supersedes` new→old). A
/// link the files listed too keeps B's weight from the index.
/// A memory's B events with a `create` at its creation first when B recorded none (B's
/// index may start a memory's history at its first recall).
pub(crate) fn with_create(
    mut events: Vec<EventRow>,
    m: &engram_core::Memory,
    actr: &engram_core::dynamics::ActrParams,
) -> Vec<EventRow> {
    if !events.iter().any(|e| e.kind == EventKind::Create.as_str()) {
        events.insert(
            0,
            EventRow {
                kind: EventKind::Create.as_str().into(),
                weight: engram_core::dynamics::create_weight(m.importance, actr),
                at: m.created_at,
                session_id: None,
                detail: None,
            },
        );
    }
    events
}

pub(super) fn apply(index: BIndex, batch: &mut Batch) {
    let mut events = index.events;
    let mut created: HashMap<String, Millis> = HashMap::new();
    for im in &mut batch.memories {
        let m = &im.memory;
        created.insert(m.uid.clone(), m.created_at);
        let Some(evs) = events.remove(&m.uid) else {
            continue;
        };
        let p = engram_core::dynamics::ActrParams::default();
        im.events = Some(with_create(evs, m, &p));
    }
    let orphans: usize = events.values().map(Vec::len).sum();
    if orphans > 0 {
        batch.warn(format!(
            "index.db: {orphans} events of {} memories with no Markdown file; skipped",
            events.len()
        ));
    }
    let mut known: HashMap<(String, String, LinkKind), usize> = batch
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| ((l.src.clone(), l.dst.clone(), l.kind), i))
        .collect();
    for l in index.links {
        add_link(l, &created, &mut known, batch);
    }
}

fn add_link(
    l: BLink,
    created: &HashMap<String, Millis>,
    known: &mut HashMap<(String, String, LinkKind), usize>,
    batch: &mut Batch,
) {
    let (kind, src, dst) = match l.kind.trim() {
        "superseded_by" => (LinkKind::Supersedes, l.dst, l.src),
        raw => match LinkKind::parse(raw) {
            Ok(k) => (k, l.src, l.dst),
            Err(e) => {
                batch.warn(format!(
                    "index.db: link {} -> {}: {e}; skipped",
                    l.src, l.dst
                ));
                return;
            }
        },
    };
    let at = match (created.get(&src), created.get(&dst)) {
        (Some(a), Some(b)) => *a.max(b),
        (Some(a), None) | (None, Some(a)) => *a,
        (None, None) => 0,
    };
    let weight = if l.weight.is_finite() { l.weight } else { 1.0 };
    if let Some(&i) = known.get(&(src.clone(), dst.clone(), kind)) {
        batch.links[i].weight = weight;
        return;
    }
    known.insert((src.clone(), dst.clone(), kind), batch.links.len());
    batch.links.push(LinkRow {
        src,
        dst,
        kind,
        weight,
        created_at: at,
        updated_at: at,
        note: None,
    });
}
