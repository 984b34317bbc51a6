//! Gates: a statistic of a metric over a dataset's samples, held to a
//! threshold — `partial_match >= 0.7` (the mean), `mean(cost_usd) <= 0.01`,
//! `p95(latency_ms) <= 3000`, and over each sample's repeated runs
//! `pass@3(contains) >= 0.9` / `pass^3(contains) >= 0.7`. Parsed here once,
//! for the attribute (at compile time), the harness, manifests and the
//! `evals` command.

use std::fmt;

use super::catalog::{MetricInfo, Op, lookup};
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
use super::measured::Measure;
use super::options::OptionValue;
use super::parse::parse_specs;
use super::spec::{MetricDecl, MetricSpec};

/// The statistic a gate holds to its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Stat {
    /// The mean over the scored samples (a gate written without a statistic).
    #[default]
    Mean,
    /// The `p`-th percentile (1–99) over the scored samples: see
    /// [`percentile`] for the definition.
    Percentile(u8),
    /// pass@k over each sample's repeated runs (`repeat`): the chance that
    /// at least one of k runs drawn from the sample's n passes the metric's
    /// per-sample threshold, estimated without bias from the c that passed,
    /// `1 − C(n−c, k)/C(n, k)` (Chen et al., "Evaluating Large Language
    /// Models Trained on Code", 2021, §2.1), then averaged over the samples.
    /// Written `pass@k` or `pass_at_k` (the attribute takes only the
    /// latter: `@` is not part of a Rust name).
    PassAt(u32),
    /// pass^k over each sample's repeated runs: the chance that all k runs
    /// drawn from the sample's n pass, `C(c, k)/C(n, k)` (Yao et al.,
    /// "τ-bench", 2024, §3), averaged over the samples. Written `pass^k` or
    /// `pass_hat_k`.
    PassHat(u32),
}

impl Stat {
    /// `mean`, `p1` … `p99` (`p50` is the median), `pass@k` / `pass_at_k`
    /// or `pass^k` / `pass_hat_k` (k from 1 to
    /// [`MAX_REPEAT`](crate::repeat::MAX_REPEAT)).
    pub fn parse(name: &str) -> Option<Stat> {
        if name == "mean" {
            return Some(Stat::Mean);
        }
        for (prefix, stat) in [
            ("pass@", Stat::PassAt as fn(u32) -> Stat),
            ("pass_at_", Stat::PassAt),
            ("pass^", Stat::PassHat),
            ("pass_hat_", Stat::PassHat),
        ] {
            if let Some(digits) = name.strip_prefix(prefix) {
                return runs_k(digits).map(stat);
            }
        }
        let digits = name.strip_prefix('p')?;
        if digits.is_empty()
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        match digits.parse::<u8>() {
            Ok(p @ 1..=99) => Some(Stat::Percentile(p)),
            _ => None,
        }
    }

    /// For `pass@k` and `pass^k`, the k: the statistic is over each
    /// sample's repeated runs, and needs k of them at least.
    pub fn over_runs(self) -> Option<u32> {
        match self {
            Stat::PassAt(k) | Stat::PassHat(k) => Some(k),
            Stat::Mean | Stat::Percentile(_) => None,
        }
    }

    /// The statistic of `values` (in any order; `None` when empty). For
    /// `pass@k` and `pass^k`, `values` are the samples' own estimates, and
    /// the statistic is their mean.
    pub fn of(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        Some(match self {
            Stat::Mean | Stat::PassAt(_) | Stat::PassHat(_) => {
                values.iter().sum::<f64>() / values.len() as f64
            }
            Stat::Percentile(p) => {
                let mut sorted = values.to_vec();
                sorted.sort_by(f64::total_cmp);
                percentile(&sorted, f64::from(p) / 100.0)
            }
        })
    }
}

impl fmt::Display for Stat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stat::Mean => f.write_str("mean"),
            Stat::Percentile(p) => write!(f, "p{p}"),
            Stat::PassAt(k) => write!(f, "pass@{k}"),
            Stat::PassHat(k) => write!(f, "pass^{k}"),
        }
    }
}

