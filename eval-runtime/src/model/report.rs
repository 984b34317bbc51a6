//! What one evaluated sample amounts to: its metrics' results (score,
//! threshold, verdict, the spread over repeated runs, why it did not pass),
//! what the agent answered and what it all used. Reports render it (see
//! `output`); the results file stores it.

use std::fmt::Write as _;
use std::time::Duration;

use eval_datasets::metric::{MetricSpec, Op};
use eval_datasets::{Expected, Sample, Source};
use serde::Serialize;

use super::error::CostError;
use super::sample_error::{MetricError, SampleError};
use super::text::one_line;
use super::usage::Usage;
use crate::stats::{Decision, Design, Interval, MeanTally, Method, Scale, mean_interval};

/// One metric scored on one answer, with the judge and embedding calls the
/// scoring made (see [`score`](crate::score)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Scored {
    /// The score, its verdict and why.
    pub result: MetricResult,
    /// Judge calls made (and their tokens, retries, re-asks, cache hits).
    pub judge: Usage,
    /// Embedding calls made.
    pub embeddings: Usage,
}

impl Scored {
    /// `result`, scored without a call.
    pub(crate) fn offline(result: MetricResult) -> Scored {
        Scored {
            result,
            judge: Usage::default(),
            embeddings: Usage::default(),
        }
    }
}

/// One metric's outcome on one sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct MetricResult {
    /// Metric name as written.
    pub name: String,
    /// The score, when it could be computed.
    pub score: Option<f64>,
    /// Comparison against the threshold.
    #[serde(serialize_with = "ser_op")]
    #[doc(hidden)]
    pub op: Op,
    /// The threshold.
    #[doc(hidden)]
    pub threshold: f64,
    /// Whether the score is on the right side of the threshold.
    pub passed: bool,
    /// Why the score could not be computed.
    #[serde(serialize_with = "serialize_message")]
    pub error: Option<MetricError>,
    /// How it was scored when not by the metric's primary method (e.g. an
    /// offline variant without a judge).
    #[doc(hidden)]
    pub method: Option<&'static str>,
    /// The value in the metric's original direction, when the score is
    /// reported flipped (deepeval toxicity and bias, where lower is better).
    #[doc(hidden)]
    pub raw: Option<f64>,
    /// Over repeated runs (`repeat = n`): the score is their mean; this is
    /// the spread.
    #[doc(hidden)]
    pub spread: Option<Spread>,
    /// Why the metric scored as it did, when it says (the judge's reason,
    /// the verdicts it counted).
    pub reason: Option<String>,
}

impl MetricResult {
    /// `spec`'s outcome: its score (passed when on the right side of the
    /// threshold), or why there is none.
    pub(crate) fn of(spec: &MetricSpec, result: Result<f64, MetricError>) -> Self {
        let (score, error) = match result {
            Ok(s) => (Some(s), None),
            Err(e) => (None, Some(e)),
        };
        MetricResult {
            name: spec.name.clone(),
            passed: score.is_some_and(|s| spec.passes(s)),
            score,
            op: spec.op,
            threshold: spec.threshold,
            error,
            method: None,
            raw: None,
            spread: None,
            reason: None,
        }
    }

    /// Why it did not pass, in one line (`None` when it passed): the error
    /// that left it without a score (`error: needs an expected answer`), or
    /// its score against the threshold and the metric's reason
    /// (`0.200 < 0.5: 1 of 3 statements supported by the context`).
    pub fn why(&self) -> Option<String> {
        why_not_passed(
            (self.score, self.passed),
            (&self.op.to_string(), self.threshold),
            self.error.as_ref().map(ToString::to_string).as_deref(),
            self.reason.as_deref(),
        )
        .map(|why| with_interval(why, self.spread.map(|s| s.into())))
    }

    /// Where the metric stands on this sample: over repeated runs, where
    /// its interval lies against the threshold; for one run, whether the
    /// score passed. `None` without a score.
    pub fn decision(&self) -> Option<Decision> {
        self.score?;
        Some(match &self.spread {
            Some(s) => s.decision,
            None if self.passed => Decision::Pass,
            None => Decision::Fail,
        })
    }

