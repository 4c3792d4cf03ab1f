//! A memory as a vault file: where it goes (`folder_for`, `new_stem`) and its text
//! (front matter, body, `[[wikilinks]]`). Pure: no I/O here.

use super::*;

/// The folder a memory's file belongs in, relative to the vault root.
pub fn folder_for(m: &Memory) -> String {
    if m.tier == Tier::Trash {
        return TRASH_DIR.to_string();
    }
    if m.kind == Kind::Episode {
        let d = time::format(m.created_at);
        return format!("episode/{}/{}", &d[0..4], &d[5..7]);
    }
    m.kind.as_str().to_string()
}

/// A file name stem for a new file: `YYYYMMDD-<slug>-<uid>` (B's scheme, with the whole uid
/// so a link resolves even when the database is gone).
pub fn new_stem(m: &Memory) -> String {
    let d = time::format(m.created_at);
    let date = format!("{}{}{}", &d[0..4], &d[5..7], &d[8..10]);
    let first = m
        .title
        .as_deref()
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| {
            m.content
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
        });
    let mut slug = String::new();
    for c in first.trim().trim_start_matches('#').trim().chars() {
        if slug.chars().count() >= 40 {
            break;
        }
        if c.is_control() || "<>:\"/\\|?*#^[]".contains(c) {
            continue;
        }
        slug.push(if c.is_whitespace() { '-' } else { c });
    }
    let slug = slug.trim_matches(['-', '.']).to_string();
    let slug = if slug.is_empty() {
        "memory".into()
    } else {
        slug
    };
    format!("{date}-{slug}-{}", m.uid)
}

