//! A dataset's metrics, per sample, as distinct sets and each sample's set.
//!
//! A runevals item is scored by its own evaluators (its file's defaults,
//! extended or replaced by the item's, and each turn's). Metrics `given` by
//! the front end are added to them, like one more layer of defaults under
//! the file's: where an item sets a metric of the same name itself, the
//! item's setting is kept. A sample without evaluators is scored by the
//! `given` metrics, else by the dataset's own: every rank metric for a
//! retrieval query, PartialMatch (runevals' default threshold 0.5) with an
//! expected answer, Relevance and Coherence without. A runevals item of a
//! file that names no evaluators is scored, unless metrics are given, on
//! runevals' default dimensions (`eval_datasets::runevals::default_evaluators`,
//! the one rule of every front end; issue38:runevals).

use eval_datasets::Sample;
use eval_datasets::metric::{MetricSpec, parse_specs};

/// The sets found so far, one sample at a time (a streamed dataset's
/// samples are never all held).
pub(super) struct SpecSets {
    given: Option<Vec<MetricSpec>>,
    /// The dataset's own sets, parsed once: rank, partial, judged.
    own: [Vec<MetricSpec>; 3],
    /// The index in `sets` of the given set and of each own set, once used.
    fixed: [Option<u32>; 4],
    pub sets: Vec<Vec<MetricSpec>>,
    pub of: Vec<u32>,
    errors: usize,
    /// Samples whose own evaluators set a metric also given.
    pub kept: usize,
    /// Some sample named its own evaluators.
    pub evaluators: bool,
    /// Samples scored on runevals' default dimensions, and the metrics
    /// applied (issue38:runevals).
    pub defaults: usize,
    pub default_names: Vec<String>,
    problems: Vec<String>,
}

impl SpecSets {
    pub(super) fn new(given: Option<Vec<MetricSpec>>) -> Self {
        let parsed = |text: &str| parse_specs(text).unwrap_or_default();
        SpecSets {
            given,
            own: [
                parsed("hit_at_k, recall_at_k, precision_at_k, mrr_at_k, ndcg_at_k"),
                parsed("partial_match"),
                parsed("relevance, coherence"),
            ],
            fixed: [None; 4],
            sets: Vec::new(),
            of: Vec::new(),
            errors: 0,
            kept: 0,
            evaluators: false,
            defaults: 0,
            default_names: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// The set of one more sample.
    pub(super) fn add(&mut self, s: &Sample) {
        // issue38:runevals: given metrics replace the default dimensions.
        if s.runevals_defaults && !has_evaluators(s) && self.given.is_none() {
            let specs =
                eval_datasets::runevals::specs(&eval_datasets::runevals::default_evaluators(s))
                    .unwrap_or_default();
            self.defaults += 1;
            for spec in &specs {
                if !self.default_names.contains(&spec.name) {
                    self.default_names.push(spec.name.clone());
                }
            }
            let set = self.index_of(specs);
            self.of.push(set);
            return;
        }
        let set = if has_evaluators(s) {
            self.evaluators = true;
            let specs = match evaluator_specs(s) {
                Ok(mut specs) => {
                    let before = specs.len();
                    let mut overlaps = false;
                    for g in self.given.as_deref().unwrap_or_default() {
                        if specs[..before].iter().any(|own| own.name == g.name) {
                            overlaps = true;
                        } else {
                            specs.push(g.clone());
                        }
                    }
                    self.kept += usize::from(overlaps);
                    specs
                }
                Err(e) => {
                    self.errors += 1;
                    if self.errors <= 20 {
                        self.problems.push(format!("{}: {e}", s.source));
                    }
                    Vec::new()
                }
            };
            self.index_of(specs)
        } else {
            let which = match &self.given {
                Some(_) => 0,
                None if s.retrieval.is_some() => 1,
                None if s.expected.is_some() => 2,
                None => 3,
            };
            match self.fixed[which] {
                Some(set) => set,
                None => {
                    let specs = match &self.given {
                        Some(given) => given.clone(),
                        None => self.own[which - 1].clone(),
                    };
                    let set = self.index_of(specs);
                    self.fixed[which] = Some(set);
                    set
                }
            }
        };
        self.of.push(set);
    }

    fn index_of(&mut self, specs: Vec<MetricSpec>) -> u32 {
        let set = match self.sets.iter().position(|x| *x == specs) {
            Some(i) => i,
            None => {
                self.sets.push(specs);
                self.sets.len() - 1
            }
        };
        u32::try_from(set).unwrap_or(u32::MAX)
    }

    /// The sets, each sample's (empty when all share one), and the problems.
    pub(super) fn finish(mut self, problems: &mut Vec<String>) -> (Vec<Vec<MetricSpec>>, Vec<u32>) {
        problems.append(&mut self.problems);
        if self.errors > 20 {
            problems.push(format!("({} more)", self.errors - 20));
        }
        if self.sets.len() == 1 {
            self.of = Vec::new();
        }
        (self.sets, self.of)
    }
}

/// Whether a sample names its own evaluators (a runevals item's, after its
/// file's `default_evaluators` and `evaluators_mode`).
pub(super) fn has_evaluators(s: &Sample) -> bool {
    !s.evaluators.is_empty() || !s.turn_evaluators.is_empty()
}

/// A runevals sample's evaluators as metric specs: the sample's own, then
/// each turn's, scoring only that turn (`relevance@turn1`, `contains@turn2`).
fn evaluator_specs(s: &Sample) -> Result<Vec<MetricSpec>, String> {
    let mut specs = eval_datasets::runevals::specs(&s.evaluators).map_err(|e| e.to_string())?;
    for (turn, evaluators) in s.turn_evaluators.iter().enumerate() {
        let own = eval_datasets::runevals::specs(evaluators)
            .map_err(|e| format!("turn {}: {e}", turn + 1))?;
        specs.extend(own.into_iter().map(|spec| spec.for_turn(turn)));
    }
    Ok(specs)
}
