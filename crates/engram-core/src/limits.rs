//! Size limits on everything a caller can send. Documented in the README; each violation
//! is refused with an [`InputError`] naming the field and the limit, never truncated.

use crate::InputError;

/// Largest memory content, in bytes of UTF-8 (64 KiB).
pub const MAX_CONTENT_BYTES: usize = 64 * 1024;
/// Largest title, in bytes.
pub const MAX_TITLE_BYTES: usize = 512;
/// Most tags on one memory.
pub const MAX_TAGS: usize = 32;
/// Longest tag, in bytes.
pub const MAX_TAG_BYTES: usize = 64;
/// Longest room, topic key, source or session id, in bytes.
pub const MAX_NAME_BYTES: usize = 256;
/// Largest metadata object, serialised as JSON, in bytes (16 KiB).
pub const MAX_METADATA_BYTES: usize = 16 * 1024;
/// Longest recall query, in bytes (4 KiB).
pub const MAX_QUERY_BYTES: usize = 4 * 1024;
/// Longest line of a JSON-lines import (1 MiB): one record per line, and a record holds at
/// most 64 KiB of content and 16 KiB of metadata even with every character escaped.
pub const MAX_IMPORT_LINE_BYTES: usize = 1024 * 1024;
/// Longest record of an import read as one JSON document (an observation, session, prompt
/// or relation of seed C's export), in bytes (1 MiB, as a line of a JSON-lines import): the
/// document itself streams and has no limit.
pub const MAX_IMPORT_RECORD_BYTES: u64 = MAX_IMPORT_LINE_BYTES as u64;
/// Largest Markdown file read from a folder (a B import, the vault), in bytes (16 MiB): a
/// memory's file holds at most a few parts of text; past this it is skipped with a warning
/// that names the limit, so a runaway file cannot fill memory.
pub const MAX_MARKDOWN_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Most hits one recall returns.
pub const MAX_RECALL_LIMIT: usize = 100;
/// Most ids in one reinforce call.
pub const MAX_IDS_PER_CALL: usize = 100;

/// Content must be non-blank and at most [`MAX_CONTENT_BYTES`].
pub fn check_content(field: &'static str, content: &str) -> Result<(), InputError> {
    if content.trim().is_empty() {
        return Err(InputError::new(field, "must not be empty"));
    }
    check_len(field, content, MAX_CONTENT_BYTES)
}

/// `value` must be at most `max` bytes.
pub fn check_len(field: &'static str, value: &str, max: usize) -> Result<(), InputError> {
    if value.len() > max {
        return Err(InputError::new(
            field,
            format!("is {} bytes, the limit is {max} bytes", value.len()),
        ));
    }
    Ok(())
}

/// A short name (room, topic key, source, session id): non-blank, bounded, no control characters.
pub fn check_name(field: &'static str, value: &str) -> Result<(), InputError> {
    if value.trim().is_empty() {
        return Err(InputError::new(field, "must not be empty"));
    }
    check_len(field, value, MAX_NAME_BYTES)?;
    if value.chars().any(char::is_control) {
        return Err(InputError::new(
            field,
            "must not contain control characters",
        ));
    }
    Ok(())
}

