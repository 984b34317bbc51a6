//! [`Subset`]: which samples of a dataset a run is about.

use eval_datasets::Sample;

/// Which samples of a dataset a run is about (the `evals` command's
/// `--tag`, `--sample-size`/`--seed`, `--max-samples`): the plan holds that
/// subset, so gates judge its mean.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Subset {
    /// Samples must carry every one of these tags (letta's `sample_tags`).
    pub tags: Vec<String>,
    /// Then this many drawn at random with `seed` (file order kept).
    pub sample_size: Option<usize>,
    /// The seed of the draw.
    pub seed: u64,
    /// Then at most this many (letta's `max_samples`).
    pub max: Option<usize>,
}

/// Default seed for [`Subset::sample_size`], so two runs pick the same samples.
pub(crate) const DEFAULT_SEED: u64 = 42;

impl Subset {
    /// Every sample.
    pub fn all() -> Self {
        Subset {
            seed: DEFAULT_SEED,
            ..Subset::default()
        }
    }

    /// Samples with every one of `tags`, then `sample_size` of them drawn
    /// with `seed` (default 42), then at most `max`.
    pub fn new(
        tags: Vec<String>,
        sample_size: Option<usize>,
        seed: Option<u64>,
        max: Option<usize>,
    ) -> Self {
        Subset {
            tags,
            sample_size,
            seed: seed.unwrap_or(DEFAULT_SEED),
            max,
        }
    }

    /// Whether this keeps every sample.
    pub fn is_all(&self) -> bool {
        self.tags.is_empty() && self.sample_size.is_none() && self.max.is_none()
    }

    /// The indexes of `samples` kept, in file order: those with every tag,
    /// then `sample_size` of them drawn with `seed`, then at most `max`.
    pub fn pick(&self, samples: &[Sample]) -> Vec<usize> {
        let mut kept: Vec<usize> = (0..samples.len())
            .filter(|i| {
                self.tags
                    .iter()
                    .all(|t| samples[*i].tags.iter().any(|have| have == t))
            })
            .collect();
        if let Some(n) = self.sample_size
            && n < kept.len()
        {
            let mut chosen = choose(kept.len(), n, self.seed);
            chosen.sort_unstable();
            kept = chosen.into_iter().map(|i| kept[i]).collect();
        }
        if let Some(max) = self.max {
            kept.truncate(max);
        }
        kept
    }
}

/// `n` distinct indexes below `len`, by a partial Fisher-Yates shuffle driven
/// by SplitMix64 (stable across platforms and releases).
fn choose(len: usize, n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut idx: Vec<usize> = (0..len).collect();
    for i in 0..n {
        let j = i + (next() % (len - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(n);
    idx
}
