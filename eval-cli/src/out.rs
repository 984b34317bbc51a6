//! Standard output that never kills the process.
//!
//! `println!` panics when stdout is a pipe whose reader has gone
//! (`evals stats big.jsonl | head`); restoring the default `SIGPIPE`
//! disposition instead would also let a write to a socket the agent closed
//! kill the process without a word. So the command writes through
//! [`write`](fn@write): the first failed write to stdout stops further output
//! (quietly when the reader went away, with one warning otherwise), and the
//! command goes on — its results file and exit code are as they would be.

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
            eprintln!("warning: cannot write to stdout ({e}); output stops here");
        }
    }
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
