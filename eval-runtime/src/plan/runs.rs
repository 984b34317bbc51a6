//! What `pass@k` and `pass^k` gates ask of a dataset's plan: k runs of
//! each sample, which its `repeat` must give.

use eval_datasets::Repeat;

use crate::model::Gate;

/// The problems of `gates` (of the dataset shown as `what`) under `repeat`:
/// a `pass@k` or `pass^k` gate with k above the runs every sample gets (a
/// fixed `repeat = n`, or the first runs of `auto`, after which a sample
/// whose verdict is decided stops).
pub(crate) fn runs_needed(gates: &[Gate], repeat: Repeat, what: &str) -> Vec<String> {
    let sure = repeat.first_runs();
    gates
        .iter()
        .filter_map(|g| {
            let k = g.stat.over_runs()?;
            (k > sure).then(|| {
                let given = match repeat {
                    Repeat::Runs(n) => format!("repeat is {n}"),
                    Repeat::Auto { .. } => format!(
                        "under repeat = {repeat} a sample whose verdict is decided stops after {sure} runs"
                    ),
                };
                format!(
                    "gate `{g}` for {what} needs {k} runs of each sample, but {given}: set `repeat = N` with N ≥ {k} (e.g. `.repeat({k})`, `--repeat {k}`, the attribute's `repeat = {k}`)"
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval_datasets::Op;
    use eval_datasets::metric::Stat;

    #[test]
    fn a_pass_gate_needs_k_runs_of_every_sample() {
        let gate = |stat| Gate::new("contains", Op::AtLeast, 0.9).with_stat(stat);
        let gates = [
            gate(Stat::PassAt(3)),
            gate(Stat::PassHat(5)),
            gate(Stat::Mean),
            gate(Stat::Percentile(50)),
        ];
        assert!(runs_needed(&gates, Repeat::Runs(5), "x.jsonl").is_empty());
        let p = runs_needed(&gates, Repeat::Runs(1), "x.jsonl");
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(
            p[0],
            "gate `pass@3(contains) >= 0.9` for x.jsonl needs 3 runs of each sample, but repeat is 1: set `repeat = N` with N ≥ 3 (e.g. `.repeat(3)`, `--repeat 3`, the attribute's `repeat = 3`)"
        );
        let p = runs_needed(&gates, Repeat::Auto { max: 20 }, "x.jsonl");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].contains("pass^5(contains)") && p[0].contains("stops after 3 runs"),
            "{}",
            p[0]
        );
    }
}
