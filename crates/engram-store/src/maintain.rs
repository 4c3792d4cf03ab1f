//! Keeping the store clean over time, and the agent's verdicts on related memories.
//!
//! * `maintain`: consolidate clusters of near-identical memories into their strongest
//!   member (the others archived with `derived_from` links, their words folded into the
//!   keeper, nothing deleted), then archive memories whose strength (seed A's formula) fell
//!   below the threshold unless a strong linked neighbour protects them (A's chain
//!   protection). Every run is logged in `maintenance_runs`; `dry_run` reports the same
//!   plan and changes nothing.
//! * B's `consolidation_candidates` and `skill_candidates` (clusters for the agent to
//!   summarise), and `mark_consolidated`.
//! * C's review lifecycle (`review_after` by kind) and judgments (`judge`, `compare`).

use crate::resolution::{load_by_id, write_revision};
use crate::store::{MEMORY_COLUMNS, add_event, index_text, row_to_memory};
use crate::{Result, Store};
use engram_core::dynamics::{self, DynamicsModel};
use engram_core::memory::IdRef;
use engram_core::{EventKind, InputError, Kind, LinkKind, Memory, MemoryId, Millis, Tier};
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// One cluster consolidated (or to be).
#[derive(Debug, Clone, Serialize)]
pub struct Consolidation {
    pub room: String,
    pub keeper: MemoryId,
    pub archived: Vec<MemoryId>,
}

/// One memory archived for weakness (or to be).
#[derive(Debug, Clone, Serialize)]
pub struct Archival {
    pub id: MemoryId,
    pub strength: f64,
}

/// What a maintenance run did, or would do.
#[derive(Debug, Clone, Serialize)]
pub struct MaintenanceReport {
    pub dry_run: bool,
    #[serde(with = "engram_core::time::rfc3339")]
    pub at: Millis,
    pub consolidated: Vec<Consolidation>,
    pub archived: Vec<Archival>,
    /// Weak memories kept because a linked neighbour is strong.
    pub protected: Vec<MemoryId>,
    /// Memories whose review date has passed (C), at most 50.
    pub due_for_review: Vec<MemoryId>,
    pub examined: usize,
}

/// A cluster offered to the agent (B's consolidation and skill candidates).
#[derive(Debug, Clone, Serialize)]
pub struct Cluster {
    pub room: String,
    pub ids: Vec<MemoryId>,
    /// The first 120 characters of each member, in `ids` order.
    pub excerpts: Vec<String>,
}

/// A judgment row (C's memory relation).
#[derive(Debug, Clone, Serialize)]
pub struct Judgment {
    pub judgment_id: String,
    pub src: MemoryId,
    pub dst: MemoryId,
    pub relation: Option<String>,
    pub status: String,
    pub score: Option<f64>,
    pub reason: Option<String>,
    pub evidence: Option<String>,
    pub confidence: Option<f64>,
    pub actor: Option<String>,
    pub actor_kind: Option<String>,
    pub model: Option<String>,
    pub session_id: Option<String>,
}

/// A memory due for review.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewItem {
    pub id: MemoryId,
    pub title: Option<String>,
    pub kind: Kind,
    pub room: String,
    pub excerpt: String,
    #[serde(with = "engram_core::time::rfc3339")]
    pub review_after: Millis,
}

/// C's verdicts. `supersedes` also supersedes `dst` in the store; the others become links
/// (`not_conflict` records the verdict only, so the pair is not offered again).
pub const RELATIONS: &[&str] = &[
    "related",
    "compatible",
    "scoped",
    "conflicts_with",
    "supersedes",
    "not_conflict",
];

/// Memories examined per room per maintenance run: keeps one run bounded on huge stores.
const MAX_PER_ROOM: usize = 5000;

