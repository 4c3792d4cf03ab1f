//! What `remember` does with a text that resembles memories already in the room.
//!
//! DESIGN.md's order, after exact duplicates and topic keys (handled by the store):
//! the nearest active memories decide. A contradiction with one that is about the same
//! thing → SUPERSEDE it (the latest truth wins; the old one stays, marked no longer valid).
//! Otherwise, very close → REINFORCE; close and adding information → MERGE (the prior
//! text kept as a revision); anything else → NEW, with close-ish neighbours offered to the
//! agent as conflict candidates to judge.
//!
//! Closeness is measured twice: word overlap (always available, and the only measure that
//! works for Japanese and Chinese under an English model) and, when a model is loaded,
//! cosine on the model's own scale ([`crate::embed::Calibration`]). Either measure
//! reaching a band is enough.

use crate::contradiction::{self, Conflict};
use crate::embed::Calibration;
use crate::{subject, text};
use serde::Serialize;
use std::collections::BTreeSet;

/// How close two memories are.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Similarity {
    /// Jaccard overlap of content words (stemmed) and CJK character pairs, 0–1.
    pub lexical: f64,
    /// Share of the existing memory's terms the new text repeats, 0–1: near 1 when the
    /// new text restates the old one and adds to it.
    pub contained: f64,
    /// The cosine between the two vectors on the model's calibrated scale ([`calibrated`]:
    /// 0 unrelated, 1 paraphrase, 2 duplicate), when both vectors exist.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f64>,
}

/// The lower edge of each band, per measure. Cosine edges are in calibrated units
/// ([`calibrated`]): 0 = the model's unrelated level, 1 = paraphrase, 2 = duplicate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Bands {
    pub lexical_reinforce: f64,
    pub lexical_merge: f64,
    pub lexical_related: f64,
    /// The same for mostly Chinese or Japanese text (character pairs).
    pub lexical_merge_cjk: f64,
    pub lexical_related_cjk: f64,
    pub cosine_reinforce: f64,
    pub cosine_merge: f64,
    pub cosine_related: f64,
}

impl Default for Bands {
    fn default() -> Self {
        Bands {
            lexical_reinforce: 0.85,
            lexical_merge: 0.6,
            lexical_related: 0.3,
            lexical_merge_cjk: 0.45,
            lexical_related_cjk: 0.15,
            cosine_reinforce: 1.6,
            cosine_merge: 1.4,
            cosine_related: 0.6,
        }
    }
}

/// A cosine on the model's scale: 0 at its unrelated level, 1 at paraphrase, 2 at
/// duplicate, linear in between and clamped to [0, 2]. Seed A's thresholds (0.85 / 0.65 /
/// 0.40 / 0.70) were set for mpnet's cosines; on this scale they carry over to any model.
pub fn calibrated(cos: f64, cal: &Calibration) -> f64 {
    let (u, p, d) = (
        f64::from(cal.unrelated),
        f64::from(cal.paraphrase),
        f64::from(cal.duplicate),
    );
    if cos <= p {
        ((cos - u) / (p - u).max(1e-3)).clamp(0.0, 1.0)
    } else {
        (1.0 + (cos - p) / (d - p).max(1e-3)).clamp(1.0, 2.0)
    }
}

/// The terms lexical similarity compares: stemmed content words and CJK character pairs.
pub fn terms(text_in: &str) -> BTreeSet<String> {
    let t = text::split(text_in);
    let mut out: BTreeSet<String> = t.words.iter().map(|w| contradiction::stem(w)).collect();
    for run in &t.cjk_runs {
        let cs: Vec<char> = run.chars().collect();
        if cs.len() == 1 {
            out.insert(run.clone());
        }
        for w in cs.windows(2) {
            out.insert(w.iter().collect());
        }
    }
    out
}

/// Jaccard overlap of two term sets.
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 0.0;
    }
    let inter = a.intersection(b).count();
    inter as f64 / (a.len() + b.len() - inter) as f64
}

/// What to do with the new text against one existing memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Decision {
    /// The new text says what the memory says: strengthen it.
    Reinforce,
    /// The new text adds to the memory: its content becomes `text`.
    Merge { text: String },
    /// The new text replaces the memory.
    Supersede { conflict: Conflict },
    /// Related but neither: store anew and offer the memory as a candidate to judge.
    Related,
    /// Not about the same thing.
    Unrelated,
}

