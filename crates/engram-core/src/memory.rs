//! The memory record, as every surface shows it.

use crate::{Kind, Millis, Tier};
use serde::{Deserialize, Serialize};

/// A memory's integer id: unique in one store, shown as `#42`.
pub type MemoryId = i64;

/// A memory with every field of the design's Memory concept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub id: MemoryId,
    /// ULID: stable across machines, files and imports.
    pub uid: String,
    pub content: String,
    pub title: Option<String>,
    pub kind: Kind,
    /// 0–1.
    pub importance: f64,
    pub tags: Vec<String>,
    pub room: String,
    pub topic_key: Option<String>,
    pub pinned: bool,
    pub tier: Tier,
    #[serde(with = "crate::time::rfc3339")]
    pub created_at: Millis,
    #[serde(with = "crate::time::rfc3339")]
    pub updated_at: Millis,
    #[serde(with = "crate::time::rfc3339")]
    pub valid_from: Millis,
    /// Set when the memory was superseded or corrected: it stopped being true then.
    #[serde(with = "crate::time::rfc3339_opt")]
    pub valid_to: Option<Millis>,
    /// Which client or hook wrote it (`cli`, `claude-code`, `auto-encode`, …).
    pub source: String,
    pub session_id: Option<String>,
    pub metadata: serde_json::Value,
    /// The team user who wrote it (`None`: written locally, with no principal). Together
    /// with room and kind it decides who may see it (`crate::team::visible_to`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

/// Parses an id as users write it: `42`, `#42`, or a memory's ULID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdRef {
    Id(MemoryId),
    Uid(String),
}

impl IdRef {
    pub fn parse(raw: &str) -> Result<IdRef, crate::InputError> {
        let t = raw.trim();
        let digits = t.strip_prefix('#').unwrap_or(t);
        if let Ok(n) = digits.parse::<i64>()
            && n > 0
        {
            return Ok(IdRef::Id(n));
        }
        if t.len() == 26 && t.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Ok(IdRef::Uid(t.to_ascii_uppercase()));
        }
        Err(crate::InputError::new(
            "id",
            format!("{raw:?} is not a memory id (give 42, #42 or a 26-character ULID)"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_refs() {
        assert_eq!(IdRef::parse("#42").unwrap(), IdRef::Id(42));
        assert_eq!(IdRef::parse("7").unwrap(), IdRef::Id(7));
        assert!(matches!(
            IdRef::parse("01ARZ3NDEKTSV4RRFFQ69G5FAV").unwrap(),
            IdRef::Uid(_)
        ));
        assert!(IdRef::parse("0").is_err());
        assert!(IdRef::parse("-3").is_err());
        assert!(IdRef::parse("abc").is_err());
    }
}
