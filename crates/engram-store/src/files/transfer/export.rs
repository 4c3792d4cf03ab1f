//! engram's JSONL export: a header line, then every row of the store, one object per line
//! with a `type`, in a fixed order (memories first, so an import can resolve each later
//! line's uids), each section read in one pass.

use super::*;

/// One export in progress: the output, what was written, and each memory's uid by id.
struct Exporter<'a> {
    conn: &'a Connection,
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
            conn: self
                .sqlite_conn()
                .expect("the vault and transfer run on SQLite until their slice"),
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
        x.memories()?;
        x.revisions()?;
        x.evidence()?;
        x.events()?;
        x.links()?;
        x.sessions()?;
        x.prompts()?;
        x.judgments()?;
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
            None => uid_of(self.conn, id),
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

    fn memories(&mut self) -> Result<()> {
        let conn = self.conn;
        let mut stmt = conn.prepare(&format!(
            "SELECT {MEMORY_COLUMNS}, review_after FROM memories ORDER BY id"
        ))?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let m = row_to_memory(r)?;
            let review: Option<Millis> = r.get(18)?;
            self.uids.insert(m.id, m.uid.clone());
            let mut v = serde_json::to_value(&m).expect("memories serialise");
            let o = v.as_object_mut().expect("an object");
            o.insert("type".into(), "memory".into());
            o.insert(
                "review_after".into(),
                review.map_or(serde_json::Value::Null, |t| {
                    engram_core::time::format(t).into()
                }),
            );
            self.line(v, "memories")?;
        }
        Ok(())
    }

    fn revisions(&mut self) -> Result<()> {
        let conn = self.conn;
        let mut stmt = conn.prepare(
            "SELECT memory_id, content, title, kind, importance, tags, reason, at, session_id FROM revisions ORDER BY memory_id, id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let tags: String = r.get(5)?;
            let row = RevisionRow {
                content: r.get(1)?,
                title: r.get(2)?,
                kind: r.get(3)?,
                importance: r.get(4)?,
                tags: serde_json::from_str(&tags).unwrap_or_default(),
                reason: r.get(6)?,
                at: r.get(7)?,
                session_id: r.get(8)?,
            };
            self.row(&row, "revision", Some(r.get(0)?), "revisions")?;
        }
        Ok(())
    }

    fn evidence(&mut self) -> Result<()> {
        let conn = self.conn;
        let mut stmt = conn.prepare(
            "SELECT memory_id, content, title, source, session_id, action, at FROM evidence ORDER BY memory_id, id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let row = crate::evidence::Evidence {
                content: r.get(1)?,
                title: r.get(2)?,
                source: r.get(3)?,
                session_id: r.get(4)?,
                action: r.get(5)?,
                at: r.get(6)?,
            };
            self.row(&row, "evidence", Some(r.get(0)?), "evidence")?;
        }
        Ok(())
    }

    fn events(&mut self) -> Result<()> {
        let conn = self.conn;
        let mut stmt = conn.prepare(
            "SELECT memory_id, kind, weight, at, session_id, detail FROM events ORDER BY memory_id, id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let row = EventRow {
                kind: r.get(1)?,
                weight: r.get(2)?,
                at: r.get(3)?,
                session_id: r.get(4)?,
                detail: r.get(5)?,
            };
            self.row(&row, "event", Some(r.get(0)?), "events")?;
        }
        Ok(())
    }

    fn links(&mut self) -> Result<()> {
        let conn = self.conn;
        let mut stmt = conn.prepare(
            "SELECT src, dst, kind, weight, created_at, updated_at, note FROM links ORDER BY src, dst, kind",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let kind: String = r.get(2)?;
            let row = LinkRow {
                src: self.uid(r.get(0)?)?,
                dst: self.uid(r.get(1)?)?,
                kind: LinkKind::parse(&kind)?,
                weight: r.get(3)?,
                created_at: r.get(4)?,
                updated_at: r.get(5)?,
                note: r.get(6)?,
            };
            self.row(&row, "link", None, "links")?;
        }
        Ok(())
    }

    fn sessions(&mut self) -> Result<()> {
        let conn = self.conn;
        let mut stmt = conn.prepare(
            "SELECT id, room, directory, source, started_at, ended_at, summary, outcome, outcome_at FROM sessions ORDER BY started_at, id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let row = SessionRow {
                id: r.get(0)?,
                room: r.get(1)?,
                directory: r.get(2)?,
                source: r.get(3)?,
                started_at: r.get(4)?,
                ended_at: r.get(5)?,
                summary: r.get(6)?,
                outcome: r.get(7)?,
                outcome_at: r.get(8)?,
            };
            self.row(&row, "session", None, "sessions")?;
        }
        Ok(())
    }

    fn prompts(&mut self) -> Result<()> {
        let conn = self.conn;
        let mut stmt =
            conn.prepare("SELECT session_id, room, content, created_at FROM prompts ORDER BY id")?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let row = PromptRow {
                session_id: r.get(0)?,
                room: r.get(1)?,
                content: r.get(2)?,
                created_at: r.get(3)?,
            };
            self.row(&row, "prompt", None, "prompts")?;
        }
        Ok(())
    }

    fn judgments(&mut self) -> Result<()> {
        let conn = self.conn;
        let mut stmt = conn.prepare(
            "SELECT uid, src, dst, relation, status, score, reason, evidence, confidence, actor, actor_kind, model,
                    session_id, created_at, updated_at FROM judgments ORDER BY id",
        )?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let row = JudgmentRow {
                uid: r.get(0)?,
                src: self.uid(r.get(1)?)?,
                dst: self.uid(r.get(2)?)?,
                relation: r.get(3)?,
                status: r.get(4)?,
                score: r.get(5)?,
                reason: r.get(6)?,
                evidence: r.get(7)?,
                confidence: r.get(8)?,
                actor: r.get(9)?,
                actor_kind: r.get(10)?,
                model: r.get(11)?,
                session_id: r.get(12)?,
                created_at: r.get(13)?,
                updated_at: r.get(14)?,
            };
            self.row(&row, "judgment", None, "judgments")?;
        }
        Ok(())
    }
}
