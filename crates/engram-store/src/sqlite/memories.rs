//! The one owner of `memories` rows: the column list, the row mapper, and every insert and
//! update. Other modules read memories through these functions (or select
//! [`COLUMNS`] and map with [`from_row`]) and never spell the columns again.

use crate::Result;
use crate::storage::rows::{ActiveOrder, ActiveQuery, MemoryPatch, NewMemory, ReviewItem, Side};
use engram_core::memory::IdRef;
use engram_core::{Kind, Memory, MemoryId, Millis, Tier};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params};
use sha2::{Digest, Sha256};

/// The columns [`from_row`] reads, in its order.
pub(crate) const COLUMNS: &str = "id, uid, content, title, kind, importance, tags, room, topic_key, pinned, tier, \
     created_at, updated_at, valid_from, valid_to, source, session_id, metadata, author";

/// How many columns [`COLUMNS`] names: a query that selects more reads them from here on.
pub(crate) const COLUMN_COUNT: usize = 19;

/// A memory from a row that starts with [`COLUMNS`].
pub(crate) fn from_row(row: &Row<'_>) -> rusqlite::Result<Memory> {
    let kind: String = row.get(4)?;
    let tier: String = row.get(10)?;
    let tags: String = row.get(6)?;
    let metadata: String = row.get(17)?;
    let bad = |col: usize, what: String| {
        rusqlite::Error::FromSqlConversionFailure(col, rusqlite::types::Type::Text, what.into())
    };
    Ok(Memory {
        id: row.get(0)?,
        uid: row.get(1)?,
        content: row.get(2)?,
        title: row.get(3)?,
        kind: Kind::parse(&kind).map_err(|e| bad(4, e.to_string()))?,
        importance: row.get(5)?,
        tags: serde_json::from_str(&tags).map_err(|e| bad(6, e.to_string()))?,
        room: row.get(7)?,
        topic_key: row.get(8)?,
        pinned: row.get::<_, i64>(9)? != 0,
        tier: Tier::parse(&tier).map_err(|e| bad(10, e.to_string()))?,
        created_at: row.get(11)?,
        updated_at: row.get(12)?,
        valid_from: row.get(13)?,
        valid_to: row.get(14)?,
        source: row.get(15)?,
        session_id: row.get(16)?,
        metadata: serde_json::from_str(&metadata).map_err(|e| bad(17, e.to_string()))?,
        author: row.get(18)?,
    })
}

/// The dedup hash of a text (normalised: whitespace and case aside), kept beside it.
pub(crate) fn content_hash(content: &str) -> String {
    let digest = Sha256::digest(engram_core::text::normalize_for_dedup(content).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// `?, ?, ?` for `n` values.
pub(crate) fn placeholders(n: usize) -> String {
    vec!["?"; n].join(", ")
}

fn tags_json(tags: &[String]) -> String {
    serde_json::to_string(tags).expect("tags serialise")
}

pub(crate) fn id_of(conn: &Connection, r: &IdRef) -> Result<Option<MemoryId>> {
    Ok(match r {
        IdRef::Id(id) => conn
            .prepare_cached("SELECT id FROM memories WHERE id = ?1")?
            .query_row([id], |row| row.get(0))
            .optional()?,
        IdRef::Uid(uid) => conn
            .prepare_cached("SELECT id FROM memories WHERE uid = ?1")?
            .query_row([uid], |row| row.get(0))
            .optional()?,
    })
}

pub(crate) fn by_ref(conn: &Connection, r: &IdRef) -> Result<Option<Memory>> {
    Ok(match r {
        IdRef::Id(id) => by_id(conn, *id)?,
        IdRef::Uid(uid) => conn
            .prepare_cached(&format!("SELECT {COLUMNS} FROM memories WHERE uid = ?1"))?
            .query_row([uid], from_row)
            .optional()?,
    })
}

pub(crate) fn by_id(conn: &Connection, id: MemoryId) -> Result<Option<Memory>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"))?
        .query_row([id], from_row)
        .optional()?)
}

