//! Identifiers: the tokens that say *which* thing a text is about (a version, a hash, a
//! ticket, an invoice number, a date, "client 7", "user u3"), as opposed to quantities that
//! say *how much* of it there is ("timeout 30s", "five retries").
//!
//! Two texts alike in every word but an identifier are two things (release v1.4.2 and
//! v1.4.3, one user's crash report and another's, two invoices), not an update: the
//! value-change and flip rules must not retire one for the other unless a change cue says
//! so. A differing quantity is what an update looks like. Pure, no I/O.

use std::collections::BTreeSet;

/// Nouns that make the plain number after them a name ("client 7", "sprint 12", "#42").
/// Attributes a thing has one value of at a time (port, version, timeout) are not here:
/// "port 8080" → "port 9090" is an update of the same slot.
const NAMING_NOUNS: &[&str] = &[
    "client",
    "user",
    "customer",
    "note",
    "ticket",
    "issue",
    "pr",
    "build",
    "sprint",
    "release",
    "invoice",
    "order",
    "incident",
    "commit",
    "run",
    "job",
    "task",
    "item",
    "case",
    "story",
    "epic",
    "account",
    "host",
    "node",
    "server",
    "room",
    "batch",
    "step",
    "test",
    "patch",
    "milestone",
    "chapter",
    "section",
    "id",
    "no",
    "number",
    "cve",
    "rfc",
    "bug",
    "feature",
    "request",
    "session",
    "agent",
    "worker",
    "shard",
    "replica",
    "cluster",
    "team",
    "squad",
];

/// Whether `w` (lower-cased, singular or plural) is a noun that makes a number after it a name.
pub fn is_naming_noun(w: &str) -> bool {
    NAMING_NOUNS.contains(&w.trim_end_matches('s'))
}

/// The identifiers in a text, lower-cased: every token holding a digit that is not a plain
/// quantity, and plain numbers named by the noun before them. CJK text counts its ASCII
/// runs the same way.
pub fn of(text: &str) -> BTreeSet<String> {
    let lower = text.to_lowercase();
    let toks: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || "._-#:/".contains(c)) || is_cjk(c))
        .map(|t| t.trim_matches(|c: char| ".:-/_".contains(c)))
        .filter(|t| !t.is_empty())
        .collect();
    let mut out = BTreeSet::new();
    for (i, t) in toks.iter().enumerate() {
        if !t.chars().any(|c| c.is_ascii_digit()) {
            continue;
        }
        let named = i > 0 && NAMING_NOUNS.contains(&toks[i - 1].trim_end_matches('s'));
        if named || t.starts_with('#') || !is_quantity(t) {
            out.insert(t.to_string());
        }
    }
    out
}

/// A number, possibly with a decimal part, a time of day or a unit glued on ("30s",
/// "10mb", "2am", "10:30", "1.5", "50%"), and nothing else.
fn is_quantity(t: &str) -> bool {
    let digits_end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ',' || c == ':'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(digits_end);
    if num.is_empty() || num.matches('.').count() > 1 || num.ends_with(':') {
        return false;
    }
    unit.is_empty() || (unit.len() <= 7 && unit.chars().all(|c| c.is_alphabetic() || c == '%'))
}

/// `2026-05-20`, `2026/05/20`, `05-20`: digit groups joined by `-` or `/`.
fn is_date(t: &str) -> bool {
    let parts: Vec<&str> = t.split(['-', '/']).collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 4 && p.chars().all(|c| c.is_ascii_digit()))
}

fn is_cjk(c: char) -> bool {
    crate::text::is_cjk(c)
}

/// The identifiers one text has and the other lacks, when both name some and they differ:
/// `Some("v1.4.2 ≠ v1.4.3")`. `None` when they agree or either names none.
pub fn differ(old: &str, new: &str) -> Option<String> {
    differ_sets(of(old), of(new))
}

/// [`differ`] with dates left out: episodes of one recurring task ("Session (2026-10-11,
/// webapp): rotated the staging certificate" and the same on 2026-10-12) differ by the day
/// they happened, which makes them episodes of one thing, not two things (consolidation).
pub fn differ_but_dates(old: &str, new: &str) -> Option<String> {
    let undated =
        |t: &str| -> BTreeSet<String> { of(t).into_iter().filter(|i| !is_date(i)).collect() };
    differ_sets(undated(old), undated(new))
}

