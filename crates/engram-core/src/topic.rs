//! Seed C's topic keys and passive capture of "Key Learnings" sections, as pure functions.

/// C's family of a memory type, or of its text when the type says nothing.
fn family(kind: &str, text: &str) -> String {
    let t = kind.trim().to_ascii_lowercase();
    let by_type = match t.as_str() {
        "architecture" | "design" | "adr" | "refactor" => Some("architecture"),
        "bug" | "bugfix" | "fix" | "incident" | "hotfix" => Some("bug"),
        "decision" => Some("decision"),
        "pattern" | "convention" | "guideline" => Some("pattern"),
        "config" | "setup" | "infra" | "infrastructure" | "ci" => Some("config"),
        "discovery" | "investigation" | "root_cause" | "root-cause" => Some("discovery"),
        "learning" | "learn" => Some("learning"),
        "session_summary" => Some("session"),
        _ => None,
    };
    if let Some(f) = by_type {
        return f.to_string();
    }
    let lower = text.to_lowercase();
    const SCAN: &[(&str, &[&str])] = &[
        (
            "bug",
            &[
                "bug",
                "fix",
                "panic",
                "error",
                "crash",
                "regression",
                "incident",
                "hotfix",
            ],
        ),
        (
            "architecture",
            &[
                "architecture",
                "design",
                "adr",
                "boundary",
                "hexagonal",
                "refactor",
            ],
        ),
        (
            "decision",
            &["decision", "tradeoff", "chose", "choose", "decide"],
        ),
        ("pattern", &["pattern", "convention", "naming", "guideline"]),
        (
            "config",
            &[
                "config",
                "setup",
                "environment",
                "env",
                "docker",
                "pipeline",
            ],
        ),
        (
            "discovery",
            &[
                "discovery",
                "investigate",
                "investigation",
                "found",
                "root cause",
            ],
        ),
        ("learning", &["learned", "learning"]),
    ];
    for (fam, words) in SCAN {
        if words.iter().any(|w| lower.contains(w)) {
            return fam.to_string();
        }
    }
    let seg = segment(&t);
    if !t.is_empty() && t != "manual" && !seg.is_empty() {
        seg
    } else {
        "topic".to_string()
    }
}

/// Lower-case ASCII words joined by `-`, at most 100 characters.
fn segment(s: &str) -> String {
    let cleaned: String = s
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let mut out = cleaned.split_whitespace().collect::<Vec<_>>().join("-");
    out.truncate(100);
    out.trim_end_matches('-').to_string()
}

/// C's topic-key normalisation: trimmed, lower-cased, whitespace runs as `-`. Keys that
/// differ only in case or spacing name one topic.
pub fn normalize_topic_key(key: &str) -> String {
    key.trim()
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
}