/// The k of `pass@k`: 1 to [`MAX_REPEAT`](crate::repeat::MAX_REPEAT), no
/// leading zero.
fn runs_k(digits: &str) -> Option<u32> {
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u32>()
        .ok()
        .filter(|k| (1..=crate::repeat::MAX_REPEAT).contains(k))
}

impl serde::Serialize for Stat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Stat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Stat::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "`{text}` is not a statistic: expected mean, p1..p99, pass@K or pass^K"
            ))
        })
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of `sorted` (ascending, not empty) by
/// linear interpolation between the closest ranks: with `h = (n − 1)·q`,
/// `x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋])`, 0-based. This is Hyndman &
/// Fan's definition 7 ("Sample Quantiles in Statistical Packages", The
/// American Statistician 50(4), 1996), the default of R's `quantile`, of
/// NumPy's `percentile` (`method="linear"`) and Excel's `PERCENTILE.INC`,
/// and the one Unrag's eval runner uses for `p95TotalMs`
/// (`pos = (n − 1)·q`, then interpolate), so a dataset's own latency
/// threshold gets the verdict Unrag gives it. (`statrs`' `Data::quantile`
/// is Hyndman & Fan's definition 8, which differs on small samples.)
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let low = h.floor() as usize;
    let high = (low + 1).min(n - 1);
    sorted[low] + (h - low as f64) * (sorted[high] - sorted[low])
}

/// A gate: a statistic of a metric, held to the spec's operator and threshold.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GateSpec {
    /// Which statistic.
    pub stat: Stat,
    /// The metric, operator and threshold.
    pub spec: MetricSpec,
}

impl GateSpec {
    /// A gate on `stat` of `spec`'s metric.
    pub fn new(stat: Stat, spec: MetricSpec) -> GateSpec {
        GateSpec { stat, spec }
    }

    /// A `pass@k` or `pass^k` gate (`stat`) on `spec`'s metric: a run of a
    /// sample passes when its score meets `spec`'s per-sample threshold
    /// (the one the dataset is scored with, at run time), and the gate holds
    /// the mean over samples to `bound`, a share from 0 to 1 that must be
    /// at least something (`>= 0.9`). A measured quantity (`latency_ms`...)
    /// has no pass or fail per run: refused.
    pub fn over_runs(
        stat: Stat,
        mut spec: MetricSpec,
        bound: Option<(Op, f64)>,
    ) -> Result<GateSpec, MetricSpecError> {
        if let Some(measure) = spec.measured() {
            return Err(MetricSpecError(
                SpecErrorKind::PassOfMeasured {
                    stat: stat.to_string(),
                    metric: measure.name(),
                },
                SpecPart::Name,
            ));
        }
        match bound {
            Some((Op::AtLeast, t)) if (0.0..=1.0).contains(&t) => {
                spec.op = Op::AtLeast;
                spec.threshold = t;
                Ok(GateSpec { stat, spec })
            }
            _ => Err(MetricSpecError(
                SpecErrorKind::PassBound {
                    stat: stat.to_string(),
                    name: spec.name.clone(),
                },
                match bound {
                    Some((Op::AtMost, _)) => SpecPart::Op,
                    _ => SpecPart::Threshold,
                },
            )),
        }
    }

    /// [`over_runs`](Self::over_runs) for a metric as declared: its name
    /// (`contains`, `contains@turn2`), options and the gate's bound.
    pub fn over_runs_of(
        stat: Stat,
        name: &str,
        options: &[(&str, OptionValue)],
        bound: Option<(Op, f64)>,
    ) -> Result<GateSpec, MetricSpecError> {
        // The metric's own threshold does not matter here (each run is
        // judged by the dataset's): any its range holds.
        let own = base_info(name).map(|info| (info.op, any_threshold(info)));
        GateSpec::over_runs(stat, MetricSpec::new(name, options, own)?, bound)
    }

