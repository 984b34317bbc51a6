//! Text from outside (an agent, a server, a file) made fit for one line
//! of a report.

/// Text on one line, cut to `max` characters, keys masked
/// ([`secrets::mask`](crate::secrets::mask)), safe for a terminal: runs of
/// whitespace become one space, and control characters (an agent's ANSI
/// escape sequences, a C1 CSI) are shown escaped (`\u{1b}`), never sent.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let text = crate::secrets::mask(text);
    let mut flat = String::with_capacity(text.len().min(max + 16));
    let mut count = 0usize;
    let mut total = 0usize;
    for word in text.split_whitespace() {
        for c in (!flat.is_empty() || total > 0)
            .then_some(' ')
            .into_iter()
            .chain(word.chars())
        {
            total += 1;
            if count < max {
                count += 1;
                eval_datasets::terminal::push_escaped(&mut flat, c);
            }
        }
    }
    if total <= max {
        flat
    } else {
        format!("{flat}… ({} more chars)", total - max)
    }
}

/// The sentences of `text`, trimmed: Unicode's sentence boundaries (UAX
/// #29, through unicode-segmentation), so `。` ends a sentence and `3.5` or
/// `e.g. this` do not.
pub(crate) fn sentences(text: &str) -> Vec<String> {
    use unicode_segmentation::UnicodeSegmentation as _;
    text.unicode_sentences()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{one_line, sentences};

    #[test]
    fn sentences_end_where_unicode_says() {
        assert_eq!(
            sentences("Paris is in France. It is the capital! Right?"),
            ["Paris is in France.", "It is the capital!", "Right?"]
        );
        assert_eq!(
            sentences("3.5 million people live there, e.g. in the centre."),
            ["3.5 million people live there, e.g. in the centre."]
        );
        assert_eq!(
            sentences("東京は首都です。大阪は都市です。"),
            ["東京は首都です。", "大阪は都市です。"]
        );
        assert!(sentences("  ").is_empty());
    }

    #[test]
    fn one_line_flattens_cuts_and_escapes_control_characters() {
        assert_eq!(one_line("  a\n\tb  c ", 100), "a b c");
        assert_eq!(one_line("abcdef", 3), "abc… (3 more chars)");
        assert_eq!(
            one_line("red \u{1b}[31mALERT\u{1b}[0m \u{9b}2J\u{7}", 100),
            "red \\u{1b}[31mALERT\\u{1b}[0m \\u{9b}2J\\u{7}"
        );
        assert_eq!(one_line("", 10), "");
    }
}
