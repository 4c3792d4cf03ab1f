//! The small YAML subset a vault file's front matter uses, read and written by hand.
//!
//! engram writes flat front matter: `key: value` lines whose values are plain or quoted
//! scalars, flow lists (`[a, "b"]`), block lists (`- item` lines) and JSON objects. Seed B
//! (python-frontmatter over PyYAML) writes the same subset. Reading it here, rather than
//! through a YAML crate, keeps the dependency list short (`serde_yaml` is deprecated, its
//! forks are young) and lets every error name the line at fault. Anything outside the
//! subset (anchors, nested maps, block scalars) is an error with its line, never a guess.

/// One front matter value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    Json(serde_json::Value),
}

impl Value {
    /// The value as text, for keys that hold text (numbers and booleans read as written).
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Str(s) => Some(s.clone()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
}

/// A key with its value and the (1-based) line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub key: String,
    pub value: Value,
    pub line: usize,
}

/// A parsed file: its front matter fields (none when the file has no front matter) and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub fields: Vec<Field>,
    pub has_front_matter: bool,
    pub body: String,
}

impl Document {
    pub fn get(&self, key: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.key == key)
    }
}

/// What is wrong and on which (1-based) line of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl ParseError {
    pub fn new(line: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            line,
            message: message.into(),
        }
    }
}

/// Splits a file into front matter and body and parses the front matter. A file that does
/// not start with `---` has no front matter: all of it is body. The body is what follows
/// the closing `---` line, less one final newline.
pub fn parse(text: &str) -> Result<Document, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Ok(Document {
            fields: Vec::new(),
            has_front_matter: false,
            body: strip_final_newline(text).to_string(),
        });
    }
    let mut offset = first.len();
    let mut fm: Vec<&str> = Vec::new();
    let mut closed = false;
    for l in lines {
        offset += l.len();
        let t = l.trim_end();
        if t == "---" || t == "..." {
            closed = true;
            break;
        }
        fm.push(l.trim_end_matches(['\n', '\r']));
    }
    if !closed {
        return Err(ParseError::new(
            1,
            "the front matter opened with `---` is never closed by a `---` line",
        ));
    }
    let fields = parse_fields(&fm)?;
    Ok(Document {
        fields,
        has_front_matter: true,
        body: strip_final_newline(strip_leading_blank_lines(&text[offset..])).to_string(),
    })
}

/// Blank lines between the closing `---` and the text are layout, not content: seed B's
/// files (python-frontmatter) put one there, and B read the body without it.
fn strip_leading_blank_lines(s: &str) -> &str {
    let mut rest = s;
    while let Some((line, after)) = rest.split_once('\n') {
        if !line.trim().is_empty() {
            break;
        }
        rest = after;
    }
    rest
}

fn strip_final_newline(s: &str) -> &str {
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

fn parse_fields(lines: &[&str]) -> Result<Vec<Field>, ParseError> {
    let mut fields: Vec<Field> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line_no = i + 2; // the opening `---` is line 1
        let l = lines[i];
        let t = l.trim();
        if t.is_empty() || t.starts_with('#') {
            i += 1;
            continue;
        }
        if l.starts_with([' ', '\t']) || t.starts_with('-') {
            return Err(ParseError::new(
                line_no,
                format!("unexpected indented or list line {t:?} (no key above it takes a list)"),
            ));
        }
        let Some(colon) = find_key_colon(l) else {
            return Err(ParseError::new(
                line_no,
                format!("expected `key: value`, found {t:?}"),
            ));
        };
        let key = unquote_key(l[..colon].trim());
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ' '))
        {
            return Err(ParseError::new(
                line_no,
                format!("{key:?} is not a valid key"),
            ));
        }
        if fields.iter().any(|f| f.key == key) {
            return Err(ParseError::new(
                line_no,
                format!("key `{key}` appears twice"),
            ));
        }
        let rest = l[colon + 1..].trim();
        i += 1;
        let value = if strip_comment(rest).is_empty() {
            // A block list may follow, each item on its own `- ` line (indented or not).
            let mut items = Vec::new();
            while i < lines.len() {
                let lt = lines[i].trim();
                if lt.is_empty() || lt.starts_with('#') {
                    i += 1;
                    continue;
                }
                let Some(item) = lt.strip_prefix('-') else {
                    if lines[i].starts_with([' ', '\t']) {
                        return Err(ParseError::new(
                            i + 2,
                            format!("nested values are not supported under `{key}` (found {lt:?})"),
                        ));
                    }
                    break;
                };
                if !(item.is_empty() || item.starts_with([' ', '\t'])) {
                    break;
                }
                items.push(scalar_or_flow(item.trim(), i + 2)?);
                i += 1;
            }
            if items.is_empty() {
                Value::Null
            } else {
                Value::List(items)
            }
        } else {
            scalar_or_flow(rest, line_no)?
        };
        fields.push(Field {
            key,
            value,
            line: line_no,
        });
    }
    Ok(fields)
}

/// The colon that ends a key: the first `: ` or a final `:`, outside quotes.
fn find_key_colon(l: &str) -> Option<usize> {
    let bytes = l.as_bytes();
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if (b == b'"' || b == b'\'') && i == 0 => quote = Some(b),
            None if b == b':' && (i + 1 == bytes.len() || matches!(bytes[i + 1], b' ' | b'\t')) => {
                return Some(i);
            }
            None => {}
        }
    }
    None
}

fn unquote_key(k: &str) -> String {
    if k.len() >= 2
        && ((k.starts_with('"') && k.ends_with('"')) || (k.starts_with('\'') && k.ends_with('\'')))
    {
        k[1..k.len() - 1].to_string()
    } else {
        k.to_string()
    }
}

