//! A `remember` request checked and normalised before anything is read or written: the
//! limits, the redaction of secrets, metadata with its context, importance and room.

use crate::{RememberRequest, Result, Store, rooms};
use engram_core::limits;
use engram_core::redact::Redaction;
use engram_core::{InputError, Kind};

/// The write as it will be stored: `req` with secrets removed from its texts, and the
/// fields derived from it.
pub(super) struct Prepared {
    pub req: RememberRequest,
    pub tags: Vec<String>,
    /// The request's metadata (or `{}`) with `context` in it, redacted.
    pub metadata: serde_json::Value,
    /// The request's importance or the default, raised for corrections.
    pub importance: f64,
    pub topic_key: Option<String>,
    pub room: String,
    pub kind: Kind,
    pub redacted: Vec<Redaction>,
}

impl Prepared {
    pub fn content(&self) -> &str {
        &self.req.content
    }

    pub fn session(&self) -> Option<&str> {
        self.req.session_id.as_deref()
    }
}

impl Store {
    /// Checks every field (each error names it) and redacts secrets, so they never reach
    /// the database, the index or the model. The checks run in a fixed order: the first
    /// failing field is the one reported.
    pub(super) fn prepare_remember(&self, mut req: RememberRequest) -> Result<Prepared> {
        limits::check_content("content", &req.content)?;
        if let Some(t) = &req.title {
            limits::check_len("title", t, limits::MAX_TITLE_BYTES)?;
        }
        limits::normalize_tags(&req.tags)?;
        crate::ops::check_optional_name("topic_key", &req.topic_key)?;
        crate::ops::check_optional_name("source", &req.source)?;
        crate::ops::check_optional_name("session_id", &req.session_id)?;
        if let Some(c) = &req.context {
            limits::check_len("context", c, limits::MAX_CONTENT_BYTES)?;
        }
        // The names are redacted as they came, before tags and topic keys are normalised.
        let mut redacted = engram_core::redact::redact_names(
            [
                req.topic_key.as_mut(),
                req.source.as_mut(),
                req.session_id.as_mut(),
                req.room.as_mut(),
            ]
            .into_iter()
            .flatten()
            .chain(req.tags.iter_mut()),
        );
        let mut tags = limits::normalize_tags(&req.tags)?;
        // The fields together: a secret given up by one (the title, the metadata) goes from
        // the others too.
        let mut together = engram_core::redact::Together::new();
        for text in [
            Some(&mut req.content),
            req.title.as_mut(),
            req.context.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            together.text(text);
        }
        if req.content.trim().is_empty() {
            return Err(InputError::new("content", "must not be empty").into());
        }
        let mut metadata = req
            .metadata
            .clone()
            .unwrap_or_else(|| serde_json::json!({}));
        if let Some(c) = &req.context
            && let Some(o) = metadata.as_object_mut()
        {
            o.insert("context".into(), serde_json::json!(c));
        }
        if let Some(t) = req.created_at
            && t < 0
        {
            return Err(InputError::new("created_at", "must not be before 1970").into());
        }
        together.json(&mut metadata);
        let fired = together.finish(
            [
                Some(&mut req.content),
                req.title.as_mut(),
                req.context.as_mut(),
            ]
            .into_iter()
            .flatten(),
            [&mut metadata],
        );
        merge_redactions(&mut redacted, fired);
        // A standing instruction is tagged as such, so recall can give it its own place;
        // a request that already uses every tag keeps its own.
        if tags.len() < limits::MAX_TAGS {
            tags = engram_core::standing::with_tag(&req.content, tags);
        }
        limits::check_metadata(&metadata)?;
        let mut importance = req.importance.unwrap_or(self.config.default_importance);
        engram_core::importance::from_number(importance, false)?;
        if tags.iter().any(|t| t.eq_ignore_ascii_case("correction")) {
            importance = importance.max(self.config.correction_min_importance);
        }
        if req.room.as_deref().map(str::trim) == Some(engram_core::room::ALL) {
            return Err(InputError::new(
                "room",
                "`*` searches every room but cannot hold a memory; name one room",
            )
            .into());
        }
        let topic_key = req
            .topic_key
            .as_deref()
            .map(engram_core::topic::normalize_topic_key)
            .filter(|k| !k.is_empty());
        let (room, _) = rooms::resolve(&self.config, req.room.as_deref(), req.cwd.as_deref())?;
        let kind = req.kind.unwrap_or(Kind::Fact);
        Ok(Prepared {
            req,
            tags,
            metadata,
            importance,
            topic_key,
            room,
            kind,
            redacted,
        })
    }
}

/// Adds `more` to `into`, one entry per rule with the counts summed.
fn merge_redactions(into: &mut Vec<Redaction>, more: Vec<Redaction>) {
    for r in more {
        match into.iter_mut().find(|x| x.kind == r.kind) {
            Some(x) => x.count += r.count,
            None => into.push(r),
        }
    }
}