/// Decides for one (existing, new) pair. `same_kind` gates reinforce and merge: a failure
/// and a decision with similar words are still two memories. Supersession crosses kinds.
pub fn decide(
    existing: &str,
    incoming: &str,
    sim: Similarity,
    bands: &Bands,
    same_kind: bool,
) -> Decision {
    let cos = sim.cosine.unwrap_or(0.0);
    // Character pairs overlap less than words for the same relatedness: CJK text gets
    // its own lexical bands.
    let cjk = text::mostly_cjk(existing) || text::mostly_cjk(incoming);
    let (lex_related, lex_merge) = if cjk {
        (bands.lexical_related_cjk, bands.lexical_merge_cjk)
    } else {
        (bands.lexical_related, bands.lexical_merge)
    };
    let related =
        sim.lexical >= lex_related || cos >= bands.cosine_related || sim.contained >= CONTAINED;
    // Two named subjects (Alice / Bob, the Berlin / the Tokyo office, OPS-4101 / OPS-4102)
    // are two things: no cue or cosine folds or retires one for the other.
    let (ro, rn) = (subject::read(existing), subject::read(incoming));
    // Two slots of one subject ("for the orders database" / "for the analytics
    // database") are two facts the same way.
    if subject::differ(&ro, &rn).is_some() || subject::slots_differ(&ro, &rn).is_some() {
        return if related {
            Decision::Related
        } else {
            Decision::Unrelated
        };
    }
    if !related {
        // A change that names what it left ("replaced Jenkins with …", "webpackはやめた")
        // needs no more overlap than that name: it is the link.
        if sim.lexical > 0.0
            && let Some(conflict) = contradiction::detect(existing, incoming)
            && conflict.named
        {
            return Decision::Supersede { conflict };
        }
        return Decision::Unrelated;
    }
    if let Some(conflict) = contradiction::detect(existing, incoming) {
        return Decision::Supersede { conflict };
    }
    // The same subject's same slot set to another value ("My editor is Vim" → "My editor
    // is Helix"): an update no cue announced.
    // Identifiers outside the values must agree: "Release v1.4.2's …" is another release.
    if subject::same_slot_new_value(&ro, &rn)
        && !contradiction::numbers_differ(
            &subject::without_value(existing, &ro),
            &subject::without_value(incoming, &rn),
        )
    {
        return Decision::Supersede {
            conflict: Conflict {
                kind: contradiction::ConflictKind::SlotChange,
                cue: format!(
                    "{} → {}",
                    ro.value.as_deref().unwrap_or("?"),
                    rn.value.as_deref().unwrap_or("?")
                ),
                named: false,
            },
        };
    }
    if !same_kind {
        return Decision::Related;
    }
    // Different numbers with the rest alike is another instance (sprint 12, sprint 13),
    // unless it was a value change (handled above).
    let distinct = contradiction::numbers_differ(existing, incoming);
    let close =
        !distinct && (sim.lexical >= bands.lexical_reinforce || cos >= bands.cosine_reinforce);
    // A merge adds to what the memory says: the new text must keep the old one's terms,
    // the more of them the less else is needed. Swapping words ("sprint 12: login" →
    // "sprint 13: billing") is another fact, however close the vectors are.
    let mostly = if cjk { CJK_CONTAINED } else { MOSTLY_CONTAINED };
    let mergeable = !distinct
        && (sim.contained >= CONTAINED
            || (sim.contained >= mostly && sim.lexical >= lex_related)
            || (sim.contained >= MERGE_CONTAINED.max(if cjk { mostly } else { 0.0 })
                && (sim.lexical >= lex_merge || cos >= bands.cosine_merge)));
    // "prefers dark mode" → "now prefers light mode", "closed" → "open on Fridays": a
    // change no rule above read. Never folded into the old memory's evidence, where no
    // recall would find it: stored apart and offered to judge.
    if unread_change(existing, incoming, &ro, &rn) {
        return Decision::Related;
    }
    if close && sim.contained < MOSTLY_CONTAINED {
        // The same thing in other words: nothing to fold in.
        return Decision::Reinforce;
    }
    if mergeable {
        return match merge_text(existing, incoming) {
            Some(text) => Decision::Merge { text },
            None => Decision::Reinforce,
        };
    }
    if close || (!distinct && subject::same_statement(&ro, &rn)) {
        // The same thing said differently.
        return Decision::Reinforce;
    }
    Decision::Related
}

