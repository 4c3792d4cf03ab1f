//! Long text arriving through a capture path (a hook's transcript, an importer, a replayed
//! conversation) is never refused or cut: it is stored as linked parts of one record. This
//! module decides where the text is split; the store writes the parts.

/// Splits `text` into pieces of at most `max_bytes` bytes whose concatenation is exactly
/// `text` (nothing is dropped or rewritten). Each cut falls at the last paragraph break in
/// the window, else the last line break, else the last whitespace, else a character
/// boundary, but never in the window's first half, so no part is needlessly small.
/// Text that fits comes back as one piece.
pub fn split(text: &str, max_bytes: usize) -> Vec<&str> {
    let max = max_bytes.max(8);
    let mut out = Vec::new();
    let mut rest = text;
    while rest.len() > max {
        let cut = cut_point(rest, max);
        let (head, tail) = rest.split_at(cut);
        out.push(head);
        rest = tail;
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}

/// Where to end the next piece of `rest` (longer than `max`): just after a separator.
fn cut_point(rest: &str, max: usize) -> usize {
    let mut end = max;
    while !rest.is_char_boundary(end) {
        end -= 1;
    }
    let window = &rest[..end];
    let floor = end / 2;
    let after = |pat: &str| {
        window
            .rfind(pat)
            .map(|i| i + pat.len())
            .filter(|&i| i > floor)
    };
    after("\n\n")
        .or_else(|| after("\n"))
        .or_else(|| {
            window
                .char_indices()
                .rev()
                .find(|(_, c)| c.is_whitespace())
                .map(|(i, c)| i + c.len_utf8())
                .filter(|&i| i > floor)
        })
        .unwrap_or(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_piece() {
        assert_eq!(split("hello", 100), vec!["hello"]);
        assert_eq!(split("", 100), vec![""]);
    }

    #[test]
    fn pieces_rebuild_the_text_and_fit() {
        let text = "line one of a log\n".repeat(500) + &"x".repeat(3000) + "\n\nend";
        let parts = split(&text, 1000);
        assert!(parts.len() > 9);
        assert!(parts.iter().all(|p| p.len() <= 1000 && !p.is_empty()));
        assert_eq!(parts.concat(), text);
    }

    #[test]
    fn cuts_prefer_paragraphs_then_lines() {
        let text = format!(
            "{}\n\n{}\n{}",
            "a".repeat(60),
            "b".repeat(20),
            "c".repeat(40)
        );
        let parts = split(&text, 100);
        assert_eq!(parts[0], format!("{}\n\n", "a".repeat(60)));
        let text = format!("{}\n{} {}", "a".repeat(60), "b".repeat(20), "c".repeat(40));
        assert_eq!(split(&text, 100)[0], format!("{}\n", "a".repeat(60)));
        let text = format!("{}\n\n{}", "a".repeat(10), "b".repeat(120));
        // A paragraph break in the first half is not taken: the cut falls at the limit.
        assert_eq!(split(&text, 100)[0].len(), 100);
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "記憶は長い。".repeat(100);
        let parts = split(&text, 50);
        assert!(parts.iter().all(|p| p.len() <= 50));
        assert_eq!(parts.concat(), text);
    }
}
