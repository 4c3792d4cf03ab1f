//! The one adapter layer: what every surface (the CLI, each MCP profile, the HTTP APIs,
//! the hooks) parses from its caller before it asks the engine anything: times (`as_of`),
//! kinds, importance on its scales, id references, rooms, and the seed dialect a profile
//! speaks. Each parser names the field at fault in an [`InputError`], which every surface
//! reports the same way (`invalid `field`: …`).
//!
//! A surface that needs one of these reads it here rather than re-deriving it, so two
//! surfaces cannot drift apart on what `2026-05-01`, `decision,failure` or `7` means.

use engram_core::memory::IdRef;
use engram_core::{InputError, Kind, Millis};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::PathBuf;

/// `as_of`: an RFC 3339 time or a date (`YYYY-MM-DD`), as Unix milliseconds.
pub fn as_of(raw: Option<&str>) -> Result<Option<Millis>, InputError> {
    raw.map(|t| {
        engram_core::time::parse(t).ok_or_else(|| {
            InputError::new("as_of", format!("{t:?} is not an RFC 3339 time or a date"))
        })
    })
    .transpose()
}

/// Whether the word `all` may stand for "every kind" (no filter): MCP callers send it,
/// the CLI's `--kind` does not take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllKinds {
    Accepted,
    Refused,
}

/// Kinds from words (empty words skipped). A surface splits its own lists first: the
/// CLI each `--kind` value on commas, MCP a single string on commas (a JSON array's items
/// are words already).
pub fn kinds<'a>(
    words: impl IntoIterator<Item = &'a str>,
    all: AllKinds,
) -> Result<Vec<Kind>, InputError> {
    words
        .into_iter()
        .filter(|w| !w.trim().is_empty())
        .filter(|w| !(all == AllKinds::Accepted && w.trim() == "all"))
        .map(Kind::parse)
        .collect()
}

/// A count given as text (a query string's `limit=`), naming `field` when it is not one.
pub fn whole_number(field: &'static str, raw: &str) -> Result<usize, InputError> {
    raw.parse()
        .map_err(|_| InputError::new(field, format!("{raw:?} is not a whole number")))
}

/// A list of kinds as MCP callers send it: one string (maybe a comma list) or an array.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum KindsArg {
    One(String),
    Many(Vec<String>),
}

impl KindsArg {
    /// The kinds named (`all`, or nothing, is every kind).
    pub fn kinds(arg: &Option<KindsArg>) -> Result<Vec<Kind>, InputError> {
        match arg {
            None => Ok(Vec::new()),
            Some(KindsArg::One(s)) => kinds(s.split(','), AllKinds::Accepted),
            Some(KindsArg::Many(v)) => kinds(v.iter().map(String::as_str), AllKinds::Accepted),
        }
    }
}

/// Which scale a bare importance number is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportanceScale {
    /// engram's: 0–1, or an integer above 1 up to 10 read as tenths.
    Either,
    /// Seed B's: always 1–10 (`1` means 0.1).
    OneToTen,
}

/// An importance number on `scale`, as 0–1; `field` names it in an error.
pub fn importance(
    v: Option<f64>,
    scale: ImportanceScale,
    field: &'static str,
) -> Result<Option<f64>, InputError> {
    let Some(x) = v else { return Ok(None) };
    match scale {
        ImportanceScale::Either => engram_core::importance::from_number(x, x.fract() == 0.0)
            .map(Some)
            .map_err(|e| InputError::new(field, e.message)),
        ImportanceScale::OneToTen if (1.0..=10.0).contains(&x) => Ok(Some(x / 10.0)),
        ImportanceScale::OneToTen => Err(InputError::new(
            field,
            format!("{x} is out of range: give 1–10"),
        )),
    }
}

/// An importance as the CLI takes it: text, `0.7` or `7`.
pub fn importance_text(raw: Option<&str>) -> Result<Option<f64>, InputError> {
    raw.map(engram_core::importance::parse_importance)
        .transpose()
}

/// A memory id as agents send it: an integer, or text (`"42"`, `"#42"`, a ULID).
#[derive(Debug, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(untagged)]
pub enum IdValue {
    Int(i64),
    Text(String),
}

impl IdValue {
    /// The reference, or an error naming `field`.
    pub fn to_ref(&self, field: &'static str) -> Result<IdRef, InputError> {
        let r = match self {
            IdValue::Int(i) => IdRef::parse(&i.to_string()),
            IdValue::Text(s) => IdRef::parse(s),
        };
        r.map_err(|e| InputError::new(field, e.message))
    }

    /// Every reference of a list, or the first error naming `field`.
    pub fn refs(list: &[IdValue], field: &'static str) -> Result<Vec<IdRef>, InputError> {
        list.iter().map(|i| i.to_ref(field)).collect()
    }
}

/// Id references from words, each possibly a comma list (`engram reinforce 3,4 5`).
pub fn id_list(words: &[String]) -> Result<Vec<IdRef>, InputError> {
    let mut out = Vec::new();
    for w in words {
        for part in w.split(',').filter(|p| !p.trim().is_empty()) {
            out.push(IdRef::parse(part)?);
        }
    }
    Ok(out)
}

