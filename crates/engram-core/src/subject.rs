//! What a statement is about: its *subject* (who or what: Alice, the Berlin office,
//! Project Falcon, OPS-4101, the user, the project), the *slot* it sets (editor, chat tool,
//! timeout, on call) and the *value* (Vim, Slack, 10 s, yes). Deterministic, no model.
//!
//! Resolution uses the reading to keep two things apart that look like one thing
//! changing: "Alice prefers tabs" and "Bob prefers spaces" are two people, not a
//! preference flip; "OPS-4101 … no longer …" says nothing about OPS-4102. The reading is
//! grammar-shaped (possessives, "X uses Y as Z", "X is Y", "X: Y", a leading identifier
//! or capitalised name, Japanese 〜の〜は, Chinese 〜的〜是) and says "unknown" (`None`)
//! for any part it cannot read with confidence: a wrong subject would block a true
//! update, so it never guesses. Only the first sentence is read: it carries what a
//! memory is about.

use crate::contradiction::stem;
use crate::text::is_cjk;
use serde::Serialize;

/// Who or what a statement is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subject {
    /// Lower-cased words ("berlin office", "ops-4101", "アリス"), or `user` / `project`.
    pub name: String,
    /// A named person, place, thing or identifier. The generic `user` and `project` are
    /// not specific: "the user" may well be Alice, so they never tell two texts apart.
    pub specific: bool,
}

/// A statement's subject · slot · value, each `None` when it could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Reading {
    pub subject: Option<Subject>,
    /// Lower-cased words naming what is set ("chat tool", "editor", "on call").
    pub slot: Option<String>,
    /// Lower-cased words of the value ("slack", "10s", "yes", "no").
    pub value: Option<String>,
    /// The value is what the slot *is* ("X is Y", "X: Y", 〜は〜です, 〜是〜), not the
    /// object of another verb: only then may two texts with no subject read compare slots.
    #[serde(skip)]
    pub definite: bool,
    /// The slot is one word standing where a holder does ("alice prefers", "bob does not
    /// like", 张三喜欢): a name not written as one, so two of them are two holders.
    #[serde(skip)]
    pub named_slot: bool,
}

impl Reading {
    /// `alice · editor · vim`, with `?` for what was not read; `None` when nothing was.
    pub fn describe(&self) -> Option<String> {
        if self.subject.is_none() && self.slot.is_none() && self.value.is_none() {
            return None;
        }
        let part = |p: Option<&str>| p.unwrap_or("?").to_string();
        Some(format!(
            "{} · {} · {}",
            part(self.subject.as_ref().map(|s| s.name.as_str())),
            part(self.slot.as_deref()),
            part(self.value.as_deref())
        ))
    }
}

/// Reads the first sentence of `text`.
pub fn read(text: &str) -> Reading {
    let first = first_sentence(text);
    if first.chars().filter(|c| is_cjk(*c)).count() >= 2 {
        return crate::subject_cjk::read(first);
    }
    read_english(first)
}

/// `Some("alice ≠ bob")` when both texts name a specific subject and they are not the
/// same one (neither's words contain the other's): two things, whatever the cues say.
pub fn differ(a: &Reading, b: &Reading) -> Option<String> {
    let (sa, sb) = (a.subject.as_ref()?, b.subject.as_ref()?);
    if !sa.specific || !sb.specific || same_name(&sa.name, &sb.name) {
        return None;
    }
    Some(format!("{} ≠ {}", sa.name, sb.name))
}

/// Whether the two readings set the same slot of the same subject to two different
/// values: an update. Every part must be read; subjects must agree (both generic, or the
/// same name) and the values must share no word (a value that grows is a detail).
pub fn same_slot_new_value(a: &Reading, b: &Reading) -> bool {
    let subject_agrees = match (&a.subject, &b.subject) {
        (Some(sa), Some(sb)) => sa.specific == sb.specific && same_name(&sa.name, &sb.name),
        // "The ORM is Drizzle" / "The ORM is Prisma": the room's own subject.
        (None, None) => a.definite && b.definite,
        _ => false,
    };
    let (Some(la), Some(lb), Some(va), Some(vb)) = (&a.slot, &b.slot, &a.value, &b.value) else {
        return false;
    };
    let short = |v: &str| v.split_whitespace().count() <= 3;
    subject_agrees && same_words(la, lb) && shares_no_word(va, vb) && short(va) && short(vb)
}