    /// The same outcome with `reason`.
    pub(crate) fn with_reason(mut self, reason: Option<String>) -> Self {
        self.reason = reason;
        self
    }
}

/// A sample's decision from its metrics': fail when one fails, else
/// inconclusive when one is, else pass.
pub(crate) fn combine_decisions(decisions: impl Iterator<Item = Decision>) -> Decision {
    let mut out = Decision::Pass;
    for d in decisions {
        match d {
            Decision::Fail => return Decision::Fail,
            Decision::Inconclusive => out = Decision::Inconclusive,
            Decision::Pass => {}
        }
    }
    out
}

/// A metric's interval over repeated runs, as reports say it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunsInterval {
    pub runs: usize,
    pub low: f64,
    pub high: f64,
    pub level: f64,
    pub decision: Option<Decision>,
}

impl From<Spread> for RunsInterval {
    fn from(s: Spread) -> Self {
        RunsInterval {
            runs: s.runs,
            low: s.low,
            high: s.high,
            level: s.level,
            decision: Some(s.decision),
        }
    }
}

impl RunsInterval {
    /// `mean of 5 runs, 95% interval 0.380..0.960` (`, inconclusive` when it
    /// straddles the threshold).
    pub(crate) fn text(&self) -> String {
        format!(
            "mean of {} runs, {} interval {:.3}..{:.3}{}",
            self.runs,
            level_text(self.level),
            self.low,
            self.high,
            if self.decision == Some(Decision::Inconclusive) {
                ", inconclusive"
            } else {
                ""
            }
        )
    }
}

/// A confidence level as a percentage: `95%`, `99.4%`.
pub(crate) fn level_text(level: f64) -> String {
    let pct = level * 100.0;
    if (pct - pct.round()).abs() < 1e-9 {
        format!("{pct:.0}%")
    } else {
        format!("{}%", format!("{pct:.2}").trim_end_matches('0'))
    }
}

/// `why`, with the interval over repeated runs when there is one:
/// `0.800 < 0.9 (mean of 5 runs, 95% interval 0.380..0.960, inconclusive)`.
pub(crate) fn with_interval(why: String, interval: Option<RunsInterval>) -> String {
    match interval {
        Some(i) if !why.starts_with("error:") => match why.split_once(": ") {
            // Before the reason, which may be long.
            Some((head, reason)) => format!("{head} ({}): {reason}", i.text()),
            None => format!("{why} ({})", i.text()),
        },
        _ => why,
    }
}

/// How much of a metric's error or reason a one-line `why` shows.
const WHY_CHARS: usize = 300;

/// [`MetricResult::why`] from a metric's parts (a results file's record
/// has them as text): `None` when it passed.
pub(crate) fn why_not_passed(
    (score, passed): (Option<f64>, bool),
    (op, threshold): (&str, f64),
    error: Option<&str>,
    reason: Option<&str>,
) -> Option<String> {
    if passed {
        return None;
    }
    let Some(score) = score else {
        return Some(format!(
            "error: {}",
            one_line(error.unwrap_or("no score"), WHY_CHARS)
        ));
    };
    // A score on the wrong side of its threshold; or, when its interval
    // straddles the threshold and the setting counts that as failed, on the
    // right side but not proven there.
    let wrong_side = if op == "<=" {
        score > threshold
    } else {
        score < threshold
    };
    let mut why = if wrong_side {
        let side = if op == "<=" { ">" } else { "<" };
        format!("{score:.3} {side} {threshold}")
    } else {
        format!("{score:.3} {op} {threshold} not proven")
    };
    if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
        let _ = write!(why, ": {}", one_line(reason, WHY_CHARS));
    }
    Some(why)
}

