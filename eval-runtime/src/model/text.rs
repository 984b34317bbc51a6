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
                if c.is_control() {
                    flat.extend(c.escape_default());
                } else {
                    flat.push(c);
                }
            }
        }
    }
    if total <= max {
        flat
    } else {
        format!("{flat}… ({} more chars)", total - max)
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

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
