//! Steps 3 and 4 of `evals create`: how ground truth is made and the
//! context references of each pair.
//!
//! Step 3, by strategy (`--strategy`):
//!
//! * `manual`: on a terminal, each pair without an answer is annotated as
//!   seed 002 shows it — expected answer (an empty answer skips the pair),
//!   source document(s), relevant context passage(s), confidence
//!   (high/medium/low) and difficulty (easy/medium/hard), a wrong
//!   confidence or difficulty asked again. `annotator: "human"`.
//! * `expert`: the same form, each pair showing a candidate answer written
//!   by the judge from the corpus's best passages (with `--corpus` and
//!   `EVAL_JUDGE_URL`; else "no candidate"): Enter accepts it, a typed
//!   answer replaces it (`annotator: "human"`), `skip` leaves it.
//! * `document`: each query's best passages of the corpus (BM25), and the
//!   answer extracted from them — by the judge, quoting a passage word for
//!   word (`confidence: "medium"`), or without a judge the best-matching
//!   sentence itself (`confidence: "low"`); `annotator: "document"`.
//! * `llm`: each query's best passages, the judge writes the answer from
//!   them (`annotator: "llm"`, `confidence: "medium"`); then, on a
//!   terminal (`--review ask`), every judge-written pair is reviewed with
//!   the form above; unreviewed pairs carry `reviewed: false`.
//!
//! Pairs answered from the corpus carry the passages as `contexts` and
//! their documents (paths under the corpus folder) as `source_docs`.
//! A pair left without an answer carries `ground_truth: null`,
//! `annotator: null` and `confidence: null` (nothing is claimed).
//!
//! Step 4: the organisation (`--organisation`), then on a terminal, for
//! each answered pair still without contexts or sources: the documents
//! that contain the answer, the passages that support it, related
//! passages. `collections` records each pair's `collection` (the top
//! folder of its first source document), `hierarchical` its `parent_docs`
//! (the folders of its source documents).

use std::path::PathBuf;

use crate::synth::{AnswerMode, Chunk, Corpus, DEFAULT_CHUNK_WORDS, Index, answer_blocking};
use eval_datasets::terminal::escaped;
use eval_runtime::Config;
use eval_runtime::services::{Judge, ServiceError, Usage};
use serde_json::Value;

use super::sources::Sources;
use super::{Args, Ask, Pair};
use crate::Failure;

/// Passages retrieved per query, at most.
const PASSAGES: usize = 3;
/// A passage after the best is kept when its score is at least this share
/// of the best one's (a passage sharing one common word is not context).
const MIN_SHARE: f64 = 0.5;

/// Seed 002's four ground-truth strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strategy {
    Manual,
    Expert,
    Document,
    Llm,
}

impl Strategy {
    pub(super) fn name(self) -> &'static str {
        match self {
            Strategy::Manual => "manual",
            Strategy::Expert => "expert",
            Strategy::Document => "document",
            Strategy::Llm => "llm",
        }
    }

    fn parse(text: &str) -> Option<Strategy> {
        match text.trim().to_ascii_lowercase().as_str() {
            "1" | "manual" => Some(Strategy::Manual),
            "2" | "expert" => Some(Strategy::Expert),
            "3" | "document" => Some(Strategy::Document),
            "4" | "llm" => Some(Strategy::Llm),
            _ => None,
        }
    }
}

/// Steps 3 and 4's answers.
pub(super) struct Plan {
    pub strategy: Strategy,
    pub organisation: &'static str,
    /// Judge-written answers reviewed pair by pair (on a terminal).
    review: bool,
    corpus: Option<PathBuf>,
}

const STRATEGY_MENU: &str = "ELICIT: Ground Truth Creation\n\nFor each query, provide the expected correct answer and source context.\n\nStrategy for ground truth:\n[1] Manual annotation - Write answers yourself\n[2] Expert review    - Generate candidates, then review/edit\n[3] Document-based   - Extract answers directly from source documents\n[4] LLM-assisted     - Use LLM to generate, then human validates\n\nYour choice? [1/2/3/4]: ";

