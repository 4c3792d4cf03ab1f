//! [`crate::subject`]'s test of two slots: when two readings set two slots of one kind
//! ("for the orders / analytics database", "alice / bob prefers", 田中さん / 佐藤さん), the
//! texts are about two things, kept apart like two named subjects.

use super::{ENTITY_HEADS, QUALIFIERS, Reading, same_name};
use crate::contradiction::stem;
use crate::text::is_cjk;

/// `Some("orders database ≠ analytics database")` when the two readings set two slots
/// that look alike: one head qualified two ways ("orders / analytics database", "Python /
/// JavaScript tests", 決済 / 検索サービス, 田中 / 佐藤さん), two qualifiers of one slot ("in
/// CI" / "on developer laptops"), two kinds of one entity ("project falcon / osprey"), or
/// two holders not written as names ("alice prefers" / "bob prefers", 张三 / 李四, or one
/// of them against the other's named subject). Slots that merely share no word are not
/// told apart ("session data" / "session caching" may be one thing reworded), numbers are
/// left out ("Node 20" / "Node 22" is one slot's value), and a slot within the other is
/// the same slot narrowed.
pub fn slots_differ(a: &Reading, b: &Reading) -> Option<String> {
    // A holder unread as a name against the other text's named subject.
    for (x, y) in [(a, b), (b, a)] {
        if let (true, Some(l), Some(sy)) = (x.named_slot, x.slot.as_deref(), y.subject.as_ref())
            && x.subject.is_none()
            && sy.specific
            && !same_name(l, &sy.name)
        {
            return Some(format!("{l} ≠ {}", sy.name));
        }
    }
    let (la, lb) = (a.slot.as_deref()?, b.slot.as_deref()?);
    let two = if la.chars().any(is_cjk) || lb.chars().any(is_cjk) {
        cjk_slots_differ(la, lb, a.named_slot && b.named_slot)
    } else {
        let (wa, wb) = (slot_words(la), slot_words(lb));
        (a.named_slot && b.named_slot && !same_name(la, lb)) || phrases_differ(&wa, &wb)
    };
    two.then(|| format!("{la} ≠ {lb}"))
}

/// A slot's words that name it: stemmed, without numbers, pronouns and stop words.
fn slot_words(s: &str) -> Vec<String> {
    s.split_whitespace()
        .filter(|w| {
            !w.chars().any(|c| c.is_ascii_digit()) && !crate::text::is_stopword(w)
                || QUALIFIERS.contains(w)
        })
        .map(stem)
        .collect()
}

/// Two word phrases naming two things of one kind: the same head with other modifiers,
/// an entity head with other names after it, or other qualifiers after a preposition.
fn phrases_differ(a: &[String], b: &[String]) -> bool {
    let split = |ws: &[String]| -> (Vec<String>, Option<Vec<String>>) {
        match ws.iter().position(|w| QUALIFIERS.contains(&w.as_str())) {
            Some(q) => (ws[..q].to_vec(), Some(ws[q + 1..].to_vec())),
            None => (ws.to_vec(), None),
        }
    };
    let ((ba, qa), (bb, qb)) = (split(a), split(b));
    if let (Some(qa), Some(qb)) = (&qa, &qb)
        && !qa.is_empty()
        && !qb.is_empty()
        && (!qa.iter().any(|w| qb.contains(w)) || alike_heads(qa, qb))
    {
        return true;
    }
    alike_heads(&ba, &bb)
}

/// "orders database" / "analytics database" (one head), "project falcon" / "project
/// osprey" (one entity kind): each side has a word the other lacks.
fn alike_heads(a: &[String], b: &[String]) -> bool {
    let (Some(fa), Some(fb), Some(ha), Some(hb)) = (a.first(), b.first(), a.last(), b.last())
    else {
        return false;
    };
    let distinct = a.iter().any(|w| !b.contains(w)) && b.iter().any(|w| !a.contains(w));
    let one_head = ha == hb && a.len() >= 2 && b.len() >= 2;
    let one_kind = fa == fb && a.len() == 2 && b.len() == 2 && ENTITY_HEADS.contains(&fa.as_str());
    distinct && (one_head || one_kind)
}

/// The same for CJK slots: one tail (さん, チーム, 服务, サービス, データベース) after two
/// other names, or two short names standing where a holder does (张三 / 李四).
fn cjk_slots_differ(a: &str, b: &str, both_named: bool) -> bool {
    let strip = |s: &str| -> Vec<char> {
        s.chars()
            .filter(|c| !c.is_ascii_digit() && !c.is_whitespace())
            .collect()
    };
    let (ca, cb) = (strip(a), strip(b));
    let tail = ca
        .iter()
        .rev()
        .zip(cb.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (pa, pb): (String, String) = (
        ca[..ca.len() - tail].iter().collect(),
        cb[..cb.len() - tail].iter().collect(),
    );
    let names = |p: &str| p.chars().count() >= 2;
    let other_names = names(&pa) && names(&pb) && !pa.contains(&pb) && !pb.contains(&pa);
    let short = |c: &[char]| (2..=3).contains(&c.len());
    (tail >= 1 && other_names) || (both_named && short(&ca) && short(&cb) && ca != cb)
}
