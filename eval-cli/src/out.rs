//! Standard output that never kills the process.
//!
//! `println!` panics when stdout is a pipe whose reader has gone
//! (`evals stats big.jsonl | head`); restoring the default `SIGPIPE`
//! disposition instead would also let a write to a socket the agent closed
//! kill the process without a word. So the command writes through
//! [`write`](fn@write): the first failed write to stdout stops further output
//! (quietly when the reader went away, with one warning otherwise), and the
//! command goes on — its results file and exit code are as they would be.
//!
//! Standard error likewise (`evals evaluate … 2>&1 | head -4` closes both):
//! [`write_err`] drops what cannot be written, so a closed stderr never
//! turns a run's exit code into a panic's 101.
//!
//! Both apply the one escaping rule to everything they write
//! ([`escaped_layout`]): text from outside is escaped where a line is made,
//! and anything missed there (a file name in an error, a server's reply) is
//! shown escaped here, never sent raw; only the command's own line breaks,
//! tabs and (on a colouring stream) colour codes get through.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use eval_datasets::terminal::escaped_layout;
use eval_runtime::__cli::Paint;

/// Formats `args` into `out` through [`escaped_layout`], piece by piece
/// (a large output is never copied whole), and flushes. A piece is a
/// whole argument, so the command's own colour codes are never cut; a cut
/// could only escape more, never less.
fn write_escaped(
    out: impl Write,
    colour: bool,
    args: std::fmt::Arguments<'_>,
) -> std::io::Result<()> {
    struct Escaping<W> {
        out: W,
        colour: bool,
        error: Option<std::io::Error>,
    }
    impl<W: Write> std::fmt::Write for Escaping<W> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let shown = escaped_layout(s, self.colour);
            self.out.write_all(shown.as_bytes()).map_err(|e| {
                self.error = Some(e);
                std::fmt::Error
            })
        }
    }
    let mut w = Escaping {
        out,
        colour,
        error: None,
    };
    match std::fmt::write(&mut w, args) {
        Ok(()) => w.out.flush(),
        Err(_) => Err(w
            .error
            .unwrap_or_else(|| std::io::Error::other("a value could not be formatted"))),
    }
}

static GONE: AtomicBool = AtomicBool::new(false);

/// Writes `args` to stdout, unless stdout is gone.
pub fn write(args: std::fmt::Arguments<'_>) {
    if GONE.load(Ordering::Relaxed) {
        return;
    }
    let out = std::io::stdout().lock();
    if let Err(e) = write_escaped(out, Paint::stdout().is_on(), args) {
        GONE.store(true, Ordering::Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            write_err(format_args!(
                "warning: cannot write to stdout ({e}); output stops here\n"
            ));
        }
    }
}

static ERR_GONE: AtomicBool = AtomicBool::new(false);

/// Writes `args` to stderr, unless stderr is gone (then nothing more is
/// tried: there is nowhere left to say anything).
pub fn write_err(args: std::fmt::Arguments<'_>) {
    if ERR_GONE.load(Ordering::Relaxed) {
        return;
    }
    let err = std::io::stderr().lock();
    if write_escaped(err, Paint::stderr().is_on(), args).is_err() {
        ERR_GONE.store(true, Ordering::Relaxed);
    }
}

/// `eprint!` through [`write_err`].
macro_rules! err {
    ($($arg:tt)*) => { $crate::out::write_err(format_args!($($arg)*)) };
}

/// `eprintln!` through [`write_err`].
macro_rules! errln {
    () => { $crate::out::write_err(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `print!` through [`write`](fn@write).
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write(format_args!($($arg)*)) };
}

/// `println!` through [`write`](fn@write).
macro_rules! outln {
    () => { $crate::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `println!` of JSON text through [`write`](fn@write): characters the
/// terminal rule escapes are written as JSON escapes (`\u202e`), so the
/// output stays the same JSON value.
macro_rules! outjson {
    ($text:expr) => {
        $crate::out::write(format_args!(
            "{}\n",
            eval_datasets::terminal::escaped_json(&$text)
        ))
    };
}
