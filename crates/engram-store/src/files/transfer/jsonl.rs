//! Reading engram's JSONL export back into a [`Batch`], line by line with a cap on each
//! line (an endless line fails instead of filling memory); shared with importers of other
//! line formats (`capped_lines`).

use super::*;

/// Reads one line of at most `cap` bytes into `buf` (without the newline), streaming: an
/// endless line (`/dev/zero`) fails at `cap` instead of filling memory. Returns false at the
/// end of input. `line_no` is the line being read, for the error.
fn read_capped_line(
    input: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
    line_no: usize,
) -> Result<bool> {
    buf.clear();
    let io = |source| Error::Io {
        path: "import".into(),
        source,
    };
    loop {
        let chunk = input.fill_buf().map_err(io)?;
        if chunk.is_empty() {
            return Ok(!buf.is_empty());
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > cap {
            return Err(InputError::new(
                "file",
                format!(
                    "line {line_no} is longer than the import limit of {cap} bytes per line (one record per line); nothing was imported"
                ),
            )
            .into());
        }
        buf.extend_from_slice(&chunk[..take]);
        input.consume(take + usize::from(done));
        if done {
            return Ok(true);
        }
    }
}

/// The lines of a JSON-lines input, each capped at [`limits::MAX_IMPORT_LINE_BYTES`]; a line
/// that is not UTF-8 comes back as an empty string after a warning-free lossy decode.
pub(crate) fn capped_lines(input: &mut dyn BufRead) -> impl Iterator<Item = Result<String>> + '_ {
    let mut line_no = 0usize;
    let mut buf = Vec::new();
    std::iter::from_fn(move || {
        line_no += 1;
        match read_capped_line(input, &mut buf, limits::MAX_IMPORT_LINE_BYTES, line_no) {
            Ok(true) => Some(Ok(String::from_utf8_lossy(&buf).into_owned())),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    })
}

/// A history row whose memory is not in the chunk it came with: a memory of an earlier
/// chunk (the export writes every memory before the first event), or of no chunk at all.
#[derive(Debug, Clone)]
pub(crate) enum Late {
    Event(EventRow),
    Revision(RevisionRow),
    Evidence(crate::evidence::Evidence),
}

/// One chunk of a JSONL export: at most the asked number of memories with the history,
/// links, sessions, prompts and judgments read with them, and the history rows that name
/// a memory outside the chunk (by uid, with the line for a warning).
#[derive(Debug, Default)]
pub(crate) struct Chunk {
    pub batch: Batch,
    pub late: Vec<(String, usize, Late)>,
    /// Whether the input is at its end.
    pub done: bool,
}

/// Reads engram's JSONL export in chunks, so an import holds one chunk at a time, never the
/// whole file (`Store::import_jsonl`).
pub(crate) struct ChunkReader<'a> {
    input: &'a mut dyn BufRead,
    buf: Vec<u8>,
    line_no: usize,
    /// The memory line that ended the last chunk, with its number: the next one's first.
    carry: Option<(usize, String)>,
}

impl<'a> ChunkReader<'a> {
    pub fn new(input: &'a mut dyn BufRead) -> Self {
        ChunkReader {
            input,
            buf: Vec::new(),
            line_no: 0,
            carry: None,
        }
    }

    /// The next chunk of at most `max_memories` memories (and the lines after the last of
    /// them up to the next memory line).
    pub fn next_chunk(&mut self, max_memories: usize) -> Result<Chunk> {
        let mut chunk = Chunk::default();
        let mut index: HashMap<String, usize> = HashMap::new();
        if let Some((line_no, text)) = self.carry.take() {
            parse_line(&mut chunk, &mut index, line_no, &text)?;
        }
        loop {
            self.line_no += 1;
            let more = read_capped_line(
                self.input,
                &mut self.buf,
                limits::MAX_IMPORT_LINE_BYTES,
                self.line_no,
            )?;
            if !more {
                chunk.done = true;
                return Ok(chunk);
            }
            let text = String::from_utf8_lossy(&self.buf);
            let text = text.trim();
            // A full chunk ends before its next memory, which starts the next chunk.
            if chunk.batch.memories.len() >= max_memories && is_memory_line(text) {
                self.carry = Some((self.line_no, text.to_string()));
                return Ok(chunk);
            }
            parse_line(&mut chunk, &mut index, self.line_no, text)?;
        }
    }
}

/// Whether a line is a memory's (its `type`), without reading the rest of it into values.
fn is_memory_line(text: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Type<'a> {
        #[serde(borrow, rename = "type")]
        ty: Option<&'a str>,
    }
    serde_json::from_str::<Type<'_>>(text).is_ok_and(|t| t.ty == Some("memory"))
}

