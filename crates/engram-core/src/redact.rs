//! Secret redaction: what must never be stored, indexed or embedded.
//!
//! Agents paste logs, configs and URLs into memories; a key that reaches the store would be
//! recalled into every later prompt. Each rule replaces a match with `[REDACTED]` (only the
//! secret part: a URL's password, an assignment's value, so the rest stays useful) and the
//! write result lists which rules fired, so the agent learns that something was removed
//! instead of finding out later. Every path into the store (remember, correct, update,
//! topic upserts, hooks, vault edits read back, importers) calls [`redact`].
//!
//! Broad rules (assignments, card numbers, high-entropy strings) carry an `accept` check so
//! ordinary engineering text passes: `primary_key = id`, `PWD=/home/me`, git hashes, ULIDs,
//! identifiers. The table test in `tests/redact_table.rs` measures both sides.

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
    accept: fn(&str, &str) -> bool,
}

fn any(_: &str, _: &str) -> bool {
    true
}

/// Values that name a setting's state or point elsewhere rather than hold a secret.
fn is_placeholder(v: &str) -> bool {
    const WORDS: &[&str] = &[
        "true",
        "false",
        "null",
        "none",
        "nil",
        "yes",
        "no",
        "on",
        "off",
        "required",
        "optional",
        "string",
        "str",
        "empty",
        "unset",
        "redacted",
        "secret",
        "password",
        "token",
        "hidden",
        "masked",
        "example",
        "your",
        "here",
        "changeme",
        "todo",
        "undefined",
        "default",
        "env",
        "file",
        "int",
        "bool",
        "option",
        "value",
    ];
    let lower = v.to_ascii_lowercase();
    v.contains(MARK)
        || v.starts_with(['$', '<', '{', '%', '(', '[', '/', '~', '.', '@', '&', '*'])
        || v.starts_with("process.env")
        || v.starts_with("os.environ")
        || v.starts_with("env.")
        || WORDS.contains(&lower.as_str())
        || v.chars().all(|c| c == v.chars().next().unwrap_or('x'))
        || lower.contains("xxxx")
}

fn unquote(v: &str) -> (&str, bool) {
    // A value quoted with escaped quotes (`\"x\"`, an assignment inside a JSON string).
    for q in ["\\\"", "\\'"] {
        if v.len() >= 2 * q.len() && v.starts_with(q) && v.ends_with(q) {
            return (&v[q.len()..v.len() - q.len()], true);
        }
    }
    let q = v.len() >= 2
        && ((v.starts_with('"') && v.ends_with('"')) || (v.starts_with('\'') && v.ends_with('\'')));
    if q {
        (&v[1..v.len() - 1], true)
    } else {
        (v, false)
    }
}

/// Shannon entropy in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    let n = s.chars().count() as f64;
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// AWS secret access keys: 40 characters of base64 with upper, lower and digits (a git
/// hash is lowercase hex, so it never matches).
fn aws_secret_shape(v: &str) -> bool {
    v.len() == 40
        && v.chars().any(|c| c.is_ascii_uppercase())
        && v.chars().any(|c| c.is_ascii_lowercase())
        && v.chars().any(|c| c.is_ascii_digit())
        && entropy(v) >= 4.0
}

/// A long random-looking token: upper, lower and digits mixed with high entropy. Hex (git
/// hashes, sha256), ULIDs and UUIDs have no lowercase-and-uppercase mix and pass; so do
/// identifiers, whose entropy is low and which rarely mix digits through them.
fn high_entropy(v: &str) -> bool {
    let v = v.trim_end_matches('=');
    let n = v.chars().count();
    if n < 24 || v.contains(MARK) {
        return false;
    }
    let upper = v.chars().filter(|c| c.is_ascii_uppercase()).count();
    let lower = v.chars().filter(|c| c.is_ascii_lowercase()).count();
    let digits = v.chars().filter(|c| c.is_ascii_digit()).count();
    // Identifiers and paths: words joined by `_`, `-` or `/` of mostly lowercase letters.
    let words = v
        .split(['_', '-', '/', '.'])
        .filter(|w| !w.is_empty())
        .count();
    if words >= 3 && v.split(['_', '-', '/', '.']).all(|w| w.len() < 12) {
        return false;
    }
    // Case changes: camelCase has few, random text changes case every couple of chars.
    let flips = v
        .as_bytes()
        .windows(2)
        .filter(|w| w[0].is_ascii_alphabetic() && w[1].is_ascii_alphabetic())
        .filter(|w| w[0].is_ascii_uppercase() != w[1].is_ascii_uppercase())
        .count();
    upper >= 2
        && lower >= 2
        && digits >= 2
        && flips * 5 >= n
        && entropy(v) >= 4.0
        && has_random_segment(v)
}

