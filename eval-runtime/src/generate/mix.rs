//! What is generated: the query types, the difficulties, and the mix of
//! each a run asks for.

/// The kinds of question generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueryType {
    /// One specific fact of one passage (ragas' single-hop specific).
    SingleHop,
    /// A concrete question needing passages of two documents (ragas'
    /// multi-hop specific).
    MultiHop,
    /// An explanation or summary of a theme several passages share (ragas'
    /// multi-hop abstract).
    Abstract,
    /// Edge case: a question with several readings.
    Ambiguous,
    /// Edge case: on the corpus's subject, but not answered by it.
    Unanswerable,
    /// Edge case: outside the corpus's domain.
    OutOfScope,
}

impl QueryType {
    /// Every type, in the order of the default mix.
    pub const ALL: [QueryType; 6] = [
        QueryType::SingleHop,
        QueryType::MultiHop,
        QueryType::Abstract,
        QueryType::Ambiguous,
        QueryType::Unanswerable,
        QueryType::OutOfScope,
    ];

    /// Its name in `metadata.query_type` and in a mix.
    pub fn name(self) -> &'static str {
        match self {
            QueryType::SingleHop => "single_hop",
            QueryType::MultiHop => "multi_hop",
            QueryType::Abstract => "abstract",
            QueryType::Ambiguous => "ambiguous",
            QueryType::Unanswerable => "unanswerable",
            QueryType::OutOfScope => "out_of_scope",
        }
    }

    /// The type `name` names (`-` and `_` alike; `factual` is single-hop,
    /// `summary` abstract).
    pub fn parse(name: &str) -> Option<QueryType> {
        let n = name.trim().to_ascii_lowercase().replace('-', "_");
        match n.as_str() {
            "factual" | "single" => Some(QueryType::SingleHop),
            "multi" => Some(QueryType::MultiHop),
            "summary" => Some(QueryType::Abstract),
            _ => QueryType::ALL.into_iter().find(|t| t.name() == n),
        }
    }

    /// Seed 002's edge-case category (`metadata.edge_case`), for the edge cases.
    pub fn edge_case(self) -> Option<&'static str> {
        match self {
            QueryType::Ambiguous => Some("ambiguous"),
            QueryType::Unanswerable => Some("unanswerable"),
            QueryType::OutOfScope => Some("out_of_scope"),
            _ => None,
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
    /// 40% single-hop, 20% multi-hop, 20% abstract, and 20% edge cases
    /// (ambiguous, unanswerable, out of scope alike).
    fn default() -> Self {
        Mix::new(vec![
            (QueryType::SingleHop, 6.0),
            (QueryType::MultiHop, 3.0),
            (QueryType::Abstract, 3.0),
            (QueryType::Ambiguous, 1.0),
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
        let m = Mix::parse("single_hop=3, multi-hop:1,out_of_scope", QueryType::parse).unwrap();
        assert_eq!(
            m.weights(),
            &[
                (QueryType::SingleHop, 3.0),
                (QueryType::MultiHop, 1.0),
                (QueryType::OutOfScope, 1.0)
            ]
        );
        assert_eq!(
            Mix::parse("factual,summary", QueryType::parse)
                .unwrap()
                .weights(),
            &[(QueryType::SingleHop, 1.0), (QueryType::Abstract, 1.0)]
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