/// Reads engram's JSONL export into one batch (the whole file). A line that does not parse
/// is a warning naming its line number; a header of a newer format version is an error.
pub fn read_jsonl(input: &mut dyn BufRead) -> Result<Batch> {
    let mut chunk = ChunkReader::new(input).next_chunk(usize::MAX)?;
    for (_, line_no, late) in std::mem::take(&mut chunk.late) {
        let ty = match late {
            Late::Event(_) => "event",
            Late::Revision(_) => "revision",
            Late::Evidence(_) => "evidence",
        };
        chunk.batch.warn(format!(
            "line {line_no}: {ty}: names no memory of this file; skipped"
        ));
    }
    Ok(chunk.batch)
}

/// One line of the export into the chunk.
fn parse_line(
    chunk: &mut Chunk,
    index: &mut HashMap<String, usize>,
    line_no: usize,
    t: &str,
) -> Result<()> {
    let batch = &mut chunk.batch;
    if t.is_empty() {
        return Ok(());
    }
    let v: serde_json::Value = match serde_json::from_str(t) {
        Ok(v) => v,
        Err(e) => {
            batch.warn(format!("line {line_no}: not JSON ({e}); skipped"));
            return Ok(());
        }
    };
    let ty = v
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("")
        .to_string();
    let warn = |batch: &mut Batch, e: String| {
        batch.warn(format!("line {line_no}: {ty}: {e}; skipped"));
    };
    match ty.as_str() {
        "header" => {
            let version = v.get("version").and_then(|x| x.as_i64()).unwrap_or(0);
            if version > EXPORT_FORMAT_VERSION {
                return Err(InputError::new(
                    "file",
                    format!(
                        "export format version {version} is newer than this engram reads ({EXPORT_FORMAT_VERSION}); upgrade engram"
                    ),
                )
                .into());
            }
        }
        "memory" => match serde_json::from_value::<Memory>(v.clone()) {
            Ok(m) => {
                let review_after = v
                    .get("review_after")
                    .and_then(|r| r.as_str())
                    .and_then(engram_core::time::parse);
                index.insert(m.uid.clone(), batch.memories.len());
                batch.memories.push(ImportedMemory {
                    memory: m,
                    review_after,
                    events: Some(Vec::new()),
                    revisions: Vec::new(),
                    evidence: Vec::new(),
                    keep_id: true,
                });
            }
            Err(e) => warn(batch, e.to_string()),
        },
        "event" | "revision" | "evidence" => {
            let uid = v.get("memory").and_then(|m| m.as_str()).map(str::to_string);
            let row = match ty.as_str() {
                "event" => serde_json::from_value::<EventRow>(v).map(Late::Event),
                "evidence" => {
                    serde_json::from_value::<crate::evidence::Evidence>(v).map(Late::Evidence)
                }
                _ => serde_json::from_value::<RevisionRow>(v).map(Late::Revision),
            };
            let (uid, row) = match (uid, row) {
                (Some(uid), Ok(row)) => (uid, row),
                (None, _) => {
                    warn(batch, "names no memory".into());
                    return Ok(());
                }
                (_, Err(e)) => {
                    warn(batch, e.to_string());
                    return Ok(());
                }
            };
            let Some(&i) = index.get(&uid) else {
                chunk.late.push((uid, line_no, row));
                return Ok(());
            };
            let m = &mut batch.memories[i];
            match row {
                Late::Event(e) => m.events.get_or_insert_default().push(e),
                Late::Evidence(e) => m.evidence.push(e),
                Late::Revision(r) => m.revisions.push(r),
            }
        }
        "link" => match serde_json::from_value::<LinkRow>(v) {
            Ok(l) => batch.links.push(l),
            Err(e) => warn(batch, e.to_string()),
        },
        "session" => match serde_json::from_value::<SessionRow>(v) {
            Ok(s) => batch.sessions.push(s),
            Err(e) => warn(batch, e.to_string()),
        },
        "prompt" => match serde_json::from_value::<PromptRow>(v) {
            Ok(p) => batch.prompts.push(p),
            Err(e) => warn(batch, e.to_string()),
        },
        "judgment" => match serde_json::from_value::<JudgmentRow>(v) {
            Ok(j) => batch.judgments.push(j),
            Err(e) => warn(batch, e.to_string()),
        },
        other => batch.warn(format!("line {line_no}: unknown type {other:?}; skipped")),
    }
    Ok(())
}