/// Word pairs that say opposite things of one slot: one in each text is a change.
const ANTONYMS: &[(&str, &str)] = &[
    ("open", "closed"),
    ("enabled", "disabled"),
    ("on", "off"),
    ("dark", "light"),
    ("allowed", "forbidden"),
    ("allowed", "blocked"),
    ("true", "false"),
    ("public", "private"),
    ("required", "optional"),
    ("deprecated", "supported"),
    ("online", "offline"),
    ("up", "down"),
    ("pass", "fail"),
    ("passing", "failing"),
    ("start", "stop"),
    ("active", "inactive"),
    ("synchronous", "asynchronous"),
    ("sync", "async"),
];

/// Words by which a text announces that what it says is new.
const CHANGE_WORDS: &[&str] = &[
    "now",
    "instead",
    "anymore",
    "switched",
    "changed",
    "henceforth",
];

/// Whether `incoming` changes what `existing` says although no change rule read it: an
/// antonym pair across the two texts (each word in one text only), or a change word the
/// old text lacks with two values read that share no word.
pub fn unread_change(
    existing: &str,
    incoming: &str,
    ro: &subject::Reading,
    rn: &subject::Reading,
) -> bool {
    let lower = |t: &str| -> BTreeSet<String> {
        t.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (wo, wn) = (lower(existing), lower(incoming));
    let only =
        |a: &BTreeSet<String>, b: &BTreeSet<String>, w: &str| a.contains(w) && !b.contains(w);
    let antonym = ANTONYMS.iter().any(|(x, y)| {
        (only(&wo, &wn, x) && only(&wn, &wo, y)) || (only(&wo, &wn, y) && only(&wn, &wo, x))
    });
    let cue = CHANGE_WORDS.iter().any(|w| only(&wn, &wo, w));
    antonym || (cue && subject::values_differ(ro, rn))
}

/// In words, what was read against the nearest memory `#id` and why the action followed:
/// the line `remember` returns (`why`) and logs on the memory's event (`explain` shows it).
pub fn why(d: &Decision, id: i64, existing: &str, incoming: &str, sim: Similarity) -> String {
    let measures = match sim.cosine {
        Some(c) => format!(
            "word overlap {:.2}, {:.0} % of its terms kept, cosine {c:.2} of 2",
            sim.lexical,
            sim.contained * 100.0
        ),
        None => format!(
            "word overlap {:.2}, {:.0} % of its terms kept",
            sim.lexical,
            sim.contained * 100.0
        ),
    };
    let (ro, rn) = (subject::read(existing), subject::read(incoming));
    let read = match (ro.describe(), rn.describe()) {
        (None, None) => String::new(),
        (o, n) => format!(
            "; read #{id} as {}, the new text as {}",
            o.as_deref().unwrap_or("? · ? · ?"),
            n.as_deref().unwrap_or("? · ? · ?")
        ),
    };
    let measures = format!("{measures}{read}");
    match d {
        Decision::Supersede { conflict } => {
            format!(
                "replaces #{id}: {:?} ({}); {measures}",
                conflict.kind, conflict.cue
            )
        }
        Decision::Reinforce => format!("repeats #{id} in other words; {measures}"),
        Decision::Merge { .. } => format!("adds detail to #{id}; {measures}"),
        Decision::Related | Decision::Unrelated => {
            match crate::identifiers::differ(existing, incoming) {
                Some(ids) => format!(
                    "about another thing than #{id}: its identifiers differ ({ids}) and no change cue says the value changed; {measures}"
                ),
                None if let Some(names) = subject::differ(&ro, &rn) => format!(
                    "about another subject than #{id} ({names}): neither replaced nor folded in; {measures}"
                ),
                None if matches!(d, Decision::Related)
                    && let Some(slots) = subject::slots_differ(&ro, &rn) =>
                {
                    format!(
                        "about another slot than #{id} ({slots}): neither replaced nor folded in; {measures}"
                    )
                }
                None if matches!(d, Decision::Related) => format!(
                    "related to #{id} but neither a repeat, an addition nor a recognised change; offered to judge; {measures}"
                ),
                None => format!("nothing close enough (nearest #{id}); {measures}"),
            }
        }
    }
}

/// [`Similarity::contained`] at or above this: the new text restates the old one.
pub const CONTAINED: f64 = 0.9;

/// A merge needs at least this share of the old memory's terms in the new text.
pub const MERGE_CONTAINED: f64 = 0.5;

/// The same for CJK text, whose character pairs survive rewording less often.
pub const CJK_CONTAINED: f64 = 0.6;

/// With this share of the old terms kept, a related text merges.
pub const MOSTLY_CONTAINED: f64 = 0.8;

/// Terms a memory needs before "the new text holds all of them" means anything.
pub const MIN_TERMS_FOR_CONTAINMENT: usize = 3;

/// The share of `a`'s terms that `b` holds.
pub fn containment(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.len() < MIN_TERMS_FOR_CONTAINMENT {
        return 0.0;
    }
    a.intersection(b).count() as f64 / a.len() as f64
}

/// Words the incoming text must add to be worth merging (seed A used three; two keeps
/// "and Redis for caching" while a reworded repeat still only reinforces).
pub const MERGE_MIN_NEW_WORDS: usize = 2;

/// The merged content, or `None` when the incoming text adds nothing worth keeping.
/// A text containing the other wins whole; otherwise the new paragraph is appended.
pub fn merge_text(existing: &str, incoming: &str) -> Option<String> {
    let old = terms(existing);
    let new = terms(incoming);
    // New information: new words, and new CJK characters (reordered CJK makes new pairs
    // but says nothing new).
    let chars = |s: &str| -> BTreeSet<char> { s.chars().filter(|c| text::is_cjk(*c)).collect() };
    let words = |t: &BTreeSet<String>| -> BTreeSet<String> {
        t.iter()
            .filter(|w| !w.chars().any(text::is_cjk))
            .cloned()
            .collect()
    };
    // A new identifier or number ("marker0x1", "v2.3", "INC-552") is information on its
    // own: reinforcing would drop it.
    let new_words: Vec<String> = words(&new).difference(&words(&old)).cloned().collect();
    let added = new_words.len()
        + new_words
            .iter()
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .count()
        + chars(incoming).difference(&chars(existing)).count() / 2;
    if added < MERGE_MIN_NEW_WORDS {
        return None;
    }
    Some(compose(existing, incoming))
}

/// The merged text of two memories' words: the new text alone when it restates the old
/// one whole, else the old text followed by the new one.
pub fn compose(existing: &str, incoming: &str) -> String {
    let (e, i) = (existing.trim(), incoming.trim());
    if i.to_lowercase().contains(&e.to_lowercase()) || terms(existing).is_subset(&terms(incoming)) {
        return i.to_string();
    }
    format!("{e}\n\n{i}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unread_change_is_never_a_repeat() {
        let ch = |a: &str, b: &str| unread_change(a, b, &subject::read(a), &subject::read(b));
        for (a, b) in [
            (
                "The user prefers dark mode",
                "The user now prefers light mode",
            ),
            (
                "The office is closed on Fridays",
                "The office is open on Fridays",
            ),
            ("Telemetry is enabled", "Telemetry is disabled"),
        ] {
            assert!(ch(a, b), "{a} / {b}");
        }
        for (a, b) in [
            (
                "The user prefers dark mode",
                "The user prefers dark mode in every editor",
            ),
            (
                "The user prefers dark mode",
                "The user now prefers dark mode",
            ),
            (
                "The office is open on Fridays",
                "On Fridays the office is open",
            ),
        ] {
            assert!(!ch(a, b), "{a} / {b}");
        }
    }
    use crate::contradiction::ConflictKind;

    fn sim(lexical: f64, cosine: Option<f64>) -> Similarity {
        Similarity {
            lexical,
            contained: 0.0,
            cosine,
        }
    }

    /// The new text keeps every term of the old one.
    fn elaborates(lexical: f64) -> Similarity {
        Similarity {
            lexical,
            contained: 1.0,
            cosine: None,
        }
    }

    /// Two named subjects stay two memories however close the measures and whatever the
    /// cue; the same subject's slot set anew is an update.
    #[test]
    fn subjects_decide_before_cues_and_cosines() {
        let b = Bands::default();
        let near = Similarity {
            lexical: 0.9,
            contained: 1.0,
            cosine: Some(1.9),
        };
        for (old, new) in [
            ("Alice prefers tabs.", "Bob prefers spaces."),
            (
                "OPS-4102: the export job is paused.",
                "OPS-4101: the export job is no longer paused.",
            ),
            (
                "The Berlin office uses Slack as its chat tool.",
                "The Tokyo office uses Teams as its chat tool.",
            ),
            (
                "Alice is on call this week.",
                "Bob is not on call this week.",
            ),
            ("柏林办公室的聊天工具是Slack", "东京办公室的聊天工具是Teams"),
        ] {
            assert_eq!(decide(old, new, near, &b, true), Decision::Related, "{new}");
            let why = why(&Decision::Related, 1, old, new, near);
            assert!(why.contains(" ≠ "), "{why}");
        }
        match decide(
            "My editor is Vim.",
            "My editor is Helix.",
            sim(0.4, None),
            &b,
            true,
        ) {
            Decision::Supersede { conflict } => {
                assert_eq!(conflict.kind, ConflictKind::SlotChange);
                assert_eq!(conflict.cue, "vim → helix");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn calibrated_scale_has_three_anchor_points() {
        let cal = Calibration {
            unrelated: 0.2,
            paraphrase: 0.6,
            duplicate: 0.9,
            multilingual: false,
        };
        assert_eq!(calibrated(0.1, &cal), 0.0);
        assert!((calibrated(0.4, &cal) - 0.5).abs() < 1e-6);
        assert!((calibrated(0.6, &cal) - 1.0).abs() < 1e-6);
        assert!((calibrated(0.75, &cal) - 1.5).abs() < 1e-6);
        assert_eq!(calibrated(0.99, &cal), 2.0);
    }

    #[test]
    fn jaccard_uses_stems_and_cjk_pairs() {
        let a = terms("We use PostgreSQL for the database");
        let b = terms("We used PostgreSQL for databases");
        assert_eq!(jaccard(&a, &b), 1.0);
        let c = terms("データベースはSQLite");
        let d = terms("データベースをPostgreSQL");
        assert!(jaccard(&c, &d) > 0.4);
        assert_eq!(jaccard(&terms(""), &terms("")), 0.0);
    }

    #[test]
    fn each_action() {
        let b = Bands::default();
        // Reinforce: close, nothing new.
        assert_eq!(
            decide(
                "The API uses JWT tokens.",
                "The API uses JWT tokens!",
                sim(1.0, None),
                &b,
                true
            ),
            Decision::Reinforce
        );
        // Merge: close, adds information; containing text wins whole.
        assert_eq!(
            decide(
                "The API uses JWT tokens.",
                "The API uses JWT tokens. They expire after fifteen minutes and refresh silently.",
                elaborates(0.7),
                &b,
                true
            ),
            Decision::Merge {
                text: "The API uses JWT tokens. They expire after fifteen minutes and refresh silently."
                    .into()
            }
        );
        match decide(
            "Deploys run from the main branch.",
            "Deploys run from the main branch after the nightly smoke tests pass green.",
            elaborates(0.62),
            &b,
            true,
        ) {
            Decision::Merge { .. } => {}
            other => panic!("{other:?}"),
        }
        // Supersede: contradiction within the related band, even across kinds.
        match decide(
            "The project database is PostgreSQL.",
            "We switched from PostgreSQL to SQLite for the project database.",
            sim(0.5, None),
            &b,
            false,
        ) {
            Decision::Supersede { conflict } => {
                assert_eq!(conflict.kind, ConflictKind::ChangeOfState)
            }
            other => panic!("{other:?}"),
        }
        // Related: in the band, no contradiction, not close enough to merge.
        assert_eq!(
            decide(
                "Deploys use Docker.",
                "Docker images are built in CI.",
                sim(0.35, None),
                &b,
                true
            ),
            Decision::Related
        );
        // Close vectors but swapped words: another fact, not a merge.
        assert_eq!(
            decide(
                "Sprint 12 goal: ship the login page.",
                "Sprint 13 goal: ship the billing page.",
                Similarity {
                    lexical: 0.5,
                    contained: 0.67,
                    cosine: Some(1.6)
                },
                &b,
                true
            ),
            Decision::Related
        );
        // Different kinds never merge.
        assert_eq!(
            decide("a b c", "a b c d e f", sim(0.9, None), &b, false),
            Decision::Related
        );
        // Unrelated: below every band; a cosine alone can make it related.
        assert_eq!(
            decide("x", "y", sim(0.1, Some(0.2)), &b, true),
            Decision::Unrelated
        );
        assert_eq!(
            decide("x y", "z w", sim(0.1, Some(0.9)), &b, true),
            Decision::Related
        );
    }
}