/// A secret holds one stretch of 16 or more random characters. Generated resource names
/// (`MyStack-MyFunction3BAA72D1-Xk2LmN9pQr7s`, CloudFormation's `MyRoleC7F7A5B9`) join
/// words and short random suffixes with separators, and code identifiers
/// (`TestHandleUserLogin2FAFlowV3`) are words with version marks: neither has one.
fn has_random_segment(v: &str) -> bool {
    v.split(['-', '_', '.', '/', ':']).any(|seg| {
        seg.chars().count() >= 16 && !identifier_like(seg) && !ipfs_cid(seg) && !ssh_key_blob(seg)
    })
}

/// Mostly words: at least 60 % of the letters sit in runs that read as words (a lowercase
/// run, or a capital and its lowercase run, of two letters or more with a vowel), the rest
/// short acronyms and version marks. Random text breaks into runs of one or two letters.
fn identifier_like(seg: &str) -> bool {
    let (mut letters, mut wordlike) = (0usize, 0usize);
    let mut run = String::new();
    let mut flush = |run: &mut String| {
        let n = run.chars().count();
        let vowel = run.chars().any(|c| "aeiouyAEIOUY".contains(c));
        let tail_lower = run.chars().skip(1).all(|c| c.is_ascii_lowercase());
        if n >= 2 && vowel && tail_lower {
            wordlike += n;
        }
        letters += n;
        run.clear();
    };
    for c in seg.chars() {
        let starts_word =
            c.is_ascii_uppercase() && run.chars().last().is_some_and(|p| p.is_ascii_lowercase());
        if !c.is_ascii_alphabetic() || starts_word {
            flush(&mut run);
        }
        if c.is_ascii_alphabetic() {
            // An acronym before a word (`FAFlow`): the last capital starts the word.
            if c.is_ascii_lowercase()
                && run.chars().count() >= 2
                && run.chars().all(|p| p.is_ascii_uppercase())
            {
                let last = run.pop();
                flush(&mut run);
                run.extend(last);
            }
            run.push(c);
        }
    }
    flush(&mut run);
    letters > 0 && wordlike * 10 >= letters * 6
}

/// Random-looking text that is public by its label: a digest named by its algorithm
/// (subresource integrity `sha256-`/`sha384-`/`sha512-`, go.sum's `h1:`, `md5-`) or
/// inline data (`data:…;base64,`). These are checksums of public files and images, not
/// credentials; a secret carries no such label.
fn public_encoding(v: &str) -> bool {
    const LABELS: &[&str] = &[
        "h1:",
        "base64,",
        "sha1-",
        "sha256-",
        "sha384-",
        "sha512-",
        "md5-",
        "ssh-rsa ",
        "ssh-ed25519 ",
        "ssh-dss ",
        "ecdsa-sha2-",
    ];
    let v = v.trim_start_matches('/');
    LABELS
        .iter()
        .any(|l| v.len() > l.len() && v[..l.len()].eq_ignore_ascii_case(l))
        || ipfs_cid(v)
        || ssh_key_blob(v)
}

/// An SSH public key's base64 body: it names its own algorithm (`AAAAB3NzaC1yc2E` is
/// "ssh-rsa", `AAAAC3NzaC1lZDI1NTE5` "ssh-ed25519", `AAAAE2VjZHNh` "ecdsa"), so it is
/// public by its first bytes, with or without the label in front.
fn ssh_key_blob(v: &str) -> bool {
    ["AAAAB3NzaC1", "AAAAC3NzaC1", "AAAAE2VjZHNh", "AAAAB3NzaC"]
        .iter()
        .any(|p| v.starts_with(p))
}

/// An IPFS content id (CIDv0: `Qm` and 44 more base58 characters): the address of public
/// content, random-looking by construction.
fn ipfs_cid(v: &str) -> bool {
    v.len() == 46
        && v.starts_with("Qm")
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() && !"0OIl".contains(c))
}

/// Luhn checksum over the digits of a candidate card number, with an issuer prefix (Visa,
/// Mastercard, Amex, Discover, JCB, Diners) so timestamps and ids pass.
fn card_number(v: &str) -> bool {
    let digits: Vec<u32> = v.chars().filter_map(|c| c.to_digit(10)).collect();
    if !(13..=19).contains(&digits.len()) {
        return false;
    }
    let s: String = digits.iter().map(|d| char::from(b'0' + *d as u8)).collect();
    let issuer = s.starts_with('4')
        || (51..=55).contains(&s[..2].parse::<u32>().unwrap_or(0))
        || (2221..=2720).contains(&s[..4].parse::<u32>().unwrap_or(0))
        || s.starts_with("34")
        || s.starts_with("37")
        || s.starts_with("6011")
        || s.starts_with("65")
        || s.starts_with("35")
        || s.starts_with("36");
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                d
            }
        })
        .sum();
    issuer && sum.is_multiple_of(10)
}

/// The key part of an assignment match, before its `=` or `:`.
fn key_of(whole: &str) -> &str {
    whole.split([':', '=']).next().unwrap_or(whole)
}