/// A metric over `n` runs of the agent: the mean, its interval, and where
/// the interval lies against the threshold. The interval is the one that
/// holds whatever the distribution of the runs' scores (see
/// `Method`): a pass/fail metric (`contains`,
/// `exact_match`...) over a fixed number of runs has the exact
/// (Clopper–Pearson) interval of its pass rate; any other score in a known
/// range (0..1), and a pass rate under `repeat = "auto"`, the betting
/// interval (Waudby-Smith & Ramdas 2024), which holds at every look `auto`
/// makes; a score without a finite range (a count) Student's t interval,
/// `mean ± t(1 − α/2, n − 1) · s / √n`, cut to 0 and up. Runs that all
/// agree never make it collapse: three runs of 1.0 prove no more than 0.29. The
/// sample's verdict on the metric is [`Decision::Pass`] when the whole
/// interval passes, [`Decision::Fail`] when the whole interval fails, else
/// [`Decision::Inconclusive`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Spread {
    /// Runs.
    pub runs: usize,
    /// Mean score.
    pub mean: f64,
    /// Lower end of the interval (at least the metric's minimum).
    pub low: f64,
    /// Upper end of the interval (at most the metric's maximum).
    pub high: f64,
    /// The interval holds means that pass and means that fail: the verdict
    /// could go either way (`decision` is inconclusive).
    pub straddles: bool,
    /// Sample standard deviation of the runs' scores.
    pub sd: f64,
    /// The interval's confidence level at each look (0.95; for Student's t
    /// under `repeat = "auto"`, 95% split over its looks, see
    /// [`Level::split_over`](crate::stats::Level::split_over)).
    pub level: f64,
    /// How the interval was computed.
    pub method: Method,
    /// Where the interval lies against the threshold.
    pub decision: Decision,
    /// Runs whose score met the metric's per-sample threshold (what
    /// `pass@k` and `pass^k` gates count).
    pub passes: usize,
}

impl Spread {
    /// The spread of `scores` (at least one; a fixed number of runs) of
    /// `spec`'s metric, around its threshold, at the standard 95% level.
    pub fn of(scores: &[f64], spec: &MetricSpec) -> Spread {
        Self::at(scores, spec, Design::fixed(scores.len()))
    }

    /// [`of`](Self::of), for runs gathered as `sampling` says (under
    /// `repeat = "auto"`: up to its maximum, looked at several times).
    pub(crate) fn at(scores: &[f64], spec: &MetricSpec, sampling: Design) -> Spread {
        let mut tally = MeanTally::new(false);
        scores.iter().for_each(|s| tally.add(*s, None));
        let mean = tally.mean().unwrap_or(0.0);
        let scale = Scale::of_spec(spec);
        let (interval, method, level) = match mean_interval(scores, scale, sampling) {
            Some(m) => (m.interval, m.method, m.level),
            // One run of a score without a finite range: nothing to say
            // how far off it could be.
            None => (
                Interval {
                    low: f64::NEG_INFINITY,
                    high: f64::INFINITY,
                }
                .clamped(scale.range()),
                Method::T,
                sampling.level,
            ),
        };
        let decision = Decision::of(interval, spec.op, spec.threshold);
        Spread {
            runs: scores.len(),
            mean,
            low: interval.low,
            high: interval.high,
            straddles: decision == Decision::Inconclusive,
            sd: tally.sd().unwrap_or(0.0),
            level: level.0,
            method,
            decision,
            passes: scores.iter().filter(|s| spec.passes(**s)).count(),
        }
    }
}

fn ser_op<S: serde::Serializer>(op: &Op, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&op.to_string())
}

