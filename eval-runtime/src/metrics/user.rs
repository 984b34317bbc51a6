//! Metrics the user writes in Rust (issue 36, part 2): the [`Metric`]
//! trait, its function forms, and scoring one with a sample's answer.
//!
//! A spec knows a user metric as data ([`eval_datasets::metric::UserMetric`]:
//! name, version, direction, range, pass/fail) holding the implementation
//! as an opaque handle; [`score`] takes it back and runs it. A metric that
//! panics, returns an error, a NaN or a score outside its range fails that
//! metric on that sample, never the run.

use std::error::Error as StdError;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use eval_datasets::metric::{MetricSpec, Op, UserMetric};
use eval_datasets::{Expected, Sample};
use futures_util::FutureExt as _;

use crate::agent::{BoxFuture, Response, panic_text};
use crate::model::{MetricError, MetricResult, Scored, ServiceError, Usage};
use crate::services::{JudgePrompt, Services};

/// What a user metric's scoring may fail with (any error: `?` works).
pub type MetricFailure = Box<dyn StdError + Send + Sync>;

/// A metric of your own: scores one sample's answer, like a built-in one.
///
/// Used by its path in the attribute (`metrics(crate::CitesTicket >= 1.0)`),
/// or registered with [`Harness::metric`](crate::Harness::metric),
/// [`Runner::metric`](crate::Runner::metric) or
/// [`PlanBuilder::metric`](crate::plan::PlanBuilder::metric) so text specs
/// name it (`"cites_ticket >= 1"`, gates `"mean(cites_ticket) >= 0.9"`). A
/// plain function `fn(&Sample, &Response) -> bool` (or `f64`, [`Score`],
/// a `Result` of one; or an `async fn` of that shape) is a metric too,
/// named after the function (see [`IntoMetric`]).
///
/// ```
/// use eval_runtime::{BoxFuture, Metric, MetricContext, MetricFailure, Score};
///
/// /// 1 when the answer names a ticket (`#` then digits).
/// struct CitesTicket;
///
/// impl Metric for CitesTicket {
///     fn name(&self) -> &str {
///         "cites_ticket"
///     }
///     fn pass_fail(&self) -> bool {
///         true
///     }
///     fn score<'a>(&'a self, cx: &'a MetricContext<'a>) -> BoxFuture<'a, Result<Score, MetricFailure>> {
///         let cites = cx.response.output.split('#').skip(1).any(|rest| {
///             rest.starts_with(|c: char| c.is_ascii_digit())
///         });
///         Box::pin(async move { Ok(Score::from(cites)) })
///     }
/// }
/// # fn main() {}
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a metric",
    label = "not an `eval_runtime::Metric`",
    note = "a metric implements `eval_runtime::Metric`, or is a function `fn(&Sample, &Response) -> bool` (or `f64`, `Score`, a `Result` of one, or an `async fn` of that shape)"
)]
pub trait Metric: Send + Sync + 'static {
    /// The name results, gates and reports use.
    fn name(&self) -> &str;

    /// The version of its definition, recorded in the run's provenance:
    /// change it when the definition changes, and results of the old one
    /// are no longer compared with the new as if alike.
    fn version(&self) -> &str {
        "1"
    }

    /// Which way is better: `Op::AtLeast` (higher, the default) or
    /// `Op::AtMost` (lower).
    fn direction(&self) -> Op {
        Op::AtLeast
    }

    /// The scores it gives, `(min, max)` (default 0..1; an end may be
    /// infinite). A score outside is an error on that sample.
    fn range(&self) -> (f64, f64) {
        (0.0, 1.0)
    }

    /// Whether every score is its minimum (failed) or maximum (passed):
    /// its mean over repeated runs is then a pass rate, with the interval
    /// of one. Default `false`.
    fn pass_fail(&self) -> bool {
        false
    }

    /// The threshold when a spec gives none; default: a pass/fail metric's
    /// best score, else none (a spec must give one).
    fn default_threshold(&self) -> Option<f64> {
        self.pass_fail().then(|| match self.direction() {
            Op::AtLeast => self.range().1,
            Op::AtMost => self.range().0,
        })
    }

    /// Scores the sample's answer (see [`MetricContext`]).
    fn score<'a>(
        &'a self,
        cx: &'a MetricContext<'a>,
    ) -> BoxFuture<'a, Result<Score, MetricFailure>>;
}

