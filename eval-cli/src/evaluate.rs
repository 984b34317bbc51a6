//! `evals evaluate`: a manifest, a dataset or inline prompts against an HTTP
//! agent. A thin front end: the flags become a plan
//! ([`PlanBuilder`]), the engine runs it, and its verdict becomes the exit
//! code — 0 passed, 1 failed (a sample failed where samples are judged
//! singly, a judged gate was missed, or the baseline regressed), 2 could
//! not run.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use eval_datasets::{Sample, manifest};
use eval_runtime::__cli::Paint;
use eval_runtime::plan::{PlanBuilder, Subset};
use eval_runtime::retrieval::{HttpRetriever, RetrieverAgent};
use eval_runtime::{AgentError, BoxFuture, Config, HttpAgent, Response, Runner};

use crate::Failure;
use crate::discover;

mod steps;

/// Flags of `evals evaluate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An agentspec manifest (agent.yaml) or a dataset (.jsonl, .csv, .json).
    /// Without it: --prompts, else the first of prompts.json, evals.json,
    /// tests.json in . then ./evals/.
    pub file: Option<PathBuf>,
    /// How the agent is reached.
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Only this dataset of the manifest.
    #[arg(long)]
    pub dataset: Option<String>,
    /// Evaluate N samples drawn at random (per dataset); gates judge their mean.
    #[arg(long, value_name = "N")]
    pub sample_size: Option<usize>,
    /// Seed for --sample-size (default 42: the same draw every run).
    #[arg(long, requires = "sample_size")]
    pub seed: Option<u64>,
    /// Only samples with this tag; repeat it and a sample needs ALL of them.
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// At most N samples per dataset (after --tag and --sample-size).
    #[arg(long, value_name = "N")]
    pub max_samples: Option<usize>,
    /// Print the results as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the results file here (atomically).
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write the results as JUnit XML here: one testcase per sample,
    /// the failure report as its message (default EVAL_JUNIT, when set).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Do not write the HTML report beside the --output results file (as
    /// EVAL_HTML=off).
    #[arg(long)]
    pub no_html: bool,
    /// Record the agent's answers into FILE (with --cassette-mode record), or
    /// answer every sample from it without calling the agent (replay, the
    /// default) (default: EVAL_AGENT_CASSETTE).
    #[arg(long, value_name = "FILE")]
    pub cassette: Option<PathBuf>,
    /// What the cassette does: record or replay (default:
    /// EVAL_AGENT_CASSETTE_MODE, else replay).
    #[arg(long, value_name = "MODE", value_parser = ["record", "replay"])]
    pub cassette_mode: Option<String>,
    /// Metrics for a dataset without a manifest, e.g. "contains, partial_match >= 0.5"
    /// (default: the dataset's own — a runevals file's evaluators, or for a
    /// runevals file naming none runevals' default dimensions relevance,
    /// coherence, similarity, groundedness (judged), the rank metrics of a
    /// retrieval dataset — else PartialMatch, or Relevance and Coherence
    /// without expected answers). Given, they replace a runevals file's
    /// default dimensions and are added to its own evaluators.
    // `--metric 'exec:python3 score.py >= 0.8'` reads as well.
    #[arg(long, visible_alias = "metric")]
    pub metrics: Option<String>,
    /// Gates on each dataset's means, e.g. "partial_match >= 0.7" (exit 1 when missed).
    #[arg(long = "gate", value_name = "GATES")]
    pub gates: Vec<String>,
    /// Gate each dataset's mean on the thresholds (exit 1 when missed), as a
    /// manifest's `ciGate: true` does; samples then fail only when they
    /// cannot be scored.
    #[arg(long)]
    pub ci_gate: bool,
    /// Compare the run with this baseline results file, paired per dataset
    /// and metric (exit 1 on a regression: a significant drop, a gate met
    /// before and proven missed now, samples no longer scored; 2 when it was scored
    /// by another judge or on other data); written when missing, replaced
    /// when EVAL_ACCEPT_BASELINE=1.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// With --baseline: a difference whose 95% interval lies within
    /// ±epsilon is no change.
    #[arg(long, default_value_t = 0.0, requires = "baseline")]
    pub epsilon: f64,
    /// With --baseline: compare even when the baseline's judge differs for
    /// a metric both scored; the comparison says so.
    #[arg(long, requires = "baseline")]
    pub allow_judge_change: bool,
    /// With --baseline: compare even when a dataset's content changed.
    #[arg(long, requires = "baseline")]
    pub allow_dataset_change: bool,
    /// Inline prompts (runevals): --prompts "A" "B" [--expected "X" "Y"].
    #[arg(long, num_args = 1.., value_name = "PROMPT", conflicts_with = "file")]
    pub prompts: Vec<String>,
    /// Expected answers for --prompts, paired by position.
    #[arg(long, num_args = 1.., value_name = "ANSWER", requires = "prompts")]
    pub expected: Vec<String>,
    /// The dataset to run, as runevals spells it (`runevals --prompts-file
    /// ./evals/knowledge-base.json`): the same as giving FILE.
    // issue38:runevals
    #[arg(long = "prompts-file", value_name = "FILE", conflicts_with_all = ["file", "prompts"])]
    pub prompts_file: Option<PathBuf>,
    /// Talk to the agent instead of running a dataset, as runevals spells it
    /// (`runevals --interactive`): the same as `evals interactive` (with
    /// --metrics and --timeout-secs).
    // issue38:runevals
    #[arg(long, conflicts_with_all = ["file", "prompts", "prompts_file"])]
    pub interactive: bool,
    /// Agent calls in flight at once (default EVAL_CONCURRENCY, else 16).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub concurrency: Option<u64>,
    /// Agent runs per sample: N (1–100), or `auto` / `auto:MAX` (3 runs,
    /// then one more at a time while a verdict is inconclusive, up to MAX,
    /// default 10). Default: the manifest's `repeat`, else 1.
    #[arg(long, value_name = "N|auto[:MAX]", value_parser = parse_repeat)]
    pub repeat: Option<eval_datasets::Repeat>,
    /// What an inconclusive verdict (a sample's interval over repeated runs,
    /// a gate's over the dataset, straddling the threshold) counts as:
    /// estimate (the point estimate decides), fail (strict) or pass.
    /// Default: EVAL_INCONCLUSIVE, else estimate.
    #[arg(long, value_name = "estimate|fail|pass", value_parser = parse_inconclusive)]
    pub inconclusive: Option<eval_runtime::verdict::OnInconclusive>,
    /// Cluster samples by this field (a metadata key) for the gates'
    /// intervals (cluster-robust standard errors).
    #[arg(long, value_name = "FIELD")]
    pub cluster_by: Option<String>,
    /// Retrieval datasets (Unrag): allow a scopePrefix not starting with `eval:`
    /// (ingest deletes everything under it).
    /// On a terminal you are asked to confirm; elsewhere pass --yes.
    #[arg(long)]
    pub allow_custom_prefix: bool,
    /// Confirm what --allow-custom-prefix deletes without being asked.
    #[arg(long, short = 'y', requires = "allow_custom_prefix")]
    pub yes: bool,
    /// Retrieval datasets: search what is already indexed (no delete, no ingest).
    #[arg(long)]
    pub no_ingest: bool,
    /// Retrieval datasets: read a document's `loaderRef` as a file path under DIR.
    #[arg(long, value_name = "DIR")]
    pub loader_dir: Option<PathBuf>,
    /// Let paths lead outside where they belong: a manifest's dataset paths
    /// outside its project, `loaderRef`s outside --loader-dir (by `..`, an
    /// absolute path or a symlink).
    #[arg(long)]
    pub allow_outside: bool,
    /// Limit on one sample's agent interaction and scoring, in seconds
    /// (default EVAL_SAMPLE_TIMEOUT_SECS, else 300).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_secs: Option<u64>,
    /// Print what the run would call and cost (agent, judge and embedding
    /// calls, estimated tokens, cost at EVAL_PRICES) and stop: no call is
    /// made, no file is changed. With --json, as JSON.
    #[arg(long)]
    pub estimate: bool,
}