fn fmt_weight(w: f64) -> String {
    let s = format!("{w:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() { "0".into() } else { s.into() }
}

fn fmt_float(x: f64) -> String {
    let s = format!("{x}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// The text of a memory's file. `links`: (target file stem, kind, weight).
pub fn render(m: &Memory, links: &[(String, LinkKind, f64)]) -> String {
    let mut s = String::with_capacity(m.content.len() + 512);
    s.push_str("---\n");
    s.push_str(&format!("uid: {}\n", m.uid));
    s.push_str(&format!("id: {}\n", m.id));
    if let Some(t) = &m.title {
        s.push_str(&format!("title: {}\n", quote(t)));
    }
    s.push_str(&format!("kind: {}\n", m.kind));
    s.push_str(&format!("importance: {}\n", fmt_float(m.importance)));
    s.push_str(&format!("tier: {}\n", m.tier));
    s.push_str(&format!("room: {}\n", quote(&m.room)));
    let tags: Vec<String> = m.tags.iter().map(|t| quote(t)).collect();
    s.push_str(&format!("tags: [{}]\n", tags.join(", ")));
    if let Some(t) = &m.topic_key {
        s.push_str(&format!("topic_key: {}\n", quote(t)));
    }
    s.push_str(&format!("pinned: {}\n", m.pinned));
    s.push_str(&format!("source: {}\n", quote(&m.source)));
    if let Some(t) = &m.session_id {
        s.push_str(&format!("session: {}\n", quote(t)));
    }
    s.push_str(&format!("created: {}\n", time::format(m.created_at)));
    s.push_str(&format!("updated: {}\n", time::format(m.updated_at)));
    s.push_str(&format!("valid_from: {}\n", time::format(m.valid_from)));
    if let Some(t) = m.valid_to {
        s.push_str(&format!("valid_to: {}\n", time::format(t)));
    }
    if m.metadata.as_object().is_some_and(|o| !o.is_empty()) {
        s.push_str(&format!("metadata: {}\n", m.metadata));
    }
    if links.is_empty() {
        s.push_str("links: []\n");
    } else {
        s.push_str("links:\n");
        for (stem, kind, w) in links {
            let link = if *kind == LinkKind::Explicit && (*w - 1.0).abs() < 1e-9 {
                format!("[[{stem}]]")
            } else {
                format!("[[{stem}|{kind} {}]]", fmt_weight(*w))
            };
            s.push_str(&format!("  - {}\n", quote(&link)));
        }
    }
    s.push_str("---\n");
    s.push_str(&m.content);
    s.push('\n');
    s
}

/// [`render`] plus the writes folded into the memory, one quoted line each in the front
/// matter (`evidence:`), so the vault too holds every acknowledged word. Reindex leaves
/// the key alone; the database keeps the rows.
pub fn render_with_evidence(
    m: &Memory,
    links: &[(String, LinkKind, f64)],
    evidence: &[crate::evidence::Evidence],
) -> String {
    add_evidence(render(m, links), evidence)
}

/// A rendered file (either format) with the writes folded into its memory in its front
/// matter (`evidence:`).
pub fn add_evidence(text: String, evidence: &[crate::evidence::Evidence]) -> String {
    if evidence.is_empty() {
        return text;
    }
    let mut lines = String::from("evidence:\n");
    for e in evidence {
        let title = e
            .title
            .as_ref()
            .map(|t| format!(" titled {t:?}"))
            .unwrap_or_default();
        let line = format!(
            "{} {} from {}{title}: {}",
            time::format(e.at),
            e.action,
            e.source,
            e.content
        );
        lines.push_str(&format!("  - {}\n", quote(&line)));
    }
    // Just before the closing `---` of the front matter.
    let end = text[4..].find("\n---\n").map_or(0, |i| i + 5);
    format!("{}{lines}{}", &text[..end], &text[end..])
}

/// Seed B's layout and front matter ([`engram_core::config::VaultFormat::B`]), for a
/// vault that is B's folder: B on another machine, or a tool keyed on B's front matter,
/// still reads every file engram writes there. What B has no key for is kept in keys B
/// ignores (`kind`, `title`, `engram_id`, `engram_importance`, `engram_links`, …), so
/// engram reads the file back as it wrote it.
pub mod seed_b {
    use super::*;

    /// The links engram makes by itself (not listed in B-format files).
    pub fn is_automatic(k: LinkKind) -> bool {
        matches!(k, LinkKind::Semantic | LinkKind::CoRecall)
    }

    /// B's type for an engram kind: B knew knowledge, preference, project and episode.
    pub fn b_type(k: Kind) -> &'static str {
        match k {
            Kind::Preference => "preference",
            Kind::Episode => "episode",
            Kind::Project | Kind::Progress | Kind::Handoff => "project",
            _ => "knowledge",
        }
    }

    /// B's folder: `knowledge/`, `preferences/`, `projects/`, `episodes/YYYY/MM/`, `_trash/`.
    pub fn folder_for(m: &Memory) -> String {
        if m.tier == Tier::Trash {
            return TRASH_DIR.to_string();
        }
        match b_type(m.kind) {
            "episode" => {
                let d = time::format(m.created_at);
                format!("episodes/{}/{}", &d[0..4], &d[5..7])
            }
            "preference" => "preferences".into(),
            "project" => "projects".into(),
            _ => "knowledge".into(),
        }
    }

    /// B's file name: `YYYYMMDD-<slug>-<last six of the id>` (links name the id itself,
    /// so the name need not hold all of it).
    pub fn new_stem(m: &Memory) -> String {
        let full = super::new_stem(m);
        let base = full.strip_suffix(&format!("-{}", m.uid)).unwrap_or(&full);
        let tail: String = m
            .uid
            .chars()
            .rev()
            .take(6)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("{base}-{tail}")
    }

    /// B's 1–10 importance for engram's 0–1 (B's rubric: 0.1 per step).
    fn b_importance(i: f64) -> i64 {
        ((i * 10.0).round() as i64).clamp(1, 10)
    }

    /// The text of a memory's file in B's format. `links`: (target uid, kind, weight).
    pub fn render(m: &Memory, links: &[(String, LinkKind, f64)]) -> String {
        let mut s = String::with_capacity(m.content.len() + 512);
        s.push_str("---\n");
        s.push_str(&format!("id: {}\n", m.uid));
        s.push_str(&format!("type: {}\n", b_type(m.kind)));
        // Quoted, as B's YAML wrote it: a reader parses it as text, not as a date object.
        s.push_str(&format!(
            "created: {}\n",
            quote(&time::format(m.created_at))
        ));
        let tags: Vec<String> = m.tags.iter().map(|t| quote(t)).collect();
        s.push_str(&format!("tags: [{}]\n", tags.join(", ")));
        s.push_str(&format!("importance: {}\n", b_importance(m.importance)));
        s.push_str(&format!("source: {}\n", quote(&m.source)));
        // B's four tiers: hot, cold, superseded, trash.
        let tier = match m.tier {
            Tier::Active => "hot",
            Tier::Archived => "cold",
            Tier::Superseded => "superseded",
            Tier::Trash => "trash",
        };
        s.push_str(&format!("tier: {tier}\n"));
        s.push_str(&format!("room: {}\n", quote(&m.room)));
        // B's `links` are plain `[[<id>]]`, once each, for the links a user made; every
        // typed link (with its kind and weight) is in `engram_links`, which engram reads.
        // B's files listed what a memory links to by hand and, for a correction, what it
        // replaced.
        let mut plain: Vec<&str> = Vec::new();
        for (uid, kind, _) in links {
            if matches!(kind, LinkKind::Explicit | LinkKind::Supersedes)
                && !plain.contains(&uid.as_str())
            {
                plain.push(uid);
            }
        }
        if plain.is_empty() {
            s.push_str("links: []\n");
        } else {
            s.push_str("links:\n");
            for uid in plain {
                s.push_str(&format!("  - {}\n", quote(&format!("[[{uid}]]"))));
            }
        }
        // Links engram makes by itself as memories are used and written (semantic,
        // co_recall) stay in the database: listing them would rewrite an old file of B's
        // every time a new memory comes near it (tester-b: sync churn).
        let kept: Vec<&(String, LinkKind, f64)> =
            links.iter().filter(|(_, k, _)| !is_automatic(*k)).collect();
        if !kept.is_empty() {
            s.push_str("engram_links:\n");
            for (uid, kind, w) in kept {
                let link = format!("[[{uid}|{kind} {}]]", fmt_weight(*w));
                s.push_str(&format!("  - {}\n", quote(&link)));
            }
        }
        // engram's own fields, under keys B ignores.
        s.push_str(&format!("engram_id: {}\n", m.id));
        s.push_str(&format!("kind: {}\n", m.kind));
        if let Some(t) = &m.title {
            s.push_str(&format!("title: {}\n", quote(t)));
        }
        if (b_importance(m.importance) as f64 / 10.0 - m.importance).abs() > 1e-9 {
            s.push_str(&format!("engram_importance: {}\n", fmt_float(m.importance)));
        }
        if let Some(t) = &m.topic_key {
            s.push_str(&format!("topic_key: {}\n", quote(t)));
        }
        if m.pinned {
            s.push_str("pinned: true\n");
        }
        if let Some(t) = &m.session_id {
            s.push_str(&format!("session: {}\n", quote(t)));
        }
        s.push_str(&format!("updated: {}\n", time::format(m.updated_at)));
        if m.valid_from != m.created_at {
            s.push_str(&format!("valid_from: {}\n", time::format(m.valid_from)));
        }
        if let Some(t) = m.valid_to {
            s.push_str(&format!("valid_to: {}\n", time::format(t)));
        }
        if m.metadata.as_object().is_some_and(|o| !o.is_empty()) {
            s.push_str(&format!("metadata: {}\n", m.metadata));
        }
        s.push_str("---\n");
        s.push_str(&m.content);
        s.push('\n');
        s
    }
}