/// `DB_PASSWORD=…`: environment style, where even a plain word is a value, not prose.
fn env_style(whole: &str) -> bool {
    // The key is the last word before `=`: "we set GITLAB_CI_TOKEN=…", "old export X=…".
    let key = key_of(whole)
        .split_whitespace()
        .last()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
    key.chars().any(|c| c.is_ascii_uppercase()) && !key.chars().any(|c| c.is_ascii_lowercase())
}

/// A value after `password=`, `DB_PASS:`, `"token": …` is a secret unless it is a
/// placeholder, code (`get_token()`, `cfg.token`, `Option<String>`) or a number setting;
/// an unquoted word of letters only counts in environment style (`SECRET=hunter`).
fn value_secret(whole: &str, v: &str) -> bool {
    let (inner, quoted) = unquote(v);
    let inner = inner.trim();
    let n = inner.chars().count();
    if n < 4 || is_placeholder(inner) || (inner.contains(' ') && !quoted) {
        return false;
    }
    if inner.chars().all(|c| c.is_ascii_digit()) && n < 8 && !password_key(whole) {
        return false;
    }
    if quoted {
        return true;
    }
    static PATH: OnceLock<Regex> = OnceLock::new();
    let path = PATH.get_or_init(|| {
        Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)+,?$")
            .expect("pattern compiles")
    });
    // `cfg.token` is code, `hvs.CAES1x` is a token: dotted paths count as code only
    // outside environment style and when no segment mixes digits into letters.
    let dotted_code = path.is_match(inner)
        && !env_style(whole)
        && !inner
            .split(['.', ':'])
            .any(|seg| seg.chars().any(|c| c.is_ascii_digit()));
    let code = inner.contains(['(', '[', '<', '{']) || dotted_code;
    if code {
        return false;
    }
    inner
        .chars()
        .any(|c| c.is_ascii_digit() || !c.is_alphanumeric() && c != '_')
        || (env_style(whole) && n >= 6)
}

/// `password`, `DB_PASSWD`, `"pwd"`, `passcode`: keys whose value is a secret even when it
/// is only digits (a PIN, `{"password": 87654321}`), where `token: 4096` is a setting.
fn password_key(whole: &str) -> bool {
    let key = key_of(whole)
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_ascii_lowercase();
    ["password", "passwd", "passcode", "pwd", "passphrase", "pin"]
        .iter()
        .any(|k| key.ends_with(k))
}

/// `created_at_v2`, `order_id`: a value of lowercase words joined by `_`, a schema name.
fn snake_identifier(v: &str) -> bool {
    v.contains('_')
        && v.split('_').all(|w| {
            !w.is_empty()
                && (w.chars().all(|c| c.is_ascii_lowercase())
                    || (w.len() <= 4
                        && w.trim_start_matches('v')
                            .chars()
                            .all(|c| c.is_ascii_digit())))
        })
}

/// A value after `*_KEY=` needs more: `primary_key = id`, `sort_key: created_at` are schema,
/// not secrets. Eight characters or more, with a digit and a letter, and not a path.
fn key_value_secret(whole: &str, v: &str) -> bool {
    let (inner, _) = unquote(v);
    value_secret(whole, v)
        && inner.chars().count() >= 8
        && inner.chars().any(|c| c.is_ascii_digit())
        && inner.chars().any(|c| c.is_ascii_alphabetic())
        && !inner.contains('/')
        && !inner.ends_with(".pem")
        && !snake_identifier(inner)
        && !key_of(whole).to_ascii_lowercase().contains("public")
}

/// The word after `Bearer` outside a header: a token when long, or when it mixes letters
/// and digits ("bearer authentication" is prose).
fn bearer_secret(v: &str) -> bool {
    let n = v.chars().count();
    !is_placeholder(v)
        && (n >= 20
            || (v.chars().any(|c| c.is_ascii_digit())
                && v.chars().any(|c| c.is_ascii_alphabetic())))
}

