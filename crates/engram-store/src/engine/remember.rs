//! `remember`: check the request, gather what the room holds near it, let
//! [`engram_core::plan`] decide, apply the plan in one transaction.

mod apply;
mod prepare;

use crate::ops::embed_text;
use crate::{RememberOutcome, RememberRequest, Result, Store};
use engram_core::plan::{self, Incoming, NeighbourFacts, WritePlan};

/// What the slow part before the write lock found: the new text's vector, the plan over
/// its neighbours, and the merged text's vector when the plan merges.
pub(super) struct Gathered {
    pub vector: Option<(String, Vec<f32>)>,
    pub plan: WritePlan,
    pub merged_vector: Option<(String, Vec<f32>)>,
}

impl Store {
    /// Remembers several memories in order, as [`remember`](Self::remember) would one by
    /// one, but embeds their texts together first: a batched forward pass costs far less
    /// per text than one pass each. For imports, benchmarks and bulk writers; each request
    /// succeeds or fails on its own. The outer error means the batch's commits could not
    /// be synced to disk (they are in the database, but a power cut could lose them);
    /// repeating the batch is safe: known texts reinforce instead of duplicating.
    pub fn remember_batch(
        &mut self,
        reqs: Vec<RememberRequest>,
    ) -> Result<Vec<Result<RememberOutcome>>> {
        if let Some(e) = self.embedder.clone() {
            let texts: Vec<String> = reqs
                .iter()
                .map(|r| {
                    let clean = |t: &str| engram_core::redact::redact(t).0;
                    embed_text(r.title.as_deref().map(clean).as_deref(), &clean(&r.content))
                })
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            if let Ok(vectors) = e.embed_documents(&refs) {
                self.prepared = texts.into_iter().zip(vectors).collect();
            }
        }
        // One fsync for the whole batch instead of one per memory: the commits in between
        // skip it (WAL stays consistent), and a last commit under FULL syncs the log, which
        // makes every earlier commit durable before this returns.
        let out: Vec<Result<RememberOutcome>> =
            self.without_fsync(|s| reqs.into_iter().map(|r| s.remember(r)).collect())?;
        self.prepared.clear();
        let now = self.now();
        self.write(|tx| tx.set_meta("last_batch_write", &now.to_string()))?;
        Ok(out)
    }

    /// Stores a memory, resolving it against what the room already holds (DESIGN.md's
    /// order): an exact repeat reinforces; a `topic_key` updates that topic's memory (the
    /// previous text kept as a revision); otherwise the nearest active memories decide
    /// ([`engram_core::plan`]): a contradiction supersedes them, a near-repeat reinforces,
    /// a close text that adds information merges, anything else is new. Secrets are
    /// redacted first.
    pub fn remember(&mut self, req: RememberRequest) -> Result<RememberOutcome> {
        let w = self.prepare_remember(req)?;
        let now = self.now();
        let g = self.gather(&w)?;
        self.apply_remember(&w, &g, now)
    }

    /// Embedding and the neighbour search are the slow part: done before taking the write
    /// lock, and skipped when the content is already known (checked again inside the
    /// transaction).
    fn gather(&mut self, w: &prepare::Prepared) -> Result<Gathered> {
        let known = match self.reads().active_duplicate(&w.room, w.content())? {
            Some(id) => self
                .reads()
                .memory(&engram_core::memory::IdRef::Id(id))?
                .is_some_and(|m| repeat_allowed(w, &m)),
            None => false,
        };
        let vector = if known {
            None
        } else {
            self.embed_document(&embed_text(w.req.title.as_deref(), w.content()))
        };
        let resolving = plan::resolves(
            known,
            w.topic_key.is_some(),
            w.req.resolve.unwrap_or(self.config.resolve),
            w.kind,
        );
        let mut neighbours = if resolving {
            self.neighbours(
                w.content(),
                vector.as_ref().map(|v| v.1.as_slice()),
                &w.room,
                None,
                None,
            )?
        } else {
            Vec::new()
        };
        // On a team store a private write and what others can read never act on each other.
        let author = self.viewer().map(str::to_string);
        let me = (
            engram_core::team::is_private(&w.room, w.kind),
            author.as_deref(),
        );
        neighbours.retain(|n| {
            let m = &n.memory;
            engram_core::team::may_meet(
                me,
                (
                    engram_core::team::is_private(&m.room, m.kind),
                    m.author.as_deref(),
                ),
            )
        });
        let facts: Vec<NeighbourFacts<'_>> = neighbours.iter().map(|n| n.facts()).collect();
        let incoming = Incoming {
            content: w.content(),
            kind: w.kind,
            may_supersede: w.req.supersede != Some(false),
            may_merge: w.req.merge != Some(false),
            fold_only_titled: w
                .req
                .fold_only_same_title
                .then(|| w.req.title.as_deref().unwrap_or("")),
        };
        let plan = plan::plan(
            incoming,
            &facts,
            &self.config.resolution,
            self.config.max_semantic_links,
        );
        let merged_vector = match plan.absorb.as_ref().and_then(|a| a.merged.as_deref()) {
            Some(text) => self.embed_document(text),
            None => None,
        };
        Ok(Gathered {
            vector,
            plan,
            merged_vector,
        })
    }
}

/// Whether the active memory `m`, whose content equals the write's, takes it as a repeat:
/// always, except under seed C's dedupe key (title and kind must match too).
fn repeat_allowed(w: &prepare::Prepared, m: &engram_core::Memory) -> bool {
    !w.req.fold_only_same_title
        || (m.kind == w.kind
            && m.title
                .as_deref()
                .zip(w.req.title.as_deref())
                .is_some_and(|(a, b)| plan::same_title(a, b)))
}
