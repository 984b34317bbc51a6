//! Which samples a run evaluates: tags (all must match, letta's
//! `sample_tags`), a seeded random sample (agentspec `--sample-size`), a cap
//! (letta's `max_samples`).

use eval_core::Sample;

/// Default seed for `--sample-size`, so two runs pick the same samples.
pub const DEFAULT_SEED: u64 = 42;

/// Keeps the samples that carry every tag in `tags`, then `sample_size`
/// of them drawn at random with `seed` (file order kept), then at most
/// `max` of those.
pub fn select(
    samples: Vec<Sample>,
    tags: &[String],
    sample_size: Option<usize>,
    seed: u64,
    max: Option<usize>,
) -> Vec<Sample> {
    let mut kept: Vec<Sample> = samples
        .into_iter()
        .filter(|s| tags.iter().all(|t| s.tags.iter().any(|have| have == t)))
        .collect();
    if let Some(n) = sample_size
        && n < kept.len()
    {
        let mut chosen = choose(kept.len(), n, seed);
        chosen.sort_unstable();
        let mut all: Vec<Option<Sample>> = kept.into_iter().map(Some).collect();
        kept = chosen.into_iter().filter_map(|i| all[i].take()).collect();
    }
    if let Some(max) = max {
        kept.truncate(max);
    }
    kept
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

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<Sample> {
        (0..10)
            .map(|i| {
                let mut s = Sample::new(format!("q{i}"));
                s.id = i.to_string();
                s.tags = match i % 3 {
                    0 => vec!["a".into(), "b".into()],
                    1 => vec!["a".into()],
                    _ => vec![],
                };
                s
            })
            .collect()
    }

    fn ids(s: &[Sample]) -> Vec<&str> {
        s.iter().map(|s| s.id.as_str()).collect()
    }

    #[test]
    fn tags_must_all_match() {
        let all = select(samples(), &["a".into(), "b".into()], None, 0, None);
        assert_eq!(ids(&all), ["0", "3", "6", "9"]);
        let a = select(samples(), &["a".into()], None, 0, Some(3));
        assert_eq!(ids(&a), ["0", "1", "3"]);
    }

    #[test]
    fn sampling_is_seeded_distinct_and_in_file_order() {
        let one = select(samples(), &[], Some(4), 7, None);
        let two = select(samples(), &[], Some(4), 7, None);
        assert_eq!(ids(&one), ids(&two));
        assert_eq!(one.len(), 4);
        let mut sorted = one.iter().map(|s| s.index_key()).collect::<Vec<_>>();
        sorted.dedup();
        assert_eq!(sorted.len(), 4);
        assert!(
            one.windows(2)
                .all(|w| w[0].id.parse::<u32>().unwrap() < w[1].id.parse::<u32>().unwrap())
        );
        let other = select(samples(), &[], Some(4), 8, None);
        assert_ne!(ids(&one), ids(&other), "another seed, another draw");
        assert_eq!(select(samples(), &[], Some(50), 7, None).len(), 10);
    }

    trait Key {
        fn index_key(&self) -> String;
    }
    impl Key for Sample {
        fn index_key(&self) -> String {
            self.id.clone()
        }
    }
}
