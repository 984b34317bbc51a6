//! What to generate next: the mix of query types and difficulties as slots,
//! and the passages each slot is written from, drawn reproducibly from a
//! seed.

use std::collections::BTreeMap;

use super::corpus::{Chunk, Corpus};
use super::{Difficulty, GenerateError, Mix, QueryType};

/// The seeded generator of `evals generate`: ChaCha8 (rand_chacha), whose
/// stream for a seed is the same on every platform; numbers below a bound
/// and shuffles are rand's, without modulo bias. (Before issue 39 this was a
/// hand-written SplitMix64 taking `next() % n`: the same seed now draws
/// other slots and passages than it did then.)
#[derive(Debug, Clone)]
pub(crate) struct Rng(rand_chacha::ChaCha8Rng);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        use rand::SeedableRng as _;
        Rng(rand_chacha::ChaCha8Rng::seed_from_u64(seed))
    }

    pub(crate) fn next(&mut self) -> u64 {
        rand::RngCore::next_u64(&mut self.0)
    }

    /// A number below `n` (`n` ≥ 1), each as likely.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        rand::Rng::random_range(&mut self.0, 0..n.max(1))
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        rand::seq::SliceRandom::shuffle(items, &mut self.0);
    }
}

/// `needed` values drawn so that, with the `have` already made, the whole
/// of `total` follows `mix` as closely as whole numbers allow: each pick
/// goes to the value furthest below its share.
pub(crate) fn fill<T: Copy + Ord>(
    mix: &Mix<T>,
    total: usize,
    have: &BTreeMap<T, usize>,
    needed: usize,
) -> Vec<T> {
    let sum: f64 = mix.weights().iter().map(|(_, w)| w).sum();
    let mut planned: BTreeMap<T, usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(needed);
    for _ in 0..needed {
        let pick = mix
            .weights()
            .iter()
            .map(|&(value, weight)| {
                let share = weight / sum * total as f64;
                let made = have.get(&value).copied().unwrap_or(0)
                    + planned.get(&value).copied().unwrap_or(0);
                (value, share - made as f64)
            })
            // The largest deficit; the first listed wins a tie.
            .fold(None::<(T, f64)>, |best, (v, d)| match best {
                Some((_, bd)) if bd >= d => best,
                _ => Some((v, d)),
            });
        if let Some((value, _)) = pick {
            *planned.entry(value).or_insert(0) += 1;
            out.push(value);
        }
    }
    out
}

/// Draws passages for slots: primary chunks in a seeded order that visits
/// every chunk before repeating one, partners among the chunks that share
/// the most content words with it.
#[derive(Debug)]
pub(crate) struct Picker<'a> {
    corpus: &'a Corpus,
    rng: Rng,
    order: Vec<usize>,
    next: usize,
}

impl<'a> Picker<'a> {
    pub(crate) fn new(corpus: &'a Corpus, seed: u64) -> Picker<'a> {
        let mut rng = Rng::new(seed);
        let mut order: Vec<usize> = (0..corpus.chunks.len()).collect();
        rng.shuffle(&mut order);
        Picker {
            corpus,
            rng,
            order,
            next: 0,
        }
    }

    fn primary(&mut self) -> usize {
        if self.next == self.order.len() {
            self.rng.shuffle(&mut self.order);
            self.next = 0;
        }
        self.next += 1;
        self.order[self.next - 1]
    }

    /// Up to `n` chunks related to `to` (not `to`, nor in `skip`), from
    /// other documents when `other_doc`: one of the three best related at
    /// random, then the next.
    fn related(&mut self, to: usize, n: usize, other_doc: bool, skip: &[usize]) -> Vec<usize> {
        let chunks = &self.corpus.chunks;
        let mut ranked: Vec<(usize, usize, u64)> = chunks
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                *i != to && !skip.contains(i) && (!other_doc || c.doc != chunks[to].doc)
            })
            .map(|(i, c)| (i, c.shared(&chunks[to]), self.rng.next()))
            .collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)));
        let top = ranked.len().min(3);
        if top > 1 {
            let first = self.rng.below(top);
            ranked.swap(0, first);
        }
        ranked.into_iter().take(n).map(|(i, _, _)| i).collect()
    }

    /// The passages of one question of `kind`.
    pub(crate) fn passages(&mut self, kind: QueryType) -> Result<Vec<&'a Chunk>, GenerateError> {
        let first = self.primary();
        let chunks = &self.corpus.chunks;
        let picked: Vec<usize> = match kind {
            QueryType::Factual
            | QueryType::Procedural
            | QueryType::Temporal
            | QueryType::Unanswerable
            | QueryType::OutOfScope => vec![first],
            QueryType::MultiHop | QueryType::Ambiguous | QueryType::Contradictory => {
                let other = self.related(first, 1, true, &[]);
                if other.is_empty() {
                    return Err(GenerateError::OneDocument {
                        corpus: self.corpus.source.clone(),
                        kind: kind.name(),
                    });
                }
                std::iter::once(first).chain(other).collect()
            }
            QueryType::Analytical => {
                // A theme: the chunk and the two most related to it, any document.
                std::iter::once(first)
                    .chain(self.related(first, 2, false, &[]))
                    .collect()
            }
        };
        Ok(picked.into_iter().map(|i| &chunks[i]).collect())
    }
}

