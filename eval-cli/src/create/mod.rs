//! `evals create`: seed 002's "Create Evaluation Dataset", its seven steps
//! walked on a terminal, every answer also a flag (for scripts, and to skip
//! a question): scope (domain, query types, size), sample queries (typed,
//! a `.txt`/`.jsonl`/`.csv` file, production traces, synthetic generation
//! from a corpus, or several), ground truth (a file merged by id or query,
//! the traces' outputs, the judge model's, or typed), contexts, edge cases
//! (with examples of each category), validation (`evals lint`'s checks,
//! safe fixes on request) and approval. A wrong answer is asked again; what
//! is typed is kept in a draft until the bundle is written (`--resume`).
//! It writes the bundle — `{domain}-eval-dataset-v{n}.jsonl` and `.csv`
//! (the golden schema, `metadata.domain`, `confidence`, `created_at` and
//! `version` on every pair), `{domain}-annotation-guide.md`,
//! `{domain}-dataset-stats.json` — and, with `LANGSMITH_API_KEY`, uploads
//! it to LangSmith (`LANGSMITH_UPLOAD_FAILED` on failure, the files kept).

use std::path::{Path, PathBuf};

use eval_runtime::Config;
use serde_json::{Map, Value, json};

use crate::Failure;

mod answers;
mod ask;
mod bundle;
mod draft;
mod edge;
mod form;
mod references;
mod sources;
mod upload;

use ask::Ask;
use bundle::{Duplicates, dedupe, fix, report_validation, summary, to_samples};
use draft::Draft;
use sources::{Sources, generated};

/// Flags of `evals create` (each answers one question of the walk).
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Step 1: the knowledge domain (e.g. technical-docs): names the files.
    /// The one answer needed when there is no terminal to ask.
    #[arg(long)]
    pub domain: Option<String>,
    /// Step 1: query types, comma-separated: factual, analytical,
    /// procedural, multi_hop, or mixed (all four; the default without a
    /// terminal).
    #[arg(long)]
    pub types: Option<String>,
    /// Step 1: target number of QA pairs (at least 10; 50 without a
    /// terminal, seed 002's default).
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..=100_000))]
    pub size: Option<u64>,
    /// Step 2: sample queries: a .txt file (one query per line), or a
    /// .jsonl/.csv dataset.
    #[arg(long, value_name = "FILE")]
    pub queries: Option<PathBuf>,
    /// Step 3: ground truth to merge into the queries (.jsonl/.csv: `query`
    /// or `id`, `ground_truth`, `contexts`, `source_docs`).
    #[arg(long = "ground-truth", value_name = "FILE")]
    pub ground_truth: Option<PathBuf>,
    /// Step 2: production traces (.jsonl/.csv, e.g. a LangSmith run
    /// export: `inputs`/`outputs`, or `input`/`output` columns).
    #[arg(long, value_name = "FILE")]
    pub traces: Option<PathBuf>,
    /// Step 2: a document corpus to generate queries (and answers) from,
    /// with the judge model (as `evals generate`).
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,
    /// Step 2: the model that generates from the corpus (default: the
    /// judge model, EVAL_JUDGE_MODEL), on the judge's endpoint.
    #[arg(long = "generation-model", value_name = "MODEL")]
    pub generation_model: Option<String>,
    /// Step 2: queries generated per document of the corpus, at most
    /// (default: as many as the size needs).
    #[arg(long = "per-document", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub per_document: Option<u64>,
    /// Step 3: how ground truth is made: manual, expert, document or llm.
    #[arg(long)]
    pub strategy: Option<String>,
    /// Step 3: how judge-written answers (strategies expert and llm) are
    /// validated: `ask` reviews them pair by pair on a terminal (the
    /// default there), `accept` keeps them unreviewed (`reviewed: false`;
    /// the default without a terminal).
    #[arg(long, value_name = "ask|accept")]
    pub review: Option<String>,
    /// Step 4: how the source documents are organised: single,
    /// collections or hierarchical.
    #[arg(long)]
    pub organisation: Option<String>,
    /// Step 5: edge cases to cover, comma-separated: unanswerable,
    /// ambiguous, multi_hop, temporal, contradictory, out_of_scope (or none).
    #[arg(long = "edge-cases")]
    pub edge_cases: Option<String>,
    /// Step 5: examples of the edge cases (.jsonl or .csv: `category`,
    /// `query`, `expected`), at least 2 a category without a --corpus.
    #[arg(long = "edge-examples", value_name = "FILE")]
    pub edge_examples: Option<PathBuf>,
    /// Step 6: fix what can be fixed safely (repeated queries dropped,
    /// whitespace trimmed) without asking.
    #[arg(long)]
    pub fix: bool,
    /// Step 6: approve the dataset without asking.
    #[arg(long)]
    pub yes: bool,
    /// Where the files are written.
    #[arg(long, value_name = "DIR", default_value = "data/eval")]
    pub out_dir: PathBuf,
    /// Go on from the draft an earlier run left in --out-dir (on a
    /// terminal, a draft found is offered anyway).
    #[arg(long)]
    pub resume: bool,
    /// Step 7: upload without asking (needs LANGSMITH_API_KEY).
    #[arg(long, conflicts_with = "no_upload")]
    pub upload: bool,
    /// Step 7: the LangSmith dataset's name (default:
    /// {domain}-eval-dataset-v{n}).
    #[arg(long)]
    pub name: Option<String>,
    /// Step 7: the LangSmith dataset's description.
    #[arg(long)]
    pub description: Option<String>,
    /// Step 7: the LangSmith dataset's tags, comma-separated (kept in its
    /// metadata).
    #[arg(long)]
    pub tags: Option<String>,
    /// Step 7: upload even though validation errors remain.
    #[arg(long = "force-upload")]
    pub force_upload: bool,
    /// Step 7: do not upload, even with LANGSMITH_API_KEY set.
    #[arg(long)]
    pub no_upload: bool,
}