    /// Whether the gate is judged over what the engine measured
    /// (`latency_ms`, `ttft_ms`, `cost_usd`): then the dataset need not be
    /// scored with the metric.
    pub fn measured(&self) -> Option<Measure> {
        self.spec.measured()
    }
}

impl fmt::Display for GateSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.spec;
        match self.stat {
            Stat::Mean => write!(f, "{} {} {}", s.name, s.op, s.threshold),
            stat => write!(f, "{stat}({}) {} {}", s.name, s.op, s.threshold),
        }
    }
}

/// A gate as the `#[eval_dataset]` macro writes it into a `static`.
#[derive(Debug)]
pub struct GateDecl {
    /// The statistic.
    pub stat: Stat,
    /// The metric and its bound.
    pub metric: MetricDecl,
}

impl GateDecl {
    /// Resolves the declaration (the macro already checked it with the same code).
    pub fn to_gate(&self) -> Result<GateSpec, MetricSpecError> {
        if self.stat.over_runs().is_some() {
            let m = &self.metric;
            return GateSpec::over_runs_of(self.stat, m.name, m.options, m.bound);
        }
        Ok(GateSpec::new(self.stat, self.metric.to_spec()?))
    }
}

/// The catalogue entry of `name`, or of the metric `name@turn<n>` scores.
fn base_info(name: &str) -> Option<&'static MetricInfo> {
    lookup(name).or_else(|| lookup(name.rsplit_once("@turn")?.0))
}

/// A threshold `info`'s metric takes: its default, else its example.
fn any_threshold(info: &MetricInfo) -> f64 {
    info.example_threshold()
}

/// A `pass@k(metric) >= x` gate from its parts as written: `inner` the
/// metric (with options), `rest` the bound after the parentheses.
fn runs_gate(
    stat: Stat,
    inner: &str,
    rest: &str,
    user: &super::user::UserMetrics,
) -> Result<GateSpec, MetricSpecError> {
    let name = inner
        .split(|c: char| c == '(' || c.is_whitespace())
        .next()
        .unwrap_or_default();
    let spec = match base_info(name) {
        Some(info) => {
            let (op, threshold) = (info.op, any_threshold(info));
            parse_specs(&format!("{inner} {op} {threshold}"))?.pop()
        }
        // A user's metric (its own threshold), or unknown: the metrics'
        // parser says so, with the known names.
        None => super::parse::parse_specs_with(inner, user)?.pop(),
    };
    let Some(spec) = spec else {
        return Err(MetricSpecError(SpecErrorKind::NoMetrics, SpecPart::Name));
    };
    let rest = rest.trim();
    let bound = [(">=", Op::AtLeast), ("<=", Op::AtMost)]
        .into_iter()
        .find_map(|(text, op)| Some((op, rest.strip_prefix(text)?.trim().parse::<f64>().ok()?)));
    GateSpec::over_runs(stat, spec, bound)
}

/// Parses a comma-separated list of gates: `"partial_match >= 0.7,
/// p95(latency_ms) <= 3000, mean(cost_usd) <= 0.01"`. A gate without a
/// statistic is on the mean. The same metric may be gated by several
/// statistics, each once.
pub fn parse_gates(text: &str) -> Result<Vec<GateSpec>, MetricSpecError> {
    parse_gates_with(text, &super::user::UserMetrics::new())
}

/// [`parse_gates`], where a gate may name a metric of `user`.
pub fn parse_gates_with(
    text: &str,
    user: &super::user::UserMetrics,
) -> Result<Vec<GateSpec>, MetricSpecError> {
    let bad = |kind: SpecErrorKind| MetricSpecError(kind, SpecPart::Name);
    let mut gates: Vec<GateSpec> = Vec::new();
    for part in super::parse::split_top_level(text).map_err(|e| bad(SpecErrorKind::Syntax(e)))? {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (stat, inner, rest) = split_stat(part)?;
        let gate = if stat.over_runs().is_some() {
            runs_gate(stat, &inner, &rest, user)?
        } else {
            let mut specs = super::parse::parse_specs_with(&format!("{inner}{rest}"), user)?;
            let Some(spec) = specs.pop() else {
                return Err(bad(SpecErrorKind::NoMetrics));
            };
            GateSpec::new(stat, spec)
        };
        if gates.iter().any(|g| {
            (g.stat, g.spec.canonical_name(), g.spec.turn)
                == (gate.stat, gate.spec.canonical_name(), gate.spec.turn)
        }) {
            return Err(bad(SpecErrorKind::ListedTwice {
                name: part.to_string(),
            }));
        }
        gates.push(gate);
    }
    if gates.is_empty() {
        return Err(bad(SpecErrorKind::NoMetrics));
    }
    Ok(gates)
}

