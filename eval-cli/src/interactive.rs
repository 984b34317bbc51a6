//! `evals interactive`: writing samples by talking to the agent (seed 003's
//! `--interactive`). A prompt (or a conversation built turn by turn) goes
//! to the agent; its answer, context, tool calls, latency and tokens are
//! shown with the scores of the chosen metrics (the engine's scoring, by
//! [`eval_runtime::__cli::Probe`]); the answer can be accepted as the expected one,
//! the expected answer edited, tags added, and the sample appended to a
//! dataset file ([`eval_datasets::append::Appender`]: whole records, the file
//! locked, a backup before the first write).
//!
//! Lines are read with a line editor on a terminal (history, editing) and
//! as plain lines from a pipe; end of input ends the session.
//!
//! What came from outside (the agent's text, a dataset file's content,
//! file names) is printed through [`eval_datasets::terminal`], escaped. A
//! dataset file is checked before it is chosen and before each append
//! ([`check_target`]): it must be missing (it is created) or a regular file
//! within `EVAL_MAX_DATASET_BYTES`; a device, a FIFO or a directory is
//! refused from its metadata, never opened.

use std::path::{Path, PathBuf};
use std::time::Duration;

use eval_datasets::append::{AppendError, Appender};
use eval_datasets::files::ReadError;
use eval_datasets::terminal::{escaped, escaped_lines};
use eval_datasets::{Sample, ToolCall};
use eval_runtime::__cli::{Paint, Probe, Probed};
use eval_runtime::{HttpAgent, Response};
use rustyline::error::ReadlineError;

use crate::Failure;
use crate::evaluate::AgentArgs;

mod command;
mod view;

use command::Command;

/// Flags of `evals interactive`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How the agent is reached.
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Metrics each answer is scored with, e.g. "contains, partial_match >= 0.5"
    /// (default: as `evals evaluate` — PartialMatch once the sample has an
    /// expected answer, Relevance and Coherence before, which need a judge).
    #[arg(long)]
    pub metrics: Option<String>,
    /// The dataset samples are appended to (.jsonl, .ndjson or .csv; created
    /// when missing). Before the session's first append to a file that holds
    /// something, a backup is written beside it. `:dataset FILE` changes it.
    #[arg(long, value_name = "FILE")]
    pub dataset: Option<PathBuf>,
    /// Tags given to every sample of the session (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Limit on one answer, and separately on its scoring, in seconds
    /// (default EVAL_SAMPLE_TIMEOUT_SECS, else 300).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_secs: Option<u64>,
}

/// Largest dataset file read whole to warn that it does not load (a
/// 200,000-sample, 38 MB file takes seconds; appending reads it in blocks).
const LOADED_TO_CHECK: u64 = 8 << 20;

/// Input errors in a row after which the session ends (an unreadable input).
const MAX_INPUT_ERRORS: u32 = 3;

/// Why a dataset file cannot be appended to.
#[derive(Debug)]
enum TargetError {
    /// It is not a regular file, or is over the size limit, or its
    /// metadata cannot be read: refused before it is opened for appending.
    Unusable {
        /// The file, as given.
        path: PathBuf,
        /// Why.
        source: ReadError,
    },
    /// Appending failed (the file is as it was).
    Append(AppendError),
}

impl std::fmt::Display for TargetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TargetError::Unusable { path, source } => {
                write!(f, "{}: cannot append to it: {source}", path.display())?;
                match source {
                    ReadError::NotAFile { .. } => f.write_str(
                        "; samples are appended to a regular .jsonl, .ndjson or .csv file",
                    ),
                    ReadError::TooLarge { .. } => f.write_str(" (EVAL_MAX_DATASET_BYTES)"),
                    _ => Ok(()),
                }
            }
            TargetError::Append(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TargetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TargetError::Unusable { source, .. } => Some(source),
            TargetError::Append(e) => Some(e),
        }
    }
}