/// Many memories by id, 500 to a statement.
pub(crate) fn many(conn: &Connection, ids: &[MemoryId]) -> Result<Vec<Memory>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT {COLUMNS} FROM memories WHERE id IN ({})",
            placeholders(chunk.len())
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(chunk), from_row)?;
        for r in rows {
            out.push(r?);
        }
    }
    Ok(out)
}

pub(crate) fn exists(conn: &Connection, id: MemoryId) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM memories WHERE id = ?1)")?
        .query_row([id], |r| r.get(0))?)
}

pub(crate) fn review_after(conn: &Connection, id: MemoryId) -> Result<Option<Millis>> {
    Ok(conn
        .prepare_cached("SELECT review_after FROM memories WHERE id = ?1")?
        .query_row([id], |r| r.get(0))?)
}

pub(crate) fn due_for_review(
    conn: &Connection,
    room: Option<&str>,
    now: Millis,
    limit: usize,
) -> Result<Vec<ReviewItem>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, review_after FROM memories
         WHERE tier = 'active' AND review_after IS NOT NULL AND review_after <= ?1
           AND (?2 IS NULL OR room = ?2)
         ORDER BY review_after, id LIMIT ?3"
    ))?;
    let rows = stmt.query_map(params![now, room, limit as i64], |r| {
        Ok((from_row(r)?, r.get::<_, i64>(COLUMN_COUNT)?))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (m, due) = row?;
        out.push(ReviewItem {
            id: m.id,
            title: m.title,
            kind: m.kind,
            room: m.room,
            excerpt: m.content.chars().take(200).collect(),
            review_after: due,
        });
    }
    Ok(out)
}

pub(crate) fn beside(
    conn: &Connection,
    anchor: &Memory,
    side: Side,
    limit: usize,
) -> Result<Vec<Memory>> {
    let (cond, key): (&str, &str) = match &anchor.session_id {
        Some(s) => ("session_id = ?1", s),
        None => ("room = ?1", &anchor.room),
    };
    let (cmp, order) = match side {
        Side::Before => ("<", "DESC"),
        Side::After => (">", ""),
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM memories WHERE {cond} AND id {cmp} ?2 AND tier != 'trash' ORDER BY id {order} LIMIT ?3"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params![key, anchor.id, limit as i64], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn active(conn: &Connection, q: &ActiveQuery<'_>) -> Result<Vec<Memory>> {
    let cols = COLUMNS
        .split(", ")
        .map(|c| format!("m.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let pinned = if q.pinned_only {
        " AND m.pinned = 1"
    } else {
        ""
    };
    let mut sql = format!(
        "SELECT {cols} FROM memories m WHERE m.tier = 'active'{pinned} AND m.kind IN ({})",
        placeholders(q.kinds.len())
    );
    let mut values: Vec<Value> = q
        .kinds
        .iter()
        .map(|k| k.as_str().to_string().into())
        .collect();
    if let Some(r) = q.rooms {
        sql.push_str(&format!(" AND m.room IN ({})", placeholders(r.len())));
        values.extend(r.iter().map(|x| x.clone().into()));
    }
    let order = match q.order {
        ActiveOrder::Id => "m.id",
        ActiveOrder::IdDesc => "m.id DESC",
        ActiveOrder::Updated => "m.updated_at DESC",
        ActiveOrder::UpdatedThenId => "m.updated_at DESC, m.id DESC",
        ActiveOrder::ImportanceThenId => "m.importance DESC, m.id DESC",
        ActiveOrder::ImportanceThenUpdated => "m.importance DESC, m.updated_at DESC",
    };
    sql.push_str(&format!(" ORDER BY {order} LIMIT {}", q.limit));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(values), from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn component_failures(
    conn: &Connection,
    room: &str,
    component: &str,
    limit: usize,
) -> Result<Vec<Memory>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memories
         WHERE room = ?1 AND kind IN ('failure', 'bugfix') AND tier != 'trash'
           AND json_extract(metadata, '$.component') = ?2
         ORDER BY created_at DESC, id DESC LIMIT ?3"
    ))?;
    let rows = stmt.query_map(params![room, component, limit as i64], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The oldest active memory of `room` with this content (whitespace and case aside): the
/// hash narrows, the normalised texts decide.
pub(crate) fn active_duplicate(
    conn: &Connection,
    room: &str,
    content: &str,
) -> Result<Option<MemoryId>> {
    let normalized = engram_core::text::normalize_for_dedup(content);
    let mut stmt = conn.prepare_cached(
        "SELECT id, content FROM memories WHERE content_hash = ?1 AND room = ?2 AND tier = 'active' ORDER BY id",
    )?;
    let rows = stmt.query_map(params![content_hash(content), room], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (id, c) = row?;
        if engram_core::text::normalize_for_dedup(&c) == normalized {
            return Ok(Some(id));
        }
    }
    Ok(None)
}

/// The topic's memory a topic-keyed write updates: active or archived, latest first.
pub(crate) fn topic_memory(
    conn: &Connection,
    topic_key: &str,
    room: &str,
) -> Result<Option<MemoryId>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM memories WHERE topic_key = ?1 AND room = ?2 AND tier IN ('active', 'archived')
             ORDER BY updated_at DESC, id DESC LIMIT 1",
        )?
        .query_row(params![topic_key, room], |r| r.get(0))
        .optional()?)
}

