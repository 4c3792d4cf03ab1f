//! The one owner of `memories` rows on PostgreSQL: the column list, the row mapper, and
//! every insert, update and read of them. Orders and tie-breaks follow `sqlite/memories.rs`
//! exactly, so both backends answer the same.

use super::{Db, count, opt};
use crate::storage::rows::{
    ActiveOrder, ActiveQuery, ListQuery, MemoryPatch, NewMemory, ReviewItem, Side,
};
use crate::{Error, Result};
use engram_core::memory::IdRef;
use engram_core::{Kind, Memory, MemoryId, Millis, Tier};
use postgres::Row;
use postgres::types::ToSql;
use sha2::{Digest, Sha256};

/// The columns [`from_row`] reads, in its order.
pub(crate) const COLUMNS: &str = "id, uid, content, title, kind, importance, tags, room, topic_key, pinned, tier, \
     created_at, updated_at, valid_from, valid_to, source, session_id, metadata, author";

/// How many columns [`COLUMNS`] names.
pub(crate) const COLUMN_COUNT: usize = 19;

fn bad(col: &str, what: impl std::fmt::Display) -> Error {
    Error::Index(format!("memories.{col} holds an unreadable value: {what}"))
}

/// A memory from a row that starts with [`COLUMNS`].
pub(crate) fn from_row(row: &Row) -> Result<Memory> {
    let kind: String = row.try_get(4)?;
    let tier: String = row.try_get(10)?;
    let tags: String = row.try_get(6)?;
    let metadata: String = row.try_get(17)?;
    Ok(Memory {
        id: row.try_get(0)?,
        uid: row.try_get(1)?,
        content: row.try_get(2)?,
        title: row.try_get(3)?,
        kind: Kind::parse(&kind).map_err(|e| bad("kind", e))?,
        importance: row.try_get(5)?,
        tags: serde_json::from_str(&tags).map_err(|e| bad("tags", e))?,
        room: row.try_get(7)?,
        topic_key: row.try_get(8)?,
        pinned: row.try_get(9)?,
        tier: Tier::parse(&tier).map_err(|e| bad("tier", e))?,
        created_at: row.try_get(11)?,
        updated_at: row.try_get(12)?,
        valid_from: row.try_get(13)?,
        valid_to: row.try_get(14)?,
        source: row.try_get(15)?,
        session_id: row.try_get(16)?,
        metadata: serde_json::from_str(&metadata).map_err(|e| bad("metadata", e))?,
        author: row.try_get(18)?,
    })
}

fn rows(rows: Vec<Row>) -> Result<Vec<Memory>> {
    rows.iter().map(from_row).collect()
}

/// The dedup hash of a text (whitespace and case aside), as SQLite keeps it.
pub(crate) fn content_hash(content: &str) -> String {
    let digest = Sha256::digest(engram_core::text::normalize_for_dedup(content).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).expect("tags serialise")
}

pub(crate) fn id_of(db: &mut dyn Db, r: &IdRef) -> Result<Option<MemoryId>> {
    let row = match r {
        IdRef::Id(id) => opt(db, "SELECT id FROM memories WHERE id = $1", &[id])?,
        IdRef::Uid(uid) => opt(db, "SELECT id FROM memories WHERE uid = $1", &[uid])?,
    };
    Ok(row.map(|r| r.get(0)))
}

pub(crate) fn by_ref(db: &mut dyn Db, r: &IdRef) -> Result<Option<Memory>> {
    let row = match r {
        IdRef::Id(id) => opt(
            db,
            &format!("SELECT {COLUMNS} FROM memories WHERE id = $1"),
            &[id],
        )?,
        IdRef::Uid(uid) => opt(
            db,
            &format!("SELECT {COLUMNS} FROM memories WHERE uid = $1"),
            &[uid],
        )?,
    };
    row.as_ref().map(from_row).transpose()
}

