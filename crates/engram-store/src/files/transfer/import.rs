//! A [`Batch`] stored: every memory with its history, then the rows that name memories by
//! uid (links, judgments) and the session rows, in one write transaction of the storage
//! interface, each skipped when it is already there.
//!
//! The transaction may run more than once ([`crate::storage::Backend::write`]), so the
//! report is built afresh inside it and leaves only with the committed run.

use super::jsonl::{Chunk, ChunkReader, Late};
use super::*;
use std::collections::HashSet;

impl Store {
    /// Stores everything in `batch` in one transaction, skipping what is already there.
    /// `progress(done, total)` is called as memories are stored.
    pub fn import_batch(
        &mut self,
        mut batch: Batch,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ImportReport> {
        // Over-limit content from a source is stored in parts, never refused or cut.
        // Redact the whole text first, then split: a secret cut across two parts (or a
        // copy of one in a later part) would pass each part's redaction.
        super::redact_records(&mut batch);
        crate::parts::split_long_imports(&mut batch);
        let actr = self.config.actr;
        let now = self.now();
        let read = Batch {
            warnings: std::mem::take(&mut batch.warnings),
            warnings_omitted: std::mem::take(&mut batch.warnings_omitted),
            ..Default::default()
        };
        let batch = batch;
        self.write(|tx| {
            let mut report = ImportReport::default();
            report.take_warnings(&mut read.clone());
            let total = batch.memories.len() as u64;
            for (i, im) in batch.memories.iter().enumerate() {
                if i % 64 == 0 {
                    progress(i as u64, total);
                }
                import_memory(tx, im, now, &actr, &mut report)?;
            }
            progress(total, total);
            import_links(tx, &batch.links, &mut report)?;
            import_sessions(tx, &batch.sessions, &mut report)?;
            import_prompts(tx, &batch.prompts, &mut report)?;
            import_judgments(tx, &batch.judgments, &mut report)?;
            Ok(report)
        })
    }
}

/// Memories (or other records) read and applied per chunk of a streamed import.
pub(crate) const CHUNK_MEMORIES: usize = 1000;

/// A reader that counts the bytes read through it, for an import's progress.
pub(crate) struct Counted<R> {
    pub inner: R,
    pub read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: std::io::Read> std::io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

/// The receiver of a streamed import's chunks, with the import's progress after each one
/// (bytes or rows read, and the total).
pub(crate) type Sink<'s> = dyn FnMut(Chunk, (u64, u64)) -> Result<()> + 's;

/// A streamed import's source: reads it from its start and hands each chunk to the sink.
/// It may be called more than once (the backend may run the transaction again).
pub(crate) type Feed<'f> = dyn FnMut(&mut Sink<'_>) -> Result<()> + 'f;

impl Store {
    /// Imports engram's JSONL export streamed: read and applied a chunk of
    /// [`CHUNK_MEMORIES`] memories at a time, so memory holds one chunk (and the ids of
    /// the memories created), never the whole file; still one transaction, so an import
    /// is all or nothing. History rows after their memory's chunk (the export writes every
    /// memory first) are stored when this import created the memory; links and judgments
    /// whose memories come later in the file wait for the end. `open` gives the input from
    /// its start, with its length in bytes (the backend may run the transaction again);
    /// `room` puts every memory, session and prompt there; `progress(bytes read, length)`.
    pub fn import_jsonl(
        &mut self,
        open: &mut dyn FnMut() -> Result<(Box<dyn std::io::Read>, u64)>,
        room: Option<&str>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ImportReport> {
        let mut feed = |sink: &mut Sink<'_>| -> Result<()> {
            let (input, total) = open()?;
            let read = std::rc::Rc::new(std::cell::Cell::new(0));
            let counted = Counted {
                inner: input,
                read: read.clone(),
            };
            let mut input = std::io::BufReader::with_capacity(1 << 16, counted);
            let mut chunks = ChunkReader::new(&mut input);
            loop {
                let chunk = chunks.next_chunk(CHUNK_MEMORIES)?;
                let done = chunk.done;
                sink(chunk, (read.get(), total))?;
                if done {
                    return Ok(());
                }
            }
        };
        self.import_stream(&mut feed, room, progress)
    }

