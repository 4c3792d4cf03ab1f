//! Whole tables in pages ([`crate::storage::Reads::rows_after`]) and rows inserted as
//! given ([`crate::storage::Tx::insert_rows`]) on PostgreSQL: export, import and the
//! vault's full sync. Keyset pages in each section's order, as `sqlite/tables.rs` keys them.

use super::{Db, opt};
use crate::storage::rows::*;
use crate::{Error, Result};
use engram_core::{LinkKind, MemoryId};

fn wrong_key(section: Section, key: &RowKey) -> Error {
    Error::Input(engram_core::InputError::new(
        "after",
        format!("{key:?} is not a key of the {section:?} section"),
    ))
}

/// The memory ids of a per-memory table's next page: after `after`, up to the memory of
/// the `limit`-th row, so a page holds whole memories.
const UPTO: &str = "coalesce((SELECT memory_id FROM {t} WHERE memory_id > $1 ORDER BY memory_id \
     LIMIT 1 OFFSET $2), 9223372036854775807)";

fn per_memory_sql(table: &str, cols: &str) -> String {
    let upto = UPTO.replace("{t}", table);
    format!(
        "SELECT memory_id, {cols} FROM {table} WHERE memory_id > $1 AND memory_id <= {upto}
         ORDER BY memory_id, id"
    )
}

pub(crate) fn rows_after(
    db: &mut dyn Db,
    section: Section,
    after: Option<&RowKey>,
    limit: usize,
) -> Result<RowPage> {
    let limit = limit.max(1);
    let id = match after {
        Some(RowKey::Id(i) | RowKey::Memory(i)) => *i,
        None => 0,
        Some(_) if matches!(section, Section::Links | Section::Sessions) => 0,
        Some(other) => return Err(wrong_key(section, other)),
    };
    let lim = limit as i64;
    let skip = lim - 1;
    let mut rows = Vec::new();
    match section {
        Section::Memories => {
            let sql = format!(
                "SELECT {}, review_after FROM memories WHERE id > $1 ORDER BY id LIMIT $2",
                super::memories::COLUMNS
            );
            for r in db.query(&sql, &[&id, &lim])? {
                rows.push(StoredRow::Memory {
                    memory: super::memories::from_row(&r)?,
                    review_after: r.try_get(super::memories::COLUMN_COUNT)?,
                });
            }
        }
        Section::Revisions => {
            let sql = per_memory_sql(
                "revisions",
                "content, title, kind, importance, tags, reason, at, session_id",
            );
            for r in db.query(&sql, &[&id, &skip])? {
                rows.push(StoredRow::Revision {
                    memory_id: r.get(0),
                    row: RevisionRow {
                        content: r.get(1),
                        title: r.get(2),
                        kind: r.get(3),
                        importance: r.get(4),
                        tags: serde_json::from_str(r.get(5)).unwrap_or_default(),
                        reason: r.get(6),
                        at: r.get(7),
                        session_id: r.get(8),
                    },
                });
            }
        }
        Section::Evidence => {
            let sql = per_memory_sql("evidence", "content, title, source, session_id, action, at");
            for r in db.query(&sql, &[&id, &skip])? {
                rows.push(StoredRow::Evidence {
                    memory_id: r.get(0),
                    row: Evidence {
                        content: r.get(1),
                        title: r.get(2),
                        source: r.get(3),
                        session_id: r.get(4),
                        action: r.get(5),
                        at: r.get(6),
                    },
                });
            }
        }
        Section::Events => {
            let sql = per_memory_sql("events", "kind, weight, at, session_id, detail");
            for r in db.query(&sql, &[&id, &skip])? {
                rows.push(StoredRow::Event {
                    memory_id: r.get(0),
                    row: EventRow {
                        kind: r.get(1),
                        weight: r.get(2),
                        at: r.get(3),
                        session_id: r.get(4),
                        detail: r.get(5),
                    },
                });
            }
        }
        Section::Links | Section::Sessions | Section::Prompts | Section::Judgments => {
            return keyed_rows_after(db, section, after, limit);
        }
    }
    let next = if rows.len() < limit {
        None
    } else {
        rows.last().map(|last| match last {
            StoredRow::Memory { memory, .. } => RowKey::Id(memory.id),
            StoredRow::Revision { memory_id, .. }
            | StoredRow::Evidence { memory_id, .. }
            | StoredRow::Event { memory_id, .. } => RowKey::Memory(*memory_id),
            StoredRow::Link(l) => RowKey::Link(l.src, l.dst, l.kind.as_str().to_string()),
            StoredRow::Session(s) => RowKey::Session(s.started_at, s.id.clone()),
            StoredRow::Prompt(_) | StoredRow::Judgment(_) => unreachable!("keyed_rows_after"),
        })
    };
    Ok(RowPage { rows, next })
}