/// Many memories by id, in one statement.
pub(crate) fn many(db: &mut dyn Db, ids: &[MemoryId]) -> Result<Vec<Memory>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    rows(db.query(
        &format!("SELECT {COLUMNS} FROM memories WHERE id = ANY($1)"),
        &[&ids],
    )?)
}

pub(crate) fn exists(db: &mut dyn Db, id: MemoryId) -> Result<bool> {
    Ok(opt(db, "SELECT 1 FROM memories WHERE id = $1", &[&id])?.is_some())
}

pub(crate) fn review_after(db: &mut dyn Db, id: MemoryId) -> Result<Option<Millis>> {
    Ok(opt(
        db,
        "SELECT review_after FROM memories WHERE id = $1",
        &[&id],
    )?
    .and_then(|r| r.get(0)))
}

pub(crate) fn due_for_review(
    db: &mut dyn Db,
    room: Option<&str>,
    now: Millis,
    limit: usize,
) -> Result<Vec<ReviewItem>> {
    let found = db.query(
        &format!(
            "SELECT {COLUMNS}, review_after FROM memories
             WHERE tier = 'active' AND review_after IS NOT NULL AND review_after <= $1
               AND ($2::text IS NULL OR room = $2)
             ORDER BY review_after, id LIMIT $3"
        ),
        &[&now, &room, &(limit as i64)],
    )?;
    let mut out = Vec::with_capacity(found.len());
    for row in &found {
        let m = from_row(row)?;
        out.push(ReviewItem {
            id: m.id,
            title: m.title,
            kind: m.kind,
            room: m.room,
            excerpt: m.content.chars().take(200).collect(),
            review_after: row.try_get(COLUMN_COUNT)?,
        });
    }
    Ok(out)
}

pub(crate) fn beside(
    db: &mut dyn Db,
    anchor: &Memory,
    side: Side,
    limit: usize,
) -> Result<Vec<Memory>> {
    let (cond, key): (&str, &str) = match &anchor.session_id {
        Some(s) => ("session_id = $1", s),
        None => ("room = $1", &anchor.room),
    };
    let (cmp, order) = match side {
        Side::Before => ("<", "DESC"),
        Side::After => (">", ""),
    };
    rows(db.query(
        &format!(
            "SELECT {COLUMNS} FROM memories WHERE {cond} AND id {cmp} $2 AND tier != 'trash'
             ORDER BY id {order} LIMIT $3"
        ),
        &[&key, &anchor.id, &(limit as i64)],
    )?)
}

pub(crate) fn active(db: &mut dyn Db, q: &ActiveQuery<'_>) -> Result<Vec<Memory>> {
    let kinds: Vec<&str> = q.kinds.iter().map(|k| k.as_str()).collect();
    let rooms: Option<Vec<String>> = q.rooms.map(|r| r.to_vec());
    let pinned = if q.pinned_only { " AND pinned" } else { "" };
    let order = match q.order {
        ActiveOrder::Id => "id",
        ActiveOrder::IdDesc => "id DESC",
        ActiveOrder::Updated => "updated_at DESC",
        ActiveOrder::UpdatedThenId => "updated_at DESC, id DESC",
        ActiveOrder::ImportanceThenId => "importance DESC, id DESC",
        ActiveOrder::ImportanceThenUpdated => "importance DESC, updated_at DESC",
    };
    rows(db.query(
        &format!(
            "SELECT {COLUMNS} FROM memories WHERE tier = 'active'{pinned} AND kind = ANY($1)
               AND ($2::text[] IS NULL OR room = ANY($2))
             ORDER BY {order} LIMIT $3"
        ),
        &[&kinds, &rooms, &(q.limit as i64)],
    )?)
}

pub(crate) fn component_failures(
    db: &mut dyn Db,
    room: &str,
    component: &str,
    limit: usize,
) -> Result<Vec<Memory>> {
    rows(db.query(
        &format!(
            "SELECT {COLUMNS} FROM memories
             WHERE room = $1 AND kind IN ('failure', 'bugfix') AND tier != 'trash'
               AND metadata::jsonb ->> 'component' = $2
             ORDER BY created_at DESC, id DESC LIMIT $3"
        ),
        &[&room, &component, &(limit as i64)],
    )?)
}

