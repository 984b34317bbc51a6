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

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static GONE: AtomicBool = AtomicBool::new(false);

/// Writes `args` to stdout, unless stdout is gone.
pub fn write(args: std::fmt::Arguments<'_>) {
    if GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
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
    let mut err = std::io::stderr().lock();
    if err.write_fmt(args).and_then(|()| err.flush()).is_err() {
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