/// `p95(latency_ms) <= 3000` → (`p95`, `latency_ms`, ` <= 3000`); a part
/// with no statistic is on the mean (all of it the first text). A name
/// followed by `(` is a statistic when the parentheses hold a metric rather
/// than options (`key = value`).
fn split_stat(part: &str) -> Result<(Stat, String, String), MetricSpecError> {
    let whole = || Ok((Stat::Mean, part.to_string(), String::new()));
    let Some((head, rest)) = part.split_once('(') else {
        return whole();
    };
    let head = head.trim();
    let Some(close) = matching_paren(rest) else {
        return whole();
    };
    let inner = &rest[..close];
    // `contains(case_sensitive = true)`: options, not a statistic.
    let top_level_eq = {
        let mut depth = 0i32;
        let mut in_str = false;
        inner.chars().any(|c| {
            match c {
                '"' => in_str = !in_str,
                '(' if !in_str => depth += 1,
                ')' if !in_str => depth -= 1,
                '=' if !in_str && depth == 0 => return true,
                _ => {}
            }
            false
        })
    };
    if top_level_eq {
        return whole();
    }
    let stat = Stat::parse(head).ok_or_else(|| {
        MetricSpecError(
            SpecErrorKind::UnknownStat {
                name: head.to_string(),
            },
            SpecPart::Name,
        )
    })?;
    Ok((
        stat,
        inner.trim().to_string(),
        rest[close + 1..].to_string(),
    ))
}

