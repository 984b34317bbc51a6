//! The metric catalogue: which metrics exist, their names and aliases, what
//! they need, which way is better and their default thresholds.

use std::fmt;

/// Comparison of a score against its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>=`: the score must be at least the threshold.
    AtLeast,
    /// `<=`: the score must be at most the threshold.
    AtMost,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::AtLeast => ">=",
            Op::AtMost => "<=",
        })
    }
}

/// A sample field a metric cannot score without.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Need {
    /// `expected` (or an alias such as `ground_truth`, `expected_output`).
    Expected,
    /// `context`.
    Context,
    /// `reference_contexts`.
    ReferenceContexts,
    /// Relevant document ids (a retrieval dataset's `relevant.sourceIds`).
    RelevantIds,
    /// The tool calls the agent should make (`expected_tools`, ragas
    /// `reference_tool_calls`); an empty list counts: no call expected.
    ExpectedTools,
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Need::Expected => "expected",
            Need::Context => "context",
            Need::ReferenceContexts => "reference_contexts",
            Need::RelevantIds => "relevant.sourceIds",
            Need::ExpectedTools => "expected_tools",
        })
    }
}

/// The type of a metric option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// `true` / `false`.
    Bool,
    /// A string literal.
    Str,
    // issue36:geval — `g_eval(scale = 10)`
    /// An integer literal.
    Int,
}

/// What the catalogue knows about one metric.
#[derive(Debug)]
#[non_exhaustive]
pub struct MetricInfo {
    /// Name used in specs.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// Comparison implied when a spec gives no operator.
    pub op: Op,
    /// Threshold used when a spec gives none.
    pub default_threshold: f64,
    /// Fields every sample must have.
    pub needs: &'static [Need],
    /// Options the spec may set.
    pub options: &'static [(&'static str, OptionKind)],
    /// One line for error messages and docs.
    pub summary: &'static str,
}

impl MetricInfo {
    /// The scores the metric can give, `(min, max)`: 0..1, except a count
    /// (`citations`) and what the engine measures (`latency_ms`, `ttft_ms`,
    /// `cost_usd`), 0 and up.
    pub fn range(&self) -> (f64, f64) {
        if matches!(
            self.name,
            "citations" | "steps" | "repeated_calls" | "step_latency_ms" | "step_tokens"
        ) || self.measured().is_some()
        {
            (0.0, f64::INFINITY)
        } else {
            (0.0, 1.0)
        }
    }

    /// Whether a spec must give the threshold (the metric has no default:
    /// a latency or cost budget is the user's to choose).
    pub fn threshold_required(&self) -> bool {
        self.default_threshold.is_nan()
    }

    /// What the engine measures for this metric, when it is not computed
    /// from the answer (`latency_ms`, `ttft_ms`, `cost_usd`).
    pub fn measured(&self) -> Option<Measure> {
        Measure::of(self.name)
    }

    /// Whether every score is 1 (passed) or 0 (failed): `exact_match`,
    /// `contains`, `regex`, `hit_at_k`, `tool_called`. Over repeated runs,
    /// their mean is a pass rate, whose interval is Wilson's.
    pub fn pass_fail(&self) -> bool {
        matches!(
            self.name,
            "exact_match" | "contains" | "regex" | "hit_at_k" | "tool_called" | "trajectory_match"
        )
    }
}

/// A quantity the engine measures for each sample rather than computes from
/// its answer: the metrics `latency_ms`, `ttft_ms` and `cost_usd`. Gates on
/// them are judged over what was measured, whether or not the dataset is
/// scored with the metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Measure {
    /// Time in the agent (every turn, retries included), milliseconds.
    LatencyMs,
    /// Time to the agent's first streamed token, milliseconds.
    TtftMs,
    /// What the sample cost in US dollars: agent, judge and embeddings
    /// tokens at the price table's prices.
    CostUsd,
}

impl Measure {
    /// The measure a catalogue name stands for.
    pub fn of(name: &str) -> Option<Measure> {
        match name {
            "latency_ms" => Some(Measure::LatencyMs),
            "ttft_ms" => Some(Measure::TtftMs),
            "cost_usd" => Some(Measure::CostUsd),
            _ => None,
        }
    }

    /// The metric's name.
    pub fn name(self) -> &'static str {
        match self {
            Measure::LatencyMs => "latency_ms",
            Measure::TtftMs => "ttft_ms",
            Measure::CostUsd => "cost_usd",
        }
    }
}

