//! Streaming the importers' sources: each format hands its records to the store a chunk
//! at a time ([`crate::Store::import_stream`]), so memory holds one chunk and the small
//! maps a format needs to connect later records to earlier ones (names and sync ids to
//! uids), never the whole file.

use super::*;
use crate::files::transfer::{CHUNK_MEMORIES, Chunk, Counted, Sink};

/// The rows of a batch, whatever their kind: a chunk is full at [`CHUNK_MEMORIES`] rows,
/// so a file of nothing but prompts streams as well as one of memories.
pub(super) fn rows(b: &Batch) -> usize {
    b.memories.len() + b.links.len() + b.sessions.len() + b.prompts.len() + b.judgments.len()
}

/// The batch read so far as a chunk for the sink (leaving the batch empty); `done` on the
/// last one.
pub(super) fn chunk_of(batch: &mut Batch, done: bool) -> Chunk {
    Chunk {
        batch: std::mem::take(batch),
        late: Vec::new(),
        done,
    }
}

/// A format of one JSON record per line.
pub(super) trait LineFormat {
    /// One line (trimmed, not empty), numbered from 1, into the batch.
    fn line(&mut self, batch: &mut Batch, line_no: usize, text: &str);
    /// What waits for the end of the file (records naming ones that came later).
    fn finish(&mut self, _batch: &mut Batch) {}
}

/// An opened file with its length, counting what is read of it for the progress.
pub(super) struct Opened {
    pub file: Counted<std::fs::File>,
    pub read: std::rc::Rc<std::cell::Cell<u64>>,
    pub len: u64,
}

pub(super) fn open_counted(path: &Path) -> Result<Opened> {
    let f = open(path)?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let read = std::rc::Rc::new(std::cell::Cell::new(0));
    Ok(Opened {
        file: Counted {
            inner: f,
            read: read.clone(),
        },
        read,
        len,
    })
}

/// Reads `path` line by line, each line capped ([`engram_core::limits::MAX_IMPORT_LINE_BYTES`],
/// named in the error), handing the sink a chunk every [`CHUNK_MEMORIES`] rows.
pub(super) fn feed_lines(
    path: &Path,
    format: &mut dyn LineFormat,
    sink: &mut Sink<'_>,
) -> Result<()> {
    let Opened { file, read, len } = open_counted(path)?;
    let mut input = std::io::BufReader::with_capacity(1 << 16, file);
    let mut batch = Batch::default();
    for (i, line) in crate::files::transfer::capped_lines(&mut input).enumerate() {
        let line = line?;
        let t = line.trim();
        if !t.is_empty() {
            format.line(&mut batch, i + 1, t);
        }
        if rows(&batch) >= CHUNK_MEMORIES {
            sink(chunk_of(&mut batch, false), (read.get(), len))?;
        }
    }
    format.finish(&mut batch);
    sink(chunk_of(&mut batch, true), (read.get(), len))
}

/// Runs a feed into one batch: the whole source in memory, for callers that hold it whole
/// anyway (a request body) or want to look at it before storing.
pub(super) fn collect(feed: impl FnOnce(&mut Sink<'_>) -> Result<()>) -> Result<Batch> {
    let mut all = Batch::default();
    feed(&mut |chunk: Chunk, _| {
        let mut b = chunk.batch;
        for w in std::mem::take(&mut b.warnings) {
            all.warn(w);
        }
        all.warnings_omitted += b.warnings_omitted;
        all.memories.append(&mut b.memories);
        all.links.append(&mut b.links);
        all.sessions.append(&mut b.sessions);
        all.prompts.append(&mut b.prompts);
        all.judgments.append(&mut b.judgments);
        Ok(())
    })?;
    Ok(all)
}