/// The index in `rest` (the text after an opening parenthesis) of the
/// parenthesis that closes it, outside string literals.
fn matching_paren(rest: &str) -> Option<usize> {
    let (mut depth, mut strings) = (0i32, super::parse::Strings::default());
    for (i, c) in rest.char_indices() {
        if !strings.outside(c) {
            continue;
        }
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{MetricKind, Op, TextMetric};

    #[test]
    fn percentiles_match_hand_computed_values() {
        // x = 10, 20, 30, 40 (n = 4). Definition 7: h = (n - 1)q.
        // q = 0.5: h = 1.5 → 20 + 0.5·(30 − 20) = 25.
        // q = 0.95: h = 2.85 → 30 + 0.85·(40 − 30) = 38.5.
        // q = 0.9: h = 2.7 → 30 + 0.7·10 = 37.
        let x = [10.0, 20.0, 30.0, 40.0];
        assert_eq!(percentile(&x, 0.5), 25.0);
        assert!((percentile(&x, 0.95) - 38.5).abs() < 1e-9);
        assert!((percentile(&x, 0.9) - 37.0).abs() < 1e-9);
        // 1..=20 ms: p95 → h = 19·0.95 = 18.05 → 19 + 0.05·1 = 19.05 (NumPy
        // gives 19.05 too; definition 8 would give 19.6833...).
        let ms: Vec<f64> = (1..=20).map(f64::from).collect();
        assert!((percentile(&ms, 0.95) - 19.05).abs() < 1e-9);
        // One value is every percentile; the ends are min and max.
        assert_eq!(percentile(&[7.0], 0.99), 7.0);
        assert_eq!(percentile(&x, 0.0), 10.0);
        assert_eq!(percentile(&x, 1.0), 40.0);
        // Order does not matter to `Stat::of`.
        assert_eq!(
            Stat::Percentile(50).of(&[40.0, 10.0, 30.0, 20.0]),
            Some(25.0)
        );
        assert_eq!(Stat::Mean.of(&[40.0, 10.0, 30.0, 20.0]), Some(25.0));
        assert_eq!(Stat::Percentile(95).of(&[]), None);
    }

    #[test]
    fn statistics_are_named_mean_or_p1_to_p99() {
        assert_eq!(Stat::parse("mean"), Some(Stat::Mean));
        assert_eq!(Stat::parse("p95"), Some(Stat::Percentile(95)));
        assert_eq!(Stat::parse("p1"), Some(Stat::Percentile(1)));
        for bad in ["p0", "p100", "p", "p05", "p9x", "median", "P95"] {
            assert_eq!(Stat::parse(bad), None, "{bad}");
        }
        assert_eq!(Stat::Percentile(95).to_string(), "p95");
        let json = serde_json::to_string(&Stat::Percentile(50)).unwrap();
        assert_eq!(json, "\"p50\"");
        assert_eq!(
            serde_json::from_str::<Stat>(&json).unwrap(),
            Stat::Percentile(50)
        );
        assert!(serde_json::from_str::<Stat>("\"p200\"").is_err());
    }

    #[test]
    fn gates_parse_with_and_without_a_statistic() {
        let gates = parse_gates(
            "partial_match >= 0.7, p95(latency_ms) <= 3000, mean(cost_usd) <= 0.01, p50(latency_ms) <= 800, contains(case_sensitive = true) >= 0.5",
        )
        .unwrap();
        let shown: Vec<String> = gates.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "partial_match >= 0.7",
                "p95(latency_ms) <= 3000",
                "cost_usd <= 0.01",
                "p50(latency_ms) <= 800",
                "contains >= 0.5"
            ]
        );
        assert_eq!(gates[1].stat, Stat::Percentile(95));
        assert_eq!(gates[1].spec.kind, MetricKind::Measured(Measure::LatencyMs));
        assert_eq!(
            (gates[1].spec.op, gates[1].spec.threshold),
            (Op::AtMost, 3000.0)
        );
        assert_eq!(gates[1].measured(), Some(Measure::LatencyMs));
        assert_eq!(gates[0].measured(), None);
        assert_eq!(
            gates[4].spec.kind,
            MetricKind::Text(TextMetric::Contains {
                case_sensitive: true
            })
        );
        for (bad, msg) in [
            ("p955(latency_ms) <= 1", "`p955` is not a statistic"),
            ("median(latency_ms) <= 1", "expected `mean`, `p1`"),
            (
                "p95(latency_ms)",
                "`latency_ms` has no default threshold: give one, e.g. `latency_ms <= 2000`",
            ),
            ("p95(latency_ms) >= 10", "`latency_ms` is better when lower"),
            ("p95(latency_ms) <= -1", "`latency_ms` scores 0 or more"),
            ("p95(latencyms) <= 1", "unknown metric `latencyms`"),
            ("p95(latency_ms) <= 1, p95(latency_ms) <= 2", "listed twice"),
            ("p95(latency_ms <= 1", "unclosed"),
            ("", "no metrics"),
        ] {
            let e = parse_gates(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
        }
    }

    #[test]
    fn pass_statistics_parse_in_both_spellings() {
        assert_eq!(Stat::parse("pass@3"), Some(Stat::PassAt(3)));
        assert_eq!(Stat::parse("pass_at_3"), Some(Stat::PassAt(3)));
        assert_eq!(Stat::parse("pass^2"), Some(Stat::PassHat(2)));
        assert_eq!(Stat::parse("pass_hat_100"), Some(Stat::PassHat(100)));
        for bad in [
            "pass@0", "pass@", "pass@03", "pass@101", "pass@-1", "pass^x", "pass_at3", "pass",
        ] {
            assert_eq!(Stat::parse(bad), None, "{bad}");
        }
        assert_eq!(Stat::PassAt(3).to_string(), "pass@3");
        assert_eq!(Stat::PassHat(2).to_string(), "pass^2");
        assert_eq!(Stat::PassAt(3).over_runs(), Some(3));
        assert_eq!(Stat::Percentile(95).over_runs(), None);
        assert_eq!(Stat::PassAt(3).of(&[1.0, 0.5]), Some(0.75));
        let json = serde_json::to_string(&Stat::PassHat(4)).unwrap();
        assert_eq!(json, "\"pass^4\"");
        assert_eq!(
            serde_json::from_str::<Stat>(&json).unwrap(),
            Stat::PassHat(4)
        );
    }

    #[test]
    fn pass_gates_hold_a_share_and_keep_the_metric() {
        let gates = parse_gates(
            "pass@3(contains) >= 0.9, pass^2(tool_call_accuracy) >= 0.7, pass_at_3(contains(case_sensitive = true)) >= 0.5, pass^1(steps) >= 0.5, contains >= 0.5",
        )
        .unwrap_err()
        .to_string();
        // `contains` twice under pass@3 (options do not make another metric).
        assert!(gates.contains("listed twice"), "{gates}");
        let gates = parse_gates(
            "pass@3(contains) >= 0.9, pass^2(tool_call_accuracy) >= 0.7, pass_at_2(contains(case_sensitive = true)) >= 0.5, pass^1(hallucination) >= 0.5, pass@2(steps) >= 0, contains >= 0.5, pass@1(exact_match@turn2) >= 1",
        )
        .unwrap();
        let shown: Vec<String> = gates.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "pass@3(contains) >= 0.9",
                "pass^2(tool_call_accuracy) >= 0.7",
                "pass@2(contains) >= 0.5",
                "pass^1(hallucination) >= 0.5",
                "pass@2(steps) >= 0",
                "contains >= 0.5",
                "pass@1(exact_match@turn2) >= 1",
            ]
        );
        assert_eq!(gates[0].stat, Stat::PassAt(3));
        assert_eq!(
            (gates[0].spec.op, gates[0].spec.threshold),
            (Op::AtLeast, 0.9)
        );
        assert_eq!(
            gates[2].spec.kind,
            MetricKind::Text(TextMetric::Contains {
                case_sensitive: true
            })
        );
        // A lower-is-better metric: the gate is still on a share, at least.
        assert_eq!(gates[3].spec.op, Op::AtLeast);
        assert_eq!(gates[6].spec.turn, Some(1));
        for (bad, msg) in [
            ("pass@0(contains) >= 0.9", "`pass@0` is not a statistic"),
            ("pass@101(contains) >= 0.9", "K from 1 to 100"),
            (
                "pass@3(latency_ms) <= 3000",
                "`latency_ms` is measured, not passed or failed per run",
            ),
            ("pass^2(cost_usd) >= 0.5", "gate a percentile instead"),
            ("pass@3(contains)", "give its minimum after the parentheses"),
            ("pass@3(contains) <= 0.9", "a share of samples from 0 to 1"),
            ("pass@3(contains) >= 1.5", "e.g. `pass@3(contains) >= 0.9`"),
            ("pass@3(contains) >= x", "give its minimum"),
            ("pass@3(contans) >= 0.9", "unknown metric `contans`"),
            (
                "pass@3(contains(case = true)) >= 0.9",
                "has no option `case`",
            ),
        ] {
            let e = parse_gates(bad).unwrap_err().to_string();
            assert!(e.contains(msg), "{bad}: {e}");
        }
        // The attribute's form resolves to the same gate.
        let decl = GateDecl {
            stat: Stat::PassHat(2),
            metric: MetricDecl {
                name: "tool_call_accuracy",
                options: &[],
                bound: Some((Op::AtLeast, 0.7)),
                named: None,
            },
        };
        assert_eq!(decl.to_gate().unwrap(), gates[1]);
        let measured = GateDecl {
            stat: Stat::PassAt(2),
            metric: MetricDecl {
                name: "ttft_ms",
                options: &[],
                bound: Some((Op::AtLeast, 0.7)),
                named: None,
            },
        };
        assert!(measured.to_gate().is_err());
    }
}
