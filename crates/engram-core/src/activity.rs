//! Seed C's activity nudge: after ten quiet minutes in a session, C's search and context
//! remind the agent to save what it learned. Pure: the times come from the store.

use crate::Millis;

/// How long a session must run, and how long since its last save, before the nudge (C: 10 min).
pub const NUDGE_AFTER_MS: Millis = 10 * 60 * 1000;

/// A session open longer than this is not one being worked in but one never ended (a
/// client that crashed, a store converted from C with its open sessions): C counted
/// activity per server process, so its nudge never came from such a session.
pub const STALE_SESSION_MS: Millis = 12 * 60 * 60 * 1000;

/// Minutes since the last save (or the session's start, when nothing was saved since) when
/// C would nudge: the session is at least ten minutes old and nothing was saved for ten
/// minutes. `None` otherwise, or with no open session.
pub fn save_nudge_minutes(
    now: Millis,
    session_started: Option<Millis>,
    last_save: Option<Millis>,
) -> Option<i64> {
    let started = session_started?;
    if now - started < NUDGE_AFTER_MS || now - started > STALE_SESSION_MS {
        return None;
    }
    let quiet_since = last_save.map_or(started, |s| s.max(started));
    let quiet = now - quiet_since;
    (quiet >= NUDGE_AFTER_MS).then_some(quiet / 60_000)
}

/// C's nudge text.
pub fn save_nudge_text(minutes: i64) -> String {
    format!(
        "\n\n⚠️ No mem_save calls for this project in {minutes} minutes. Did you make any decisions, fix bugs, or discover something worth persisting?"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_left_open_for_days_never_nudges() {
        let now = 1_000 * 24 * 60 * MIN;
        assert_eq!(
            save_nudge_minutes(now, Some(now - 3 * 24 * 60 * MIN), None),
            None
        );
        assert_eq!(
            save_nudge_minutes(now, Some(now - 30 * MIN), None),
            Some(30)
        );
    }

    const MIN: Millis = 60_000;

    #[test]
    fn nudges_after_ten_quiet_minutes_of_a_ten_minute_session() {
        let t0 = 1_000 * MIN;
        assert_eq!(
            save_nudge_minutes(t0 + 9 * MIN, Some(t0), None),
            None,
            "session too young"
        );
        assert_eq!(save_nudge_minutes(t0 + 12 * MIN, Some(t0), None), Some(12));
        assert_eq!(
            save_nudge_minutes(t0 + 12 * MIN, Some(t0), Some(t0 + 5 * MIN)),
            None
        );
        assert_eq!(
            save_nudge_minutes(t0 + 30 * MIN, Some(t0), Some(t0 + 5 * MIN)),
            Some(25)
        );
        // A save from before the session does not count as quiet time of this one.
        assert_eq!(
            save_nudge_minutes(t0 + 11 * MIN, Some(t0), Some(t0 - 50 * MIN)),
            Some(11)
        );
        assert_eq!(
            save_nudge_minutes(t0 + 99 * MIN, None, None),
            None,
            "no open session"
        );
        assert!(save_nudge_text(12).contains("No mem_save calls for this project in 12 minutes"));
    }
}
