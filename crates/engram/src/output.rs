//! Printing results: JSON for machines (`--json`), short text for people.

use engram_core::time;
use engram_store::{MemoryDetail, RecallResult, RememberOutcome, Stats};
use serde::Serialize;

pub fn json<T: Serialize>(v: &T) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).expect("results serialise")
    );
}

pub fn value<T: Serialize>(v: &T, as_json: bool, text: impl FnOnce(&T) -> String) {
    if as_json {
        json(v)
    } else {
        println!("{}", text(v))
    }
}

pub fn id_list(ids: &[i64]) -> String {
    ids.iter()
        .map(|i| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn excerpt(s: &str, max: usize) -> String {
    one_line(s, max)
}

fn one_line(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

pub fn remember(o: &RememberOutcome, as_json: bool) {
    value(o, as_json, |o| {
        let verb = match o.action {
            engram_store::RememberAction::Created => "created",
            engram_store::RememberAction::Reinforced => "already known; reinforced",
            engram_store::RememberAction::Merged => "merged (the prior text is kept as a revision)",
            engram_store::RememberAction::Superseded => "created; it supersedes",
            engram_store::RememberAction::Updated => "updated (topic key; prior text kept)",
        };
        let mut line = format!("#{} {verb}", o.id);
        if o.action == engram_store::RememberAction::Superseded {
            let olds: Vec<String> = o.touched.iter().map(|i| format!("#{i}")).collect();
            line.push_str(&format!(" {}", olds.join(", ")));
            if let Some(c) = &o.conflict {
                line.push_str(&format!(" ({})", c.cue));
            }
        }
        line.push_str(&format!(" (room {})", o.room));
        if let Some(w) = &o.why {
            line.push_str(&format!("\n  why: {w}"));
        }
        for c in &o.candidates {
            line.push_str(&format!(
                "\n  related: #{} {} (judge with: engram judge {} <verdict>)",
                c.id,
                c.excerpt.chars().take(80).collect::<String>(),
                c.judgment_id
            ));
        }
        for r in &o.redacted {
            line.push_str(&format!("\n  redacted: {} ×{}", r.kind, r.count));
        }
        line
    });
}

pub fn recall(r: &RecallResult, as_json: bool) {
    if as_json {
        return json(r);
    }
    let rooms = r
        .rooms
        .as_ref()
        .map(|v| v.join(", "))
        .unwrap_or_else(|| "all".into());
    let mode = if r.auto_deepened {
        format!("{:?} (deepened from {:?})", r.mode, r.requested_mode)
    } else {
        format!("{:?}", r.mode)
    };
    if r.hits.is_empty() {
        println!(
            "no memories found (mode {}, rooms {rooms})",
            mode.to_lowercase()
        );
        return;
    }
    for h in &r.hits {
        let m = &h.memory;
        println!(
            "#{:<5} {:.3}  [{}/{} · {}]  {}",
            m.id,
            h.score,
            m.kind,
            m.tier,
            m.room,
            one_line(&m.content, 100)
        );
        let mut extra = format!(
            "       rel {:.2} (absolute {:.2}) · act {:.2} · imp {:.2} · {} · {}",
            h.relevance,
            h.absolute,
            h.activation,
            m.importance,
            &time::format(m.created_at)[..10],
            m.author
                .as_ref()
                .map_or(m.source.clone(), |a| format!("{a} via {}", m.source))
        );
        if let Some(p) = &h.path {
            extra.push_str(&format!(" · via {}", id_list(p)));
        }
        if let Some(n) = &h.note {
            extra.push_str(&format!(" · {n}"));
        }
        if !h.conflicts_with.is_empty() {
            extra.push_str(&format!(" · conflicts with {}", id_list(&h.conflicts_with)));
        }
        println!("{extra}");
    }
    if let Some(notice) = r.matched.notice() {
        println!("{notice}");
    }
    println!(
        "({} hits, mode {}, rooms {rooms})",
        r.hits.len(),
        mode.to_lowercase()
    );
}

pub fn show(d: &MemoryDetail, history: bool, as_json: bool) {
    if as_json {
        return json(d);
    }
    let m = &d.memory;
    println!("#{} {}", m.id, m.uid);
    if let Some(t) = &m.title {
        println!("title:      {t}");
    }
    println!("kind:       {} ({:?} decay)", m.kind, m.kind.decay_class());
    println!(
        "tier:       {}{}",
        m.tier,
        d.superseded_by
            .map(|s| format!(" (replaced by #{s})"))
            .unwrap_or_default()
    );
    println!("room:       {}", m.room);
    println!(
        "importance: {:.2}   activation now: {:.3}   pinned: {}",
        m.importance, d.activation, m.pinned
    );
    if !m.tags.is_empty() {
        println!("tags:       {}", m.tags.join(", "));
    }
    if let Some(k) = &m.topic_key {
        println!("topic key:  {k}");
    }
    println!(
        "created:    {}   updated: {}",
        time::format(m.created_at),
        time::format(m.updated_at)
    );
    println!(
        "valid:      from {}{}",
        time::format(m.valid_from),
        m.valid_to
            .map(|t| format!(" to {}", time::format(t)))
            .unwrap_or_default()
    );
    println!(
        "source:     {}{}",
        m.source,
        m.session_id
            .as_ref()
            .map(|s| format!(" (session {s})"))
            .unwrap_or_default()
    );
    if let Some(author) = &m.author {
        println!("author:     {author}");
    }
    let counts: Vec<String> = d
        .event_counts
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    println!("events:     {}", counts.join(", "));
    for l in &d.links {
        println!(
            "link:       #{} -[{} {:.2}]-> #{}",
            l.src, l.kind, l.weight, l.dst
        );
    }
    println!("\n{}", m.content);
    if history {
        revisions(d);
    }
}

fn revisions(d: &MemoryDetail) {
    evidence(d);
    if d.revisions.is_empty() {
        println!("\nno earlier revisions");
        return;
    }
    for r in &d.revisions {
        println!(
            "\n--- revision {} (replaced by {} on {}) ---\n{}",
            r.number,
            r.reason,
            time::format(r.at),
            r.content
        );
    }
}

/// The writes folded into the memory, each in its own words.
fn evidence(d: &MemoryDetail) {
    for e in &d.evidence {
        println!(
            "\n--- evidence ({} of a write from {} on {}{}) ---\n{}",
            e.action,
            e.source,
            time::format(e.at),
            e.title
                .as_ref()
                .map(|t| format!(", titled {t:?}"))
                .unwrap_or_default(),
            e.content
        );
    }
}

/// `show` plus the reasons: tier, strength, review date, judgments, every revision.
pub fn explain(d: &MemoryDetail, as_json: bool) {
    if as_json {
        return json(d);
    }
    show(d, false, false);
    println!("\nwhy here:   {}", d.tier_reason);
    println!(
        "strength:   {:.3} (maintenance archives below the archive_strength setting)",
        d.strength
    );
    if let Some(t) = d.review_after {
        println!("review:     due after {}", time::format(t));
    }
    println!("history (newest first):");
    for e in &d.recent_events {
        println!(
            "  {} {} w={:.2}{}",
            time::format(e.at),
            e.kind,
            e.weight,
            e.detail
                .as_ref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default()
        );
    }
    for j in &d.judgments {
        println!(
            "judgment:   {} #{} {} #{} ({})",
            j.judgment_id,
            j.src,
            j.relation.as_deref().unwrap_or("pending"),
            j.dst,
            j.status
        );
    }
    revisions(d);
}

pub fn maintenance(r: &engram_store::maintain::MaintenanceReport, as_json: bool) {
    value(r, as_json, |r| {
        let mut out = format!(
            "{}examined {} memories: {} clusters consolidated ({} archived into keepers), {} faded memories archived, {} protected by strong neighbours, {} due for review",
            if r.dry_run { "dry run: " } else { "" },
            r.examined,
            r.consolidated.len(),
            r.consolidated
                .iter()
                .map(|c| c.archived.len())
                .sum::<usize>(),
            r.archived.len(),
            r.protected.len(),
            r.due_for_review.len()
        );
        for c in &r.consolidated {
            out.push_str(&format!(
                "\n  keep #{} ← {}",
                c.keeper,
                id_list(&c.archived)
            ));
        }
        for a in &r.archived {
            out.push_str(&format!(
                "\n  archive #{} (strength {:.4})",
                a.id, a.strength
            ));
        }
        out
    });
}

pub fn stats(s: &Stats, lexical_reason: Option<&str>, as_json: bool) {
    if as_json {
        let mut v = serde_json::to_value(s).expect("stats serialise");
        if let Some(r) = lexical_reason {
            v["search_note"] = serde_json::json!(r);
        }
        return json(&v);
    }
    let fmt = |m: &std::collections::BTreeMap<String, u64>| {
        if m.is_empty() {
            "-".to_string()
        } else {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    println!(
        "store:    {} ({} bytes, schema v{})",
        s.db_path, s.db_bytes, s.schema_version
    );
    println!(
        "search:   {} · dynamics {}",
        s.search,
        serde_json::to_value(s.dynamics)
            .unwrap_or_default()
            .as_str()
            .unwrap_or("?")
    );
    match (&s.embeddings.model, lexical_reason) {
        (Some(m), _) => println!(
            "model:    {m} ({} embedded, {} pending; {} vector search)",
            s.embeddings.embedded, s.embeddings.missing, s.embeddings.vector_index
        ),
        (None, Some(r)) => println!("model:    none: {r}"),
        (None, None) => {}
    }
    println!("memories: {}", s.total_memories);
    println!("  by tier: {}", fmt(&s.by_tier));
    println!("  by kind: {}", fmt(&s.by_kind));
    println!("  by room: {}", fmt(&s.by_room));
    println!("links:    {}", fmt(&s.links_by_kind));
    println!("events:   {} ({})", s.event_count, fmt(&s.events_by_kind));
}
