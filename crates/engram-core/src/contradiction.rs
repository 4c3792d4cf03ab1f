//! Does a new memory contradict an old one? Rules, no model.
//!
//! Seed A compares whole-word polarity lists, so "uses" is not "use" and "switched from X
//! to Y" is not seen at all. Here words are stemmed, negation has a scope, and the phrases
//! people use when something *changed* are recognised in English, Japanese and Chinese:
//!
//! * **change of state** in the new text ("switched from X to Y", "no longer", "instead of
//!   X", "replaced X with Y", "stopped using X", 〜をやめた, 〜に切り替えた, 不再, 改用, 换成
//!   …). When the phrase names what was left (X), the old memory must mention X.
//! * **reversion**: the old text left X ("moved away from X") and the new one uses X again.
//! * **polarity flip**: one text likes or uses what the other avoids or negates ("I like
//!   tabs" / "I don't like tabs"; 喜欢 / 不喜欢; 好き / 好きではない).
//! * **preference flip**: the same verb of choice with different objects and nothing else
//!   against it ("we use PostgreSQL for the database" / "we use SQLite for the database").
//!
//! The caller decides *whether* two memories are about the same thing (similarity bands);
//! this module only says whether, given that, the new one replaces the old.

use serde::Serialize;

/// Why the new text replaces the old.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictKind {
    ChangeOfState,
    Reversion,
    PolarityFlip,
    PreferenceFlip,
    /// The same statement with another number ("retries: 5" → "retries: 3").
    ValueChange,
    /// The same subject's same slot read with another value ([`crate::subject`]):
    /// "My editor is Vim" → "My editor is Helix".
    SlotChange,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    pub kind: ConflictKind,
    /// The phrase or words that decided it, for `explain` and the write result.
    pub cue: String,
    /// Whether the new text named what it replaced and the old text mentions it: strong
    /// evidence even when the two share few other words.
    #[serde(skip)]
    pub named: bool,
}

/// Whether `new` contradicts `old`. Both are assumed to be about the same subject.
pub fn detect(old: &str, new: &str) -> Option<Conflict> {
    let o = Analysis::of(old);
    let n = Analysis::of(new);
    if let Some(c) = change_of_state(&o, &n) {
        return Some(c);
    }
    if let Some(c) = reversion(&o, &n) {
        return Some(c);
    }
    // Another version, hash, ticket or user is another thing, not a new value for the same
    // one: only an explicit change cue (above, or an update verb below) may replace it.
    let other_thing = crate::identifiers::differ(old, new).is_some();
    if !other_thing && let Some(c) = polarity_flip(&o, &n) {
        return Some(c);
    }
    if let Some(c) = value_change(&o, &n).filter(|_| !other_thing || reports_new_value(&n)) {
        return Some(c);
    }
    if other_thing {
        return None;
    }
    preference_flip(&o, &n)
}

/// Stricter than [`reports_update`], for texts about another identifier: the update verb
/// must point at the new value ("upgraded to", "moved from", "now"), so "raised conversion
/// by 2 %" is a result, not a change of what the old text said.
fn reports_new_value(n: &Analysis) -> bool {
    let words: Vec<&str> = n
        .raw
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let pointed = words.windows(2).any(|w| {
        UPDATE_VERBS.contains(&stem(w[0]).as_str()) && matches!(w[1], "to" | "from" | "back")
    });
    pointed
        || words.contains(&"now")
        || (n.raw.chars().any(crate::text::is_cjk) && reports_update(n))
}

/// Whether the new text says a value was changed ("raised to", "now", 改成, に変更).
fn reports_update(n: &Analysis) -> bool {
    n.raw
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| UPDATE_VERBS.contains(&stem(w).as_str()) || w == "now")
        || [
            "改成",
            "改为",
            "调到",
            "调整",
            "变成",
            "に変更",
            "に引き",
            "になった",
            "推迟",
            "延期",
            "延后",
            "放宽",
            "收紧",
            "升级到",
            "降到",
            "提高到",
            "に延期",
            "へ延期",
            "に延長",
            "に短縮",
            "に上げ",
            "に下げ",
        ]
        .iter()
        .any(|c| n.raw.contains(c))
}

/// Verbs that report a new value ("raised to", "upgraded to"): not part of the statement.
const UPDATE_VERBS: &[&str] = &[
    "rais", "upgrad", "downgrad", "increas", "decreas", "reduc", "lower", "bump", "chang", "updat",
    "adjust", "extend", "shorten", "set", "mov", "run", "now", "been",
];

/// Whether both texts carry numbers and they differ (another sprint, another version):
/// such texts are distinct instances, never repeats of each other. Differing identifiers
/// ("number 0" / "number 1", "EXP-17" / "EXP-19") count too.
pub fn numbers_differ(old: &str, new: &str) -> bool {
    // "2am" and "02:00" name the same hour: leading zeros and zero fields do not count.
    let digits = |s: &str| -> std::collections::BTreeSet<String> {
        s.split(|c: char| !c.is_ascii_digit())
            .map(|t| t.trim_start_matches('0'))
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (a, b) = (digits(old), digits(new));
    (!a.is_empty() && !b.is_empty() && a != b) || crate::identifiers::differ(old, new).is_some()
}

const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "twenty", "thirty", "fifty", "hundred", "thousand",
];

