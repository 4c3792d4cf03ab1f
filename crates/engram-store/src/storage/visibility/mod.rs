//! Who sees what on a team server: the one place visibility is enforced.
//!
//! [`Visible`] wraps the store's backend and implements the whole storage interface
//! ([`Reads`], [`Tx`], [`CandidateSource`], [`Backend`]) over it. With no viewer (local
//! use, the server's own admin commands) every call passes straight through. With a
//! [`Viewer`] (a team user's call, set by `Store::as_viewer` for exactly that call) every
//! answer leaves out the memories the viewer may not see, as if they did not exist:
//!
//! * rows are checked with the core rule (`engram_core::team::visible_to`), and ids
//!   against the viewer's hidden set (`Reads::private_of_others`, read once per call);
//! * candidate searches get the hidden ids in their [`Filter`] (`Filter::hidden`), so the
//!   backend's own query skips them and a top-`k` is still `k` visible memories; link walks,
//!   coverage and cosines drop them;
//! * limited lists ask the backend for `limit + hidden` rows and cut after filtering, so
//!   a page is as full as it would be without the hidden rows;
//! * counts (`live_count`, tallies, rooms, days) subtract the hidden rows they counted;
//! * links, events, revisions, evidence and judgments of a hidden memory are empty, and a
//!   link or judgment whose other end is hidden is left out;
//! * writes stamp the viewer as the new memory's author, and a write aimed at a hidden
//!   id fails as "not found", exactly like a missing one.
//!
//! Because every engine operation reaches storage only through `Store::reads`,
//! `Store::write` and `Store::candidates`, and those three are this wrapper, no
//! operation can forget the rule: a new `Reads` method does not compile until it is
//! written here too.

use super::candidates::{CandidateSource, Filter};
use super::rows::*;
use super::{Backend, Reads, Tx};
use crate::{Error, Result};
use engram_core::scoring::{Candidates, Edge};
use engram_core::text::QueryPlan;
use engram_core::{Memory, MemoryId, Tier};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

mod reads;
mod tx;

use tx::VisibleTx;

/// A team user for the span of one call, with the memories they may not see.
#[derive(Debug, Clone)]
pub struct Viewer {
    pub name: String,
    /// Other users' private memories (and private ones without an author), by id.
    hidden: HashMap<MemoryId, Memory>,
}

impl Viewer {
    /// Reads `name`'s hidden set from the store as it is now.
    pub fn load(r: &dyn Reads, name: &str) -> Result<Viewer> {
        let hidden = r
            .private_of_others(name)?
            .into_iter()
            .map(|m| (m.id, m))
            .collect();
        Ok(Viewer {
            name: name.to_string(),
            hidden,
        })
    }

    fn sees(&self, m: &Memory) -> bool {
        !self.hidden.contains_key(&m.id) && engram_core::team::visible_to(Some(&self.name), m)
    }

    fn sees_id(&self, id: MemoryId) -> bool {
        !self.hidden.contains_key(&id)
    }

