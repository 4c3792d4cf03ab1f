//! A hit's relevance on an absolute scale, and the verdict a recall gives on its best hit.
//!
//! Ranking normalises relevance over the candidates (BM25 scaled to the best, cosines
//! min-max over the pass), so the best hit of any query looks good, even of a query the
//! store knows nothing about. This scale does not depend on the other candidates: it is the
//! larger of the share of the query's terms a memory holds (`coverage`) and the cosine
//! mapped through the loaded model's calibration (0 at the model's unrelated level, 1 at
//! its paraphrase level). So a result can say that nothing matched well, and the deepening
//! plan compares the same number for every query and store. It never orders hits.

use crate::embed::Calibration;
use serde::Serialize;

/// How well a recall's best hit matched, on the absolute scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Match {
    /// The best hit holds most of the query or means nearly the same.
    Good,
    /// The best hit shares some of the query's words or meaning, not most: read it with care.
    Weak,
    /// Nothing matched (no hits, or hits that share at most a word in passing).
    None,
}

impl Match {
    /// The line a text surface prints under a result that is not a good match.
    pub fn notice(self) -> Option<&'static str> {
        match self {
            Match::Good => None,
            Match::Weak => Some("weak match: no memory holds most of the query"),
            // A verdict from a calibrated scale, not proof: a right answer worded far from
            // the question can land here, so the hits are offered as guesses, not denied.
            Match::None => Some(
                "no good match: no memory is clearly about this query; any hits below are guesses",
            ),
        }
    }
}

/// Where a verdict changes on the absolute scale: at or above `good_at` the best hit is a
/// good match, under `none_below` nothing matched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bands {
    pub good_at: f64,
    pub none_below: f64,
}

/// Lexical only (the scale is coverage), measured with `engram bench locomo --data
/// locomo-dev.json --convs conv-26 --lexical --foreign 200`: conv-26's 152 questions
/// against conv-26, and 200 questions of the other four conversations against it
/// (queries the store knows nothing about). At 0.55, 93.4 % of the own questions are
/// good and 5.5 % of the foreign ones; under 0.34 (one term of three) none of the own
/// and 62.5 % of the foreign ones.
pub const LEXICAL: Bands = Bands {
    good_at: 0.55,
    none_below: 0.34,
};

/// With a model (the larger of coverage and the calibrated cosine), measured as
/// [`LEXICAL`] with `--model all-MiniLM-L6-v2` instead of `--lexical`: at 0.7, 99.3 % of
/// the own questions are good and 5.0 % of the foreign ones; under 0.4 none of the own
/// and 38.5 % of the foreign ones. The calibration makes the bands hold for other models.
pub const WITH_MODEL: Bands = Bands {
    good_at: 0.7,
    none_below: 0.4,
};

/// What a term found only inside a longer word counts for, against a whole word's 1:
/// "ing" inside "testing" is a lead (exhaustive recall finds it), not a match.
pub const FRAGMENT_WEIGHT: f64 = 0.5;

/// Coverage with fragments counted at [`FRAGMENT_WEIGHT`]: `whole` is the share of the
/// query's terms the memory holds as words, `partial` the share counting words found
/// inside longer words too (never below `whole`).
pub fn with_fragments(whole: f64, partial: f64) -> f64 {
    whole + FRAGMENT_WEIGHT * (partial - whole).max(0.0)
}

/// A memory's absolute relevance: the larger of its coverage of the query's terms and its
/// calibrated cosine (when the query has a vector of the loaded model).
pub fn absolute(coverage: f64, cosine: Option<f64>, calibration: Option<Calibration>) -> f64 {
    match (cosine, calibration) {
        (Some(c), Some(cal)) => coverage.max(cal.scale(c as f32)),
        _ => coverage,
    }
}

/// The verdict on a result from its best hit's absolute relevance (`None` without hits);
/// `with_model`: whether the query had a vector of the loaded model; `has_content`: whether
/// the query has a word that is not a stopword (`QueryPlan::has_content`): without one,
/// nothing can have matched well, whatever the scores.
pub fn verdict(best: Option<f64>, with_model: bool, has_content: bool) -> Match {
    let bands = if with_model { WITH_MODEL } else { LEXICAL };
    if !has_content {
        return Match::None;
    }
    match best {
        Some(b) if b >= bands.good_at => Match::Good,
        Some(b) if b >= bands.none_below => Match::Weak,
        _ => Match::None,
    }
}

