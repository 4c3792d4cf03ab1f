//! Recall's plan: which memories each mode may return, what each pass asks of the
//! candidate sources, when a weak result makes recall look harder, and how a token budget
//! cuts the list. Pure: the engine runs the pass this module names, reports the pass's
//! best scores back, and keeps the pass it is told to keep.
//!
//! * `fast`: active memories (episodes only when asked for by kind).
//! * `deep`: also archived and superseded memories and every kind; the direct hits seed
//!   spreading activation over links.
//! * `exhaustive`: every memory outside the trash, by relevance alone, with a substring
//!   scan for partial words and a larger candidate cap.

use crate::error::InputError;
use crate::{Config, Kind, Memory, Millis, Tier};
use serde::Serialize;

/// How hard recall looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    #[default]
    Fast,
    Deep,
    Exhaustive,
}

impl Mode {
    pub fn parse(raw: &str) -> Result<Mode, InputError> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "fast" => Ok(Mode::Fast),
            "deep" => Ok(Mode::Deep),
            "exhaustive" => Ok(Mode::Exhaustive),
            _ => Err(InputError::new(
                "mode",
                format!("{raw:?} is not a recall mode; use fast, deep or exhaustive"),
            )),
        }
    }
}

/// How a hit was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// It matched the query.
    Direct,
    /// It was reached over links from a memory that matched.
    Associative,
    /// An exhaustive scan found it.
    Exhaustive,
    /// A standing instruction or preference that applies to the query, given its own place
    /// (`engram_core::standing`).
    Standing,
}

/// Which memories a candidate source may return. Plain data, so every backend can render
/// it in its own query language and the engine can check rows it loaded itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    pub tiers: Vec<Tier>,
    /// Only these kinds, when given.
    pub kinds: Option<Vec<Kind>>,
    /// Never these kinds (fast recall leaves episodes out unless asked).
    pub exclude_kinds: Vec<Kind>,
    /// Only these rooms, when given.
    pub rooms: Option<Vec<String>>,
    /// Only memories that were true at this time: created by then, and not yet superseded.
    pub valid_at: Option<Millis>,
    /// Never these ids: other users' private memories, added by the store's visibility
    /// layer for a team user's call (empty otherwise), so a candidate list is never
    /// filled with what the caller may not see.
    pub hidden: Vec<crate::MemoryId>,
    /// Only memories carrying this tag, when given (recall's standing instructions).
    pub tag: Option<String>,
}

impl Filter {
    /// Every tier but the trash (deep and exhaustive recall), any kind unless named.
    pub fn outside_trash(kinds: &Option<Vec<Kind>>, rooms: &Option<Vec<String>>) -> Filter {
        Filter {
            tiers: vec![Tier::Active, Tier::Archived, Tier::Superseded],
            kinds: kinds.clone(),
            exclude_kinds: vec![],
            rooms: rooms.clone(),
            valid_at: None,
            hidden: vec![],
            tag: None,
        }
    }

    pub fn valid_at(mut self, at: Option<Millis>) -> Filter {
        self.valid_at = at;
        self
    }

    /// Whether a memory with this stored tier and room may be reached.
    pub fn allows_tier_room(&self, tier: &str, room: &str) -> bool {
        Tier::parse(tier).is_ok_and(|t| self.tiers.contains(&t))
            && self
                .rooms
                .as_ref()
                .is_none_or(|r| r.iter().any(|x| x == room))
    }

    pub fn allows(&self, m: &Memory) -> bool {
        self.tiers.contains(&m.tier)
            && self.kinds.as_ref().is_none_or(|k| k.contains(&m.kind))
            && !self.exclude_kinds.contains(&m.kind)
            && self.rooms.as_ref().is_none_or(|r| r.contains(&m.room))
            && self.valid_at.is_none_or(|at| valid_at(m, at))
            && !self.hidden.contains(&m.id)
            && self.tag.as_ref().is_none_or(|t| m.tags.contains(t))
    }
}

/// Whether a memory was true at `at`: it existed, and nothing had replaced it yet.
pub fn valid_at(m: &Memory, at: Millis) -> bool {
    m.valid_from <= at && m.valid_to.is_none_or(|t| t > at)
}

/// Exhaustive recall ranks at most this many lexical matches (best first), so a query that
/// matches half of a large store stays bounded in time and memory.
pub const EXHAUSTIVE_MAX_CANDIDATES: usize = 2000;

/// What a request narrows recall to, whatever the mode.
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    pub query: &'a str,
    /// Only these kinds (`None`: the mode's default).
    pub kinds: Option<Vec<Kind>>,
    /// Only these rooms (`None`: all).
    pub rooms: Option<Vec<String>>,
    pub as_of: Option<Millis>,
    /// Fast recall includes superseded memories too.
    pub include_superseded: bool,
}