/// Everything known about one evaluated sample.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SampleReport {
    /// Full test name (`<function>::<sample>`).
    pub test_name: String,
    /// Sample id.
    pub id: String,
    /// File and line.
    #[doc(hidden)]
    pub source: Source,
    /// The input (all turns).
    #[doc(hidden)]
    pub input: String,
    /// The expected answer, if any.
    #[doc(hidden)]
    pub expected: Option<String>,
    /// The agent's output, when it answered.
    pub output: Option<String>,
    /// Per-metric outcomes (empty when the agent failed).
    pub metrics: Vec<MetricResult>,
    /// Why the sample could not be scored (agent error, missing field, timeout).
    #[serde(serialize_with = "serialize_message")]
    pub error: Option<SampleError>,
    /// Time spent in the agent.
    #[serde(serialize_with = "ser_secs")]
    #[doc(hidden)]
    pub latency: Duration,
    /// Time to the agent's first token, when it streamed.
    #[doc(hidden)]
    pub ttft: Option<Duration>,
    /// The tool calls the agent made, in order.
    #[doc(hidden)]
    pub tool_calls: Vec<eval_datasets::ToolCall>,
    /// The steps the agent took (from its spans, or its answers' tool
    /// calls), when it took any.
    #[doc(hidden)]
    pub trajectory: Option<super::Trajectory>,
    /// The requests' traces (one per request, every run): what an exported
    /// evaluation links to.
    #[serde(skip)]
    pub(crate) agent_spans: Vec<super::AgentSpan>,
    /// The id the agent gave its answer (OpenAI `id`), when it did: what an
    /// exported evaluation carries as `gen_ai.response.id`.
    #[serde(skip)]
    pub(crate) response_id: Option<String>,
    /// The context the agent returned (retrieved chunks), in order.
    #[doc(hidden)]
    pub context: Vec<String>,
    /// The document ids the agent retrieved, best first (retrieval queries).
    #[doc(hidden)]
    pub retrieved: Vec<String>,
    /// The score of each of them, when the retriever (or reranker) gave it.
    #[doc(hidden)]
    pub retrieved_scores: Vec<f64>,
    /// The ids the query should retrieve (a retrieval dataset's `relevant`).
    #[doc(hidden)]
    pub relevant: Vec<String>,
    /// The item's own name, when the dataset gives one (a runevals item's
    /// `name`).
    #[doc(hidden)]
    pub name: Option<String>,
    /// The item's notes, when the dataset gives them (a runevals item's
    /// `notes`: why it is there, a bug it guards against).
    #[doc(hidden)]
    pub notes: Option<String>,
    /// The id of the retrieval dataset the query belongs to (Unrag's `id`).
    #[doc(hidden)]
    pub dataset_id: Option<String>,
    /// The sample's tags.
    #[doc(hidden)]
    pub tags: Vec<String>,
    /// The sample's metadata, as the dataset gives it.
    #[doc(hidden)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// The tool calls the sample expects (shown beside the agent's when a
    /// tool metric fails).
    #[doc(hidden)]
    pub expected_tools: Option<Vec<eval_datasets::ToolCall>>,
    /// The agent's calls, retries and tokens.
    #[doc(hidden)]
    pub agent: Usage,
    /// The model that answered, when the agent said.
    #[doc(hidden)]
    pub model: Option<String>,
    /// Judge calls made to score it.
    pub usage: Usage,
    /// Embedding calls made to score it.
    #[doc(hidden)]
    pub embeddings: Usage,
    /// What it cost in US dollars, when every model it used has a price
    /// (see [`Pricing`](crate::services::Pricing)).
    #[doc(hidden)]
    pub cost_usd: Option<f64>,
    /// Why the cost is unknown though a price table is set (a model it used
    /// has no price); serialized as its message.
    #[serde(serialize_with = "serialize_message")]
    #[doc(hidden)]
    pub cost_unknown: Option<CostError>,
}

/// An optional error serialized as its message (what the results file
/// keeps of it).
pub(crate) fn serialize_message<S: serde::Serializer, E: std::fmt::Display>(
    e: &Option<E>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match e {
        Some(e) => s.serialize_some(&e.to_string()),
        None => s.serialize_none(),
    }
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// One text, or several numbered per turn: `[1] Hi  [2] Bye`.
pub(crate) fn numbered(texts: &[String]) -> String {
    if texts.len() == 1 {
        return texts[0].clone();
    }
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| format!("[{}] {}", i + 1, one_line(t, 120)))
        .collect::<Vec<_>>()
        .join("  ")
}

