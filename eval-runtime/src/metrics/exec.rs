//! external scorers: a metric scored by a command the user
//! gives (`exec(command = "python3 score.py") >= 0.8`, or
//! `exec:python3 score.py >= 0.8` in a list of specs).
//!
//! How a scorer runs, for each sample it scores:
//!
//! - The command was split into words once, with shell quoting rules, when
//!   the spec was read; it is started **without a shell**, in the plan's
//!   base directory (the crate's for the attribute, the manifest's, else
//!   the working directory), in a process group of its own, with the
//!   environment of the run. Sample data only ever reaches its stdin.
//! - Its stdin is one JSON object, the versioned contract
//!   [`PAYLOAD_VERSION`] (see [`payload`] and the guide's "Metrics" page).
//! - Its stdout is the score: `{"score": 0.9, "reason": "..."}`, a bare
//!   number, or `{"pass": true}` (the range's top; `false` its bottom). At
//!   most [`MAX_STDOUT`] bytes are read; the last [`STDERR_TAIL`] bytes of
//!   stderr are kept for the message.
//! - It must exit 0 within `timeout_s` (default 30 s): else its whole
//!   process group is killed. A score outside `min..max` is an error.
//! - At most as many scorers run at once as samples are in flight
//!   (`EVAL_CONCURRENCY`).
//!
//! Whatever goes wrong is a [`ScorerError`]: that metric's error on that
//! sample, never the run's.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use eval_datasets::Sample;
use eval_datasets::metric::{ExecMetric, MetricKind, MetricSpec};
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::agent::Response;
use crate::model::{MetricResult, ScorerError, one_line};
use crate::services::Services;

/// The version of the JSON a scorer reads on stdin.
pub(crate) const PAYLOAD_VERSION: u32 = 1;
/// The most a scorer may print on stdout, bytes.
pub(crate) const MAX_STDOUT: usize = 1024 * 1024;
/// How much of a scorer's stderr is kept for its error message (the end).
pub(crate) const STDERR_TAIL: usize = 4096;
/// How much of stdout, or of a reason, a message or result shows, in characters.
const SHOWN_CHARS: usize = 300;

/// What a scorer reads on stdin (version [`PAYLOAD_VERSION`]).
#[derive(Serialize)]
struct Payload<'a> {
    version: u32,
    metric: MetricPart<'a>,
    sample: SamplePart<'a>,
    response: ResponsePart<'a>,
}

#[derive(Serialize)]
struct MetricPart<'a> {
    name: &'a str,
    op: String,
    threshold: f64,
    min: f64,
    max: f64,
}

#[derive(Serialize)]
struct SamplePart<'a> {
    id: &'a str,
    /// The prompt of a one-prompt sample; `null` for a conversation.
    input: Option<&'a str>,
    /// The user turns (one for a single prompt).
    turns: &'a [String],
    /// The expected answer: a string, one per turn (a list), or `null`.
    expected: Option<&'a eval_datasets::Expected>,
    accepted_answers: &'a [String],
    context: &'a [String],
    reference_contexts: &'a [String],
    tags: &'a [String],
    metadata: &'a serde_json::Map<String, serde_json::Value>,
    expected_tools: Option<&'a [eval_datasets::ToolCall]>,
}

#[derive(Serialize)]
struct ResponsePart<'a> {
    output: &'a str,
    turn_outputs: &'a [String],
    context: &'a [String],
    retrieved: &'a [String],
    tool_calls: &'a [eval_datasets::ToolCall],
    trajectory: Option<&'a crate::model::Trajectory>,
    usage: &'a crate::model::Usage,
    model: Option<&'a str>,
}

