//! external scorers through `evals evaluate --metric
//! 'exec:python3 score.py >= 0.8'`, against the demo agent, with real
//! Python processes: a score and its reason, the scorer's fingerprint in
//! the results' provenance (and `report diff` saying the script changed),
//! and scorers that hang, print garbage, crash (ANSI escapes on stderr) or
//! flood stdout failing only their own metric, with a message naming the
//! command. Sample text never reaches a shell.

use crate::common;

use common::*;
use eval_runtime::results::Results;

const DATASET: &str = r#"{"id": "paris", "input": "What is the capital of France?", "expected": "Paris"}
"#;

/// A scorer as the guide shows it: reads the payload (version 1) on stdin,
/// prints `{"score", "reason"}`.
const SCORE_PY: &str = r#"import json, sys

payload = json.load(sys.stdin)
assert payload["version"] == 1, payload["version"]
answer = payload["response"]["output"]
expected = payload["sample"]["expected"]
found = expected.lower() in answer.lower()
print(json.dumps({
    "score": 1.0 if found else 0.0,
    "reason": ("found " if found else "missing ") + repr(expected),
}))
"#;

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn run(dir: &std::path::Path, metrics: &str, out: &str) -> std::process::Output {
    evals(
        dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            demo_url(),
            "--metric",
            metrics,
            "--output",
            out,
            "--no-html",
        ],
    )
}

fn metric<'a>(r: &'a Results, name: &str) -> &'a eval_runtime::__cli::results::MetricRecord {
    r.samples
        .iter()
        .find(|s| s.id != "rome")
        .unwrap()
        .metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
}

