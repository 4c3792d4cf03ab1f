//! A vault file read back: the front matter's fields as a [`FileRecord`] (seed B's keys
//! and scales included), laid over a memory or made into a new one. Pure: no I/O here.

use super::*;

/// One memory as a vault file states it. Fields the file leaves out are `None`: an edit
/// that drops a key keeps the database's value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileRecord {
    pub uid: Option<String>,
    pub id: Option<MemoryId>,
    pub title: Option<String>,
    pub kind: Option<Kind>,
    pub importance: Option<f64>,
    pub tier: Option<Tier>,
    pub room: Option<String>,
    pub tags: Option<Vec<String>>,
    pub topic_key: Option<Option<String>>,
    pub pinned: Option<bool>,
    pub source: Option<String>,
    pub session_id: Option<Option<String>>,
    pub created_at: Option<Millis>,
    pub updated_at: Option<Millis>,
    pub valid_from: Option<Millis>,
    pub valid_to: Option<Option<Millis>>,
    pub metadata: Option<serde_json::Value>,
    /// `None` when the file has no `links` key (the database's links stay).
    pub links: Option<Vec<LinkRef>>,
    /// Which of the memory's links the file speaks for: every kind (engram's format), all
    /// but the automatic ones (a file engram wrote in B's format: `engram_links`), or the
    /// explicit ones only (a seed B file: plain `links`). Reading it back sets those and
    /// leaves the others as they are.
    pub links_scope: LinksScope,
    pub content: String,
}

/// Which links a file's list speaks for ([`FileRecord::links_scope`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LinksScope {
    #[default]
    All,
    /// Every kind but semantic and co_recall (engram's B-format files).
    Written,
    /// Explicit links only (seed B's own files).
    Explicit,
}

impl LinksScope {
    /// Whether a link of `kind` is one the file speaks for.
    pub fn covers(self, kind: LinkKind) -> bool {
        match self {
            LinksScope::All => true,
            LinksScope::Written => !super::render::seed_b::is_automatic(kind),
            LinksScope::Explicit => kind == LinkKind::Explicit,
        }
    }
}

/// A `[[target|kind weight]]` link as written in a file.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkRef {
    pub target: String,
    pub kind: LinkKind,
    pub weight: f64,
    pub line: usize,
}

fn perr(line: usize, key: &str, msg: impl std::fmt::Display) -> ParseError {
    ParseError::new(line, format!("`{key}`: {msg}"))
}

fn text_of(f: &frontmatter::Field) -> Result<Option<String>, ParseError> {
    match &f.value {
        Value::Null => Ok(None),
        v => v
            .as_text()
            .map(Some)
            .ok_or_else(|| perr(f.line, &f.key, "expected text")),
    }
}

fn time_of(f: &frontmatter::Field) -> Result<Option<Millis>, ParseError> {
    match text_of(f)? {
        None => Ok(None),
        Some(s) => time::parse(&s)
            .map(Some)
            .ok_or_else(|| perr(f.line, &f.key, format!("{s:?} is not a date"))),
    }
}

/// Parses a kind as the seeds wrote it in files (B's folder-style plurals included).
pub fn parse_kind(raw: &str) -> Option<Kind> {
    if let Ok(k) = Kind::parse(raw) {
        return Some(k);
    }
    let s = raw.trim().to_ascii_lowercase();
    let singular = s
        .strip_suffix("ies")
        .map(|b| format!("{b}y"))
        .or_else(|| s.strip_suffix('s').map(str::to_string))?;
    Kind::parse(&singular).ok()
}

/// Reads a wikilink (`[[target]]`, `[[target|kind 0.5]]`) or a bare uid.
fn link_ref(v: &Value, line: usize) -> Result<LinkRef, ParseError> {
    let Some(raw) = v.as_text() else {
        return Err(perr(
            line,
            "links",
            "each link must be text like \"[[name]]\"",
        ));
    };
    let inner = raw
        .trim()
        .strip_prefix("[[")
        .and_then(|r| r.strip_suffix("]]"))
        .unwrap_or(raw.trim());
    let (target, alias) = match inner.split_once('|') {
        Some((t, a)) => (t.trim(), Some(a.trim())),
        None => (inner.trim(), None),
    };
    let target = target.split('#').next().unwrap_or(target).trim();
    let target = target.strip_suffix(".md").unwrap_or(target);
    let target = target.rsplit('/').next().unwrap_or(target);
    if target.is_empty() {
        return Err(perr(line, "links", format!("{raw:?} names no file")));
    }
    let (mut kind, mut weight) = (LinkKind::Explicit, 1.0);
    if let Some(a) = alias {
        let mut parts = a.split_whitespace();
        if let Some(k) = parts.next() {
            // An alias that is no link kind is a display name Obsidian users may write.
            if let Ok(k) = LinkKind::parse(k) {
                kind = k;
                if let Some(w) = parts.next().and_then(|w| w.parse::<f64>().ok()) {
                    weight = w.clamp(0.0, 1.0);
                }
            }
        }
    }
    Ok(LinkRef {
        target: target.to_string(),
        kind,
        weight,
        line,
    })
}