/// The oldest active memory of `room` with this content: the hash narrows, the
/// normalised texts decide.
pub(crate) fn active_duplicate(
    db: &mut dyn Db,
    room: &str,
    content: &str,
) -> Result<Option<MemoryId>> {
    let normalized = engram_core::text::normalize_for_dedup(content);
    let found = db.query(
        "SELECT id, content FROM memories WHERE content_hash = $1 AND room = $2 AND tier = 'active' ORDER BY id",
        &[&content_hash(content), &room],
    )?;
    Ok(found
        .iter()
        .find(|r| engram_core::text::normalize_for_dedup(r.get(1)) == normalized)
        .map(|r| r.get(0)))
}

pub(crate) fn topic_memory(
    db: &mut dyn Db,
    topic_key: &str,
    room: &str,
) -> Result<Option<MemoryId>> {
    Ok(opt(
        db,
        "SELECT id FROM memories WHERE topic_key = $1 AND room = $2 AND tier IN ('active', 'archived')
         ORDER BY updated_at DESC, id DESC LIMIT 1",
        &[&topic_key, &room],
    )?
    .map(|r| r.get(0)))
}

/// Inserts a memory row; returns its id. The one `INSERT INTO memories` of this backend.
pub(crate) fn insert(db: &mut dyn Db, m: &NewMemory) -> Result<MemoryId> {
    let row = opt(
        db,
        "INSERT INTO memories (uid, content, title, kind, importance, tags, room, topic_key, pinned, tier,
                               created_at, updated_at, valid_from, valid_to, source, session_id, metadata,
                               content_hash, review_after, author)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
         RETURNING id",
        &[
            &m.uid,
            &m.content,
            &m.title,
            &m.kind.as_str(),
            &m.importance,
            &tags_json(&m.tags),
            &m.room,
            &m.topic_key,
            &m.pinned,
            &m.tier.as_str(),
            &m.created_at,
            &m.updated_at,
            &m.valid_from,
            &m.valid_to,
            &m.source,
            &m.session_id,
            &m.metadata.to_string(),
            &content_hash(&m.content),
            &m.review_after,
            &m.author,
        ],
    )?;
    Ok(row.expect("INSERT … RETURNING returns the row").get(0))
}

/// Applies a patch; `false` when no row matched.
pub(crate) fn patch(db: &mut dyn Db, id: MemoryId, p: &MemoryPatch) -> Result<bool> {
    let mut sets: Vec<&str> = Vec::new();
    let mut values: Vec<Box<dyn ToSql + Sync>> = vec![Box::new(id)];
    let mut set = |col: &'static str, v: Box<dyn ToSql + Sync>| {
        sets.push(col);
        values.push(v);
    };
    if let Some(c) = &p.content {
        set("content", Box::new(c.clone()));
        set("content_hash", Box::new(content_hash(c)));
    }
    if let Some(t) = &p.title {
        set("title", Box::new(t.clone()));
    }
    if let Some(k) = p.kind {
        set("kind", Box::new(k.as_str()));
    }
    if let Some(i) = p.importance {
        set("importance", Box::new(i));
    }
    if let Some(t) = &p.tags {
        set("tags", Box::new(tags_json(t)));
    }
    if let Some(r) = &p.room {
        set("room", Box::new(r.clone()));
    }
    if let Some(t) = &p.topic_key {
        set("topic_key", Box::new(t.clone()));
    }
    if let Some(b) = p.pinned {
        set("pinned", Box::new(b));
    }
    if let Some(t) = p.tier {
        set("tier", Box::new(t.as_str()));
    }
    if let Some(t) = p.created_at {
        set("created_at", Box::new(t));
    }
    if let Some(t) = p.valid_from {
        set("valid_from", Box::new(t));
    }
    if let Some(s) = &p.source {
        set("source", Box::new(s.clone()));
    }
    if let Some(t) = p.updated_at {
        set("updated_at", Box::new(t));
    }
    if let Some(t) = p.valid_to {
        set("valid_to", Box::new(t));
    }
    if let Some(s) = &p.session_id {
        set("session_id", Box::new(s.clone()));
    }
    if let Some(m) = &p.metadata {
        set("metadata", Box::new(m.to_string()));
    }
    if let Some(r) = p.review_after {
        set("review_after", Box::new(r));
    }
    if sets.is_empty() {
        return exists(db, id);
    }
    let assignments: Vec<String> = sets
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = ${}", i + 2))
        .collect();
    let mut sql = format!(
        "UPDATE memories SET {} WHERE id = $1",
        assignments.join(", ")
    );
    if let Some(t) = p.if_tier {
        sql.push_str(&format!(" AND tier = ${}", values.len() + 1));
        values.push(Box::new(t.as_str()));
    }
    let params: Vec<&(dyn ToSql + Sync)> = values.iter().map(|v| v.as_ref()).collect();
    Ok(db.execute(&sql, &params)? > 0)
}

