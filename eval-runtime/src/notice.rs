//! What the runtime tells a person on stderr outside any report.

/// A warning on the real stderr: threads started from a test inherit its
/// output capture, which would hide it.
pub(crate) fn warn(message: &str) {
    use std::io::Write as _;
    // issue37:escape: the one rule, whatever the message carries.
    let message = eval_datasets::terminal::escaped_lines(message);
    let _ = writeln!(std::io::stderr(), "warning: {message}");
}

/// A note on the real stderr (uncaptured, like [`warn`]).
pub(crate) fn note(message: &str) {
    use std::io::Write as _;
    // issue37:escape
    let message = eval_datasets::terminal::escaped_lines(message);
    let _ = writeln!(std::io::stderr(), "note: {message}");
}