/// Whether the two readings set the same slot of the same subject to values that differ
/// ("jest" / "vitest", "dark mode" / "light mode"): the read-time test of two current
/// memories that cannot both be true. Looser on values than [`same_slot_new_value`]
/// (which decides a write and wants values sharing no word): at read time nothing is
/// retired, only ordered and flagged. Two named subjects or two slots of one kind
/// ([`differ`], [`slots_differ`]) never conflict.
pub fn same_slot_other_value(a: &Reading, b: &Reading) -> bool {
    let subject_agrees = match (&a.subject, &b.subject) {
        (Some(sa), Some(sb)) => sa.specific == sb.specific && same_name(&sa.name, &sb.name),
        (None, None) => a.definite && b.definite,
        _ => false,
    };
    let (Some(la), Some(lb)) = (&a.slot, &b.slot) else {
        return false;
    };
    subject_agrees
        && same_words(la, lb)
        && values_differ(a, b)
        && differ(a, b).is_none()
        && slots_differ(a, b).is_none()
}

/// The slot's words as [`same_slot_other_value`] compares them (stemmed; CJK as
/// written): equal keys for equal slots, so callers can group readings before comparing
/// them pairwise.
pub fn slot_key(r: &Reading) -> Option<String> {
    let slot = r.slot.as_deref()?;
    Some(if slot.chars().any(is_cjk) {
        slot.to_string()
    } else {
        words_of(slot).join(" ")
    })
}

/// `text` without its value's words, for checks that must not see the value itself
/// ("本番のNode.jsはv18" and "…はv22" name no other thing than each other).
pub fn without_value(text: &str, r: &Reading) -> String {
    let lower = text.to_lowercase();
    match &r.value {
        Some(v) => lower.replacen(v.trim_start_matches("not "), " ", 1),
        None => lower,
    }
}

/// Whether both readings have a value and the two share no word ("dark mode" / "light
/// mode" share one: "mode"; compared without the words they share, "dark" / "light").
pub fn values_differ(a: &Reading, b: &Reading) -> bool {
    let (Some(va), Some(vb)) = (&a.value, &b.value) else {
        return false;
    };
    let (wa, wb) = (words_of(va), words_of(vb));
    wa.iter().any(|w| !wb.contains(w)) && wb.iter().any(|w| !wa.contains(w))
}

/// Whether both readings name the same subject and the same slot (values aside): only
/// then may one write retire more than one memory ("Alice's editor is Helix" replacing
/// two notes of Alice's editor), never three projects' "uses PostgreSQL" at once.
pub fn same_subject_and_slot(a: &Reading, b: &Reading) -> bool {
    let (Some(sa), Some(sb)) = (&a.subject, &b.subject) else {
        return false;
    };
    let (Some(la), Some(lb)) = (&a.slot, &b.slot) else {
        return false;
    };
    same_name(&sa.name, &sb.name) && same_words(la, lb)
}

/// Whether the two readings are complete and say the same thing (a repeat).
pub fn same_statement(a: &Reading, b: &Reading) -> bool {
    let (Some(sa), Some(sb)) = (&a.subject, &b.subject) else {
        return false;
    };
    let (Some(la), Some(lb), Some(va), Some(vb)) = (&a.slot, &b.slot, &a.value, &b.value) else {
        return false;
    };
    same_name(&sa.name, &sb.name) && same_words(la, lb) && same_words(va, vb)
}

fn words_of(s: &str) -> Vec<String> {
    s.split_whitespace().map(stem).collect()
}

/// One name's words all in the other's (stemmed); CJK names by containment.
fn same_name(a: &str, b: &str) -> bool {
    if a.chars().any(is_cjk) || b.chars().any(is_cjk) {
        return a.contains(b) || b.contains(a);
    }
    let (wa, wb) = (words_of(a), words_of(b));
    wa.iter().all(|w| wb.contains(w)) || wb.iter().all(|w| wa.contains(w))
}