/// Moves every memory of room `from` into `to`; returns how many moved.
pub(crate) fn move_room(db: &mut dyn Db, from: &str, to: &str) -> Result<u64> {
    db.execute(
        "UPDATE memories SET room = $2 WHERE room = $1",
        &[&from, &to],
    )
}

/// Deletes a memory; its dependants go with it (`ON DELETE CASCADE`).
pub(crate) fn delete(db: &mut dyn Db, id: MemoryId) -> Result<()> {
    db.execute("DELETE FROM memories WHERE id = $1", &[&id])?;
    Ok(())
}

/// A browsing list, newest first.
pub(crate) fn list(db: &mut dyn Db, q: &ListQuery<'_>) -> Result<Vec<Memory>> {
    let tiers: Option<Vec<&str>> =
        (!q.tiers.is_empty()).then(|| q.tiers.iter().map(|t| t.as_str()).collect());
    let kinds: Option<Vec<&str>> =
        (!q.kinds.is_empty()).then(|| q.kinds.iter().map(|k| k.as_str()).collect());
    rows(db.query(
        &format!(
            "SELECT {COLUMNS} FROM memories
             WHERE (CASE WHEN $1::text[] IS NULL THEN tier != 'trash' ELSE tier = ANY($1) END)
               AND ($2::text[] IS NULL OR kind = ANY($2))
               AND ($3::text IS NULL OR room = $3)
             ORDER BY created_at DESC, id DESC LIMIT $4"
        ),
        &[&tiers, &kinds, &q.room, &(q.limit as i64)],
    )?)
}

pub(crate) fn live_count(db: &mut dyn Db, room: Option<&str>) -> Result<u64> {
    count(
        db,
        "SELECT count(*) FROM memories WHERE tier != 'trash' AND ($1::text IS NULL OR room = $1)",
        &[&room],
    )
}

/// Memories created per UTC day since `since`.
pub(crate) fn created_per_day(db: &mut dyn Db, since: Millis) -> Result<Vec<(i64, u64)>> {
    per_day(
        db,
        "SELECT created_at / $2, count(*) FROM memories WHERE created_at >= $1 GROUP BY 1",
        since,
    )
}

/// Rows of a `(day, count)` query over `since` and the day's length.
pub(crate) fn per_day(db: &mut dyn Db, sql: &str, since: Millis) -> Result<Vec<(i64, u64)>> {
    Ok(db
        .query(sql, &[&since, &engram_core::DAY_MS])?
        .iter()
        .map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1) as u64))
        .collect())
}

