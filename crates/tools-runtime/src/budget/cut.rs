//! Head and tail of a text, cut on character boundaries.

/// The largest char boundary of `text` at or below `at`.
pub(crate) fn floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary of `text` at or above `at`.
pub(crate) fn ceil(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// The first `head` and last `tail` bytes of `text` (fewer where a character would be
/// split), and how many bytes lie between them.
pub(crate) fn head_tail(text: &str, head: usize, tail: usize) -> (&str, &str, usize) {
    let head_end = floor(text, head);
    let tail_start = ceil(text, text.len().saturating_sub(tail)).max(head_end);
    (
        &text[..head_end],
        &text[tail_start..],
        tail_start - head_end,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_never_split_a_character() {
        let text = "aé€😀b".repeat(10);
        for head in 0..text.len() {
            for tail in [0, 1, 2, 3, 5, 7] {
                let (h, t, gap) = head_tail(&text, head, tail);
                assert!(h.len() <= head && t.len() <= tail);
                assert_eq!(h.len() + gap + t.len(), text.len());
            }
        }
    }
}