const ORGANISATION_MENU: &str = "ELICIT: Context References\n\n1. How are your source documents organized?\n   [1] Single knowledge base (one vector store)\n   [2] Multiple collections (segmented by topic)\n   [3] Hierarchical (parent/child documents)\n\n   Your choice? [1/2/3]: ";

fn organisation_of(text: &str) -> Option<&'static str> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" | "1" | "single" => Some("single"),
        "2" | "collections" => Some("collections"),
        "3" | "hierarchical" => Some("hierarchical"),
        _ => None,
    }
}

impl Plan {
    /// Step 3's strategy and step 4's organisation, from the flags or
    /// asked (a wrong answer asked again); what the strategy needs is
    /// checked here, before any pair is made.
    pub(super) fn ask(
        args: &Args,
        ask: &Ask,
        sources: &Sources,
        config: &Config,
    ) -> Result<Plan, Failure> {
        let strategy = match &args.strategy {
            Some(s) => Strategy::parse(s).ok_or_else(|| {
                Failure::config(format!(
                    "--strategy {s}: expected manual, expert, document or llm"
                ))
            })?,
            None if !ask.terminal => {
                if sources.corpus.is_some() {
                    Strategy::Llm
                } else {
                    Strategy::Manual
                }
            }
            None => ask.choose(STRATEGY_MENU, |a| {
                Strategy::parse(a).ok_or_else(|| "answer 1, 2, 3 or 4".to_string())
            })?,
        };
        if let Some(corpus) = &sources.corpus
            && !corpus.exists()
        {
            return Err(Failure::config(format!(
                "CORPUS_NOT_FOUND: {}: give --corpus an existing folder of .txt/.md files (or one such file)",
                corpus.display()
            )));
        }
        if matches!(strategy, Strategy::Document | Strategy::Llm) && sources.corpus.is_none() {
            return Err(Failure::config(format!(
                "--strategy {}: the answers come from your documents: give --corpus DIR (a folder of .txt/.md files)",
                strategy.name()
            )));
        }
        if strategy == Strategy::Llm {
            Judge::from_config(config).map_err(|e| {
                Failure::config(format!("--strategy llm: the judge writes the answers: {e}"))
            })?;
        }
        let review = match args.review.as_deref() {
            None => ask.terminal,
            Some("ask") => true,
            Some("accept") => false,
            Some(other) => {
                return Err(Failure::config(format!(
                    "--review {other}: expected ask or accept"
                )));
            }
        };
        let organisation = match &args.organisation {
            Some(o) => organisation_of(o)
                .filter(|_| !o.trim().is_empty())
                .ok_or_else(|| {
                    Failure::config(format!(
                        "--organisation {o}: expected single, collections or hierarchical"
                    ))
                })?,
            None if !ask.terminal => "single",
            None => ask.choose(ORGANISATION_MENU, |a| {
                organisation_of(a).ok_or_else(|| "answer 1, 2 or 3".to_string())
            })?,
        };
        Ok(Plan {
            strategy,
            organisation,
            review: review && ask.terminal,
            corpus: sources.corpus.clone(),
        })
    }
}