impl From<AppendError> for TargetError {
    fn from(e: AppendError) -> Self {
        TargetError::Append(e)
    }
}

/// Checks, from its metadata (symlinks followed), that `path` can be
/// appended to without reading forever or waiting: missing (it is
/// created), or a regular file of at most `limit` bytes, as
/// [`eval_datasets::files::open_checked`] checks a file it reads.
fn check_target(path: &Path, limit: u64) -> Result<(), TargetError> {
    match eval_datasets::files::open_checked(path, limit) {
        Ok(_) => Ok(()),
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(TargetError::Unusable {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// A path as shown: escaped.
fn shown(path: &Path) -> String {
    escaped(&path.display().to_string()).into_owned()
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let config = crate::dotenv::settings(std::path::Path::new("."))?;
    for w in config.warnings() {
        errln!("warning: {}", escaped_lines(&w.to_string()));
    }
    let agent =
        crate::evaluate::http_agent(&args.agent, config, &eval_runtime::AgentSettings::default())?;
    let mut session = Session {
        agent,
        metrics: args.metrics.clone().unwrap_or_default(),
        tools: args
            .agent
            .tools
            .as_ref()
            .map(|t| t.to_string_lossy().into_owned()),
        timeout: args.timeout_secs.map(Duration::from_secs),
        probe: Probe::new(""),
        targets: Vec::new(),
        current: None,
        session_tags: args.tags.clone(),
        draft: Draft::new(&args.tags),
        paint: Paint::stdout(),
        max_bytes: config.max_dataset_bytes,
    };
    if let Some(path) = &args.dataset {
        session
            .choose(path)
            .map_err(|e| Failure::config(escaped_lines(&e.to_string())))?;
    }
    session.probe = session.make_probe(&session.metrics)?;
    let mut editor = rustyline::DefaultEditor::new()
        .map_err(|e| Failure::config(format!("cannot read the terminal: {e}")))?;
    session.banner();
    let mut errors = 0u32;
    loop {
        let line = match editor.readline("evals> ") {
            Ok(line) => {
                errors = 0;
                line
            }
            Err(ReadlineError::Eof) => break,
            // Ctrl-C drops the line being typed, as a shell does.
            Err(ReadlineError::Interrupted) => continue,
            Err(e) => {
                errors += 1;
                errln!("error: cannot read the input: {e}");
                if errors >= MAX_INPUT_ERRORS {
                    break;
                }
                continue;
            }
        };
        // An empty line does nothing, as in a shell.
        if line.trim().is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line.as_str());
        match command::parse(&line) {
            Ok(Command::Quit) => break,
            Ok(Command::Edit) => {
                let start = session.draft.expected_or_answer();
                let initial = command::escape(&start);
                match editor.readline_with_initial("expected> ", (&initial, "")) {
                    Ok(text) => session.set_expected(&command::unescape(&text)),
                    Err(ReadlineError::Eof | ReadlineError::Interrupted) => {
                        outln!("(expected answer unchanged)");
                    }
                    Err(e) => errln!("error: cannot read the input: {e}"),
                }
            }
            Ok(c) => session.apply(c),
            Err(why) => errln!("error: {} (:help lists the commands)", escaped(&why)),
        }
    }
    session.farewell();
    Ok(0)
}

/// The sample being written.
struct Draft {
    /// The user turns.
    turns: Vec<String>,
    /// Turns the last answer is for (`turns[..sent]`).
    sent: usize,
    expected: Option<String>,
    expected_tools: Option<Vec<ToolCall>>,
    tags: Vec<String>,
    /// The agent's last answer and the time it took.
    answer: Option<(Response, Duration)>,
    /// Changed since it was last appended (or started).
    dirty: bool,
    /// The session's dataset files it was appended to, unchanged since.
    appended_to: Vec<usize>,
}

impl Draft {
    fn new(tags: &[String]) -> Self {
        Draft {
            turns: Vec::new(),
            sent: 0,
            expected: None,
            expected_tools: None,
            tags: tags.to_vec(),
            answer: None,
            dirty: false,
            appended_to: Vec::new(),
        }
    }

    /// Turns typed but not sent yet.
    fn pending(&self) -> bool {
        self.turns.len() > self.sent
    }

    fn expected_or_answer(&self) -> String {
        self.expected
            .clone()
            .or_else(|| self.answer.as_ref().map(|(r, _)| r.output.clone()))
            .unwrap_or_default()
    }

    /// The sample it makes: the turns, the expected answer and tool calls,
    /// the tags, the agent's context (as the sample's `context`) and where
    /// it came from (`metadata`).
    fn sample(&self) -> Sample {
        let mut s = match self.turns.as_slice() {
            [one] => Sample::new(one.clone()),
            turns => Sample::new(String::new()).with_turns(turns.iter().cloned()),
        };
        if let Some(e) = &self.expected {
            s = s.with_expected(e.clone());
        }
        s.expected_tools = self.expected_tools.clone();
        s.tags = self.tags.clone();
        if let Some((r, _)) = &self.answer {
            s.context = r.context.clone();
        }
        s
    }
}

/// Fields appended only when the file has room for them (a CSV file's
/// header may not name them); the others must be kept.
const OPTIONAL_FIELDS: &[&str] = &["context", "metadata"];

struct Session {
    agent: HttpAgent,
    metrics: String,
    tools: Option<String>,
    timeout: Option<Duration>,
    probe: Probe,
    /// The dataset files chosen in the session, each with its own backup.
    targets: Vec<Target>,
    /// The one samples are appended to now.
    current: Option<usize>,
    session_tags: Vec<String>,
    draft: Draft,
    paint: Paint,
    /// The largest dataset file appended to (`EVAL_MAX_DATASET_BYTES`).
    max_bytes: u64,
}

/// A dataset file of the session.
struct Target {
    appender: Appender,
    appended: usize,
}

impl Session {
    /// A probe scoring with `metrics`, checked first.
    fn make_probe(&self, metrics: &str) -> Result<Probe, Failure> {
        let cwd = std::env::current_dir()
            .map_err(|e| Failure::config(format!("cannot read the working directory: {e}")))?;
        let mut probe = Probe::new(metrics).base_dir(cwd);
        if let Some(t) = &self.tools {
            probe = probe.tools(t);
        }
        if let Some(t) = self.timeout {
            probe = probe.timeout(t);
        }
        probe.check().map_err(|e| Failure::config(e.to_string()))?;
        Ok(probe)
    }

    fn banner(&self) {
        let p = self.paint;
        outln!("{}", p.heading("evals interactive"));
        outln!("agent: {}", escaped(self.agent.url()));
        outln!(
            "metrics: {}",
            if self.metrics.trim().is_empty() {
                "the default (partial_match with an expected answer, else relevance and coherence)"
                    .into()
            } else {
                escaped(&self.metrics)
            }
        );
        match self.current.map(|i| &self.targets[i].appender) {
            Some(a) => outln!("dataset: {}", shown(a.path())),
            None => outln!("dataset: none (:dataset FILE to choose one)"),
        }
        outln!("Type a prompt and press Enter; :help lists the commands; Ctrl-D ends.");
    }

    fn farewell(&self) {
        if self.draft.dirty && self.draft.answer.is_some() {
            outln!(
                "{}",
                self.paint
                    .note("note: the last sample was not appended (:append keeps it)")
            );
        }
        let mut any = false;
        for t in self.targets.iter().filter(|t| t.appended > 0) {
            any = true;
            let a = &t.appender;
            outln!("{} sample(s) appended to {}", t.appended, shown(a.path()));
            if let Some(b) = a.backup() {
                outln!("{}", self.paint.dim(&format!("backup: {}", shown(b))));
            }
        }
        if !any {
            outln!("no sample appended");
        }
    }

    /// Makes `path` the dataset file samples go to (one appender per file
    /// for the session, so one backup), once [`check_target`] lets it; warns
    /// when it holds something that does not load as a dataset (files up to
    /// [`LOADED_TO_CHECK`]).
    fn choose(&mut self, path: &Path) -> Result<(), TargetError> {
        let known = self.targets.iter().position(|t| t.appender.path() == path);
        let appender = match known {
            Some(_) => None,
            None => Some(Appender::new(path)?.max_bytes(self.max_bytes)),
        };
        check_target(path, self.max_bytes)?;
        let Some(appender) = appender else {
            self.current = known;
            return Ok(());
        };
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        if (1..=LOADED_TO_CHECK).contains(&size)
            && let Err(e) = eval_datasets::Dataset::load(path)
        {
            let first = e.to_string();
            let first = first.lines().next().unwrap_or_default();
            errln!(
                "warning: {} does not load as a dataset ({}); samples are still appended",
                shown(path),
                escaped(first)
            );
        }
        self.targets.push(Target {
            appender,
            appended: 0,
        });
        self.current = Some(self.targets.len() - 1);
        Ok(())
    }

    fn apply(&mut self, command: Command) {
        match command {
            Command::Help => out!("{}", command::HELP),
            Command::Prompt(text) => {
                if !self.draft.pending() {
                    self.start_new();
                }
                self.draft.turns.push(text);
                self.draft.dirty = true;
                self.send();
            }
            Command::Turn(text) => {
                self.draft.turns.push(text);
                self.draft.dirty = true;
                outln!(
                    "turn {} added; :send sends the conversation",
                    self.draft.turns.len()
                );
            }
            Command::Send => {
                if self.draft.turns.is_empty() {
                    errln!("error: nothing to send: type a prompt, or add turns with :turn TEXT");
                } else {
                    self.send();
                }
            }
            Command::Accept => self.accept(),
            Command::Expect(text) => self.set_expected(&command::unescape(&text)),
            Command::Edit | Command::Quit => {}
            Command::Tag(tags) => {
                for t in tags {
                    if !self.draft.tags.contains(&t) {
                        self.draft.tags.push(t);
                    }
                }
                self.draft.dirty = true;
                outln!("tags: {}", escaped(&self.draft.tags.join(", ")));
            }
            Command::Untag(tags) => {
                self.draft.tags.retain(|t| !tags.contains(t));
                self.draft.dirty = true;
                outln!("tags: {}", escaped(&self.draft.tags.join(", ")));
            }
            Command::Score => self.rescore(),
            Command::Metrics(spec) => match self.make_probe(&spec) {
                Ok(p) => {
                    self.probe = p;
                    self.metrics = spec;
                    outln!("metrics: {}", escaped(&self.metrics));
                    self.rescore();
                }
                Err(f) => errln!("error: {} (metrics unchanged)", escaped_lines(&f.message)),
            },
            Command::Show => out!("{}", view::draft(&self.draft, self.paint)),
            Command::New => {
                self.start_new();
                outln!("new sample");
            }
            Command::Dataset(path) => match self.choose(&path) {
                Ok(()) => outln!("dataset: {}", shown(&path)),
                Err(e) => errln!("error: {}", escaped_lines(&e.to_string())),
            },
            Command::Append => self.append(),
        }
    }

    /// Starts a new sample, saying so when the last one is left unsaved.
    fn start_new(&mut self) {
        if self.draft.dirty && self.draft.answer.is_some() {
            outln!(
                "{}",
                self.paint
                    .note("note: the previous sample was not appended")
            );
        }
        self.draft = Draft::new(&self.session_tags);
    }

    fn send(&mut self) {
        let sample = self.draft.sample();
        let probed = self.probe.ask(&self.agent, &sample);
        self.draft.sent = self.draft.turns.len();
        self.draft.answer = probed.response.clone().map(|r| (r, probed.report.latency));
        self.show(&probed);
    }

    fn rescore(&mut self) {
        let Some((response, latency)) = self.draft.answer.clone() else {
            outln!("(no answer to score yet)");
            return;
        };
        let probed = self.probe.rescore(&self.draft.sample(), &response, latency);
        out!("{}", view::scores(&probed, self.paint));
    }

    fn show(&self, probed: &Probed) {
        out!("{}", view::answer(probed, self.paint));
        out!("{}", view::scores(probed, self.paint));
    }

    fn accept(&mut self) {
        let Some((response, _)) = &self.draft.answer else {
            errln!("error: no answer to accept yet: send a prompt first");
            return;
        };
        if self.draft.pending() {
            errln!("error: the conversation has turns not sent yet: :send them first");
            return;
        }
        self.draft.expected = Some(response.output.clone());
        // The calls the agent made become the ones expected.
        if !response.tool_calls.is_empty() {
            self.draft.expected_tools = Some(response.tool_calls.clone());
        }
        self.draft.dirty = true;
        outln!("accepted: the answer is now the expected answer");
        self.rescore();
    }

    fn set_expected(&mut self, text: &str) {
        if text.trim().is_empty() {
            self.draft.expected = None;
            outln!("expected answer removed");
        } else {
            self.draft.expected = Some(text.to_string());
            outln!(
                "expected: {}",
                view::lines(&view::cut(text, view::SHOWN_CHARS))
            );
        }
        self.draft.dirty = true;
        if self.draft.answer.is_some() {
            self.rescore();
        }
    }

    fn append(&mut self) {
        if self.draft.turns.is_empty() {
            errln!("error: nothing to append: type a prompt first");
            return;
        }
        if !self.draft.dirty
            && let Some(i) = self.current.filter(|i| self.draft.appended_to.contains(i))
        {
            errln!(
                "error: this sample is already in {}: change it first, or :new for another",
                shown(self.targets[i].appender.path())
            );
            return;
        }
        let Some(index) = self.current else {
            errln!(
                "error: no dataset file: start with --dataset FILE or choose one with :dataset FILE"
            );
            return;
        };
        let target = &mut self.targets[index];
        // Checked again: the file may have been replaced since it was chosen.
        if let Err(e) = check_target(target.appender.path(), self.max_bytes) {
            errln!("error: {}", escaped_lines(&e.to_string()));
            return;
        }
        let appender = &mut target.appender;
        let mut sample = self.draft.sample();
        sample.metadata = view::provenance(self.draft.answer.as_ref().map(|(r, _)| r));
        let result = match appender.append(&sample) {
            // A CSV file without columns for what is only informative.
            Err(AppendError::Columns { fields, .. })
                if fields.iter().all(|f| OPTIONAL_FIELDS.contains(&f.as_str())) =>
            {
                outln!(
                    "{}",
                    self.paint.note(&format!(
                        "note: {} has no column for {}: appended without",
                        shown(appender.path()),
                        escaped(&fields.join(", "))
                    ))
                );
                if fields.iter().any(|f| f == "context") {
                    sample.context.clear();
                }
                if fields.iter().any(|f| f == "metadata") {
                    sample.metadata.clear();
                }
                appender.append(&sample)
            }
            other => other,
        };
        match result {
            Ok(done) => {
                if let Some(b) = &done.backup {
                    outln!("{}", self.paint.dim(&format!("backup: {}", shown(b))));
                }
                outln!(
                    "{}",
                    self.paint.pass(&format!(
                        "appended to {}:{}",
                        shown(appender.path()),
                        done.line
                    ))
                );
                target.appended += 1;
                if self.draft.dirty {
                    self.draft.appended_to.clear();
                }
                self.draft.appended_to.push(index);
                self.draft.dirty = false;
            }
            Err(e) => errln!("error: {}", escaped_lines(&e.to_string())),
        }
    }
}