/// The item's own name, when the dataset gives one: a runevals item's
/// `name`, which the loader keeps among the sample's other fields
/// ([`Sample::extra`]).
pub(crate) fn item_name(sample: &Sample) -> Option<String> {
    item_text(sample, "name")
}

/// The item's notes (a runevals item's `notes`), kept like its name.
pub(crate) fn item_notes(sample: &Sample) -> Option<String> {
    item_text(sample, "notes")
}

fn item_text(sample: &Sample, key: &str) -> Option<String> {
    sample
        .extra
        .get(key)
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .map(str::to_string)
}

impl SampleReport {
    /// A report for `sample` with nothing evaluated yet.
    #[doc(hidden)]
    pub fn new(test_name: String, sample: &Sample) -> Self {
        SampleReport {
            test_name,
            id: sample.id.clone(),
            source: sample.source.clone(),
            input: numbered(sample.input.turns()),
            expected: sample.expected.as_ref().map(|e| match e {
                Expected::PerTurn(list) => numbered(list),
                Expected::Text(t) => t.clone(),
            }),
            output: None,
            metrics: Vec::new(),
            error: None,
            latency: Duration::ZERO,
            ttft: None,
            tool_calls: Vec::new(),
            trajectory: None,
            agent_spans: Vec::new(),
            response_id: None,
            context: Vec::new(),
            retrieved: Vec::new(),
            retrieved_scores: Vec::new(),
            relevant: sample
                .relevant_ids()
                .map(<[String]>::to_vec)
                .unwrap_or_default(),
            name: item_name(sample),
            notes: item_notes(sample),
            dataset_id: sample.retrieval.as_ref().map(|q| q.dataset_id.clone()),
            tags: sample.tags.clone(),
            metadata: sample.metadata.clone(),
            expected_tools: sample.expected_tools.clone(),
            agent: Usage::default(),
            model: None,
            usage: Usage::default(),
            embeddings: Usage::default(),
            cost_usd: None,
            cost_unknown: None,
        }
    }

    /// Adds what `run` (one run of a repeated sample) spent: time in the
    /// agent, agent, judge and embedding calls.
    pub(crate) fn add_costs(&mut self, run: &SampleReport) {
        self.latency += run.latency;
        self.ttft = self.ttft.or(run.ttft);
        self.agent.add(run.agent);
        self.usage.add(run.usage);
        self.embeddings.add(run.embeddings);
    }

    /// The sample could not be scored: the agent failed, or a metric has no
    /// score (a judge that failed, an empty expected answer...). It fails in
    /// every mode, `ciGate` included, and its dataset's gates are missed.
    pub fn unscored(&self) -> bool {
        self.error.is_some() || self.metrics.iter().any(|m| m.score.is_none())
    }

    /// True when the agent answered and every metric passed (an
    /// inconclusive metric passes or not as the run's setting says: see
    /// [`OnInconclusive`](crate::stats::OnInconclusive)).
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.metrics.iter().all(|m| m.passed)
    }

    /// Where the sample stands: it fails when a metric fails (proven so
    /// over repeated runs), is inconclusive when no metric fails and one is
    /// inconclusive, else passes. `None` when it could not be scored.
    pub fn decision(&self) -> Option<Decision> {
        if self.unscored() {
            return None;
        }
        Some(combine_decisions(
            self.metrics.iter().filter_map(MetricResult::decision),
        ))
    }
}