pub(crate) fn active_rooms(db: &mut dyn Db) -> Result<Vec<String>> {
    Ok(db
        .query(
            "SELECT DISTINCT room COLLATE \"C\" FROM memories WHERE tier = 'active' ORDER BY 1",
            &[],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub(crate) fn unpinned_in_room(db: &mut dyn Db, room: &str, limit: usize) -> Result<Vec<Memory>> {
    rows(db.query(
        &format!(
            "SELECT {COLUMNS} FROM memories WHERE room = $1 AND tier = 'active' AND NOT pinned
             ORDER BY id LIMIT $2"
        ),
        &[&room, &(limit as i64)],
    )?)
}

pub(crate) fn unpinned_ids(db: &mut dyn Db) -> Result<Vec<MemoryId>> {
    Ok(db
        .query(
            "SELECT id FROM memories WHERE tier = 'active' AND NOT pinned ORDER BY id",
            &[],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub(crate) fn recent(db: &mut dyn Db, room: Option<&str>, limit: usize) -> Result<Vec<Memory>> {
    rows(db.query(
        &format!(
            "SELECT {COLUMNS} FROM memories WHERE ($1::text IS NULL OR room = $1) AND tier != 'trash'
             ORDER BY created_at DESC, id DESC LIMIT $2"
        ),
        &[&room, &(limit as i64)],
    )?)
}

pub(crate) fn all_live(db: &mut dyn Db) -> Result<Vec<Memory>> {
    rows(db.query(
        &format!("SELECT {COLUMNS} FROM memories WHERE tier != 'trash' ORDER BY id"),
        &[],
    )?)
}

pub(crate) fn count_in_session(db: &mut dyn Db, session_id: &str) -> Result<u64> {
    count(
        db,
        "SELECT count(*) FROM memories WHERE session_id = $1 AND tier != 'trash'",
        &[&session_id],
    )
}

pub(crate) fn newest_in_room(db: &mut dyn Db, room: &str) -> Result<Option<Millis>> {
    Ok(opt(
        db,
        "SELECT max(created_at) FROM memories WHERE room = $1",
        &[&room],
    )?
    .and_then(|r| r.get(0)))
}

/// Inserts a memory row under `id` (an import keeping a source's ids; the caller checked
/// it free) and moves the id sequence past it, so later inserts never collide.
pub(crate) fn insert_with_id(db: &mut dyn Db, id: MemoryId, m: &NewMemory) -> Result<MemoryId> {
    let row = opt(
        db,
        "INSERT INTO memories (id, uid, content, title, kind, importance, tags, room, topic_key, pinned, tier,
                               created_at, updated_at, valid_from, valid_to, source, session_id, metadata,
                               content_hash, review_after, author)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
         RETURNING id",
        &[
            &id,
            &m.uid,
            &m.content,
            &m.title,
            &m.kind.as_str(),
            &m.importance,
            &tags_json(&m.tags),
            &m.room,
            &m.topic_key,
            &m.pinned,
            &m.tier.as_str(),
            &m.created_at,
            &m.updated_at,
            &m.valid_from,
            &m.valid_to,
            &m.source,
            &m.session_id,
            &m.metadata.to_string(),
            &content_hash(&m.content),
            &m.review_after,
            &m.author,
        ],
    )?;
    db.execute(
        "SELECT setval(pg_get_serial_sequence('memories', 'id'), greatest($1, (SELECT max(id) FROM memories)))",
        &[&id],
    )?;
    Ok(row.expect("INSERT … RETURNING returns the row").get(0))
}

/// Active episodes created before `before`, in `rooms` (every room when empty).
pub(crate) fn old_episodes(db: &mut dyn Db, before: Millis, rooms: &[String]) -> Result<u64> {
    let rooms: Option<Vec<String>> = (!rooms.is_empty()).then(|| rooms.to_vec());
    count(
        db,
        "SELECT count(*) FROM memories WHERE tier = 'active' AND kind = 'episode' AND created_at < $1
           AND ($2::text[] IS NULL OR room = ANY($2))",
        &[&before, &rooms],
    )
}