/// How the agent is reached: the flags `evals evaluate` and `evals
/// interactive` share.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// The agent's URL (default: EVAL_AGENT_URL).
    #[arg(long)]
    pub url: Option<String>,
    /// How the agent is spoken to: json (the JSON contract) or openai (chat
    /// completions). Default: EVAL_AGENT_PROTOCOL, else openai for a URL
    /// ending in /chat/completions, else json (`evaluate` of a manifest:
    /// its spec.evaluation.agent.protocol first).
    #[arg(long, value_name = "PROTOCOL", value_parser = ["json", "openai"])]
    pub protocol: Option<String>,
    /// The `model` of OpenAI requests (default: EVAL_AGENT_MODEL; `evaluate`
    /// of a manifest: its model first).
    #[arg(long)]
    pub model: Option<String>,
    /// Ask the agent for a streamed answer (SSE) and record the time to the
    /// first token (default: EVAL_AGENT_STREAM; `evaluate` of a manifest:
    /// its setting first).
    #[arg(long)]
    pub stream: bool,
    /// Tool definitions (a JSON file: an array of OpenAI tools, or an
    /// object with `tools`) offered with each prompt (`evaluate` of a
    /// manifest: each dataset's own come from the manifest).
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// Any HTTP agent: how its requests are built and its answers read.
    #[command(flatten)]
    pub mapping: MappingArgs,
}