/// The four query types of step 1 and the six edge cases of step 5.
const TYPES: [&str; 4] = ["factual", "analytical", "procedural", "multi_hop"];
const EDGE_CASES: [&str; 6] = [
    "unanswerable",
    "ambiguous",
    "multi_hop",
    "temporal",
    "contradictory",
    "out_of_scope",
];

/// Seed 002's default dataset size.
const DEFAULT_SIZE: usize = 50;

/// One QA pair of the golden schema being made.
#[derive(Debug, Clone)]
struct Pair {
    query: String,
    ground_truth: Option<String>,
    contexts: Vec<String>,
    source_docs: Vec<String>,
    metadata: Map<String, Value>,
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let ask = Ask::new();
    let mut draft = Draft::default();
    match walk(args, &ask, &mut draft) {
        Err(mut f) if draft.written => {
            if let Some(path) = &draft.path {
                f.message.push_str(&format!(
                    "\nthe answers so far are kept in {}: `evals create --resume` (same --out-dir) goes on from them",
                    path.display()
                ));
            }
            Err(f)
        }
        other => other,
    }
}

fn walk(mut args: Args, ask: &Ask, draft: &mut Draft) -> Result<u8, Failure> {
    let config = crate::dotenv::settings(Path::new("."))?;
    if args.upload && config.langsmith_api_key.is_none() {
        return Err(Failure::config(
            "--upload: LANGSMITH_API_KEY is not set (the key LangSmith gave you)",
        ));
    }
    draft::resume(&mut args, ask, draft)?;

    // Step 1: scope.
    let (domain, slug, types, size) = scope(&args, ask)?;
    if ask.terminal || draft.written {
        draft.path = Some(Draft::path_for(&args.out_dir, &slug));
    }
    draft.set("domain", domain.clone());
    draft.set("types", types.join(","));
    draft.set("size", size);
    draft.save("step 1")?;

    // Step 2: sample queries.
    let mut sources = Sources {
        queries: args.queries.clone(),
        traces: args.traces.clone(),
        corpus: args.corpus.clone(),
        typed: strings(draft.answers.get("typed")),
    };
    if sources.is_empty() {
        sources.ask(ask)?;
    }
    let path_text = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    draft.set("queries", path_text(&sources.queries));
    draft.set("traces", path_text(&sources.traces));
    draft.set("corpus", path_text(&sources.corpus));
    draft.set("typed", sources.typed.clone());
    draft.save("step 2")?;
    if let Some(f) = ask.ended_failure() {
        return Err(f);
    }
    let (gen_config, per_document) = generation(&args, ask, config, sources.corpus.is_some())?;
    draft.set("generation_model", gen_config.judge.model.clone());
    draft.set("per_document", per_document);
    draft.save("step 2")?;

    // Steps 3 and 4: how ground truth is made, how the documents are
    // organised (asked again until answered; what a strategy needs is
    // checked before any pair is made).
    let plan = answers::Plan::ask(&args, ask, &sources, config)?;
    let (strategy, organisation) = (plan.strategy.name().to_string(), plan.organisation);
    if let Some(f) = ask.ended_failure() {
        return Err(f);
    }
    draft.set("strategy", strategy.clone());
    draft.set("organisation", organisation);
    draft.save("step 4")?;

    // Step 5: edge cases, with examples.
    let (edge_cases, examples) = edge_step(&args, ask, draft, sources.corpus.is_some())?;

    // The pairs: files, traces, typed queries, examples, then generation
    // up to the size (a draft's as they were).
    let (mut pairs, mut dropped) = match draft.pairs.take() {
        Some(pairs) => (
            pairs,
            draft
                .answers
                .get("dropped")
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize,
        ),
        None => build(
            &args,
            &sources,
            examples,
            &gen_config,
            per_document,
            &types,
            &edge_cases,
            &slug,
            size,
        )?,
    };
    draft.pairs = Some(pairs.clone());
    draft.set("dropped", dropped);
    draft.save("the pairs were made")?;
    // Steps 3 and 4 on each pair: answers, annotation, context references;
    // what was typed is kept in the draft even when a later pair fails.
    let annotated = answers::annotate(&plan, &mut pairs, ask, config, &mut |so_far| {
        draft.pairs = Some(so_far.to_vec());
        // A draft that cannot be written is said when the step saves it.
        let _ = draft.save("step 3");
    });
    draft.pairs = Some(pairs.clone());
    draft.save("step 3")?;
    annotated?;
    if let Some(f) = ask.ended_failure() {
        return Err(f);
    }
    label(&mut pairs, &slug, &types);

    validate(&args, ask, draft, &mut pairs, &edge_cases, &mut dropped)?;

    // The bundle.
    let creation = json!({"domain": slug, "query_types": types, "edge_cases": edge_cases,
                          "ground_truth_strategy": strategy, "context_organisation": organisation,
                          "target_size": size, "near_duplicates_dropped": dropped,
                          "generation_model": sources.corpus.as_ref().map(|_| gen_config.judge.model.clone()),
                          "per_document": per_document});
    finish(
        &args, ask, draft, config, &domain, &slug, &pairs, creation, dropped,
    )
}