/// Inserts a memory row; returns its id.
pub(crate) fn insert(conn: &Connection, m: &NewMemory) -> Result<MemoryId> {
    insert_with_id(conn, None, m)
}

/// Inserts a memory row under `id` when one is given (an import keeping the exporting
/// store's ids, checked free by the caller), else under the next free id; returns it.
/// The one `INSERT INTO memories` outside the migrations.
pub(crate) fn insert_with_id(
    conn: &Connection,
    id: Option<MemoryId>,
    m: &NewMemory,
) -> Result<MemoryId> {
    conn.prepare_cached(
        "INSERT INTO memories (id, uid, content, title, kind, importance, tags, room, topic_key, pinned, tier,
                               created_at, updated_at, valid_from, valid_to, source, session_id, metadata,
                               content_hash, review_after, author)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
    )?
    .execute(params![
        id,
        m.uid,
        m.content,
        m.title,
        m.kind.as_str(),
        m.importance,
        tags_json(&m.tags),
        m.room,
        m.topic_key,
        m.pinned as i64,
        m.tier.as_str(),
        m.created_at,
        m.updated_at,
        m.valid_from,
        m.valid_to,
        m.source,
        m.session_id,
        m.metadata.to_string(),
        content_hash(&m.content),
        m.review_after,
        m.author,
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Applies a patch; `false` when no row matched.
pub(crate) fn patch(conn: &Connection, id: MemoryId, p: &MemoryPatch) -> Result<bool> {
    let mut sets: Vec<&str> = Vec::new();
    let mut values: Vec<Value> = vec![Value::Integer(id)];
    let mut set = |col: &'static str, v: Value| {
        sets.push(col);
        values.push(v);
    };
    let opt_text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::Text);
    let opt_int = |v: &Option<i64>| v.map_or(Value::Null, Value::Integer);
    if let Some(c) = &p.content {
        set("content", Value::Text(c.clone()));
        set("content_hash", Value::Text(content_hash(c)));
    }
    if let Some(t) = &p.title {
        set("title", opt_text(t));
    }
    if let Some(k) = p.kind {
        set("kind", Value::Text(k.as_str().into()));
    }
    if let Some(i) = p.importance {
        set("importance", Value::Real(i));
    }
    if let Some(t) = &p.tags {
        set("tags", Value::Text(tags_json(t)));
    }
    if let Some(r) = &p.room {
        set("room", Value::Text(r.clone()));
    }
    if let Some(t) = &p.topic_key {
        set("topic_key", opt_text(t));
    }
    if let Some(b) = p.pinned {
        set("pinned", Value::Integer(b as i64));
    }
    if let Some(t) = p.tier {
        set("tier", Value::Text(t.as_str().into()));
    }
    if let Some(t) = p.created_at {
        set("created_at", Value::Integer(t));
    }
    if let Some(t) = p.valid_from {
        set("valid_from", Value::Integer(t));
    }
    if let Some(s) = &p.source {
        set("source", Value::Text(s.clone()));
    }
    if let Some(t) = p.updated_at {
        set("updated_at", Value::Integer(t));
    }
    if let Some(t) = &p.valid_to {
        set("valid_to", opt_int(t));
    }
    if let Some(s) = &p.session_id {
        set("session_id", opt_text(s));
    }
    if let Some(m) = &p.metadata {
        set("metadata", Value::Text(m.to_string()));
    }
    if let Some(r) = &p.review_after {
        set("review_after", opt_int(r));
    }
    if sets.is_empty() {
        return exists(conn, id);
    }
    let assignments: Vec<String> = sets
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{c} = ?{}", i + 2))
        .collect();
    let mut sql = format!(
        "UPDATE memories SET {} WHERE id = ?1",
        assignments.join(", ")
    );
    if let Some(t) = p.if_tier {
        sql.push_str(&format!(" AND tier = ?{}", values.len() + 1));
        values.push(Value::Text(t.as_str().into()));
    }
    let n = conn
        .prepare_cached(&sql)?
        .execute(rusqlite::params_from_iter(values))?;
    Ok(n > 0)
}