/// The JSON a scorer of `spec` reads for `sample` answered with `response`.
pub(crate) fn payload(spec: &MetricSpec, sample: &Sample, response: &Response) -> Vec<u8> {
    let (min, max) = spec.range();
    let payload = Payload {
        version: PAYLOAD_VERSION,
        metric: MetricPart {
            name: &spec.name,
            op: spec.op.to_string(),
            threshold: spec.threshold,
            min,
            max,
        },
        sample: SamplePart {
            id: &sample.id,
            input: match &sample.input {
                eval_datasets::Input::Text(t) => Some(t),
                _ => None,
            },
            turns: sample.input.turns(),
            expected: sample.expected.as_ref(),
            accepted_answers: &sample.accepted_answers,
            context: &sample.context,
            reference_contexts: &sample.reference_contexts,
            tags: &sample.tags,
            metadata: &sample.metadata,
            expected_tools: sample.expected_tools.as_deref(),
        },
        response: ResponsePart {
            output: &response.output,
            turn_outputs: &response.turn_outputs,
            context: &response.context,
            retrieved: &response.retrieved,
            tool_calls: &response.tool_calls,
            trajectory: response.trajectory.as_ref(),
            usage: &response.usage,
            model: response.model.as_deref(),
        },
    };
    // Plain data with string keys: serializing cannot fail.
    serde_json::to_vec(&payload).unwrap_or_default()
}

/// The result of the external scorer `spec` (whose kind is `m`) for `sample`.
pub(crate) async fn score(
    spec: &MetricSpec,
    m: &ExecMetric,
    sample: &Sample,
    response: &Response,
    services: &Services,
) -> MetricResult {
    let dir = m.dir.clone().unwrap_or_else(|| services.base_dir.clone());
    let input = payload(spec, sample, response);
    // Closed only when the run ends: a permit is always had in the end.
    let _permit = services.scorer_permits.acquire().await.ok();
    match run(m, &dir, &input).await {
        Ok((score, reason)) => {
            MetricResult::of(spec, Ok(score)).with_reason(reason.map(|r| one_line(&r, SHOWN_CHARS)))
        }
        Err(e) => MetricResult::of(spec, Err(e.into())),
    }
}

/// Runs the scorer `m` in `dir` on `input`: its score and reason.
pub(crate) async fn run(
    m: &ExecMetric,
    dir: &Path,
    input: &[u8],
) -> Result<(f64, Option<String>), ScorerError> {
    let command = || m.command.clone();
    let mut cmd = tokio::process::Command::new(program(&m.argv[0], dir));
    cmd.args(&m.argv[1..])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let mut child = cmd.spawn().map_err(|e| ScorerError::Spawn {
        command: command(),
        dir: dir.display().to_string(),
        error: e.to_string(),
    })?;
    let pid = child.id();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let mut out = Vec::new();
    let mut tail = Vec::new();
    let mut overflow = false;
    let timeout = Duration::from_secs_f64(m.timeout_s);
    let talk = async {
        let write = async {
            if let Some(mut stdin) = stdin {
                // A scorer that does not read its stdin closes it: not an error.
                let _ = stdin.write_all(input).await;
                let _ = stdin.shutdown().await;
            }
        };
        let read_out = async {
            if let Some(s) = stdout {
                overflow = read_bounded(s, &mut out, MAX_STDOUT).await;
                if overflow {
                    kill_group(pid);
                }
            }
        };
        let read_err = async {
            if let Some(s) = stderr {
                read_tail(s, &mut tail, STDERR_TAIL).await;
            }
        };
        tokio::join!(write, read_out, read_err);
        child.wait().await
    };
    let status = tokio::time::timeout(timeout, talk).await;
    let stderr = || one_line(String::from_utf8_lossy(&tail).trim(), STDERR_TAIL);
    let status = match status {
        Err(_) => {
            kill_group(pid);
            let _ = child.kill().await;
            return Err(ScorerError::Timeout {
                command: command(),
                timeout_s: m.timeout_s,
                stderr: stderr(),
            });
        }
        Ok(Err(e)) => {
            return Err(ScorerError::Io {
                command: command(),
                error: e.to_string(),
            });
        }
        Ok(Ok(status)) => status,
    };
    if overflow {
        return Err(ScorerError::TooMuchOutput {
            command: command(),
            limit: MAX_STDOUT,
        });
    }
    if !status.success() {
        return Err(ScorerError::Failed {
            command: command(),
            status: status_text(status),
            stderr: stderr(),
        });
    }
    let text = String::from_utf8_lossy(&out);
    let (score, reason) =
        read_score(&text, m.min, m.max).ok_or_else(|| ScorerError::NotAScore {
            command: command(),
            stdout: one_line(text.trim(), SHOWN_CHARS),
            stderr: stderr(),
        })?;
    if !(m.min..=m.max).contains(&score) {
        return Err(ScorerError::OutOfRange {
            command: command(),
            score,
            min: m.min,
            max: m.max,
        });
    }
    Ok((score, reason))
}

