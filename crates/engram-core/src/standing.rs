//! Standing instructions and preferences: memories that say how the user wants things done
//! from now on ("Always include version numbers when I ask about dependencies", "I prefer
//! minimal dependencies", 「今後はテストを先に書いて」, 「以后回答都用中文」).
//!
//! Such a memory is found on write by its wording ([`is_standing`]) and tagged [`TAG`]; a
//! user may tag one by hand too. At recall, the applicable ones get their own places in the
//! result ([`places`]): a later request ("show me how to implement login") rarely shares a
//! word with the instruction that governs it, so topical hits would crowd it out. Which
//! instruction applies is decided by the engine from the query's similarity to each tagged
//! memory (the calibrated cosine, or coverage without a model); this module only reads
//! wording and decides places. Pure.

use crate::MemoryId;
use regex::Regex;
use std::sync::LazyLock;

/// The tag a standing instruction or preference carries.
pub const TAG: &str = "standing";

/// English cues, at the start of a sentence (imperative) or in the first person.
/// "Always …"/"Never …"/"From now on …" open a sentence; "I prefer", "I'd like you to",
/// "make sure to always" may stand anywhere. Advice inside a sentence ("you should always
/// test") is not an instruction to the agent and is not matched.
static ENGLISH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?ix)
        (?: ^ | [.!?;:]\s+ | \n\s* | ^[^\s:"]{1,40}:\s*"? )          # a sentence's start
        (?: please\s+ | and\s+ )?
        (?: always | never | from\s+now\s+on | going\s+forward | whenever\s+I
          | in\s+(?:the\s+)?future | don'?t\s+ever | do\s+not\s+ever )\b
      | \bI(?:'d|\s+would)?\s+(?:really\s+|generally\s+|usually\s+|strongly\s+)?
          (?: prefer | like\s+you\s+to | want\s+you\s+to | always\s+want )\b
      | \bmake\s+sure\s+(?:to|you)\s+always\b
      | \bmy\s+preference\s+(?:is|for)\b
    "#,
    )
    .expect("standing cues compile")
});

/// Japanese and Chinese cues, as written.
const CJK_CUES: &[&str] = &[
    // Japanese: "from now on", "always", "please don't", "I prefer".
    "今後は",
    "これからは",
    "常に",
    "しないでください",
    "を好みます",
    "の方が好き",
    "ほうが好き",
    // Chinese: "from now on", "always (use)", "never", "be sure to", "I prefer". Bare
    // 以后 ("after") and 总是 ("keeps failing") state facts as often as wishes.
    "从现在开始",
    "从今以后",
    "今后",
    "以后请",
    "以后都",
    "请总是",
    "请始终",
    "始终使用",
    "总是使用",
    "永远不要",
    "务必",
    "我更喜欢",
    "我偏好",
    "请不要",
];

/// Whether a text sets a standing instruction or preference.
pub fn is_standing(content: &str) -> bool {
    ENGLISH
        .find_iter(content)
        .any(|m| sets_a_rule(m.as_str(), &content[m.end()..]))
        || CJK_CUES.iter().any(|c| content.contains(c))
}

/// Words after a sentence-opening "Always"/"Never" that state a mood or a fact, not a rule
/// ("Always here to help!", "Never thought I'd see it", "Always a pleasure", "Never mind").
const NOT_A_RULE: &[&str] = &[
    "a", "an", "the", "my", "your", "our", "his", "her", "their", "this", "that", "so", "such",
    "too", "more", "really", "just", "ever", "again", "here", "there", "happy", "glad", "great",
    "good", "nice", "fun", "fine", "welcome", "mind", "been", "was", "were", "is", "are", "had",
    "has", "did", "got", "thought", "knew", "felt", "seen", "heard", "said", "told", "made",
    "went", "came", "love", "loved", "enjoy", "enjoyed", "liked", "wanted", "expected", "imagined",
    "realized", "realised", "gonna", "i", "you", "we", "me", "it",
];

/// Verbs after "whenever I" that make it a request to the agent ("whenever I ask for a
/// query, …"), not a habit ("Whenever I go to the beach, I feel calm").
const REQUESTS: &[&str] = &[
    "ask", "say", "request", "type", "mention", "paste", "send", "share", "give", "need", "want",
    "write", "run", "open", "start", "use",
];