    /// Stores what `feed` reads, a chunk at a time, in one transaction (all or nothing):
    /// each chunk is redacted and split like [`Store::import_batch`]'s whole batch, its
    /// memories stored first; history rows naming a memory of an earlier chunk are stored
    /// when this import created it, and links and judgments whose memories are not stored
    /// yet wait for the end.
    pub(crate) fn import_stream(
        &mut self,
        feed: &mut Feed<'_>,
        room: Option<&str>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ImportReport> {
        let room = room.map(engram_core::room::normalize_room).transpose()?;
        let actr = self.config.actr;
        let now = self.now();
        self.write(|tx| {
            let mut report = ImportReport::default();
            let mut created: HashSet<MemoryId> = HashSet::new();
            let mut waiting = (Vec::new(), Vec::new());
            // Later parts of long texts wait for the end: the source's ids of every chunk
            // are taken first (see `parts::split_long_imports`).
            let mut parts = Vec::new();
            let mut sink = |mut chunk: Chunk, at: (u64, u64)| -> Result<()> {
                super::redact_records(&mut chunk.batch);
                crate::parts::split_long_imports(&mut chunk.batch);
                if let Some(r) = &room {
                    crate::importers::put_in_room(&mut chunk.batch, r);
                }
                report.take_warnings(&mut chunk.batch);
                let (later, whole): (Vec<_>, Vec<_>) = std::mem::take(&mut chunk.batch.memories)
                    .into_iter()
                    .partition(|im| crate::parts::is_later_part(&im.memory));
                parts.extend(later);
                for im in &whole {
                    created.extend(import_memory(tx, im, now, &actr, &mut report)?);
                }
                import_late(tx, std::mem::take(&mut chunk.late), &created, &mut report)?;
                let b = chunk.batch;
                let (links, later) = resolvable(tx, b.links, |l| (&l.src, &l.dst))?;
                waiting.0.extend(later);
                import_links(tx, &links, &mut report)?;
                let (judgments, later) = resolvable(tx, b.judgments, |j| (&j.src, &j.dst))?;
                waiting.1.extend(later);
                import_judgments(tx, &judgments, &mut report)?;
                import_sessions(tx, &b.sessions, &mut report)?;
                import_prompts(tx, &b.prompts, &mut report)?;
                progress(at.0, at.1);
                Ok(())
            };
            feed(&mut sink)?;
            for im in &parts {
                created.extend(import_memory(tx, im, now, &actr, &mut report)?);
            }
            import_links(tx, &waiting.0, &mut report)?;
            import_judgments(tx, &waiting.1, &mut report)?;
            Ok(report)
        })
    }
}

/// Splits rows naming two memories by uid into those whose memories are both stored now
/// and those to try again at the end of the import.
fn resolvable<T>(
    tx: &dyn Tx,
    rows: Vec<T>,
    ends: impl Fn(&T) -> (&String, &String),
) -> Result<(Vec<T>, Vec<T>)> {
    let mut now = Vec::new();
    let mut later = Vec::new();
    for r in rows {
        let (a, b) = ends(&r);
        if id_of(tx, a)?.is_some() && id_of(tx, b)?.is_some() {
            now.push(r);
        } else {
            later.push(r);
        }
    }
    Ok((now, later))
}

/// One memory and its events, revisions and evidence; all skipped when its uid exists.
/// Returns the id of the memory when this import created it.
fn import_memory(
    tx: &mut dyn Tx,
    im: &ImportedMemory,
    now: Millis,
    actr: &ActrParams,
    report: &mut ImportReport,
) -> Result<Option<MemoryId>> {
    let label = &im.memory.uid;
    match insert_memory(
        tx,
        &im.memory,
        im.review_after,
        im.keep_id,
        im.events.is_none().then_some(now),
        actr,
    ) {
        Ok(Some(memory_id)) => {
            let history = im
                .events
                .iter()
                .flatten()
                .cloned()
                .map(Late::Event)
                .chain(im.revisions.iter().cloned().map(Late::Revision))
                .chain(im.evidence.iter().cloned().map(Late::Evidence));
            report.created("memories");
            let mut rows = Vec::new();
            for h in history {
                rows.extend(history_row(memory_id, h, label, report));
            }
            tx.insert_rows(&rows)?;
            Ok(Some(memory_id))
        }
        Ok(None) => {
            report.skipped("memories");
            let n = im.events.as_ref().map_or(0, Vec::len);
            if n > 0 {
                *report.skipped.entry("events").or_default() += n;
            }
            if !im.evidence.is_empty() {
                *report.skipped.entry("evidence").or_default() += im.evidence.len();
            }
            if !im.revisions.is_empty() {
                *report.skipped.entry("revisions").or_default() += im.revisions.len();
            }
            Ok(None)
        }
        Err(Error::Input(e)) => {
            report.skipped("memories");
            report.warn(format!("memory {label}: {e}"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The record type a history row counts under.
fn history_kind(h: &Late) -> &'static str {
    match h {
        Late::Event(_) => "events",
        Late::Revision(_) => "revisions",
        Late::Evidence(_) => "evidence",
    }
}

/// One history row of a memory this import created, counted; `None` (with a warning) for
/// an event of a kind this engram does not know.
fn history_row(
    memory_id: MemoryId,
    h: Late,
    label: &str,
    report: &mut ImportReport,
) -> Option<StoredRow> {
    if let Late::Event(e) = &h
        && EventKind::parse(&e.kind).is_none()
    {
        report.warn(format!("memory {label}: unknown event kind {:?}", e.kind));
        return None;
    }
    report.created(history_kind(&h));
    Some(match h {
        Late::Event(row) => StoredRow::Event { memory_id, row },
        // Redacted on the way in like every write.
        Late::Revision(r) => StoredRow::Revision {
            memory_id,
            row: RevisionRow {
                content: redact::redact(&r.content).0,
                title: r.title.as_deref().map(|t| redact::redact(t).0),
                ..r
            },
        },
        Late::Evidence(row) => StoredRow::Evidence { memory_id, row },
    })
}

/// History rows read after their memory's chunk: stored when this import created the
/// memory, skipped when the store had it (its history is kept as it is), a warning when no
/// memory has the uid.
fn import_late(
    tx: &mut dyn Tx,
    late: Vec<(String, usize, Late)>,
    created: &HashSet<MemoryId>,
    report: &mut ImportReport,
) -> Result<()> {
    let mut rows = Vec::new();
    for (uid, line, h) in late {
        match id_of(tx, &uid)? {
            Some(id) if created.contains(&id) => rows.extend(history_row(id, h, &uid, report)),
            Some(_) => report.skipped(history_kind(&h)),
            None => report.warn(format!(
                "line {line}: {}: names no memory of this file; skipped",
                history_kind(&h)
            )),
        }
    }
    tx.insert_rows(&rows)?;
    Ok(())
}

/// Counts each row of `rows` as created or skipped by what [`Tx::insert_rows`] says.
fn insert_counted(
    tx: &mut dyn Tx,
    rows: &[StoredRow],
    what: &'static str,
    report: &mut ImportReport,
) -> Result<()> {
    for stored in tx.insert_rows(rows)? {
        if stored {
            report.created(what);
        } else {
            report.skipped(what);
        }
    }
    Ok(())
}

fn import_links(tx: &mut dyn Tx, links: &[LinkRow], report: &mut ImportReport) -> Result<()> {
    let mut rows = Vec::with_capacity(links.len());
    for l in links {
        let (Some(src), Some(dst)) = (id_of(tx, &l.src)?, id_of(tx, &l.dst)?) else {
            report.skipped("links");
            report.warn(format!(
                "link {} -> {}: a memory it names is not in the store",
                l.src, l.dst
            ));
            continue;
        };
        if src == dst {
            report.skipped("links");
            continue;
        }
        rows.push(StoredRow::Link(LinkRow {
            src,
            dst,
            kind: l.kind,
            weight: l.weight.clamp(0.0, 1.0),
            created_at: l.created_at,
            updated_at: l.updated_at,
            note: l.note.clone(),
        }));
    }
    insert_counted(tx, &rows, "links", report)
}

fn import_sessions(
    tx: &mut dyn Tx,
    sessions: &[SessionRow],
    report: &mut ImportReport,
) -> Result<()> {
    let rows: Vec<StoredRow> = sessions.iter().cloned().map(StoredRow::Session).collect();
    insert_counted(tx, &rows, "sessions", report)
}

/// Prompts have no uid: one with the same session, time and text is the same prompt.
fn import_prompts(tx: &mut dyn Tx, prompts: &[PromptRow], report: &mut ImportReport) -> Result<()> {
    let rows: Vec<StoredRow> = prompts
        .iter()
        .map(|p| {
            StoredRow::Prompt(PromptRow {
                content: redact::redact(&p.content).0,
                ..p.clone()
            })
        })
        .collect();
    insert_counted(tx, &rows, "prompts", report)
}

fn import_judgments(
    tx: &mut dyn Tx,
    judgments: &[JudgmentRow],
    report: &mut ImportReport,
) -> Result<()> {
    let mut rows = Vec::with_capacity(judgments.len());
    for j in judgments {
        let (Some(src), Some(dst)) = (id_of(tx, &j.src)?, id_of(tx, &j.dst)?) else {
            report.skipped("judgments");
            continue;
        };
        rows.push(StoredRow::Judgment(JudgmentRow {
            src,
            dst,
            uid: j.uid.clone(),
            relation: j.relation.clone(),
            status: j.status.clone(),
            score: j.score,
            reason: j.reason.clone(),
            evidence: j.evidence.clone(),
            confidence: j.confidence,
            actor: j.actor.clone(),
            actor_kind: j.actor_kind.clone(),
            model: j.model.clone(),
            session_id: j.session_id.clone(),
            created_at: j.created_at,
            updated_at: j.updated_at,
        }));
    }
    insert_counted(tx, &rows, "judgments", report)
}