    fn hidden_ids(&self) -> Vec<MemoryId> {
        let mut ids: Vec<MemoryId> = self.hidden.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Hidden memories outside the trash.
    fn live(&self) -> impl Iterator<Item = &Memory> {
        self.hidden.values().filter(|m| m.tier != Tier::Trash)
    }

    /// How many more rows to ask for so that `limit` visible ones survive the filter.
    fn widen(&self, limit: usize) -> usize {
        limit.saturating_add(self.hidden.len())
    }

    fn filter_memories(&self, mut v: Vec<Memory>, limit: usize) -> Vec<Memory> {
        v.retain(|m| self.sees(m));
        v.truncate(limit);
        v
    }

    fn filter(&self, f: &Filter) -> Filter {
        let mut f = f.clone();
        f.hidden.extend(self.hidden_ids());
        f
    }

    fn link_ok(&self, l: &LinkView) -> bool {
        self.sees_id(l.src) && self.sees_id(l.dst)
    }

    fn judgment_ok(&self, j: &Judgment) -> bool {
        self.sees_id(j.src) && self.sees_id(j.dst)
    }

    fn row_ok(&self, row: &StoredRow) -> bool {
        match row {
            StoredRow::Memory { memory, .. } => self.sees(memory),
            StoredRow::Revision { memory_id, .. }
            | StoredRow::Evidence { memory_id, .. }
            | StoredRow::Event { memory_id, .. } => self.sees_id(*memory_id),
            StoredRow::Link(l) => self.sees_id(l.src) && self.sees_id(l.dst),
            StoredRow::Judgment(j) => self.sees_id(j.src) && self.sees_id(j.dst),
            // Stamped as the viewer's own on the way in (`VisibleTx::insert_rows`), so a
            // private room's rows are theirs: nothing of another's is named.
            StoredRow::Session(_) | StoredRow::Prompt(_) => true,
        }
    }

    /// A write aimed at a hidden memory fails as a missing one would.
    fn check_write(&self, id: MemoryId) -> Result<()> {
        if self.sees_id(id) {
            Ok(())
        } else {
            Err(Error::not_found("id", format!("#{id}")))
        }
    }
}

fn private_room(room: &str) -> bool {
    engram_core::team::is_private_room(room)
}

/// Whether `v` is the recorded owner of a session or prompt (one with no owner is nobody's).
fn owns<R: Reads + ?Sized>(i: &R, v: &Viewer, what: Owned<'_>) -> Result<bool> {
    Ok(i.owner(what)?.as_deref() == Some(v.name.as_str()))
}

/// A session `v` may see: any of a shared room, and only their own of a private room.
fn may_see_session<R: Reads + ?Sized>(i: &R, v: &Viewer, s: &SessionInfo) -> Result<bool> {
    Ok(!private_room(&s.room) || owns(i, v, Owned::Session(&s.id))?)
}

/// A prompt `v` may see: any of a shared room, and only their own of a private room.
fn may_see_prompt<R: Reads + ?Sized>(i: &R, v: &Viewer, p: &PromptInfo) -> Result<bool> {
    Ok(!private_room(&p.room) || owns(i, v, Owned::Prompt(p.id))?)
}

/// Up to `limit` items of a newest-first list that `keep` allows, asking for more while a
/// page came back full and filtering left too few (sessions and prompts: their hidden
/// count is not known in advance).
fn fill<T>(
    limit: usize,
    mut fetch: impl FnMut(usize) -> Result<Vec<T>>,
    keep: impl Fn(&T) -> Result<bool>,
) -> Result<Vec<T>> {
    let mut ask = limit.saturating_mul(2).max(16);
    loop {
        let page = fetch(ask)?;
        let full = page.len() >= ask;
        let mut kept = Vec::new();
        for x in page {
            if keep(&x)? {
                kept.push(x);
            }
        }
        if kept.len() >= limit || !full || ask == usize::MAX {
            kept.truncate(limit);
            return Ok(kept);
        }
        ask = ask.saturating_mul(4);
    }
}

fn subtract(counts: &mut BTreeMap<String, u64>, key: &str, n: u64) {
    if let Some(c) = counts.get_mut(key) {
        *c = c.saturating_sub(n);
        if *c == 0 {
            counts.remove(key);
        }
    }
}

/// The storage the engine sees: the backend, filtered for the viewer when there is one.
pub struct Visible {
    inner: Box<dyn Backend>,
    viewer: Option<Viewer>,
}

impl Visible {
    pub fn new(inner: Box<dyn Backend>) -> Visible {
        Visible {
            inner,
            viewer: None,
        }
    }

    /// Sets (or with `None` clears) the viewer. Callers go through `Store::as_viewer`,
    /// which clears it again whatever the call returned.
    pub fn set_viewer(&mut self, viewer: Option<Viewer>) {
        self.viewer = viewer;
    }

    pub fn viewer(&self) -> Option<&Viewer> {
        self.viewer.as_ref()
    }

    /// The backend itself, unfiltered (loading a viewer's hidden set).
    pub fn unfiltered(&self) -> &dyn Reads {
        &*self.inner
    }

    fn parts(&self) -> (&dyn Reads, Option<&Viewer>) {
        (&*self.inner, self.viewer.as_ref())
    }