fn is_number(w: &str) -> bool {
    // `w` is a stem ("five" is stored as "fiv"); "10mb", "30s" and "2am" count as numbers.
    w.starts_with(|c: char| c.is_ascii_digit()) || NUMBER_WORDS.iter().any(|n| stem(n) == w)
}

/// Every other word the same, a number different: the value was changed.
fn value_change(o: &Analysis, n: &Analysis) -> Option<Conflict> {
    let nums = |a: &Analysis| -> std::collections::BTreeSet<String> {
        let mut out: std::collections::BTreeSet<String> =
            a.content.iter().filter(|w| is_number(w)).cloned().collect();
        // Digits inside CJK text are not split into words.
        let mut run = String::new();
        for c in a.raw.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_digit() {
                run.push(c);
            } else if !run.is_empty() {
                out.insert(std::mem::take(&mut run));
            }
        }
        out
    };
    let words = |a: &Analysis| -> std::collections::BTreeSet<String> {
        a.content
            .iter()
            .filter(|w| !is_number(w) && !UPDATE_VERBS.contains(&w.as_str()))
            .cloned()
            .collect()
    };
    let (no, nn) = (nums(o), nums(n));
    if no.is_empty() || nn.is_empty() || no == nn || nn.is_subset(&no) || no.is_subset(&nn) {
        return None;
    }
    let (wo, wn) = (words(o), words(n));
    // "was lowered to", "now expire after": a new value is being reported, so a shared
    // subject (two words) is enough.
    let reports_update = reports_update(n);
    let same_words = if wo.is_empty() && wn.is_empty() {
        // Without a cue, CJK text must be the same but for its numbers: 上期 and 下期 are
        // two budgets, not one changed.
        let letters = |s: &str| -> String {
            s.chars()
                .filter(|c| crate::text::is_cjk(*c) || c.is_alphabetic())
                .collect()
        };
        cjk_shared(&o.raw, &n.raw) >= 2 && (reports_update || letters(&o.raw) == letters(&n.raw))
    } else {
        let inter = wo.intersection(&wn).count();
        let smaller = wo.len().min(wn.len()).max(1);
        (inter > 0 && inter as f64 / wo.union(&wn).count() as f64 >= 0.75)
            || (reports_update && inter >= 2 && inter as f64 / smaller as f64 >= 0.5)
    };
    same_words.then(|| Conflict {
        kind: ConflictKind::ValueChange,
        named: false,
        cue: format!(
            "{} → {}",
            no.difference(&nn).cloned().collect::<Vec<_>>().join(" "),
            nn.difference(&no).cloned().collect::<Vec<_>>().join(" ")
        ),
    })
}

/// A text's words (stemmed), its raw lower-cased form for CJK phrases, and what it says.
struct Analysis {
    raw: String,
    /// Content stems (no stopwords, no cue words), for "does it mention X".
    content: Vec<String>,
    change: Option<Change>,
    polarity: Option<i8>,
    /// English only: each liking, use, rejection or negation with what it is about.
    stances: Vec<Stance>,
    choice: Option<Choice>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word { raw: String, stem: String },
    Break,
}

/// A change-of-state phrase and, when it names it, what was left behind.
#[derive(Debug, Clone)]
struct Change {
    cue: String,
    /// Content stems (or a CJK phrase) of what was left.
    left: Vec<String>,
}

/// A verb of choice ("use", "prefer") and its object.
#[derive(Debug, Clone)]
struct Choice {
    class: u8,
    verb: String,
    object: Vec<String>,
    /// What it was chosen over ("tabs over spaces").
    rejected: Vec<String>,
    /// Content stems outside the verb and object.
    context: Vec<String>,
}

impl Analysis {
    fn of(text: &str) -> Analysis {
        // Code spans are names, not language: `make migrate` is no migration.
        let raw = join_thousands(&mask_code(&text.to_lowercase().replace(['’', '‘'], "'")));
        let toks = tokens(&raw);
        let content: Vec<String> = toks
            .iter()
            .filter_map(|t| match t {
                Tok::Word { raw, stem } if !is_function_word(raw) && !is_cue_stem(stem) => {
                    Some(stem.clone())
                }
                _ => None,
            })
            .collect();
        let change = english_change(&toks).or_else(|| cjk_change(&raw));
        let stances = english_stances(&toks);
        let polarity = english_polarity(&stances).or_else(|| cjk_polarity(&raw));
        let choice = english_choice(&toks);
        Analysis {
            raw,
            content,
            change,
            polarity,
            stances,
            choice,
        }
    }

    fn mentions(&self, left: &[String]) -> bool {
        left.iter().any(|w| {
            if w.chars().any(crate::text::is_cjk) {
                self.raw.contains(w.as_str())
            } else {
                self.content.iter().any(|c| c == w) || self.raw.contains(w.as_str()) && w.len() > 3
            }
        })
    }

    fn shares_content_with(&self, other: &Analysis) -> bool {
        self.content.iter().any(|w| other.content.contains(w)) || cjk_overlap(&self.raw, &other.raw)
    }
}

fn change_of_state(o: &Analysis, n: &Analysis) -> Option<Conflict> {
    let ch = n.change.as_ref()?;
    // The old memory saying the same change is agreement, not contradiction.
    if let Some(och) = &o.change
        && (ch.left.is_empty() || och.left.iter().any(|w| ch.left.contains(w)))
    {
        return None;
    }
    // "tabs, not spaces" after "tabs over spaces": the old text had already left X.
    if let Some(co) = &o.choice
        && !ch.left.is_empty()
        && ch.left.iter().all(|w| co.rejected.contains(w))
    {
        return None;
    }
    let related = if ch.left.is_empty() {
        o.shares_content_with(n)
    } else {
        o.mentions(&ch.left)
    };
    related.then(|| Conflict {
        kind: ConflictKind::ChangeOfState,
        cue: ch.cue.clone(),
        named: !ch.left.is_empty(),
    })
}