/// Moves every memory of room `from` into `to`; returns how many moved.
pub(crate) fn move_room(conn: &Connection, from: &str, to: &str) -> Result<u64> {
    Ok(conn
        .prepare_cached("UPDATE memories SET room = ?2 WHERE room = ?1")?
        .execute(params![from, to])? as u64)
}

/// Deletes the memory row itself (its dependants first: see `sqlite::delete_memory`).
pub(crate) fn delete(conn: &Connection, id: MemoryId) -> Result<()> {
    conn.prepare_cached("DELETE FROM memories WHERE id = ?1")?
        .execute([id])?;
    Ok(())
}

/// A browsing list: the filters as placeholders, newest first.
pub(crate) fn list(
    conn: &Connection,
    q: &crate::storage::rows::ListQuery<'_>,
) -> Result<Vec<Memory>> {
    let mut sql = format!("SELECT {COLUMNS} FROM memories WHERE 1 = 1");
    let mut args: Vec<String> = Vec::new();
    if q.tiers.is_empty() {
        sql.push_str(" AND tier != 'trash'");
    } else {
        sql.push_str(&format!(" AND tier IN ({})", placeholders(q.tiers.len())));
        args.extend(q.tiers.iter().map(|t| t.as_str().to_string()));
    }
    if !q.kinds.is_empty() {
        sql.push_str(&format!(" AND kind IN ({})", placeholders(q.kinds.len())));
        args.extend(q.kinds.iter().map(|k| k.as_str().to_string()));
    }
    if let Some(r) = q.room {
        sql.push_str(" AND room = ?");
        args.push(r.to_string());
    }
    sql.push_str(&format!(
        " ORDER BY created_at DESC, id DESC LIMIT {}",
        q.limit
    ));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args.iter()), from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Memories outside the trash, in `room` or in all.
pub(crate) fn live_count(conn: &Connection, room: Option<&str>) -> Result<u64> {
    Ok(conn
        .prepare_cached(
            "SELECT count(*) FROM memories WHERE tier != 'trash' AND (?1 IS NULL OR room = ?1)",
        )?
        .query_row([room], |r| r.get::<_, i64>(0))? as u64)
}

