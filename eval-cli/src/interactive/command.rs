//! The session's commands: a line is a prompt, or a `:command`.

use std::path::PathBuf;

use eval_datasets::terminal::needs_escape;

/// What a line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A prompt: sent at once (a new sample, or the last turn of the
    /// conversation being built).
    Prompt(String),
    /// `:turn TEXT`: a user turn added to the conversation, not sent.
    Turn(String),
    /// `:send`: the conversation sent.
    Send,
    /// `:accept`: the answer becomes the expected answer.
    Accept,
    /// `:expect TEXT`: the expected answer set (`\n` for a new line).
    Expect(String),
    /// `:edit`: the expected answer edited on the line.
    Edit,
    /// `:tag A B`: tags added.
    Tag(Vec<String>),
    /// `:untag A`: tags removed.
    Untag(Vec<String>),
    /// `:score`: the answer scored again.
    Score,
    /// `:metrics SPEC`: the metrics changed.
    Metrics(String),
    /// `:show`: the sample as it stands.
    Show,
    /// `:new`: the sample dropped, a new one started.
    New,
    /// `:dataset FILE`: the file samples are appended to.
    Dataset(PathBuf),
    /// `:append`: the sample appended to the dataset file.
    Append,
    /// `:help`.
    Help,
    /// `:quit`.
    Quit,
}

/// What `:help` prints.
pub const HELP: &str = "\
Type a prompt and press Enter: it is sent to the agent, and its answer,
context, tool calls, latency, tokens and scores are shown.

  :turn TEXT      add a user turn without sending it (a conversation; after
                  an answer, a follow-up); the next prompt or :send sends all
  :send           send the conversation
  :accept         make the answer the expected answer (and the tool calls
                  it made the expected ones)
  :expect TEXT    set the expected answer (\\n for a new line; empty: none)
  :edit           edit the expected answer (starting from the answer)
  :tag A B ...    add tags            :untag A ...   remove tags
  :score          score the answer again
  :metrics SPEC   score with these metrics, e.g. contains, partial_match >= 0.5
  :show           the sample as it stands
  :append         append the sample to the dataset file (also :a, :w, :save)
  :dataset FILE   the file samples are appended to (.jsonl, .ndjson, .csv)
  :new            drop the sample and start a new one
  :help           this list            :quit (or Ctrl-D)   end the session
A line starting with `::` is a prompt starting with `:`.
";

/// Parses one line. A line not starting with `:` is a prompt (its spaces
/// kept); `::x` is the prompt `:x`.
pub fn parse(line: &str) -> Result<Command, String> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Err("an empty line: type a prompt or a command".into());
    }
    if let Some(prompt) = trimmed.strip_prefix("::") {
        return Ok(Command::Prompt(format!(":{prompt}")));
    }
    let Some(rest) = trimmed.strip_prefix(':') else {
        return Ok(Command::Prompt(trimmed.to_string()));
    };
    let (name, arg) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest, ""),
    };
    let needs = |what: &str| format!(":{name} needs {what}");
    let words = || {
        arg.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let command = match name.to_ascii_lowercase().as_str() {
        "help" | "h" | "?" => Command::Help,
        "quit" | "q" | "exit" => Command::Quit,
        "turn" | "t" if !arg.is_empty() => Command::Turn(arg.to_string()),
        "turn" | "t" => return Err(needs("the turn's text")),
        "send" | "s" => Command::Send,
        "accept" | "ok" => Command::Accept,
        "expect" | "e" => Command::Expect(arg.to_string()),
        "edit" => Command::Edit,
        "tag" if !arg.is_empty() => Command::Tag(words()),
        "untag" if !arg.is_empty() => Command::Untag(words()),
        "tag" | "untag" => return Err(needs("one or more tags")),
        "score" => Command::Score,
        "metrics" | "m" if !arg.is_empty() => Command::Metrics(arg.to_string()),
        "metrics" | "m" => return Err(needs("metrics, e.g. contains, partial_match >= 0.5")),
        "show" => Command::Show,
        "new" | "clear" => Command::New,
        "dataset" if !arg.is_empty() => Command::Dataset(PathBuf::from(arg)),
        "dataset" => return Err(needs("a file (.jsonl, .ndjson or .csv)")),
        "append" | "a" | "w" | "save" => Command::Append,
        other => return Err(format!("unknown command `:{other}`")),
    };
    Ok(command)
}

