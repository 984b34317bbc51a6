//! What is generated: the query types, the difficulties, and the mix of
//! each a run asks for.

/// The kinds of question generated: seed 002's query types (factual,
/// analytical, procedural, multi-hop) and its edge cases (ambiguous,
/// temporal, contradictory, unanswerable, out of scope).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueryType {
    /// Who, what, when, where: one specific fact of one passage (ragas'
    /// single-hop specific).
    Factual,
    /// How, why, compare: an explanation or comparison of a theme several
    /// passages share (ragas' multi-hop abstract).
    Analytical,
    /// How to, steps to: a procedure one passage describes.
    Procedural,
    /// A concrete question needing passages of two documents (ragas'
    /// multi-hop specific).
    MultiHop,
    /// Edge case: a question with several readings.
    Ambiguous,
    /// Edge case: the answer depends on a time or a version.
    Temporal,
    /// Edge case: two documents give different answers.
    Contradictory,
    /// Edge case: on the corpus's subject, but not answered by it.
    Unanswerable,
    /// Edge case: outside the corpus's domain.
    OutOfScope,
}

impl QueryType {
    /// Every type, in the order of the default mix.
    pub const ALL: [QueryType; 9] = [
        QueryType::Factual,
        QueryType::Analytical,
        QueryType::Procedural,
        QueryType::MultiHop,
        QueryType::Ambiguous,
        QueryType::Temporal,
        QueryType::Contradictory,
        QueryType::Unanswerable,
        QueryType::OutOfScope,
    ];

    /// Its name in `metadata.query_type` and in a mix.
    pub fn name(self) -> &'static str {
        match self {
            QueryType::Factual => "factual",
            QueryType::Analytical => "analytical",
            QueryType::Procedural => "procedural",
            QueryType::MultiHop => "multi_hop",
            QueryType::Ambiguous => "ambiguous",
            QueryType::Temporal => "temporal",
            QueryType::Contradictory => "contradictory",
            QueryType::Unanswerable => "unanswerable",
            QueryType::OutOfScope => "out_of_scope",
        }
    }

    /// The type `name` names (`-` and `_` alike). The names of earlier
    /// versions (ragas': `single_hop`, `abstract`) still read.
    pub fn parse(name: &str) -> Option<QueryType> {
        let n = name.trim().to_ascii_lowercase().replace('-', "_");
        match n.as_str() {
            "single_hop" | "single" => Some(QueryType::Factual),
            "abstract" | "summary" => Some(QueryType::Analytical),
            "multi" | "multihop" => Some(QueryType::MultiHop),
            _ => QueryType::ALL.into_iter().find(|t| t.name() == n),
        }
    }

    /// Seed 002's edge-case category (`metadata.edge_case`): its edge cases,
    /// multi-hop among them.
    pub fn edge_case(self) -> Option<&'static str> {
        match self {
            QueryType::Factual | QueryType::Analytical | QueryType::Procedural => None,
            other => Some(other.name()),
        }
    }
}

/// How hard a question is to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Difficulty {
    /// A direct lookup.
    Easy,
    /// A paraphrase.
    Medium,
    /// One evolution step further (reasoning, comparison, constraint).
    Hard,
}

impl Difficulty {
    /// Every difficulty.
    pub const ALL: [Difficulty; 3] = [Difficulty::Easy, Difficulty::Medium, Difficulty::Hard];

    /// Its name in `metadata.difficulty`.
    pub fn name(self) -> &'static str {
        match self {
            Difficulty::Easy => "easy",
            Difficulty::Medium => "medium",
            Difficulty::Hard => "hard",
        }
    }

    /// The difficulty `name` names.
    pub fn parse(name: &str) -> Option<Difficulty> {
        let n = name.trim().to_ascii_lowercase();
        Difficulty::ALL.into_iter().find(|d| d.name() == n)
    }
}

/// Proportions of values: `single_hop=4,multi_hop=2,abstract=2` (weights, any
/// positive numbers) or `single_hop,multi_hop` (equal weights).
#[derive(Debug, Clone, PartialEq)]
pub struct Mix<T> {
    weights: Vec<(T, f64)>,
}

impl<T: Copy + PartialEq> Mix<T> {
    /// A mix of `weights` (each > 0).
    pub fn new(weights: Vec<(T, f64)>) -> Mix<T> {
        Mix {
            weights: weights
                .into_iter()
                .filter(|(_, w)| w.is_finite() && *w > 0.0)
                .collect(),
        }
    }