    fn hidden_embedded(&self, v: &Viewer) -> u64 {
        self.inner
            .vectors(&v.hidden_ids())
            .map(|m| m.len() as u64)
            .unwrap_or(0)
    }
}

impl CandidateSource for Visible {
    fn lexical(
        &self,
        plan: &QueryPlan,
        filter: &Filter,
        k: usize,
        extra_substrings: &[String],
    ) -> Result<Candidates> {
        match &self.viewer {
            None => self.inner.lexical(plan, filter, k, extra_substrings),
            Some(v) => self
                .inner
                .lexical(plan, &v.filter(filter), k, extra_substrings),
        }
    }
    fn coverage(
        &self,
        plan: &QueryPlan,
        ids: &[MemoryId],
        partial: bool,
    ) -> Result<HashMap<MemoryId, f64>> {
        let mut c = self.inner.coverage(plan, ids, partial)?;
        if let Some(v) = &self.viewer {
            c.retain(|id, _| v.sees_id(*id));
        }
        Ok(c)
    }
    fn vector(&self, query: &[f32], filter: &Filter, k: usize) -> Result<Candidates> {
        match &self.viewer {
            None => self.inner.vector(query, filter, k),
            Some(v) => self.inner.vector(query, &v.filter(filter), k),
        }
    }
    fn cosines(&self, query: &[f32], ids: &[MemoryId]) -> Result<HashMap<MemoryId, f64>> {
        let mut c = self.inner.cosines(query, ids)?;
        if let Some(v) = &self.viewer {
            c.retain(|id, _| v.sees_id(*id));
        }
        Ok(c)
    }
    fn vectors(&self, ids: &[MemoryId]) -> Result<HashMap<MemoryId, Vec<f32>>> {
        let mut c = self.inner.vectors(ids)?;
        if let Some(v) = &self.viewer {
            c.retain(|id, _| v.sees_id(*id));
        }
        Ok(c)
    }
    fn links_around(&self, seeds: &[MemoryId], hops: usize, filter: &Filter) -> Result<Vec<Edge>> {
        let Some(v) = &self.viewer else {
            return CandidateSource::links_around(&*self.inner, seeds, hops, filter);
        };
        let seeds: Vec<MemoryId> = seeds.iter().copied().filter(|s| v.sees_id(*s)).collect();
        let mut edges =
            CandidateSource::links_around(&*self.inner, &seeds, hops, &v.filter(filter))?;
        edges.retain(|e| v.sees_id(e.a) && v.sees_id(e.b));
        Ok(edges)
    }
}

impl Backend for Visible {
    fn write(&mut self, f: &mut dyn FnMut(&mut dyn Tx) -> Result<()>) -> Result<()> {
        let viewer = self.viewer.as_ref();
        self.inner.write(&mut |tx| {
            let mut seen = VisibleTx { tx, viewer };
            f(&mut seen)
        })
    }
    fn set_durable(&mut self, durable: bool) -> Result<()> {
        self.inner.set_durable(durable)
    }
    fn prepare_vectors(&mut self, model: Option<VectorModel<'_>>) -> Result<bool> {
        self.inner.prepare_vectors(model)
    }
    fn forget_vectors(&mut self) {
        self.inner.forget_vectors()
    }
    fn vector_search(&self, model: VectorModel<'_>) -> &'static str {
        self.inner.vector_search(model)
    }
    fn vector_search_state(&self) -> Option<(usize, bool)> {
        self.inner.vector_search_state()
    }
    fn copy_to(&self, target: &Path) -> Result<()> {
        if self.viewer.is_some() {
            return Err(Error::Input(engram_core::InputError::new(
                "backup",
                "a copy of the database holds every user's memories: back it up on the server",
            )));
        }
        self.inner.copy_to(target)
    }
    fn health(&self) -> Result<Health> {
        let mut h = self.inner.health()?;
        if let Some(v) = &self.viewer {
            // `doctor` for a team user: counts of what they may see (the checks themselves
            // are the database's).
            let live = v.live().count() as u64;
            h.memories = h.memories.saturating_sub(v.hidden.len() as u64);
            h.live_memories = h.live_memories.saturating_sub(live);
            for n in [&mut h.fts_words, &mut h.fts_grams].into_iter().flatten() {
                *n = n.saturating_sub(v.hidden.len() as u64);
            }
            // Vectors by model: the hidden memories' own leave the counts.
            for hidden in self.inner.vector_sets_of(&v.hidden_ids())? {
                if let Some(set) = h
                    .vectors
                    .iter_mut()
                    .find(|s| s.model == hidden.model && s.dim == hidden.dim)
                {
                    set.count = set.count.saturating_sub(hidden.count);
                }
            }
            h.vectors.retain(|s| s.count > 0);
        }
        Ok(h)
    }
    /// The job locks are the server's, whoever the call runs as.
    fn try_exclusive(&self, job: crate::storage::Job) -> Result<crate::storage::JobLock> {
        self.inner.try_exclusive(job)
    }
    fn schema_supported(&self) -> i64 {
        self.inner.schema_supported()
    }
    fn sqlite(&mut self) -> Option<&mut crate::sqlite::SqliteBackend> {
        self.inner.sqlite()
    }
    fn sqlite_ref(&self) -> Option<&crate::sqlite::SqliteBackend> {
        self.inner.sqlite_ref()
    }
}

/// A maintenance run's report (`maintain::MaintenanceReport` as JSON) as `v` may read it:
/// the clusters, archivals and id lists that name a memory hidden from `v` are left out,
/// and the store-wide `examined` count goes (it counts every user's memories). The run
/// itself is the server's, so its time and kind stay.
pub(super) fn scrub_run(run: &str, v: &Viewer) -> String {
    use serde_json::Value;
    let Ok(mut report) = serde_json::from_str::<Value>(run) else {
        return run.to_string();
    };
    let sees = |x: &Value| x.as_i64().is_none_or(|id| v.sees_id(id));
    if let Some(o) = report.as_object_mut() {
        o.remove("examined");
        if let Some(Value::Array(cs)) = o.get_mut("consolidated") {
            cs.retain(|c| {
                sees(&c["keeper"]) && c["archived"].as_array().is_none_or(|a| a.iter().all(&sees))
            });
        }
        if let Some(Value::Array(a)) = o.get_mut("archived") {
            a.retain(|x| sees(&x["id"]));
        }
        for key in ["protected", "due_for_review"] {
            if let Some(Value::Array(a)) = o.get_mut(key) {
                a.retain(&sees);
            }
        }
    }
    report.to_string()
}
