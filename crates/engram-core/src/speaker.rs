//! Who said a memory, and whom a question asks about: the speaker prior.
//!
//! A memory that records an utterance (a turn of a conversation: an `episode`, or any
//! memory with `metadata.speaker`) has a speaker. A question that names one speaker
//! ("What did Caroline paint?") or is asked in the first person ("the order in which I
//! brought up…", 私が…, 我…) is most often answered by what that speaker said, so those
//! memories gain `w_speaker` of relevance. Only one speaker is ever lifted: a question
//! naming two (or the asker and someone else) lifts nobody. Pure; the engine reads the
//! memories, recall's ranking applies the lift.

use crate::Kind;
use serde_json::Value;

/// Speaker labels that mean the person asking: how conversation logs and agents' transcripts
/// name the human side.
const ASKER_LABELS: &[&str] = &["user", "human", "me"];

/// Capitalised words that open a question, never a name.
const NOT_NAMES: &[&str] = &[
    "What",
    "When",
    "Where",
    "Who",
    "Whom",
    "Whose",
    "Why",
    "How",
    "Which",
    "Did",
    "Does",
    "Do",
    "Is",
    "Are",
    "Was",
    "Were",
    "Can",
    "Could",
    "Would",
    "Should",
    "Will",
    "Has",
    "Have",
    "Had",
    "I",
    "In",
    "On",
    "At",
    "The",
    "A",
    "An",
    "And",
    "Or",
    "If",
    "Please",
    "Tell",
    "Give",
    "List",
    "Show",
    "Summarize",
    "Summarise",
    "Describe",
    "Explain",
    "Based",
    "According",
    "Besides",
    "After",
    "Before",
    "During",
    "Since",
    "From",
    "To",
];

/// Whom a question asks about: the capitalised names it holds and whether it speaks in
/// the first person.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Asked {
    /// Names in the query (capitalised words that are not question words), lower-cased.
    pub names: Vec<String>,
    /// The query speaks as "I" (English I/me/my/mine/myself; 私, 僕, 俺; 我 but not 我们).
    pub first_person: bool,
}

/// Reads whom `query` asks about.
pub fn asked(query: &str) -> Asked {
    let mut out = Asked::default();
    for word in query.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')) {
        let word = word
            .trim_end_matches("'s")
            .trim_end_matches("’s")
            .trim_matches(['\'', '’']);
        if word.is_empty() {
            continue;
        }
        let lower = word.to_lowercase();
        if matches!(lower.as_str(), "i" | "me" | "my" | "mine" | "myself") {
            out.first_person = true;
            continue;
        }
        let mut chars = word.chars();
        let capitalised = chars.next().is_some_and(char::is_uppercase)
            && chars.all(|c| c.is_lowercase() || c == '-');
        if capitalised
            && word.len() > 1
            && !NOT_NAMES.contains(&word)
            && !out.names.contains(&lower)
        {
            out.names.push(lower);
        }
    }
    if ["私", "僕", "俺", "わたし", "あたし"]
        .iter()
        .any(|w| query.contains(w))
    {
        out.first_person = true;
    }
    let chars: Vec<char> = query.chars().collect();
    if chars
        .iter()
        .enumerate()
        .any(|(i, c)| *c == '我' && chars.get(i + 1) != Some(&'们'))
    {
        out.first_person = true;
    }
    out
}

/// Who said a memory: `metadata.speaker`, else, for a turn of a conversation (an
/// episode), a leading label of one to three capitalised words before ": " ("Caroline: …",
/// "User: …"). Other memories' leading labels ("Decision: …", "Fix: …") are not speakers.
pub fn speaker_of<'m>(kind: Kind, content: &'m str, metadata: &'m Value) -> Option<&'m str> {
    if let Some(s) = metadata.get("speaker").and_then(Value::as_str) {
        return Some(s.trim()).filter(|s| !s.is_empty());
    }
    if kind != Kind::Episode {
        return None;
    }
    let (label, _) = content.split_once(": ")?;
    let words: Vec<&str> = label.split(' ').collect();
    let named = label.len() <= 40
        && words.len() <= 3
        && words.iter().all(|w| {
            w.chars().next().is_some_and(char::is_uppercase)
                && w.chars().all(|c| c.is_alphanumeric() || "'’.-".contains(c))
        });
    named.then_some(label)
}

/// Whether `speaker` is one the question asks about.
fn is_asked(asked: &Asked, speaker: &str) -> bool {
    let s = speaker.to_lowercase();
    (asked.first_person && ASKER_LABELS.contains(&s.as_str()))
        || asked
            .names
            .iter()
            .any(|n| s == *n || s.split(' ').any(|w| w == n))
}

/// The one speaker among `speakers` (the candidates' speakers) that the question asks
/// about, lower-cased; `None` when it asks about none of them, or about more than one.
pub fn lifted<'s>(asked: &Asked, speakers: impl IntoIterator<Item = &'s str>) -> Option<String> {
    let mut found: Option<String> = None;
    for s in speakers {
        if !is_asked(asked, s) {
            continue;
        }
        let s = s.to_lowercase();
        match &found {
            None => found = Some(s),
            Some(f) if *f == s => {}
            Some(_) => return None,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn questions_name_their_speakers() {
        let a = asked("What did Caroline paint after Melanie's visit?");
        assert_eq!(a.names, vec!["caroline", "melanie"]);
        assert!(!a.first_person);
        let a = asked("Can you list the order in which I brought up the budget tracker?");
        assert!(a.first_person && a.names.is_empty());
        assert!(asked("私が最初に話したことは？").first_person);
        assert!(asked("我提到过哪些库？").first_person);
        assert!(!asked("我们用什么数据库？").first_person);
        assert!(!asked("which database do we use").first_person);
    }

    #[test]
    fn speakers_of_turns_and_labels_of_notes() {
        let none = json!({});
        assert_eq!(
            speaker_of(Kind::Episode, "Caroline: \"I went hiking\"", &none),
            Some("Caroline")
        );
        assert_eq!(
            speaker_of(Kind::Episode, "User: how do I deploy?", &none),
            Some("User")
        );
        assert_eq!(
            speaker_of(Kind::Decision, "Decision: use SQLite", &none),
            None
        );
        assert_eq!(
            speaker_of(Kind::Episode, "we decided: use SQLite", &none),
            None
        );
        assert_eq!(
            speaker_of(Kind::Fact, "anything", &json!({"speaker": "Bob"})),
            Some("Bob")
        );
    }

    #[test]
    fn one_speaker_is_lifted_never_two() {
        let q = asked("What did Caroline paint?");
        assert_eq!(
            lifted(&q, ["Melanie", "Caroline", "Caroline"]),
            Some("caroline".into())
        );
        let both = asked("Did Caroline and Melanie meet?");
        assert_eq!(lifted(&both, ["Melanie", "Caroline"]), None);
        let me = asked("What did I say about tests?");
        assert_eq!(lifted(&me, ["User", "Assistant"]), Some("user".into()));
        assert_eq!(lifted(&asked("what is the port"), ["User"]), None);
    }
}
