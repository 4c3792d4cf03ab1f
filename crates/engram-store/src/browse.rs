//! Reads for browsing a store as a whole (the web UI): memories listed with their
//! activation, daily activity, the link graph, sessions, pending judgments and a memory's
//! activation curve. Each is bounded by an explicit limit and reads only.

use crate::storage::rows::{Daily, ListQuery};
use crate::{Result, SessionInfo, Store};
use engram_core::curve::{self, CurveInput, CurvePoint};
use engram_core::memory::IdRef;
use engram_core::{DAY_MS, InputError, Kind, LinkKind, Memory, MemoryId, Millis, Tier};
use serde::Serialize;

/// Largest page of memories, graph nodes or sessions one read returns.
pub const MAX_BROWSE: usize = 5000;
/// Longest activity window, in days.
pub const MAX_ACTIVITY_DAYS: usize = 366;

/// How [`Store::list_memories`] orders what it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// Newest first.
    #[default]
    Recent,
    /// Highest activation first.
    Strongest,
    /// Lowest activation first (what maintenance would archive next).
    Fading,
}

/// Which memories to list.
#[derive(Debug, Clone, Default)]
pub struct ListRequest {
    pub kinds: Vec<Kind>,
    /// Empty: every tier but the trash.
    pub tiers: Vec<Tier>,
    pub room: Option<String>,
    pub order: Order,
    pub limit: usize,
}

/// A memory with its activation now.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    #[serde(flatten)]
    pub memory: Memory,
    pub activation: f64,
}

/// Memories created and recall hits logged on one UTC day.
#[derive(Debug, Clone, Serialize)]
pub struct DayCount {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub created: u64,
    pub recalls: u64,
}

/// A node of the link graph.
#[derive(Debug, Clone, Serialize)]
pub struct Node {
    pub id: MemoryId,
    pub kind: Kind,
    pub tier: Tier,
    pub room: String,
    pub label: String,
    pub activation: f64,
}

/// An edge of the link graph (both ends are nodes of the same graph).
#[derive(Debug, Clone, Serialize)]
pub struct Edge {
    pub src: MemoryId,
    pub dst: MemoryId,
    pub kind: LinkKind,
    pub weight: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    /// Memories left out by the limit.
    pub omitted: u64,
}

/// A memory's activation curve and the events that shaped it.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    pub id: MemoryId,
    #[serde(with = "engram_core::time::rfc3339")]
    pub now: Millis,
    pub points: Vec<CurvePoint>,
    /// Every positive-weight event as `(at, kind)`, oldest first.
    pub events: Vec<(Millis, String)>,
}

fn check_limit(limit: usize) -> Result<usize> {
    if limit == 0 || limit > MAX_BROWSE {
        return Err(
            InputError::new("limit", format!("is {limit}, it must be 1–{MAX_BROWSE}")).into(),
        );
    }
    Ok(limit)
}

impl Store {
    /// Memories matching the filters with their activation, ordered as asked. Strongest and
    /// fading orders rank every matching memory (at most 100,000) before taking `limit`.
    pub fn list_memories(&self, req: &ListRequest) -> Result<Vec<Listed>> {
        let limit = check_limit(req.limit)?;
        let cap = match req.order {
            Order::Recent => limit,
            _ => 100_000,
        };
        let memories = self.reads().list_memories(&ListQuery {
            kinds: &req.kinds,
            tiers: &req.tiers,
            room: req.room.as_deref(),
            limit: cap,
        })?;
        let mut listed = self.with_activation(memories)?;
        match req.order {
            Order::Recent => {}
            Order::Strongest => listed.sort_by(|a, b| b.activation.total_cmp(&a.activation)),
            Order::Fading => listed.sort_by(|a, b| a.activation.total_cmp(&b.activation)),
        }
        listed.truncate(limit);
        Ok(listed)
    }

    fn with_activation(&self, memories: Vec<Memory>) -> Result<Vec<Listed>> {
        let ids: Vec<MemoryId> = memories.iter().map(|m| m.id).collect();
        let traces = self.traces_of(&ids)?;
        let now = self.now();
        Ok(memories
            .into_iter()
            .map(|memory| {
                let activation = engram_core::dynamics::activation(
                    self.config.dynamics,
                    traces.get(&memory.id).map(Vec::as_slice).unwrap_or(&[]),
                    now,
                    memory.importance,
                    memory.kind.decay_class(),
                    &self.config.actr,
                );
                Listed { memory, activation }
            })
            .collect())
    }

