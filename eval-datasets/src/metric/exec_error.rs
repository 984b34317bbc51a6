//! what can be wrong with an external scorer's spec (apart
//! from `exec.rs`, which builds specs with `error.rs`'s types, so that
//! `error.rs` can hold these without the two files importing each other).

/// The longest `timeout_s` accepted (one hour).
pub(super) const MAX_TIMEOUT_S: f64 = 3600.0;
/// The longest command accepted, in bytes.
pub(super) const MAX_COMMAND_BYTES: usize = 4096;

/// What is wrong with an `exec` spec.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecSpecError {
    /// `exec` reached the catalogue's generic constructor (a spec of it is
    /// built by its own check): not expected of any caller.
    #[error("`{0}`: an external scorer is written `exec(command = \"...\") >= t`")]
    NotThroughCheck(String),
    /// No `command`.
    #[error(
        "`exec` needs a command: write `exec(command = \"python3 score.py\") >= 0.8` (or `exec:python3 score.py >= 0.8` in a list)"
    )]
    NoCommand,
    /// The command does not split into words (an unclosed quote), or is empty.
    #[error("`exec` command `{0}` does not split into words (an unclosed quote?), or is empty")]
    BadCommand(String),
    /// The command is too long.
    #[error("`exec` command is {0} bytes long, over the {MAX_COMMAND_BYTES}-byte limit")]
    CommandTooLong(usize),
    /// An option `exec` does not take, or of the wrong type.
    #[error(
        "`exec` option `{0}`: expected command = \"...\", name = \"...\", timeout_s = <seconds>, min = <number>, max = <number>"
    )]
    BadOption(String),
    /// `name` that is not an identifier.
    #[error("`exec` name `{0}` is not a name: use letters, digits and `_` (e.g. `cites_ticket`)")]
    BadName(String),
    /// The results name is a catalogue metric's (given or derived).
    #[error(
        "`exec` metric `{name}` would be named like the built-in metric `{name}`; give it a name of its own: `exec(command = \"{command}\", name = \"...\")`"
    )]
    NameTaken {
        /// The results name.
        name: String,
        /// The command, for the suggestion.
        command: String,
    },
    /// Two specs of one list with the same results name.
    #[error(
        "two metrics of the list are named `{0}`; give each `exec` metric a name of its own: `exec(command = \"...\", name = \"...\")`"
    )]
    NameTwice(String),
    /// `timeout_s` out of bounds.
    #[error("`exec` timeout_s = {0}: give a number of seconds above 0 and at most {MAX_TIMEOUT_S}")]
    BadTimeout(f64),
    /// `min` not below `max`, or not finite.
    #[error("`exec` range min = {0}, max = {1}: give finite numbers with min below max")]
    BadRange(f64, f64),
    /// No threshold.
    #[error(
        "`exec` metric `{0}` needs a threshold; its operator says which way is better: `>= 0.8` (higher is better) or `<= 0.2` (lower is better)"
    )]
    NoThreshold(String),
    /// The threshold outside the range.
    #[error(
        "`exec` metric `{name}` scores from {min} to {max}, so a threshold of {threshold} can never be met as intended"
    )]
    ThresholdOutOfRange {
        /// The results name.
        name: String,
        /// The threshold given.
        threshold: f64,
        /// `min`.
        min: f64,
        /// `max`.
        max: f64,
    },
    /// `exec@turn<n>`.
    #[error(
        "`exec` scores the whole sample, not one turn: the scorer is given every turn and answer"
    )]
    NotPerTurn,
}