/// The program to start: a relative path with a `/` (`./score.sh`) taken
/// from `dir`, which the child's working directory does not do everywhere.
fn program(word: &str, dir: &Path) -> PathBuf {
    let path = Path::new(word);
    if path.is_relative() && word.contains('/') {
        dir.join(path)
    } else {
        path.to_path_buf()
    }
}

/// A scorer's stdout read as a score: `{"score": n, "reason": "..."}`, a
/// bare number, or `{"pass": bool}` (`max` or `min`). `None`: not a score
/// (or not a finite one).
fn read_score(text: &str, min: f64, max: f64) -> Option<(f64, Option<String>)> {
    let value: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    let (score, reason) = match &value {
        serde_json::Value::Number(n) => (n.as_f64()?, None),
        serde_json::Value::Object(o) => {
            let reason = o.get("reason").and_then(|r| match r {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Null => None,
                other => Some(other.to_string()),
            });
            let score = match (o.get("score"), o.get("pass")) {
                (Some(s), _) => s.as_f64()?,
                (None, Some(serde_json::Value::Bool(pass))) => {
                    if *pass {
                        max
                    } else {
                        min
                    }
                }
                _ => return None,
            };
            (score, reason)
        }
        _ => return None,
    };
    score.is_finite().then_some((score, reason))
}

/// Reads `from` into `out` up to `limit` bytes; `true` when it had more
/// (reading stops there).
async fn read_bounded(mut from: impl AsyncRead + Unpin, out: &mut Vec<u8>, limit: usize) -> bool {
    let mut buf = [0u8; 8192];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => {
                if out.len() + n > limit {
                    return true;
                }
                out.extend_from_slice(&buf[..n]);
            }
        }
    }
}

/// Reads `from` to its end, keeping its last `keep` bytes in `tail`.
async fn read_tail(mut from: impl AsyncRead + Unpin, tail: &mut Vec<u8>, keep: usize) {
    let mut buf = [0u8; 8192];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > keep {
                    tail.drain(..tail.len() - keep);
                }
            }
        }
    }
}

/// Kills the process group the scorer leads (it and what it started).
fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// `exit status 2`, `killed by signal 9`.
fn status_text(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => status.to_string(),
    }
}

/// What an external scorer's score depends on besides the answer: its
/// command, and the content of every word of it that names a file (the
/// script), for the run's provenance. `None` for other metrics.
pub(crate) fn fingerprint(
    spec: &MetricSpec,
    base: &Path,
) -> Option<crate::model::ScorerFingerprint> {
    let MetricKind::Exec(m) = &spec.kind else {
        return None;
    };
    let dir = m.dir.as_deref().unwrap_or(base);
    let mut files = std::collections::BTreeMap::new();
    for word in &m.argv {
        let path = dir.join(word);
        // Only regular files, and not the interpreter found on the PATH.
        if path.is_file()
            && let Ok(bytes) = std::fs::read(&path)
        {
            use sha2::Digest as _;
            files.insert(
                word.clone(),
                crate::model::hex(&sha2::Sha256::digest(&bytes)),
            );
        }
    }
    Some(crate::model::ScorerFingerprint {
        command: m.command.clone(),
        files,
    })
}

