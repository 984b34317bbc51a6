//! Colour on a terminal: verdicts, gate lines and headings of what the
//! `evals` command, the harness and the attribute print.
//!
//! Whether to colour is decided here and only here, once per process and
//! stream, by anstream's rules: `NO_COLOR` set (not empty) never colours;
//! else `CLICOLOR_FORCE` set (not empty, not `0`) always does; else
//! `CLICOLOR=0` never does; else colour when the stream is a terminal (and
//! `TERM` is not `dumb`). Text written to files — results, JUnit, reports,
//! the failure report a test fails with — is never painted: only lines
//! printed to the terminal go through a [`Paint`] that is on.

use std::sync::OnceLock;

use anstyle::{AnsiColor, Style};

use super::results::Verdict;

/// Paints text for one output stream, or leaves it plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Paint {
    on: bool,
}

impl Paint {
    /// For standard output: decided once per process (see the module docs).
    pub fn stdout() -> Paint {
        static ON: OnceLock<bool> = OnceLock::new();
        Paint {
            on: *ON.get_or_init(|| colours(&std::io::stdout())),
        }
    }

    /// For standard error: decided once per process.
    pub fn stderr() -> Paint {
        static ON: OnceLock<bool> = OnceLock::new();
        Paint {
            on: *ON.get_or_init(|| colours(&std::io::stderr())),
        }
    }

    /// No colour (text for files, and for streams that are not terminals).
    pub const fn plain() -> Paint {
        Paint { on: false }
    }

    /// Colour whatever the stream (tests of what coloured output looks like).
    pub const fn always() -> Paint {
        Paint { on: true }
    }

    /// Whether this paints.
    pub fn is_on(self) -> bool {
        self.on
    }

    fn paint(self, style: Style, text: &str) -> String {
        if self.on {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// A pass (green).
    pub fn pass(self, text: &str) -> String {
        self.paint(AnsiColor::Green.on_default(), text)
    }

    /// A failure (bold red).
    pub fn fail(self, text: &str) -> String {
        self.paint(AnsiColor::Red.on_default().bold(), text)
    }

    /// Something that could not be scored (magenta).
    pub fn error(self, text: &str) -> String {
        self.paint(AnsiColor::Magenta.on_default(), text)
    }

    /// Neither passed nor failed: a gate not judged, a note (yellow).
    pub fn note(self, text: &str) -> String {
        self.paint(AnsiColor::Yellow.on_default(), text)
    }

    /// A heading (bold).
    pub fn heading(self, text: &str) -> String {
        self.paint(Style::new().bold(), text)
    }

    /// Less important text: paths, usage (dimmed).
    pub fn dim(self, text: &str) -> String {
        self.paint(Style::new().dimmed(), text)
    }

    /// `text` in the colour of `verdict`.
    pub fn verdict(self, verdict: Verdict, text: &str) -> String {
        match verdict {
            Verdict::Pass => self.pass(text),
            Verdict::Fail => self.fail(text),
            Verdict::Inconclusive => self.note(text),
            Verdict::Error => self.error(text),
        }
    }
}

/// anstream's choice for `stream` (it reads `NO_COLOR`, `CLICOLOR`,
/// `CLICOLOR_FORCE` and `TERM`, and asks whether `stream` is a terminal).
fn colours<S: anstream::stream::RawStream>(stream: &S) -> bool {
    anstream::AutoStream::choice(stream) != anstream::ColorChoice::Never
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paints_only_when_on() {
        let on = Paint::always();
        assert_eq!(on.fail("FAILED"), "\u{1b}[1m\u{1b}[31mFAILED\u{1b}[0m");
        assert_eq!(on.pass("passed"), "\u{1b}[32mpassed\u{1b}[0m");
        assert!(
            on.verdict(Verdict::Error, "ERROR")
                .starts_with("\u{1b}[35m")
        );
        let off = Paint::plain();
        for text in [
            off.fail("FAILED"),
            off.pass("passed"),
            off.heading("rag"),
            off.verdict(Verdict::Error, "ERROR"),
        ] {
            assert!(!text.contains('\u{1b}'), "{text:?}");
        }
        assert_eq!(off.note("not judged"), "not judged");
    }
}