fn same_words(a: &str, b: &str) -> bool {
    if a.chars().any(is_cjk) || b.chars().any(is_cjk) {
        return a == b;
    }
    words_of(a) == words_of(b)
}

fn shares_no_word(a: &str, b: &str) -> bool {
    if a.chars().any(is_cjk) || b.chars().any(is_cjk) {
        return !a.contains(b) && !b.contains(a);
    }
    let wb = words_of(b);
    !words_of(a).iter().any(|w| wb.contains(w))
}

/// The text up to the first sentence end: `.`, `!`, `?`, `;`, `。` or a line break, a
/// full stop only when followed by a space or the end ("v1.4.2", "2026.11.4" stay whole).
fn first_sentence(text: &str) -> &str {
    let t = text.trim();
    let mut it = t.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let next_space = it.peek().is_none_or(|(_, n)| n.is_whitespace());
        if matches!(c, '!' | '?' | ';' | '\n' | '。' | '！' | '？' | '；')
            || (c == '.' && next_space)
        {
            return &t[..i];
        }
    }
    t
}

// ---------------------------------------------------------------------------------------
// English

/// One word as written: its original case, lower-cased form and what followed it.
#[derive(Debug, Clone)]
struct W {
    orig: String,
    low: String,
    /// "Alice's": the word was a possessive (the suffix is removed).
    poss: bool,
    /// "OPS-4101:": a colon followed the word.
    colon: bool,
    /// A comma followed the word (the end of a phrase).
    comma: bool,
}

fn words(s: &str) -> Vec<W> {
    s.split_whitespace()
        .filter_map(|raw| {
            let colon = raw.ends_with(':');
            let comma = raw.ends_with(',');
            let t = raw
                .replace('’', "'")
                .trim_matches(|c: char| !(c.is_alphanumeric() || c == '\''))
                .to_string();
            let (t, poss) = match t.strip_suffix("'s").or_else(|| t.strip_suffix("s'")) {
                Some(b) if !b.is_empty() => (b.to_string(), true),
                _ => (t.trim_matches('\'').to_string(), false),
            };
            (!t.is_empty()).then(|| W {
                low: t.to_lowercase(),
                orig: t,
                poss,
                colon,
                comma,
            })
        })
        .collect()
}

const DETERMINERS: &[&str] = &["the", "a", "an", "this", "that", "these", "those"];

/// Verbs (and the adverbs and negations that come before them) that end a subject.
const VERBS: &[&str] = &[
    "is", "are", "was", "were", "has", "have", "had", "uses", "use", "used", "prefers", "prefer",
    "likes", "like", "liked", "loves", "love", "hates", "hate", "wants", "want", "needs", "need",
    "leads", "lead", "owns", "own", "runs", "run", "ran", "switched", "moved", "migrated",
    "replaced", "stopped", "dropped", "no", "not", "never", "now", "still", "also", "always",
    "only", "doesn't", "don't", "does", "do", "isn't", "aren't", "will", "should", "must", "can",
    "cannot", "relies", "rely", "depends", "works", "joined", "left", "handles", "manages",
    "listens", "expires", "sends", "stores", "keeps", "ships", "deploys", "targets", "requires",
    "builds", "calls", "writes", "reads", "takes", "gets", "got", "went", "became", "started",
    "times",
];

/// Nouns that name a kind of thing one has several of, so a qualifier before them names
/// one in particular: "the Berlin office", "the payments service", "the staging cluster".
const ENTITY_HEADS: &[&str] = &[
    "office",
    "team",
    "service",
    "app",
    "application",
    "cluster",
    "server",
    "repo",
    "repository",
    "project",
    "site",
    "region",
    "environment",
    "pipeline",
    "bot",
    "squad",
    "department",
    "client",
    "customer",
    "tenant",
    "account",
    "host",
    "node",
    "worker",
    "microservice",
    "library",
    "package",
    "crate",
    "module",
    "component",
    "product",
];

/// Qualifiers that do not single a thing out ("the new service", "the main app").
const VAGUE_QUALIFIERS: &[&str] = &[
    "new", "old", "main", "current", "same", "whole", "entire", "other", "our", "my", "your",
    "their", "its", "his", "her", "primary", "default", "every", "each", "all", "whole",
];