/// Any HTTP agent, without code: the request as a template, the answer read
/// by paths. Each flag wins over the manifest's `agent.*` key of the same
/// meaning, which wins over the EVAL_AGENT_* variable.
#[derive(Debug, clap::Args)]
pub struct MappingArgs {
    /// The request body as a JSON template, e.g. '{"question": "{input}"}':
    /// {input}, {messages}, {agent_args}, {agent_args.NAME}, {tools} (a
    /// string that is one placeholder becomes its JSON value). Default:
    /// EVAL_AGENT_REQUEST, else the JSON contract's body.
    #[arg(long, value_name = "JSON")]
    pub agent_request: Option<String>,
    /// POST (default), GET (no body: use --agent-query), PUT or PATCH
    /// (default: EVAL_AGENT_METHOD).
    #[arg(long, value_name = "METHOD")]
    pub agent_method: Option<String>,
    /// A query parameter added to the URL, NAME=VALUE (VALUE a template,
    /// e.g. q={input}); repeat it for more (default: EVAL_AGENT_QUERY).
    #[arg(long = "agent-query", value_name = "NAME=VALUE")]
    pub agent_query: Vec<String>,
    /// A header sent to the agent, 'Name: value' (value masked like a key);
    /// repeat it for more. Added to EVAL_AGENT_HEADERS and the manifest's
    /// (this flag wins for the same name).
    #[arg(long = "agent-header", value_name = "NAME: VALUE")]
    pub agent_headers: Vec<String>,
    /// Where the answer's text is in the agent's JSON answer: a path
    /// (data.answer, messages[-1].content) or a JSON pointer (/data/answer).
    /// Default: EVAL_AGENT_OUTPUT, else `output` (a text/plain answer: the
    /// whole body).
    #[arg(long, value_name = "PATH")]
    pub agent_output: Option<String>,
    /// Where the retrieved context is, e.g. `data.sources[*].text` (strings,
    /// or objects with text/content). Default: EVAL_AGENT_CONTEXT, else
    /// `context`.
    #[arg(long, value_name = "PATH")]
    pub agent_context: Option<String>,
    /// Where the tool calls are (an array of {name, arguments} or OpenAI's
    /// {function: {name, arguments}}). Default: EVAL_AGENT_TOOL_CALLS.
    #[arg(long, value_name = "PATH")]
    pub agent_tool_calls: Option<String>,
    /// Where the prompt token count is (default:
    /// EVAL_AGENT_USAGE_PROMPT_TOKENS).
    #[arg(long, value_name = "PATH")]
    pub agent_usage_prompt_tokens: Option<String>,
    /// Where the completion token count is (default:
    /// EVAL_AGENT_USAGE_COMPLETION_TOKENS).
    #[arg(long, value_name = "PATH")]
    pub agent_usage_completion_tokens: Option<String>,
}