/// The word after "password is": a secret when it holds a digit or a symbol.
fn phrase_secret(_: &str, v: &str) -> bool {
    let v = unquote(v)
        .0
        .trim_end_matches(['.', ',', ';', ')', '!', '?']);
    v.chars().count() >= 4
        && !is_placeholder(v)
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
        // Keys whose value is a secret in env, shell, YAML, TOML, JSON and .env forms.
        const SECRET_KEYS: &str = r"[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|credentials?|api[_-]?key|apikey|secret[_.-]?key|private[_.-]?key|access[_.-]?key|secret[_.-]key[_.-]base)|(?:[A-Za-z0-9]+[_.-])+(?:pass|auth|pwd)|pwd";
        // A value ends at a space, a separator, or a URL's next `&name=` parameter.
        // Escaped quotes first: an assignment written inside a JSON string (`\"x\"`).
        let value = r#"(\\"[^"\\\n]*\\"|\\'[^'\\\n]*\\'|"[^"\n]*"|'[^'\n]*'|[^\s,;"'})\]]+?)(?:&[A-Za-z0-9_.-]+=|[\s,;"'})\]]|$)"#;
        let assignment = format!(
            r#"(?i)(?:^|[^A-Za-z0-9_.-])(?:export\s+|set\s+)?(?:\\?["'])?(?:{SECRET_KEYS})(?:\\?["'])?\s*(?::=|=|:)[ \t]*{value}"#
        );
        let name_value = format!(
            r#"(?i)\\?["']?(?:name|key)\\?["']?\s*[:=]\s*\\?["']?(?:{SECRET_KEYS})\\?["']?[\s,]*(?:-\s*)?\\?["']?value\\?["']?\s*[:=]\s*{value}"#
        );
        let value_name = format!(
            r#"(?i)\\?["']?value\\?["']?\s*[:=]\s*(\\?"[^"\\\n]*\\?"|'[^'\n]*')[\s,]*\\?["']?(?:name|key)\\?["']?\s*[:=]\s*\\?["']?(?:{SECRET_KEYS})\b"#
        );
        let key_assignment = format!(
            r#"(?i)(?:^|[^A-Za-z0-9_.-])(?:export\s+)?(?:\\?["'])?(?:[A-Za-z0-9]+[_.-])+key(?:\\?["'])?\s*(?::=|=|:)[ \t]*{value}"#
        );
        vec![
            // Seed C's explicit privacy spans, across lines, any case.
            r("private_span", r"(?is)<private>.*?</private>", 0, any),
            r(
                "private_key",
                r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
                0,
                any,
            ),
            r("aws_access_key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16,}\b", 0, any),
            r(
                "aws_secret_key",
                r"(?i)aws_?secret_?access_?key\s*[:=]\s*['\x22]?([A-Za-z0-9/+=]{40,})",
                1,
                any,
            ),
            r("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})", 0, any),
            r("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}", 0, any),
            r("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}", 0, any),
            r("openai_key", r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}", 0, any),
            r("stripe_key", r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", 0, any),
            r("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0, any),
            r("google_api_key", r"\bAIza[0-9A-Za-z_-]{35,}", 0, any),
            r("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}", 0, any),
            r("npm_token", r"\bnpm_[A-Za-z0-9]{36,}", 0, any),
            r(
                "jwt",
                r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
                0,
                any,
            ),
            // An `Authorization` header's credentials, whatever their length or scheme.
            r(
                "bearer_token",
                r#"(?i)\bauthorization\\?["']?\s*[:=]\s*\\?["']?(?:bearer|basic|token|digest)\s+([A-Za-z0-9._~+/=-]+)"#,
                1,
                |_, v| !is_placeholder(v),
            ),
            r(
                "bearer_token",
                r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})",
                1,
                |_, v| bearer_secret(v),
            ),
            // Webhook URLs are credentials in themselves: the path after the host goes.
            r(
                "webhook_url",
                r"(?i)https?://hooks\.slack\.com/((?:services|workflows|triggers)/[A-Za-z0-9/_-]+)",
                1,
                any,
            ),
            r(
                "webhook_url",
                r"(?i)https?://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/([0-9]+/[A-Za-z0-9_-]+)",
                1,
                any,
            ),
            r(
                "webhook_url",
                r"(?i)https?://(?:[A-Za-z0-9-]+\.)*(?:webhook\.office\.com|outlook\.office\.com/webhook)/([^\s\x22'<>]+)",
                1,
                any,
            ),
            // user:password@host in any URL: only the password goes.
            r(
                "url_password",
                r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:([^\s@/]+)@",
                1,
                any,
            ),
            r("secret_assignment", &assignment, 1, value_secret),
            r("secret_assignment", &key_assignment, 1, key_value_secret),
            r(
                "secret_assignment",
                r#"(?i)--(?:password|passwd|pass|token|api-key|secret|client-secret)[ =](\\"[^"\\\n]*\\"|[^\s'"\\]+)"#,
                1,
                phrase_secret,
            ),
            // `curl -u user:password`, `--user user:password`.
            r(
                "secret_assignment",
                r#"(?:^|\s)(?:-u|--user)[ =]\\?["']?[^\s:'"]+:([^\s'"@\\]+)"#,
                1,
                phrase_secret,
            ),
            // Name/value pairs: Kubernetes `- name: DB_PASSWORD` / `value: …`, JSON
            // `{"name": "API_TOKEN", "value": "…"}`, XML `<add key="DbPassword" value="…"/>`.
            r("secret_assignment", &name_value, 1, |_, v| {
                value_secret("SECRET=", v)
            }),
            // XML attributes: `<add key="DbPassword" value="…"/>`.
            r(
                "secret_assignment",
                &format!(
                    r#"(?i)\b(?:name|key)\s*=\s*["'](?:{SECRET_KEYS})["']\s+value\s*=\s*["']([^"'\n]*)["']"#
                ),
                1,
                |_, v| value_secret("SECRET=", v),
            ),
            // The same pairs with the value first: `{"value": "…", "name": "API_TOKEN"}`,
            // `<add value="…" key="DbPassword"/>`.
            r("secret_assignment", &value_name, 1, |_, v| {
                value_secret("SECRET=", v)
            }),
            // Passwords given to tools on their command line: `docker login -p …`,
            // `sshpass -p …`, PowerShell's `ConvertTo-SecureString '…'`, `.netrc`'s
            // `machine … login … password …`.
            r(
                "secret_assignment",
                r#"(?i)\b(?:(?:docker|podman|helm|oras)\s+(?:registry\s+)?login\b[^\n]*?\s-p|sshpass\s+-p|ConvertTo-SecureString(?:\s+-String)?)\s*['"]?([^\s'"]+)"#,
                1,
                |_, v| !is_placeholder(v),
            ),
            r(
                "secret_assignment",
                r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)",
                1,
                |_, v| !is_placeholder(v),
            ),
            // A crypt(3) or htpasswd hash stands for a password that can be attacked.
            r(
                "password_hash",
                r"\$(?:apr1|2[abxy]|1|5|6|y)\$[./A-Za-z0-9$]{8,}",
                0,
                any,
            ),
            // XML elements: `<password>…</password>`, `<apiKey>…</apiKey>`.
            r(
                "secret_assignment",
                &format!(r"(?i)<(?:{SECRET_KEYS})>([^<]+)</"),
                1,
                |_, v| value_secret("SECRET=", v.trim()),
            ),
            // A PIN: `pin: 4821`, `"pin_code": 482916`.
            r(
                "secret_assignment",
                r#"(?i)\bpin(?:[_-]?code)?\\?["']?\s*[:=]\s*\\?["']?(\d{4,8})\b"#,
                1,
                any,
            ),
            // "the wifi password is hunter22", "PIN: 4821-x".
            r(
                "password_phrase",
                r"(?i)\b(?:password|passcode|passphrase|pass code|pin|pin code)(?:\s+(?:for|of|to)\s+[\w.@-]+)?\s+(?:is|was|are|:)\s+['\x22]?([^\s'\x22]+)",
                1,
                phrase_secret,
            ),
            r(
                "aws_secret_key",
                r"(?:^|[^A-Za-z0-9/+=_-])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=_-]|$)",
                1,
                |_, v| aws_secret_shape(v),
            ),
            r(
                "card_number",
                r"(?:^|[^0-9A-Za-z_.-])((?:\d[ -]?){12,18}\d)(?:[^0-9A-Za-z_]|$)",
                1,
                |_, v| card_number(v),
            ),
            // The optional label in front lets `public_encoding` see a digest's name
            // (`sha384-…`, go.sum's `h1:…`) or a data URL's `base64,`.
            r(
                "high_entropy",
                r"(?:^|[^A-Za-z0-9+/=_-])((?:h1:|base64,|ssh-(?:rsa|ed25519|dss) |ecdsa-sha2-[a-z0-9]+ )?[A-Za-z0-9+/=_-]{24,})",
                1,
                |_, v| !public_encoding(v) && high_entropy(v),
            ),
        ]
    })
}