/// `text` on one line, safe to put on the terminal (the line `:edit`
/// starts from is the agent's answer): a backslash doubled, a new line as
/// `\n`, a carriage return dropped, and every other character that would
/// act on the terminal ([`needs_escape`]: ESC, C1 controls, a right-to-left
/// override...) as `\u{hex}`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\r' => {}
            '\n' => out.push_str("\\n"),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// The text [`escape`] gives back: `\n` a new line, `\\` a backslash,
/// `\u{hex}` the character [`escape`] wrote so (one that [`needs_escape`];
/// any other backslash kept as it is).
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('n') {
            out.push('\n');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('\\') {
            out.push('\\');
            rest = tail;
        } else if let Some((c, tail)) = escaped_char(after) {
            out.push(c);
            rest = tail;
        } else {
            out.push('\\');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `u{hex}` at the start of `text`, when it names a character that
/// [`needs_escape`]: the character and what follows.
fn escaped_char(text: &str) -> Option<(char, &str)> {
    let body = text.strip_prefix("u{")?;
    // At most six hex digits: the `}` is looked for that far only.
    let (end, _) = body.char_indices().take(7).find(|(_, c)| *c == '}')?;
    let hex = &body[..end];
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
    needs_escape(c).then_some((c, &body[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prompts_unless_commands() {
        assert_eq!(
            parse("  What is RAG?  "),
            Ok(Command::Prompt("What is RAG?".into()))
        );
        assert_eq!(parse("::x"), Ok(Command::Prompt(":x".into())));
        assert_eq!(
            parse(":turn hi there"),
            Ok(Command::Turn("hi there".into()))
        );
        assert_eq!(
            parse(":tag a  b"),
            Ok(Command::Tag(vec!["a".into(), "b".into()]))
        );
        assert_eq!(parse(":EXPECT"), Ok(Command::Expect(String::new())));
        assert_eq!(parse(":w"), Ok(Command::Append));
        assert!(
            parse(":tag")
                .unwrap_err()
                .contains("needs one or more tags")
        );
        assert!(
            parse(":nope")
                .unwrap_err()
                .contains("unknown command `:nope`")
        );
        assert!(parse("   ").is_err());
        // No input makes it panic.
        for line in [":", ": ", "::", "\u{0}", ":\u{feff}", "é:", ":tag \t"] {
            let _ = parse(line);
        }
    }

    #[test]
    fn escaping_round_trips() {
        for text in ["a\nb", "back\\slash\\n", "", "\\", "trailing\\"] {
            assert_eq!(unescape(&escape(text)), text, "{text:?}");
            assert!(!escape(text).contains('\n'));
        }
        assert_eq!(unescape("x\\ty"), "x\\ty");
    }

    #[test]
    fn the_line_to_edit_holds_no_terminal_control() {
        let answer = "\u{1b}[31mred\u{9b}0m\u{202e}txt\ttab \\u{1b} kept";
        let line = escape(answer);
        assert!(!line.chars().any(needs_escape), "{line:?}");
        assert_eq!(
            line,
            "\\u{1b}[31mred\\u{9b}0m\\u{202e}txt\\u{9}tab \\\\u{1b} kept"
        );
        assert_eq!(unescape(&line), answer);
        // Only what `escape` writes is read back as a character.
        for kept in ["\\u{41}", "\\u{}", "\\u{110000}", "\\u{1b", "\\u", "\\"] {
            assert_eq!(unescape(kept), kept, "{kept:?}");
        }
    }
}