    /// The values and their weights.
    pub fn weights(&self) -> &[(T, f64)] {
        &self.weights
    }

    /// Parses `text`; `name` reads one value.
    pub fn parse(text: &str, name: impl Fn(&str) -> Option<T>) -> Result<Mix<T>, MixError> {
        let mut weights: Vec<(T, f64)> = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, weight) = match part.split_once(['=', ':']) {
                Some((k, w)) => {
                    let w: f64 = w.trim().parse().map_err(|_| MixError::NotANumber {
                        part: part.to_string(),
                        weight: w.trim().to_string(),
                    })?;
                    (k.trim(), w)
                }
                None => (part, 1.0),
            };
            if !weight.is_finite() || weight < 0.0 {
                return Err(MixError::BadWeight {
                    part: part.to_string(),
                });
            }
            let value = name(key).ok_or_else(|| MixError::Unknown {
                value: key.to_string(),
            })?;
            if weights.iter().any(|(v, _)| *v == value) {
                return Err(MixError::Twice {
                    value: key.to_string(),
                });
            }
            weights.push((value, weight));
        }
        let mix = Mix::new(weights);
        if mix.weights.is_empty() {
            return Err(MixError::Empty);
        }
        Ok(mix)
    }
}

/// Why a mix (`--mix`, `--types`, `--difficulty`) could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MixError {
    /// A weight that is not a number.
    #[error("`{part}`: the weight `{weight}` is not a number")]
    NotANumber {
        /// The `name=weight` part.
        part: String,
        /// The weight as written.
        weight: String,
    },
    /// A weight below 0, or not finite.
    #[error("`{part}`: a weight is a number ≥ 0")]
    BadWeight {
        /// The `name=weight` part.
        part: String,
    },
    /// A name that is no value of the mix.
    #[error("unknown value `{value}`")]
    Unknown {
        /// The name as written.
        value: String,
    },
    /// A value given twice.
    #[error("`{value}` is given twice")]
    Twice {
        /// The name as written the second time.
        value: String,
    },
    /// Nothing weighs more than 0.
    #[error("the mix gives no value a weight above 0")]
    Empty,
}

impl Default for Mix<QueryType> {
    /// Seed 002's four query types (factual twice the others) and every
    /// edge case once: 10 of 15 ordinary questions, 5 edge cases.
    fn default() -> Self {
        Mix::new(vec![
            (QueryType::Factual, 4.0),
            (QueryType::Analytical, 2.0),
            (QueryType::Procedural, 2.0),
            (QueryType::MultiHop, 2.0),
            (QueryType::Ambiguous, 1.0),
            (QueryType::Temporal, 1.0),
            (QueryType::Contradictory, 1.0),
            (QueryType::Unanswerable, 1.0),
            (QueryType::OutOfScope, 1.0),
        ])
    }
}

impl Default for Mix<Difficulty> {
    /// Easy, medium and hard alike.
    fn default() -> Self {
        Mix::new(Difficulty::ALL.iter().map(|d| (*d, 1.0)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_weights_or_names() {
        let m = Mix::parse("factual=3, multi-hop:1,out_of_scope", QueryType::parse).unwrap();
        assert_eq!(
            m.weights(),
            &[
                (QueryType::Factual, 3.0),
                (QueryType::MultiHop, 1.0),
                (QueryType::OutOfScope, 1.0)
            ]
        );
        // Seed 002's names, and the earlier (ragas') ones still read.
        assert_eq!(
            Mix::parse(
                "single_hop,abstract,procedural,temporal,contradictory",
                QueryType::parse
            )
            .unwrap()
            .weights(),
            &[
                (QueryType::Factual, 1.0),
                (QueryType::Analytical, 1.0),
                (QueryType::Procedural, 1.0),
                (QueryType::Temporal, 1.0),
                (QueryType::Contradictory, 1.0)
            ]
        );
        assert!(
            Mix::parse("single_hop=x", QueryType::parse)
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert!(
            Mix::parse("nope", QueryType::parse)
                .unwrap_err()
                .to_string()
                .contains("`nope`")
        );
        assert!(
            Mix::parse("easy,easy", Difficulty::parse)
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        assert!(Mix::parse("easy=0", Difficulty::parse).is_err());
    }
}