fn reversion(o: &Analysis, n: &Analysis) -> Option<Conflict> {
    let och = o.change.as_ref()?;
    if och.left.is_empty() || n.change.is_some() || n.polarity == Some(-1) {
        return None;
    }
    // Naming X is not taking it up again ("retry when SQLite reports busy" after "not the
    // SQLite app DB"): the new text must use, like or choose X, or say it returns to it.
    let takes_up = n
        .stances
        .iter()
        .any(|s| s.sign > 0 && s.about.iter().any(|w| och.left.contains(w)));
    let returns = ["again", "back to", "back on", "revert", "return to", "returned to"]
        .iter()
        .any(|c| n.raw.contains(c))
        // Stances are read in English only: Japanese and Chinese keep the mention rule.
        || n.raw.chars().any(crate::text::is_cjk);
    (n.mentions(&och.left) && (takes_up || returns)).then(|| Conflict {
        kind: ConflictKind::Reversion,
        cue: format!("back to {}", och.left.join(" ")),
        named: true,
    })
}

fn polarity_flip(o: &Analysis, n: &Analysis) -> Option<Conflict> {
    let (po, pn) = (o.polarity?, n.polarity?);
    if po == pn || !o.shares_content_with(n) {
        return None;
    }
    // In English the two attitudes must be about the same thing: one object word in
    // common, or the same verb ("don't use an ORM" / "uses Diesel"). "Never commit .env"
    // and "keep secrets in 1Password" are both true at once.
    if !o.stances.is_empty() && !n.stances.is_empty() {
        let opposed = o.stances.iter().any(|a| {
            n.stances.iter().any(|b| {
                a.sign != b.sign
                    && (a.verb == b.verb || a.about.iter().any(|w| b.about.contains(w)))
            })
        });
        if !opposed {
            return None;
        }
    }
    Some(Conflict {
        kind: ConflictKind::PolarityFlip,
        cue: if pn < 0 { "negated" } else { "affirmed" }.to_string(),
        named: false,
    })
}

fn preference_flip(o: &Analysis, n: &Analysis) -> Option<Conflict> {
    let (co, cn) = (o.choice.as_ref()?, n.choice.as_ref()?);
    if co.class != cn.class || co.object.is_empty() || cn.object.is_empty() {
        return None;
    }
    if o.polarity == Some(-1) || n.polarity == Some(-1) {
        return None;
    }
    // "Redis is also used as the Celery broker": a second use beside the first.
    if n.raw
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| matches!(w, "also" | "too" | "additionally"))
        || n.raw.contains("as well")
    {
        return None;
    }
    let cue = || {
        format!(
            "{} {} → {} {}",
            co.verb,
            co.object.join(" "),
            cn.verb,
            cn.object.join(" ")
        )
    };
    // "tabs over spaces" then "spaces over tabs".
    if cn.rejected.iter().any(|w| co.object.contains(w)) {
        return Some(Conflict {
            kind: ConflictKind::PreferenceFlip,
            cue: cue(),
            named: false,
        });
    }
    // Different objects, neither text naming the other's object anywhere.
    if co.object.iter().any(|w| n.content.contains(w))
        || cn.object.iter().any(|w| o.content.contains(w))
    {
        return None;
    }
    let same_frame = (co.context.is_empty() && cn.context.is_empty())
        || co.context.iter().any(|w| cn.context.contains(w));
    same_frame.then(|| Conflict {
        kind: ConflictKind::PreferenceFlip,
        cue: cue(),
        named: false,
    })
}

/// "1,250" → "1250": a thousands separator is part of the number, not a clause break
/// (else `1,250 → 1,520` reads as `250 → 520`). A comma joins only between a digit and
/// exactly three digits that end the group ("1, 2 and 3" stays a list).
fn join_thousands(s: &str) -> String {
    let cs: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in cs.iter().enumerate() {
        let grouped = c == ','
            && i > 0
            && cs[i - 1].is_ascii_digit()
            && cs.len() > i + 3
            && cs[i + 1..=i + 3].iter().all(char::is_ascii_digit)
            && cs.get(i + 4).is_none_or(|n| !n.is_ascii_digit());
        if !grouped {
            out.push(c);
        }
    }
    out
}