/// Replaces every secret in `text`. Returns the clean text and the rules that fired (empty
/// when nothing was found, in which case the text comes back unchanged).
/// Passes of one rule over a text (each takes every other one of a run of adjacent
/// assignments that the pass before left).
const MAX_PASSES: usize = 12;

/// One pass of `rule` over `out`: each accepted match's value becomes [`MARK`]. Returns
/// how many were replaced.
fn apply_rule(rule: &Rule, out: &mut String, removed: &mut Vec<(String, &'static str)>) -> usize {
    let mut count = 0;
    let mut result = String::with_capacity(out.len());
    let mut last = 0;
    for caps in rule.re.captures_iter(out) {
        let Some(m) = caps.get(rule.group) else {
            continue;
        };
        let whole = caps.get(0).map_or("", |w| w.as_str());
        if m.as_str().starts_with("[REDACTED") || !(rule.accept)(whole, m.as_str()) {
            continue;
        }
        result.push_str(&out[last..m.start()]);
        result.push_str(MARK);
        removed.push((unquote(m.as_str()).0.trim().to_string(), rule.kind));
        last = m.end();
        count += 1;
    }
    if count > 0 {
        result.push_str(&out[last..]);
        *out = result;
    }
    count
}

pub fn redact(text: &str) -> (String, Vec<Redaction>) {
    let (mut out, mut fired, removed) = redact_collect(text);
    redact_copies(&mut out, &mut fired, removed);
    (out, fired)
}

/// The values one pass removed, with the rule that removed each.
type Removed = Vec<(String, &'static str)>;

/// The rules' pass over one text, returning the values they removed so that copies of them
/// can be removed too: elsewhere in the text ("the password is X; set DB_PASSWORD=X"), or
/// in another field of the same write ([`Together`]), even where no rule would see a
/// secret.
fn redact_collect(text: &str) -> (String, Vec<Redaction>, Removed) {
    let mut out = text.to_string();
    let mut fired: Vec<Redaction> = Vec::new();
    let mut removed: Removed = Vec::new();
    for rule in rules() {
        // A match consumes the character after its value (and the rules' prefixes the one
        // before their key), so of two assignments on adjacent lines one pass sees only the
        // first: the rule runs again over its own output until it finds nothing new.
        for _ in 0..MAX_PASSES {
            let count = apply_rule(rule, &mut out, &mut removed);
            if count == 0 {
                break;
            }
            match fired.iter_mut().find(|r| r.kind == rule.kind) {
                Some(r) => r.count += count,
                None => fired.push(Redaction {
                    kind: rule.kind,
                    count,
                }),
            }
        }
    }
    (out, fired, removed)
}

/// Replaces the remaining copies of values already redacted (six characters or more, so a
/// short common word that happened to be a value does not vanish from prose).
fn redact_copies(out: &mut String, fired: &mut Vec<Redaction>, mut removed: Removed) {
    removed.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
    for (value, kind) in removed {
        if value.chars().count() < 6 || value == MARK || !out.contains(&value) {
            continue;
        }
        let count = out.matches(&value).count();
        *out = out.replace(&value, MARK);
        merge(fired, vec![Redaction { kind, count }]);
    }
}

/// Redacts in place; returns what fired. For the write paths that hold a `String`.
pub fn redact_in_place(text: &mut String) -> Vec<Redaction> {
    let (clean, fired) = redact(text);
    if !fired.is_empty() {
        *text = clean;
    }
    fired
}

/// Redacts every string inside a JSON value (metadata), keys left alone.
pub fn redact_json(v: &mut serde_json::Value) -> Vec<Redaction> {
    let mut fired = Vec::new();
    match v {
        serde_json::Value::String(s) => fired = redact_in_place(s),
        serde_json::Value::Array(items) => {
            for item in items {
                merge(&mut fired, redact_json(item));
            }
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                merge(&mut fired, redact_json_entry(key, item));
            }
        }
        _ => {}
    }
    fired
}

/// One object entry: a string value is judged with its key, as the JSON assignment
/// `"password": "…"` it is (a value alone rarely looks like a secret), then on its own.
fn redact_json_entry(key: &str, item: &mut serde_json::Value) -> Vec<Redaction> {
    if let serde_json::Value::Number(n) = item {
        // `{"password": 87654321}`: a number under a password key is a secret too.
        let (_, fired) = redact(&format!("{}: {n}", serde_json::json!(key)));
        if !fired.is_empty() {
            *item = serde_json::json!(MARK);
        }
        return fired;
    }
    let serde_json::Value::String(value) = item else {
        // `{"password": {"prod": "…"}}`: under a secret key, every value below is judged
        // with that key.
        if secret_key(key) {
            return redact_json_under(key, item);
        }
        return redact_json(item);
    };
    // The text on its own first: a value holding a whole config line, a YAML block or
    // XML keeps its own quotes and line breaks there (the probe below escapes them).
    let mut fired = redact_in_place(value);
    let probe = format!("{}: {}", serde_json::json!(key), serde_json::json!(value));
    let (clean, more) = redact(&probe);
    if more.is_empty() {
        return fired;
    }
    let prefix = format!("{}: ", serde_json::json!(key));
    *value = clean
        .strip_prefix(&prefix)
        .and_then(|v| serde_json::from_str::<String>(v).ok())
        .unwrap_or_else(|| MARK.to_string());
    merge(&mut fired, more);
    fired
}

/// Redacts the fields of one write together: a value found secret in one field (the
/// title, the metadata) is removed from the others too (the content), where it may stand
/// with nothing around it that a rule would know.
#[derive(Default)]
pub struct Together {
    fired: Vec<Redaction>,
    removed: Removed,
}

impl Together {
    pub fn new() -> Self {
        Self::default()
    }

    /// The rules' pass over one field.
    pub fn text(&mut self, text: &mut String) {
        let (clean, fired, removed) = redact_collect(text);
        if !fired.is_empty() {
            *text = clean;
            merge(&mut self.fired, fired);
        }
        self.removed.extend(removed);
    }

    /// The rules' pass over the strings of a JSON value, each judged with its key.
    pub fn json(&mut self, v: &mut serde_json::Value) {
        let before = v.clone();
        merge(&mut self.fired, redact_json(v));
        collect_json_changes(&before, v, &mut self.removed);
    }

    /// Removes from every field the copies of what any field gave up; returns what fired.
    pub fn finish<'a>(
        mut self,
        texts: impl IntoIterator<Item = &'a mut String>,
        json: impl IntoIterator<Item = &'a mut serde_json::Value>,
    ) -> Vec<Redaction> {
        for t in texts {
            redact_copies(t, &mut self.fired, self.removed.clone());
        }
        for v in json {
            copies_in_json(v, &mut self.fired, &self.removed);
        }
        self.fired
    }
}