/// Words after "In the future" that tell of plans, not of how things are to be done ("In
/// the future I hope to travel").
const PLANS: &[&str] = &["i", "we", "my", "our", "it", "they"];

/// A cue sets a rule unless it is a sentence-opening "Always"/"Never" followed by what
/// an imperative never is: a mood word, a past tense, a pronoun, an article, or a long
/// "-ing" form ("Always learning!"). An instruction's "Always"/"Never" is followed by a
/// verb in its plain form ("Always include", "never push", "Never forget to"). "Whenever
/// I" needs a request after it, "In the future" no plan.
fn sets_a_rule(cue: &str, rest: &str) -> bool {
    let last = cue
        .trim_end()
        .rsplit(|c: char| !c.is_alphanumeric() && c != '\'')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    // The word after the cue, lower case, up to an apostrophe ("I'd" → "i").
    let next: String = rest
        .trim_start_matches([',', ' ', '\t'])
        .split_whitespace()
        .next()
        .unwrap_or("")
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    let next = next.as_str();
    match last.as_str() {
        "always" | "never" => {
            !(next.is_empty()
                || NOT_A_RULE.contains(&next)
                || (next.len() >= 7 && next.ends_with("ing")))
        }
        "i" => REQUESTS.contains(&next),
        "future" => !PLANS.contains(&next),
        _ => true,
    }
}

/// A request for help, advice or work, in English: addressed to the agent ("can you
/// help me…", "what would you suggest…", "walk me through…") or asking how the user
/// should do something ("how should I…", "I'm planning to…").
static ASKS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)\b(?:
            help\s+me | show\s+me | walk\s+me\s+through | explain | suggest | recommend | advise
          | should\s+(?:I|we) | can\s+I | could\s+I
          | how\s+(?:do|can|could|should|would)\s+(?:I|we) | how\s+would\s+you | what\s+would\s+you
          | I'?m\s+(?:planning|about|working|looking|trying|going|updating|building|creating|applying|starting)
          | I\s+(?:want|need|plan|would\s+like|'d\s+like)\s+to | let'?s
        )\b",
    )
    .expect("request cues compile")
});

/// The speaker in a request: the user or the agent ("What does Caroline recommend?" asks
/// about someone else's advice, which no instruction of the user governs).
static PERSON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:I|me|my|we|us|our|you|your)\b").expect("person cues compile")
});

/// A question about what was said or done ("did I…", "what have we…", "in what order…",
/// "summarise…"): it asks the memory for the past, not for work that instructions shape.
static ABOUT_THE_PAST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)\b(?:
            did\s+(?:I|we|you) | have\s+(?:I|we|you) | had\s+(?:I|we) | brought\s+up | mentioned
          | summar\w* | order\s+in\s+which | in\s+what\s+order | last\s+time | earlier | ago
          | so\s+far | recap | remind\s+me
        )\b",
    )
    .expect("past cues compile")
});

/// Japanese and Chinese requests ("教えて", "どうすれば", "怎么", "帮我") and questions about
/// the past ("前に", "言った", "之前", "提到").
const CJK_ASKS: &[&str] = &[
    "教えて",
    "どうすれば",
    "どうしたら",
    "手伝って",
    "してください",
    "したい",
    "方法は",
    "怎么",
    "如何",
    "帮我",
    "建议",
    "推荐",
    "请帮",
    "我想",
    "我要",
];
const CJK_PAST: &[&str] = &[
    "前に",
    "以前",
    "言った",
    "話した",
    "まとめて",
    "之前",
    "说过",
    "提到",
    "总结",
];

/// Whether a query asks for help or work, where the user's standing instructions and
/// preferences apply, rather than for a fact from the past. Only such a query gives
/// standing memories their own places: a question about what happened ("When did
/// Caroline go to the support group?") is answered by what happened, and a place given
/// to an instruction there only crowds out the answer.
pub fn asks_for_help(query: &str) -> bool {
    let english = ASKS.is_match(query) && PERSON.is_match(query) && !ABOUT_THE_PAST.is_match(query);
    let cjk =
        CJK_ASKS.iter().any(|c| query.contains(c)) && !CJK_PAST.iter().any(|c| query.contains(c));
    english || cjk
}

/// The tags a memory is stored with: `tags` plus [`TAG`] when its content reads as a
/// standing instruction (and it is not there already).
pub fn with_tag(content: &str, mut tags: Vec<String>) -> Vec<String> {
    if !tags.iter().any(|t| t == TAG) && is_standing(content) {
        tags.push(TAG.to_string());
    }
    tags
}

