//! The names of the rank metrics of a retrieval query: hit, recall,
//! precision, MRR and nDCG at k (public as `eval_datasets::retrieval::RankMetric`).
//! They are computed by the runtime (`eval_runtime::metrics::rank`).

use serde::{Deserialize, Serialize};

/// A rank metric. Not `non_exhaustive`: a new one must be computed by the
/// runtime, which matches on every variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord, Hash)]
pub enum RankMetric {
    /// hit@k
    Hit,
    /// recall@k
    Recall,
    /// precision@k
    Precision,
    /// MRR@k
    Mrr,
    /// nDCG@k
    Ndcg,
}

impl RankMetric {
    /// All, in report order.
    pub const ALL: [RankMetric; 5] = [
        RankMetric::Hit,
        RankMetric::Recall,
        RankMetric::Precision,
        RankMetric::Mrr,
        RankMetric::Ndcg,
    ];

    /// `recall@k`, ...
    pub fn name(self) -> &'static str {
        match self {
            RankMetric::Hit => "hit@k",
            RankMetric::Recall => "recall@k",
            RankMetric::Precision => "precision@k",
            RankMetric::Mrr => "mrr@k",
            RankMetric::Ndcg => "ndcg@k",
        }
    }

    /// The metric a name (ours, or Unrag's `recallAtK`) stands for.
    pub fn parse(name: &str) -> Option<RankMetric> {
        let n = name.trim().to_ascii_lowercase().replace(['@', '_'], "");
        Some(match n.as_str() {
            "hitk" | "hitatk" | "hit" => RankMetric::Hit,
            "recallk" | "recallatk" | "recall" => RankMetric::Recall,
            "precisionk" | "precisionatk" | "precision" => RankMetric::Precision,
            "mrrk" | "mrratk" | "mrr" => RankMetric::Mrr,
            "ndcgk" | "ndcgatk" | "ndcg" => RankMetric::Ndcg,
            _ => return None,
        })
    }
}
