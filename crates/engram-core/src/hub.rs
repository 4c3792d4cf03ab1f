//! The engineering state hub (seed A): failures, progress and handoffs as memories with a
//! fixed text shape and importance, plus token estimates for budgets. Pure formatting and
//! mapping; storing is the store's job.

use crate::InputError;

/// A failure's severity and the importance it implies (A: critical 0.9, major 0.7, minor 0.5).
pub fn severity_importance(severity: &str) -> Result<f64, InputError> {
    match severity.trim().to_ascii_lowercase().as_str() {
        "critical" => Ok(0.9),
        "major" => Ok(0.7),
        "minor" => Ok(0.5),
        other => Err(InputError::new(
            "severity",
            format!("{other:?} is not a severity; use critical, major or minor"),
        )),
    }
}

/// The statuses a feature can be in, and the importance of a progress entry in each
/// (A: planning 0.6, in_progress 0.8, blocked 0.9, review 0.7, done 0.5).
pub fn status_importance(status: &str) -> Result<f64, InputError> {
    match normalize_status(status).as_str() {
        "planning" => Ok(0.6),
        "in_progress" => Ok(0.8),
        "blocked" => Ok(0.9),
        "review" => Ok(0.7),
        "done" => Ok(0.5),
        other => Err(InputError::new(
            "status",
            format!(
                "{other:?} is not a status; use planning, in_progress, blocked, review or done"
            ),
        )),
    }
}

/// `In Progress`, `in-progress` and `in_progress` are one status.
pub fn normalize_status(status: &str) -> String {
    status.trim().to_ascii_lowercase().replace([' ', '-'], "_")
}