/// Which applicable instructions get places in a result of `limit`: the ids of the
/// candidates (best first, each with its absolute relevance to the query) that pass
/// `min_relevance`, at most `places` of them and never every place of the result (one is
/// always left for what the query asked), minus those already among `hits`.
pub fn places(
    candidates: &[(MemoryId, f64)],
    hits: &[MemoryId],
    limit: usize,
    places: usize,
    min_relevance: f64,
) -> Vec<MemoryId> {
    let room = places.min(limit.saturating_sub(1));
    candidates
        .iter()
        .filter(|(_, r)| *r >= min_relevance)
        .take(room)
        .map(|(id, _)| *id)
        .filter(|id| !hits.contains(id))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_for_work_are_told_from_questions_about_the_past() {
        for q in [
            "Could you show me how to implement a login feature?",
            "How should I organize the information about my past jobs?",
            "I'm planning to add user login to my Flask app. What libraries would you suggest?",
            "Can you walk me through proving two triangles congruent?",
            "Write the migration for me, I need to add a column",
            "ログイン機能の実装方法を教えて",
            "帮我写一个登录页面",
        ] {
            assert!(asks_for_help(q), "{q}");
        }
        for q in [
            "When did Caroline go to the LGBTQ support group?",
            "What advice does Caroline give for getting started with adoption?",
            "What book did Melanie recommend to Caroline?",
            "Can you list the order in which I brought up the parts of my app?",
            "Have I integrated Flask-Login in my project?",
            "Can you give me a comprehensive summary of how my project progressed?",
            "What is the average response time of the dashboard API?",
            "前に話したデプロイの手順は?",
            "我之前提到的数据库是哪个?",
        ] {
            assert!(!asks_for_help(q), "{q}");
        }
    }

    #[test]
    fn instructions_and_preferences_read_as_standing() {
        for s in [
            "Always include version numbers when I ask about software dependencies.",
            "User: \"Always format all code snippets with syntax highlighting.\"",
            "Thanks. From now on, answer in British English.",
            "never push straight to main",
            "I prefer simple, minimal dependencies for this app.",
            "I'd like you to keep answers short.",
            "今後はテストを先に書いてください。",
            "コミットメッセージは常に英語で書く",
            "以后请用中文回答。",
            "我更喜欢用 pnpm 而不是 npm",
            "Never forget to run the migrations first.",
            "Always bring the logs when you report a crash.",
            "Whenever I ask for a query, use PostgreSQL syntax.",
            "In the future, put the summary first.",
        ] {
            assert!(is_standing(s), "{s}");
        }
    }

    #[test]
    fn facts_and_advice_do_not() {
        for s in [
            "The deploy failed because the token expired.",
            "You should always test before you deploy, it said.",
            "We use Postgres 16 in production.",
            "She is never late.",
            "サーバーは東京にあります。",
            "数据库在上海。",
            "部署以后构建总是失败。",
            "Always here to help!",
            "Thanks! Never thought I'd finish it.",
            "Always a pleasure talking to you.",
            "Always happy to chat. Never mind the weather.",
            "Always learning something new!",
            "Never!",
            "Whenever I go to the beach, I feel calm.",
            "In the future I hope to visit Japan.",
        ] {
            assert!(!is_standing(s), "{s}");
        }
    }

    #[test]
    fn the_tag_is_added_once() {
        let t = with_tag("Always use tabs.", vec!["style".into()]);
        assert_eq!(t, vec!["style".to_string(), TAG.to_string()]);
        assert_eq!(with_tag("Always use tabs.", t.clone()), t);
        assert!(with_tag("Tabs are used.", vec![]).is_empty());
    }

    #[test]
    fn places_leave_one_for_the_query_and_skip_what_is_there() {
        let c = [(7, 0.9), (8, 0.8), (9, 0.2)];
        assert_eq!(places(&c, &[], 5, 2, 0.5), vec![7, 8]);
        assert_eq!(places(&c, &[7], 5, 2, 0.5), vec![8]);
        assert_eq!(places(&c, &[], 5, 1, 0.5), vec![7]);
        assert_eq!(places(&c, &[], 1, 2, 0.5), Vec::<MemoryId>::new());
        assert_eq!(places(&c, &[], 5, 3, 0.5), vec![7, 8]);
    }
}
