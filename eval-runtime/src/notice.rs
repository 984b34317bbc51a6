//! What the runtime tells a person on stderr outside any report.

/// A warning on the real stderr: threads started from a test inherit its
/// output capture, which would hide it.
pub(crate) fn warn(message: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "warning: {message}");
}

/// A note on the real stderr (uncaptured, like [`warn`]).
pub(crate) fn note(message: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "note: {message}");
}