impl MappingArgs {
    /// The mapping the flags give; a bad one is an error naming the flag.
    pub fn mapping(&self) -> Result<eval_datasets::HttpMapping, String> {
        use eval_datasets::agent::{Header, read_method, read_path, read_query, read_template};
        let mut m = eval_datasets::HttpMapping::default();
        if let Some(t) = &self.agent_request {
            m.request = Some(read_template(t, "--agent-request")?);
        }
        if let Some(t) = &self.agent_method {
            m.method = Some(read_method(t, "--agent-method")?);
        }
        if !self.agent_query.is_empty() {
            let pairs = self
                .agent_query
                .iter()
                .map(|q| {
                    q.split_once('=').ok_or_else(|| {
                        format!(
                            "--agent-query `{}`: expected NAME=VALUE, e.g. q={{input}}",
                            q.escape_debug()
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            m.query = Some(read_query(pairs, "--agent-query")?);
        }
        for h in &self.agent_headers {
            let header = Header::parse_line(h, "--agent-header")
                .map_err(|e| format!("--agent-header: {e}"))?;
            m.headers
                .retain(|old: &Header| !old.name.eq_ignore_ascii_case(&header.name));
            m.headers.push(header);
        }
        let path =
            |p: &Option<String>, flag: &str| p.as_deref().map(|p| read_path(p, flag)).transpose();
        m.output = path(&self.agent_output, "--agent-output")?;
        m.context = path(&self.agent_context, "--agent-context")?;
        m.tool_calls = path(&self.agent_tool_calls, "--agent-tool-calls")?;
        m.prompt_tokens = path(
            &self.agent_usage_prompt_tokens,
            "--agent-usage-prompt-tokens",
        )?;
        m.completion_tokens = path(
            &self.agent_usage_completion_tokens,
            "--agent-usage-completion-tokens",
        )?;
        Ok(m)
    }
}

pub fn run(mut args: Args) -> Result<u8, Failure> {
    // runevals' own spelling of FILE (`--interactive` is dispatched by main).
    if let Some(f) = args.prompts_file.take() {
        args.file = Some(f);
    }
    let config = crate::dotenv::settings(std::path::Path::new("."))?;
    for w in config.warnings() {
        errln!("warning: {w}");
    }
    let discovered = args.file.is_none() && args.prompts.is_empty();
    let file = match (&args.file, args.prompts.is_empty()) {
        (Some(f), _) => Some(f.clone()),
        (None, true) => Some(discover::find_or_offer(Path::new("."))?),
        (None, false) => None,
    };
    // Seed 003's flow (a discovered file, or a runevals document) keeps its
    // reports under .evals/results/ unless told where.
    let output = args.output.clone().or_else(|| {
        let f = file.as_deref()?;
        (discovered || crate::convert::is_runevals(f)).then(|| {
            let stem = f
                .file_stem()
                .map_or("evals".into(), |s| s.to_string_lossy());
            Path::new(".evals")
                .join("results")
                .join(format!("{stem}.json"))
        })
    });
    // Seed 003: a legacy runevals document is upgraded first (a backup
    // kept); an estimate changes nothing (legacy documents load as they are).
    if let Some(f) = file.as_deref().filter(|f| !is_manifest(f))
        && !args.estimate
        && crate::convert::is_legacy(f)
    {
        let done = crate::convert::upgrade_file(f)?;
        errln!(
            "note: {} is a legacy runevals document: upgraded to schemaVersion {} ({} items); backup: {}",
            f.display(),
            eval_datasets::runevals::CURRENT_VERSION,
            done.items,
            done.backup.display()
        );
    }
    let plan = plan(&args, file.as_deref())?;
    let mut runner = match cassette_config(&args, config)? {
        Some(own) => Runner::new().config(own),
        None => Runner::new(),
    };
    // Where the run's end writes: the results file, the page beside it,
    // JUnit (the same end as the harness's and the attribute's).
    if let Some(path) = &output {
        runner = runner.output(path);
    }
    if let Some(path) = &args.junit {
        runner = runner.junit(path);
    }
    // The results file holds every sample; the command keeps only what it
    // prints (--json prints them all).
    runner = runner.no_html(args.no_html).streamed(!args.json);
    let prepared = runner
        .prepare(plan)
        .map_err(|e| Failure::config(e.to_string()))?;
    if args.estimate {
        steps::print_estimate(&args, &prepared, config)?;
        return Ok(0);
    }
    // The agent is set up once the plan holds (a bad dataset is reported
    // first); which one depends on what the datasets hold.
    let (retrieval, ordinary) = prepared.holds_retrieval();
    if args.allow_custom_prefix && !args.no_ingest {
        steps::confirm_scopes(&args, &prepared, config)?;
    }
    let agent = agent(
        &args,
        config,
        file.as_deref(),
        retrieval,
        ordinary,
        prepared.agent_settings(),
    )?;
    for note in &prepared.notes {
        errln!("note: {note}");
    }
    let bar = (std::io::stderr().is_terminal() && !args.json).then(|| {
        let bar = indicatif::ProgressBar::new(prepared.agent_calls() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} samples {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    // Colour is decided once, for stdout (NO_COLOR, CLICOLOR, CLICOLOR_FORCE).
    let paint = Paint::stdout();
    let outcome = prepared
        .evaluate(&agent, |_| {
            if let Some(bar) = &bar {
                bar.inc(1);
            }
        })
        .map_err(|e| Failure::config(e.to_string()))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let (html, junit) = (&outcome.html, &outcome.junit);
    if args.json {
        let text = serde_json::to_string_pretty(&outcome.results)
            .map_err(|e| Failure::config(format!("cannot render the results: {e}")))?;
        outjson!(text); // issue37:escape
    } else {
        out!("{}", outcome.summary_text(paint));
        if let Some((path, b)) = &outcome.baseline {
            out!("{}", b.render(path));
        }
        if let Some(path) = &outcome.results_path {
            let shown = eval_datasets::terminal::escaped(&path.to_string_lossy()).into_owned(); // issue37:escape
            outln!("{}", paint.dim(&format!("results: {shown}")));
        }
        if let Some(path) = html {
            outln!("html: {}", path.display());
        }
        if let Some(path) = junit {
            let shown = eval_datasets::terminal::escaped(&path.to_string_lossy()).into_owned(); // issue37:escape
            outln!("{}", paint.dim(&format!("junit: {shown}")));
        }
    }
    // Notes go to stderr, so `--json` output stays one document.
    for note in &outcome.notes {
        errln!("note: {note}");
    }
    if let Some(why) = outcome.verdict.not_scored() {
        errln!("error: {why}");
        return Ok(2);
    }
    Ok(u8::from(!outcome.verdict.passed()))
}

/// `--repeat`: `5`, `auto`, `auto:20`.
fn parse_repeat(text: &str) -> Result<eval_datasets::Repeat, String> {
    eval_datasets::Repeat::parse(text).map_err(|e| e.to_string())
}

/// `--inconclusive`: `estimate`, `fail` or `pass`.
pub(crate) fn parse_inconclusive(
    text: &str,
) -> Result<eval_runtime::verdict::OnInconclusive, String> {
    eval_runtime::verdict::OnInconclusive::parse(text)
        .ok_or_else(|| "expected estimate (the point estimate decides), fail or pass".to_string())
}

/// The plan the flags describe.
fn plan(args: &Args, file: Option<&Path>) -> Result<PlanBuilder, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::config(format!("cannot read the working directory: {e}")))?;
    let mut plan = PlanBuilder::new()
        .base_dir(&cwd)
        .ci_gate(args.ci_gate)
        .allow_custom_prefix(args.allow_custom_prefix)
        .allow_outside(args.allow_outside)
        .subset(Subset::new(
            args.tags.clone(),
            args.sample_size,
            args.seed,
            args.max_samples,
        ));
    if let Some(on) = args.inconclusive {
        plan = plan.inconclusive(on);
    }
    if let Some(field) = &args.cluster_by {
        plan = plan.cluster_by(field);
    }
    if let Some(n) = args.repeat {
        plan = plan.repeat(n);
    }
    if let Some(n) = args.concurrency {
        plan = plan.concurrency(n as usize);
    }
    if let Some(s) = args.timeout_secs {
        plan = plan.timeout(Duration::from_secs(s));
    }
    if let Some(b) = &args.baseline {
        if !args.epsilon.is_finite() || args.epsilon < 0.0 {
            return Err(Failure::config("--epsilon must be a number ≥ 0"));
        }
        plan = plan
            .baseline(b, args.epsilon)
            .baseline_allowing(args.allow_judge_change, args.allow_dataset_change);
    }
    let metrics = args.metrics.as_deref().unwrap_or("");
    plan = match file {
        None => plan.samples("prompts", inline_samples(args)?, metrics),
        Some(f) if is_manifest(f) => {
            if args.metrics.is_some() {
                return Err(Failure::config(
                    "--metrics is for datasets; a manifest names its own metrics",
                ));
            }
            plan.manifest(&f.to_string_lossy(), args.dataset.as_deref())
        }
        Some(f) => {
            if args.dataset.is_some() {
                return Err(Failure::config(
                    "--dataset names a dataset of a manifest; this is a dataset file",
                ));
            }
            plan.dataset(&f.to_string_lossy(), metrics)
        }
    };
    if let Some(t) = &args.agent.tools {
        if file.is_some_and(is_manifest) {
            return Err(Failure::config(
                "--tools is for a dataset file or --prompts; a manifest gives each dataset its own `tools`",
            ));
        }
        plan = plan.tools(&t.to_string_lossy());
    }
    for g in &args.gates {
        plan = plan.gate(g);
    }
    Ok(plan)
}

/// `--prompts` (and `--expected`) as samples.
fn inline_samples(args: &Args) -> Result<Vec<Sample>, Failure> {
    if !args.expected.is_empty() && args.expected.len() != args.prompts.len() {
        return Err(Failure::config(format!(
            "{} --prompts but {} --expected: give one expected answer per prompt, or none",
            args.prompts.len(),
            args.expected.len()
        )));
    }
    if let Some(i) = args.prompts.iter().position(|p| p.trim().is_empty()) {
        return Err(Failure::config(format!(
            "--prompts: prompt {} is empty",
            i + 1
        )));
    }
    if let Some(i) = args.expected.iter().position(|p| p.trim().is_empty()) {
        return Err(Failure::config(format!(
            "--expected: answer {} is empty (it would match anything)",
            i + 1
        )));
    }
    Ok(args
        .prompts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut s = Sample::new(p.clone());
            s.id = i.to_string();
            s.index = i;
            // Named by the flag and position (1-based), as messages show it.
            s.source.file = format!("--prompts[{}]", i + 1).into();
            if let Some(e) = args.expected.get(i) {
                s = s.with_expected(e.clone());
            }
            s
        })
        .collect())
}

/// The settings with `--cassette` / `--cassette-mode` in place of
/// EVAL_AGENT_CASSETTE / EVAL_AGENT_CASSETTE_MODE (`None`: neither given).
fn cassette_config(args: &Args, config: &Config) -> Result<Option<Config>, Failure> {
    if args.cassette.is_none() && args.cassette_mode.is_none() {
        return Ok(None);
    }
    let mut own = config.clone();
    if let Some(path) = &args.cassette {
        own.agent_cassette = Some(path.clone());
    }
    if let Some(mode) = &args.cassette_mode {
        own.agent_cassette_mode = match mode.as_str() {
            "record" => eval_runtime::CassetteMode::Record,
            _ => eval_runtime::CassetteMode::Replay,
        };
    }
    if own.agent_cassette.is_none() {
        return Err(Failure::config(
            "--cassette-mode needs a cassette: --cassette FILE (or EVAL_AGENT_CASSETTE)",
        ));
    }
    Ok(Some(own))
}

/// The agent for what the datasets hold: retrieval queries go to the
/// retriever (`--url` when every dataset is a retrieval dataset, else
/// `EVAL_RETRIEVER_URL`), other samples to the HTTP agent.
fn agent(
    args: &Args,
    config: &Config,
    file: Option<&Path>,
    retrieval: bool,
    ordinary: bool,
    manifest_agent: &eval_runtime::AgentSettings,
) -> Result<Routed, Failure> {
    let agent_error = |e| url_error(&args.agent, e);
    let retriever = if retrieval {
        let http = match (&args.agent.url, ordinary) {
            (Some(u), false) => HttpRetriever::new(u)
                .map_err(agent_error)?
                .reranker_from(&config.rerank)
                .map_err(|e| Failure::config(e.to_string()))?,
            _ => HttpRetriever::from_config(config).map_err(|e| Failure::config(e.to_string()))?,
        };
        // Without --loader-dir, a `loaderRef` names the flag that loads it.
        let mut agent = RetrieverAgent::new(http).no_loader_says(
            "pass --loader-dir DIR, the directory its loaderRef paths are relative to",
        );
        if let Some(dir) = args.loader_dir.clone() {
            let (anywhere, limit) = (args.allow_outside, config.max_dataset_bytes);
            // Only files inside DIR (symlinks followed), unless allowed; a
            // refusal says why.
            agent = agent.try_loader(move |r| {
                eval_runtime::retrieval::load_from_dir(&dir, r, anywhere, limit)
            });
        }
        Some(
            agent
                // Dataset paths are relative to here (a manifest's: to its project).
                .base_dir(base_dir(file)?)
                .allow_custom_prefix(args.allow_custom_prefix)
                .no_ingest(args.no_ingest),
        )
    } else {
        None
    };
    let http = if ordinary {
        Some(http_agent(&args.agent, config, manifest_agent)?)
    } else {
        None
    };
    Ok(Routed {
        retriever: retriever.map(std::sync::Arc::new),
        http,
    })
}

/// The HTTP agent the flags describe: flags, then the manifest's settings
/// (`manifest`), then the EVAL_AGENT_* variables.
pub fn http_agent(
    flags: &AgentArgs,
    config: &Config,
    manifest: &eval_runtime::AgentSettings,
) -> Result<HttpAgent, Failure> {
    let settings = eval_runtime::AgentSettings::new(
        flags
            .protocol
            .as_deref()
            .and_then(eval_runtime::Protocol::parse),
        flags.model.clone(),
        flags.stream.then_some(true),
    )
    .with_http(flags.mapping.mapping().map_err(Failure::config)?);
    let agent = HttpAgent::from_config(config, flags.url.as_deref())
        .map_err(|e| url_error(flags, e))?
        .settings(&settings)
        .under_plan(manifest);
    agent.check().map_err(|e| Failure::config(e.to_string()))?;
    Ok(agent)
}

/// An agent that cannot be set up, said with the flag to fix it.
fn url_error(flags: &AgentArgs, e: eval_runtime::Error) -> Failure {
    Failure::config(if flags.url.is_some() {
        format!("--url: {e}")
    } else {
        format!("{e} (or pass --url)")
    })
}

/// Retrieval queries to the retriever, other samples to the agent.
struct Routed {
    retriever: Option<std::sync::Arc<RetrieverAgent>>,
    http: Option<HttpAgent>,
}

impl eval_runtime::Agent for Routed {
    fn respond<'a>(&'a self, sample: &'a Sample) -> BoxFuture<'a, Result<Response, AgentError>> {
        match (sample.retrieval.is_some(), &self.retriever, &self.http) {
            (true, Some(r), _) => eval_runtime::Agent::respond(&**r, sample),
            (false, _, Some(h)) => eval_runtime::Agent::respond(h, sample),
            _ => Box::pin(async { Err(AgentError::Failed("no agent for this sample".into())) }),
        }
    }

    /// The HTTP agent's settings (protocol, model, sampling): what the
    /// cassette keys answers by and results files record.
    fn cassette_settings(&self) -> serde_json::Value {
        self.http
            .as_ref()
            .map_or(serde_json::Value::Null, HttpAgent::cassette_settings)
    }

    /// A letta suite's model (`target.model_handles`): the HTTP agent asks
    /// as it; the retriever is shared.
    fn with_model(&self, model: &str) -> Option<std::sync::Arc<dyn eval_runtime::Agent>> {
        let http = self.http.as_ref()?.clone().model(model);
        Some(std::sync::Arc::new(Routed {
            retriever: self.retriever.clone(),
            http: Some(http),
        }))
    }
}

/// Where the samples' file paths are relative to: a manifest's project
/// root, else the working directory.
fn base_dir(file: Option<&Path>) -> Result<PathBuf, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::config(format!("cannot read the working directory: {e}")))?;
    Ok(match file {
        Some(f) if is_manifest(f) => {
            let dir = f
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            manifest::project_root(&cwd.join(dir))
        }
        _ => cwd,
    })
}

/// Seed 004: a scope outside `eval:` is deleted only when the user says so,
/// here and now: asked on a terminal, `--yes` otherwise.
fn confirm_deletion(scopes: &std::collections::BTreeSet<&str>, yes: bool) -> Result<(), Failure> {
    let list = scopes
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if yes {
        errln!("note: ingest deletes every document under {list} (--allow-custom-prefix --yes)");
        return Ok(());
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(Failure::config(format!(
            "--allow-custom-prefix: ingest would delete every document under {list}; there is no terminal to ask for confirmation, so pass --yes to confirm (nothing was deleted)"
        )));
    }
    err!(
        "Ingest deletes every document under {list} before indexing the dataset. Continue? [y/N] "
    );
    let mut answer = String::new();
    let _ = std::io::stdin().read_line(&mut answer);
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(Failure::config(format!(
            "not confirmed: nothing under {list} was deleted"
        )))
    }
}

fn is_manifest(file: &Path) -> bool {
    matches!(
        file.extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref(),
        Some("yaml" | "yml")
    )
}
