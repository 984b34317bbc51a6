//! The retrieval rank metrics' definitions; the metrics themselves are
//! [`RankMetric`] (eval-datasets `rank.rs`), scored by eval-runtime's
//! `metrics::rank`.

use super::MetricKind;
use super::catalog::{MetricInfo, Need, Op, Threshold};
use crate::rank::RankMetric;

macro_rules! rank {
    ($name:literal, $aliases:expr, $threshold:expr, $pass_fail:expr, $kind:expr, $summary:literal) => {
        MetricInfo {
            name: $name,
            aliases: $aliases,
            op: Op::AtLeast,
            threshold: Threshold::Default($threshold),
            range: (0.0, 1.0),
            pass_fail: $pass_fail,
            needs: &[Need::RelevantIds],
            options: &[],
            summary: $summary,
            reference: "trec_eval; Unrag's retrieval evals (seed 004)",
            build: |_| Ok(MetricKind::Rank($kind)),
        }
    };
}

/// The rank metrics.
pub(super) static METRICS: &[MetricInfo] = &[
    rank!(
        "hit_at_k",
        &["hit@k", "hitAtK"],
        1.0,
        true,
        RankMetric::Hit,
        "retrieval: 1 if a relevant document is among the top k retrieved (Unrag, trec_eval), else 0"
    ),
    rank!(
        "recall_at_k",
        &["recall@k", "recallAtK"],
        0.75,
        false,
        RankMetric::Recall,
        "retrieval: relevant documents among the top k / relevant documents"
    ),
    rank!(
        "precision_at_k",
        &["precision@k", "precisionAtK"],
        0.0,
        false,
        RankMetric::Precision,
        "retrieval: relevant documents among the top k / k (trec_eval's P@k)"
    ),
    rank!(
        "mrr_at_k",
        &["mrr@k", "mrrAtK"],
        0.5,
        false,
        RankMetric::Mrr,
        "retrieval: 1 / rank of the first relevant document within the top k, else 0"
    ),
    rank!(
        "ndcg_at_k",
        &["ndcg@k", "ndcgAtK"],
        0.5,
        false,
        RankMetric::Ndcg,
        "retrieval: nDCG at k with binary relevance (gain 1/log2(rank+1), ideal = all relevant first)"
    ),
];
