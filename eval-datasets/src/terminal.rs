//! The one rule for printing text that came from outside (an agent, a
//! judge, a server, a file) to a terminal or a log: characters that would
//! act on the terminal instead of being shown are shown escaped.
//!
//! Escaped: every control character (C0 — ESC and the line breaks
//! included —, DEL, and C1, where U+009B is a one-byte CSI), and the
//! Unicode bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E,
//! U+2066–U+2069), which reorder what follows them on the line (an RLO,
//! U+202E, makes `evil.exe` read backwards), and the line and paragraph
//! separators (U+2028, U+2029). Everything else, including zero-width
//! joiners (emoji sequences) and every script, is shown as it is.
//!
//! ```
//! use eval_datasets::terminal::escaped;
//! assert_eq!(escaped("\u{1b}[31mred\u{9b}0m\u{202e}txt"), "\\u{1b}[31mred\\u{9b}0m\\u{202e}txt");
//! assert_eq!(escaped("東京 👩‍💻"), "東京 👩‍💻");
//! ```

use std::borrow::Cow;

/// Whether `c` must be shown escaped (see the module's rule).
pub fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200E}'
                | '\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// Appends `c` to `out`, escaped (`\n`, `\u{1b}`) when [`needs_escape`].
pub fn push_escaped(out: &mut String, c: char) {
    if needs_escape(c) {
        out.extend(c.escape_default());
    } else {
        out.push(c);
    }
}

/// `text` with every character that [`needs_escape`] escaped; borrowed
/// when nothing needed it.
pub fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// `text` line by line, each line escaped: for printing a multi-line
/// answer as lines. Line breaks (`\n`, `\r\n`) stay line breaks; every
/// other character that [`needs_escape`] (a lone `\r` included) is escaped.
pub fn escaped_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let line = line.strip_suffix('\r').unwrap_or(line);
        for c in line.chars() {
            push_escaped(&mut out, c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_acts_on_a_terminal_is_escaped_and_nothing_else() {
        for c in [
            '\u{1b}', '\u{7}', '\u{7f}', '\u{9b}', '\u{202e}', '\u{2066}', '\u{200f}',
        ] {
            assert!(needs_escape(c), "{c:?}");
            assert!(!escaped(&format!("a{c}b")).contains(c), "{c:?}");
        }
        for c in ['a', 'é', '東', '\u{200d}', 'ـ', '🙂', ' '] {
            assert!(!needs_escape(c), "{c:?}");
        }
        assert!(matches!(escaped("plain"), Cow::Borrowed("plain")));
        assert_eq!(
            escaped_lines("one\r\n\u{1b}[2Jtwo\rthree"),
            "one\n\\u{1b}[2Jtwo\\rthree"
        );
    }
}
