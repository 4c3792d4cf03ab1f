//! Questions over many memories: a summary ("summarise how the project progressed") or an
//! ordering ("in what order did I bring up …") needs the topic's coverage across the
//! conversation, not the five closest turns of one session. When a query asks for it,
//! the places of a result go to one hit per session first (best first within each), then
//! to the rest in score order. Pure; the engine reorders its ranked hits with [`spread`].

/// Cues that a query asks about a topic across sessions or time (English, Japanese, Chinese).
const CUES: &[&str] = &[
    "in what order",
    "the order in which",
    "order of",
    "sequence of",
    "summar",
    "overview",
    "progressed",
    "progression",
    "evolved",
    "over time",
    "throughout",
    "across our",
    "across the sessions",
    "across sessions",
    "timeline of",
    "順番",
    "順序",
    "まとめ",
    "要約",
    "経緯",
    "顺序",
    "总结",
    "概述",
    "进展",
    "经过",
];

/// Whether `query` asks about a topic across sessions or time.
pub fn asks_for_coverage(query: &str) -> bool {
    let q = query.to_lowercase();
    CUES.iter().any(|c| q.contains(c))
}

/// The order in which `sessions` (each hit's session, in rank order) take a result's
/// `limit` places: the best hit of each session first, in rank order, until the places
/// are taken or the sessions run out; then the remaining hits in rank order. Hits without
/// a session are each their own. Returns indices into `sessions`.
pub fn spread(sessions: &[Option<&str>], limit: usize) -> Vec<usize> {
    let mut first = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, s) in sessions.iter().enumerate() {
        match s {
            Some(s) if seen.contains(s) => {}
            Some(s) => {
                seen.push(s);
                first.push(i);
            }
            None => first.push(i),
        }
    }
    // Past the limit, rank order again (what deepening or paging sees next).
    let head: Vec<usize> = first.iter().copied().take(limit).collect();
    let mut tail: Vec<usize> = (0..sessions.len()).filter(|i| !head.contains(i)).collect();
    tail.sort_unstable();
    head.into_iter().chain(tail).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cues_in_three_languages() {
        assert!(asks_for_coverage(
            "Can you list the order in which I brought up different aspects of my app?"
        ));
        assert!(asks_for_coverage(
            "Give me a comprehensive summary of how the project progressed"
        ));
        assert!(asks_for_coverage("これまでの経緯をまとめて"));
        assert!(asks_for_coverage("总结一下我们的进展"));
        assert!(!asks_for_coverage("which database do we use"));
        assert!(!asks_for_coverage(
            "When did Caroline go to the support group?"
        ));
    }

    #[test]
    fn one_hit_per_session_first_then_rank_order() {
        let s = [Some("a"), Some("a"), Some("b"), None, Some("b"), Some("c")];
        assert_eq!(spread(&s, 3), vec![0, 2, 3, 1, 4, 5]);
        assert_eq!(spread(&s, 10), vec![0, 2, 3, 5, 1, 4]);
        // One session only: rank order stands.
        assert_eq!(spread(&[Some("a"), Some("a")], 5), vec![0, 1]);
    }
}