impl<T: Metric + ?Sized> Metric for &'static T {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn version(&self) -> &str {
        (**self).version()
    }
    fn direction(&self) -> Op {
        (**self).direction()
    }
    fn range(&self) -> (f64, f64) {
        (**self).range()
    }
    fn pass_fail(&self) -> bool {
        (**self).pass_fail()
    }
    fn default_threshold(&self) -> Option<f64> {
        (**self).default_threshold()
    }
    fn score<'a>(
        &'a self,
        cx: &'a MetricContext<'a>,
    ) -> BoxFuture<'a, Result<Score, MetricFailure>> {
        (**self).score(cx)
    }
}

impl<T: Metric + ?Sized> Metric for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn version(&self) -> &str {
        (**self).version()
    }
    fn direction(&self) -> Op {
        (**self).direction()
    }
    fn range(&self) -> (f64, f64) {
        (**self).range()
    }
    fn pass_fail(&self) -> bool {
        (**self).pass_fail()
    }
    fn default_threshold(&self) -> Option<f64> {
        (**self).default_threshold()
    }
    fn score<'a>(
        &'a self,
        cx: &'a MetricContext<'a>,
    ) -> BoxFuture<'a, Result<Score, MetricFailure>> {
        (**self).score(cx)
    }
}

/// A user metric's score of one sample, and optionally why.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Score {
    /// The score, within the metric's range.
    pub value: f64,
    /// Why, shown in reports and kept in results.
    pub reason: Option<String>,
}

impl Score {
    /// `value`, without a reason.
    pub fn new(value: f64) -> Score {
        Score {
            value,
            reason: None,
        }
    }

    /// The same score, saying why.
    pub fn with_reason(mut self, reason: impl Into<String>) -> Score {
        self.reason = Some(reason.into());
        self
    }
}

impl From<f64> for Score {
    fn from(value: f64) -> Score {
        Score::new(value)
    }
}

impl From<bool> for Score {
    /// `true` is 1, `false` 0.
    fn from(passed: bool) -> Score {
        Score::new(if passed { 1.0 } else { 0.0 })
    }
}

/// What a metric function may return: a score (`bool`, `f64`, [`Score`])
/// or a `Result` of one.
pub trait IntoScore {
    /// Whether scores of this type are pass/fail (`bool`).
    const PASS_FAIL: bool;
    /// The score, or why there is none.
    fn into_score(self) -> Result<Score, MetricFailure>;
}

impl IntoScore for bool {
    const PASS_FAIL: bool = true;
    fn into_score(self) -> Result<Score, MetricFailure> {
        Ok(self.into())
    }
}

impl IntoScore for f64 {
    const PASS_FAIL: bool = false;
    fn into_score(self) -> Result<Score, MetricFailure> {
        Ok(self.into())
    }
}

impl IntoScore for Score {
    const PASS_FAIL: bool = false;
    fn into_score(self) -> Result<Score, MetricFailure> {
        Ok(self)
    }
}

impl<T: IntoScore, E: Into<MetricFailure>> IntoScore for Result<T, E> {
    const PASS_FAIL: bool = T::PASS_FAIL;
    fn into_score(self) -> Result<Score, MetricFailure> {
        self.map_err(Into::into).and_then(IntoScore::into_score)
    }
}

/// What a metric is given: the sample, the agent's response (output, turn
/// outputs, tool calls, trajectory, usage), and the run's judge and
/// embedder when it asks them ([`ask_judge`](Self::ask_judge),
/// [`embed`](Self::embed); their calls are counted as the built-in
/// metrics' are).
#[non_exhaustive]
pub struct MetricContext<'a> {
    /// The sample (for a metric of one turn: that turn's expected answer).
    pub sample: &'a Sample,
    /// The agent's response (for a metric of one turn: that turn's answer).
    pub response: &'a Response,
    services: &'a Services,
    judge: Mutex<Usage>,
    embeddings: Mutex<Usage>,
}

impl<'a> MetricContext<'a> {
    /// A context for scoring `response` to `sample` with `services` (to
    /// test a metric on its own).
    pub fn new(sample: &'a Sample, response: &'a Response, services: &'a Services) -> Self {
        MetricContext {
            sample,
            response,
            services,
            judge: Mutex::new(Usage::default()),
            embeddings: Mutex::new(Usage::default()),
        }
    }