/// Replaces each `code span` with one neutral word.
fn mask_code(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_code = false;
    for c in s.chars() {
        if c == '`' {
            if !in_code {
                out.push_str(" codespan ");
            }
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// English

/// Words and clause breaks. Apostrophes stay inside words ("don't").
fn tokens(lower: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut w = String::new();
    let flush = |w: &mut String, out: &mut Vec<Tok>| {
        if !w.is_empty() {
            // A possessive names the thing itself: "Bun's test runner" is about Bun.
            let raw = w
                .strip_suffix("'s")
                .unwrap_or(w)
                .trim_matches('\'')
                .to_string();
            if !raw.is_empty() {
                out.push(Tok::Word {
                    stem: stem(&raw),
                    raw,
                });
            }
            w.clear();
        }
    };
    for c in lower.chars() {
        if c.is_alphanumeric() && !crate::text::is_cjk(c) || c == '\'' {
            w.push(c);
        } else {
            flush(&mut w, &mut out);
            let breaks = matches!(
                c,
                '.' | ',' | ';' | ':' | '!' | '?' | '(' | ')' | '\n' | '—'
            ) || crate::text::is_cjk(c);
            if breaks && out.last() != Some(&Tok::Break) {
                out.push(Tok::Break);
            }
        }
    }
    flush(&mut w, &mut out);
    out
}

/// A light English stemmer: enough that use/uses/used/using, prefer/preferred and
/// stop/stopped meet. Not Porter: it only needs to make inflections of one word agree.
pub fn stem(word: &str) -> String {
    let w = word.trim_matches('\'');
    if w.len() <= 2 || !w.is_ascii() {
        return w.to_string();
    }
    if w.len() == 3 {
        // "use" must meet "used"; "see" stays; "PRs" meets "PR".
        return match (w.strip_suffix('e'), w.strip_suffix('s')) {
            (Some(b), _) if !b.ends_with('e') => b.to_string(),
            (_, Some(b)) if !b.ends_with(['s', 'u', 'i']) => b.to_string(),
            _ => w.to_string(),
        };
    }
    let mut s = w.to_string();
    if let Some(b) = s.strip_suffix("ies") {
        s = format!("{b}y");
    } else if let Some(b) = s.strip_suffix("ing").filter(|b| b.len() >= 2) {
        s = undouble(b);
    } else if let Some(b) = s.strip_suffix("ed").filter(|b| b.len() >= 2) {
        s = undouble(b);
    } else if s.ends_with('s') && !s.ends_with("ss") && !s.ends_with("us") && !s.ends_with("is") {
        s.pop();
    }
    if s.len() >= 3 && s.ends_with('e') && !s.ends_with("ee") {
        s.pop();
    }
    s
}

fn undouble(b: &str) -> String {
    let bytes = b.as_bytes();
    let n = bytes.len();
    if n >= 3 && bytes[n - 1] == bytes[n - 2] && !matches!(bytes[n - 1], b'l' | b's' | b'z') {
        b[..n - 1].to_string()
    } else {
        b.to_string()
    }
}

fn is_function_word(w: &str) -> bool {
    crate::text::is_stopword(w)
        || matches!(
            w,
            "we" | "i"
                | "now"
                | "also"
                | "our"
                | "my"
                | "team"
                | "project"
                | "still"
                | "really"
                | "anymore"
                | "longer"
                | "instead"
                | "rather"
                | "don't"
                | "doesn't"
                | "didn't"
                | "won't"
                | "can't"
                | "cannot"
                | "isn't"
                | "aren't"
                | "wasn't"
                | "weren't"
                | "shouldn't"
                | "never"
                | "away"
                | "back"
                | "over"
        )
}

/// Stems that express the change or the attitude, not the subject.
fn is_cue_stem(s: &str) -> bool {
    POSITIVE.contains(&s)
        || NEGATIVE.contains(&s)
        || matches!(
            s,
            "switch"
                | "mov"
                | "migrat"
                | "chang"
                | "replac"
                | "went"
                | "go"
                | "transition"
                | "convert"
                | "port"
                | "quit"
                | "gave"
                | "giv"
                | "ditch"
        )
}

const POSITIVE: &[&str] = &[
    "lov",
    "lik",
    "prefer",
    "us",
    "adopt",
    "enjoy",
    "want",
    "choos",
    "chos",
    "chosen",
    "recommend",
    "support",
    "favor",
    "favour",
    "embrac",
    "pick",
    "keep",
    "standardiz",
    "standardis",
    "rely",
];
const NEGATIVE: &[&str] = &[
    "hat",
    "dislik",
    "avoid",
    "abandon",
    "reject",
    "stop",
    "drop",
    "refus",
    "oppos",
    "remov",
    "never",
    "ditch",
    "deprecat",
    "ban",
    "forbid",
    "disallow",
    "discourag",
    "retir",
];
const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "never",
    "don't",
    "dont",
    "doesn't",
    "doesnt",
    "didn't",
    "didnt",
    "won't",
    "can't",
    "cannot",
    "isn't",
    "aren't",
    "wasn't",
    "weren't",
    "shouldn't",
    "mustn't",
    "without",
];
/// Words that end an object phrase.
const OBJECT_STOPS: &[&str] = &[
    "for", "in", "on", "with", "as", "to", "over", "at", "because", "since", "when", "than",
    "instead", "rather", "by", "from", "so", "but", "which", "that", "if", "now", "anymore",
];

fn words(toks: &[Tok]) -> Vec<(usize, &str, &str)> {
    toks.iter()
        .enumerate()
        .filter_map(|(i, t)| match t {
            Tok::Word { raw, stem } => Some((i, raw.as_str(), stem.as_str())),
            Tok::Break => None,
        })
        .collect()
}

/// Content stems from token `from` on, up to a break or an object stop, at most `max`.
fn phrase_after(toks: &[Tok], from: usize, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    for t in toks.iter().skip(from) {
        match t {
            Tok::Break => break,
            Tok::Word { raw, stem } => {
                if OBJECT_STOPS.contains(&raw.as_str()) && !out.is_empty() {
                    break;
                }
                if !is_function_word(raw) && !POSITIVE.contains(&stem.as_str()) {
                    out.push(stem.clone());
                }
                if out.len() >= max {
                    break;
                }
            }
        }
    }
    out
}

/// Content stems before token `to`, back to a break, at most `max`, in order.
fn phrase_before(toks: &[Tok], to: usize, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    for t in toks[..to].iter().rev() {
        match t {
            Tok::Break => break,
            Tok::Word { raw, stem } => {
                if !is_function_word(raw) && !is_cue_stem(stem) {
                    out.push(stem.clone());
                }
                if out.len() >= max {
                    break;
                }
            }
        }
    }
    out.reverse();
    out
}

fn english_change(toks: &[Tok]) -> Option<Change> {
    let ws = words(toks);
    let stem_at = |k: usize| ws.get(k).map(|w| w.2).unwrap_or("");
    let raw_at = |k: usize| ws.get(k).map(|w| w.1).unwrap_or("");
    for k in 0..ws.len() {
        let (i, raw, st) = ws[k];
        // switched/moved/migrated/changed/went (over|back) from X to Y
        if matches!(
            st,
            "switch"
                | "mov"
                | "migrat"
                | "chang"
                | "went"
                | "go"
                | "transition"
                | "convert"
                | "port"
        ) {
            let mut j = k + 1;
            while matches!(
                raw_at(j),
                "over" | "back" | "away" | "entirely" | "completely"
            ) {
                j += 1;
            }
            // "migrated CI from X", "moved the web app off X": the object may come first.
            if !matches!(raw_at(j), "from" | "off" | "to")
                && let Some(d) = (1..=4).find(|d| {
                    matches!(raw_at(j + d), "from" | "off")
                        && ws[j..=j + d].windows(2).all(|w| w[1].0 == w[0].0 + 1)
                })
            {
                j += d;
            }
            if raw_at(j) == "from" || (raw_at(j) == "off" && st != "go") {
                return Some(Change {
                    cue: format!("{raw} {}", raw_at(j)),
                    left: phrase_after(toks, ws[j].0 + 1, 3),
                });
            }
            // "switched to Y": a change with no named past.
            if raw_at(j) == "to" && st != "go" && st != "went" {
                return Some(Change {
                    cue: format!("{raw} to"),
                    left: Vec::new(),
                });
            }
        }
        // replaced X with/by Y; X was replaced by Y
        if st == "replac" {
            let before = matches!(
                raw_at(k.wrapping_sub(1)),
                "was" | "were" | "been" | "is" | "got" | "be"
            );
            let left = if before {
                phrase_before(toks, ws[k.wrapping_sub(1)].0, 3)
            } else {
                phrase_after(toks, i + 1, 3)
            };
            return Some(Change {
                cue: raw.to_string(),
                left,
            });
        }
        // has left X / is leaving X
        if matches!(raw, "left" | "leaving" | "quitting")
            && k > 0
            && matches!(raw_at(k - 1), "has" | "have" | "had" | "is" | "are" | "'ve")
        {
            return Some(Change {
                cue: raw.to_string(),
                left: phrase_after(toks, i + 1, 3),
            });
        }
        // X has been decommissioned / was retired / is deprecated
        if matches!(
            st,
            "decommission"
                | "retir"
                | "deprecat"
                | "sunset"
                | "remov"
                | "abandon"
                | "drop"
                | "delet"
                | "disabl"
                | "shut"
        ) && k > 0
            && matches!(
                raw_at(k - 1),
                "been" | "was" | "were" | "is" | "are" | "got"
            )
        {
            return Some(Change {
                cue: raw.to_string(),
                left: phrase_before(toks, ws[k - 1].0, 3),
            });
        }
        // "…, not X": X is what it no longer is.
        if raw == "not"
            && i > 0
            && toks[i - 1] == Tok::Break
            && !phrase_after(toks, i + 1, 3).is_empty()
        {
            return Some(Change {
                cue: ", not".into(),
                left: phrase_after(toks, i + 1, 3),
            });
        }
        // instead of X / rather than X
        if (raw == "instead" && raw_at(k + 1) == "of")
            || (raw == "rather" && raw_at(k + 1) == "than")
        {
            return Some(Change {
                cue: format!("{raw} {}", raw_at(k + 1)),
                left: phrase_after(toks, ws[k + 1].0 + 1, 3),
            });
        }
        // moved/stepped/turned away from X
        if raw == "away" && raw_at(k + 1) == "from" {
            return Some(Change {
                cue: "away from".into(),
                left: phrase_after(toks, ws[k + 1].0 + 1, 3),
            });
        }
        // no longer (use) X / X is no longer used
        if raw == "no" && raw_at(k + 1) == "longer" {
            let mut left = phrase_after(toks, ws[k + 1].0 + 1, 3);
            if left.is_empty() {
                left = phrase_before(toks, i, 3);
            }
            return Some(Change {
                cue: "no longer".into(),
                left,
            });
        }
        // stopped using X / quit X / gave up (on) X / ditched X / dropped X / deprecated X
        if matches!(
            st,
            "stop" | "quit" | "ditch" | "drop" | "abandon" | "deprecat" | "retir" | "decommission"
        ) || (matches!(st, "gave" | "giv") && raw_at(k + 1) == "up")
        {
            // "never stop", "don't stop": not a change.
            if k > 0 && NEGATIONS.contains(&raw_at(k - 1)) {
                continue;
            }
            let mut from = i + 1;
            if matches!(stem_at(k + 1), "us" | "up" | "doing") {
                from = ws[k + 1].0 + 1;
                if raw_at(k + 2) == "on" {
                    from = ws[k + 2].0 + 1;
                }
            }
            let mut left = phrase_after(toks, from, 3);
            if left.is_empty() {
                left = phrase_before(toks, i, 3);
            }
            return Some(Change {
                cue: raw.to_string(),
                left,
            });
        }
        // … anymore / any more
        if raw == "anymore" || (raw == "any" && raw_at(k + 1) == "more") {
            return Some(Change {
                cue: "anymore".into(),
                left: Vec::new(),
            });
        }
    }
    None
}

/// One attitude in a text: its sign, its verb's stem, and the content words after it in
/// the same clause.
#[derive(Debug, Clone)]
struct Stance {
    sign: i8,
    verb: String,
    about: Vec<String>,
}

fn english_stances(toks: &[Tok]) -> Vec<Stance> {
    let mut out = Vec::new();
    let mut negated_until: Option<usize> = None;
    let clause_after = |from: usize| -> Vec<String> {
        toks.iter()
            .skip(from)
            .take_while(|t| **t != Tok::Break)
            .filter_map(|t| match t {
                Tok::Word { raw, stem } if !is_function_word(raw) && !is_cue_stem(stem) => {
                    Some(stem.clone())
                }
                _ => None,
            })
            .take(6)
            .collect()
    };
    for (idx, t) in toks.iter().enumerate() {
        let Tok::Word { raw, stem } = t else {
            negated_until = None;
            continue;
        };
        if NEGATIONS.contains(&raw.as_str()) {
            if raw == "never" {
                out.push(Stance {
                    sign: -1,
                    verb: "never".into(),
                    about: clause_after(idx + 1),
                });
            }
            negated_until = Some(idx + 4);
            continue;
        }
        let sign = if NEGATIVE.contains(&stem.as_str()) {
            -1
        } else if POSITIVE.contains(&stem.as_str()) {
            if negated_until.is_some_and(|u| idx <= u) {
                -1
            } else {
                1
            }
        } else {
            continue;
        };
        out.push(Stance {
            sign,
            verb: stem.clone(),
            about: clause_after(idx + 1),
        });
    }
    out
}

/// +1 when the text affirms a liking or a use, −1 when it rejects or negates one: the
/// sum of its stances, a single rejection outweighing any number of likings.
fn english_polarity(stances: &[Stance]) -> Option<i8> {
    if stances.iter().any(|s| s.sign < 0) {
        Some(-1)
    } else if stances.is_empty() {
        None
    } else {
        Some(1)
    }
}

/// The first verb of choice and its object: "we use PostgreSQL for the database".
fn english_choice(toks: &[Tok]) -> Option<Choice> {
    let ws = words(toks);
    for (k, &(i, raw, st)) in ws.iter().enumerate() {
        let class = match st {
            "prefer" | "lik" | "lov" | "favor" | "favour" | "enjoy" => 1,
            "us" | "adopt" | "choos" | "chos" | "chosen" | "pick" | "standardiz" | "standardis"
            | "rely" => 2,
            _ => continue,
        };
        if k > 0 && NEGATIONS.contains(&ws[k - 1].1) {
            return None;
        }
        let mut from = i + 1;
        // "rely on X", "standardize on X", "go with X"
        if ws.get(k + 1).is_some_and(|w| matches!(w.1, "on" | "with")) {
            from = ws[k + 1].0 + 1;
        }
        let object = phrase_after(toks, from, 3);
        let rejected = toks
            .iter()
            .skip(from)
            .position(|t| matches!(t, Tok::Word { raw, .. } if raw == "over"))
            .map(|p| phrase_after(toks, from + p + 1, 3))
            .unwrap_or_default();
        let mut context: Vec<String> = Vec::new();
        for t in toks {
            if let Tok::Word { raw, stem } = t
                && !is_function_word(raw)
                && !is_cue_stem(stem)
                && !object.contains(stem)
                && !rejected.contains(stem)
            {
                context.push(stem.clone());
            }
        }
        return Some(Choice {
            class,
            verb: raw.to_string(),
            object,
            rejected,
            context,
        });
    }
    None
}

// ---------------------------------------------------------------------------------------
// Japanese and Chinese: phrase tables over the raw text.

/// `(phrase, what comes before it names what was left)`.
const CJK_CHANGES: &[(&str, bool)] = &[
    // Japanese
    ("をやめ", true),
    ("はやめ", true),
    ("をやめた", true),
    ("をやめました", true),
    ("をやめる", true),
    ("を止めた", true),
    ("の使用をやめ", true),
    ("やめた", false),
    ("から", false), // handled with a following 切り替え/移行/変更/乗り換え below
    ("に切り替え", false),
    ("へ切り替え", false),
    ("に切替", false),
    ("に変更", false),
    ("へ変更", false),
    ("に移行", false),
    ("へ移行", false),
    ("に乗り換え", false),
    ("使わなくなった", true),
    ("を廃止", true),
    ("は廃止", true),
    ("の代わりに", true),
    ("ではなく", true),
    ("じゃなく", true),
    // Chinese
    ("已经下线", true),
    ("下线了", true),
    ("不再使用", false),
    ("不再用", false),
    ("不再", false),
    ("改用", false),
    ("换成", false),
    ("换用", false),
    ("改为", false),
    ("改成", false),
    ("换掉", true),
    ("弃用", false),
    ("停止使用", false),
    ("停用", false),
    ("不用了", true),
    ("迁移到", false),
    ("转向", false),
    ("而不是", false),
    ("取代", false),
    ("替换", false),
    ("替代", false),
    ("放弃", false),
];

fn cjk_change(raw: &str) -> Option<Change> {
    if !raw.chars().any(crate::text::is_cjk) {
        return None;
    }
    // 「もう…ない」「もう…ません」: no longer.
    if let Some(p) = raw.find("もう") {
        let rest = &raw[p..];
        let window: String = rest.chars().take(16).collect();
        if window.contains("ない") || window.contains("ません") {
            return Some(Change {
                cue: "もう〜ない".into(),
                left: Vec::new(),
            });
        }
    }
    // X から Y に切り替え / 移行 / 変更 / 乗り換え ; 从 X 换成 / 迁移到 / 改为 Y ; 把 X 换成 Y
    for (open, verbs) in [
        (
            "から",
            &[
                "切り替え",
                "切替",
                "移行",
                "変更",
                "乗り換え",
                "移っ",
                "載せ替え",
                "置き換え",
                "移し",
                "変え",
            ][..],
        ),
        (
            "从",
            &["换成", "迁移", "改为", "改成", "转向", "换到", "切换"][..],
        ),
        ("把", &["换成", "改为", "改成", "替换"][..]),
    ] {
        let Some(p) = raw.find(open) else { continue };
        if !verbs.iter().any(|v| raw[p..].contains(v)) {
            continue;
        }
        let left = if open == "から" {
            cjk_tail(&raw[..p])
        } else {
            let after = &raw[p + open.len()..];
            let end = [
                "换成",
                "迁移到",
                "迁移",
                "改为",
                "改成",
                "转向",
                "换到",
                "切换",
                "替换",
                "到",
            ]
            .iter()
            .filter_map(|v| after.find(v))
            .min()
            .unwrap_or(after.len());
            after[..end].trim().to_string()
        };
        return Some(Change {
            cue: open.to_string(),
            left: (!left.is_empty()).then_some(left).into_iter().collect(),
        });
    }
    // 用 Y 替换/取代 X: X is after the verb.
    for v in ["替换", "取代", "替代"] {
        if let Some(p) = raw.find(v)
            && raw[..p].contains('用')
        {
            let after = raw[p + v.len()..]
                .trim_end_matches(['。', '.', '了'])
                .trim();
            let left: String = after.chars().take(12).collect();
            return Some(Change {
                cue: v.into(),
                left: (!left.is_empty()).then_some(left).into_iter().collect(),
            });
        }
    }
    for &(phrase, before_names_left) in CJK_CHANGES {
        if phrase == "から" {
            continue;
        }
        let Some(p) = raw.find(phrase) else { continue };
        let left = if before_names_left {
            cjk_tail(&raw[..p])
        } else {
            String::new()
        };
        return Some(Change {
            cue: phrase.to_string(),
            left: (!left.is_empty()).then_some(left).into_iter().collect(),
        });
    }
    None
}

/// The noun phrase just before a particle: back to the previous particle or punctuation.
fn cjk_tail(before: &str) -> String {
    let stops = [
        'は', 'が', 'を', 'に', 'で', 'と', 'も', 'の', '、', '。', ' ', ',', '，', '我', '们',
        '已', '经', '们',
    ];
    let chars: Vec<char> = before.chars().collect();
    let mut start = chars.len();
    while start > 0 && !stops.contains(&chars[start - 1]) {
        start -= 1;
    }
    // Keep latin names whole ("PostgreSQL").
    chars[start..].iter().collect::<String>().trim().to_string()
}

const CJK_NEGATIVE: &[&str] = &[
    "ないで",
    "不用再",
    // Japanese
    "嫌い",
    "苦手",
    "避け",
    "使わない",
    "使いません",
    "好きではない",
    "好きじゃない",
    "ではない",
    "じゃない",
    "しない",
    "しません",
    "禁止",
    // Chinese
    "不喜欢",
    "讨厌",
    "不用",
    "不使用",
    "避免",
    "别用",
    "不要用",
    "没用",
    "不想用",
    "禁止",
    "不推荐",
    "不要",
];
const CJK_POSITIVE: &[&str] = &[
    "ほしい",
    "欲しい",
    "希望",
    // Japanese
    "好き",
    "好む",
    "使って",
    "使う",
    "使用",
    "採用",
    "気に入",
    "愛用",
    "推奨",
    // Chinese
    "喜欢",
    "偏好",
    "使用",
    "用",
    "采用",
    "爱用",
    "推荐",
    "偏爱",
];

fn cjk_polarity(raw: &str) -> Option<i8> {
    if !raw.chars().any(crate::text::is_cjk) {
        return None;
    }
    if CJK_NEGATIVE.iter().any(|w| raw.contains(w)) {
        Some(-1)
    } else if CJK_POSITIVE.iter().any(|w| raw.contains(w)) {
        Some(1)
    } else {
        None
    }
}

/// Whether two texts share a CJK bigram (their subject, when words cannot be split).
fn cjk_overlap(a: &str, b: &str) -> bool {
    cjk_shared(a, b) > 0
}

/// How many distinct content CJK bigrams two texts share.
fn cjk_shared(a: &str, b: &str) -> usize {
    let grams = |s: &str| -> Vec<String> {
        let cs: Vec<char> = s.chars().collect();
        cs.windows(2)
            .filter(|w| w.iter().all(|c| crate::text::is_cjk(*c)))
            .map(|w| w.iter().collect())
            .collect()
    };
    let mut ga = grams(a);
    ga.sort();
    ga.dedup();
    let gb = grams(b);
    ga.iter()
        .filter(|g| {
            gb.contains(g)
                && !CJK_NEGATIVE
                    .iter()
                    .chain(CJK_POSITIVE)
                    .any(|w| w.contains(g.as_str()))
                && !["使っ", "って", "いる", "ない", "した", "ます", "です"].contains(&g.as_str())
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_meet() {
        for (a, b) in [
            ("use", "uses"),
            ("use", "used"),
            ("use", "using"),
            ("prefer", "preferred"),
            ("prefer", "prefers"),
            ("stop", "stopped"),
            ("like", "likes"),
            ("switch", "switched"),
            ("switch", "switches"),
        ] {
            assert_eq!(stem(a), stem(b), "{a} / {b}");
        }
    }

    /// (old, new, expected kind or None).
    const CASES: &[(&str, &str, Option<ConflictKind>)] = &[
        // English: change of state
        (
            "The project database is PostgreSQL.",
            "We switched from PostgreSQL to SQLite for the project database.",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "We deploy with Heroku.",
            "We moved away from Heroku; deploys go through Fly.io now.",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "Use npm to install packages.",
            "Use pnpm instead of npm to install packages.",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "The team uses Jenkins for CI.",
            "We replaced Jenkins with GitHub Actions for CI.",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "I use Vim for editing.",
            "I stopped using Vim.",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "Tests run on Python 3.9.",
            "Tests no longer run on Python 3.9.",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "Alice leads the backend team.",
            "Alice doesn't lead the backend team anymore.",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "Jenkins was replaced by GitHub Actions.",
            "We use Jenkins for CI again.",
            Some(ConflictKind::Reversion),
        ),
        // Naming what was left is not going back to it (tester-c: a passive learning
        // superseded a decision).
        (
            "Reporting queries run on a Postgres read replica, not the SQLite app DB.",
            "Retry with jittered backoff when SQLite reports busy",
            None,
        ),
        (
            "We moved away from Heroku; deploys go through Fly.io now.",
            "We are back on Heroku for deploys.",
            Some(ConflictKind::Reversion),
        ),
        // English: polarity and preference
        (
            "I like dark mode in the editor.",
            "I don't like dark mode in the editor.",
            Some(ConflictKind::PolarityFlip),
        ),
        (
            "The user loves tabs.",
            "The user hates tabs.",
            Some(ConflictKind::PolarityFlip),
        ),
        (
            "I prefer tabs over spaces.",
            "I prefer spaces over tabs.",
            Some(ConflictKind::PreferenceFlip),
        ),
        (
            "We use PostgreSQL for the database.",
            "We use SQLite for the database.",
            Some(ConflictKind::PreferenceFlip),
        ),
        (
            "The user prefers pytest.",
            "The user prefers unittest.",
            Some(ConflictKind::PreferenceFlip),
        ),
        // English: values
        (
            "The retry budget is five attempts.",
            "The retry budget is three attempts.",
            Some(ConflictKind::ValueChange),
        ),
        (
            "The API listens on port 8080.",
            "The API listens on port 9090.",
            Some(ConflictKind::ValueChange),
        ),
        (
            "Sprint 12 goal: ship the login page.",
            "Sprint 13 goal: ship the billing page.",
            None,
        ),
        (
            "タイムアウトは30秒",
            "タイムアウトは60秒",
            Some(ConflictKind::ValueChange),
        ),
        // English: compatible
        (
            "The project uses Go.",
            "The project uses Go 1.22 with modules.",
            None,
        ),
        (
            "We use PostgreSQL for the main database.",
            "We use Redis for caching.",
            None,
        ),
        (
            "We use PostgreSQL for the database.",
            "We use Redis for caching and PostgreSQL for the database.",
            None,
        ),
        (
            "I prefer dark mode.",
            "I prefer dark mode in VS Code too.",
            None,
        ),
        (
            "We moved away from MySQL.",
            "We moved away from MySQL to Postgres last year.",
            None,
        ),
        ("Never commit secrets.", "Never commit .env files.", None),
        // Japanese
        (
            "データベースはPostgreSQLを使っている",
            "データベースをPostgreSQLからSQLiteに切り替えた",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "エディタはVimを使っている",
            "Vimをやめた",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "ダークモードが好き",
            "ダークモードはもう使っていない",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "ダークモードが好き",
            "ダークモードは好きではない",
            Some(ConflictKind::PolarityFlip),
        ),
        (
            "テストはpytestで書く",
            "テストはpytestで書き、カバレッジも測る",
            None,
        ),
        // Chinese
        (
            "项目数据库使用PostgreSQL",
            "项目数据库从PostgreSQL换成了SQLite",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "我用Vim写代码",
            "我不再用Vim写代码",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "团队使用npm",
            "团队改用pnpm",
            Some(ConflictKind::ChangeOfState),
        ),
        (
            "我喜欢深色主题",
            "我不喜欢深色主题",
            Some(ConflictKind::PolarityFlip),
        ),
        ("项目使用Go语言", "项目使用Go语言和模块", None),
    ];

    #[test]
    fn table() {
        let mut failures = Vec::new();
        for (old, new, want) in CASES {
            let got = detect(old, new).map(|c| c.kind);
            if got != *want {
                failures.push(format!("{old:?} → {new:?}: want {want:?}, got {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