#[test]
fn a_python_scorer_scores_through_the_metric_flag_and_its_script_is_fingerprinted() {
    let dir = scratch("exec-score");
    write(&dir, "qa.jsonl", DATASET);
    write(&dir, "score.py", SCORE_PY);
    let out = run(&dir, "exec:python3 score.py >= 0.8", "a.json");
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let r = Results::read(&dir.join("a.json")).unwrap();
    let m = metric(&r, "score");
    assert_eq!(m.score, Some(1.0), "{m:?}");
    assert_eq!(m.reason.as_deref(), Some("found 'Paris'"));
    assert_eq!((m.op.as_str(), m.threshold), (">=", 0.8));
    // The command and the script's content are in the provenance.
    let p = r.provenance.expect("provenance");
    let f = &p.scorers["score"];
    assert_eq!(f.command, "python3 score.py");
    assert_eq!(
        f.files.keys().collect::<Vec<_>>(),
        ["score.py"],
        "python3 is no file here"
    );
    let first = f.files["score.py"].clone();
    assert_eq!(first.len(), 64);

    // Editing the script changes the fingerprint, and a comparison says so.
    write(
        &dir,
        "score.py",
        &format!("{SCORE_PY}# stricter next week\n"),
    );
    let out = run(&dir, "exec:python3 score.py >= 0.8", "b.json");
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let r = Results::read(&dir.join("b.json")).unwrap();
    let second = &r.provenance.unwrap().scorers["score"].files["score.py"];
    assert_ne!(&first, second);
    let out = evals(&dir, &["report", "diff", "a.json", "b.json"]);
    let (stdout, stderr) = text(&out);
    assert!(
        format!("{stdout}{stderr}").contains("`score`: scorer python3 score.py (score.py "),
        "{stdout}{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_scorer_that_hangs_prints_garbage_crashes_or_floods_fails_only_its_metric() {
    let dir = scratch("exec-faults");
    // Each scorer scores `rome` and misbehaves on `paris`.
    write(
        &dir,
        "qa.jsonl",
        &format!(
            "{DATASET}{}\n",
            r#"{"id": "rome", "input": "What is the capital of Italy?", "expected": "Rome"}"#
        ),
    );
    let scorer = |name: &str, fault: &str| {
        let head = "import json, subprocess, sys, time\nif json.load(sys.stdin)['sample']['id'] == 'rome':\n    print(1)\n    sys.exit(0)\n";
        write(&dir, name, &format!("{head}{fault}"));
    };
    // It starts a child of its own, then hangs: both are killed.
    scorer(
        "hang.py",
        "child = subprocess.Popen(['sleep', '60'])\nopen('child.pid', 'w').write(str(child.pid))\ntime.sleep(60)\n",
    );
    scorer("garbage.py", "print('hello, I am not JSON')\n");
    scorer(
        "crash.py",
        "sys.stderr.write('\\x1b[31mboom\\x1b[0m\\nTraceback: it broke\\n')\nsys.exit(3)\n",
    );
    scorer("flood.py", "sys.stdout.write('x' * (2 * 1024 * 1024))\n");
    // The hung scorer's limit leaves a loaded machine time to start Python
    // (for `rome`, and for `paris` to write its child's pid before it hangs).
    let started = std::time::Instant::now();
    let out = run(
        &dir,
        "contains, exec(command = \"python3 hang.py\", timeout_s = 4) >= 0.5, exec:python3 garbage.py >= 0.5, exec:python3 crash.py >= 0.5, exec:python3 flood.py >= 0.5",
        "r.json",
    );
    let took = started.elapsed();
    let (stdout, stderr) = text(&out);
    assert_eq!(
        code(&out),
        1,
        "the sample fails, the run does not: {stdout}{stderr}"
    );
    let r = Results::read(&dir.join("r.json")).unwrap();
    let rome = r.samples.iter().find(|s| s.id == "rome").unwrap();
    assert!(
        rome.metrics
            .iter()
            .filter(|m| m.name != "contains")
            .all(|m| m.score == Some(1.0)),
        "the other sample is scored by every scorer: {:?}",
        rome.metrics
    );
    assert!(took.as_secs() < 30, "the hung scorer was stopped: {took:?}");
    assert_eq!(metric(&r, "contains").score, Some(1.0), "scored as ever");
    let error = |name: &str| {
        let m = metric(&r, name);
        assert_eq!(m.score, None, "{m:?}");
        m.error.clone().unwrap_or_default()
    };
    assert!(
        error("hang").starts_with("scorer `python3 hang.py` took longer than 4s and was stopped"),
        "{}",
        error("hang")
    );
    assert!(
        error("garbage").contains(
            "scorer `python3 garbage.py` printed no score: expected {\"score\": <number>, \"reason\": \"...\"}, {\"pass\": true} or a bare number, got `hello, I am not JSON`"
        ),
        "{}",
        error("garbage")
    );
    // The crash: its status, its stderr on one line with the escapes shown.
    assert_eq!(
        error("crash"),
        "scorer `python3 crash.py` failed (exit status 3); stderr: \"\\u{1b}[31mboom\\u{1b}[0m Traceback: it broke\""
    );
    assert!(
        !stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'),
        "no escape reaches the terminal: {stdout}{stderr}"
    );
    assert!(
        error("flood").starts_with(
            "scorer `python3 flood.py` printed more than 1048576 bytes on stdout and was stopped"
        ),
        "{}",
        error("flood")
    );
    // The hung scorer's own child went with it (killed with its group).
    let pid = std::fs::read_to_string(dir.join("child.pid")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let state = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    let running = state
        .rsplit_once(") ")
        .is_some_and(|(_, rest)| rest.starts_with('S') || rest.starts_with('R'));
    assert!(!running, "the scorer's child still runs: {state}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sample_text_and_the_command_never_reach_a_shell() {
    let dir = scratch("exec-no-shell");
    let input = "$(touch pwned1); rm -f keep `touch pwned2` && touch pwned3";
    write(
        &dir,
        "qa.jsonl",
        &format!(
            "{}\n",
            serde_json::json!({"id": "evil", "input": input, "expected": input})
        ),
    );
    write(&dir, "keep", "still here");
    write(
        &dir,
        "echo.py",
        "import json, sys\npayload = json.load(sys.stdin)\nprint(json.dumps({'score': 1, 'reason': json.dumps({'argv': sys.argv[1:], 'input': payload['sample']['input']})}))\n",
    );
    let out = run(
        &dir,
        r#"exec(command = "python3 echo.py '$(touch pwned4)' ; rm -f keep", name = "echo") >= 0.5"#,
        "r.json",
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let r = Results::read(&dir.join("r.json")).unwrap();
    let reason: serde_json::Value =
        serde_json::from_str(metric(&r, "echo").reason.as_deref().unwrap()).unwrap();
    // The words as written, one argument each; the sample's text as data.
    assert_eq!(
        reason["argv"],
        serde_json::json!(["$(touch pwned4)", ";", "rm", "-f", "keep"])
    );
    assert_eq!(reason["input"], input);
    for pwned in ["pwned1", "pwned2", "pwned3", "pwned4"] {
        assert!(!dir.join(pwned).exists(), "{pwned} was created by a shell");
    }
    assert!(dir.join("keep").exists(), "`rm -f keep` was run");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_guides_scorer_is_the_shipped_one_and_explains_its_score() {
    let guide = std::fs::read_to_string(repo().join("docs/src/metrics.md")).unwrap();
    let shipped = std::fs::read_to_string(repo().join("examples/scorers/cites_ticket.py")).unwrap();
    let start = guide
        .find("```python\n\"\"\"cites_ticket")
        .expect("the guide's scorer")
        + 10;
    let end = start + guide[start..].find("```\n").unwrap();
    assert_eq!(
        &guide[start..end],
        shipped,
        "the guide shows the shipped file"
    );

    let dir = scratch("exec-guide");
    write(
        &dir,
        "qa.jsonl",
        r#"{"id": "paris", "input": "What is the capital of France?", "metadata": {"tickets": [123]}}
"#,
    );
    let script = repo().join("examples/scorers/cites_ticket.py");
    let spec = format!("exec:python3 '{}' >= 1", script.display());
    let out = run(&dir, &spec, "r.json");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let r = Results::read(&dir.join("r.json")).unwrap();
    let m = metric(&r, "cites_ticket");
    assert_eq!(m.score, Some(0.0));
    assert_eq!(
        m.reason.as_deref(),
        Some("cites none of ['123'] (found [])")
    );
    let _ = std::fs::remove_dir_all(dir);
}