/// One pass of recall: what to ask the candidate sources for, and how to rank.
#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    pub mode: Mode,
    pub filter: Filter,
    /// Lexical candidates wanted.
    pub lexical_k: usize,
    /// Vector candidates wanted (with a query vector).
    pub vector_k: usize,
    /// Words scanned for as substrings besides the query plan's own (exhaustive).
    pub partial_words: Vec<String>,
    /// Hops of spreading activation from the direct hits (0: none).
    pub spread_hops: usize,
}

/// The pass a mode runs.
pub fn pass(mode: Mode, scope: &Scope<'_>, cfg: &Config) -> Pass {
    match mode {
        Mode::Fast => {
            let tiers = if scope.as_of.is_some() || scope.include_superseded {
                vec![Tier::Active, Tier::Superseded]
            } else {
                vec![Tier::Active]
            };
            Pass {
                mode,
                filter: Filter {
                    tiers,
                    kinds: scope.kinds.clone(),
                    exclude_kinds: if scope.kinds.is_none() {
                        vec![Kind::Episode]
                    } else {
                        vec![]
                    },
                    rooms: scope.rooms.clone(),
                    valid_at: scope.as_of,
                    hidden: vec![],
                    tag: None,
                },
                lexical_k: cfg.candidate_k,
                vector_k: cfg.candidate_k,
                partial_words: Vec::new(),
                spread_hops: 0,
            }
        }
        Mode::Deep => Pass {
            mode,
            filter: Filter::outside_trash(&scope.kinds, &scope.rooms).valid_at(scope.as_of),
            lexical_k: cfg.candidate_k,
            vector_k: cfg.candidate_k,
            partial_words: Vec::new(),
            spread_hops: cfg.max_hops,
        },
        Mode::Exhaustive => Pass {
            mode,
            filter: Filter::outside_trash(&scope.kinds, &scope.rooms).valid_at(scope.as_of),
            lexical_k: EXHAUSTIVE_MAX_CANDIDATES,
            vector_k: EXHAUSTIVE_MAX_CANDIDATES / 10,
            partial_words: crate::text::split(scope.query)
                .words
                .into_iter()
                .filter(|w| w.chars().count() >= 3)
                .take(crate::text::MAX_QUERY_TERMS)
                .collect(),
            spread_hops: 0,
        },
    }
}

/// What a finished pass reports back for the deepening decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// The best final score with absolute relevances (coverage or calibrated cosine).
    pub best_raw: f64,
    /// The best absolute relevance.
    pub best_relevance: f64,
}

/// What recall does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run a pass of this mode.
    Run(Mode),
    /// Stop and keep the pass at this index of those run.
    Keep(usize),
}

/// The deepening plan: the requested mode runs first; a fast pass whose best raw score is
/// under `deep_score_threshold` deepens; a deep pass under `exhaustive_score_threshold`
/// tries exhaustive, kept only when it found a better relevance than deep.
pub fn next(requested: Mode, cfg: &Config, done: &[(Mode, Outcome)]) -> Next {
    let Some((last_mode, last)) = done.last() else {
        return Next::Run(requested);
    };
    let last_at = done.len() - 1;
    match last_mode {
        Mode::Fast if last.best_raw < cfg.deep_score_threshold => Next::Run(Mode::Deep),
        Mode::Deep if last.best_raw < cfg.exhaustive_score_threshold => Next::Run(Mode::Exhaustive),
        Mode::Exhaustive => match done.iter().rposition(|(m, _)| *m == Mode::Deep) {
            Some(d) if last.best_relevance > done[d].1.best_relevance => Next::Keep(last_at),
            Some(d) => Next::Keep(d),
            None => Next::Keep(last_at),
        },
        _ => Next::Keep(last_at),
    }
}