/// The sections keyed by something else than a memory id: links, sessions (by their own
/// keys), prompts and judgments (by their ids, which the rows do not carry).
fn keyed_rows_after(
    db: &mut dyn Db,
    section: Section,
    after: Option<&RowKey>,
    limit: usize,
) -> Result<RowPage> {
    let id = match after {
        Some(RowKey::Id(i)) => *i,
        Some(other) if matches!(section, Section::Prompts | Section::Judgments) => {
            return Err(wrong_key(section, other));
        }
        _ => 0,
    };
    let lim = limit as i64;
    let mut rows = Vec::new();
    match section {
        Section::Links => {
            let (s, d, k) = match after {
                None => (MemoryId::MIN, MemoryId::MIN, String::new()),
                Some(RowKey::Link(s, d, k)) => (*s, *d, k.clone()),
                Some(other) => return Err(wrong_key(section, other)),
            };
            for r in db.query(
                "SELECT src, dst, kind, weight, created_at, updated_at, note FROM links
                 WHERE (src, dst, kind COLLATE \"C\") > ($1, $2, $3::text COLLATE \"C\")
                 ORDER BY src, dst, kind COLLATE \"C\" LIMIT $4",
                &[&s, &d, &k, &lim],
            )? {
                rows.push(StoredRow::Link(LinkRow {
                    src: r.get(0),
                    dst: r.get(1),
                    kind: LinkKind::parse(r.get::<_, &str>(2))?,
                    weight: r.get(3),
                    created_at: r.get(4),
                    updated_at: r.get(5),
                    note: r.get(6),
                }));
            }
        }
        Section::Sessions => {
            let (t, sid) = match after {
                None => (i64::MIN, String::new()),
                Some(RowKey::Session(t, id)) => (*t, id.clone()),
                Some(other) => return Err(wrong_key(section, other)),
            };
            for r in db.query(
                "SELECT id, room, directory, source, started_at, ended_at, summary, outcome, outcome_at, author
                 FROM sessions WHERE (started_at, id COLLATE \"C\") > ($1, $2::text COLLATE \"C\")
                 ORDER BY started_at, id COLLATE \"C\" LIMIT $3",
                &[&t, &sid, &lim],
            )? {
                rows.push(StoredRow::Session(SessionRow {
                    id: r.get(0),
                    room: r.get(1),
                    directory: r.get(2),
                    source: r.get(3),
                    started_at: r.get(4),
                    ended_at: r.get(5),
                    summary: r.get(6),
                    outcome: r.get(7),
                    outcome_at: r.get(8),
                    author: r.get(9),
                }));
            }
        }
        Section::Prompts => {
            let mut last = 0;
            for r in db.query(
                "SELECT id, session_id, room, content, created_at, author FROM prompts WHERE id > $1 ORDER BY id LIMIT $2",
                &[&id, &lim],
            )? {
                last = r.get(0);
                rows.push(StoredRow::Prompt(PromptRow {
                    session_id: r.get(1),
                    room: r.get(2),
                    content: r.get(3),
                    created_at: r.get(4),
                    author: r.get(5),
                }));
            }
            let next = (rows.len() >= limit).then_some(RowKey::Id(last));
            return Ok(RowPage { rows, next });
        }
        Section::Judgments => {
            let mut last = 0;
            for r in db.query(
                "SELECT id, uid, src, dst, relation, status, score, reason, evidence, confidence, actor,
                        actor_kind, model, session_id, created_at, updated_at
                 FROM judgments WHERE id > $1 ORDER BY id LIMIT $2",
                &[&id, &lim],
            )? {
                last = r.get(0);
                rows.push(StoredRow::Judgment(JudgmentRow {
                    uid: r.get(1),
                    src: r.get(2),
                    dst: r.get(3),
                    relation: r.get(4),
                    status: r.get(5),
                    score: r.get(6),
                    reason: r.get(7),
                    evidence: r.get(8),
                    confidence: r.get(9),
                    actor: r.get(10),
                    actor_kind: r.get(11),
                    model: r.get(12),
                    session_id: r.get(13),
                    created_at: r.get(14),
                    updated_at: r.get(15),
                }));
            }
            let next = (rows.len() >= limit).then_some(RowKey::Id(last));
            return Ok(RowPage { rows, next });
        }
        _ => unreachable!("rows_after handles the per-memory sections"),
    }
    let next = (rows.len() >= limit).then(|| match rows.last() {
        Some(StoredRow::Link(l)) => RowKey::Link(l.src, l.dst, l.kind.as_str().to_string()),
        Some(StoredRow::Session(s)) => RowKey::Session(s.started_at, s.id.clone()),
        _ => unreachable!("prompts and judgments returned above"),
    });
    Ok(RowPage { rows, next })
}

pub(crate) fn insert_rows(db: &mut dyn Db, rows: &[StoredRow]) -> Result<Vec<bool>> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(match row {
            StoredRow::Memory { .. } => {
                return Err(Error::Input(engram_core::InputError::new(
                    "rows",
                    "memory rows are inserted with insert_memory, not insert_rows",
                )));
            }
            StoredRow::Revision { memory_id, row: r } => {
                db.execute(
                    "INSERT INTO revisions (memory_id, content, title, kind, importance, tags, reason, at, session_id)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                    &[
                        memory_id,
                        &r.content,
                        &r.title,
                        &r.kind,
                        &r.importance,
                        &serde_json::to_string(&r.tags).expect("tags serialise"),
                        &r.reason,
                        &r.at,
                        &r.session_id,
                    ],
                )?;
                true
            }
            StoredRow::Evidence { memory_id, row } => {
                super::evidence::insert(db, *memory_id, row)?;
                true
            }
            StoredRow::Event { memory_id, row: e } => {
                db.execute(
                    "INSERT INTO events (memory_id, kind, weight, at, session_id, detail) VALUES ($1, $2, $3, $4, $5, $6)",
                    &[memory_id, &e.kind, &e.weight, &e.at, &e.session_id, &e.detail],
                )?;
                true
            }
            StoredRow::Link(l) => {
                db.execute(
                    "INSERT INTO links (src, dst, kind, weight, created_at, updated_at, note)
                     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
                    &[&l.src, &l.dst, &l.kind.as_str(), &l.weight, &l.created_at, &l.updated_at, &l.note],
                )? > 0
            }
            StoredRow::Session(s) => {
                db.execute(
                    "INSERT INTO sessions (id, room, directory, source, started_at, ended_at, summary, outcome, outcome_at, author)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING",
                    &[&s.id, &s.room, &s.directory, &s.source, &s.started_at, &s.ended_at, &s.summary, &s.outcome, &s.outcome_at, &s.author],
                )? > 0
            }
            StoredRow::Prompt(p) => {
                let there = opt(
                    db,
                    "SELECT 1 FROM prompts WHERE session_id IS NOT DISTINCT FROM $1 AND created_at = $2 AND content = $3",
                    &[&p.session_id, &p.created_at, &p.content],
                )?;
                if there.is_some() {
                    false
                } else {
                    db.execute(
                        "INSERT INTO prompts (session_id, room, content, created_at, author) VALUES ($1, $2, $3, $4, $5)",
                        &[&p.session_id, &p.room, &p.content, &p.created_at, &p.author],
                    )?;
                    true
                }
            }
            StoredRow::Judgment(j) => {
                db.execute(
                    "INSERT INTO judgments (uid, src, dst, relation, status, score, reason, evidence, confidence,
                                            actor, actor_kind, model, session_id, created_at, updated_at)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) ON CONFLICT DO NOTHING",
                    &[
                        &j.uid, &j.src, &j.dst, &j.relation, &j.status, &j.score, &j.reason, &j.evidence,
                        &j.confidence, &j.actor, &j.actor_kind, &j.model, &j.session_id, &j.created_at,
                        &j.updated_at,
                    ],
                )? > 0
            }
        });
    }
    Ok(out)
}
