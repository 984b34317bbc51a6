//! Record and replay of agent answers (`EVAL_AGENT_CASSETTE`): record a
//! run's answers once, then re-run metric and threshold work without
//! calling the agent.
//!
//! An answer is keyed by what was sent: the sample's user turns, its
//! `agent_args` and `tools`, the agent's own settings that shape the answer
//! ([`Agent::cassette_settings`]: protocol, model, sampling — never its URL
//! or key) and the run of a repeated sample. A replay finds the answer by
//! that key; a sample whose key has no answer fails, naming what changed
//! since the recording (or that the sample was never recorded).
//!
//! The file is JSON Lines, one answer per line, sorted by key, written
//! atomically (a temporary file renamed over it) under a lock file, and
//! merged with what is on disk, so nextest's one-process-per-test runs
//! record into one cassette. Every string in it is masked like results
//! (`secrets::mask_json`): it never holds a credential.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use eval_datasets::Sample;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::agent::{Agent, Response};
use crate::config::Config;
use crate::model::SharedError;
pub(crate) use crate::model::{CassetteError, CassetteMode};

/// One recorded answer, one line of the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    /// Hash of `request`.
    key: String,
    /// `file id N`, to explain a miss.
    sample: String,
    /// What was sent (masked).
    request: Value,
    /// The agent's answer (masked).
    response: Response,
    /// Time the agent took, milliseconds.
    latency_ms: f64,
}

/// A cassette file, shared by every run of the process that uses it.
#[derive(Debug)]
pub(crate) struct Cassette {
    path: PathBuf,
    mode: CassetteMode,
    /// The size limit of the file read (`EVAL_MAX_DATASET_BYTES`).
    limit: u64,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Replay: the file's answers by key (loaded once), or why not.
    loaded: Option<Result<HashMap<String, Entry>, CassetteError>>,
    /// Record: answers recorded by this process, not yet written.
    pending: Vec<Entry>,
    last_write: Option<Instant>,
    /// Record: the last write's error, said once.
    write_error: Option<CassetteError>,
}

/// How often recorded answers are written while a run goes on (and once
/// more at its end).
const WRITE_EVERY: Duration = Duration::from_secs(1);

impl Cassette {
    /// The cassette `config` names (`EVAL_AGENT_CASSETTE`, in
    /// `EVAL_AGENT_CASSETTE_MODE`), one per path for the whole process.
    pub(crate) fn from_config(config: &Config) -> Option<Arc<Cassette>> {
        let path = config.agent_cassette.as_ref()?;
        Some(Self::shared(
            path,
            config.agent_cassette_mode,
            config.max_dataset_bytes,
        ))
    }

    /// The process's cassette at `path` in `mode`, read up to `limit` bytes.
    pub(crate) fn shared(path: &Path, mode: CassetteMode, limit: u64) -> Arc<Cassette> {
        /// Open cassettes by path and whether they record.
        type Open = HashMap<(PathBuf, bool), Arc<Cassette>>;
        static OPEN: OnceLock<Mutex<Open>> = OnceLock::new();
        let mut open = OPEN
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        open.entry((path.to_path_buf(), mode == CassetteMode::Record))
            .or_insert_with(|| {
                Arc::new(Cassette {
                    path: path.to_path_buf(),
                    mode,
                    limit,
                    state: Mutex::new(State::default()),
                })
            })
            .clone()
    }