/// `spec`, an external scorer, set to run in `base` (a plan's base
/// directory) unless it has a directory already.
pub(crate) fn settle_dir(spec: &mut MetricSpec, base: &Path) {
    if let MetricKind::Exec(m) = &mut spec.kind
        && m.dir.is_none()
    {
        m.dir = Some(base.to_path_buf());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_is_read_as_a_score_in_three_forms() {
        assert_eq!(
            read_score(r#"{"score": 0.25, "reason": "no ticket"}"#, 0.0, 1.0),
            Some((0.25, Some("no ticket".into())))
        );
        assert_eq!(read_score(" 0.5\n", 0.0, 1.0), Some((0.5, None)));
        assert_eq!(read_score(r#"{"pass": true}"#, 0.0, 5.0), Some((5.0, None)));
        assert_eq!(
            read_score(r#"{"pass": false}"#, -1.0, 1.0),
            Some((-1.0, None))
        );
        for bad in [
            "",
            "hello",
            "[1]",
            r#"{"score": "high"}"#,
            r#"{"reason": "x"}"#,
            "1 2",
        ] {
            assert_eq!(read_score(bad, 0.0, 1.0), None, "{bad}");
        }
    }

    /// The contract of version 1, as the guide's "External scorers" shows
    /// it: these keys, these types.
    #[test]
    fn the_payload_is_the_documented_version_1() {
        let spec = eval_datasets::metric::parse_specs("exec:python3 s.py >= 0.8")
            .unwrap()
            .remove(0);
        let mut sample = Sample::new("Can I get a refund?");
        sample.id = "refund-1".into();
        sample.expected = Some(eval_datasets::Expected::Text("Yes".into()));
        sample.tags = vec!["billing".into()];
        let response = Response::new("Yes, see ticket #123.");
        let v: serde_json::Value =
            serde_json::from_slice(&payload(&spec, &sample, &response)).unwrap();
        let keys = |v: &serde_json::Value| -> Vec<String> {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&v), ["metric", "response", "sample", "version"]);
        assert_eq!(v["version"], 1);
        assert_eq!(
            v["metric"],
            serde_json::json!({"name": "s", "op": ">=", "threshold": 0.8, "min": 0.0, "max": 1.0})
        );
        assert_eq!(
            keys(&v["sample"]),
            [
                "accepted_answers",
                "context",
                "expected",
                "expected_tools",
                "id",
                "input",
                "metadata",
                "reference_contexts",
                "tags",
                "turns"
            ]
        );
        assert_eq!(v["sample"]["input"], "Can I get a refund?");
        assert_eq!(
            v["sample"]["turns"],
            serde_json::json!(["Can I get a refund?"])
        );
        assert_eq!(v["sample"]["expected"], "Yes");
        assert_eq!(
            keys(&v["response"]),
            [
                "context",
                "model",
                "output",
                "retrieved",
                "tool_calls",
                "trajectory",
                "turn_outputs",
                "usage"
            ]
        );
        assert_eq!(v["response"]["output"], "Yes, see ticket #123.");
        // A conversation: no `input`, its turns, one expected answer per turn.
        let mut talk = Sample::new("").with_turns(["a", "b"]);
        talk.expected = Some(eval_datasets::Expected::PerTurn(vec![
            "x".into(),
            "y".into(),
        ]));
        let v: serde_json::Value =
            serde_json::from_slice(&payload(&spec, &talk, &response)).unwrap();
        assert_eq!(v["sample"]["input"], serde_json::Value::Null);
        assert_eq!(v["sample"]["expected"], serde_json::json!(["x", "y"]));
    }

    #[test]
    fn a_relative_program_with_a_slash_starts_from_the_directory() {
        let dir = Path::new("/data/project");
        assert_eq!(program("./score.sh", dir), dir.join("./score.sh"));
        assert_eq!(program("python3", dir), PathBuf::from("python3"));
        assert_eq!(program("/usr/bin/env", dir), PathBuf::from("/usr/bin/env"));
    }
}