/// Whether the metric named `name` (as a result names it: an alias, or
/// with `@turn<n>`) is a tool-call metric.
pub(crate) fn is_tool_metric_name(name: &str) -> bool {
    let base = name.rsplit_once("@turn").map_or(name, |(base, _)| base);
    eval_datasets::metric::lookup(base).is_some_and(|info| {
        matches!(
            info.name,
            "tool_called"
                | "tool_correctness"
                | "tool_call_accuracy"
                | "tool_call_f1"
                | "trajectory_match"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_holds_its_level_whatever_the_scores() {
        let spec = |name: &str, t: f64| MetricSpec::new(name, &[], Some((Op::AtLeast, t))).unwrap();
        // A score in 0..1: the betting interval. confseq 0.0.11
        // `betting_ci([0.6, 0.8, 1.0], alpha=0.05, theta=0.5,
        // trunc_scale=0.9, m_trunc=True, breaks=20000)` = [0.19265, 1].
        let s = Spread::of(&[0.6, 0.8, 1.0], &spec("partial_match", 0.75));
        assert!((s.mean - 0.8).abs() < 1e-12);
        assert!(s.low >= 0.19265 && s.low < 0.19265 + 2e-4, "{}", s.low);
        assert_eq!(s.high, 1.0, "never above the metric's maximum");
        assert!((s.sd - 0.2).abs() < 1e-12);
        assert!(s.straddles);
        assert_eq!(
            (s.method, s.decision),
            (Method::Betting, Decision::Inconclusive)
        );
        // A pass/fail metric: Clopper–Pearson's interval of 2 passes in 3
        // (statsmodels 0.15.0 `proportion_confint(2, 3, method="beta")`).
        let wide = Spread::of(&[0.0, 1.0, 1.0], &spec("exact_match", 0.5));
        assert_eq!(wide.method, Method::ClopperPearson);
        assert!((wide.low - 0.09429932405024609).abs() < 1e-12, "{wide:?}");
        assert!((wide.high - 0.9915962413403874).abs() < 1e-12, "{wide:?}");
        assert_eq!(wide.decision, Decision::Inconclusive);
        // A threshold at the top of the range: one failed run proves the
        // pass rate below 1, and all runs passing can never prove it 1.
        let one_failed = Spread::of(&[0.0, 1.0, 1.0], &spec("exact_match", 1.0));
        assert_eq!(one_failed.decision, Decision::Fail);
        let all_passed = Spread::of(&[1.0; 5], &spec("contains", 1.0));
        assert_eq!(all_passed.decision, Decision::Inconclusive);
        // 5 of 5 against 0.5: 0.025^(1/5) = 0.478 — a rate of 0.49 passes
        // five times in 2.8% of tries, so five passes prove nothing; six do
        // (0.025^(1/6) = 0.541).
        assert_eq!(
            Spread::of(&[1.0; 5], &spec("contains", 0.5)).decision,
            Decision::Inconclusive
        );
        assert_eq!(
            Spread::of(&[1.0; 6], &spec("contains", 0.5)).decision,
            Decision::Pass
        );
        assert_eq!(
            Spread::of(&[0.0; 6], &spec("contains", 0.5)).decision,
            Decision::Fail
        );
        // A count has no maximum: Student's t, 0, 2, 4 gives 2 ± 4.9683
        // (t(0.975, 2) = 4.302652729749464), clamped at 0 only.
        let count = Spread::of(&[0.0, 2.0, 4.0], &spec("citations", 1.0));
        let half = 4.302652729749464 * 2.0 / 3f64.sqrt();
        assert_eq!((count.method, count.low), (Method::T, 0.0));
        assert!((count.high - (2.0 + half)).abs() < 1e-12);
        // Scores that do not vary are no proof: four runs of 1.0 prove a
        // mean above 0.37 (confseq: 0.37265), not above 0.75.
        let tight = Spread::of(&[1.0, 1.0, 1.0, 1.0], &spec("partial_match", 0.75));
        assert!(tight.low > 0.37 && tight.low < 0.3729, "{tight:?}");
        assert_eq!(tight.decision, Decision::Inconclusive);
        assert!(Spread::of(&[0.9], &spec("partial_match", 0.5)).straddles);
        // A stricter level widens the interval.
        let strict = Spread::at(
            &[0.6, 0.8, 1.0],
            &spec("partial_match", 0.5),
            Design {
                level: crate::stats::Level(0.99),
                horizon: 3,
                looks: 1,
                across_samples: false,
            },
        );
        assert!(strict.low < s.low);
    }
}