/// Step 3 and 4 on the pairs made: answers by the plan's strategy, the
/// per-pair annotation and context references on a terminal, the
/// organisation's metadata (the labels of unanswered pairs are `label`'s). `save` is
/// given the pairs after each one a person answered (the draft).
pub(super) fn annotate(
    plan: &Plan,
    pairs: &mut Vec<Pair>,
    ask: &Ask,
    config: &Config,
    save: &mut dyn FnMut(&[Pair]),
) -> Result<(), Failure> {
    let corpus = match &plan.corpus {
        Some(path) if plan.strategy != Strategy::Manual => Some(
            Corpus::load(path, DEFAULT_CHUNK_WORDS, config.max_dataset_bytes)
                .map_err(|e| Failure::config(e.to_string()))?,
        ),
        _ => None,
    };
    let judge = match Judge::from_config(config) {
        _ if plan.strategy == Strategy::Manual => None,
        Ok(j) => Some(j),
        Err(ServiceError::NotConfigured { .. }) => None,
        Err(e) => return Err(Failure::config(e.to_string())),
    };
    let index = corpus.as_ref().map(Index::new);
    let mut dropped = vec![false; pairs.len()];
    match plan.strategy {
        Strategy::Manual => {
            if ask.terminal {
                errln!(
                    "\nFor each query, its expected answer (an empty answer skips the pair), the source document(s) (comma-separated) and context passage(s) (separate passages with ` | `)."
                );
                review(pairs, &mut dropped, ask, false, save, |p| {
                    p.ground_truth.is_none()
                });
            }
        }
        Strategy::Expert => {
            match (&index, &judge) {
                (Some(index), Some(judge)) => {
                    answer_all(pairs, index, Some(judge), AnswerMode::Llm)?;
                }
                _ => errln!(
                    "\nno candidate answers: give --corpus and set EVAL_JUDGE_URL to have the judge write them"
                ),
            }
            if plan.review {
                errln!(
                    "\nFor each query: Enter accepts the candidate answer, a typed answer replaces it, `skip` leaves the pair unanswered."
                );
                review(pairs, &mut dropped, ask, true, save, |p| {
                    p.ground_truth.is_none() || is_unreviewed(p)
                });
            }
        }
        Strategy::Document => {
            if let Some(index) = &index {
                answer_all(pairs, index, judge.as_ref(), AnswerMode::Document)?;
            }
        }
        Strategy::Llm => {
            if let Some(index) = &index {
                answer_all(pairs, index, judge.as_ref(), AnswerMode::Llm)?;
            }
            if plan.review {
                errln!(
                    "\nReview each answer the judge wrote: Enter accepts it, a typed answer replaces it, `skip` rejects it."
                );
                review(pairs, &mut dropped, ask, true, save, is_unreviewed);
            }
        }
    }
    let mut keep = dropped.into_iter().map(|d| !d);
    pairs.retain(|_| keep.next().unwrap_or(true));
    for p in pairs.iter_mut() {
        if p.metadata.get("annotator").and_then(Value::as_str) == Some("llm")
            && !p.metadata.contains_key("reviewed")
        {
            p.metadata.insert("reviewed".into(), Value::from(false));
        }
    }
    super::references::ask_references(pairs, ask, save);
    super::references::organise(pairs, plan.organisation);
    Ok(())
}

fn is_unreviewed(p: &Pair) -> bool {
    p.ground_truth.is_some()
        && p.metadata.get("annotator").and_then(Value::as_str) == Some("llm")
        && p.metadata.get("reviewed") != Some(&Value::Bool(true))
}

/// The per-pair form for each pair `which` picks, until the input ends;
/// `save` after each pair.
fn review(
    pairs: &mut [Pair],
    dropped: &mut [bool],
    ask: &Ask,
    candidates: bool,
    save: &mut dyn FnMut(&[Pair]),
    which: impl Fn(&Pair) -> bool,
) {
    for i in 0..pairs.len() {
        if !which(&pairs[i]) {
            continue;
        }
        match super::form::pair_form(&mut pairs[i], ask, candidates) {
            super::form::Outcome::Done => {}
            super::form::Outcome::Skipped => {
                // A generated question rejected goes; a query of the user's stays, unanswered.
                if pairs[i].metadata.get("synthetic") == Some(&Value::Bool(true)) {
                    dropped[i] = true;
                }
            }
            super::form::Outcome::Ended => return,
        }
        save(pairs);
    }
}