/// Difficulty slots paired with query type slots, both shuffled.
pub(crate) fn slots(
    types: Vec<QueryType>,
    mut difficulties: Vec<Difficulty>,
    seed: u64,
) -> Vec<(QueryType, Difficulty)> {
    let mut rng = Rng::new(seed ^ 0x5EED_0F71);
    let mut types = types;
    rng.shuffle(&mut types);
    rng.shuffle(&mut difficulties);
    types.into_iter().zip(difficulties).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_follows_the_mix_counting_what_exists() {
        let mix = Mix::parse("factual=2,multi_hop=1,analytical=1", QueryType::parse).unwrap();
        let all = fill(&mix, 8, &BTreeMap::new(), 8);
        let count = |v: &[QueryType], t| v.iter().filter(|x| **x == t).count();
        assert_eq!(count(&all, QueryType::Factual), 4);
        assert_eq!(count(&all, QueryType::MultiHop), 2);
        assert_eq!(count(&all, QueryType::Analytical), 2);
        // 3 single-hop made already: the rest of the 8 is 1 single-hop, 2 and 2.
        let have = BTreeMap::from([(QueryType::Factual, 3)]);
        let rest = fill(&mix, 8, &have, 5);
        assert_eq!(count(&rest, QueryType::Factual), 1);
        assert_eq!(count(&rest, QueryType::MultiHop), 2);
        // More made of one type than its share: the others still get theirs.
        let have = BTreeMap::from([(QueryType::Factual, 7)]);
        let rest = fill(&mix, 8, &have, 1);
        assert_eq!(rest.len(), 1);
        assert_ne!(rest[0], QueryType::Factual);
    }

    #[test]
    fn the_same_seed_draws_the_same_passages() {
        let docs: Vec<(String, String)> = (0..6)
            .map(|i| {
                (
                    format!("d{i}.md"),
                    format!("Document number {i} talks about shared topic words here."),
                )
            })
            .collect();
        let corpus = Corpus::from_documents("t", &docs, 100).unwrap();
        let draw = |seed| {
            let mut p = Picker::new(&corpus, seed);
            (0..10)
                .map(|_| {
                    p.passages(QueryType::MultiHop)
                        .unwrap()
                        .iter()
                        .map(|c| c.doc.clone())
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        for pair in draw(7) {
            assert_ne!(
                pair[0], pair[1],
                "multi-hop passages come from two documents"
            );
        }
        // The first six primaries visit every chunk once.
        let mut p = Picker::new(&corpus, 1);
        let mut firsts: Vec<String> = (0..6)
            .map(|_| p.passages(QueryType::Factual).unwrap()[0].doc.clone())
            .collect();
        firsts.sort();
        firsts.dedup();
        assert_eq!(firsts.len(), 6);
        let one = Corpus::from_documents("one", &docs[..1], 100).unwrap();
        assert!(Picker::new(&one, 1).passages(QueryType::MultiHop).is_err());
    }
}
