//! Gates: a statistic of a metric over a dataset's samples, held to a
//! threshold — `partial_match >= 0.7` (the mean), `mean(cost_usd) <= 0.01`,
//! `p95(latency_ms) <= 3000`. Parsed here once, for the attribute (at
//! compile time), the harness, manifests and the `evals` command.

use std::fmt;

use super::catalog::Measure;
use super::error::{MetricSpecError, SpecErrorKind, SpecPart};
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
}

impl Stat {
    /// `mean`, or `p1` … `p99` (`p50` is the median).
    pub fn parse(name: &str) -> Option<Stat> {
        if name == "mean" {
            return Some(Stat::Mean);
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

    /// The statistic of `values` (in any order; `None` when empty).
    pub fn of(self, values: &[f64]) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        Some(match self {
            Stat::Mean => values.iter().sum::<f64>() / values.len() as f64,
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
        }
    }
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
                "`{text}` is not a statistic: expected mean or p1..p99"
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

    /// Whether the gate is judged over what the engine measured
    /// (`latency_ms`, `ttft_ms`, `cost_usd`): then the dataset need not be
    /// scored with the metric.
    pub fn measured(&self) -> Option<Measure> {
        self.spec.info().measured()
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
        Ok(GateSpec::new(self.stat, self.metric.to_spec()?))
    }
}

/// Parses a comma-separated list of gates: `"partial_match >= 0.7,
/// p95(latency_ms) <= 3000, mean(cost_usd) <= 0.01"`. A gate without a
/// statistic is on the mean. The same metric may be gated by several
/// statistics, each once.
pub fn parse_gates(text: &str) -> Result<Vec<GateSpec>, MetricSpecError> {
    let bad = |kind: SpecErrorKind| MetricSpecError(kind, SpecPart::Name);
    let mut gates: Vec<GateSpec> = Vec::new();
    for part in super::parse::split_top_level(text).map_err(|e| bad(SpecErrorKind::Syntax(e)))? {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (stat, metric) = split_stat(part)?;
        let mut specs = parse_specs(&metric)?;
        let Some(spec) = specs.pop() else {
            return Err(bad(SpecErrorKind::NoMetrics));
        };
        let gate = GateSpec::new(stat, spec);
        if gates.iter().any(|g| {
            // issue36:geval — by identity: two `g_eval` differ by their `name`
            (g.stat, g.spec.identity(), g.spec.turn)
                == (gate.stat, gate.spec.identity(), gate.spec.turn)
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

/// `p95(latency_ms) <= 3000` → (`p95`, `latency_ms <= 3000`); a part with no
/// statistic is on the mean. A name followed by `(` is a statistic when the
/// parentheses hold a metric rather than options (`key = value`).
fn split_stat(part: &str) -> Result<(Stat, String), MetricSpecError> {
    let Some((head, rest)) = part.split_once('(') else {
        return Ok((Stat::Mean, part.to_string()));
    };
    let head = head.trim();
    let Some(close) = matching_paren(rest) else {
        return Ok((Stat::Mean, part.to_string()));
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
        return Ok((Stat::Mean, part.to_string()));
    }
    let stat = Stat::parse(head).ok_or_else(|| {
        MetricSpecError(
            SpecErrorKind::UnknownStat {
                name: head.to_string(),
            },
            SpecPart::Name,
        )
    })?;
    Ok((stat, format!("{}{}", inner.trim(), &rest[close + 1..])))
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
    use crate::metric::{MetricKind, Op};

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
            MetricKind::Contains {
                case_sensitive: true
            }
        );
        for (bad, msg) in [
            ("p955(latency_ms) <= 1", "`p955` is not a statistic"),
            ("median(latency_ms) <= 1", "expected `mean` or `p1`"),
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
}