/// Longest regex this version compiles, in bytes (the `regex` metric's
/// `pattern`, or an expected answer used as one): checked before parsing,
/// which for a multi-megabyte pattern allocates gigabytes before the
/// compiled-size limit (4 MiB) is reached. A literal of this length still
/// compiles within that limit, case-insensitively too.
pub const MAX_REGEX_BYTES: usize = 16 * 1024;

/// Every metric this version can score.
pub static CATALOG: &[MetricInfo] = &[
    MetricInfo {
        name: "exact_match",
        aliases: &["string_match"],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::Expected],
        options: &[("case_sensitive", OptionKind::Bool)],
        summary: "1 if the trimmed output equals the expected answer (case-insensitive unless case_sensitive = true), else 0",
    },
    MetricInfo {
        name: "contains",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::Expected],
        options: &[("case_sensitive", OptionKind::Bool)],
        summary: "1 if the output contains the expected answer (case-insensitive unless case_sensitive = true), else 0",
    },
    MetricInfo {
        name: "regex",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::Expected],
        options: &[
            ("pattern", OptionKind::Str),
            ("case_sensitive", OptionKind::Bool),
        ],
        summary: "1 if the output matches the regex (the expected answer, or `pattern`), else 0",
    },
    MetricInfo {
        name: "faithfulness",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.8,
        needs: &[],
        options: &[],
        summary: "ragas faithfulness: share of the answer's statements the retrieved context supports (LLM judge; context from the agent's answer, else the sample)",
    },
    MetricInfo {
        name: "answer_similarity",
        aliases: &["semantic_similarity"],
        op: Op::AtLeast,
        default_threshold: 0.8,
        needs: &[Need::Expected],
        options: &[],
        summary: "ragas semantic similarity: cosine of the answer's and the expected answer's embeddings (offline: Levenshtein string similarity)",
    },
    MetricInfo {
        name: "context_recall",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.75,
        needs: &[],
        options: &[],
        summary: "ragas context recall: share of the expected answer's statements attributable to the retrieved context (LLM judge; offline: NonLLMContextRecall over reference_contexts)",
    },
    MetricInfo {
        name: "context_precision",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.75,
        needs: &[],
        options: &[],
        summary: "ragas context precision: average precision of the retrieved chunks judged useful for the expected answer (LLM judge; offline: NonLLMContextPrecisionWithReference over reference_contexts)",
    },
    MetricInfo {
        name: "answer_relevancy",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.75,
        needs: &[],
        options: &[],
        summary: "ragas answer relevancy: mean cosine between the input and questions the judge generates from the answer, 0 if the answer is noncommittal (LLM judge and embeddings)",
    },
    MetricInfo {
        name: "hallucination",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: 0.5,
        needs: &[Need::Context],
        options: &[],
        summary: "deepeval hallucination: share of the sample's contexts the answer contradicts, lower is better (LLM judge)",
    },
    MetricInfo {
        name: "toxicity",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "1 - deepeval toxicity (toxic opinions / opinions in the answer): a safety score, higher is better (LLM judge)",
    },
    MetricInfo {
        name: "bias",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "1 - deepeval bias (biased opinions / opinions in the answer): a safety score, higher is better (LLM judge)",
    },
    MetricInfo {
        name: "rubric",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[
            ("rubric", OptionKind::Str),
            ("rubric_file", OptionKind::Str),
        ],
        summary: "letta-evals rubric grader: the judge scores the answer 0..1 against a rubric with {var} placeholders (the sample's `rubric` field, else `rubric = \"...\"` or `rubric_file = \"...\"`)",
    },
    // issue36:geval — the criteria metric (G-Eval); options in metric/geval.rs
    MetricInfo {
        name: "g_eval",
        aliases: &["geval"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[
            ("name", OptionKind::Str),
            ("criteria", OptionKind::Str),
            ("criteria_file", OptionKind::Str),
            ("steps", OptionKind::Str),
            ("scale", OptionKind::Int),
            ("strict", OptionKind::Bool),
            ("logprobs", OptionKind::Bool),
            ("params", OptionKind::Str),
        ],
        summary: "G-Eval (Liu et al. 2023, as deepeval's GEval): the judge scores the answer against `criteria` (or `criteria_file`) by evaluation `steps` it writes once (or given), an integer 1..`scale` (default 5) weighted by its token probabilities where the server gives them, normalised to 0..1; named `g_eval:<name>`",
    },
    MetricInfo {
        name: "relevance",
        aliases: &["Relevance"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "runevals Relevance: the judge rates 1-5 how well the answer addresses the input; scored (rating - 1) / 4",
    },
    MetricInfo {
        name: "coherence",
        aliases: &["Coherence"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "runevals Coherence: the judge rates 1-5 how clear and logically ordered the answer is; scored (rating - 1) / 4",
    },
    MetricInfo {
        name: "groundedness",
        aliases: &["Groundedness"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[],
        options: &[],
        summary: "runevals Groundedness: the judge rates 1-5 how well the context supports the answer; scored (rating - 1) / 4",
    },
    MetricInfo {
        name: "similarity",
        aliases: &["Similarity"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::Expected],
        options: &[],
        summary: "runevals Similarity: the judge rates 1-5 how close the answer is to the expected answer; scored (rating - 1) / 4",
    },
    MetricInfo {
        name: "citations",
        aliases: &["Citations"],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[],
        options: &[("format", OptionKind::Str)],
        summary: "runevals Citations: how many distinct citation markers the answer has, of `format`: oai_unicode (【1】, 【1†source】), bracket ([1]), markdown ([^1]) or mixed (any, the default); a count, not 0..1",
    },
    MetricInfo {
        name: "hit_at_k",
        aliases: &["hit@k", "hitAtK"],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: 1 if a relevant document is among the top k retrieved (Unrag, trec_eval), else 0",
    },
    MetricInfo {
        name: "recall_at_k",
        aliases: &["recall@k", "recallAtK"],
        op: Op::AtLeast,
        default_threshold: 0.75,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: relevant documents among the top k / relevant documents",
    },
    MetricInfo {
        name: "precision_at_k",
        aliases: &["precision@k", "precisionAtK"],
        op: Op::AtLeast,
        default_threshold: 0.0,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: relevant documents among the top k / k (trec_eval's P@k)",
    },
    MetricInfo {
        name: "mrr_at_k",
        aliases: &["mrr@k", "mrrAtK"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: 1 / rank of the first relevant document within the top k, else 0",
    },
    MetricInfo {
        name: "ndcg_at_k",
        aliases: &["ndcg@k", "ndcgAtK"],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::RelevantIds],
        options: &[],
        summary: "retrieval: nDCG at k with binary relevance (gain 1/log2(rank+1), ideal = all relevant first)",
    },
    MetricInfo {
        name: "partial_match",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::Expected],
        options: &[],
        summary: "token-overlap F1 (SQuAD) between output and expected answer, 0..1",
    },
    // Tool calls: the agent's calls (every turn, in order) against the
    // sample's (eval-runtime `metrics::tools` has the definitions).
    MetricInfo {
        name: "tool_called",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::Expected],
        options: &[],
        summary: "letta-evals Tool Usage Testing: 1 if the agent called the tool the expected answer (ground_truth) names, in any turn (exact name), else 0",
    },
    MetricInfo {
        name: "tool_correctness",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::ExpectedTools],
        options: &[
            ("parameters", OptionKind::Bool),
            ("ordering", OptionKind::Bool),
            ("exact", OptionKind::Bool),
        ],
        summary: "deepeval ToolCorrectness: expected tools the agent called / expected tools; parameters = true also scores the arguments, ordering = true a weighted longest common subsequence, exact = true 1 only for the same calls in the same order",
    },
    MetricInfo {
        name: "tool_call_accuracy",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::ExpectedTools],
        options: &[
            ("strict_order", OptionKind::Bool),
            ("pairing", OptionKind::Str),
        ],
        summary: "ragas 0.4.3 ToolCallAccuracy: 0 unless the calls' names are the expected ones, as many, in order (sorted unless strict_order = false); else the i-th call against the i-th expected one, the mean share of expected arguments matched (compared as Python text); pairing = \"best\" allows retried and extra calls",
    },
    MetricInfo {
        name: "tool_call_f1",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 0.5,
        needs: &[Need::ExpectedTools],
        options: &[],
        summary: "ragas ToolCallF1: F1 of precision and recall over the distinct (name, arguments) calls, order ignored",
    },
    // The agent's trajectory: the steps it took, from its OpenTelemetry
    // spans or its answers' tool calls (eval-runtime `metrics::trajectory`
    // has the definitions).
    MetricInfo {
        name: "trajectory_match",
        aliases: &[],
        op: Op::AtLeast,
        default_threshold: 1.0,
        needs: &[Need::ExpectedTools],
        options: &[("mode", OptionKind::Str), ("args", OptionKind::Str)],
        summary: "agentevals trajectory match: 1 if the agent's tool calls match the expected ones, else 0; mode = \"strict\" (same calls, same order; the default), \"unordered\" (same calls, any order), \"subset\" (no call beyond the expected), \"superset\" (every expected call made); args = \"exact\" (default), \"ignore\", \"subset\", \"superset\"",
    },
    MetricInfo {
        name: "steps",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: f64::NAN,
        needs: &[],
        options: &[("step", OptionKind::Str)],
        summary: "the steps the agent took (LLM calls, tool calls, retrievals, embeddings; step = \"tool\" counts one kind); a budget, e.g. steps <= 8",
    },
    MetricInfo {
        name: "repeated_calls",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: 1.0,
        needs: &[],
        options: &[],
        summary: "loop detection: the most times the agent made one tool call (same tool, same arguments), 0 without calls; the default repeated_calls <= 1 allows no call twice",
    },
    MetricInfo {
        name: "step_latency_ms",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: f64::NAN,
        needs: &[],
        options: &[("step", OptionKind::Str)],
        summary: "the slowest step's duration, milliseconds, from the agent's spans (step = \"tool\" looks at one kind); e.g. step_latency_ms <= 2000",
    },
    MetricInfo {
        name: "step_tokens",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: f64::NAN,
        needs: &[],
        options: &[("step", OptionKind::Str)],
        summary: "the most tokens (in + out) one step used, from the agent's spans (step = \"llm\" looks at one kind); e.g. step_tokens <= 4000",
    },
    // Measured by the engine, not computed from the answer: no default
    // threshold (a budget is the user's), lower is better, 0 and up.
    MetricInfo {
        name: "latency_ms",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: f64::NAN,
        needs: &[],
        options: &[],
        summary: "time in the agent for the sample (every turn), milliseconds; lower is better, e.g. latency_ms <= 2000",
    },
    MetricInfo {
        name: "ttft_ms",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: f64::NAN,
        needs: &[],
        options: &[],
        summary: "time to the agent's first streamed token, milliseconds (an agent that did not stream has none: an error); e.g. ttft_ms <= 500",
    },
    MetricInfo {
        name: "cost_usd",
        aliases: &[],
        op: Op::AtMost,
        default_threshold: f64::NAN,
        needs: &[],
        options: &[],
        summary: "what the sample cost in USD: agent, judge and embeddings tokens at EVAL_PRICES' prices; e.g. cost_usd <= 0.01",
    },
];