/// The strings a JSON redaction replaced, as removed values (the whole string, since the
/// entry's probe does not report its parts).
fn collect_json_changes(before: &serde_json::Value, after: &serde_json::Value, out: &mut Removed) {
    use serde_json::Value::{Array, Object, String as S};
    match (before, after) {
        (S(a), S(b)) if a != b => {
            let (_, _, removed) = redact_collect(a);
            if removed.is_empty() {
                out.push((a.trim().to_string(), "secret_assignment"));
            }
            out.extend(removed);
        }
        (Array(a), Array(b)) => a
            .iter()
            .zip(b)
            .for_each(|(x, y)| collect_json_changes(x, y, out)),
        (Object(a), Object(b)) => a.iter().for_each(|(k, x)| {
            if let Some(y) = b.get(k) {
                collect_json_changes(x, y, out);
            }
        }),
        (x, y) if x != y => out.push((x.to_string(), "secret_assignment")),
        _ => {}
    }
}

fn copies_in_json(v: &mut serde_json::Value, fired: &mut Vec<Redaction>, removed: &Removed) {
    match v {
        serde_json::Value::String(s) => redact_copies(s, fired, removed.clone()),
        serde_json::Value::Array(items) => items
            .iter_mut()
            .for_each(|i| copies_in_json(i, fired, removed)),
        serde_json::Value::Object(map) => map
            .values_mut()
            .for_each(|i| copies_in_json(i, fired, removed)),
        _ => {}
    }
}

