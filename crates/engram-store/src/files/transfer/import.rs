//! A [`Batch`] stored: every memory with its history, then the rows that name memories by
//! uid (links, judgments) and the session rows, in one write transaction, each skipped
//! when it is already there.

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
        let tx = self
            .sqlite_conn_mut()
            .expect("the vault and transfer run on SQLite until their slice")
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut report = ImportReport {
            warnings: batch.warnings,
            ..Default::default()
        };
        let total = batch.memories.len() as u64;
        for (i, im) in batch.memories.into_iter().enumerate() {
            if i % 64 == 0 {
                progress(i as u64, total);
            }
            import_memory(&tx, im, &actr, &mut report)?;
        }
        progress(total, total);
        import_links(&tx, &batch.links, &mut report)?;
        import_sessions(&tx, &batch.sessions, &mut report)?;
        import_prompts(&tx, &batch.prompts, &mut report)?;
        import_judgments(&tx, &batch.judgments, &mut report)?;
        tx.commit()?;
        Ok(report)
    }
}

/// One memory and its events, revisions and evidence; all skipped when its uid exists.
fn import_memory(
    tx: &Connection,
    im: ImportedMemory,
    actr: &ActrParams,
    report: &mut ImportReport,
) -> Result<()> {
    let label = im.memory.uid.clone();
    match insert_memory(
        tx,
        &im.memory,
        im.review_after,
        im.keep_id,
        im.events.is_none(),
        actr,
    ) {
        Ok(Some(id)) => {
            report.created("memories");
            for e in im.events.iter().flatten() {
                let Some(kind) = EventKind::parse(&e.kind) else {
                    report
                        .warnings
                        .push(format!("memory {label}: unknown event kind {:?}", e.kind));
                    continue;
                };
                add_event(
                    tx,
                    id,
                    kind,
                    e.weight,
                    e.at,
                    e.session_id.as_deref(),
                    e.detail.as_deref(),
                )?;
                report.created("events");
            }
            for r in &im.revisions {
                insert_revision(tx, id, r)?;
                report.created("revisions");
            }
            for e in &im.evidence {
                crate::evidence::insert(tx, id, e)?;
                report.created("evidence");
            }
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

/// A revision as exported, redacted on the way in like every write.
fn insert_revision(tx: &Connection, id: MemoryId, r: &RevisionRow) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        id,
        redact::redact(&r.content).0,
        r.title.as_deref().map(|t| redact::redact(t).0),
        r.kind,
        r.importance,
        serde_json::to_string(&r.tags).expect("tags serialise"),
        r.reason,
        r.at,
        r.session_id
    ])?;
    Ok(())
}

fn import_links(tx: &Connection, links: &[LinkRow], report: &mut ImportReport) -> Result<()> {
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
        let n = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO links (src, dst, kind, weight, created_at, updated_at, note)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                src,
                dst,
                l.kind.as_str(),
                l.weight.clamp(0.0, 1.0),
                l.created_at,
                l.updated_at,
                l.note
            ])?;
        if n > 0 {
            report.created("links");
        } else {
            report.skipped("links");
        }
    }
    Ok(())
}

fn import_sessions(
    tx: &Connection,
    sessions: &[SessionRow],
    report: &mut ImportReport,
) -> Result<()> {
    for s in sessions {
        let n = tx.execute(
            "INSERT OR IGNORE INTO sessions (id, room, directory, source, started_at, ended_at, summary, outcome, outcome_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                s.id,
                s.room,
                s.directory,
                s.source,
                s.started_at,
                s.ended_at,
                s.summary,
                s.outcome,
                s.outcome_at
            ],
        )?;
        if n > 0 {
            report.created("sessions");
        } else {
            report.skipped("sessions");
        }
    }
    Ok(())
}

/// Prompts have no uid: one with the same session, time and text is the same prompt.
fn import_prompts(tx: &Connection, prompts: &[PromptRow], report: &mut ImportReport) -> Result<()> {
    for p in prompts {
        let exists: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM prompts WHERE session_id IS ?1 AND created_at = ?2 AND content = ?3)",
            params![p.session_id, p.created_at, p.content],
            |r| r.get(0),
        )?;
        if exists {
            report.skipped("prompts");
            continue;
        }
        tx.execute(
            "INSERT INTO prompts (session_id, room, content, created_at) VALUES (?1, ?2, ?3, ?4)",
            params![
                p.session_id,
                p.room,
                redact::redact(&p.content).0,
                p.created_at
            ],
        )?;
        report.created("prompts");
    }
    Ok(())
}

fn import_judgments(
    tx: &Connection,
    judgments: &[JudgmentRow],
    report: &mut ImportReport,
) -> Result<()> {
    for j in judgments {
        let (Some(src), Some(dst)) = (id_of(tx, &j.src)?, id_of(tx, &j.dst)?) else {
            report.skipped("judgments");
            continue;
        };
        let n = tx.execute(
            "INSERT OR IGNORE INTO judgments (uid, src, dst, relation, status, score, reason, evidence, confidence,
                                             actor, actor_kind, model, session_id, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
            params![
                j.uid,
                src,
                dst,
                j.relation,
                j.status,
                j.score,
                j.reason,
                j.evidence,
                j.confidence,
                j.actor,
                j.actor_kind,
                j.model,
                j.session_id,
                j.created_at,
                j.updated_at
            ],
        )?;
        if n > 0 {
            report.created("judgments");
        } else {
            report.skipped("judgments");
        }
    }
    Ok(())
}