impl Store {
    /// Runs maintenance (or, with `dry_run`, reports what it would do) and logs the run.
    pub fn maintain(&mut self, dry_run: bool) -> Result<MaintenanceReport> {
        let started = self.now();
        self.refresh_index()?;
        let rooms = self.rooms_to_maintain(None)?;
        let mut report = MaintenanceReport {
            dry_run,
            at: started,
            consolidated: Vec::new(),
            archived: Vec::new(),
            protected: Vec::new(),
            due_for_review: Vec::new(),
            examined: 0,
        };
        for room in &rooms {
            let clusters = self.similar_clusters(room, None, Threshold::Consolidate, false)?;
            for ids in clusters {
                let c = self.consolidate(room, &ids, dry_run)?;
                report.consolidated.push(c);
            }
        }
        let (archived, protected, examined) = self.archive_weak(dry_run)?;
        report.archived = archived;
        report.protected = protected;
        report.examined = examined;
        report.due_for_review = self
            .review_list(None, 50)?
            .into_iter()
            .map(|r| r.id)
            .collect();
        let finished = self.now();
        let json = serde_json::to_string(&report).expect("report serialises");
        self.conn.execute(
            "INSERT INTO maintenance_runs (started_at, finished_at, dry_run, report) VALUES (?1, ?2, ?3, ?4)",
            params![started, finished, dry_run as i64, json],
        )?;
        if !dry_run {
            // The change log only has to reach back to what the vault has written.
            if self.vault_dir().is_none() {
                self.conn.execute("DELETE FROM changes", [])?;
            } else {
                self.conn.execute(
                    "DELETE FROM changes WHERE seq <= COALESCE(
                        (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'vault_seq'), 0)",
                    [],
                )?;
            }
            self.conn.execute(
                "INSERT INTO meta (key, value) VALUES ('last_maintenance', ?1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [finished.to_string()],
            )?;
        }
        Ok(report)
    }

    /// The named room, or every room that holds an active memory.
    fn rooms_to_maintain(&self, room: Option<&str>) -> Result<Vec<String>> {
        if let Some(r) = room {
            return Ok(vec![r.to_string()]);
        }
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT room FROM memories WHERE tier = 'active' ORDER BY room")?;
        let rooms = stmt.query_map([], |r| r.get(0))?;
        Ok(rooms.collect::<rusqlite::Result<_>>()?)
    }

    /// Seed A's `consolidate_memory`: consolidation only, now, in one room (or all).
    pub fn consolidate_now(&mut self, room: Option<&str>) -> Result<Vec<Consolidation>> {
        self.refresh_index()?;
        let rooms = self.rooms_to_maintain(room)?;
        let mut out = Vec::new();
        for room in &rooms {
            for ids in self.similar_clusters(room, None, Threshold::Consolidate, false)? {
                out.push(self.consolidate(room, &ids, false)?);
            }
        }
        Ok(out)
    }

    /// Seed C's `mem_merge_projects`: moves every memory, session and prompt of the `from`
    /// rooms into `to`. Returns how many memories moved.
    pub fn merge_rooms(&mut self, from: &[String], to: &str) -> Result<u64> {
        let to = engram_core::room::normalize_room(to)?;
        let mut names = Vec::new();
        for f in from {
            let f = engram_core::room::normalize_room(f)?;
            if f != to && !names.contains(&f) {
                names.push(f);
            }
        }
        if names.is_empty() {
            return Err(InputError::new("from", "name at least one room other than `to`").into());
        }
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut moved = 0;
        for f in &names {
            moved += tx.execute(
                "UPDATE memories SET room = ?2 WHERE room = ?1",
                params![f, to],
            )? as u64;
            tx.execute(
                "UPDATE sessions SET room = ?2 WHERE room = ?1",
                params![f, to],
            )?;
            tx.execute(
                "UPDATE prompts SET room = ?2 WHERE room = ?1",
                params![f, to],
            )?;
        }
        tx.commit()?;
        Ok(moved)
    }

    /// When maintenance last ran for real (Unix ms), if ever.
    pub fn last_maintenance(&self) -> Result<Option<Millis>> {
        let v: Option<String> = self
            .conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'last_maintenance'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        Ok(v.and_then(|s| s.parse().ok()))
    }

    /// Whether a long-running server should run maintenance now.
    pub fn maintenance_due(&self) -> Result<bool> {
        let hours = self.config.maintenance_interval_hours;
        if hours <= 0.0 {
            return Ok(false);
        }
        Ok(match self.last_maintenance()? {
            None => true,
            Some(t) => (self.now() - t) as f64 >= hours * 3_600_000.0,
        })
    }

    /// The logged maintenance runs, newest first.
    pub fn maintenance_log(&self, limit: usize) -> Result<Vec<serde_json::Value>> {
        let mut stmt = self
            .conn
            .prepare("SELECT report FROM maintenance_runs ORDER BY id DESC LIMIT ?1")?;
        let rows = stmt.query_map([limit as i64], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(serde_json::from_str(&r?).unwrap_or(serde_json::Value::Null));
        }
        Ok(out)
    }

    /// Greedy clusters of active memories in `room` (of `kind`, when given) whose members
    /// are at least `threshold` close to the cluster's first member and do not contradict
    /// it. Ids in ascending order seed clusters (B's algorithm); clusters have ≥ 2 members.
    fn similar_clusters(
        &mut self,
        room: &str,
        kind: Option<Kind>,
        threshold: Threshold,
        episodes_only_older_than: bool,
    ) -> Result<Vec<Vec<MemoryId>>> {
        let now = self.now();
        let min_age = (self.config.consolidate_min_age_days * engram_core::DAY_MS as f64) as i64;
        let members: Vec<Memory> = {
            let mut stmt = self.conn.prepare(&format!(
                "SELECT {MEMORY_COLUMNS} FROM memories WHERE room = ?1 AND tier = 'active' AND pinned = 0
                 ORDER BY id LIMIT ?2"
            ))?;
            stmt.query_map(params![room, MAX_PER_ROOM as i64], row_to_memory)?
                .collect::<rusqlite::Result<_>>()?
        };
        let members: Vec<Memory> = members
            .into_iter()
            .filter(|m| match kind {
                Some(k) => m.kind == k,
                None => crate::resolution::participates(m.kind),
            })
            .filter(|m| !episodes_only_older_than || now - m.created_at >= min_age)
            .collect();
        let allowed: HashSet<MemoryId> = members.iter().map(|m| m.id).collect();
        let (cos_min, lex_min) = match threshold {
            Threshold::Consolidate => (
                self.config.consolidate_cosine,
                self.config.consolidate_lexical,
            ),
            Threshold::Skill => (
                self.config.consolidate_cosine + 0.4,
                self.config.consolidate_lexical + 0.1,
            ),
        };
        let mut used: HashSet<MemoryId> = HashSet::new();
        let mut clusters = Vec::new();
        for m in &members {
            if used.contains(&m.id) {
                continue;
            }
            let v = self.vector_of(m.id);
            let mut cluster = vec![m.id];
            let kinds = kind.map(|k| vec![k]);
            for n in
                self.neighbours(&m.content, v.as_deref(), room, Some(m.id), kinds.as_deref())?
            {
                let id = n.memory.id;
                if used.contains(&id) || !allowed.contains(&id) {
                    continue;
                }
                // Either restating the other (one's terms nearly all in the other) counts.
                let restates = n.sim.lexical >= 0.5
                    && (n.sim.contained >= engram_core::resolve::CONTAINED
                        || engram_core::resolve::containment(
                            &engram_core::resolve::terms(&m.content),
                            &engram_core::resolve::terms(&n.memory.content),
                        ) >= engram_core::resolve::CONTAINED);
                let close = n.sim.lexical >= lex_min
                    || restates
                    || n.sim.cosine.is_some_and(|c| c >= cos_min);
                let at_odds = engram_core::contradiction::detect(&m.content, &n.memory.content)
                    .is_some()
                    || engram_core::contradiction::detect(&n.memory.content, &m.content).is_some();
                // Two releases, invoices or tickets that differ only in their identifiers are
                // two things, as on the write path: folding one into the other would lose it.
                let two_things =
                    engram_core::identifiers::differ(&m.content, &n.memory.content).is_some();
                if close && !at_odds && !two_things && (kind.is_some() || n.memory.kind == m.kind) {
                    cluster.push(id);
                }
            }
            if cluster.len() >= 2 {
                used.extend(cluster.iter().copied());
                cluster.sort_unstable();
                clusters.push(cluster);
            }
        }
        Ok(clusters)
    }

    /// Folds a cluster into its strongest member (highest importance, then most reinforced,
    /// then newest); the others are archived with `derived_from` links from the keeper.
    fn consolidate(
        &mut self,
        room: &str,
        ids: &[MemoryId],
        dry_run: bool,
    ) -> Result<Consolidation> {
        let mems = self.load_many(ids)?;
        let reinforces = self.traces_of(ids)?;
        let count = |id: MemoryId| {
            reinforces
                .get(&id)
                .map(|t| t.iter().filter(|t| t.kind == EventKind::Reinforce).count())
                .unwrap_or(0)
        };
        let keeper = mems
            .iter()
            .max_by(|a, b| {
                a.importance
                    .total_cmp(&b.importance)
                    .then(count(a.id).cmp(&count(b.id)))
                    .then(a.id.cmp(&b.id))
            })
            .expect("clusters have members")
            .clone();
        let others: Vec<&Memory> = mems.iter().filter(|m| m.id != keeper.id).collect();
        let out = Consolidation {
            room: room.to_string(),
            keeper: keeper.id,
            archived: others.iter().map(|m| m.id).collect(),
        };
        if dry_run {
            return Ok(out);
        }
        let mut text = keeper.content.clone();
        for o in &others {
            if let Some(t) = engram_core::resolve::merge_text(&text, &o.content)
                && engram_core::limits::check_content("content", &t).is_ok()
            {
                text = t;
            }
        }
        let vector = if text != keeper.content {
            self.embed_document(&crate::ops::embed_text(keeper.title.as_deref(), &text))
        } else {
            None
        };
        let now = self.now();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have changed the cluster since it was read: act on what is
        // still active only.
        let Some(k) = load_by_id(&tx, keeper.id)?.filter(|m| m.tier == Tier::Active) else {
            return Ok(out);
        };
        if text != k.content && k.content == keeper.content {
            write_revision(&tx, &k, "consolidate", now, None)?;
            let importance = mems
                .iter()
                .map(|m| m.importance)
                .fold(k.importance, f64::max);
            tx.execute(
                "UPDATE memories SET content = ?2, importance = ?3, content_hash = ?4, updated_at = ?5 WHERE id = ?1",
                params![k.id, text, importance, crate::ops::content_hash(&text), now],
            )?;
            index_text(
                &tx,
                k.id,
                k.title.as_deref(),
                &text,
                &k.tags,
                k.metadata.get("context").and_then(|c| c.as_str()),
            )?;
            tx.execute("DELETE FROM embeddings WHERE memory_id = ?1", [k.id])?;
            if let Some((model, v)) = &vector {
                crate::vectors::write_embedding(&tx, k.id, model, v)?;
            }
        }
        let mut archived = Vec::new();
        for o in &others {
            let n = tx.execute(
                "UPDATE memories SET tier = 'archived', updated_at = ?2 WHERE id = ?1 AND tier = 'active'",
                params![o.id, now],
            )?;
            if n == 1 {
                crate::ops::link_in(&tx, k.id, o.id, LinkKind::DerivedFrom, 1.0, now)?;
                add_event(
                    &tx,
                    o.id,
                    EventKind::Update,
                    0.0,
                    now,
                    None,
                    Some(&format!("consolidated into #{}", k.id)),
                )?;
                archived.push(o.id);
            }
        }
        tx.commit()?;
        Ok(Consolidation { archived, ..out })
    }

    /// Archives active, unpinned memories whose strength fell below `archive_strength`,
    /// unless a linked neighbour is at or above it. Returns (archived, protected, examined).
    fn archive_weak(&mut self, dry_run: bool) -> Result<(Vec<Archival>, Vec<MemoryId>, usize)> {
        let now = self.now();
        let threshold = self.config.archive_strength;
        let ids: Vec<MemoryId> = {
            let mut stmt = self.conn.prepare(
                "SELECT id FROM memories WHERE tier = 'active' AND pinned = 0 ORDER BY id",
            )?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut strength: HashMap<MemoryId, f64> = HashMap::new();
        for chunk in ids.chunks(500) {
            let traces = self.traces_of(chunk)?;
            for m in self.load_many(chunk)? {
                let s = dynamics::activation(
                    DynamicsModel::Strength,
                    traces.get(&m.id).map(Vec::as_slice).unwrap_or(&[]),
                    now,
                    m.importance,
                    m.kind.decay_class(),
                    &self.config.actr,
                );
                strength.insert(m.id, s);
            }
        }
        let weak: Vec<MemoryId> = ids
            .iter()
            .copied()
            .filter(|id| strength[id] < threshold)
            .collect();
        let mut archived = Vec::new();
        let mut protected = Vec::new();
        for id in weak {
            let neighbours: Vec<MemoryId> = {
                let mut stmt = self.conn.prepare_cached(
                    "SELECT l.dst FROM links l JOIN memories m ON m.id = l.dst WHERE l.src = ?1 AND m.tier = 'active'
                     UNION SELECT l.src FROM links l JOIN memories m ON m.id = l.src WHERE l.dst = ?1 AND m.tier = 'active'",
                )?;
                stmt.query_map([id], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?
            };
            if neighbours
                .iter()
                .any(|n| strength.get(n).is_some_and(|s| *s >= threshold))
            {
                protected.push(id);
                continue;
            }
            archived.push(Archival {
                id,
                strength: (strength[&id] * 10_000.0).round() / 10_000.0,
            });
        }
        if !dry_run && !archived.is_empty() {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            for a in &archived {
                tx.execute(
                    "UPDATE memories SET tier = 'archived', updated_at = ?2 WHERE id = ?1 AND tier = 'active'",
                    params![a.id, now],
                )?;
                add_event(
                    &tx,
                    a.id,
                    EventKind::Update,
                    0.0,
                    now,
                    None,
                    Some(&format!(
                        "archived by maintenance: strength {:.4} < {threshold}",
                        a.strength
                    )),
                )?;
            }
            tx.commit()?;
        }
        Ok((archived, protected, ids.len()))
    }

    /// B's consolidation candidates: clusters of active episodes at least
    /// `consolidate_min_age_days` old, for the agent to summarise into one memory.
    pub fn consolidation_candidates(&mut self, room: Option<&str>) -> Result<Vec<Cluster>> {
        self.clusters_of(room, Some(Kind::Episode), Threshold::Consolidate, true, 2)
    }

    /// B's skill candidates: clusters of at least three closely similar memories of one
    /// kind, any age, that could become one strategy or pattern.
    pub fn skill_candidates(&mut self, room: Option<&str>) -> Result<Vec<Cluster>> {
        let mut out = Vec::new();
        for kind in Kind::ALL {
            if matches!(kind, Kind::Handoff | Kind::Progress) {
                continue;
            }
            out.extend(self.clusters_of(room, Some(*kind), Threshold::Skill, false, 3)?);
        }
        Ok(out)
    }

    fn clusters_of(
        &mut self,
        room: Option<&str>,
        kind: Option<Kind>,
        threshold: Threshold,
        aged: bool,
        min_size: usize,
    ) -> Result<Vec<Cluster>> {
        self.refresh_index()?;
        let rooms = self.rooms_to_maintain(room)?;
        let mut out = Vec::new();
        for room in rooms {
            for ids in self.similar_clusters(&room, kind, threshold, aged)? {
                if ids.len() < min_size {
                    continue;
                }
                let excerpts = self
                    .load_many(&ids)?
                    .into_iter()
                    .map(|m| m.content.chars().take(120).collect())
                    .collect();
                out.push(Cluster {
                    room: room.clone(),
                    ids,
                    excerpts,
                });
            }
        }
        Ok(out)
    }

    /// B's `mark_consolidated`: the episodes were summarised into `into`; each gets a
    /// `derived_from` link from it and moves to the archive (B's cold tier).
    pub fn mark_consolidated(&mut self, episodes: &[IdRef], into: &IdRef) -> Result<Vec<MemoryId>> {
        if episodes.is_empty() {
            return Err(InputError::new("episode_ids", "give at least one id").into());
        }
        if episodes.len() > engram_core::limits::MAX_IDS_PER_CALL {
            return Err(InputError::new(
                "episode_ids",
                format!("the limit is {} ids", engram_core::limits::MAX_IDS_PER_CALL),
            )
            .into());
        }
        let now = self.now();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let target = crate::store::resolve_in(&tx, into, "new_memory_id")?;
        let mut done = Vec::new();
        for e in episodes {
            let id = crate::store::resolve_in(&tx, e, "episode_ids")?;
            if id == target {
                return Err(
                    InputError::new("episode_ids", format!("#{id} is the summary itself")).into(),
                );
            }
            crate::ops::link_in(&tx, target, id, LinkKind::DerivedFrom, 1.0, now)?;
            tx.execute(
                "UPDATE memories SET tier = 'archived', updated_at = ?2 WHERE id = ?1 AND tier = 'active'",
                params![id, now],
            )?;
            add_event(
                &tx,
                id,
                EventKind::Update,
                0.0,
                now,
                None,
                Some(&format!("consolidated into #{target}")),
            )?;
            done.push(id);
        }
        tx.commit()?;
        Ok(done)
    }

    /// C's review list: active memories whose review date has passed, oldest due first.
    pub fn review_list(&self, room: Option<&str>, limit: usize) -> Result<Vec<ReviewItem>> {
        let now = self.now();
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {MEMORY_COLUMNS}, review_after FROM memories
             WHERE tier = 'active' AND review_after IS NOT NULL AND review_after <= ?1
               AND (?2 IS NULL OR room = ?2)
             ORDER BY review_after, id LIMIT ?3"
        ))?;
        let rows = stmt.query_map(params![now, room, limit as i64], |r| {
            Ok((row_to_memory(r)?, r.get::<_, i64>(18)?))
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

    /// C's `mark_reviewed`: the memory is current; its next review is due after the same
    /// period again. Returns the new date (none for kinds without reviews).
    pub fn mark_reviewed(&mut self, id: &IdRef) -> Result<Option<Millis>> {
        let now = self.now();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let m = crate::store::load_in(&tx, id, "id")?;
        let next = crate::ops::review_after(m.kind, now);
        tx.execute(
            "UPDATE memories SET review_after = ?2 WHERE id = ?1",
            params![m.id, next],
        )?;
        add_event(
            &tx,
            m.id,
            EventKind::Reinforce,
            0.5,
            now,
            None,
            Some("reviewed"),
        )?;
        tx.commit()?;
        Ok(next)
    }

    /// Records a verdict on a pending judgment (C's `mem_judge`).
    pub fn judge(&mut self, verdict: Verdict) -> Result<Judgment> {
        let relation = check_relation(&verdict.relation)?;
        let confidence = verdict.confidence.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&confidence) {
            return Err(InputError::new(
                "confidence",
                format!("is {confidence}, it must be between 0 and 1"),
            )
            .into());
        }
        for (field, v) in [("reason", &verdict.reason), ("evidence", &verdict.evidence)] {
            if let Some(v) = v {
                engram_core::limits::check_len(field, v, engram_core::limits::MAX_TITLE_BYTES)?;
            }
        }
        let now = self.now();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let row: Option<(MemoryId, MemoryId)> = tx
            .query_row(
                "SELECT src, dst FROM judgments WHERE uid = ?1",
                [&verdict.judgment_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((src, dst)) = row else {
            return Err(crate::Error::not_found(
                "judgment_id",
                verdict.judgment_id.clone(),
            ));
        };
        tx.execute(
            "UPDATE judgments SET relation = ?2, status = 'judged', reason = ?3, evidence = ?4, confidence = ?5,
             actor = ?6, actor_kind = ?7, model = ?8, session_id = COALESCE(?9, session_id), updated_at = ?10
             WHERE uid = ?1",
            params![
                verdict.judgment_id,
                relation,
                verdict.reason,
                verdict.evidence,
                confidence,
                verdict.actor.as_deref().unwrap_or("agent"),
                verdict.actor_kind.as_deref().unwrap_or("agent"),
                verdict.model,
                verdict.session_id,
                now
            ],
        )?;
        apply_relation(&tx, src, dst, relation, now)?;
        tx.commit()?;
        self.judgment(&verdict.judgment_id)
    }

    /// C's `mem_compare`: a verdict on two memories without a pending judgment; creates
    /// or overwrites the pair's judgment. Returns it.
    pub fn compare(&mut self, a: &IdRef, b: &IdRef, verdict: Verdict) -> Result<Judgment> {
        let (src, dst) = (self.resolve_id(a)?, self.resolve_id(b)?);
        if src == dst {
            return Err(InputError::new("memory_id_b", "must differ from memory_id_a").into());
        }
        let now = self.now();
        let uid = crate::resolution::pending_judgment(&self.conn, src, dst, 0.0, None, now)?;
        self.judge(Verdict {
            judgment_id: uid,
            actor: verdict.actor.or(Some("engram".into())),
            actor_kind: verdict.actor_kind.or(Some("system".into())),
            ..verdict
        })
    }

    /// One judgment by id.
    pub fn judgment(&self, uid: &str) -> Result<Judgment> {
        self.conn
            .query_row(
                "SELECT uid, src, dst, relation, status, score, reason, evidence, confidence, actor, actor_kind, model, session_id
                 FROM judgments WHERE uid = ?1",
                [uid],
                row_to_judgment,
            )
            .optional()?
            .ok_or_else(|| crate::Error::not_found("judgment_id", uid.to_string()))
    }

    /// Judgments touching a memory, newest first.
    pub fn judgments_of(&self, id: MemoryId) -> Result<Vec<Judgment>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT uid, src, dst, relation, status, score, reason, evidence, confidence, actor, actor_kind, model, session_id
             FROM judgments WHERE src = ?1 OR dst = ?1 ORDER BY updated_at DESC, id DESC LIMIT 50",
        )?;
        let rows = stmt.query_map([id], row_to_judgment)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[derive(Clone, Copy)]
enum Threshold {
    Consolidate,
    Skill,
}

/// A verdict on two related memories.
#[derive(Debug, Clone, Default)]
pub struct Verdict {
    pub judgment_id: String,
    pub relation: String,
    pub reason: Option<String>,
    pub evidence: Option<String>,
    pub confidence: Option<f64>,
    pub session_id: Option<String>,
    pub actor: Option<String>,
    pub actor_kind: Option<String>,
    pub model: Option<String>,
}

fn check_relation(raw: &str) -> Result<&'static str, InputError> {
    let r = raw.trim().to_ascii_lowercase().replace('-', "_");
    RELATIONS.iter().find(|x| **x == r).copied().ok_or_else(|| {
        InputError::new(
            "relation",
            format!(
                "{raw:?} is not a verdict; use one of {}",
                RELATIONS.join(", ")
            ),
        )
    })
}

/// What a verdict does to the store: a link of its kind; `supersedes` also ends the
/// validity of `dst`.
fn apply_relation(
    tx: &rusqlite::Connection,
    src: MemoryId,
    dst: MemoryId,
    relation: &str,
    now: Millis,
) -> Result<()> {
    let kind = match relation {
        "not_conflict" => return Ok(()),
        "supersedes" => LinkKind::Supersedes,
        "conflicts_with" => LinkKind::ConflictsWith,
        "compatible" => LinkKind::Compatible,
        "scoped" => LinkKind::Scoped,
        _ => LinkKind::Related,
    };
    crate::ops::link_in(tx, src, dst, kind, 1.0, now)?;
    if relation == "supersedes" {
        let n = tx.execute(
            "UPDATE memories SET tier = 'superseded', valid_to = ?2, updated_at = ?2 WHERE id = ?1 AND tier = 'active'",
            params![dst, now],
        )?;
        if n == 1 {
            add_event(
                tx,
                dst,
                EventKind::Correction,
                0.0,
                now,
                None,
                Some(&format!("superseded by #{src} (judged)")),
            )?;
        }
    }
    Ok(())
}

pub(crate) fn row_to_judgment(r: &rusqlite::Row<'_>) -> rusqlite::Result<Judgment> {
    Ok(Judgment {
        judgment_id: r.get(0)?,
        src: r.get(1)?,
        dst: r.get(2)?,
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
    })
}
