//! The tool registry: every MCP tool engram offers, as a name, a schema, hints and an
//! adapter function over `engram_store::Store`. Profiles select tools by name; the seed
//! profiles are further adapters over the same store methods, never separate logic.

pub use crate::adapt::{Dialect, IdValue, KindsArg};
use engram_core::InputError;
use engram_store::Store;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::PathBuf;

/// Read-only, destructive and idempotent hints, as MCP annotations carry them.
#[derive(Debug, Clone, Copy)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
}

pub const READ: Hints = Hints {
    read_only: true,
    destructive: false,
    idempotent: true,
};
pub const WRITE: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: false,
};
pub const WRITE_IDEMPOTENT: Hints = Hints {
    read_only: false,
    destructive: false,
    idempotent: true,
};
/// Hides or replaces what an agent would see (forget, correct, delete): restorable, but
/// clients should ask first.
pub const DESTRUCTIVE: Hints = Hints {
    read_only: false,
    destructive: true,
    idempotent: false,
};

/// What a tool call can reach besides its arguments.
pub struct Ctx<'a> {
    pub store: &'a mut Store,
    /// The server's `--room`, used when a call names no room and no directory.
    pub default_room: Option<&'a str>,
    /// Which client is calling (from `initialize`), recorded as the memory's source.
    pub client: &'a str,
    /// The seed dialect the profile speaks (seed B's importance scale and replies).
    pub dialect: Dialect,
    /// The `doctor` report, when the process that serves knows how to make one.
    pub doctor: Option<DoctorReport>,
}

/// Makes the `engram doctor` report (`ok`, `status`, `rows`). The binary supplies it: its
/// checks load the embedding model and read client registrations, which this crate does not.
pub type DoctorReport = fn() -> Value;

impl Ctx<'_> {
    /// The room argument after the server default is applied.
    pub fn room(&self, explicit: Option<String>, cwd: &Option<PathBuf>) -> Option<String> {
        crate::adapt::room(explicit, cwd, self.default_room)
    }

    /// A bare importance number on the dialect's scale.
    pub fn importance(&self, v: Option<f64>) -> Result<Option<f64>, ToolError> {
        Ok(crate::adapt::importance(
            v,
            self.dialect.importance,
            "importance",
        )?)
    }

    pub fn source(&self, explicit: Option<String>) -> Option<String> {
        explicit.or_else(|| Some(self.client.to_string()))
    }
}

/// A failed call: the message names the field at fault when there is one.
#[derive(Debug)]
pub struct ToolError {
    pub field: Option<String>,
    pub message: String,
}

impl From<engram_store::Error> for ToolError {
    fn from(e: engram_store::Error) -> Self {
        ToolError {
            field: e.field().map(str::to_string),
            message: e.to_string(),
        }
    }
}

impl From<InputError> for ToolError {
    fn from(e: InputError) -> Self {
        ToolError {
            field: Some(e.field.to_string()),
            message: e.to_string(),
        }
    }
}

impl ToolError {
    pub fn field(field: &str, message: impl Into<String>) -> Self {
        let message = format!("invalid `{field}`: {}", message.into());
        ToolError {
            field: Some(field.to_string()),
            message,
        }
    }
}

pub type ToolResult = Result<Value, ToolError>;

/// One tool.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub hints: Hints,
    pub schema: fn() -> Value,
    pub call: fn(&mut Ctx<'_>, Value) -> ToolResult,
}

/// The JSON schema of an argument struct (doc comments become descriptions).
pub fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T))
        .unwrap_or_else(|_| serde_json::json!({"type": "object"}))
}

/// Other names the seeds use for a property, accepted wherever that property is in a tool's
/// schema (serde aliases do not appear in a JSON schema): B's `type` and `category` for
/// `kind`, `corrected_content` for `content`, C's `directory` for `cwd`, `observation` for
/// `content`, `observation_id` and `id` for each other, `session_id` for a session's `id`.
const SEED_ALIASES: &[(&str, &[&str])] = &[
    ("kind", &["type", "category"]),
    ("content", &["corrected_content", "observation"]),
    ("cwd", &["directory"]),
    ("id", &["session_id", "observation_id"]),
    ("observation_id", &["id"]),
];

/// Every property name a schema declares, following `$ref`s into `$defs` and the
/// `allOf`/`anyOf`/`oneOf` parts that `#[serde(flatten)]` produces. `None` when the schema
/// leaves the object open (no properties, or `additionalProperties` allowed).
fn schema_properties(schema: &Value) -> Option<std::collections::BTreeSet<String>> {
    fn walk(
        node: &Value,
        root: &Value,
        out: &mut std::collections::BTreeSet<String>,
        depth: usize,
    ) -> bool {
        if depth > 8 {
            return false;
        }
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or_default();
            let target = root
                .get("$defs")
                .or_else(|| root.get("definitions"))
                .and_then(|d| d.get(name));
            return target.is_some_and(|t| walk(t, root, out, depth + 1));
        }
        if node
            .get("additionalProperties")
            .is_some_and(|a| a != &Value::Bool(false))
        {
            return false;
        }
        let mut closed = true;
        if let Some(props) = node.get("properties").and_then(Value::as_object) {
            out.extend(props.keys().cloned());
        }
        for key in ["allOf", "anyOf", "oneOf"] {
            for part in node
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                closed &= walk(part, root, out, depth + 1);
            }
        }
        closed
    }
    let mut out = std::collections::BTreeSet::new();
    (walk(schema, schema, &mut out, 0) && !out.is_empty()).then_some(out)
}