    /// Record or replay.
    pub(crate) fn mode(&self) -> CassetteMode {
        self.mode
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn shown(&self) -> String {
        self.path.display().to_string()
    }

    /// The answer recorded for run `run` of `sample` sent to `agent`, with
    /// the time the agent took then; a miss names what changed.
    pub(crate) fn replay(
        &self,
        sample: &Sample,
        run: u32,
        agent: &dyn Agent,
    ) -> Result<(Response, Duration), CassetteError> {
        let (mut request, key, who) = keyed(sample, run, agent);
        crate::secrets::mask_json(&mut request);
        let mut state = self.state();
        let entries = state.loaded.get_or_insert_with(|| {
            read_entries(&self.path, self.limit).map(|e| e.into_iter().collect())
        });
        let entries = entries.as_ref().map_err(Clone::clone)?;
        // The key is found and what it was recorded for is what is sent
        // now: a line whose request was edited (its key kept) is a miss.
        if let Some(entry) = entries.get(&key).filter(|e| e.request == request) {
            let mut response = entry.response.clone();
            response.usage = crate::model::Usage::replayed(
                response.usage,
                &format!("the cassette {}", self.shown()),
            );
            return Ok((response, Duration::from_secs_f64(entry.latency_ms / 1000.0)));
        }
        let why = match entries.values().find(|e| e.sample == who) {
            Some(old) => changed(&old.request, &request),
            None => "it was not recorded (record it with EVAL_AGENT_CASSETTE_MODE=record, or `evals evaluate --cassette-mode record`)".into(),
        };
        Err(CassetteError::Miss {
            path: self.shown(),
            sample: who,
            why,
        })
    }

    /// Stores `response` as the answer to run `run` of `sample` (written by
    /// [`Cassette::flush_if_due`] and [`Cassette::flush`], outside the
    /// agent's timing).
    pub(crate) fn record(
        &self,
        sample: &Sample,
        run: u32,
        agent: &dyn Agent,
        response: &Response,
        latency: Duration,
    ) {
        let (mut request, key, who) = keyed(sample, run, agent);
        crate::secrets::mask_json(&mut request);
        let mut stored = serde_json::to_value(response).unwrap_or(Value::Null);
        crate::secrets::mask_json(&mut stored);
        let Ok(response) = serde_json::from_value(stored) else {
            return;
        };
        self.state().pending.push(Entry {
            key,
            sample: who,
            request,
            response,
            latency_ms: latency.as_secs_f64() * 1000.0,
        });
    }

    /// Reads the file as it is before the run, so a cassette that cannot be
    /// used is refused before any agent is called: in replay, it must be
    /// there and whole; in record, what is there must be whole (answers
    /// are merged into it, and a file that cannot be read is never
    /// replaced).
    pub(crate) fn check(&self) -> Result<(), CassetteError> {
        let mut state = self.state();
        if state.loaded.is_none() {
            let read = match self.mode {
                CassetteMode::Record if !exists(&self.path) => Ok(HashMap::new()),
                _ => read_entries(&self.path, self.limit).map(|e| e.into_iter().collect()),
            };
            state.loaded = Some(read);
        }
        match &state.loaded {
            Some(Err(e)) => Err(e.clone()),
            _ => Ok(()),
        }
    }

    /// Writes what is left to write (record mode) and says whether every
    /// answer recorded was written: a recording that cannot be written
    /// fails the run.
    pub(crate) fn finish(&self) -> Result<(), CassetteError> {
        self.flush();
        let state = self.state();
        match &state.write_error {
            Some(e) if !state.pending.is_empty() => Err(CassetteError::File {
                path: self.shown(),
                reason: format!(
                    "{} answer(s) recorded in this run could not be written ({}); the file is as it was",
                    state.pending.len(),
                    match e {
                        CassetteError::File { reason, .. } => reason.clone(),
                        other => other.to_string(),
                    }
                ),
                source: None,
            }),
            _ => Ok(()),
        }
    }

    /// Writes what was recorded when the last write is a second old, so a
    /// long run that is stopped keeps most of its answers.
    pub(crate) fn flush_if_due(&self) {
        let due = {
            let state = self.state();
            !state.pending.is_empty() && state.last_write.is_none_or(|t| t.elapsed() >= WRITE_EVERY)
        };
        if due {
            self.flush();
        }
    }

    /// Writes what was recorded and not yet written (record mode), merged
    /// with the file's answers. A failure is said once, on stderr (what was
    /// not written stays pending: the next flush tries again).
    pub(crate) fn flush(&self) {
        if self.mode != CassetteMode::Record {
            return;
        }
        let mut state = self.state();
        state.last_write = Some(Instant::now());
        if state.pending.is_empty() {
            return;
        }
        match self.merge_into_file(&state.pending) {
            Ok(()) => state.pending.clear(),
            Err(e) => {
                if state.write_error.is_none() {
                    crate::notice::warn(&e.to_string());
                }
                state.write_error = Some(e);
            }
        }
    }

    fn merge_into_file(&self, new: &[Entry]) -> Result<(), CassetteError> {
        let io = |e: std::io::Error| CassetteError::File {
            path: self.shown(),
            reason: e.to_string(),
            source: Some(SharedError::new(e)),
        };
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        // Processes recording into one cassette (nextest) take turns.
        let mut lock_path = self.path.clone().into_os_string();
        lock_path.push(".lock");
        let _lock = eval_datasets::files::lock(Path::new(&lock_path)).map_err(io)?;
        let mut all: BTreeMap<String, Entry> = if exists(&self.path) {
            read_entries(&self.path, self.limit)?.into_iter().collect()
        } else {
            BTreeMap::new()
        };
        for entry in new {
            all.insert(entry.key.clone(), entry.clone());
        }
        let mut text = String::new();
        for entry in all.values() {
            text.push_str(
                &serde_json::to_string(entry).map_err(|e| CassetteError::File {
                    path: self.shown(),
                    reason: e.to_string(),
                    source: Some(SharedError::new(e)),
                })?,
            );
            text.push('\n');
        }
        eval_datasets::files::write_atomically(&self.path, text.as_bytes()).map_err(io)
    }
}

/// What run `run` of `sample` sends, its key, and who it is.
fn keyed(sample: &Sample, run: u32, agent: &dyn Agent) -> (Value, String, String) {
    let request = json!({
        "turns": sample.input.turns(),
        "agent_args": sample.agent_args,
        "tools": sample.tools,
        "agent": agent.cassette_settings(),
        "run": run,
    });
    let key = crate::model::parts_hash(&["agent", &request.to_string()]);
    let who = if run == 0 {
        format!("{} id {}", sample.source.file, sample.id)
    } else {
        format!("{} id {} (run {})", sample.source.file, sample.id, run + 1)
    };
    (request, key, who)
}

/// Which parts of what is sent differ from the recording.
fn changed(recorded: &Value, now: &Value) -> String {
    let parts = [
        ("turns", "the user turns"),
        ("agent_args", "`agent_args`"),
        ("tools", "the tool definitions"),
        ("agent", "the agent's settings"),
    ];
    let differ: Vec<String> = parts
        .iter()
        .filter(|(k, _)| recorded.get(k) != now.get(k))
        .map(|(k, what)| {
            format!(
                "{what} changed (recorded {}, now {})",
                crate::model::one_line(&recorded[k].to_string(), 80),
                crate::model::one_line(&now[k].to_string(), 80)
            )
        })
        .collect();
    if differ.is_empty() {
        "what it sends changed since the recording".into()
    } else {
        differ.join("; ")
    }
}

/// Whether there is something at `path` (a symlink to nothing counts:
/// reading it says what it is).
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The answers of the cassette at `path`, read as every input file is
/// (a regular file within `EVAL_MAX_DATASET_BYTES`, a BOM allowed), each
/// line checked.
fn read_entries(path: &Path, limit: u64) -> Result<Vec<(String, Entry)>, CassetteError> {
    let shown = path.display().to_string();
    let text = eval_datasets::files::read_text(path, limit).map_err(|e| CassetteError::File {
        path: shown.clone(),
        reason: match &e {
            eval_datasets::files::ReadError::Io(io)
                if io.kind() == std::io::ErrorKind::NotFound =>
            {
                "no such file (record one first: EVAL_AGENT_CASSETTE_MODE=record)".into()
            }
            other => other.to_string(),
        },
        source: Some(SharedError::new(e)),
    })?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| {
            serde_json::from_str::<Entry>(line)
                .map(|e| (e.key.clone(), e))
                .map_err(|e| CassetteError::File {
                    path: shown.clone(),
                    reason: format!("line {}: not a recorded answer: {e}", n + 1),
                    source: Some(SharedError::new(e)),
                })
        })
        .collect()
}
