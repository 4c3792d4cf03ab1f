//! The closed vocabularies: kinds of memory and their decay classes, tiers, events and links.
//!
//! Each parser accepts the seeds' words too (A's categories, B's types and tiers, C's
//! observation types), so imported data and old agent instructions keep working.

use crate::InputError;
use serde::{Deserialize, Serialize};

macro_rules! vocabulary {
    ($(#[$m:meta])* $name:ident { $($variant:ident => $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The canonical spelling, as stored and shown.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $s),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

fn canonical_list<T: Copy>(all: &[T], name: impl Fn(T) -> &'static str) -> String {
    all.iter().map(|k| name(*k)).collect::<Vec<_>>().join(", ")
}

vocabulary!(
    /// What a memory is about. The kind decides how fast it fades ([`DecayClass`]).
    Kind {
        Preference => "preference",
        Decision => "decision",
        Strategy => "strategy",
        Progress => "progress",
        Handoff => "handoff",
        Fact => "fact",
        Knowledge => "knowledge",
        Pattern => "pattern",
        Config => "config",
        Project => "project",
        Assumption => "assumption",
        Failure => "failure",
        Bugfix => "bugfix",
        Episode => "episode",
    }
);

/// How quickly a kind of memory fades when nobody uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecayClass {
    /// Preferences, decisions, strategies, progress, handoffs: true until replaced.
    Durable,
    /// Facts, knowledge, patterns, configuration, project notes.
    Standard,
    /// Assumptions: worth keeping only while they are used.
    Tentative,
    /// Failures, fixes, episodes: vivid now, rarely needed later.
    Volatile,
}

impl Kind {
    /// Parses a kind, accepting the seeds' vocabularies as aliases.
    pub fn parse(raw: &str) -> Result<Kind, InputError> {
        let s = raw.trim().to_ascii_lowercase();
        if let Some(k) = Kind::ALL.iter().find(|k| k.as_str() == s) {
            return Ok(*k);
        }
        let alias = match s.as_str() {
            // Seed C's observation types and a few obvious synonyms.
            "architecture" | "adr" | "design" | "tradeoff" => Kind::Decision,
            "discovery" | "learning" | "learned" | "insight" | "passive" => Kind::Knowledge,
            "manual" | "note" | "general" | "observation" => Kind::Fact,
            "bug" | "incident" | "hotfix" | "fix" | "root_cause" | "investigation" => Kind::Bugfix,
            "error" => Kind::Failure,
            "convention" | "guideline" => Kind::Pattern,
            "session" | "session_summary" | "summary" => Kind::Episode,
            "setup" | "environment" => Kind::Config,
            "preferences" => Kind::Preference,
            _ => {
                return Err(InputError::new(
                    "kind",
                    format!(
                        "{raw:?} is not a known kind; use one of: {}",
                        canonical_list(Kind::ALL, Kind::as_str)
                    ),
                ));
            }
        };
        Ok(alias)
    }

    /// The decay class the kind belongs to.
    pub fn decay_class(self) -> DecayClass {
        use Kind::*;
        match self {
            Preference | Decision | Strategy | Progress | Handoff => DecayClass::Durable,
            Fact | Knowledge | Pattern | Config | Project => DecayClass::Standard,
            Assumption => DecayClass::Tentative,
            Failure | Bugfix | Episode => DecayClass::Volatile,
        }
    }
}

vocabulary!(
    /// Where a memory lives. Only `purge` removes a memory; everything else moves it between tiers.
    Tier {
        Active => "active",
        Archived => "archived",
        Superseded => "superseded",
        Trash => "trash",
    }
);

impl Tier {
    /// Parses a tier; B's `hot` and `cold` are accepted.
    pub fn parse(raw: &str) -> Result<Tier, InputError> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "active" | "hot" => Ok(Tier::Active),
            "archived" | "cold" => Ok(Tier::Archived),
            "superseded" => Ok(Tier::Superseded),
            "trash" | "deleted" => Ok(Tier::Trash),
            _ => Err(InputError::new(
                "tier",
                format!(
                    "{raw:?} is not a known tier; use one of: {}",
                    canonical_list(Tier::ALL, Tier::as_str)
                ),
            )),
        }
    }
}

vocabulary!(
    /// What happened to a memory. Activation is computed from these.
    EventKind {
        Create => "create",
        RecallHit => "recall_hit",
        Reinforce => "reinforce",
        Correction => "correction",
        Update => "update",
        Import => "import",
    }
);

impl EventKind {
    pub fn parse(raw: &str) -> Option<EventKind> {
        EventKind::ALL.iter().copied().find(|k| k.as_str() == raw)
    }
}

vocabulary!(
    /// Typed edges between memories.
    LinkKind {
        Semantic => "semantic",
        CoRecall => "co_recall",
        Explicit => "explicit",
        DerivedFrom => "derived_from",
        Supersedes => "supersedes",
        ConflictsWith => "conflicts_with",
        Related => "related",
        Compatible => "compatible",
        Scoped => "scoped",
    }
);

impl LinkKind {
    pub fn parse(raw: &str) -> Result<LinkKind, InputError> {
        let s = raw.trim().to_ascii_lowercase();
        let s = match s.as_str() {
            "co-recall" | "corecall" => "co_recall",
            "derived-from" => "derived_from",
            "superseded_by" => "supersedes",
            "conflicts-with" => "conflicts_with",
            other => other,
        };
        LinkKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                InputError::new(
                    "kind",
                    format!(
                        "{raw:?} is not a known link kind; use one of: {}",
                        canonical_list(LinkKind::ALL, LinkKind::as_str)
                    ),
                )
            })
    }

    /// Whether spreading activation in deep recall walks this edge: associations (B's
    /// `co_recall`, `explicit`, `derived_from`, plus `semantic` and the judgments that affirm
    /// a relation). `supersedes` is not walked (deep names successors directly) and neither
    /// is `conflicts_with`.
    pub fn spreads(self) -> bool {
        !matches!(self, LinkKind::ConflictsWith | LinkKind::Supersedes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_seed_aliases() {
        for k in Kind::ALL {
            assert_eq!(Kind::parse(k.as_str()).unwrap(), *k);
        }
        assert_eq!(Kind::parse("Architecture").unwrap(), Kind::Decision);
        assert_eq!(Kind::parse("discovery").unwrap(), Kind::Knowledge);
        let e = Kind::parse("banana").unwrap_err();
        assert_eq!(e.field, "kind");
        assert!(e.message.contains("preference"));
    }

    #[test]
    fn decay_classes_follow_the_design() {
        assert_eq!(Kind::Preference.decay_class(), DecayClass::Durable);
        assert_eq!(Kind::Fact.decay_class(), DecayClass::Standard);
        assert_eq!(Kind::Assumption.decay_class(), DecayClass::Tentative);
        assert_eq!(Kind::Episode.decay_class(), DecayClass::Volatile);
    }

    #[test]
    fn tiers_accept_b_words() {
        assert_eq!(Tier::parse("hot").unwrap(), Tier::Active);
        assert_eq!(Tier::parse("cold").unwrap(), Tier::Archived);
        assert!(Tier::parse("lukewarm").is_err());
    }

    #[test]
    fn link_kinds() {
        assert_eq!(
            LinkKind::parse("superseded_by").unwrap(),
            LinkKind::Supersedes
        );
        assert!(!LinkKind::ConflictsWith.spreads());
        assert!(!LinkKind::Supersedes.spreads());
        assert!(LinkKind::CoRecall.spreads() && LinkKind::DerivedFrom.spreads());
        assert!(LinkKind::parse("likes").is_err());
    }
}
