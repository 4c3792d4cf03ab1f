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

use crate::storage::rows::{LinkWrite, MemoryPatch, NewEvent};
use crate::storage::{Job, Tx, require_id};
use crate::{Result, Store};
use engram_core::dynamics::{self, DynamicsModel};
use engram_core::memory::IdRef;
use engram_core::{EventKind, InputError, Kind, LinkKind, Memory, MemoryId, Millis, Tier};
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
    /// Each member's whole text, in `ids` order (B's `contents`: what an agent summarises).
    pub contents: Vec<String>,
}

pub use crate::storage::rows::Judgment;

pub use crate::storage::rows::ReviewItem;

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
    /// A real run holds [`Job::Maintenance`] throughout, so of several servers on one
    /// database only one maintains at a time; the others get [`crate::Error::Busy`] and
    /// change nothing. A dry run changes nothing, so it takes no lock.
    pub fn maintain(&mut self, dry_run: bool) -> Result<MaintenanceReport> {
        let _lock = if dry_run {
            None
        } else {
            Some(self.exclusive(Job::Maintenance)?)
        };
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
        let vault_off = self.vault_dir().is_none();
        self.write(|tx| {
            tx.log_maintenance(started, finished, dry_run, &json)?;
            if !dry_run {
                // The change log only has to reach back to what the vault has written.
                tx.prune_changes(vault_off)?;
                tx.set_meta("last_maintenance", &finished.to_string())?;
            }
            Ok(())
        })?;
        Ok(report)
    }

    /// The named room, or every room that holds an active memory.
    fn rooms_to_maintain(&self, room: Option<&str>) -> Result<Vec<String>> {
        if let Some(r) = room {
            return Ok(vec![r.to_string()]);
        }
        self.reads().active_rooms()
    }

    /// Seed A's `consolidate_memory`: consolidation only, now, in one room (or all).
    /// Holds [`Job::Maintenance`], as [`Store::maintain`] does.
    pub fn consolidate_now(&mut self, room: Option<&str>) -> Result<Vec<Consolidation>> {
        let _lock = self.exclusive(Job::Maintenance)?;
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
        self.write(|tx| {
            let mut moved = 0;
            for f in &names {
                moved += tx.move_room(f, &to)?;
            }
            Ok(moved)
        })
    }

    /// When maintenance last ran for real (Unix ms), if ever.
    pub fn last_maintenance(&self) -> Result<Option<Millis>> {
        let v = self.reads().meta("last_maintenance")?;
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
        Ok(self
            .reads()
            .maintenance_runs(limit)?
            .iter()
            .map(|r| serde_json::from_str(r).unwrap_or(serde_json::Value::Null))
            .collect())
    }

    /// Greedy clusters of active memories in `room` (of `kind`, when given) whose members
    /// are at least `threshold` close to the cluster's first member and do not contradict
    /// it. Ids in ascending order seed clusters (B's algorithm); clusters have ≥ 2 members.
    /// Pairs of `members` that a supersession or a conflict ever linked (an undone
    /// supersession keeps its link as history): the user or the write path judged them two
    /// different statements, so consolidation never folds one into the other.
    fn judged_apart(&self, members: &[Memory]) -> Result<HashSet<(MemoryId, MemoryId)>> {
        let ids: Vec<MemoryId> = members.iter().map(|m| m.id).collect();
        Ok(self
            .reads()
            .links_among(&ids)?
            .into_iter()
            .filter(|l| matches!(l.kind, LinkKind::Supersedes | LinkKind::ConflictsWith))
            .map(|l| (l.src.min(l.dst), l.src.max(l.dst)))
            .collect())
    }

    fn similar_clusters(
        &mut self,
        room: &str,
        kind: Option<Kind>,
        threshold: Threshold,
        episodes_only_older_than: bool,
    ) -> Result<Vec<Vec<MemoryId>>> {
        let now = self.now();
        let min_age = (self.config.consolidate_min_age_days * engram_core::DAY_MS as f64) as i64;
        let members: Vec<Memory> = self.reads().unpinned_in_room(room, MAX_PER_ROOM)?;
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
        let judged_apart = self.judged_apart(&members)?;
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
                // Parts of one long text are one record, never folded into each other
                // (tester-a: consolidation archived a document's first part into its second).
                if crate::parts::one_record(m, &n.memory) {
                    continue;
                }
                // Another author's private memory (or one the team shares, for a private
                // one) is never folded in: its words would move into what others read.
                if used.contains(&id)
                    || !allowed.contains(&id)
                    || !engram_core::team::memories_meet(m, &n.memory)
                {
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
                    || engram_core::contradiction::detect(&n.memory.content, &m.content).is_some()
                    || engram_core::conflicts::memories_conflict(m, &n.memory)
                    || judged_apart.contains(&(m.id.min(id), m.id.max(id)));
                // Two releases, invoices or tickets that differ only in their identifiers are
                // two things, as on the write path: folding one into the other would lose it.
                // Episodes differ by the day they happened: a date alone never keeps them
                // apart (tester-b: B's dated session episodes never clustered). Offered to
                // an agent to summarise (B's candidates: the episodes stay, archived and
                // linked), a recurring task's episodes cluster whatever their versions.
                let two_things = if m.kind != Kind::Episode {
                    engram_core::identifiers::differ(&m.content, &n.memory.content).is_some()
                } else if episodes_only_older_than {
                    false
                } else {
                    engram_core::identifiers::differ_but_dates(&m.content, &n.memory.content)
                        .is_some()
                };
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
        let archived = self.write(|tx| {
            // Another process may have changed the cluster since it was read: act on what
            // is still active only.
            let Some(k) = tx
                .memory(&IdRef::Id(keeper.id))?
                .filter(|m| m.tier == Tier::Active)
            else {
                return Ok(None);
            };
            if text != k.content && k.content == keeper.content {
                tx.add_revision(&k, "consolidate", now, None)?;
                let importance = mems
                    .iter()
                    .map(|m| m.importance)
                    .fold(k.importance, f64::max);
                tx.patch_memory(
                    k.id,
                    &MemoryPatch {
                        content: Some(text.clone()),
                        importance: Some(importance),
                        ..MemoryPatch::touch(now)
                    },
                )?;
                tx.index_text(
                    k.id,
                    k.title.as_deref(),
                    &text,
                    &k.tags,
                    k.metadata.get("context").and_then(|c| c.as_str()),
                )?;
                tx.set_embedding(k.id, None)?;
                if let Some((model, v)) = &vector {
                    tx.set_embedding(k.id, Some((model, v)))?;
                }
            }
            let mut archived = Vec::new();
            for o in &others {
                if archive(tx, o.id, now)? {
                    tx.upsert_link(&LinkWrite::set(k.id, o.id, LinkKind::DerivedFrom, 1.0, now))?;
                    event(tx, o.id, now, &format!("consolidated into #{}", k.id))?;
                    archived.push(o.id);
                }
            }
            Ok(Some(archived))
        })?;
        Ok(match archived {
            Some(archived) => Consolidation { archived, ..out },
            None => out,
        })
    }

    /// Archives active, unpinned memories whose strength fell below `archive_strength`,
    /// unless a linked neighbour is at or above it. Returns (archived, protected, examined).
    fn archive_weak(&mut self, dry_run: bool) -> Result<(Vec<Archival>, Vec<MemoryId>, usize)> {
        let now = self.now();
        let threshold = self.config.archive_strength;
        let ids: Vec<MemoryId> = self.reads().unpinned_ids()?;
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
            let neighbours = self.reads().active_neighbours(id)?;
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
            self.write(|tx| {
                for a in &archived {
                    archive(tx, a.id, now)?;
                    let why = format!(
                        "archived by maintenance: strength {:.4} < {threshold}",
                        a.strength
                    );
                    event(tx, a.id, now, &why)?;
                }
                Ok(())
            })?;
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
                let contents: Vec<String> = self
                    .load_many(&ids)?
                    .into_iter()
                    .map(|m| m.content)
                    .collect();
                let excerpts = contents
                    .iter()
                    .map(|c| c.chars().take(120).collect())
                    .collect();
                out.push(Cluster {
                    room: room.clone(),
                    ids,
                    excerpts,
                    contents,
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
        self.write(|tx| {
            let target = require_id(tx, into, "new_memory_id")?;
            let mut done = Vec::new();
            for e in episodes {
                let id = require_id(tx, e, "episode_ids")?;
                if id == target {
                    return Err(InputError::new(
                        "episode_ids",
                        format!("#{id} is the summary itself"),
                    )
                    .into());
                }
                tx.upsert_link(&LinkWrite::set(target, id, LinkKind::DerivedFrom, 1.0, now))?;
                archive(tx, id, now)?;
                event(tx, id, now, &format!("consolidated into #{target}"))?;
                done.push(id);
            }
            Ok(done)
        })
    }
}

/// Moves an active memory to the archive; `false` when it is no longer active.
fn archive(tx: &mut dyn Tx, id: MemoryId, now: Millis) -> Result<bool> {
    tx.patch_memory(
        id,
        &MemoryPatch {
            if_tier: Some(Tier::Active),
            ..MemoryPatch::tier(Tier::Archived, now)
        },
    )
}

/// Logs why maintenance moved a memory.
fn event(tx: &mut dyn Tx, id: MemoryId, now: Millis, detail: &str) -> Result<()> {
    tx.append_event(&NewEvent {
        memory_id: id,
        kind: EventKind::Update,
        weight: 0.0,
        at: now,
        session_id: None,
        detail: Some(detail),
    })
}

#[derive(Clone, Copy)]
enum Threshold {
    Consolidate,
    Skill,
}

pub use crate::storage::rows::Verdict;
