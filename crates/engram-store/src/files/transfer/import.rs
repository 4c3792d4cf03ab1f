//! A [`Batch`] stored: every memory with its history, then the rows that name memories by
//! uid (links, judgments) and the session rows, in one write transaction of the storage
//! interface, each skipped when it is already there.
//!
//! The transaction may run more than once ([`crate::storage::Backend::write`]), so the
//! report is built afresh inside it and leaves only with the committed run.

use super::*;

impl Store {
    /// Stores everything in `batch` in one transaction, skipping what is already there.
    /// `progress(done, total)` is called as memories are stored.
    pub fn import_batch(
        &mut self,
        mut batch: Batch,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<ImportReport> {
        // Over-limit content from a source is stored in parts, never refused or cut.
        crate::parts::split_long_imports(&mut batch);
        let actr = self.config.actr;
        let warnings = std::mem::take(&mut batch.warnings);
        let batch = batch;
        self.write(|tx| {
            let mut report = ImportReport {
                warnings: warnings.clone(),
                ..Default::default()
            };
            let total = batch.memories.len() as u64;
            for (i, im) in batch.memories.iter().enumerate() {
                if i % 64 == 0 {
                    progress(i as u64, total);
                }
                import_memory(tx, im, &actr, &mut report)?;
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

/// One memory and its events, revisions and evidence; all skipped when its uid exists.
fn import_memory(
    tx: &mut dyn Tx,
    im: &ImportedMemory,
    actr: &ActrParams,
    report: &mut ImportReport,
) -> Result<()> {
    let label = &im.memory.uid;
    match insert_memory(
        tx,
        &im.memory,
        im.review_after,
        im.keep_id,
        im.events.is_none(),
        actr,
    ) {
        Ok(Some(memory_id)) => {
            report.created("memories");
            let mut rows = Vec::new();
            for e in im.events.iter().flatten() {
                if EventKind::parse(&e.kind).is_none() {
                    report
                        .warnings
                        .push(format!("memory {label}: unknown event kind {:?}", e.kind));
                    continue;
                }
                rows.push(StoredRow::Event {
                    memory_id,
                    row: e.clone(),
                });
                report.created("events");
            }
            for r in &im.revisions {
                // Redacted on the way in like every write.
                let row = RevisionRow {
                    content: redact::redact(&r.content).0,
                    title: r.title.as_deref().map(|t| redact::redact(t).0),
                    ..r.clone()
                };
                rows.push(StoredRow::Revision { memory_id, row });
                report.created("revisions");
            }
            for e in &im.evidence {
                rows.push(StoredRow::Evidence {
                    memory_id,
                    row: e.clone(),
                });
                report.created("evidence");
            }
            tx.insert_rows(&rows)?;
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
        }
        Err(Error::Input(e)) => {
            report.skipped("memories");
            report.warnings.push(format!("memory {label}: {e}"));
        }
        Err(e) => return Err(e),
    }
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
            report.warnings.push(format!(
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
