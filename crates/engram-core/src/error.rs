//! Input errors name the field and the limit, so an agent (or a person) can fix the call.

use std::fmt;

/// A request that cannot be carried out as given. Nothing is written when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The argument at fault, as the caller spelled it (`content`, `importance`, `mode`, …).
    pub field: &'static str,
    /// What is wrong and what would be accepted.
    pub message: String,
}

impl InputError {
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for InputError {}
