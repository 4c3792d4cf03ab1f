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

#[cfg(test)]
mod tests {
    //! Paging is keyset paging: whatever the page size, the pages of a section put
    //! together are the section read in one page, in the same order.

    use crate::storage::Reads;
    use crate::storage::rows::*;
    use crate::{RememberRequest, Store};
    use engram_core::{Config, EventKind, LinkKind};

    fn whole(r: &dyn Reads, section: Section, limit: usize) -> Vec<StoredRow> {
        let mut out = Vec::new();
        let mut after = None;
        loop {
            let page = r.rows_after(section, after.as_ref(), limit).unwrap();
            out.extend(page.rows);
            match page.next {
                Some(k) => after = Some(k),
                None => return out,
            }
        }
    }

    #[test]
    fn pages_of_any_size_read_each_section_whole_and_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            resolve: false,
            ..Config::default()
        };
        let mut s = Store::open(&dir.path().join("engram.db"), config).unwrap();
        let ids: Vec<i64> = (0..7)
            .map(|i| {
                s.remember(RememberRequest {
                    content: format!("note {i} about topic{i}"),
                    ..Default::default()
                })
                .unwrap()
                .id
            })
            .collect();
        let now = s.now();
        let memories = s.reads().memories(&ids).unwrap();
        s.write(|tx| {
            for (n, m) in memories.iter().enumerate() {
                // Uneven rows per memory, so pages split and join memories differently.
                for k in 0..(n % 3) {
                    tx.append_event(&NewEvent {
                        memory_id: m.id,
                        kind: EventKind::Reinforce,
                        weight: 1.0,
                        at: now + k as i64,
                        session_id: None,
                        detail: None,
                    })?;
                    tx.add_revision(m, "update", now, None)?;
                }
                tx.add_evidence(
                    m.id,
                    &Evidence {
                        content: format!("evidence {n}"),
                        title: None,
                        source: "test".into(),
                        session_id: None,
                        action: "reinforce".into(),
                        at: now,
                    },
                )?;
                for d in ids.iter().filter(|d| **d != m.id).take(2) {
                    tx.upsert_link(&LinkWrite::set(m.id, *d, LinkKind::Explicit, 0.5, now))?;
                }
                let session = format!("s{n}");
                tx.write_session(&SessionWrite::Start {
                    id: &session,
                    room: "r",
                    directory: None,
                    source: None,
                    // Two sessions share each start: the key's second part orders them.
                    at: now + (n as i64 / 2),
                })?;
                tx.add_prompt(Some(&session), "r", "a prompt", now)?;
                if n > 0 {
                    tx.pending_judgment(ids[n - 1], m.id, 0.5, None, now)?;
                }
            }
            Ok(())
        })
        .unwrap();
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
            let one_page = whole(s.reads(), section, 100_000);
            assert!(one_page.len() >= 6, "{section:?}: {}", one_page.len());
            for limit in [1, 2, 3, 5] {
                assert_eq!(
                    whole(s.reads(), section, limit),
                    one_page,
                    "{section:?} in pages of {limit}"
                );
            }
        }
    }

    #[test]
    fn a_key_of_another_section_is_an_input_error() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("engram.db"), Config::default()).unwrap();
        let err = s
            .reads()
            .rows_after(Section::Links, Some(&RowKey::Id(3)), 10)
            .unwrap_err();
        assert!(err.to_string().contains("after"), "{err}");
    }
}