/// Reads a parsed file into a record. `type` (seed B) is read as `kind`, and `id` as the
/// uid when it is a ULID (B's ids are); an integer importance is on B's 1–10 scale. A file
/// engram wrote in B's format keeps its exact values in `engram_id`, `engram_importance`
/// and `engram_tier` (B's keys round them), which win, and its typed links in
/// `engram_links` beside B's plain `links`.
pub fn record_from_doc(doc: &Document) -> Result<FileRecord, ParseError> {
    let mut r = FileRecord {
        content: doc.body.clone(),
        ..Default::default()
    };
    // engram's exact values in a file written in B's format (B's keys round them).
    let (mut exact_importance, mut exact_tier) = (None, None);
    // B's plain `links` and engram's typed `engram_links` (files in B's format).
    let (mut plain, mut typed): (Option<Vec<LinkRef>>, Option<Vec<LinkRef>>) = (None, None);
    for f in &doc.fields {
        let (k, line) = (f.key.as_str(), f.line);
        match k {
            "engram_id" => match &f.value {
                Value::Int(i) => r.id = Some(*i),
                _ => return Err(perr(line, k, "expected a whole number")),
            },
            "engram_importance" => match &f.value {
                Value::Float(x) => {
                    exact_importance = Some(
                        engram_core::importance::from_number(*x, false)
                            .map_err(|e| perr(line, k, e.message))?,
                    )
                }
                _ => return Err(perr(line, k, "expected a number between 0 and 1")),
            },
            "engram_tier" => {
                if let Some(s) = text_of(f)? {
                    exact_tier = Some(Tier::parse(&s).map_err(|e| perr(line, k, e.message))?);
                }
            }
            "uid" => r.uid = text_of(f)?.filter(|s| !s.trim().is_empty()),
            "id" => match &f.value {
                Value::Int(i) => r.id = Some(*i),
                Value::Null => {}
                v => {
                    let s = v.as_text().unwrap_or_default();
                    if ulid::Ulid::from_string(s.trim()).is_ok() {
                        if r.uid.is_none() {
                            r.uid = Some(s.trim().to_string());
                        }
                    } else if let Ok(i) = s.trim().trim_start_matches('#').parse() {
                        r.id = Some(i);
                    }
                }
            },
            "title" => r.title = text_of(f)?,
            "kind" | "type" => {
                if k == "type" && doc.get("kind").is_some() {
                    continue;
                }
                if let Some(s) = text_of(f)? {
                    r.kind = Some(
                        parse_kind(&s)
                            .ok_or_else(|| perr(line, k, format!("{s:?} is not a known kind")))?,
                    );
                }
            }
            "importance" => {
                let v = match &f.value {
                    // engram writes 0–1 as a float ("1.0"): an integer in a file is B's
                    // 1–10, 1 included (tester-b: B's least important read as the most).
                    Value::Int(i) if (1..=10).contains(i) => Ok(*i as f64 / 10.0),
                    Value::Int(i) => engram_core::importance::from_number(*i as f64, true),
                    Value::Float(x) => engram_core::importance::from_number(*x, false),
                    Value::Null => continue,
                    _ => return Err(perr(line, k, "expected a number")),
                };
                r.importance = Some(v.map_err(|e| perr(line, k, e.message))?);
            }
            "tier" => {
                if let Some(s) = text_of(f)? {
                    r.tier = Some(Tier::parse(&s).map_err(|e| perr(line, k, e.message))?);
                }
            }
            "room" => r.room = text_of(f)?,
            "tags" => {
                r.tags = Some(match &f.value {
                    Value::Null => Vec::new(),
                    Value::List(items) => items
                        .iter()
                        .map(|i| {
                            i.as_text()
                                .ok_or_else(|| perr(line, k, "tags must be text"))
                        })
                        .collect::<Result<_, _>>()?,
                    v => vec![
                        v.as_text()
                            .ok_or_else(|| perr(line, k, "expected a list"))?,
                    ],
                })
            }
            "topic_key" => r.topic_key = Some(text_of(f)?),
            "pinned" => {
                r.pinned = Some(match &f.value {
                    Value::Bool(b) => *b,
                    Value::Null => false,
                    _ => return Err(perr(line, k, "expected true or false")),
                })
            }
            "source" => r.source = text_of(f)?,
            "session" | "session_id" => r.session_id = Some(text_of(f)?),
            "created" | "created_at" => r.created_at = time_of(f)?,
            "updated" | "updated_at" => r.updated_at = time_of(f)?,
            "valid_from" => r.valid_from = time_of(f)?,
            "valid_to" => r.valid_to = Some(time_of(f)?),
            "metadata" => {
                r.metadata = Some(match &f.value {
                    Value::Json(j) if j.is_object() => j.clone(),
                    Value::Null => serde_json::json!({}),
                    _ => return Err(perr(line, k, "expected a JSON object")),
                })
            }
            "links" | "engram_links" => {
                let listed: Vec<LinkRef> = match &f.value {
                    Value::Null => Vec::new(),
                    Value::List(items) => items
                        .iter()
                        .map(|i| link_ref(i, line))
                        .collect::<Result<_, _>>()?,
                    v => vec![link_ref(v, line)?],
                };
                if k == "engram_links" {
                    typed = Some(listed);
                } else {
                    plain = Some(listed);
                }
            }
            // Anything else (Obsidian's aliases, cssclasses, a user's own keys) is left alone.
            _ => {}
        }
    }
    if exact_importance.is_some() {
        r.importance = exact_importance;
    }
    r.links_scope = match (doc.get("uid").is_some(), typed.is_some()) {
        (true, _) => LinksScope::All,
        (false, true) => LinksScope::Written,
        (false, false) => LinksScope::Explicit,
    };
    // Every typed link, and a plain one B added by hand to a target none of them names.
    r.links = match (typed, plain) {
        (Some(mut t), Some(p)) => {
            for l in p {
                if !t.iter().any(|a| a.target == l.target) {
                    t.push(l);
                }
            }
            Some(t)
        }
        (t, p) => t.or(p),
    };
    if exact_tier.is_some() {
        r.tier = exact_tier;
    }
    if r.content.trim().is_empty() {
        return Err(ParseError::new(
            0,
            "the file has no text below its front matter",
        ));
    }
    Ok(r)
}

