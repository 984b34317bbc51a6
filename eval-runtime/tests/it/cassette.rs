//! Record and replay of agent answers (`EVAL_AGENT_CASSETTE`): a recorded
//! run replays without calling the agent, to the same verdicts; a sample
//! whose request changed fails naming what changed; the file never holds
//! the key.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use eval_runtime::results::{Results, Verdict};
use eval_runtime::{Config, Harness, Response, Sample};

const KEY: &str = "sk-cassette-secret-0123456789";

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-cassette-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn dataset(questions: &[&str]) -> String {
    questions
        .iter()
        .enumerate()
        .map(|(i, q)| {
            format!("{{\"input\": \"{q}\", \"expected\": \"answer {i}\", \"agent_args\": {{\"top_k\": 2}}}}\n")
        })
        .collect()
}

fn config(cassette: &Path, mode: &str) -> Config {
    let cassette = cassette.to_string_lossy().into_owned();
    let mode = mode.to_string();
    Config::from_vars(
        move |var| {
            Ok(match var {
                "EVAL_AGENT_CASSETTE" => Some(cassette.clone()),
                "EVAL_AGENT_CASSETTE_MODE" => Some(mode.clone()),
                "EVAL_AGENT_API_KEY" => Some(KEY.to_string()),
                _ => None,
            })
        },
        &[],
    )
    .unwrap()
}

/// Runs `qa.jsonl` of `dir` with `config`; returns the results and the
/// agent's calls. The agent answers `answer <n>` for `q<n>`, echoing the
/// key, after 20 ms.
fn run(dir: &Path, config: Config) -> (Results, usize) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let out = Harness::new()
        .base_dir(dir)
        .results_file(dir.join("results.json"))
        .config(config)
        .dataset("qa.jsonl", "contains")
        .agent_fn(async move |s: &Sample| {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            let n = s.input.last().trim_start_matches('q').to_string();
            Response::new(format!("answer {n} (key {KEY})")).with_tokens(7, 3)
        })
        .evaluate(crate::common::harness_args(&["cassette", "-q"]));
    let results = Results::read(out.results_path.as_ref().unwrap()).unwrap();
    (results, calls.load(Ordering::SeqCst))
}

#[test]
fn a_recorded_run_replays_without_the_agent_and_a_changed_sample_misses() {
    let dir = scratch("replay");
    let cassette = dir.join("answers.cassette.jsonl");
    // q2 is answered "answer 2" but expected "answer 2": all pass but q9,
    // expected "answer 3".
    std::fs::write(dir.join("qa.jsonl"), dataset(&["q0", "q1", "q2", "q9"])).unwrap();

    let (recorded, calls) = run(&dir, config(&cassette, "record"));
    assert_eq!(calls, 4);
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(!text.contains(&KEY[..12]), "the key is masked: {text}");
    assert!(text.contains("<redacted>"));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "written atomically");

    let (replayed, calls) = run(&dir, config(&cassette, "replay"));
    assert_eq!(calls, 0, "a replay never calls the agent");
    let verdicts = |r: &Results| -> Vec<(String, Verdict)> {
        r.samples
            .iter()
            .map(|s| (s.id.clone(), s.verdict))
            .collect()
    };
    assert_eq!(verdicts(&replayed), verdicts(&recorded));
    assert_eq!(verdicts(&replayed)[3].1, Verdict::Fail);
    for (a, b) in recorded.samples.iter().zip(&replayed.samples) {
        // The agent's recorded time (20 ms and more), not the replay's.
        assert!(b.latency_ms >= 20.0, "{}", b.latency_ms);
        assert!((a.latency_ms - b.latency_ms).abs() < 5.0, "{a:?} {b:?}");
        assert_eq!((b.agent.calls, b.agent.cache_hits), (0, 1));
        assert_eq!(b.agent.prompt_tokens, 7);
    }

    // q1's input changed, and a new sample was never recorded.
    std::fs::write(
        dir.join("qa.jsonl"),
        dataset(&["q0", "q1 again", "q2", "q9", "q4"]),
    )
    .unwrap();
    let (missed, calls) = run(&dir, config(&cassette, "replay"));
    assert_eq!(calls, 0);
    let error = |id: &str| {
        missed
            .samples
            .iter()
            .find(|s| s.id == id)
            .and_then(|s| s.error.clone())
            .unwrap_or_default()
    };
    assert_eq!(error("0"), "");
    assert!(
        error("1").contains("id 1: the user turns changed (recorded [\"q1\"], now [\"q1 again\"])"),
        "{}",
        error("1")
    );
    assert!(
        error("4").contains("id 4: it was not recorded"),
        "{}",
        error("4")
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn replaying_without_a_cassette_file_is_refused_before_any_call() {
    let dir = scratch("missing");
    std::fs::write(dir.join("qa.jsonl"), dataset(&["q0"])).unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("results.json"))
        .config(config(&dir.join("none.jsonl"), "replay"))
        .dataset("qa.jsonl", "contains")
        .agent_fn(async move |_: &Sample| {
            counted.fetch_add(1, Ordering::SeqCst);
            Response::new("answer")
        })
        .evaluate(crate::common::harness_args(&["cassette", "-q"]));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let error = out.error.map(|e| e.to_string()).unwrap_or_default();
    assert!(
        error.contains(
            "none.jsonl: no such file (record one first: EVAL_AGENT_CASSETTE_MODE=record)"
        ),
        "{error}"
    );
    assert!(
        !dir.join("results.json").exists(),
        "nothing ran, nothing is claimed"
    );
    let _ = std::fs::remove_dir_all(dir);
}
