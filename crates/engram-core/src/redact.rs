//! Secret redaction: what must never be stored, indexed or embedded.
//!
//! Agents paste logs, configs and URLs into memories; a key that reaches the store would be
//! recalled into every later prompt. Each rule replaces a match with `[REDACTED]` (a URL's
//! password only, so the rest of the URL stays useful) and the write result lists which
//! rules fired, so the agent learns that something was removed instead of finding out later.

use regex::Regex;
use serde::Serialize;
use std::sync::OnceLock;

/// What replaces a secret.
pub const MARK: &str = "[REDACTED]";

/// One rule that fired, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redaction {
    /// The rule's name: `private_span`, `private_key`, `aws_access_key`, …
    pub kind: &'static str,
    pub count: usize,
}

struct Rule {
    kind: &'static str,
    re: Regex,
    /// The capture group that holds the secret (0 = the whole match).
    group: usize,
    /// Extra check on the secret, for patterns too broad to trust alone.
    accept: fn(&str) -> bool,
}

fn any(_: &str) -> bool {
    true
}

/// A value after `password=` is taken for a secret only when it does not read like prose:
/// long enough and holding a digit or a symbol.
fn looks_secret(v: &str) -> bool {
    let v = v.trim_matches(|c| c == '"' || c == '\'');
    v.chars().count() >= 6
        && v.chars()
            .any(|c| c.is_ascii_digit() || !c.is_alphanumeric())
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let r = |kind, pattern: &str, group, accept| Rule {
            kind,
            re: Regex::new(pattern).expect("redaction pattern compiles"),
            group,
            accept,
        };
        vec![
            // Seed C's explicit privacy spans, across lines, any case.
            r("private_span", r"(?is)<private>.*?</private>", 0, any),
            r(
                "private_key",
                r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
                0,
                any,
            ),
            r("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0, any),
            r(
                "aws_secret_key",
                r"(?i)aws_?secret_?access_?key\s*[:=]\s*['\x22]?([A-Za-z0-9/+=]{40})",
                1,
                any,
            ),
            r("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})", 0, any),
            r("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}", 0, any),
            r("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", 0, any),
            r("openai_key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}", 0, any),
            r("stripe_key", r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", 0, any),
            r("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0, any),
            r("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}", 0, any),
            r("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", 0, any),
            r("npm_token", r"\bnpm_[A-Za-z0-9]{36}", 0, any),
            r(
                "jwt",
                r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
                0,
                any,
            ),
            r("bearer_token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{20,})", 1, any),
            // user:password@host in any URL: only the password goes.
            r(
                "url_password",
                r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@",
                1,
                any,
            ),
            r(
                "password_assignment",
                r#"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)\b\s*[:=]\s*("[^"\n]+"|'[^'\n]+'|[^\s,;]+)"#,
                1,
                looks_secret,
            ),
        ]
    })
}

/// Replaces every secret in `text`. Returns the clean text and the rules that fired (empty
/// when nothing was found, in which case the text comes back unchanged).
pub fn redact(text: &str) -> (String, Vec<Redaction>) {
    let mut out = text.to_string();
    let mut fired = Vec::new();
    for rule in rules() {
        let mut count = 0;
        let mut result = String::with_capacity(out.len());
        let mut last = 0;
        for caps in rule.re.captures_iter(&out) {
            let Some(m) = caps.get(rule.group) else {
                continue;
            };
            if m.as_str() == MARK || !(rule.accept)(m.as_str()) {
                continue;
            }
            result.push_str(&out[last..m.start()]);
            result.push_str(MARK);
            last = m.end();
            count += 1;
        }
        if count > 0 {
            result.push_str(&out[last..]);
            out = result;
            fired.push(Redaction {
                kind: rule.kind,
                count,
            });
        }
    }
    (out, fired)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_redacts_and_names_itself() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "note <private>my home address</private> ok",
                "private_span",
                "note [REDACTED] ok",
            ),
            (
                "a <PRIVATE>multi\nline</Private> b",
                "private_span",
                "a [REDACTED] b",
            ),
            (
                "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nend",
                "private_key",
                "key:\n[REDACTED]\nend",
            ),
            (
                "id AKIAIOSFODNN7EXAMPLE here",
                "aws_access_key",
                "id [REDACTED] here",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_key",
                "aws_secret_access_key = [REDACTED]",
            ),
            (
                "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 used",
                "github_token",
                "token [REDACTED] used",
            ),
            (
                "glpat-abcdefghij0123456789xyz",
                "gitlab_token",
                "[REDACTED]",
            ),
            (
                "ANTHROPIC_API_KEY sk-ant-api03-abcdefghijklmnopqrstuv",
                "anthropic_key",
                "ANTHROPIC_API_KEY [REDACTED]",
            ),
            (
                "use sk-proj-abcdefghijklmnopqrstuvwx for tests",
                "openai_key",
                "use [REDACTED] for tests",
            ),
            ("sk_live_abcdefghijklmnop1234", "stripe_key", "[REDACTED]"),
            (
                "slack xoxb-1234567890-abcdefghij",
                "slack_token",
                "slack [REDACTED]",
            ),
            (
                "AIzaSyA1234567890abcdefghijklmnopqrstuv",
                "google_api_key",
                "[REDACTED]",
            ),
            (
                "hf_abcdefghijklmnopqrstuvwxyz12345678",
                "huggingface_token",
                "[REDACTED]",
            ),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "jwt",
                "[REDACTED]",
            ),
            (
                "Authorization: Bearer abcdefghijklmnopqrstuvwxyz.123",
                "bearer_token",
                "Authorization: Bearer [REDACTED]",
            ),
            (
                "DATABASE_URL=postgres://app:s3cr3t-pw@db.local:5432/app",
                "url_password",
                "DATABASE_URL=postgres://app:[REDACTED]@db.local:5432/app",
            ),
            (
                "password = \"hunter2!x\" in the file",
                "password_assignment",
                "password = [REDACTED] in the file",
            ),
            (
                "API_KEY=abc123def456",
                "password_assignment",
                "API_KEY=[REDACTED]",
            ),
        ];
        for (input, kind, want) in cases {
            let (out, fired) = redact(input);
            assert_eq!(&out, want, "rule {kind} on {input:?}");
            assert!(
                fired.iter().any(|r| r.kind == *kind),
                "{kind} should fire on {input:?}, fired {fired:?}"
            );
        }
    }

    #[test]
    fn prose_is_left_alone() {
        for text in [
            "We switched from PostgreSQL to SQLite for the local store.",
            "The password policy: at least twelve characters.",
            "password: required",
            "Use https://example.com/path?q=1 for docs",
            "ask-the-team before merging; sk-short",
            "データベースはSQLiteに切り替えた",
        ] {
            let (out, fired) = redact(text);
            assert_eq!(out, text);
            assert!(fired.is_empty(), "{text:?} fired {fired:?}");
        }
    }

    #[test]
    fn redaction_is_idempotent() {
        let (once, _) =
            redact("pw postgres://u:p4ss@h/db and ghp_abcdefghijklmnopqrstuvwxyz0123456789");
        let (twice, fired) = redact(&once);
        assert_eq!(once, twice);
        assert!(fired.is_empty());
    }
}