    /// Memories created and recall hits logged per UTC day, over the last `days` days
    /// (today included), oldest first; days without either are listed with zeros.
    pub fn activity(&self, days: usize) -> Result<Vec<DayCount>> {
        if days == 0 || days > MAX_ACTIVITY_DAYS {
            return Err(InputError::new(
                "days",
                format!("is {days}, it must be 1–{MAX_ACTIVITY_DAYS}"),
            )
            .into());
        }
        let today = self.now().div_euclid(DAY_MS);
        let first = today - days as i64 + 1;
        let mut out: Vec<DayCount> = (first..=today)
            .map(|d| DayCount {
                day: engram_core::time::format(d * DAY_MS)[..10].to_string(),
                created: 0,
                recalls: 0,
            })
            .collect();
        for what in [Daily::Created, Daily::RecallHits] {
            for (day, n) in self.reads().daily_counts(what, first * DAY_MS)? {
                if let Some(slot) = out.get_mut((day - first) as usize) {
                    match what {
                        Daily::Created => slot.created = n,
                        Daily::RecallHits => slot.recalls = n,
                    }
                }
            }
        }
        Ok(out)
    }

    /// The link graph of the newest `limit` memories outside the trash (optionally of one
    /// room), with the links among them.
    pub fn graph(&self, room: Option<&str>, limit: usize) -> Result<Graph> {
        let limit = check_limit(limit)?;
        let list = self.list_memories(&ListRequest {
            room: room.map(str::to_string),
            limit,
            ..Default::default()
        })?;
        let total = self.reads().live_count(room)?;
        let ids: Vec<MemoryId> = list.iter().map(|l| l.memory.id).collect();
        let edges = self
            .reads()
            .links_among(&ids)?
            .into_iter()
            .map(|l| Edge {
                src: l.src,
                dst: l.dst,
                kind: l.kind,
                weight: l.weight,
            })
            .collect();
        let nodes = list
            .into_iter()
            .map(|l| Node {
                id: l.memory.id,
                kind: l.memory.kind,
                tier: l.memory.tier,
                room: l.memory.room.clone(),
                label: label_of(&l.memory),
                activation: l.activation,
            })
            .collect::<Vec<_>>();
        Ok(Graph {
            omitted: total.saturating_sub(nodes.len() as u64),
            nodes,
            edges,
        })
    }

    /// Sessions, newest first.
    pub fn sessions(&self, limit: usize) -> Result<Vec<SessionInfo>> {
        let limit = check_limit(limit)?;
        self.reads().sessions_by_start(limit)
    }

    /// Judgments still waiting for a verdict, newest first.
    pub fn pending_judgments(&self, limit: usize) -> Result<Vec<crate::maintain::Judgment>> {
        let limit = check_limit(limit)?;
        self.reads().pending_judgments(limit)
    }

    /// A memory's activation from its creation to now and `days_ahead` days past it, in
    /// `points` samples, with the events that shaped it.
    pub fn activation_curve(&self, id: &IdRef, days_ahead: u32, points: usize) -> Result<Curve> {
        if days_ahead > 3650 {
            return Err(InputError::new(
                "days_ahead",
                format!("is {days_ahead}, it must be 0–3650"),
            )
            .into());
        }
        let m = self.get(id)?;
        let traces = self.traces_of(&[m.id])?.remove(&m.id).unwrap_or_default();
        let now = self.now();
        let from = traces
            .iter()
            .map(|t| t.at)
            .min()
            .unwrap_or(m.created_at)
            .min(now);
        let span = (now - from).max(DAY_MS);
        let to = now + (days_ahead as i64 * DAY_MS).max(span / 4);
        let input = CurveInput {
            model: self.config.dynamics,
            traces: &traces,
            importance: m.importance,
            class: m.kind.decay_class(),
            params: &self.config.actr,
        };
        let mut events: Vec<(Millis, String)> = traces
            .iter()
            .map(|t| (t.at, t.kind.as_str().to_string()))
            .collect();
        events.sort();
        Ok(Curve {
            id: m.id,
            now,
            points: curve::activation_curve(&input, from, to, now, points),
            events,
        })
    }
}

/// A node's label: the title, else the first line of the content, at most 60 characters.
fn label_of(m: &Memory) -> String {
    let raw = m
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| m.content.lines().next().unwrap_or(""));
    let flat = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 60 {
        format!("{}…", flat.chars().take(59).collect::<String>())
    } else {
        flat
    }
}