fn differ_sets(a: BTreeSet<String>, b: BTreeSet<String>) -> Option<String> {
    if a.is_empty() || b.is_empty() || a == b || b.is_subset(&a) || a.is_subset(&b) {
        return None;
    }
    let gone: Vec<&str> = a.difference(&b).map(String::as_str).collect();
    let came: Vec<&str> = b.difference(&a).map(String::as_str).collect();
    // A shared identifier names the same thing; when only its date moved ("v5.0.0 on
    // 2026-05-20" → "v5.0.0 postponed to 2026-06-03") that is a new value, not a new thing.
    if a.intersection(&b).next().is_some() && gone.iter().all(|t| is_date(t)) {
        return None;
    }
    Some(format!("{} ≠ {}", gone.join(" "), came.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn episodes_a_day_apart_are_one_thing_to_consolidation() {
        let (a, b) = (
            "Session (2026-10-11, webapp): rotated the staging TLS certificate",
            "Session (2026-10-12, webapp): rotated the staging TLS certificate",
        );
        assert!(differ(a, b).is_some());
        assert_eq!(differ_but_dates(a, b), None);
        assert!(
            differ_but_dates(
                "Release v1.4.2 on 2026-10-11",
                "Release v1.4.3 on 2026-10-11"
            )
            .is_some()
        );
    }

    #[test]
    fn identifiers_and_quantities() {
        let ids = |s: &str| of(s).into_iter().collect::<Vec<_>>();
        assert_eq!(
            ids("Release v1.4.2 shipped with commit 3f9a2c1."),
            ["3f9a2c1", "v1.4.2"]
        );
        assert_eq!(ids("Client 7 wrote note 12 about the build"), ["12", "7"]);
        assert_eq!(ids("Invoice INV-2024-031 for 1200 EUR"), ["inv-2024-031"]);
        assert_eq!(ids("Deployed on 2026-03-01 at 10:30"), ["2026-03-01"]);
        assert!(ids("The timeout is 30s and retries are 5, 50% of 2.5mb").is_empty());
        assert_eq!(ids("用户u3x4在构建1234上报告了崩溃"), ["u3x4"]);
    }

    #[test]
    fn differing_identifiers_name_two_things() {
        assert!(
            differ(
                "Release v1.4.2 shipped with commit 3f9a2c1.",
                "Release v1.4.3 shipped with commit 8b7d0e4."
            )
            .is_some()
        );
        assert!(differ("Invoice INV-001 was paid.", "Invoice INV-002 was paid.").is_some());
        assert!(differ("The timeout is 30s.", "The timeout is 10s.").is_none());
        assert!(differ("Release v1.4.2 shipped.", "Release v1.4.2 shipped late.").is_none());
        assert!(differ("Build 12 passed.", "All tests pass.").is_none());
        assert!(
            differ(
                "v5.0.0 ships on 2026-05-20.",
                "v5.0.0 slipped to 2026-06-03."
            )
            .is_none()
        );
    }

    #[test]
    fn another_thing_agreement_or_addition_is_no_change() {
        use crate::contradiction::detect;
        for (a, b) in [
            (
                "Release v1.4.2 shipped with commit 3f9a2c1.",
                "Release v1.4.3 shipped with commit 8b7d0e4.",
            ),
            (
                "Experiment EXP-17 (blue CTA) raised conversion by 2.1%, p=0.03.",
                "Experiment EXP-19 (shorter form) raised conversion by 0.4%, p=0.41.",
            ),
            (
                "2026年度上期のインフラ予算は1,200万円。",
                "2026年度下期のインフラ予算は1,350万円。",
            ),
            (
                "db-slave-01 的磁盘是 2TB SSD。",
                "db-slave-02 的磁盘是 4TB SSD。",
            ),
        ] {
            assert_eq!(detect(a, b), None, "{a} → {b}");
        }
        // Agreement and addition are no change either.
        assert_eq!(
            detect(
                "User prefers tabs over spaces.",
                "Indent with tabs, not spaces; that's what the user likes."
            ),
            None
        );
        assert_eq!(
            detect(
                "Redis is used as the session store.",
                "Redis is also used as the Celery broker for background jobs."
            ),
            None
        );
        // A cue pointing at the new value still replaces it.
        assert!(
            detect(
                "Staging runs Node 18.17.0.",
                "Staging was upgraded to Node 20.11.1."
            )
            .is_some()
        );
        assert!(detect("タイムアウトは30秒", "タイムアウトは60秒").is_some());
    }
}
