//! Whole tables in pages ([`crate::storage::Reads::rows_after`]) and rows inserted as
//! given ([`crate::storage::Tx::insert_rows`]): export, import and the vault's full sync.
//! Each section's SQL is its table owner's; this file only dispatches and keys the pages.

use crate::storage::rows::{RowKey, RowPage, Section, StoredRow};
use crate::{Error, Result};
use rusqlite::Connection;

pub(crate) fn rows_after(
    conn: &Connection,
    section: Section,
    after: Option<&RowKey>,
    limit: usize,
) -> Result<RowPage> {
    let limit = limit.max(1);
    let id = |k: Option<&RowKey>| match k {
        Some(RowKey::Id(i) | RowKey::Memory(i)) => Ok(*i),
        None => Ok(0),
        Some(other) => Err(wrong_key(section, other)),
    };
    let (rows, next): (Vec<StoredRow>, Option<RowKey>) = match section {
        Section::Memories => {
            let page = super::memories::page(conn, id(after)?, limit)?;
            let next = (page.len() >= limit).then(|| RowKey::Id(page[page.len() - 1].0.id));
            let rows = page
                .into_iter()
                .map(|(memory, review_after)| StoredRow::Memory {
                    memory,
                    review_after,
                })
                .collect();
            (rows, next)
        }
        Section::Revisions => per_memory(
            super::revisions::page(conn, id(after)?, limit)?,
            limit,
            |memory_id, row| StoredRow::Revision { memory_id, row },
        ),
        Section::Evidence => per_memory(
            super::evidence::page(conn, id(after)?, limit)?,
            limit,
            |memory_id, row| StoredRow::Evidence { memory_id, row },
        ),
        Section::Events => per_memory(
            super::events::page(conn, id(after)?, limit)?,
            limit,
            |memory_id, row| StoredRow::Event { memory_id, row },
        ),
        Section::Links => {
            let key = match after {
                None => None,
                Some(RowKey::Link(s, d, k)) => Some((*s, *d, k.as_str())),
                Some(other) => return Err(wrong_key(section, other)),
            };
            let page = super::links::page(conn, key, limit)?;
            let next = (page.len() >= limit).then(|| {
                let l = &page[page.len() - 1];
                RowKey::Link(l.src, l.dst, l.kind.as_str().to_string())
            });
            (page.into_iter().map(StoredRow::Link).collect(), next)
        }
        Section::Sessions => {
            let key = match after {
                None => None,
                Some(RowKey::Session(t, id)) => Some((*t, id.as_str())),
                Some(other) => return Err(wrong_key(section, other)),
            };
            let page = super::sessions::page(conn, key, limit)?;
            let next = (page.len() >= limit).then(|| {
                let s = &page[page.len() - 1];
                RowKey::Session(s.started_at, s.id.clone())
            });
            (page.into_iter().map(StoredRow::Session).collect(), next)
        }
        Section::Prompts => {
            let page = super::sessions::prompt_page(conn, id(after)?, limit)?;
            let next = (page.len() >= limit).then(|| RowKey::Id(page[page.len() - 1].0));
            (
                page.into_iter()
                    .map(|(_, p)| StoredRow::Prompt(p))
                    .collect(),
                next,
            )
        }
        Section::Judgments => {
            let page = super::revisions::judgment_page(conn, id(after)?, limit)?;
            let next = (page.len() >= limit).then(|| RowKey::Id(page[page.len() - 1].0));
            (
                page.into_iter()
                    .map(|(_, j)| StoredRow::Judgment(j))
                    .collect(),
                next,
            )
        }
    };
    Ok(RowPage { rows, next })
}

/// A page of whole memories' rows: the next page starts after the last memory.
fn per_memory<T>(
    page: Vec<(engram_core::MemoryId, T)>,
    limit: usize,
    wrap: impl Fn(engram_core::MemoryId, T) -> StoredRow,
) -> (Vec<StoredRow>, Option<RowKey>) {
    let next = (page.len() >= limit).then(|| RowKey::Memory(page[page.len() - 1].0));
    (page.into_iter().map(|(id, r)| wrap(id, r)).collect(), next)
}

fn wrong_key(section: Section, key: &RowKey) -> Error {
    Error::Input(engram_core::InputError::new(
        "after",
        format!("{key:?} is not a key of the {section:?} section"),
    ))
}

pub(crate) fn insert_rows(conn: &Connection, rows: &[StoredRow]) -> Result<Vec<bool>> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(match row {
            StoredRow::Memory { .. } => {
                return Err(Error::Input(engram_core::InputError::new(
                    "rows",
                    "memory rows are inserted with insert_memory, not insert_rows",
                )));
            }
            StoredRow::Revision { memory_id, row } => {
                super::revisions::insert_row(conn, *memory_id, row)?;
                true
            }
            StoredRow::Evidence { memory_id, row } => {
                super::evidence::insert(conn, *memory_id, row)?;
                true
            }
            StoredRow::Event { memory_id, row } => {
                super::events::insert_row(conn, *memory_id, row)?;
                true
            }
            StoredRow::Link(l) => super::links::insert_row(conn, l)?,
            StoredRow::Session(s) => super::sessions::insert_row(conn, s)?,
            StoredRow::Prompt(p) => super::sessions::insert_prompt_row(conn, p)?,
            StoredRow::Judgment(j) => super::revisions::insert_judgment_row(conn, j)?,
        });
    }
    Ok(out)
}