/// Attitude words in a slot that are not the slot itself ("preferred editor" → editor).
const SLOT_ATTITUDES: &[&str] = &[
    "preferred",
    "favourite",
    "favorite",
    "usual",
    "go-to",
    "current",
    "chosen",
    "default",
];

/// Verbs after which a bare capitalised name is a holder ("Alice prefers", "Bob is on
/// call"), not a value ("Redis is the session store"). Role verbs ("leads", "runs",
/// "owns") are left out: "Bob now leads the team" is the team's lead changing.
const HOLDER_VERBS: &[&str] = &[
    "prefers", "likes", "loves", "hates", "wants", "needs", "uses", "doesn't", "does", "never",
    "still", "always", "prefer", "like", "use",
];

/// Verbs after which one bare word is a holder whatever its case ("alice prefers", "bob
/// does not like", "carol switched from …"); role verbs ("runs", "handles") are left
/// out: "Jest runs the tests" names the value of a role.
const NAMED_SLOT_VERBS: &[&str] = &[
    "prefers", "likes", "loves", "hates", "wants", "needs", "uses", "doesn't", "does", "never",
    "still", "always", "no", "not", "works", "switched", "moved", "migrated", "joined", "left",
    "stopped", "dropped",
];

fn is_generic_user(w: &str) -> bool {
    matches!(w, "i" | "me" | "my" | "user" | "users")
}

fn is_generic_project(w: &str) -> bool {
    matches!(
        w,
        "we" | "us" | "our" | "project" | "team" | "everyone" | "everybody" | "codebase"
    )
}

fn generic(name: &str) -> Subject {
    Subject {
        name: name.into(),
        specific: false,
    }
}

/// "OPS-4101", "inc-552": letters, a dash, digits.
fn is_ticket(w: &str) -> bool {
    w.split_once('-').is_some_and(|(a, b)| {
        !a.is_empty()
            && a.chars().all(|c| c.is_ascii_alphabetic())
            && !b.is_empty()
            && b.chars().all(|c| c.is_ascii_digit())
    })
}

/// A token that names one thing by itself: it holds a digit and is not a plain quantity.
fn is_identifier(w: &W) -> bool {
    !crate::identifiers::of(&w.low).is_empty()
}

/// Capitalised as a name is: an upper-case letter after the first ("PostgreSQL",
/// "OPS"), or a capital first letter on a word that is not the sentence's first.
fn looks_proper(w: &W, first: bool) -> bool {
    let mut cs = w.orig.chars();
    let Some(c0) = cs.next() else { return false };
    let inner_upper = cs.any(|c| c.is_uppercase());
    c0.is_uppercase() && (!first || inner_upper)
}

