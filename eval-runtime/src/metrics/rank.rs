//! The rank metrics of a retrieval query, as Unrag defines them, which is
//! trec_eval's definition for binary relevance (trec_eval `P.k`,
//! `recall.k`, `recip_rank`, `ndcg_cut.k`): the retrieved `sourceId`s are
//! de-duplicated in rank order and cut at k, the relevant ids form a set, then
//!
//! - hit@k = 1 if a relevant document is among them, else 0;
//! - recall@k = relevant retrieved / relevant documents (0 when there are none);
//! - precision@k = relevant retrieved / k (divided by k even when fewer were
//!   retrieved);
//! - MRR@k = 1 / rank of the first relevant document (0 if none);
//! - nDCG@k = DCG / ideal DCG with gain 1 / log2(rank + 1), the ideal ranking
//!   holding min(relevant, k) relevant documents (0 when there are none).

use eval_datasets::retrieval::RankMetric;
use serde::{Deserialize, Serialize};

/// The rank metrics of one query (see the module docs for the definitions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct RankScores {
    /// hit@k
    pub hit: f64,
    /// recall@k
    pub recall: f64,
    /// precision@k
    pub precision: f64,
    /// MRR@k
    pub mrr: f64,
    /// nDCG@k
    pub ndcg: f64,
}

impl RankScores {
    /// The value of `metric`.
    pub(crate) fn get(&self, metric: RankMetric) -> f64 {
        match metric {
            RankMetric::Hit => self.hit,
            RankMetric::Recall => self.recall,
            RankMetric::Precision => self.precision,
            RankMetric::Mrr => self.mrr,
            RankMetric::Ndcg => self.ndcg,
        }
    }
}

/// `ids` without repeats (and without empty ids), in rank order.
pub(crate) fn unique_in_order(ids: &[String]) -> Vec<&str> {
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .map(String::as_str)
        .filter(|id| !id.is_empty() && seen.insert(*id))
        .collect()
}

/// The relevant ids as a set, as trec_eval's qrels: a repeated id is one
/// relevant document; an empty id is none.
fn relevant_ids(relevant: &[String]) -> std::collections::HashSet<&str> {
    relevant
        .iter()
        .map(String::as_str)
        .filter(|id| !id.is_empty())
        .collect()
}