/// The room a call asks for: its own (when not blank), else — when it sent no directory
/// to resolve one from — the server's default room; `None` leaves it to the engine's room
/// resolution.
pub fn room(
    explicit: Option<String>,
    cwd: &Option<PathBuf>,
    default_room: Option<&str>,
) -> Option<String> {
    explicit.filter(|r| !r.trim().is_empty()).or_else(|| {
        if cwd.is_some() {
            None
        } else {
            default_room.map(str::to_string)
        }
    })
}

/// What a seed's clients expect where engram's own tools would answer differently. A
/// profile names its dialect once ([`Dialect::for_profile`]); the tools read it from here,
/// so a seed's behaviour is one table, not checks scattered through the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// The scale of a bare importance number.
    pub importance: ImportanceScale,
    /// `reinforce` with some unknown ids: reinforce the known ones and list the others
    /// (B), instead of refusing the whole call so that nothing is half done.
    pub reinforce_known_ids: bool,
    /// An unknown id in `correct` or `forget` answers `{"status": "not_found"}` (B),
    /// instead of an error.
    pub not_found_as_status: bool,
    /// `remember` resolves as B did: a duplicate reinforces, anything else is a new
    /// memory (never merged into another, never superseding one: B's agents correct with
    /// `correct` and consolidate with `mark_consolidated`, which a merge would break).
    pub duplicates_only: bool,
    /// Replies name memories by their ULID and tiers `hot`/`cold`, as B's did
    /// ([`crate::compat_b_reply`]), and `tools/list` names arguments as B's did.
    pub b_replies: bool,
    /// A refused call answers A's error JSON (`{"ok": false, "error": …}`) as its text,
    /// which A's clients parse (the `compat-a` profile).
    pub a_errors: bool,
}

impl Dialect {
    /// engram's own tools.
    pub const NATIVE: Dialect = Dialect {
        importance: ImportanceScale::Either,
        reinforce_known_ids: false,
        not_found_as_status: false,
        duplicates_only: false,
        b_replies: false,
        a_errors: false,
    };
    /// Seed A's clients (the `compat-a` profile): engram's tools' ways, A's error shape.
    pub const SEED_A: Dialect = Dialect {
        a_errors: true,
        ..Dialect::NATIVE
    };
    /// Seed B's clients (the `compat-b` profile).
    pub const SEED_B: Dialect = Dialect {
        importance: ImportanceScale::OneToTen,
        reinforce_known_ids: true,
        not_found_as_status: true,
        duplicates_only: true,
        b_replies: true,
        a_errors: false,
    };

    /// The dialect of a `--tools` value: seed B's when it names `compat-b`, seed A's
    /// when it names `compat-a`.
    pub fn for_profile(profile: &str) -> Dialect {
        let named = |name: &str| profile.split(',').any(|p| p.trim() == name);
        if named("compat-b") {
            Dialect::SEED_B
        } else if named("compat-a") {
            Dialect::SEED_A
        } else {
            Dialect::NATIVE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_split_by_the_surface_and_all_only_where_accepted() {
        let k = kinds("decision,failure".split(','), AllKinds::Refused).unwrap();
        assert_eq!(k, vec![Kind::Decision, Kind::Failure]);
        assert!(kinds(["all"], AllKinds::Accepted).unwrap().is_empty());
        assert_eq!(kinds(["all"], AllKinds::Refused).unwrap_err().field, "kind");
        let many = KindsArg::Many(vec!["decision".into(), "".into()]);
        assert_eq!(KindsArg::kinds(&Some(many)).unwrap(), vec![Kind::Decision]);
    }

    #[test]
    fn importance_scales() {
        let either = ImportanceScale::Either;
        assert_eq!(
            importance(Some(7.0), either, "importance").unwrap(),
            Some(0.7)
        );
        assert_eq!(
            importance(Some(0.3), either, "importance").unwrap(),
            Some(0.3)
        );
        assert_eq!(
            importance(Some(1.0), either, "importance").unwrap(),
            Some(1.0)
        );
        let b = ImportanceScale::OneToTen;
        assert_eq!(importance(Some(1.0), b, "importance").unwrap(), Some(0.1));
        let e = importance(Some(11.0), b, "importance").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `importance`: 11 is out of range: give 1–10"
        );
        assert_eq!(importance_text(Some("7")).unwrap(), Some(0.7));
    }

    #[test]
    fn as_of_ids_and_rooms() {
        assert!(as_of(Some("2026-05-01")).unwrap().is_some());
        assert_eq!(as_of(Some("soon")).unwrap_err().field, "as_of");
        assert_eq!(id_list(&["3,4".into(), "#5".into()]).unwrap().len(), 3);
        assert_eq!(whole_number("limit", "12").unwrap(), 12);
        let e = whole_number("limit", "-1").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid `limit`: \"-1\" is not a whole number"
        );
        assert_eq!(
            IdValue::Text("x y".into()).to_ref("ids").unwrap_err().field,
            "ids"
        );
        assert_eq!(
            room(Some(" ".into()), &None, Some("srv")),
            Some("srv".into())
        );
        assert_eq!(room(None, &Some(PathBuf::from("/p")), Some("srv")), None);
        assert_eq!(Dialect::for_profile("core, compat-b"), Dialect::SEED_B);
        assert_eq!(Dialect::for_profile("compat-c"), Dialect::NATIVE);
        assert!(Dialect::for_profile("compat-a").a_errors);
    }
}