/// Tags: at most [`MAX_TAGS`], each non-blank, at most [`MAX_TAG_BYTES`], no control characters.
/// Returns them trimmed and de-duplicated, in the order given.
pub fn normalize_tags(tags: &[String]) -> Result<Vec<String>, InputError> {
    if tags.len() > MAX_TAGS {
        return Err(InputError::new(
            "tags",
            format!("has {} tags, the limit is {MAX_TAGS}", tags.len()),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let t = tag.trim();
        if t.is_empty() {
            return Err(InputError::new("tags", "a tag must not be empty"));
        }
        if t.len() > MAX_TAG_BYTES {
            return Err(InputError::new(
                "tags",
                format!(
                    "tag {t:?} is {} bytes, the limit is {MAX_TAG_BYTES} bytes",
                    t.len()
                ),
            ));
        }
        if t.chars().any(char::is_control) {
            return Err(InputError::new(
                "tags",
                "a tag must not contain control characters",
            ));
        }
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    Ok(out)
}

/// Metadata must be a JSON object of at most [`MAX_METADATA_BYTES`] when serialised.
///
/// The `context` key is engram's own: the words kept to search a memory by (the turn
/// before it, the task it came from). It never counts against the user's metadata limit
/// (a long previous message must not make a memory unstorable) and has its own limit, the
/// content limit, checked here under the field name `context`.
pub fn check_metadata(value: &serde_json::Value) -> Result<(), InputError> {
    let Some(object) = value.as_object() else {
        return Err(InputError::new("metadata", "must be a JSON object"));
    };
    let mut user = object.clone();
    if let Some(c) = user.remove(CONTEXT_KEY) {
        let Some(text) = c.as_str() else {
            return Err(InputError::new("context", "must be a string"));
        };
        check_len("context", text, MAX_CONTENT_BYTES)?;
    }
    let len = serde_json::Value::Object(user).to_string().len();
    if len > MAX_METADATA_BYTES {
        return Err(InputError::new(
            "metadata",
            format!("is {len} bytes as JSON, the limit is {MAX_METADATA_BYTES} bytes"),
        ));
    }
    Ok(())
}

/// The metadata key that holds a memory's search context (see [`check_metadata`]).
pub const CONTEXT_KEY: &str = "context";

/// Recall limit: 1 to [`MAX_RECALL_LIMIT`].
pub fn check_limit(limit: usize) -> Result<(), InputError> {
    if limit == 0 || limit > MAX_RECALL_LIMIT {
        return Err(InputError::new(
            "limit",
            format!("is {limit}, it must be between 1 and {MAX_RECALL_LIMIT}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_limits_name_field_and_limit() {
        assert!(check_content("content", "ok").is_ok());
        let e = check_content("content", "  \n").unwrap_err();
        assert_eq!(e.field, "content");
        let big = "x".repeat(MAX_CONTENT_BYTES + 1);
        let e = check_content("content", &big).unwrap_err();
        assert!(e.to_string().contains("65536"), "{e}");
        assert!(check_content("content", &"x".repeat(MAX_CONTENT_BYTES)).is_ok());
    }

    #[test]
    fn tags_are_trimmed_deduplicated_and_bounded() {
        let t = normalize_tags(&["a ".into(), "a".into(), "b".into()]).unwrap();
        assert_eq!(t, vec!["a", "b"]);
        assert!(normalize_tags(&vec!["x".to_string(); MAX_TAGS + 1]).is_err());
        assert!(normalize_tags(&["".into()]).is_err());
        assert!(normalize_tags(&["y".repeat(MAX_TAG_BYTES + 1)]).is_err());
    }

    #[test]
    fn metadata_must_be_a_small_object() {
        assert!(check_metadata(&serde_json::json!({"a": 1})).is_ok());
        assert!(check_metadata(&serde_json::json!([1])).is_err());
        let big = serde_json::json!({"a": "z".repeat(MAX_METADATA_BYTES)});
        assert!(check_metadata(&big).is_err());
    }

    #[test]
    fn context_has_its_own_limit_beside_the_metadata_limit() {
        let long = "w".repeat(MAX_METADATA_BYTES * 2);
        assert!(check_metadata(&serde_json::json!({ "context": long })).is_ok());
        let both = serde_json::json!({ "context": long, "a": "z".repeat(MAX_METADATA_BYTES - 16) });
        assert!(check_metadata(&both).is_ok(), "user part fits");
        let over = serde_json::json!({ "context": "c", "a": "z".repeat(MAX_METADATA_BYTES) });
        assert_eq!(check_metadata(&over).unwrap_err().field, "metadata");
        let huge = serde_json::json!({ "context": "x".repeat(MAX_CONTENT_BYTES + 1) });
        let e = check_metadata(&huge).unwrap_err();
        assert_eq!(e.field, "context");
        assert!(e.to_string().contains("65536"), "{e}");
        let e = check_metadata(&serde_json::json!({ "context": 3 })).unwrap_err();
        assert_eq!(e.field, "context");
    }

    #[test]
    fn limit_bounds() {
        assert!(check_limit(0).is_err());
        assert!(check_limit(1).is_ok());
        assert!(check_limit(MAX_RECALL_LIMIT).is_ok());
        assert!(check_limit(MAX_RECALL_LIMIT + 1).is_err());
    }
}
