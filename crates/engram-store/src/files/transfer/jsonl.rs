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

/// Reads engram's JSONL export into a batch. A line that does not parse is a warning
/// naming its line number; a header of a newer format version is an error.
pub fn read_jsonl(input: &mut dyn BufRead) -> Result<Batch> {
    let mut batch = Batch::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut line_no = 0usize;
    for line in capped_lines(input) {
        let buf = line?;
        line_no += 1;
        let t = buf.trim();
        if t.is_empty() {
            continue;
        }
        let v: serde_json::Value = match serde_json::from_str(t) {
            Ok(v) => v,
            Err(e) => {
                batch
                    .warnings
                    .push(format!("line {line_no}: not JSON ({e}); skipped"));
                continue;
            }
        };
        let ty = v
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .to_string();
        let warn = |batch: &mut Batch, e: String| {
            batch
                .warnings
                .push(format!("line {line_no}: {ty}: {e}; skipped"));
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
                Err(e) => warn(&mut batch, e.to_string()),
            },
            "event" | "revision" | "evidence" => {
                let Some(i) = v
                    .get("memory")
                    .and_then(|m| m.as_str())
                    .and_then(|u| index.get(u))
                    .copied()
                else {
                    warn(&mut batch, "names no memory of this file".into());
                    continue;
                };
                if ty == "event" {
                    match serde_json::from_value::<EventRow>(v) {
                        Ok(e) => batch.memories[i].events.get_or_insert_default().push(e),
                        Err(e) => warn(&mut batch, e.to_string()),
                    }
                } else if ty == "evidence" {
                    match serde_json::from_value::<crate::evidence::Evidence>(v) {
                        Ok(e) => batch.memories[i].evidence.push(e),
                        Err(e) => warn(&mut batch, e.to_string()),
                    }
                } else {
                    match serde_json::from_value::<RevisionRow>(v) {
                        Ok(r) => batch.memories[i].revisions.push(r),
                        Err(e) => warn(&mut batch, e.to_string()),
                    }
                }
            }
            "link" => match serde_json::from_value::<LinkRow>(v) {
                Ok(l) => batch.links.push(l),
                Err(e) => warn(&mut batch, e.to_string()),
            },
            "session" => match serde_json::from_value::<SessionRow>(v) {
                Ok(s) => batch.sessions.push(s),
                Err(e) => warn(&mut batch, e.to_string()),
            },
            "prompt" => match serde_json::from_value::<PromptRow>(v) {
                Ok(p) => batch.prompts.push(p),
                Err(e) => warn(&mut batch, e.to_string()),
            },
            "judgment" => match serde_json::from_value::<JudgmentRow>(v) {
                Ok(j) => batch.judgments.push(j),
                Err(e) => warn(&mut batch, e.to_string()),
            },
            other => batch
                .warnings
                .push(format!("line {line_no}: unknown type {other:?}; skipped")),
        }
    }
    Ok(batch)
}