/// The raw cosine a hit needs under seed A's similarity floors (`floors[0]`, 0.50 in A;
/// `floors[1]`, 0.20, when no candidate reaches the first). A's floors are raw cosines of
/// its sentence-transformers model, which spreads like MiniLM; on another model's scale
/// (e5's compressed range) they move with its calibration, so they keep their meaning.
pub fn seed_a_floor(cosines: &[f64], floors: [f64; 2], model: Calibration) -> f64 {
    let reference = crate::embed::calibration("sentence-transformers/all-MiniLM-L6-v2");
    let span = f64::from(model.paraphrase - model.unrelated);
    let on_model = |f: f64| f64::from(model.unrelated) + reference.scale(f as f32) * span;
    let (high, low) = (on_model(floors[0]), on_model(floors[1]));
    if cosines.iter().any(|&c| c >= high) {
        high
    } else {
        low
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::calibration;

    #[test]
    fn a_fragment_counts_half_a_word() {
        assert_eq!(with_fragments(1.0, 1.0), 1.0);
        assert_eq!(with_fragments(0.0, 1.0), 0.5);
        assert!(verdict(Some(with_fragments(0.0, 1.0)), false, true) != Match::Good);
    }

    #[test]
    fn the_scale_is_absolute_and_the_verdict_has_three_steps() {
        let mini = calibration("sentence-transformers/all-MiniLM-L6-v2");
        // Lexical only: coverage is the scale.
        assert_eq!(absolute(0.75, None, None), 0.75);
        assert_eq!(absolute(0.75, Some(0.9), None), 0.75);
        // With a model: a paraphrase with no shared word is a good match ...
        assert!(absolute(0.0, Some(0.6), Some(mini)) >= WITH_MODEL.good_at);
        // ... an unrelated sentence is not, whatever else was among the candidates.
        assert!(absolute(0.0, Some(0.12), Some(mini)) < WITH_MODEL.none_below);
        assert_eq!(absolute(0.2, Some(0.12), Some(mini)), 0.2);
        let table = [
            (None, false, Match::None),
            (None, true, Match::None),
            (Some(0.0), false, Match::None),
            // One term of three, lexically: nothing.
            (Some(1.0 / 3.0), false, Match::None),
            (Some(0.4), false, Match::Weak),
            (Some(0.5), false, Match::Weak),
            (Some(0.6), false, Match::Good),
            (Some(0.6), true, Match::Weak),
            (Some(0.35), true, Match::None),
            (Some(0.7), true, Match::Good),
            (Some(1.0), true, Match::Good),
        ];
        for (best, model, want) in table {
            assert_eq!(verdict(best, model, true), want, "{best:?} {model}");
        }
        // A query of stopwords only ("a", "the"): full coverage of nothing is no match.
        assert_eq!(verdict(Some(1.0), false, false), Match::None);
        assert_eq!(verdict(Some(1.0), true, false), Match::None);
        assert!(crate::text::plan_query("私の").has_content());
        assert!(!crate::text::plan_query("the").has_content());
        assert!(crate::text::plan_query("the sqlite").has_content());
        assert!(Match::Good.notice().is_none());
        assert!(Match::None.notice().unwrap().contains("no good match"));
        assert_eq!(serde_json::to_value(Match::Weak).unwrap(), "weak");
    }

    #[test]
    fn seed_a_floors_hold_on_minilm_and_move_with_e5() {
        let mini = calibration("sentence-transformers/all-MiniLM-L6-v2");
        assert!((seed_a_floor(&[0.62, 0.3], [0.5, 0.2], mini) - 0.5).abs() < 1e-6);
        // Nothing reaches 0.50: the second floor.
        assert!((seed_a_floor(&[0.31, 0.1], [0.5, 0.2], mini) - 0.2).abs() < 1e-6);
        // e5 puts unrelated text at 0.76: the floors move up its scale.
        let e5 = calibration("intfloat/multilingual-e5-small");
        let high = seed_a_floor(&[0.95], [0.5, 0.2], e5);
        assert!(high > 0.85 && high < 0.92, "{high}");
        assert!(seed_a_floor(&[0.8], [0.5, 0.2], e5) > 0.76);
    }
}
