//! Markdown text from what results files hold: on one line, Markdown's
//! punctuation backslash-escaped (so a `*`, a `|`, a `$` or a `<tag>` in an
//! answer stays text and cannot break a table or start math), control
//! characters shown as `\u{..}`, long texts cut. Used by the CI summaries
//! and by comparisons.

use crate::model::one_line;

/// How much of a name a table cell shows, in characters.
const NAME_CHARS: usize = 120;

/// `s` as Markdown text on one line: cut to `max` characters, control
/// characters shown escaped, and every character Markdown (or GitHub's
/// math and tables) would read as syntax backslash-escaped.
pub(crate) fn inline(s: &str, max: usize) -> String {
    let flat = one_line(s, max);
    let mut out = String::with_capacity(flat.len() + 8);
    for (i, c) in flat.chars().enumerate() {
        let block_start = i == 0 && matches!(c, '#' | '+' | '-' | '=' | '>' | ':');
        if block_start
            || matches!(
                c,
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '$' | '!'
            )
        {
            out.push('\\');
        }
        out.push(c);
    }
    // `1.` or `1)` at the start would begin a numbered list.
    if let Some(end) = out.find(|c: char| !c.is_ascii_digit())
        && end > 0
        && matches!(out[end..].chars().next(), Some('.' | ')'))
    {
        out.insert(end, '\\');
    }
    out
}

/// `s` as a code span on one line (`` `qa::b` ``), fenced with more
/// backticks than it holds; in a table cell its `|` are escaped, as GitHub
/// requires even inside code.
pub(crate) fn code(s: &str, in_table: bool) -> String {
    let flat = one_line(s, NAME_CHARS);
    let mut longest = 0;
    let mut run = 0;
    for c in flat.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if flat.starts_with('`') || flat.ends_with('`') || flat.is_empty() {
        " "
    } else {
        ""
    };
    let body = if in_table {
        flat.replace('|', "\\|")
    } else {
        flat
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

pub(crate) fn mean(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.4}"))
}

pub(crate) fn percent(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |v| format!("{:.1}%", v * 100.0))
}