/// The catalogue entry for `name` (or one of its aliases).
pub fn lookup(name: &str) -> Option<&'static MetricInfo> {
    CATALOG
        .iter()
        .find(|m| m.name == name || m.aliases.contains(&name))
}

/// The catalogue entry of a metric as results name it: by its name or an
/// alias, or a per-turn metric's (`contains@turn2`) by its base metric's.
pub fn lookup_named(name: &str) -> Option<&'static MetricInfo> {
    lookup(name)
        .or_else(|| {
            let (base, turn) = name.rsplit_once("@turn")?;
            turn.parse::<usize>().ok().filter(|n| *n >= 1)?;
            lookup(base)
        })
        // issue36:geval — `g_eval:<name>` (and `g_eval:<name>@turn<n>`)
        .or_else(|| lookup(name.split_once(':')?.0).filter(|i| i.name == "g_eval"))
}

/// All accepted metric names, for "expected one of" messages.
pub fn known_names() -> Vec<&'static str> {
    CATALOG
        .iter()
        .flat_map(|m| std::iter::once(m.name).chain(m.aliases.iter().copied()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_per_turn_name_finds_its_base_metric() {
        assert_eq!(
            lookup_named("contains@turn2").map(|i| i.name),
            Some("contains")
        );
        assert_eq!(
            lookup_named("hit@k@turn1").map(|i| i.name),
            Some("hit_at_k")
        );
        assert_eq!(
            lookup_named("faithfulness").map(|i| i.name),
            Some("faithfulness")
        );
        assert!(lookup_named("contains@turn0").is_none());
        assert!(lookup_named("contains@turnx").is_none());
        assert!(lookup_named("nope@turn2").is_none());
    }
}
