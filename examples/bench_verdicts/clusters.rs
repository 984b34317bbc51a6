//! Section 6: clustered gates with few clusters.
//!
//! Samples come in clusters (questions about one document) whose pass
//! rates differ: each cluster's rate is 0.7 ± 0.2 (uniform), ten samples
//! per cluster, so the population's mean is 0.7. A gate `contains >= 0.7`
//! clustered by the document (`cluster_by`) gets an interval from the
//! engine; this counts how often that 95% interval holds 0.7, beside the
//! same samples' interval when the clusters are ignored.

use std::sync::Mutex;

use eval_runtime::plan::PlanBuilder;
use eval_runtime::{Response, Sample};

use crate::sim::{evaluate, rate, uniform};

/// Each cluster's pass rate in the current run.
static RATES: Mutex<Vec<f64>> = Mutex::new(Vec::new());
const PER_CLUSTER: usize = 10;

async fn agent(sample: &Sample) -> Response {
    let cluster: usize = sample.id[1..5].parse().unwrap_or(0);
    let p = RATES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(cluster)
        .copied()
        .unwrap_or(0.0);
    Response::new(if uniform() < p { "paris" } else { "berlin" })
}

/// One run of `clusters` clusters: whether the clustered and the plain
/// gate intervals hold the true mean 0.7.
fn covered(clusters: usize, clustered: bool) -> bool {
    *RATES.lock().unwrap_or_else(|e| e.into_inner()) =
        (0..clusters).map(|_| 0.5 + 0.4 * uniform()).collect();
    let samples: Vec<Sample> = (0..clusters * PER_CLUSTER)
        .map(|i| {
            let c = i / PER_CLUSTER;
            let mut s = Sample::new(format!("question {i}")).with_expected("paris");
            s.id = format!("c{c:04}q{i:05}");
            s.metadata.insert("doc".into(), format!("d{c}").into());
            s
        })
        .collect();
    let mut plan = PlanBuilder::new()
        .samples("qa", samples, "contains")
        .gate("contains >= 0.7");
    if clustered {
        plan = plan.cluster_by("doc");
    }
    let results = evaluate(plan, &eval_runtime::FnAgent(agent));
    let gate = results.datasets[0].metrics[0].gate.as_ref();
    gate.and_then(|g| g.interval)
        .is_some_and(|i| i.contains(0.7))
}

/// Section 6: `runs` runs per number of clusters.
pub(crate) fn section(runs: usize) {
    println!(
        "\n== Clustered gates: 95% intervals holding the true mean (0.7), {runs} runs, {PER_CLUSTER} samples per cluster, cluster rates 0.7 ± 0.2 =="
    );
    for clusters in [3, 5, 10, 30] {
        let with = (0..runs).filter(|_| covered(clusters, true)).count();
        let without = (0..runs).filter(|_| covered(clusters, false)).count();
        println!(
            "{clusters} clusters: clustered (CR1, t on C − 1) {}; ignoring the clusters {}",
            rate(with, runs),
            rate(without, runs)
        );
    }
}