/// Whether an object key names a secret (`password`, `db_token`): its values are judged
/// as that assignment's values.
fn secret_key(key: &str) -> bool {
    let probe = format!("{}: \"Zq8x2LmP0vRk\"", serde_json::json!(key));
    !redact(&probe).1.is_empty()
}

/// Every string and number below a secret key, judged with that key.
fn redact_json_under(key: &str, item: &mut serde_json::Value) -> Vec<Redaction> {
    let mut fired = Vec::new();
    match item {
        serde_json::Value::Array(items) => {
            for i in items {
                merge(&mut fired, redact_json_under(key, i));
            }
        }
        serde_json::Value::Object(map) => {
            for (_, i) in map.iter_mut() {
                merge(&mut fired, redact_json_under(key, i));
            }
        }
        leaf => merge(&mut fired, redact_json_entry(key, leaf)),
    }
    fired
}

/// Redacts an optional text in place.
pub fn redact_opt(text: &mut Option<String>) -> Vec<Redaction> {
    text.as_mut().map(redact_in_place).unwrap_or_default()
}

/// Redacts the name-like fields of a write (topic key, session id, source or client name,
/// tags, room) with the same rules as its text, before any of them is normalised:
/// lower-casing or slugging first would hide a secret's shape from the rules.
/// See [`stored_name`] for the form a redacted name takes.
pub fn redact_names<'a>(names: impl IntoIterator<Item = &'a mut String>) -> Vec<Redaction> {
    let mut fired = Vec::new();
    for name in names {
        let (clean, more) = redact_name(name);
        if !more.is_empty() {
            *name = clean;
            merge(&mut fired, more);
        }
    }
    fired
}

/// The form a name is stored under (see [`redact_names`]), for a lookup by a name the
/// caller gives as it gave it to the write. A redacted name ends in `#` and 8 hex digits
/// of a hash of the name as given, so two session ids (or rooms) that differ only in their
/// secret part stay two sessions (the hash is 32 bits of FNV-1a: it tells names apart and
/// gives nothing back of a secret that is not already guessed).
pub fn stored_name(name: &str) -> std::borrow::Cow<'_, str> {
    let (clean, fired) = redact_name(name);
    if fired.is_empty() {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(clean)
    }
}

fn redact_name(name: &str) -> (String, Vec<Redaction>) {
    let (clean, fired) = redact(name);
    if fired.is_empty() {
        return (clean, fired);
    }
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (format!("{clean}#{:08x}", hash as u32), fired)
}