/// Applies a file's fields onto a memory (fields the file leaves out keep their value).
/// `in_trash`: the file lies under `_trash/`.
pub fn apply_record(rec: &FileRecord, mut m: Memory, in_trash: bool) -> Memory {
    m.content = rec.content.clone();
    if rec.title.is_some() {
        m.title = rec.title.clone().filter(|t| !t.trim().is_empty());
    }
    if let Some(k) = rec.kind {
        m.kind = k;
    }
    if let Some(i) = rec.importance {
        m.importance = i;
    }
    m.tier = if in_trash {
        Tier::Trash
    } else {
        match rec.tier {
            Some(Tier::Trash) | None if m.tier == Tier::Trash => Tier::Active,
            Some(Tier::Trash) => Tier::Active,
            Some(t) => t,
            None => m.tier,
        }
    };
    if let Some(r) = &rec.room {
        m.room = r.clone();
    }
    if let Some(t) = &rec.tags {
        m.tags = t.clone();
    }
    if let Some(t) = &rec.topic_key {
        m.topic_key = t.clone();
    }
    if let Some(p) = rec.pinned {
        m.pinned = p;
    }
    if let Some(s) = &rec.source {
        m.source = s.clone();
    }
    if let Some(s) = &rec.session_id {
        m.session_id = s.clone();
    }
    if let Some(t) = rec.created_at {
        m.created_at = t;
    }
    if let Some(t) = rec.valid_from {
        m.valid_from = t;
    }
    if let Some(t) = rec.valid_to {
        m.valid_to = t;
    }
    if let Some(md) = &rec.metadata {
        m.metadata = md.clone();
    }
    m
}

/// A new memory from a file that names no memory the store holds.
pub fn memory_from_record(
    rec: &FileRecord,
    uid: String,
    now: Millis,
    default_importance: f64,
    in_trash: bool,
) -> Memory {
    let created = rec.created_at.unwrap_or(now);
    let base = Memory {
        id: rec.id.unwrap_or(0),
        uid,
        content: String::new(),
        title: None,
        kind: Kind::Fact,
        importance: default_importance,
        tags: Vec::new(),
        room: engram_core::room::COMMON.to_string(),
        topic_key: None,
        pinned: false,
        tier: Tier::Active,
        created_at: created,
        updated_at: rec.updated_at.unwrap_or(created),
        valid_from: created,
        valid_to: None,
        source: "vault".to_string(),
        session_id: None,
        metadata: serde_json::json!({}),
        author: None,
    };
    apply_record(rec, base, in_trash)
}