fn joined(items: &[String]) -> String {
    items
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A handoff's text, as seed A writes it.
pub fn handoff_text(
    summary: &str,
    completed: &[String],
    in_progress: &[String],
    blocked: &[String],
    next_steps: &[String],
) -> String {
    let mut s = format!("Session Handoff: {}", summary.trim());
    for (label, items) in [
        ("Completed", completed),
        ("In progress", in_progress),
        ("Blocked", blocked),
        ("Next steps", next_steps),
    ] {
        if !items.is_empty() {
            s.push_str(&format!("\n{label}: {}", joined(items)));
        }
    }
    s
}

/// A handoff's fields read back from its text as [`handoff_text`] (and seed A) wrote it:
/// `(summary, completed, in_progress, blocked, next_steps)`, or `None` when the text is
/// not a handoff. A handoff imported from A may keep them only in its text.
pub type HandoffFields = (String, Vec<String>, Vec<String>, Vec<String>, Vec<String>);

pub fn parse_handoff_text(text: &str) -> Option<HandoffFields> {
    let mut lines = text.lines();
    let first = lines.next()?.trim();
    let summary = first
        .strip_prefix("Session Handoff:")
        .or_else(|| first.strip_prefix("Session handoff:"))?
        .trim()
        .to_string();
    let mut f: HandoffFields = (summary, vec![], vec![], vec![], vec![]);
    // "Blocked: none" lists nothing (tester-a: it came back as a blocker named "none").
    let nothing = |s: &str| {
        matches!(
            s.to_ascii_lowercase().trim_end_matches('.'),
            "" | "none" | "n/a" | "na" | "-" | "nothing" | "no"
        )
    };
    let items = |rest: &str| -> Vec<String> {
        rest.split(';')
            .map(|s| s.trim().to_string())
            .filter(|s| !nothing(s))
            .collect()
    };
    for line in lines {
        let Some((label, rest)) = line.split_once(':') else {
            continue;
        };
        match label.trim().to_ascii_lowercase().as_str() {
            "completed" => f.1 = items(rest),
            "in progress" => f.2 = items(rest),
            "blocked" => f.3 = items(rest),
            "next steps" => f.4 = items(rest),
            _ => {}
        }
    }
    Some(f)
}

/// A failure's text, as seed A writes it.
pub fn failure_text(
    component: &str,
    error: &str,
    root_cause: Option<&str>,
    fix: Option<&str>,
    tests: &[String],
) -> String {
    let mut s = format!("Failure in {}: {}", component.trim(), error.trim());
    if let Some(r) = root_cause.filter(|r| !r.trim().is_empty()) {
        s.push_str(&format!("\nRoot cause: {}", r.trim()));
    }
    if let Some(f) = fix.filter(|f| !f.trim().is_empty()) {
        s.push_str(&format!("\nFix: {}", f.trim()));
    }
    if !tests.is_empty() {
        s.push_str(&format!("\nRelated tests: {}", tests.join(", ")));
    }
    s
}

/// A progress entry's text, as seed A writes it.
pub fn progress_text(
    feature: &str,
    status: &str,
    completion: f64,
    blockers: &[String],
    quality: Option<f64>,
    notes: Option<&str>,
) -> String {
    let mut s = format!(
        "Progress: {} [{}] {:.0}%",
        feature.trim(),
        normalize_status(status),
        completion
    );
    if !blockers.is_empty() {
        s.push_str(&format!("\nBlockers: {}", joined(blockers)));
    }
    if let Some(q) = quality {
        s.push_str(&format!("\nQuality: {q:.2}"));
    }
    if let Some(n) = notes.filter(|n| !n.trim().is_empty()) {
        s.push_str(&format!("\nNotes: {}", n.trim()));
    }
    s
}

/// The share of `query`'s words found in `text`, for matching a handoff's next steps to
/// later work. Words are compared by their first five letters, a crude stemmer that
/// makes "migrate" meet "migration".
pub fn term_coverage(query: &str, text: &str) -> f64 {
    let stem = |w: &str| w.chars().take(5).collect::<String>();
    let q: Vec<String> = crate::text::split(query)
        .words
        .iter()
        .map(|w| stem(w))
        .collect();
    if q.is_empty() {
        return 0.0;
    }
    let t: std::collections::HashSet<String> = crate::text::split(text)
        .words
        .iter()
        .map(|w| stem(w))
        .collect();
    let mut uniq = q.clone();
    uniq.sort();
    uniq.dedup();
    uniq.iter().filter(|w| t.contains(*w)).count() as f64 / uniq.len() as f64
}

/// A rough token count for budgets: about four bytes of Latin text per token, one token
/// per CJK character. Errs on the high side so a budget is not overrun.
pub fn estimate_tokens(text: &str) -> usize {
    let mut cjk = 0usize;
    let mut other = 0usize;
    for c in text.chars() {
        if crate::text::is_cjk(c) {
            cjk += 1;
        } else {
            other += c.len_utf8();
        }
    }
    cjk + other.div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_a_importance_maps() {
        assert_eq!(severity_importance("critical").unwrap(), 0.9);
        assert_eq!(severity_importance("Major").unwrap(), 0.7);
        assert_eq!(severity_importance("minor").unwrap(), 0.5);
        assert_eq!(severity_importance("meh").unwrap_err().field, "severity");
        assert_eq!(status_importance("blocked").unwrap(), 0.9);
        assert_eq!(status_importance("In Progress").unwrap(), 0.8);
        assert_eq!(status_importance("done").unwrap(), 0.5);
        assert_eq!(status_importance("planning").unwrap(), 0.6);
        assert_eq!(status_importance("review").unwrap(), 0.7);
        assert!(status_importance("cancelled").is_err());
    }

    #[test]
    fn texts_follow_seed_a() {
        let h = handoff_text(
            "auth done",
            &["login".into(), "logout".into()],
            &[],
            &[],
            &["2fa".into()],
        );
        assert_eq!(
            h,
            "Session Handoff: auth done\nCompleted: login; logout\nNext steps: 2fa"
        );
        let f = failure_text(
            "db",
            "deadlock",
            Some("lock order"),
            Some("sort keys"),
            &["t1".into(), "t2".into()],
        );
        assert_eq!(
            f,
            "Failure in db: deadlock\nRoot cause: lock order\nFix: sort keys\nRelated tests: t1, t2"
        );
        let p = progress_text(
            "search",
            "in-progress",
            42.4,
            &["index".into()],
            Some(0.8),
            Some("going"),
        );
        assert_eq!(
            p,
            "Progress: search [in_progress] 42%\nBlockers: index\nQuality: 0.80\nNotes: going"
        );
        let (summary, completed, _, blocked, next) = parse_handoff_text(
            "Session Handoff: auth done\nCompleted: login; logout\nNext steps: 2fa",
        )
        .unwrap();
        assert_eq!(
            (summary.as_str(), completed.len(), blocked.len()),
            ("auth done", 2, 0)
        );
        assert_eq!(next, vec!["2fa".to_string()]);
        assert!(parse_handoff_text("Deploys go out on Tuesdays").is_none());
        let (.., blocked, _) =
            parse_handoff_text("Session Handoff: x\nBlocked: none\nNext steps: -").unwrap();
        assert!(blocked.is_empty(), "{blocked:?}");
    }

    #[test]
    fn coverage_of_steps() {
        assert_eq!(
            term_coverage("migrate the database", "Database migration finished"),
            1.0
        );
        assert!((term_coverage("add login page", "login works") - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(term_coverage("the", "anything"), 0.0);
    }

    #[test]
    fn token_estimates() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("会議"), 2);
    }
}