/// Adds `more` to `into`, summing counts of the same rule.
pub fn merge(into: &mut Vec<Redaction>, more: Vec<Redaction>) {
    for r in more {
        match into.iter_mut().find(|x| x.kind == r.kind) {
            Some(x) => x.count += r.count,
            None => into.push(r),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_line_of_a_block_of_assignments_is_redacted() {
        for text in [
            "A_TOKEN=tokA1111aa\nB_TOKEN=tokB2222bb\nC_TOKEN=tokC3333cc\nD_TOKEN=tokD4444dd\n",
            "password: pw1Alpha99\ntoken: tok2Bravo99\nsecret: sec3Charlie99\n",
            "A_TOKEN=tokA1111aa B_TOKEN=tokB2222bb C_TOKEN=tokC3333cc",
        ] {
            let (out, fired) = redact(text);
            for needle in ["1111", "2222", "3333", "4444", "Alpha", "Bravo", "Charlie"] {
                assert!(!out.contains(needle), "{needle} kept in {out:?}");
            }
            assert!(!fired.is_empty());
        }
    }
    use super::*;

    #[test]
    fn names_are_redacted_apart_and_found_as_given() {
        let a = "Kq8vN2xR7pL4mZ9tW3yB6cF1hJ5dG0sA";
        let b = "Zq8vN2xR7pL4mZ9tW3yB6cF1hJ5dG0sB";
        let (sa, sb) = (stored_name(a), stored_name(b));
        assert!(sa.starts_with("[REDACTED]#") && !sa.contains(a), "{sa}");
        assert_ne!(sa, sb, "two secret session ids stay two sessions");
        assert_eq!(stored_name(a), sa, "the same name is stored the same way");
        let mut names = [
            a.to_string(),
            "3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b".to_string(),
        ];
        let fired = redact_names(names.iter_mut());
        assert_eq!((names[0].as_str(), fired.len()), (&*sa, 1));
        assert_eq!(
            names[1], "3f2a9c1e-8b7d-4e6f-9a0b-1c2d3e4f5a6b",
            "a UUID is no secret"
        );
    }

    #[test]
    fn metadata_values_are_judged_with_their_keys() {
        let mut v = serde_json::json!({
            "password": "MetaPw0rd!xy",
            "api_key": "MetaKey12345abc",
            "nested": {"secret": "NestSecr3t99", "note": "plain words stay"},
            "tokens": 12,
        });
        let fired = redact_json(&mut v);
        assert!(!fired.is_empty());
        let text = v.to_string();
        for s in ["MetaPw0rd!xy", "MetaKey12345abc", "NestSecr3t99"] {
            assert!(!text.contains(s), "{s} kept in {text}");
        }
        assert_eq!(v["nested"]["note"], "plain words stay");
        assert_eq!(v["tokens"], 12);
    }

    #[test]
    fn metadata_strings_are_redacted_in_every_form() {
        let mut v = serde_json::json!({
            "a": "export GITLAB_CI_TOKEN=plainvalueabcxyz",
            "b": "password: \"quotedY4mlPw!\"",
            "c": "password = \"t0mlSecretPw\"",
            "d": "{\"api_key\": \"nestedKeyV4lue8821\"}",
            "e": "REDIS_AUTH=\\\"redisAuthV4l9\\\"",
            "f": "- name: POSTGRES_PASSWORD\n  value: k8sPgPassw0rd",
            "g": "<add key=\"DbPassword\" value=\"xmlAddPw42!\"/>",
            "password": {"nested": "NestedObjPw2"},
        });
        redact_json(&mut v);
        let text = v.to_string();
        for s in [
            "plainvalueabcxyz",
            "quotedY4mlPw!",
            "t0mlSecretPw",
            "nestedKeyV4lue8821",
            "redisAuthV4l9",
            "k8sPgPassw0rd",
            "xmlAddPw42!",
            "NestedObjPw2",
        ] {
            assert!(!text.contains(s), "{s} kept in {text}");
        }
    }

    #[test]
    fn a_redacted_value_is_removed_wherever_it_repeats() {
        let (out, fired) =
            redact("The deploy password SamePw#771x; set DB_PASSWORD=SamePw#771x on the box");
        assert!(!out.contains("SamePw#771x"), "{out}");
        assert!(!fired.is_empty());
        let (out, _) = redact("rotate SessSumPw!91 via DB_PASSWORD=SessSumPw!91");
        assert!(!out.contains("SessSumPw!91"), "{out}");
    }

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
                "secret_assignment",
                "password = [REDACTED] in the file",
            ),
            (
                "API_KEY=abc123def456",
                "secret_assignment",
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
    fn a_secret_given_up_by_one_field_goes_from_the_others() {
        let mut title = "DB_PASSWORD=Xf83kLq0zz".to_string();
        let mut content = "Rotated; the new one is Xf83kLq0zz until Friday".to_string();
        let mut meta = serde_json::json!({"password": 87654321, "note": "pin 87654321 too"});
        let mut t = Together::new();
        t.text(&mut title);
        t.text(&mut content);
        t.json(&mut meta);
        let fired = t.finish([&mut title, &mut content], [&mut meta]);
        assert!(!fired.is_empty());
        for (field, text) in [("title", &title), ("content", &content)] {
            assert!(!text.contains("Xf83kLq0zz"), "{field}: {text}");
            assert!(text.contains(MARK), "{field}: {text}");
        }
        assert_eq!(meta["password"], MARK);
        assert!(!meta.to_string().contains("87654321"), "{meta}");
        assert!(
            content.ends_with("until Friday"),
            "the rest stays: {content}"
        );
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