/// Drops a ` # comment` from a plain value.
fn strip_comment(s: &str) -> &str {
    if s.starts_with('#') {
        return "";
    }
    match s.find(" #") {
        Some(i) if !s.starts_with(['"', '\'', '[', '{']) => s[..i].trim_end(),
        _ => s,
    }
}

fn scalar_or_flow(raw: &str, line: usize) -> Result<Value, ParseError> {
    let s = strip_comment(raw.trim());
    if s.starts_with('[') {
        return flow_list(s, line);
    }
    if s.starts_with('{') {
        return serde_json::from_str::<serde_json::Value>(s)
            .map(Value::Json)
            .map_err(|e| {
                ParseError::new(line, format!("a `{{…}}` value must be a JSON object: {e}"))
            });
    }
    if s.starts_with(['|', '>']) {
        return Err(ParseError::new(
            line,
            "block scalars (`|`, `>`) are not supported; write the value on one line, quoted",
        ));
    }
    if s.starts_with(['&', '*', '!']) {
        return Err(ParseError::new(
            line,
            "anchors, aliases and tags are not supported",
        ));
    }
    scalar(s, line)
}

fn scalar(s: &str, line: usize) -> Result<Value, ParseError> {
    if let Some(inner) = s.strip_prefix('"') {
        if !inner.ends_with('"') || inner.is_empty() {
            return Err(ParseError::new(line, format!("unclosed quote in {s:?}")));
        }
        return serde_json::from_str::<String>(s)
            .map(Value::Str)
            .map_err(|e| ParseError::new(line, format!("bad double-quoted string {s:?}: {e}")));
    }
    if let Some(inner) = s.strip_prefix('\'') {
        let Some(inner) = inner.strip_suffix('\'') else {
            return Err(ParseError::new(line, format!("unclosed quote in {s:?}")));
        };
        return Ok(Value::Str(inner.replace("''", "'")));
    }
    Ok(match s {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => {
            if let Ok(i) = s.parse::<i64>() {
                Value::Int(i)
            } else if s.contains(['.', 'e', 'E'])
                && s.bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_digit() || b == b'-' || b == b'.')
                && let Ok(f) = s.parse::<f64>()
            {
                Value::Float(f)
            } else {
                Value::Str(s.to_string())
            }
        }
    })
}

fn flow_list(s: &str, line: usize) -> Result<Value, ParseError> {
    let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) else {
        return Err(ParseError::new(line, format!("unclosed `[` in {s:?}")));
    };
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in inner.chars() {
        match quote {
            Some('"') => {
                cur.push(c);
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    quote = None;
                }
            }
            Some(q) => {
                cur.push(c);
                if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => {
                    quote = Some(c);
                    cur.push(c);
                }
                ',' => {
                    items.push(cur.trim().to_string());
                    cur.clear();
                }
                '[' | ']' | '{' | '}' => {
                    return Err(ParseError::new(
                        line,
                        format!("nested lists and maps are not supported in {s:?}"),
                    ));
                }
                _ => cur.push(c),
            },
        }
    }
    if quote.is_some() {
        return Err(ParseError::new(line, format!("unclosed quote in {s:?}")));
    }
    if !cur.trim().is_empty() || !items.is_empty() {
        items.push(cur.trim().to_string());
    }
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        if it.is_empty() {
            return Err(ParseError::new(line, format!("empty item in {s:?}")));
        }
        out.push(scalar(&it, line)?);
    }
    Ok(Value::List(out))
}

/// A string as a double-quoted YAML scalar (JSON's escaping is valid YAML).
pub fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blank_line_after_b_front_matter_is_not_content() {
        let doc = parse("---\nid: 01HZX3K5Q8M2N4P6R8T0V2W4Y6\ntype: knowledge\n---\n\nDeploys go out on Tuesdays.\n").unwrap();
        assert_eq!(doc.body, "Deploys go out on Tuesdays.");
        let doc = parse("---\nkind: fact\n---\n    indented first line\n").unwrap();
        assert_eq!(doc.body, "    indented first line");
    }

    #[test]
    fn reads_engram_and_b_front_matter() {
        let doc = parse(
            "---\nuid: 01ARZ3NDEKTSV4RRFFQ69G5FAV\ntitle: \"a \\\"quoted\\\" title\"\nimportance: 0.7\npinned: false\ntags: [\"x\", y]\nmetadata: {\"a\": 1}\nlinks:\n- '[[01ARZ3NDEKTSV4RRFFQ69G5FAW]]'\n  - \"[[b|supersedes 0.5]]\"\ncreated: 2025-01-02T03:04:05.123456+09:00\n---\nbody line\n\n",
        )
        .unwrap();
        assert_eq!(doc.body, "body line\n");
        assert_eq!(doc.get("importance").unwrap().value, Value::Float(0.7));
        assert_eq!(
            doc.get("title").unwrap().value,
            Value::Str("a \"quoted\" title".into())
        );
        assert_eq!(
            doc.get("tags").unwrap().value,
            Value::List(vec![Value::Str("x".into()), Value::Str("y".into())])
        );
        let Value::List(links) = &doc.get("links").unwrap().value else {
            panic!()
        };
        assert_eq!(links.len(), 2);
        assert_eq!(doc.get("created").unwrap().line, 11);
        assert_eq!(
            doc.get("metadata").unwrap().value,
            Value::Json(serde_json::json!({"a": 1}))
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("---\nuid: x\n  nested: 1\n---\nbody").unwrap_err();
        assert_eq!(e.line, 3, "{e:?}");
        let e = parse("---\nuid: x\nno colon here\n---\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse("---\nuid: x\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("---\ntags: [a, \"b]\n---\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(parse("no front matter\n").unwrap().fields.is_empty());
    }
}