/// hit, recall, precision, MRR and nDCG at `k` of a ranked list of retrieved
/// `sourceId`s against the relevant ones.
pub(crate) fn metrics_at_k(retrieved: &[String], relevant: &[String], k: usize) -> RankScores {
    let k = k.max(1);
    let relevant_set = relevant_ids(relevant);
    let ranked: Vec<&str> = unique_in_order(retrieved).into_iter().take(k).collect();
    let mut hits = 0usize;
    let mut first = None;
    let mut dcg = 0.0;
    for (i, id) in ranked.iter().enumerate() {
        if relevant_set.contains(id) {
            hits += 1;
            first.get_or_insert(i + 1);
            dcg += 1.0 / ((i + 2) as f64).log2();
        }
    }
    let ideal: f64 = (0..relevant_set.len().min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    RankScores {
        hit: if hits > 0 { 1.0 } else { 0.0 },
        recall: if relevant_set.is_empty() {
            0.0
        } else {
            hits as f64 / relevant_set.len() as f64
        },
        precision: hits as f64 / k as f64,
        mrr: first.map_or(0.0, |r| 1.0 / r as f64),
        ndcg: if ideal == 0.0 { 0.0 } else { dcg / ideal },
    }
}

/// Why a query scored as it did, in one line: how many relevant ids are in
/// the top `k` (and how many distinct ids were retrieved), and the rank of
/// the first (`1 of 2 relevant id(s) in the top 3 (4 retrieved); the first
/// at rank 2 (doc-b)`), which may be beyond `k`.
pub(crate) fn explain(retrieved: &[String], relevant: &[String], k: usize) -> String {
    let k = k.max(1);
    let relevant_set = relevant_ids(relevant);
    if relevant_set.is_empty() {
        return "no relevant ids: nothing to find".into();
    }
    let ranked = unique_in_order(retrieved);
    let hits = ranked
        .iter()
        .take(k)
        .filter(|id| relevant_set.contains(*id))
        .count();
    let mut why = format!(
        "{hits} of {} relevant id(s) in the top {k} ({} retrieved)",
        relevant_set.len(),
        ranked.len()
    );
    match ranked.iter().position(|id| relevant_set.contains(id)) {
        Some(i) => why.push_str(&format!("; the first at rank {} ({})", i + 1, ranked[i])),
        None if ranked.is_empty() => {}
        None => why.push_str(&format!("; none of them relevant (first: {})", ranked[0])),
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_gives_the_rank_of_the_first_relevant_id() {
        assert_eq!(
            explain(&ids(&["d1", "d2", "d1", "d3"]), &ids(&["d3", "d9"]), 2),
            "0 of 2 relevant id(s) in the top 2 (3 retrieved); the first at rank 3 (d3)"
        );
        assert_eq!(
            explain(&ids(&["d2", "d1"]), &ids(&["d1", "d2"]), 5),
            "2 of 2 relevant id(s) in the top 5 (2 retrieved); the first at rank 1 (d2)"
        );
        assert_eq!(
            explain(&ids(&["x"]), &ids(&["a"]), 3),
            "0 of 1 relevant id(s) in the top 3 (1 retrieved); none of them relevant (first: x)"
        );
        assert_eq!(
            explain(&[], &ids(&["a"]), 3),
            "0 of 1 relevant id(s) in the top 3 (0 retrieved)"
        );
    }

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn metrics_match_hand_computed_trec_values() {
        // Ranked d1 d2 d1(dup) d3 d4 d5; relevant {d2, d4, d9}; k = 5.
        let got = metrics_at_k(
            &ids(&["d1", "d2", "d1", "d3", "d4", "d5"]),
            &ids(&["d2", "d4", "d9"]),
            5,
        );
        // Deduplicated top 5: d1 d2 d3 d4 d5 -> relevant at ranks 2 and 4.
        assert_eq!(got.hit, 1.0);
        assert!((got.recall - 2.0 / 3.0).abs() < 1e-12);
        assert!((got.precision - 2.0 / 5.0).abs() < 1e-12);
        assert!((got.mrr - 0.5).abs() < 1e-12);
        // DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3) + 1/2.
        let dcg = 1.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 1.0 + 1.0 / 3f64.log2() + 0.5;
        assert!((got.ndcg - dcg / idcg).abs() < 1e-12);
        // Fewer retrieved than k: precision still divides by k (Unrag's report: 1 of 2 at k=10 is 0.1).
        let got = metrics_at_k(&ids(&["a", "b"]), &ids(&["a"]), 10);
        assert_eq!(
            (got.hit, got.recall, got.precision, got.mrr, got.ndcg),
            (1.0, 1.0, 0.1, 1.0, 1.0)
        );
        // Nothing relevant: all 0.
        let got = metrics_at_k(&ids(&["a"]), &[], 3);
        assert_eq!(
            (got.hit, got.recall, got.precision, got.mrr, got.ndcg),
            (0.0, 0.0, 0.0, 0.0, 0.0)
        );
        // A repeated relevant id is one document (trec_eval's qrels are a set).
        let got = metrics_at_k(&ids(&["a"]), &ids(&["a", "a"]), 5);
        assert_eq!((got.recall, got.ndcg), (1.0, 1.0));
        // A relevant document beyond k does not count.
        let got = metrics_at_k(&ids(&["x", "y", "a"]), &ids(&["a"]), 2);
        assert_eq!((got.hit, got.mrr), (0.0, 0.0));
    }
}
