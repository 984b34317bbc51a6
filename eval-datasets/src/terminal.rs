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

/// A whole piece of output the program composed (its own line breaks and
/// tabs around text from outside) made safe as it is written: every
/// character that [`needs_escape`] is escaped except `\n` and `\t`, and,
/// when `colour`, the program's own colour codes (SGR: `ESC [` digits and
/// `;` `m`, which only style what follows). Cursor moves, screen clears,
/// titles (OSC), C1 controls, bidi controls and a lone `\r` never get
/// through. The last line of defence of every write to a terminal: text
/// from outside is escaped where it is put into a line ([`escaped`]), and
/// whatever was missed is escaped here, the same way.
pub fn escaped_layout(text: &str, colour: bool) -> Cow<'_, str> {
    let kept = |c: char| !needs_escape(c) || c == '\n' || c == '\t';
    if text.chars().all(kept) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if colour
            && c == '\u{1b}'
            && let Some(len) = sgr_len(rest)
        {
            out.push_str(&rest[..len]);
            rest = &rest[len..];
            continue;
        }
        if kept(c) {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// JSON text (as serde_json writes it) with every character that
/// [`needs_escape`] written as a JSON escape (`\u009b`, `\u202e`) except
/// the layout's `\n` and `\t`: the same JSON value, safe for a terminal.
/// serde_json escapes C0 controls in strings but writes DEL, C1 and bidi
/// controls as they are; outside strings JSON holds only whitespace.
pub fn escaped_json(json: &str) -> Cow<'_, str> {
    let kept = |c: char| !needs_escape(c) || c == '\n' || c == '\t';
    if json.chars().all(kept) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if kept(c) {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    Cow::Owned(out)
}

/// The length of the SGR sequence `text` starts with (`ESC [ 1 ; 31 m`).
fn sgr_len(text: &str) -> Option<usize> {
    let params = text.strip_prefix("\u{1b}[")?;
    let n = params
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (n <= 32 && params.as_bytes().get(n) == Some(&b'm')).then_some(2 + n + 1)
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
    #[test]
    fn layout_keeps_line_breaks_tabs_and_only_its_own_colours() {
        let hostile = "a\tb\n\u{1b}[2J\u{1b}]0;pwn\u{7}\u{9b}31m\u{202e}x\u{2028}\r";
        let plain = escaped_layout(hostile, false);
        assert_eq!(
            plain,
            "a\tb\n\\u{1b}[2J\\u{1b}]0;pwn\\u{7}\\u{9b}31m\\u{202e}x\\u{2028}\\r"
        );
        let coloured = escaped_layout("\u{1b}[1;31mFAILED\u{1b}[0m \u{1b}[2J", true);
        assert_eq!(coloured, "\u{1b}[1;31mFAILED\u{1b}[0m \\u{1b}[2J");
        assert!(!escaped_layout("\u{1b}[31m", false).contains('\u{1b}'));
        assert!(matches!(
            escaped_layout("ok\n\tfine", false),
            Cow::Borrowed(_)
        ));
        // Escaped text is left as it is: escaping twice changes nothing.
        assert_eq!(escaped_layout(&plain, false), plain);
    }
    #[test]
    fn json_is_escaped_as_json_and_keeps_its_value() {
        let value = "\u{9b}31m\u{202e}txt\u{7f}\u{2028}";
        let json = format!("{{\n\t\"k\": \"{value}\"\n}}");
        let shown = escaped_json(&json);
        assert!(
            !shown
                .chars()
                .any(|c| needs_escape(c) && c != '\n' && c != '\t')
        );
        assert_eq!(
            shown,
            "{\n\t\"k\": \"\\u009b31m\\u202etxt\\u007f\\u2028\"\n}"
        );
    }
}