    /// Asks the run's LLM judge `prompt` (see [`JudgePrompt`]: what is
    /// judged goes in its data blocks, never in the instructions) for a JSON
    /// object; cached, retried and counted as the built-in metrics' questions.
    pub async fn ask_judge(&self, prompt: &JudgePrompt) -> Result<serde_json::Value, ServiceError> {
        let judge = self.services.judge.as_ref().map_err(Clone::clone)?;
        let mut usage = Usage::default();
        let answer = judge.ask_json(prompt, &mut usage).await;
        add(&self.judge, usage);
        answer
    }

    /// One vector per text from the run's embeddings server (cached and
    /// counted as the built-in metrics' calls).
    pub async fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f64>>, ServiceError> {
        let embedder = self.services.embedder.as_ref().map_err(Clone::clone)?;
        let mut usage = Usage::default();
        let vectors = embedder.embed(texts, &mut usage).await;
        add(&self.embeddings, usage);
        vectors
    }

    /// Judge and embedding calls made so far.
    fn usage(&self) -> (Usage, Usage) {
        let take = |m: &Mutex<Usage>| {
            m.lock()
                .map(|mut u| std::mem::take(&mut *u))
                .unwrap_or_default()
        };
        (take(&self.judge), take(&self.embeddings))
    }
}

fn add(to: &Mutex<Usage>, usage: Usage) {
    if let Ok(mut u) = to.lock() {
        u.add(usage);
    }
}

/// A metric from a function ([`metric_fn`], [`async_metric_fn`], or a
/// function item given where an [`IntoMetric`] is asked).
pub struct FnMetric<F, K> {
    f: F,
    name: String,
    version: String,
    direction: Op,
    range: (f64, f64),
    pass_fail: bool,
    kind: std::marker::PhantomData<fn() -> K>,
}

impl<F, K> FnMetric<F, K> {
    /// The same metric at version `version` (default "1").
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The same metric, better when lower (`Op::AtMost`) or higher.
    pub fn direction(mut self, op: Op) -> Self {
        self.direction = op;
        self
    }

    /// The same metric scoring within `(min, max)`.
    pub fn range(mut self, min: f64, max: f64) -> Self {
        self.range = (min, max);
        self
    }

    /// The same metric, pass/fail or not (default: when it returns `bool`).
    pub fn pass_fail(mut self, on: bool) -> Self {
        self.pass_fail = on;
        self
    }

    fn named(name: impl Into<String>, f: F, pass_fail: bool) -> Self {
        FnMetric {
            f,
            name: name.into(),
            version: "1".into(),
            direction: Op::AtLeast,
            range: (0.0, 1.0),
            pass_fail,
            kind: std::marker::PhantomData,
        }
    }
}

/// Marks a blocking metric function.
#[doc(hidden)]
pub struct Blocking<R>(std::marker::PhantomData<fn() -> R>);
/// Marks an `async` metric function.
#[doc(hidden)]
pub struct Awaited<R>(std::marker::PhantomData<fn() -> R>);
/// Marks a type implementing [`Metric`].
#[doc(hidden)]
pub struct Itself;

/// A metric named `name` from a function `fn(&Sample, &Response) -> R`
/// (`R`: `bool`, `f64`, [`Score`] or a `Result` of one).
pub fn metric_fn<F, R>(name: impl Into<String>, f: F) -> FnMetric<F, Blocking<R>>
where
    F: Fn(&Sample, &Response) -> R + Send + Sync + 'static,
    R: IntoScore + 'static,
{
    FnMetric::named(name, f, R::PASS_FAIL)
}

/// A metric named `name` from an `async` function of a
/// [`MetricContext`] (which gives the judge and embedder too).
pub fn async_metric_fn<F, R>(name: impl Into<String>, f: F) -> FnMetric<F, Awaited<R>>
where
    F: AsyncFn(&MetricContext<'_>) -> R + Send + Sync + 'static,
    R: IntoScore + 'static,
{
    FnMetric::named(name, f, R::PASS_FAIL)
}

impl<F, R> Metric for FnMetric<F, Blocking<R>>
where
    F: Fn(&Sample, &Response) -> R + Send + Sync + 'static,
    R: IntoScore + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> &str {
        &self.version
    }
    fn direction(&self) -> Op {
        self.direction
    }
    fn range(&self) -> (f64, f64) {
        self.range
    }
    fn pass_fail(&self) -> bool {
        self.pass_fail
    }
    fn score<'a>(
        &'a self,
        cx: &'a MetricContext<'a>,
    ) -> BoxFuture<'a, Result<Score, MetricFailure>> {
        Box::pin(async move { (self.f)(cx.sample, cx.response).into_score() })
    }
}