/// Answers every pair without a ground truth from its best passages of
/// the corpus: through the judge when there is one, else (document mode)
/// extracted; each answered pair takes the passages and their documents.
fn answer_all(
    pairs: &mut [Pair],
    index: &Index<'_>,
    judge: Option<&Judge>,
    mode: AnswerMode,
) -> Result<(), Failure> {
    let todo: Vec<usize> = (0..pairs.len())
        .filter(|&i| pairs[i].ground_truth.is_none())
        .collect();
    if todo.is_empty() {
        return Ok(());
    }
    let items: Vec<(String, Vec<&Chunk>)> = todo
        .iter()
        .map(|&i| {
            let q = pairs[i].query.clone();
            let top = index.top(&q, PASSAGES);
            let best = top.first().map_or(0.0, |(_, s)| *s);
            let passages = top
                .into_iter()
                .filter(|(_, s)| *s >= best * MIN_SHARE)
                .map(|(c, _)| c)
                .collect();
            (q, passages)
        })
        .collect();
    let annotator = match mode {
        AnswerMode::Document => "document",
        AnswerMode::Llm => "llm",
    };
    let mut answered = 0usize;
    let Some(judge) = judge else {
        // Document mode without a judge: the best sentence, quoted.
        for (&i, (q, passages)) in todo.iter().zip(&items) {
            if let Some(a) = index.extract(q, passages) {
                set(&mut pairs[i], a, None, passages, annotator, "low", None);
                answered += 1;
            }
        }
        report(
            answered,
            todo.len(),
            annotator,
            "extracted (no judge: EVAL_JUDGE_URL is not set)",
        );
        return Ok(());
    };
    errln!(
        "answering {} quer(ies) from the corpus with the judge ({})...",
        todo.len(),
        judge.model()
    );
    let mut usage = Usage::default();
    let model = judge.model().to_string();
    let outcome = answer_blocking(judge, mode, &items, &mut usage, &mut |k, got| {
        let got = got.map_err(|e| {
            Failure::config(format!(
                "the judge could not answer `{}`: {e}",
                escaped(&items[k].0)
            ))
        })?;
        if let Some(a) = got.answer {
            let i = todo[k];
            set(
                &mut pairs[i],
                a,
                got.quote.as_deref(),
                &items[k].1,
                annotator,
                "medium",
                Some(&model),
            );
            answered += 1;
        }
        Ok::<(), Failure>(())
    })
    .map_err(|e| Failure::config(e.to_string()))?;
    outcome?;
    report(
        answered,
        todo.len(),
        annotator,
        "written by the judge from the corpus",
    );
    Ok(())
}

fn report(answered: usize, asked: usize, annotator: &str, how: &str) {
    errln!("{answered} of {asked} answer(s) {how} (annotator: {annotator})");
    if answered < asked {
        errln!(
            "{} quer(ies) left unanswered: the corpus's passages do not answer them (MISSING_GROUND_TRUTH: answer them in a --ground-truth file or with --strategy manual)",
            asked - answered
        );
    }
}

/// `pair` answered from `passages`: the passage holding `quote` (or the
/// answer) first.
fn set(
    pair: &mut Pair,
    answer: String,
    quote: Option<&str>,
    passages: &[&Chunk],
    annotator: &str,
    confidence: &str,
    model: Option<&str>,
) {
    let flat = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let needle = flat(quote.unwrap_or(&answer));
    let mut ordered: Vec<&Chunk> = passages.to_vec();
    if let Some(at) = ordered.iter().position(|c| flat(&c.text).contains(&needle)) {
        let c = ordered.remove(at);
        ordered.insert(0, c);
    }
    pair.ground_truth = Some(answer);
    pair.contexts = ordered.iter().map(|c| c.text.trim().to_string()).collect();
    pair.source_docs.clear();
    for c in &ordered {
        if !pair.source_docs.contains(&c.doc) {
            pair.source_docs.push(c.doc.clone());
        }
    }
    pair.metadata
        .insert("annotator".into(), Value::from(annotator));
    pair.metadata
        .insert("confidence".into(), Value::from(confidence));
    if let Some(m) = model {
        pair.metadata
            .insert("generator_model".into(), Value::from(m));
    }
}
