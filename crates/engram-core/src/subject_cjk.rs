//! [`crate::subject`]'s reading for Japanese and Chinese: particles instead of word order.
//!
//! Japanese: 〈owner〉の〈slot〉は〈value〉(です) and 〈topic〉は〈value〉を使う. Chinese:
//! 〈owner〉的〈slot〉是〈value〉 and 〈topic〉用/使用〈value〉. Only the owner before の / 的
//! (or a Latin name or identifier as the topic) is read as a subject: a bare topic
//! (データベースは, 数据库是) is what is set, not who holds it.

use crate::subject::{Reading, Subject};
use crate::text::is_cjk;

/// Reads one CJK sentence.
pub fn read(s: &str) -> Reading {
    let s = s.trim().to_lowercase();
    if let Some(r) = japanese(&s) {
        return r;
    }
    chinese(&s).unwrap_or_default()
}

fn japanese(s: &str) -> Option<Reading> {
    let p = topic_marker(s)?;
    let (topic, rest) = (&s[..p], &s[p + 3..]);
    let mut r = split_owner(topic, 'の');
    let head = rest.split(['を', 'で', '、', ',']).next().unwrap_or("");
    // 〜は〜(です): the value is what the topic is; 〜は〜を使う: the object of a verb.
    r.definite = head.len() == rest.trim_end_matches(['。', '.']).len()
        || rest[head.len()..].starts_with("です");
    let value = head
        .trim_end_matches("です")
        .trim_end_matches("でした")
        .trim_end_matches("である")
        .trim_end_matches('だ')
        .trim();
    r.value = short(value);
    Some(r)
}

/// The byte offset of the first は or が that follows a word and is not part of a cue
/// ("はやめた" is a verb after its object).
fn topic_marker(s: &str) -> Option<usize> {
    s.char_indices()
        .skip(1)
        .find(|&(i, c)| (c == 'は' || c == 'が') && !s[i..].starts_with("はやめ"))
        .map(|(i, _)| i)
}

fn chinese(s: &str) -> Option<Reading> {
    // 喜欢 (likes) and 从 (from, a change's start) end a subject as a verb does:
    // 张三喜欢咖啡, 张三从Vim换成了Helix.
    let (p, verb) = ["是", "使用", "采用", "用", "喜欢", "从"]
        .iter()
        .filter_map(|v| s.find(v).filter(|&i| i > 0).map(|i| (i, *v)))
        .min()?;
    let before = &s[..p];
    let stem = before
        .trim_end_matches('再')
        .trim_end_matches('不')
        .trim_end_matches('没')
        .trim_end_matches("不再");
    let negated = stem.len() < before.len();
    let mut r = split_owner(stem, '的');
    // 张三喜欢, 李四使用: a bare two- or three-character topic before a verb is a holder.
    r.named_slot =
        r.subject.is_none() && !stem.contains('的') && (2..=3).contains(&stem.chars().count());
    let value: String = s[p + verb.len()..]
        .split(['，', ',', '。', '、', '；'])
        .next()
        .unwrap_or("")
        .trim_end_matches('了')
        .trim()
        .to_string();
    r.value = short(&value).map(|v| if negated { format!("not {v}") } else { v });
    r.definite = verb == "是" && !negated;
    Some(r)
}

/// 〈owner〉の〈slot〉 or 〈owner〉的〈slot〉: the owner is the subject; without a particle
/// the phrase is the slot, unless it is a pronoun, a Latin name or an identifier.
fn split_owner(topic: &str, particle: char) -> Reading {
    // "4月から、モバイルチームのリーダー": what comes before a comma frames the statement.
    let topic = topic
        .rsplit(['、', '，', ','])
        .next()
        .unwrap_or(topic)
        .trim();
    let mut r = Reading::default();
    match topic.rfind(particle) {
        Some(k) if k > 0 => {
            r.subject = owner(&topic[..k]);
            r.slot = short(&topic[k + particle.len_utf8()..]);
        }
        _ => match owner(topic) {
            Some(s) if !s.specific || latin_name(topic) => r.subject = Some(s),
            _ => r.slot = short(topic),
        },
    }
    r
}

fn owner(o: &str) -> Option<Subject> {
    let o = o.trim();
    let generic = |name: &str| {
        Some(Subject {
            name: name.into(),
            specific: false,
        })
    };
    match o {
        "私" | "僕" | "俺" | "自分" | "ユーザー" | "ユーザ" | "我" | "用户" => {
            generic("user")
        }
        "プロジェクト" | "チーム" | "弊社" | "うち" | "我々" | "私たち" | "我们" | "团队"
        | "项目" | "本项目" | "公司" => generic("project"),
        // One character is a pronoun or a particle fragment more often than a name.
        _ if o.chars().count() < 2 || o.chars().count() > 16 => None,
        _ => Some(Subject {
            name: o.to_string(),
            specific: true,
        }),
    }
}

/// "alice", "ops-4101": Latin letters and digits, no CJK.
fn latin_name(s: &str) -> bool {
    !s.is_empty()
        && !s.chars().any(is_cjk)
        && s.chars().all(|c| c.is_alphanumeric() || "-_. ".contains(c))
}

/// A value or slot of at most 20 characters, else unknown.
fn short(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty() && s.chars().count() <= 20).then(|| s.to_string())
}
