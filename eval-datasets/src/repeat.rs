//! How many times the agent answers each sample: `repeat = 5` (a fixed
//! number of runs) or `repeat = "auto"` / `"auto:20"` (runs added only to
//! samples whose verdict is still in doubt, up to a maximum).
//!
//! The attribute, the manifest's `repeat:`, the harness and `--repeat` all
//! parse the same text with [`Repeat::parse`].

use std::fmt;

/// Most runs of the agent per sample.
pub const MAX_REPEAT: u32 = 100;
/// Runs `auto` makes before it first looks at a sample's verdict.
pub const AUTO_FIRST_RUNS: u32 = 3;
/// Most runs `auto` makes when no maximum is given.
pub const AUTO_DEFAULT_MAX: u32 = 10;

/// Agent runs per sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Repeat {
    /// Exactly this many runs (1 = no repeat).
    Runs(u32),
    /// [`AUTO_FIRST_RUNS`] runs, then more while a metric's verdict is
    /// inconclusive — the runs doubling at each look (3, 6, 12, ...) — up
    /// to `max` runs.
    Auto {
        /// Most runs of one sample.
        max: u32,
    },
}

impl Default for Repeat {
    fn default() -> Self {
        Repeat::Runs(1)
    }
}

impl From<u32> for Repeat {
    fn from(n: u32) -> Self {
        Repeat::Runs(n.clamp(1, MAX_REPEAT))
    }
}

/// Why a `repeat` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected a number of agent runs per sample from 1 to {MAX_REPEAT}, `auto` or `auto:MAX` (MAX from {AUTO_FIRST_RUNS} to {MAX_REPEAT})"
)]
pub struct RepeatError {
    /// The text given.
    pub given: String,
}

impl Repeat {
    /// `5`, `auto` (up to [`AUTO_DEFAULT_MAX`] runs) or `auto:20`.
    pub fn parse(text: &str) -> Result<Repeat, RepeatError> {
        let error = || RepeatError {
            given: text.to_string(),
        };
        let t = text.trim();
        if let Some(rest) = t.strip_prefix("auto") {
            let max = match rest.strip_prefix(':') {
                None if rest.is_empty() => AUTO_DEFAULT_MAX,
                Some(n) => n.trim().parse::<u32>().map_err(|_| error())?,
                None => return Err(error()),
            };
            return if (AUTO_FIRST_RUNS..=MAX_REPEAT).contains(&max) {
                Ok(Repeat::Auto { max })
            } else {
                Err(error())
            };
        }
        match t.parse::<u32>() {
            Ok(n) if (1..=MAX_REPEAT).contains(&n) => Ok(Repeat::Runs(n)),
            _ => Err(error()),
        }
    }

    /// Runs made before the verdict is first looked at.
    pub fn first_runs(self) -> u32 {
        match self {
            Repeat::Runs(n) => n.max(1),
            Repeat::Auto { max } => AUTO_FIRST_RUNS.min(max),
        }
    }

    /// Most runs of one sample.
    pub fn max_runs(self) -> u32 {
        match self {
            Repeat::Runs(n) => n.max(1),
            Repeat::Auto { max } => max.max(AUTO_FIRST_RUNS),
        }
    }

    /// Whether runs are added while a verdict is in doubt.
    pub fn is_auto(self) -> bool {
        matches!(self, Repeat::Auto { .. })
    }

    /// The numbers of runs after which the verdict is looked at: the one
    /// number of a fixed repeat; for `auto`, [`AUTO_FIRST_RUNS`] doubling
    /// (3, 6, 12, 24, ...) below the maximum, then the maximum. Few looks
    /// keep the error rate each one is allowed (the 5% split over them)
    /// from shrinking fast.
    pub fn look_points(self) -> Vec<u32> {
        let (first, max) = (self.first_runs(), self.max_runs());
        let mut points = Vec::new();
        let mut n = first;
        while n < max {
            points.push(n);
            n *= 2;
        }
        points.push(max);
        points
    }

    /// How many times the verdict may be looked at before runs stop (the
    /// error rate is split over them).
    pub fn looks(self) -> u32 {
        self.look_points().len() as u32
    }
}

impl fmt::Display for Repeat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Repeat::Runs(n) => write!(f, "{n}"),
            Repeat::Auto { max } => write!(f, "auto:{max}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_auto_parse() {
        assert_eq!(Repeat::parse("5"), Ok(Repeat::Runs(5)));
        assert_eq!(Repeat::parse(" auto "), Ok(Repeat::Auto { max: 10 }));
        assert_eq!(Repeat::parse("auto:20"), Ok(Repeat::Auto { max: 20 }));
        for bad in ["0", "101", "auto:2", "auto:", "autox", "auto:101", "-1", ""] {
            assert!(Repeat::parse(bad).is_err(), "{bad}");
        }
        let e = Repeat::parse("auto:2").unwrap_err();
        assert_eq!(e.given, "auto:2");
        assert!(e.to_string().starts_with("expected a number"), "{e}");
        assert_eq!(Repeat::Auto { max: 20 }.to_string(), "auto:20");
        assert_eq!(
            Repeat::parse(&Repeat::Runs(7).to_string()),
            Ok(Repeat::Runs(7))
        );
    }

    #[test]
    fn auto_looks_as_the_runs_double() {
        let auto = Repeat::Auto { max: 10 };
        assert_eq!(
            (auto.first_runs(), auto.max_runs(), auto.looks()),
            (3, 10, 3)
        );
        assert_eq!(auto.look_points(), vec![3, 6, 10]);
        assert_eq!(Repeat::Auto { max: 20 }.look_points(), vec![3, 6, 12, 20]);
        assert_eq!(Repeat::Auto { max: 3 }.look_points(), vec![3]);
        assert_eq!(Repeat::Auto { max: 6 }.look_points(), vec![3, 6]);
        let fixed = Repeat::Runs(5);
        assert_eq!(
            (fixed.first_runs(), fixed.max_runs(), fixed.looks()),
            (5, 5, 1)
        );
        assert_eq!(fixed.look_points(), vec![5]);
        assert_eq!(Repeat::from(0), Repeat::Runs(1));
    }
}
