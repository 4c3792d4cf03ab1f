//! engram's JSONL export: a header line, then every row of the store, one object per line
//! with a `type`, in a fixed order (memories first, so an import can resolve each later
//! line's uids), each section read in pages through the storage interface
//! ([`Reads::rows_after`]), so a store of any size streams in bounded memory.

use super::*;

/// Rows asked of the backend per page.
const PAGE: usize = 1000;

/// One export in progress: the output, what was written, and each memory's uid by id.
struct Exporter<'a> {
    reads: &'a dyn Reads,
    out: &'a mut dyn Write,
    report: ExportReport,
    uids: HashMap<MemoryId, String>,
}

fn io(source: std::io::Error) -> Error {
    Error::Io {
        path: "export".into(),
        source,
    }
}

impl Store {
    /// Writes the whole store as JSONL: a header line, then one object per line with a
    /// `type` (memory, revision, evidence, event, link, session, prompt, judgment).
    pub fn export_jsonl(&self, out: &mut dyn Write) -> Result<ExportReport> {
        let mut x = Exporter {
            reads: self.reads(),
            out,
            report: ExportReport::default(),
            uids: HashMap::new(),
        };
        x.line(
            serde_json::json!({
                "type": "header",
                "format": "engram-export",
                "version": EXPORT_FORMAT_VERSION,
                "schema": crate::SCHEMA_VERSION,
                "exported_at": engram_core::time::format(self.now()),
            }),
            "header",
        )?;
        for section in [
            Section::Memories,
            Section::Revisions,
            Section::Evidence,
            Section::Events,
            Section::Links,
            Section::Sessions,
            Section::Prompts,
            Section::Judgments,
        ] {
            x.section(section)?;
        }
        x.out.flush().map_err(io)?;
        Ok(x.report)
    }
}

impl Exporter<'_> {
    fn line(&mut self, v: serde_json::Value, what: &'static str) -> Result<()> {
        serde_json::to_writer(&mut *self.out, &v).map_err(|e| io(e.into()))?;
        self.out.write_all(b"\n").map_err(io)?;
        if what != "header" {
            *self.report.written.entry(what).or_default() += 1;
        }
        Ok(())
    }

    /// A memory's uid: from the memories already written, else from its row.
    fn uid(&self, id: MemoryId) -> Result<String> {
        match self.uids.get(&id) {
            Some(u) => Ok(u.clone()),
            None => self
                .reads
                .memory(&IdRef::Id(id))?
                .map(|m| m.uid)
                .ok_or_else(|| Error::not_found("memory", format!("#{id}"))),
        }
    }

    /// A row with its `type` and, for rows of one memory, that memory's uid.
    fn row(
        &mut self,
        row: &impl Serialize,
        kind: &str,
        memory: Option<MemoryId>,
        what: &'static str,
    ) -> Result<()> {
        let mut v = serde_json::to_value(row).expect("serialises");
        v["type"] = kind.into();
        if let Some(id) = memory {
            v["memory"] = self.uid(id)?.into();
        }
        self.line(v, what)
    }

    /// Every row of one section, page by page.
    fn section(&mut self, section: Section) -> Result<()> {
        let mut after: Option<RowKey> = None;
        loop {
            let page = self.reads.rows_after(section, after.as_ref(), PAGE)?;
            for row in page.rows {
                self.stored(row)?;
            }
            match page.next {
                Some(k) => after = Some(k),
                None => return Ok(()),
            }
        }
    }

    fn stored(&mut self, row: StoredRow) -> Result<()> {
        match row {
            StoredRow::Memory {
                memory,
                review_after,
            } => {
                self.uids.insert(memory.id, memory.uid.clone());
                let mut v = serde_json::to_value(&memory).expect("memories serialise");
                let o = v.as_object_mut().expect("an object");
                o.insert("type".into(), "memory".into());
                o.insert(
                    "review_after".into(),
                    review_after.map_or(serde_json::Value::Null, |t| {
                        engram_core::time::format(t).into()
                    }),
                );
                self.line(v, "memories")
            }
            StoredRow::Revision { memory_id, row } => {
                self.row(&row, "revision", Some(memory_id), "revisions")
            }
            StoredRow::Evidence { memory_id, row } => {
                self.row(&row, "evidence", Some(memory_id), "evidence")
            }
            StoredRow::Event { memory_id, row } => {
                self.row(&row, "event", Some(memory_id), "events")
            }
            StoredRow::Link(l) => {
                let row = LinkRow {
                    src: self.uid(l.src)?,
                    dst: self.uid(l.dst)?,
                    kind: l.kind,
                    weight: l.weight,
                    created_at: l.created_at,
                    updated_at: l.updated_at,
                    note: l.note,
                };
                self.row(&row, "link", None, "links")
            }
            StoredRow::Session(s) => self.row(&s, "session", None, "sessions"),
            StoredRow::Prompt(p) => self.row(&p, "prompt", None, "prompts"),
            StoredRow::Judgment(j) => {
                let row = JudgmentRow {
                    src: self.uid(j.src)?,
                    dst: self.uid(j.dst)?,
                    uid: j.uid,
                    relation: j.relation,
                    status: j.status,
                    score: j.score,
                    reason: j.reason,
                    evidence: j.evidence,
                    confidence: j.confidence,
                    actor: j.actor,
                    actor_kind: j.actor_kind,
                    model: j.model,
                    session_id: j.session_id,
                    created_at: j.created_at,
                    updated_at: j.updated_at,
                };
                self.row(&row, "judgment", None, "judgments")
            }
        }
    }
}