/// Refuses an argument the tool's schema does not declare (nor a seed's alias of one), so a
/// misspelt or unsupported option is an error naming it instead of silently ignored. Done
/// here, from each tool's own schema, so a field another change adds is accepted at once.
pub fn check_known_arguments(tool: &str, schema: &Value, args: &Value) -> Result<(), ToolError> {
    let Some(given) = args.as_object() else {
        return Ok(());
    };
    let Some(known) = schema_properties(schema) else {
        return Ok(());
    };
    let accepted = |name: &str| {
        known.contains(name)
            || SEED_ALIASES
                .iter()
                .any(|(prop, aliases)| known.contains(*prop) && aliases.contains(&name))
    };
    match given.keys().find(|k| !accepted(k)) {
        None => Ok(()),
        Some(unknown) => Err(ToolError::field(
            unknown,
            format!(
                "`{tool}` has no argument `{unknown}`; it takes: {}",
                known.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// Deserialises arguments, naming the field at fault (`importance: invalid type: string …`).
pub fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = if args.is_null() {
        Value::Object(Default::default())
    } else {
        args
    };
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // Serde names a missing field in its message; the path is `.` then.
        let field = if path == "." || path.is_empty() {
            inner.split('`').nth(1).map(str::to_string)
        } else {
            Some(path.trim_start_matches('.').to_string())
        };
        match field {
            Some(f) => ToolError {
                message: format!("invalid `{f}`: {inner}"),
                field: Some(f),
            },
            None => ToolError {
                field: None,
                message: format!("invalid arguments: {inner}"),
            },
        }
    })
}

/// Serialises a value that always serialises.
pub fn json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("engine results serialise")
}

/// Every tool, in the order `tools/list` shows them within a profile.
pub fn registry() -> Vec<ToolSpec> {
    let mut all = super::native::tools();
    all.extend(super::admin::tools());
    all.extend(super::compat_a::tools());
    all.extend(super::compat_a_tasks::tools());
    all.extend(super::compat_c::tools());
    all
}

pub const CORE: &[&str] = &[
    "remember",
    "recall",
    "reinforce",
    "correct",
    "forget",
    "context",
    "handoff",
];
pub const ENGINEERING: &[&str] = &[
    "track_failure",
    "track_progress",
    "session_outcome",
    "stats",
];
/// Seed B's eleven tool names, all served (B's argument names are accepted by the native
/// tools themselves: `type`, importance 1–10, `corrected_content`, `related_ids`,
/// `episode_ids`, …).
pub const COMPAT_B: &[&str] = &[
    "remember",
    "recall",
    "reinforce",
    "correct",
    "link",
    "forget",
    "consolidation_candidates",
    "mark_consolidated",
    "skill_candidates",
    "reindex",
    "stats",
];
pub const ADMIN: &[&str] = &[
    "link",
    "pin",
    "unpin",
    "explain",
    "restore",
    "unsupersede",
    "session_start",
    "session_end",
    "review",
    "judge",
    "maintain",
    "consolidation_candidates",
    "mark_consolidated",
    "skill_candidates",
    "reindex",
    "doctor",
];

/// The tool names a `--tools` value selects: a profile name, or a comma list of tool names
/// and profiles. Unknown names are an error naming them.
pub fn select(spec: &str) -> Result<Vec<&'static str>, String> {
    let reg = registry();
    let native: Vec<&'static str> = super::native::tools()
        .iter()
        .chain(super::admin::tools().iter())
        .map(|t| t.name)
        .collect();
    let mut out: Vec<&'static str> = Vec::new();
    let mut push = |names: &[&'static str]| {
        for n in names {
            if !out.contains(n) {
                out.push(n);
            }
        }
    };
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part {
            "core" => push(CORE),
            "engineering" => {
                push(CORE);
                push(ENGINEERING)
            }
            "admin" => {
                push(CORE);
                push(ENGINEERING);
                push(ADMIN)
            }
            "all" => push(&native),
            "compat-a" => push(super::compat_a::PROFILE),
            "compat-b" => push(COMPAT_B),
            "compat-c" => push(super::compat_c::PROFILE),
            // Seed C's `--tools=agent`: its agent tools without the admin ones.
            "agent" => push(
                &super::compat_c::PROFILE
                    .iter()
                    .copied()
                    .filter(|t| {
                        !matches!(
                            *t,
                            "mem_delete" | "mem_stats" | "mem_timeline" | "mem_merge_projects"
                        )
                    })
                    .collect::<Vec<_>>(),
            ),
            name => match reg.iter().find(|t| t.name == name) {
                Some(t) => push(&[t.name]),
                None => {
                    return Err(format!(
                        "unknown tool or profile {name:?}; profiles: core, engineering, admin, all, compat-a, compat-b, compat-c, agent"
                    ));
                }
            },
        }
    }
    if out.is_empty() {
        return Err("no tools selected".into());
    }
    Ok(out)
}
