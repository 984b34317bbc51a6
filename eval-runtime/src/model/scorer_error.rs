//! why an external scorer (`exec(command = ...)`) gave no
//! score for one sample. Every message names the command; what the scorer
//! printed on stderr (its last 4 KiB) is quoted on one line, control
//! characters (ANSI escapes) shown escaped, never sent to the terminal.

/// Why an external scorer gave no score for one sample: that metric's
/// error on that sample, never the run's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScorerError {
    /// The command could not be started (no such program, not executable).
    #[error("scorer `{command}` could not be started in {dir}: {error}")]
    Spawn {
        /// The command as written.
        command: String,
        /// The directory it was started in.
        dir: String,
        /// Why (the system's message).
        error: String,
    },
    /// It ran longer than its `timeout_s`; its process group was killed.
    #[error("scorer `{command}` took longer than {timeout_s}s and was stopped (raise `timeout_s`){}", quoted(.stderr))]
    Timeout {
        /// The command as written.
        command: String,
        /// The limit, seconds.
        timeout_s: f64,
        /// The end of its stderr, on one line.
        stderr: String,
    },
    /// It exited unsuccessfully (or was killed by a signal).
    #[error("scorer `{command}` failed ({status}){}", quoted(.stderr))]
    Failed {
        /// The command as written.
        command: String,
        /// `exit status 2`, `signal 9`.
        status: String,
        /// The end of its stderr, on one line.
        stderr: String,
    },
    /// It printed more on stdout than a score takes.
    #[error(
        "scorer `{command}` printed more than {limit} bytes on stdout and was stopped: print one JSON object such as {{\"score\": 0.9, \"reason\": \"...\"}}"
    )]
    TooMuchOutput {
        /// The command as written.
        command: String,
        /// The limit, bytes.
        limit: usize,
    },
    /// Its stdout is not a score.
    #[error("scorer `{command}` printed no score: expected {{\"score\": <number>, \"reason\": \"...\"}}, {{\"pass\": true}} or a bare number, got `{stdout}`{}", quoted(.stderr))]
    NotAScore {
        /// The command as written.
        command: String,
        /// The start of what it printed, on one line.
        stdout: String,
        /// The end of its stderr, on one line.
        stderr: String,
    },
    /// Its score lies outside the metric's range.
    #[error(
        "scorer `{command}` scored {score}, outside the metric's range {min}..{max} (set `min` and `max` to the scorer's range)"
    )]
    OutOfRange {
        /// The command as written.
        command: String,
        /// The score printed.
        score: f64,
        /// The range's low end.
        min: f64,
        /// The range's high end.
        max: f64,
    },
    /// Talking to it failed (its stdin or stdout).
    #[error("scorer `{command}`: {error}")]
    Io {
        /// The command as written.
        command: String,
        /// The system's message.
        error: String,
    },
}

/// `; stderr: "<text>"`, or nothing when there was none.
fn quoted(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr: \"{stderr}\"")
    }
}