impl<F, R> Metric for FnMetric<F, Awaited<R>>
where
    F: AsyncFn(&MetricContext<'_>) -> R + Send + Sync + 'static,
    R: IntoScore + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> &str {
        &self.version
    }
    fn direction(&self) -> Op {
        self.direction
    }
    fn range(&self) -> (f64, f64) {
        self.range
    }
    fn pass_fail(&self) -> bool {
        self.pass_fail
    }
    fn score<'a>(
        &'a self,
        cx: &'a MetricContext<'a>,
    ) -> BoxFuture<'a, Result<Score, MetricFailure>> {
        Box::pin(async move { (self.f)(cx).await.into_score() })
    }
}

/// Anything that is a metric: a type implementing [`Metric`] (or a
/// `&'static` one), a function `fn(&Sample, &Response) -> R` or an
/// `async fn(&Sample, &Response) -> R` (`R`: `bool`, `f64`, [`Score`], a
/// `Result` of one), named after the function. `M` only tells the forms
/// apart; it is inferred.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a metric",
    label = "not a metric",
    note = "a metric implements `eval_runtime::Metric`, or is a function `fn(&Sample, &Response) -> bool` (or `f64`, `Score`, a `Result` of one, or an `async fn` of that shape)"
)]
pub trait IntoMetric<M> {
    /// The metric, shared.
    fn into_metric(self) -> Arc<dyn Metric>;
}

impl<T: Metric> IntoMetric<Itself> for T {
    fn into_metric(self) -> Arc<dyn Metric> {
        Arc::new(self)
    }
}

impl<F, R> IntoMetric<Blocking<R>> for F
where
    F: Fn(&Sample, &Response) -> R + Send + Sync + 'static,
    R: IntoScore + 'static,
{
    fn into_metric(self) -> Arc<dyn Metric> {
        Arc::new(FnMetric::<F, Blocking<R>>::named(
            fn_name::<F>(),
            self,
            R::PASS_FAIL,
        ))
    }
}

/// An `async fn(&Sample, &Response)`'s metric.
#[doc(hidden)]
pub struct AsyncPair<F>(F);

impl<F, R> IntoMetric<Awaited<(R,)>> for F
where
    F: AsyncFn(&Sample, &Response) -> R + Send + Sync + 'static,
    R: IntoScore + 'static,
{
    fn into_metric(self) -> Arc<dyn Metric> {
        let f = AsyncPair(self);
        Arc::new(FnMetric::<AsyncPair<F>, Awaited<(R,)>>::named(
            fn_name::<F>(),
            f,
            R::PASS_FAIL,
        ))
    }
}

impl<F, R> Metric for FnMetric<AsyncPair<F>, Awaited<(R,)>>
where
    F: AsyncFn(&Sample, &Response) -> R + Send + Sync + 'static,
    R: IntoScore + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> &str {
        &self.version
    }
    fn direction(&self) -> Op {
        self.direction
    }
    fn range(&self) -> (f64, f64) {
        self.range
    }
    fn pass_fail(&self) -> bool {
        self.pass_fail
    }
    fn score<'a>(
        &'a self,
        cx: &'a MetricContext<'a>,
    ) -> BoxFuture<'a, Result<Score, MetricFailure>> {
        Box::pin(async move { (self.f.0)(cx.sample, cx.response).await.into_score() })
    }
}

/// A function's name, from its type: the last segment of its path
/// (`my_crate::checks::cites_ticket` → `cites_ticket`).
fn fn_name<F>() -> String {
    let full = std::any::type_name::<F>().trim_start_matches('&');
    let path = full.split('<').next().unwrap_or(full);
    path.rsplit("::").next().unwrap_or(path).to_string()
}

/// The metric `m` is (the attribute's expansion and the front ends call this).
pub fn into_metric<M, T: IntoMetric<M>>(m: T) -> Arc<dyn Metric> {
    m.into_metric()
}

/// The handle a spec holds.
struct Handle(Arc<dyn Metric>);

/// `metric` as the specs know it.
pub(crate) fn describe(metric: Arc<dyn Metric>) -> UserMetric {
    UserMetric::new(
        metric.name(),
        metric.version(),
        metric.direction(),
        metric.range(),
        metric.pass_fail(),
        Arc::new(Handle(metric.clone())),
    )
    .with_default_threshold(metric.default_threshold())
}