/// C's `SuggestTopicKey`: `family/segment` from the type, title and content.
/// Secrets in the title or content are redacted first, so the key never echoes one.
pub fn suggest_topic_key(kind: &str, title: &str, content: &str) -> String {
    let (title, content) = (
        crate::redact::redact(title).0,
        crate::redact::redact(content).0,
    );
    let (title, content) = (title.as_str(), content.as_str());
    let fam = family(kind, &format!("{title} {content}"));
    let mut seg = segment(title);
    if seg.is_empty() {
        seg = segment(
            &content
                .split_whitespace()
                .take(8)
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    if seg.is_empty() {
        seg = "general".into();
    }
    if let Some(rest) = seg.strip_prefix(&format!("{fam}-")) {
        seg = rest.to_string();
    }
    if seg == fam {
        seg = "general".into();
    }
    format!("{fam}/{seg}")
}

fn is_learnings_header(line: &str) -> bool {
    let t = line.trim();
    let hashes = t.chars().take_while(|c| *c == '#').count();
    if !(2..=3).contains(&hashes) {
        return false;
    }
    // C documents the Japanese header with a full-width colon (`## 重要な学び：`).
    let rest = t[hashes..]
        .trim()
        .trim_end_matches([':', '：'])
        .trim()
        .to_lowercase();
    let rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    matches!(
        rest.as_str(),
        "key learnings"
            | "key learning"
            | "learnings"
            | "learning"
            | "aprendizajes"
            | "aprendizajes clave"
            | "重要な学び"
    )
}

/// An item without its Markdown emphasis and code marks: backticks go, and `*` or `_`
/// only where they mark emphasis (at a word's edge), so `snake_case`, `__init__`-free
/// names, `a*b` and every secret keep their characters.
fn clean_item(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let word = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        let marker = matches!(c, '*' | '_');
        let inside = word(i.checked_sub(1)) && word(Some(i + 1));
        // A run of markers (`**`, `__`) is inside a word when its ends touch letters.
        let run_inside = marker && {
            let (mut a, mut b) = (i, i);
            while a > 0 && chars[a - 1] == c {
                a -= 1;
            }
            while b + 1 < chars.len() && chars[b + 1] == c {
                b += 1;
            }
            word(a.checked_sub(1)) && word(Some(b + 1))
        };
        if c == '`' || (marker && !inside && !run_inside) {
            continue;
        }
        out.push(c);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// C's passive capture: the items of the last "Key Learnings" (or "Learnings",
/// "Aprendizajes") section that yields any, numbered items preferred over bullets, markup
/// stripped, items shorter than 20 characters dropped.
pub fn extract_learnings(text: &str) -> Vec<String> {
    // Secrets go before the markup does: stripping first would hide their shape.
    let text = crate::redact::redact(text).0;
    let lines: Vec<&str> = text.lines().collect();
    let mut best: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_learnings_header(lines[i]) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut body = Vec::new();
        while j < lines.len() {
            let t = lines[j].trim_start();
            let h = t.chars().take_while(|c| *c == '#').count();
            if (1..=3).contains(&h) && t[h..].starts_with(' ') {
                break;
            }
            body.push(lines[j]);
            j += 1;
        }
        let numbered: Vec<String> = body
            .iter()
            .filter_map(|l| {
                let t = l.trim_start();
                let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
                let rest = &t[digits..];
                (digits > 0 && (rest.starts_with(". ") || rest.starts_with(") ")))
                    .then(|| rest[2..].to_string())
            })
            .collect();
        let items = if !numbered.is_empty() {
            numbered
        } else {
            body.iter()
                .filter_map(|l| {
                    let t = l.trim_start();
                    t.strip_prefix("- ")
                        .or_else(|| t.strip_prefix("* "))
                        .map(str::to_string)
                })
                .collect()
        };
        let items: Vec<String> = items
            .iter()
            .map(|s| clean_item(s))
            .filter(|s| s.chars().count() >= 20)
            .collect();
        if !items.is_empty() {
            best = items;
        }
        i = j;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learnings_keep_names_and_lose_secrets() {
        let text = "## Key Learnings\n- Set `max_retry_count = 5` in **config_v2.yaml** for the _init_ path\n- Deploy with ghp_R4nd0mT0k3nV4lu3F0rT3st1ngPurp0s3s12 only in CI\n";
        let items = extract_learnings(text);
        assert_eq!(
            items[0],
            "Set max_retry_count = 5 in config_v2.yaml for the init path"
        );
        assert!(!items[1].contains("R4nd0m"), "{}", items[1]);
    }

    #[test]
    fn topic_keys_follow_seed_c() {
        assert_eq!(
            suggest_topic_key("decision", "Use SQLite for storage", ""),
            "decision/use-sqlite-for-storage"
        );
        assert_eq!(
            suggest_topic_key("manual", "Crash on startup", "panic in init"),
            "bug/crash-on-startup"
        );
        assert_eq!(
            suggest_topic_key("", "", "nothing special here"),
            "topic/nothing-special-here"
        );
        assert_eq!(suggest_topic_key("config", "Config", ""), "config/general");
        assert_eq!(
            suggest_topic_key("bugfix", "bug fix for login", ""),
            "bug/fix-for-login"
        );
    }

    #[test]
    fn passive_capture_takes_the_last_learnings_section() {
        let text = "# Work\n## Key Learnings\n- too short\n- **Always** run migrations before tests\n\n## Other\n- not this one, it is long enough\n### Learnings:\n1. The cache must be warmed before the `benchmark` runs\n2) Second numbered learning that is long\n- a bullet ignored because numbered exist\n";
        assert_eq!(
            extract_learnings(text),
            vec![
                "The cache must be warmed before the benchmark runs",
                "Second numbered learning that is long"
            ]
        );
        assert!(extract_learnings("no sections here").is_empty());
        assert_eq!(
            extract_learnings(
                "## 重要な学び：\n- マイグレーションはテストの前に必ず実行すること、忘れると失敗する\n"
            ),
            vec!["マイグレーションはテストの前に必ず実行すること、忘れると失敗する"]
        );
        let only_first =
            "## Key Learnings\n- Always run migrations before tests\n## Learnings\n- short\n";
        assert_eq!(
            extract_learnings(only_first),
            vec!["Always run migrations before tests"]
        );
    }
}