/// Step 6: the checks reported, the safe fixes (asked, or `--fix`), then
/// approval (asked again until yes or no; `--yes`).
fn validate(
    args: &Args,
    ask: &Ask,
    draft: &mut Draft,
    pairs: &mut Vec<Pair>,
    edge_cases: &[&'static str],
    dropped: &mut usize,
) -> Result<(), Failure> {
    let samples = to_samples(pairs)?;
    let findings = eval_datasets::lint::lint_golden("(new dataset)", &samples);
    report_validation(pairs, &findings, edge_cases, *dropped);
    if !findings.is_empty()
        && (args.fix
            || (ask.terminal
                && ask.confirm("\nFix issues automatically where possible? (yes/no): ")?))
    {
        let trimmed = fix(pairs);
        *dropped += trimmed;
        errln!("fixed: whitespace trimmed, {trimmed} repeated query(ies) dropped");
    }
    if pairs.is_empty() {
        return Err(Failure::config(
            "no QA pairs: give queries (--queries, --traces) or a --corpus to generate from",
        ));
    }
    draft.pairs = Some(pairs.clone());
    draft.set("dropped", *dropped);
    draft.save("step 6")?;
    if !args.yes {
        if !ask.terminal {
            return Err(Failure::config(
                "approve the dataset with --yes (no terminal to ask); nothing was written",
            ));
        }
        if !ask.confirm("Review and approve final dataset? (yes/no): ")? {
            return Err(Failure {
                code: 1,
                message: "not approved: nothing was written".into(),
            });
        }
    }

    Ok(())
}

/// The bundle written (the draft removed), step 7, the closing report;
/// the exit code.
#[allow(clippy::too_many_arguments)]
fn finish(
    args: &Args,
    ask: &Ask,
    draft: &mut Draft,
    config: &Config,
    domain: &str,
    slug: &str,
    pairs: &[Pair],
    creation: Value,
    dropped: usize,
) -> Result<u8, Failure> {
    let b = bundle::write_bundle(&args.out_dir, slug, pairs, creation)?;
    draft.remove();

    // Errors the validation found and nothing fixed: written as approved,
    // and the exit code says it is not ready (as `evals lint`'s does).
    let errors: Vec<&str> = eval_datasets::lint::lint_golden("(new dataset)", &b.dataset.samples)
        .into_iter()
        .filter(|f| f.severity == eval_datasets::lint::Severity::Error)
        .map(|f| f.code)
        .collect();
    let mut codes = errors.clone();
    codes.sort_unstable();
    codes.dedup();

    // Step 7: LangSmith.
    let up =
        upload::step7(args, ask, config, &b.name, slug, &b.records, &codes).map_err(|mut f| {
            f.message
                .push_str(" (the files are written; nothing was uploaded)");
            f
        })?;
    let duplicates = Duplicates {
        dropped,
        left: b
            .stats
            .quality
            .findings
            .get("DUPLICATE_QUERIES")
            .copied()
            .unwrap_or(0),
    };
    summary(&b.name, domain, pairs, &up.line, &b.files, duplicates);
    let mut code = up.code;
    if !errors.is_empty() {
        errln!(
            "error: {} validation error(s) remain ({}): see `evals lint {}`",
            errors.len(),
            codes.join(", "),
            b.files[0].display()
        );
        code = code.max(1);
    }
    Ok(code)
}

/// Strings of a draft's list.
fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The domain's slug (it names the files), or why it cannot be one.
fn slug_of(domain: &str) -> Result<String, String> {
    let slug = eval_datasets::naming::slug(domain, 60).replace('_', "-");
    if slug.is_empty() {
        Err(format!(
            "domain `{}`: name it with letters or digits (it names the files)",
            eval_datasets::terminal::escaped(domain)
        ))
    } else {
        Ok(slug)
    }
}

const DOMAIN_PROMPT: &str = "ELICIT: Evaluation Scope\n\n1. What is the knowledge domain for this evaluation?\n   Examples: \"technical-documentation\", \"customer-support\", \"legal-contracts\", \"medical-research\"\n\n   Domain: ";
const TYPES_PROMPT: &str = "2. What type of queries does your RAG pipeline handle?\n   [1] Factual questions (Who, What, When, Where)\n   [2] Analytical questions (How, Why, Compare)\n   [3] Procedural questions (How to, Steps to)\n   [4] Multi-hop reasoning (requires combining multiple sources)\n   [5] Mixed (all of the above)\n\n   Select types (comma-separated): ";
const SIZE_PROMPT: &str = "3. What is the target dataset size?\n   [1] Small   (10-25 pairs)  - Quick validation\n   [2] Medium  (50-100 pairs) - Standard evaluation (recommended)\n   [3] Large   (100-200 pairs) - Comprehensive benchmark\n   [4] Custom  (specify number)\n\n   Your choice? [1/2/3/4]: ";
const EDGE_PROMPT: &str = "ELICIT: Edge Case Annotation\n\nEdge cases are critical for robust evaluation. Tag the following categories:\n\n[1] Unanswerable queries - Questions with no answer in the corpus\n[2] Ambiguous queries    - Questions with multiple valid interpretations\n[3] Multi-hop queries    - Require reasoning across multiple documents\n[4] Temporal queries     - Answers depend on time/version\n[5] Contradictory sources - Different documents give conflicting answers\n[6] Out-of-scope queries  - Valid questions outside the RAG domain\n\nSelect edge case categories to annotate (comma-separated, empty for none): ";

/// Step 1: the domain, its slug, the query types and the size; without a
/// terminal only the domain is needed (types: mixed, size: 50, said so).
fn scope(args: &Args, ask: &Ask) -> Result<(String, String, Vec<&'static str>, usize), Failure> {
    let domain = match &args.domain {
        Some(d) => d.clone(),
        None if ask.terminal => ask.choose(DOMAIN_PROMPT, |a| slug_of(a).map(|_| a.to_string()))?,
        None => ask.value(&None, "", "domain")?,
    };
    let slug = slug_of(&domain).map_err(Failure::config)?;
    let types = match &args.types {
        Some(t) => parse_types(t).map_err(Failure::config)?,
        None if ask.terminal => ask.choose(TYPES_PROMPT, parse_types)?,
        None => {
            errln!("note: no --types: mixed (factual, analytical, procedural, multi_hop)");
            TYPES.to_vec()
        }
    };
    let size = match args.size {
        Some(n) => n as usize,
        None if ask.terminal => match ask.choose(SIZE_PROMPT, size_choice)? {
            Some(n) => n,
            None => ask.choose("   Number of pairs (10 or more): ", |a| {
                custom_size(a).ok_or_else(|| format!("expected a number of {} or more", MIN))
            })?,
        },
        None => {
            errln!("note: no --size: {DEFAULT_SIZE} pairs (seed 002's default)");
            DEFAULT_SIZE
        }
    };
    Ok((domain, slug, types, size))
}

/// Step 2's generation settings, with a corpus: the model (a copy of the
/// configuration whose judge model it is) and queries per document.
fn generation(
    args: &Args,
    ask: &Ask,
    config: &Config,
    corpus: bool,
) -> Result<(Config, Option<usize>), Failure> {
    let mut gen_config = config.clone();
    if !corpus {
        return Ok((gen_config, None));
    }
    let default = config.judge.model.clone();
    let model = match &args.generation_model {
        Some(m) => m.clone(),
        None if ask.terminal => ask.choose(
            &format!(
                "  Generation model [{}]: ",
                eval_datasets::terminal::escaped(&default)
            ),
            |a| Ok(a.to_string()),
        )?,
        None => String::new(),
    };
    if !model.trim().is_empty() {
        gen_config.judge.model = model.trim().to_string();
    }
    let per_document = match args.per_document {
        Some(n) => Some(n as usize),
        None if ask.terminal => ask.choose(
            "  Queries per document [empty: as many as the size needs]: ",
            |a| match a.parse::<usize>() {
                _ if a.is_empty() => Ok(None),
                Ok(n) if n >= 1 => Ok(Some(n)),
                _ => Err("expected a number of 1 or more, or nothing".into()),
            },
        )?,
        None => None,
    };
    Ok((gen_config, per_document))
}

/// Step 5: the categories (a flag, or asked) and their examples (a file,
/// the draft's, typed); an error when a category has too few examples
/// and no corpus to generate them from.
fn edge_step(
    args: &Args,
    ask: &Ask,
    draft: &mut Draft,
    corpus: bool,
) -> Result<(Vec<&'static str>, Vec<Pair>), Failure> {
    let mut chosen = match &args.edge_cases {
        Some(e) => parse_edge_cases(e).map_err(Failure::config)?,
        None if ask.terminal => ask.choose(EDGE_PROMPT, parse_edge_cases)?,
        None => Vec::new(),
    };
    let mut examples = edge::from_value(draft.answers.get("edge_examples"));
    if let Some(file) = &args.edge_examples {
        examples.retain(|p| p.metadata.get("annotator").and_then(Value::as_str) != Some("file"));
        examples.extend(edge::from_file(file, &mut chosen)?);
    }
    draft.set(
        "edge_cases",
        if chosen.is_empty() {
            "none".to_string()
        } else {
            chosen.join(",")
        },
    );
    draft.set("edge_examples", edge::to_value(&examples));
    draft.save("step 5")?;
    edge::ask_examples(ask, &chosen, corpus, &mut examples, draft)?;
    edge::check_covered(&chosen, &examples, corpus)?;
    Ok((chosen, examples))
}

/// The pairs of the sources and the examples, then generated from the
/// corpus up to `size` (marked `generated`), near-duplicates dropped (how
/// many).
#[allow(clippy::too_many_arguments)]
fn build(
    args: &Args,
    sources: &Sources,
    examples: Vec<Pair>,
    gen_config: &Config,
    per_document: Option<usize>,
    types: &[&'static str],
    edge_cases: &[&'static str],
    slug: &str,
    size: usize,
) -> Result<(Vec<Pair>, usize), Failure> {
    let mut pairs = sources.read(args)?;
    // Categories with examples are not generated again.
    let to_generate: Vec<&str> = edge_cases
        .iter()
        .copied()
        .filter(|c| {
            !examples
                .iter()
                .any(|p| p.metadata.get("edge_case").and_then(Value::as_str) == Some(c))
        })
        .collect();
    pairs.extend(examples);
    if let Some(corpus) = &sources.corpus {
        let missing = size.saturating_sub(pairs.len());
        if missing > 0 {
            let mut made = generated(
                corpus,
                missing.max(10),
                types,
                &to_generate,
                slug,
                gen_config,
                &args.out_dir,
                per_document,
            )?;
            for p in &mut made {
                p.metadata.insert("generated".into(), Value::Bool(true));
                p.metadata.insert(
                    "generator_model".into(),
                    Value::from(gen_config.judge.model.clone()),
                );
            }
            pairs.extend(made);
        }
    }
    let dropped = dedupe(&mut pairs);
    // Generated pairs (at the end) fill up to the size; what was given is
    // never cut.
    let given = pairs
        .iter()
        .filter(|p| !p.metadata.contains_key("generated"))
        .count();
    pairs.truncate(size.max(given));
    Ok((pairs, dropped))
}

/// The metadata every pair carries: the domain, its query type, its edge
/// case (or null), who answered it and how sure (an answer of a file
/// `file`, of the traces `trace`, generated `llm`); an unanswered pair
/// claims neither (null).
fn label(pairs: &mut [Pair], slug: &str, types: &[&'static str]) {
    for p in pairs.iter_mut() {
        p.metadata.insert("domain".into(), Value::from(slug));
        let kind = query_type_of(&p.query, types);
        p.metadata.entry("query_type").or_insert(Value::from(kind));
        p.metadata.entry("edge_case").or_insert(Value::Null);
        // An unanswered pair claims no one (a rejected candidate loses its label).
        if p.ground_truth.is_none() {
            p.metadata.insert("annotator".into(), Value::Null);
            p.metadata.insert("confidence".into(), Value::Null);
            continue;
        }
        let annotator = p
            .metadata
            .entry("annotator")
            .or_insert(Value::from("file"))
            .as_str()
            .unwrap_or("")
            .to_string();
        p.metadata
            .entry("confidence")
            .or_insert(Value::from(match annotator.as_str() {
                "human" => "high",
                "trace" | "production" => "low",
                _ => "medium",
            }));
    }
}

/// A query's type when its source does not say: by its opening words, as
/// seed 002 describes the types (how to / steps to: procedural; how, why,
/// compare: analytical; who, what, when, where: factual), among `types`
/// (the first of them otherwise).
fn query_type_of(query: &str, types: &[&'static str]) -> &'static str {
    let q = eval_datasets::similarity::normalise(query);
    let guess = if q.starts_with("how to ")
        || q.starts_with("how do i ")
        || q.starts_with("how can i ")
        || q.contains("steps to")
        || q.starts_with("what are the steps")
    {
        "procedural"
    } else if ["how ", "why ", "compare ", "what is the difference"]
        .iter()
        .any(|w| q.starts_with(w))
    {
        "analytical"
    } else {
        "factual"
    };
    if types.contains(&guess) {
        guess
    } else {
        types.first().copied().unwrap_or("factual")
    }
}

fn parse_types(text: &str) -> Result<Vec<&'static str>, String> {
    let mut out: Vec<&'static str> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let picked: &[&'static str] = match part.to_ascii_lowercase().replace('-', "_").as_str() {
            "1" | "factual" => &TYPES[0..1],
            "2" | "analytical" => &TYPES[1..2],
            "3" | "procedural" => &TYPES[2..3],
            "4" | "multi_hop" => &TYPES[3..4],
            "5" | "mixed" | "all" => &TYPES,
            _ => {
                return Err(format!(
                    "query type `{}`: expected factual, analytical, procedural, multi_hop or mixed (or 1-5)",
                    eval_datasets::terminal::escaped(part)
                ));
            }
        };
        for t in picked {
            if !out.contains(t) {
                out.push(t);
            }
        }
    }
    if out.is_empty() {
        out.extend(TYPES);
    }
    Ok(out)
}

fn parse_edge_cases(text: &str) -> Result<Vec<&'static str>, String> {
    let mut out: Vec<&'static str> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let lower = part.to_ascii_lowercase().replace('-', "_");
        if lower == "none" {
            continue;
        }
        let found = match lower.parse::<usize>() {
            Ok(n @ 1..=6) => Some(EDGE_CASES[n - 1]),
            _ => EDGE_CASES.iter().copied().find(|e| *e == lower),
        };
        match found {
            Some(e) if !out.contains(&e) => out.push(e),
            Some(_) => {}
            None => {
                return Err(format!(
                    "edge case `{}`: expected {} (or 1-6), or none",
                    eval_datasets::terminal::escaped(part),
                    EDGE_CASES.join(", ")
                ));
            }
        }
    }
    Ok(out)
}

/// Seed 002's minimum size.
const MIN: usize = eval_datasets::lint::MIN_SAMPLES;

/// A custom size: a number of [`MIN`] to 100000.
fn custom_size(answer: &str) -> Option<usize> {
    answer
        .parse::<usize>()
        .ok()
        .filter(|n| (MIN..=100_000).contains(n))
}

/// The size menu's answer: a size, or `None` for "Custom" (asked next).
fn size_choice(choice: &str) -> Result<Option<usize>, String> {
    match choice {
        "1" => Ok(Some(25)),
        "" | "2" => Ok(Some(DEFAULT_SIZE)),
        "3" => Ok(Some(100)),
        "4" => Ok(None),
        other => custom_size(other).map(Some).ok_or_else(|| {
            format!(
                "`{}`: expected 1, 2, 3 or 4, or a number of {MIN} or more",
                eval_datasets::terminal::escaped(other)
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn menus_take_numbers_or_names_and_say_what_else() {
        assert_eq!(
            parse_types("1,procedural").unwrap(),
            ["factual", "procedural"]
        );
        assert!(
            parse_types("facts")
                .unwrap_err()
                .contains("expected factual")
        );
        assert_eq!(
            parse_edge_cases("2, out-of-scope").unwrap(),
            ["ambiguous", "out_of_scope"]
        );
        assert!(parse_edge_cases("7").is_err());
        assert_eq!(size_choice(""), Ok(Some(50)));
        assert_eq!(size_choice("4"), Ok(None));
        assert_eq!(size_choice("30"), Ok(Some(30)));
        assert!(size_choice("5").is_err());
        assert!(size_choice("medium").is_err());
    }
}