/// Memories created per UTC day since `since`.
pub(crate) fn created_per_day(conn: &Connection, since: Millis) -> Result<Vec<(i64, u64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT created_at / ?2, count(*) FROM memories WHERE created_at >= ?1 GROUP BY 1",
    )?;
    let rows = stmt.query_map(params![since, engram_core::DAY_MS], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u64))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every room that holds an active memory, by name.
pub(crate) fn active_rooms(conn: &Connection) -> Result<Vec<String>> {
    let mut stmt =
        conn.prepare("SELECT DISTINCT room FROM memories WHERE tier = 'active' ORDER BY room")?;
    let rooms = stmt.query_map([], |r| r.get(0))?;
    Ok(rooms.collect::<rusqlite::Result<_>>()?)
}

/// Active, unpinned memories of a room, oldest id first.
pub(crate) fn unpinned_in_room(conn: &Connection, room: &str, limit: usize) -> Result<Vec<Memory>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM memories WHERE room = ?1 AND tier = 'active' AND pinned = 0
         ORDER BY id LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![room, limit as i64], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Ids of every active, unpinned memory, ascending.
pub(crate) fn unpinned_ids(conn: &Connection) -> Result<Vec<MemoryId>> {
    let mut stmt =
        conn.prepare("SELECT id FROM memories WHERE tier = 'active' AND pinned = 0 ORDER BY id")?;
    let rows = stmt.query_map([], |r| r.get(0))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Memories of `room` (every room when `None`) outside the trash, newest first.
pub(crate) fn recent(conn: &Connection, room: Option<&str>, limit: usize) -> Result<Vec<Memory>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM memories WHERE (?1 IS NULL OR room = ?1) AND tier != 'trash'
         ORDER BY created_at DESC, id DESC LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![room, limit as i64], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Every memory outside the trash, oldest first.
pub(crate) fn all_live(conn: &Connection) -> Result<Vec<Memory>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM memories WHERE tier != 'trash' ORDER BY id"
    ))?;
    let rows = stmt.query_map([], from_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// How many memories a session holds (outside the trash).
pub(crate) fn count_in_session(conn: &Connection, session_id: &str) -> Result<u64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM memories WHERE session_id = ?1 AND tier != 'trash'",
        [session_id],
        |r| r.get::<_, i64>(0),
    )? as u64)
}

/// When the newest memory of a room was created.
pub(crate) fn newest_in_room(conn: &Connection, room: &str) -> Result<Option<Millis>> {
    Ok(conn.query_row(
        "SELECT max(created_at) FROM memories WHERE room = ?1",
        [room],
        |r| r.get(0),
    )?)
}

/// Memories after id `after` with their review dates, by id (export, the vault's full sync).
pub(crate) fn page(
    conn: &Connection,
    after: MemoryId,
    limit: usize,
) -> Result<Vec<(Memory, Option<Millis>)>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS}, review_after FROM memories WHERE id > ?1 ORDER BY id LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![after, limit as i64], |r| {
        Ok((from_row(r)?, r.get::<_, Option<Millis>>(COLUMN_COUNT)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Active episodes created before `before`, in `rooms` (every room when empty).
pub(crate) fn old_episodes(conn: &Connection, before: Millis, rooms: &[String]) -> Result<u64> {
    let mut n = 0u64;
    if rooms.is_empty() {
        n = conn.query_row(
            "SELECT count(*) FROM memories WHERE tier = 'active' AND kind = 'episode' AND created_at < ?1",
            params![before],
            |r| r.get::<_, i64>(0),
        )? as u64;
    } else {
        for room in rooms {
            n += conn.query_row(
                "SELECT count(*) FROM memories WHERE tier = 'active' AND kind = 'episode' AND created_at < ?1 AND room = ?2",
                params![before, room],
                |r| r.get::<_, i64>(0),
            )? as u64;
        }
    }
    Ok(n)
}
