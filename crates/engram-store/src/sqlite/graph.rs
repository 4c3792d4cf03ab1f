//! The associative candidate source: the links around a set of seeds, walked hop by hop
//! in batches, for spreading activation in deep recall.

use super::candidates::SqliteCandidates;
use super::memories::placeholders;
use crate::Result;
use crate::storage::candidates::Filter;
use engram_core::MemoryId;
use engram_core::scoring::Edge;
use std::collections::{HashMap, HashSet};

/// Seeds per query: twice this many ids are bound, far below SQLite's limit.
const HOP_CHUNK: usize = 400;

/// One link as the graph walk reads it, with the tier and room of both ends.
struct LinkRow {
    a: MemoryId,
    b: MemoryId,
    kind: String,
    weight: f64,
    ends: [(String, String); 2],
}

impl SqliteCandidates<'_> {
    /// Links within `hops` of `seeds` that spreading activation walks, as undirected edges
    /// (the strongest weight when both directions exist). Edges to memories the filter
    /// excludes (the trash, other rooms) are dropped, so activation never passes through them.
    pub(crate) fn edges_around(
        &self,
        seeds: &[MemoryId],
        hops: usize,
        filter: &Filter,
    ) -> Result<Vec<Edge>> {
        let mut seen: HashSet<MemoryId> = seeds.iter().copied().collect();
        let mut frontier: Vec<MemoryId> = seeds.to_vec();
        let mut edges: HashMap<(MemoryId, MemoryId), f64> = HashMap::new();
        for _ in 0..hops {
            if frontier.is_empty() {
                break;
            }
            let mut next = Vec::new();
            for chunk in frontier.chunks(HOP_CHUNK) {
                for l in self.links_touching(chunk)? {
                    let walkable = engram_core::LinkKind::parse(&l.kind).is_ok_and(|k| k.spreads())
                        && l.ends
                            .iter()
                            .all(|(tier, room)| filter.allows_tier_room(tier, room));
                    if !walkable {
                        continue;
                    }
                    let key = (l.a.min(l.b), l.a.max(l.b));
                    let e = edges.entry(key).or_insert(0.0);
                    *e = e.max(l.weight);
                    for n in [l.a, l.b] {
                        if seen.insert(n) {
                            next.push(n);
                        }
                    }
                }
            }
            frontier = next;
        }
        Ok(edges
            .into_iter()
            .map(|((a, b), weight)| Edge { a, b, weight })
            .collect())
    }

    /// Every link with an end among `ids`, with both ends' tier and room.
    fn links_touching(&self, ids: &[MemoryId]) -> Result<Vec<LinkRow>> {
        let ph = placeholders(ids.len());
        let sql = format!(
            "SELECT l.src, l.dst, l.kind, l.weight, a.tier, a.room, b.tier, b.room FROM links l \
             JOIN memories a ON a.id = l.src JOIN memories b ON b.id = l.dst \
             WHERE l.src IN ({ph}) OR l.dst IN ({ph})"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let params: Vec<i64> = ids.iter().chain(ids.iter()).copied().collect();
        let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
            Ok(LinkRow {
                a: r.get(0)?,
                b: r.get(1)?,
                kind: r.get(2)?,
                weight: r.get(3)?,
                ends: [(r.get(4)?, r.get(5)?), (r.get(6)?, r.get(7)?)],
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