/// Scores a user metric's `spec` (of one turn: that turn's answer against
/// that turn's expected answer).
pub(crate) async fn score(
    spec: &MetricSpec,
    sample: &Sample,
    response: &Response,
    services: &Services,
) -> Scored {
    let failed = |problem: String| {
        Scored::offline(MetricResult::of(
            spec,
            Err(MetricError::User {
                metric: spec.name.clone(),
                problem,
            }),
        ))
    };
    let Some(user) = spec.user() else {
        return failed("is not a metric of your own".into());
    };
    let Some(Handle(metric)) = user.handle.downcast_ref::<Handle>() else {
        return failed("has no implementation here (was it registered?)".into());
    };
    let turn = spec.turn.map(|t| one_turn(t, sample, response));
    let (sample, response) = match &turn {
        Some(Ok((s, r))) => (s, r),
        Some(Err(e)) => return failed(e.clone()),
        None => (sample, response),
    };
    let cx = MetricContext::new(sample, response, services);
    // A panic while making the future, or while it runs, fails the metric.
    let outcome = match std::panic::catch_unwind(AssertUnwindSafe(|| metric.score(&cx))) {
        Ok(future) => AssertUnwindSafe(future).catch_unwind().await,
        Err(panic) => Err(panic),
    };
    let (judge, embeddings) = cx.usage();
    let (result, reason) = match outcome {
        Err(panic) => (Err(format!("panicked: {}", panic_text(&panic))), None),
        Ok(Err(e)) => (
            Err(format!(
                "failed: {}",
                crate::model::one_line(&e.to_string(), 300)
            )),
            None,
        ),
        Ok(Ok(score)) => (checked(score.value, user.range), score.reason),
    };
    let result = result.map_err(|problem| MetricError::User {
        metric: spec.name.clone(),
        problem,
    });
    Scored {
        result: MetricResult::of(spec, result).with_reason(reason),
        judge,
        embeddings,
    }
}

/// `value` when it is a number within `range`.
fn checked(value: f64, (min, max): (f64, f64)) -> Result<f64, String> {
    if value.is_nan() {
        return Err("scored NaN".into());
    }
    if !(min..=max).contains(&value) {
        return Err(format!("scored {value}, outside its range {min}..={max}"));
    }
    Ok(value)
}

/// The sample and response of user turn `turn` alone: that turn's
/// expected answer and answer.
fn one_turn(
    turn: usize,
    sample: &Sample,
    response: &Response,
) -> Result<(Sample, Response), String> {
    let turns = sample.input.turns();
    let output = match response.turn_outputs.get(turn) {
        Some(output) => output.clone(),
        None if response.turn_outputs.is_empty() && turns.len() == 1 => response.output.clone(),
        None => {
            return Err(format!(
                "has no answer to turn {} (the agent gave {})",
                turn + 1,
                response.turn_outputs.len()
            ));
        }
    };
    let mut one = sample.clone();
    one.expected = sample
        .expected_for_turn(turn)
        .map(|e| Expected::Text(e.to_string()));
    let mut answer = response.clone();
    answer.output = output;
    Ok((one, answer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cites(_: &Sample, r: &Response) -> bool {
        r.output.contains('#')
    }

    async fn cites_async(_: &Sample, r: &Response) -> Result<f64, std::io::Error> {
        Ok(if r.output.contains('#') { 1.0 } else { 0.0 })
    }

    #[test]
    #[allow(clippy::needless_borrows_for_generic_args)] // a reference is a metric too
    fn functions_are_metrics_named_after_themselves() {
        let m = into_metric(cites);
        assert_eq!((m.name(), m.version(), m.pass_fail()), ("cites", "1", true));
        let a = into_metric(cites_async);
        assert_eq!((a.name(), a.pass_fail()), ("cites_async", false));
        let r = into_metric(&cites);
        assert_eq!(r.name(), "cites");
        assert_eq!(a.default_threshold(), None);
        assert_eq!(m.default_threshold(), Some(1.0));
    }

    #[test]
    fn scores_are_checked_against_the_range() {
        assert_eq!(checked(0.5, (0.0, 1.0)), Ok(0.5));
        assert_eq!(checked(f64::NAN, (0.0, 1.0)), Err("scored NaN".into()));
        assert_eq!(
            checked(2.0, (0.0, 1.0)),
            Err("scored 2, outside its range 0..=1".into())
        );
    }
}
