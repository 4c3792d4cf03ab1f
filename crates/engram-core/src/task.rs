//! Seed A's tasks and checkpoints, the pure part: task statuses and the importance each
//! implies, a task's text, checkpoint reasons, and which memories each restore mode brings
//! back. Storing and reading them is the store's job (`engram_store::engine::tasks`).

use crate::InputError;
use crate::hub::normalize_status;
use serde::{Deserialize, Serialize};

/// A's task statuses (the feature statuses plus `cancelled`).
pub const TASK_STATUSES: &[&str] = &[
    "planning",
    "in_progress",
    "blocked",
    "review",
    "done",
    "cancelled",
];

/// A task's status, normalised (`In Progress` → `in_progress`), or an error naming `status`.
pub fn task_status(raw: &str) -> Result<String, InputError> {
    let s = normalize_status(raw);
    if TASK_STATUSES.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(InputError::new(
            "status",
            format!(
                "{raw:?} is not a task status; use {}",
                TASK_STATUSES.join(", ")
            ),
        ))
    }
}

/// The importance of a task's memory in each status: the feature scale (blocked work
/// matters most, finished work least) with `cancelled` below `done`, so finished and
/// abandoned tasks sink while open ones stay in view.
pub fn task_importance(status: &str) -> f64 {
    match status {
        "blocked" => 0.9,
        "in_progress" => 0.8,
        "review" => 0.7,
        "planning" => 0.6,
        "done" => 0.5,
        _ => 0.3,
    }
}

/// Whether a task still needs work (not done, not cancelled).
pub fn task_is_open(status: &str) -> bool {
    !matches!(status, "done" | "cancelled")
}

/// A task's memory text: what recall matches and what the vault shows.
pub fn task_text(name: &str, goal: &str, status: &str) -> String {
    let mut s = format!("Task: {}", name.trim());
    if !goal.trim().is_empty() {
        s.push_str(&format!("\nGoal: {}", goal.trim()));
    }
    s.push_str(&format!("\nStatus: {status}"));
    s
}

/// Why a checkpoint was written, in A's words: a handoff, a failure, or a progress entry.
pub fn checkpoint_reason(kind: crate::Kind) -> &'static str {
    match kind {
        crate::Kind::Handoff => "MANUAL_HANDOFF",
        crate::Kind::Failure | crate::Kind::Bugfix => "FAILURE",
        _ => "PROGRESS",
    }
}

/// A's `memory_restore_mode`: how many of a task's memories a restore brings back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RestoreMode {
    /// Every task memory, the 20 most important.
    Full,
    /// Memories of importance 0.5 or more and every failure, at most 10 (A's default).
    Selective,
    /// The state only, no memories.
    None,
}

impl RestoreMode {
    pub fn parse(raw: &str) -> Result<RestoreMode, InputError> {
        match raw.trim().to_ascii_uppercase().as_str() {
            "FULL" => Ok(RestoreMode::Full),
            "SELECTIVE" => Ok(RestoreMode::Selective),
            "NONE" => Ok(RestoreMode::None),
            _ => Err(InputError::new(
                "memory_restore_mode",
                format!("{raw:?} is not a restore mode; use FULL, SELECTIVE or NONE"),
            )),
        }
    }

    pub fn cap(self) -> usize {
        match self {
            RestoreMode::Full => 20,
            RestoreMode::Selective => 10,
            RestoreMode::None => 0,
        }
    }
}

/// What the restore selection needs to know about a memory.
#[derive(Debug, Clone, Copy)]
pub struct RestoreCandidate {
    pub importance: f64,
    pub is_failure: bool,
    pub created_at: crate::Millis,
}

/// The indices of `candidates` a restore in `mode` brings back, most important first,
/// then newest: SELECTIVE keeps importance ≥ 0.5 or failures (at most 10), FULL keeps
/// every one (at most 20), NONE none.
pub fn restore_selection(mode: RestoreMode, candidates: &[RestoreCandidate]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..candidates.len())
        .filter(|&i| match mode {
            RestoreMode::Full => true,
            RestoreMode::Selective => candidates[i].importance >= 0.5 || candidates[i].is_failure,
            RestoreMode::None => false,
        })
        .collect();
    idx.sort_by(|&a, &b| {
        let (x, y) = (&candidates[a], &candidates[b]);
        y.importance
            .total_cmp(&x.importance)
            .then(y.created_at.cmp(&x.created_at))
            .then(b.cmp(&a))
    });
    idx.truncate(mode.cap());
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(importance: f64, is_failure: bool, created_at: i64) -> RestoreCandidate {
        RestoreCandidate {
            importance,
            is_failure,
            created_at,
        }
    }

    #[test]
    fn statuses_normalise_and_refuse_unknown_words() {
        assert_eq!(task_status("In Progress").unwrap(), "in_progress");
        assert_eq!(task_status("cancelled").unwrap(), "cancelled");
        let e = task_status("someday").unwrap_err();
        assert_eq!(e.field, "status");
        assert!(e.message.contains("cancelled"), "{e}");
    }

    #[test]
    fn modes_parse_in_any_case_and_name_the_field() {
        assert_eq!(RestoreMode::parse("full").unwrap(), RestoreMode::Full);
        assert_eq!(
            RestoreMode::parse(" SELECTIVE").unwrap(),
            RestoreMode::Selective
        );
        assert_eq!(
            RestoreMode::parse("memory_restore_mode").unwrap_err().field,
            "memory_restore_mode"
        );
    }

    #[test]
    fn selective_keeps_important_memories_and_every_failure() {
        let cands = [
            c(0.3, false, 1),
            c(0.2, true, 2),
            c(0.9, false, 3),
            c(0.5, false, 4),
        ];
        assert_eq!(
            restore_selection(RestoreMode::Selective, &cands),
            vec![2, 3, 1]
        );
        assert_eq!(
            restore_selection(RestoreMode::Full, &cands),
            vec![2, 3, 0, 1]
        );
        assert!(restore_selection(RestoreMode::None, &cands).is_empty());
    }

    #[test]
    fn caps_are_ten_and_twenty() {
        let many: Vec<_> = (0..30).map(|i| c(0.6, false, i)).collect();
        let sel = restore_selection(RestoreMode::Selective, &many);
        assert_eq!(sel.len(), 10);
        assert_eq!(sel[0], 29, "newest first among equals");
        assert_eq!(restore_selection(RestoreMode::Full, &many).len(), 20);
    }

    #[test]
    fn task_text_leaves_out_an_empty_goal() {
        assert_eq!(
            task_text("Login", "", "planning"),
            "Task: Login\nStatus: planning"
        );
        assert_eq!(
            task_text("Login", "ship it", "done"),
            "Task: Login\nGoal: ship it\nStatus: done"
        );
    }
}