/// How many hits, best first, fit a token budget, and the tokens they use: hits are packed
/// until the next one would exceed it.
pub fn within_budget(tokens: impl IntoIterator<Item = usize>, budget: usize) -> (usize, usize) {
    let mut used = 0;
    let mut keep = 0;
    for t in tokens {
        if used + t > budget {
            break;
        }
        used += t;
        keep += 1;
    }
    (keep, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(best_raw: f64, best_relevance: f64) -> Outcome {
        Outcome {
            best_raw,
            best_relevance,
        }
    }

    /// Runs the plan against a table of pass outcomes; returns the modes run and the kept one.
    fn walk(requested: Mode, outcomes: &[(Mode, Outcome)]) -> (Vec<Mode>, Mode) {
        let cfg = Config::default();
        let mut done: Vec<(Mode, Outcome)> = Vec::new();
        loop {
            match next(requested, &cfg, &done) {
                Next::Run(m) => {
                    let o = outcomes.iter().find(|(x, _)| *x == m).expect("outcome").1;
                    done.push((m, o));
                }
                Next::Keep(i) => return (done.iter().map(|d| d.0).collect(), done[i].0),
            }
        }
    }

    #[test]
    fn deepening_table() {
        use Mode::*;
        // (requested, fast, deep, exhaustive outcomes) → (modes run, mode kept)
        let cases: &[(Mode, [Outcome; 3], &[Mode], Mode)] = &[
            (
                Fast,
                [out(0.5, 0.5), out(0.0, 0.0), out(0.0, 0.0)],
                &[Fast],
                Fast,
            ),
            (
                Fast,
                [out(0.35, 0.3), out(0.0, 0.0), out(0.0, 0.0)],
                &[Fast],
                Fast,
            ),
            (
                Fast,
                [out(0.2, 0.2), out(0.4, 0.4), out(0.9, 0.9)],
                &[Fast, Deep],
                Deep,
            ),
            (
                Fast,
                [out(0.2, 0.2), out(0.1, 0.1), out(0.3, 0.3)],
                &[Fast, Deep, Exhaustive],
                Exhaustive,
            ),
            (
                Fast,
                [out(0.2, 0.2), out(0.1, 0.3), out(0.3, 0.3)],
                &[Fast, Deep, Exhaustive],
                Deep,
            ),
            (
                Deep,
                [out(0.0, 0.0), out(0.3, 0.3), out(0.9, 0.9)],
                &[Deep],
                Deep,
            ),
            (
                Deep,
                [out(0.0, 0.0), out(0.1, 0.1), out(0.05, 0.05)],
                &[Deep, Exhaustive],
                Deep,
            ),
            (
                Deep,
                [out(0.0, 0.0), out(0.1, 0.1), out(0.2, 0.2)],
                &[Deep, Exhaustive],
                Exhaustive,
            ),
            (
                Exhaustive,
                [out(0.0, 0.0), out(0.0, 0.0), out(0.0, 0.0)],
                &[Exhaustive],
                Exhaustive,
            ),
        ];
        for (requested, [f, d, e], run, kept) in cases {
            let outcomes = [(Fast, *f), (Deep, *d), (Exhaustive, *e)];
            let (got_run, got_kept) = walk(*requested, &outcomes);
            assert_eq!(
                (&got_run[..], got_kept),
                (*run, *kept),
                "{requested:?} {f:?} {d:?} {e:?}"
            );
        }
    }

    #[test]
    fn passes_per_mode() {
        let cfg = Config::default();
        let scope = Scope {
            query: "the deployment of ab pipelines",
            kinds: None,
            rooms: Some(vec!["r".into()]),
            as_of: None,
            include_superseded: false,
        };
        let fast = pass(Mode::Fast, &scope, &cfg);
        assert_eq!(fast.filter.tiers, vec![Tier::Active]);
        assert_eq!(fast.filter.exclude_kinds, vec![Kind::Episode]);
        assert_eq!((fast.lexical_k, fast.spread_hops), (cfg.candidate_k, 0));
        let with_superseded = pass(
            Mode::Fast,
            &Scope {
                include_superseded: true,
                kinds: Some(vec![Kind::Episode]),
                ..scope.clone()
            },
            &cfg,
        );
        assert_eq!(
            with_superseded.filter.tiers,
            vec![Tier::Active, Tier::Superseded]
        );
        assert!(with_superseded.filter.exclude_kinds.is_empty());
        let deep = pass(Mode::Deep, &scope, &cfg);
        assert_eq!(deep.filter, Filter::outside_trash(&None, &scope.rooms));
        assert_eq!(deep.spread_hops, cfg.max_hops);
        let ex = pass(Mode::Exhaustive, &scope, &cfg);
        assert_eq!(ex.lexical_k, EXHAUSTIVE_MAX_CANDIDATES);
        assert_eq!(ex.vector_k, EXHAUSTIVE_MAX_CANDIDATES / 10);
        assert!(ex.partial_words.contains(&"deployment".to_string()));
        assert!(
            !ex.partial_words.iter().any(|w| w.chars().count() < 3),
            "{:?}",
            ex.partial_words
        );
    }

    #[test]
    fn budget_packs_best_first_and_stops_at_the_first_overflow() {
        assert_eq!(within_budget([3, 3, 3], 7), (2, 6));
        assert_eq!(within_budget([8, 1], 7), (0, 0));
        assert_eq!(within_budget([], 7), (0, 0));
        assert_eq!(within_budget([7], 7), (1, 7));
    }

    #[test]
    fn mode_words() {
        assert_eq!(Mode::parse(" Deep ").unwrap(), Mode::Deep);
        assert_eq!(Mode::parse("nope").unwrap_err().field, "mode");
    }
}