fn join(ws: &[W]) -> String {
    ws.iter()
        .map(|w| w.low.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The slot named by `ws`, without determiners and attitude words.
fn slot_of(ws: &[W]) -> Option<String> {
    let kept: Vec<W> = ws
        .iter()
        .filter(|w| {
            !DETERMINERS.contains(&w.low.as_str())
                && !SLOT_ATTITUDES.contains(&w.low.as_str())
                && !matches!(
                    w.low.as_str(),
                    "its" | "their" | "his" | "her" | "our" | "my"
                )
        })
        .cloned()
        .collect();
    (!kept.is_empty() && kept.len() <= 4).then(|| join(&kept))
}

fn read_english(s: &str) -> Reading {
    let ws = words(s);
    // "OPS-4101: the export job is paused": the label is the subject, the rest the statement.
    if let Some(k) = ws.iter().take(4).position(|w| w.colon) {
        let head = &ws[..=k];
        let rest = &ws[k + 1..];
        if let Some(subject) = named_subject(head, false) {
            let inner = statement(rest);
            return Reading {
                subject: Some(subject),
                ..inner
            };
        }
        // "Test runner: vitest".
        if let (Some(slot), false) = (slot_of(head), rest.is_empty()) {
            return Reading {
                subject: None,
                slot: Some(slot),
                value: value_of(rest),
                definite: true,
                named_slot: false,
            };
        }
    }
    let mut r = statement(&ws);
    if r.subject.is_none() {
        // "OPS-4102 the staging deploy waits …", "Build 2026.11.4 …": a leading name by
        // shape is the subject whatever verb follows.
        let lead: Vec<&W> = ws
            .iter()
            .skip_while(|w| DETERMINERS.contains(&w.low.as_str()))
            .take(2)
            .collect();
        let by_shape = match lead.as_slice() {
            [a, b, ..] if crate::identifiers::is_naming_noun(&a.low) && is_identifier(b) => {
                Some(specific(&lead))
            }
            [a, ..] if is_ticket(&a.low) => Some(specific(&lead[..1])),
            _ => None,
        };
        r.subject = by_shape;
    }
    r
}

/// A name in `np` that singles a thing out: an identifier ("OPS-4101", "Build
/// 2026.11.4"), capitalised words with the head noun after them ("the Berlin office",
/// "Project Falcon"), or a qualified entity head ("the payments service").
/// `holder`: the verb after `np` makes a bare capitalised word a holder.
fn named_subject(np: &[W], holder: bool) -> Option<Subject> {
    let all = np.len();
    let np: Vec<&W> = np
        .iter()
        .skip_while(|w| DETERMINERS.contains(&w.low.as_str()))
        .collect();
    // The sentence's first word is capitalised anyway: it only counts as a name when
    // a holder verb follows it alone ("Alice prefers").
    let leads = np.len() == all;
    let first = np.first()?;
    if np.len() == 1 && is_generic_user(&first.low) {
        return Some(generic("user"));
    }
    if np.iter().all(|w| is_generic_project(&w.low)) {
        return Some(generic("project"));
    }
    // "Don't use an ORM", "Never force-push", "Please run …": an imperative has no subject.
    if np.iter().any(|w| {
        crate::text::is_stopword(&w.low)
            || w.low.ends_with("n't")
            || VERBS.contains(&w.low.as_str())
            || matches!(
                w.low.as_str(),
                "please" | "never" | "always" | "it" | "they" | "he" | "she" | "you"
            )
    }) {
        return None;
    }
    if np.len() > 4 {
        return None;
    }
    // "Build 2026.11.4", "OPS-4101": a name by shape. A plain number after the noun is
    // not ("Node 20 is the runtime" → "Node 22 is now": the runtime changed), nor is a
    // bare version or hash ("v1.4.2 is the current release") unless a holder verb follows.
    let named_id = np
        .windows(2)
        .any(|p| crate::identifiers::is_naming_noun(&p[0].low) && is_identifier(p[1]))
        || np.iter().any(|w| is_ticket(&w.low));
    if named_id || (holder && np.iter().any(|w| is_identifier(w))) {
        return Some(specific(&np));
    }
    // Capitalised words: with a head noun ("the Berlin office", "Project Falcon") they
    // name one of several; alone ("Alice", "GitHub Actions") only when a holder verb
    // follows: "Jest runs the unit tests" names the value of a role, not its holder.
    let has_head = np.iter().any(|w| ENTITY_HEADS.contains(&w.low.as_str()));
    let proper = (0..np.len()).any(|i| looks_proper(np[i], i == 0 && leads))
        || (np.len() >= 2
            && ENTITY_HEADS.contains(&np[0].low.as_str())
            && np[1].orig.starts_with(char::is_uppercase))
        || (np.len() == 1 && holder && np[0].orig.starts_with(char::is_uppercase));
    if proper && (holder || has_head) {
        return Some(specific(&np));
    }
    let head = np.last()?;
    let qualified = np.len() >= 2
        && ENTITY_HEADS.contains(&head.low.as_str())
        && np[..np.len() - 1]
            .iter()
            .all(|w| !VAGUE_QUALIFIERS.contains(&w.low.as_str()))
        && np.len() <= 3;
    qualified.then(|| specific(&np))
}

fn specific(np: &[&W]) -> Subject {
    Subject {
        name: np
            .iter()
            .map(|w| w.low.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        specific: true,
    }
}

/// Subject, slot and value of one clause: "NP VERB REST".
fn statement(ws: &[W]) -> Reading {
    let Some(v) = ws
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, w)| VERBS.contains(&w.low.as_str()))
        .map(|(i, _)| i)
        .filter(|&i| i <= 6)
    else {
        return Reading::default();
    };
    let (np, rest) = (&ws[..v], &ws[v..]);
    let verb = rest[0].low.as_str();
    let mut r = Reading::default();
    // "Alice's editor", "the Berlin office's chat tool", "my editor", "our CI".
    if let Some(k) = np.iter().position(|w| w.poss) {
        let owner = &np[..=k];
        r.subject = if owner.len() == 1 && is_generic_user(&owner[0].low) {
            Some(generic("user"))
        } else {
            named_subject(owner, true).or_else(|| Some(specific(&owner.iter().collect::<Vec<_>>())))
        };
        r.slot = slot_of(&np[k + 1..]);
    } else if matches!(np.first().map(|w| w.low.as_str()), Some("my" | "our")) {
        let owner = if np[0].low == "my" { "user" } else { "project" };
        r.subject = Some(generic(owner));
        r.slot = slot_of(&np[1..]);
    } else {
        r.subject = named_subject(np, HOLDER_VERBS.contains(&verb) || is_state(rest));
        if r.subject.is_none() {
            // "the payments service timeout", "the project database": an entity head
            // inside the phrase ends the subject, what follows is the slot.
            let h = (1..np.len().saturating_sub(1))
                .rev()
                .find(|&h| ENTITY_HEADS.contains(&np[h].low.as_str()));
            match h.and_then(|h| named_subject(&np[..=h], false).map(|s| (h, s))) {
                Some((h, s)) => {
                    r.subject = Some(s);
                    r.slot = slot_of(&np[h + 1..]);
                }
                None => {
                    r.slot = slot_of(np);
                    r.named_slot = np.len() == 1
                        && !DETERMINERS.contains(&np[0].low.as_str())
                        && NAMED_SLOT_VERBS.contains(&verb);
                }
            }
        }
    }
    read_predicate(&mut r, rest);
    if r.subject.is_none()
        && let Some(role) = role_filled(np, rest)
    {
        return role;
    }
    r
}

/// "is on call", "is out": a state the subject is in.
fn is_state(rest: &[W]) -> bool {
    let after: Vec<&str> = rest
        .iter()
        .skip(1)
        .map(|w| w.low.as_str())
        .filter(|w| !matches!(*w, "not" | "no" | "now" | "still" | "also"))
        .collect();
    matches!(rest[0].low.as_str(), "is" | "was" | "isn't")
        && matches!(
            after.first(),
            Some(&("on" | "off" | "out" | "away" | "in" | "at"))
        )
}

/// Fills the slot and value from what follows the verb.
fn read_predicate(r: &mut Reading, rest: &[W]) {
    // "now prefers", "still uses": the verb after the adverb sets the value.
    let lead = rest
        .iter()
        .position(|w| !matches!(w.low.as_str(), "now" | "still" | "also" | "always" | "only"))
        .unwrap_or(0);
    let rest = &rest[lead..];
    let negated = rest.iter().take(3).any(|w| {
        matches!(
            w.low.as_str(),
            "not" | "no" | "never" | "isn't" | "doesn't" | "don't"
        )
    });
    let body: Vec<W> = rest
        .iter()
        .skip(1)
        .filter(|w| {
            !matches!(
                w.low.as_str(),
                "not" | "no" | "now" | "still" | "also" | "longer"
            )
        })
        .cloned()
        .collect();
    let verb = rest[0].low.as_str();
    if is_state(rest) {
        // "Alice is on call this week": the state is the slot, yes or no its value.
        let end = body
            .iter()
            .position(|w| w.comma || matches!(w.low.as_str(), "this" | "for" | "until" | "since"))
            .unwrap_or(body.len())
            .min(3);
        if r.slot.is_none() {
            r.slot = Some(join(&body[..end]));
        }
        r.value = Some(if negated { "no" } else { "yes" }.into());
        return;
    }
    if matches!(verb, "is" | "are" | "was" | "were") {
        r.value = value_of(&body).map(|v| if negated { format!("not {v}") } else { v });
        r.definite = !negated;
        // "The timeout is 10s for uploads": the qualifier narrows the slot, so "30s for
        // downloads" sets another one.
        let q = body
            .iter()
            .position(|w| QUALIFIERS.contains(&w.low.as_str()));
        if let Some(q) = q {
            match (&r.slot, body.len() - q <= 4) {
                (Some(slot), true) => r.slot = Some(format!("{slot} {}", join(&body[q..]))),
                _ => r.definite = false,
            }
        }
        return;
    }
    if matches!(
        verb,
        "uses" | "use" | "used" | "prefers" | "prefer" | "likes" | "like" | "loves" | "love"
    ) {
        // "uses Slack as its chat tool", "prefers tabs for indentation".
        let cut = body
            .iter()
            .position(|w| {
                matches!(
                    w.low.as_str(),
                    "as" | "for" | "over" | "to" | "in" | "with" | "on"
                )
            })
            .unwrap_or(body.len());
        r.value = value_of(&body[..cut]).map(|v| if negated { format!("not {v}") } else { v });
        // "for the orders database", "in Go code", "on developer laptops": the slot.
        if r.slot.is_none()
            && cut < body.len()
            && matches!(body[cut].low.as_str(), "as" | "for" | "in" | "on")
        {
            r.slot = slot_of(&body[cut + 1..]);
        }
    }
}

/// Prepositions that qualify a slot ("timeout for uploads", "runtime in staging").
const QUALIFIERS: &[&str] = &[
    "for", "in", "on", "at", "during", "when", "until", "since", "except", "with", "from", "after",
    "before", "under", "of",
];

/// "PostgreSQL is the primary database", "Marcus Webb is the on-call lead": a name
/// filling a role. The role is the slot and the name its value, as in "The primary
/// database is PostgreSQL". Only a phrase capitalised as a name is read so ("Sprint
/// planning is the first Monday" is not a role filled).
fn role_filled(np: &[W], rest: &[W]) -> Option<Reading> {
    let negated = rest
        .iter()
        .skip(1)
        .take(2)
        .any(|w| matches!(w.low.as_str(), "not" | "no"));
    if !matches!(rest[0].low.as_str(), "is" | "was") || negated || np.len() > 3 {
        return None;
    }
    let body: Vec<W> = rest
        .iter()
        .skip(1)
        .filter(|w| !matches!(w.low.as_str(), "now" | "still" | "also"))
        .cloned()
        .collect();
    let name_like = (0..np.len()).any(|i| looks_proper(&np[i], i == 0));
    let first = body.first()?;
    // "X is my editor" names a value whatever its case; "X is the Y" only when X is
    // written as a name.
    let owned = matches!(first.low.as_str(), "my" | "our") || first.poss;
    if !(name_like || owned) || np.iter().any(|w| crate::text::is_stopword(&w.low)) {
        return None;
    }
    let end = body
        .iter()
        .position(|w| w.comma)
        .map_or(body.len(), |c| c + 1);
    // "Vim is my editor", "Helix is Alice's editor": the owner is the subject.
    let (subject, from) = match first.low.as_str() {
        "the" => (None, 0),
        "my" => (Some(generic("user")), 1),
        "our" => (Some(generic("project")), 1),
        _ if first.poss => (named_subject(&body[..1], true), 1),
        _ => return None,
    };
    if from == 1 && subject.is_none() {
        return None;
    }
    Some(Reading {
        subject,
        slot: Some(slot_of(&body[from..end.max(from)])?),
        value: Some(join(np)),
        definite: true,
        named_slot: false,
    })
}

/// A short value phrase: up to four words, stopping at a comma or a linking word.
fn value_of(ws: &[W]) -> Option<String> {
    let ws: Vec<&W> = ws
        .iter()
        .skip_while(|w| DETERMINERS.contains(&w.low.as_str()))
        .collect();
    let mut end = ws
        .iter()
        .position(|w| {
            matches!(
                w.low.as_str(),
                "for" | "and" | "but" | "because" | "since" | "until" | "which" | "so"
            )
        })
        .unwrap_or(ws.len());
    if let Some(c) = ws.iter().position(|w| w.comma) {
        end = end.min(c + 1);
    }
    (end > 0 && end <= 4).then(|| {
        ws[..end]
            .iter()
            .map(|w| w.low.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    })
}

#[path = "subject_slots.rs"]
mod slots;
pub use slots::slots_differ;

#[cfg(test)]
#[path = "subject_tests.rs"]
mod tests;
