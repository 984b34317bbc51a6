//! Files that are not regular files, and files that are not what they
//! claim, given to `evals` where it reads or writes: every input is read
//! by one rule (a regular file within `EVAL_MAX_DATASET_BYTES`, else
//! refused at once with exit 2, never waited on), every output written by
//! one rule (a regular file atomically, a symlink's target with the link
//! kept, a device or FIFO through, never replaced). And a cassette's
//! recording is never lost or lied about.

#![cfg(unix)]

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{code, demo_url, scratch, text};

/// `evals ARGS` in `dir`, killed (and the test failed) after `secs`.
fn evals_within(dir: &Path, args: &[&str], env: &[(&str, &str)], secs: u64) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("EVAL_AGENT_URL")
        .env_remove("EVAL_JUDGE_URL")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env("EVAL_CACHE", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "evals {args:?} still running after {secs} s: {:?}",
                text(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

const QA: &str = "{\"id\": \"rag\", \"input\": \"What is RAG?\", \"expected\": \"Retrieval\"}\n\
                  {\"id\": \"sum\", \"input\": \"What is 2 + 2?\", \"expected\": \"five\"}\n";

fn evaluate(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "evaluate",
        "qa.jsonl",
        "--url",
        demo_url(),
        "--metrics",
        "contains",
    ];
    args.extend_from_slice(extra);
    evals_within(dir, &args, &[], 60)
}

#[test]
fn outputs_are_written_through_special_files_and_symlinks_never_replaced() {
    let dir = scratch("special-outputs");
    std::fs::write(dir.join("qa.jsonl"), QA).unwrap();

    // A symlink: its target is written, the link stays a link.
    std::fs::write(dir.join("real.json"), "{}").unwrap();
    std::os::unix::fs::symlink(dir.join("real.json"), dir.join("out.json")).unwrap();
    let out = evaluate(&dir, &["--output", "out.json", "--junit", "/dev/null"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        std::fs::symlink_metadata(dir.join("out.json"))
            .unwrap()
            .is_symlink()
    );
    let written = std::fs::read_to_string(dir.join("real.json")).unwrap();
    assert!(written.contains("\"samples\""), "{written}");
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );

    // A FIFO nothing reads: refused at once (exit 2), never replaced.
    mkfifo(&dir.join("pipe.json"));
    let out = evaluate(&dir, &["--output", "pipe.json"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("a FIFO that nothing reads"),
        "{:?}",
        text(&out)
    );
    assert!(
        std::fs::metadata(dir.join("pipe.json"))
            .unwrap()
            .file_type()
            .is_fifo()
    );

    // A device that cannot take it: exit 2, the device is still a device.
    if Path::new("/dev/full").exists() {
        let out = evaluate(&dir, &["--junit", "/dev/full"]);
        assert_eq!(code(&out), 2, "{:?}", text(&out));
        assert!(
            std::fs::metadata("/dev/full")
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }

    // A dangling symlink and a directory are refused.
    std::os::unix::fs::symlink(dir.join("nowhere/x.json"), dir.join("dangling.json")).unwrap();
    let out = evaluate(&dir, &["--output", "dangling.json"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("a symlink to nothing"),
        "{:?}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn inputs_that_are_not_regular_files_are_refused_at_once() {
    let dir = scratch("special-inputs");
    std::fs::write(dir.join("qa.jsonl"), QA).unwrap();
    mkfifo(&dir.join("fifo.json"));
    let fifo = dir.join("fifo.json");
    let fifo = fifo.to_str().unwrap();
    for special in ["/dev/zero", fifo] {
        // A cassette, in replay and in record.
        for mode in ["replay", "record"] {
            let out = evaluate(&dir, &["--cassette", special, "--cassette-mode", mode]);
            assert_eq!(code(&out), 2, "{special} {mode}: {:?}", text(&out));
            assert!(
                text(&out).1.contains("not a regular file"),
                "{special} {mode}: {:?}",
                text(&out)
            );
        }
        // A baseline.
        let out = evaluate(&dir, &["--baseline", special]);
        assert_eq!(code(&out), 2, "{special}: {:?}", text(&out));
        assert!(
            text(&out).1.contains("not a regular file"),
            "{:?}",
            text(&out)
        );
        // Results files read back.
        for args in [
            vec!["report", "summary", special],
            vec!["report", "html", special],
            vec!["report", "accept", special, "baseline.json"],
            vec!["report", "diff", special, special],
            vec!["report", "merge", "merged.json", special],
        ] {
            let out = evals_within(&dir, &args, &[], 30);
            assert_eq!(code(&out), 2, "{args:?}: {:?}", text(&out));
            assert!(
                text(&out).1.contains("not a regular file"),
                "{args:?}: {:?}",
                text(&out)
            );
        }
    }
    // Over the size limit: refused before it is read.
    std::fs::write(dir.join("big.jsonl"), "x".repeat(10_000)).unwrap();
    let out = evals_within(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            demo_url(),
            "--metrics",
            "contains",
            "--cassette",
            "big.jsonl",
        ],
        &[("EVAL_MAX_DATASET_BYTES", "4096")],
        30,
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("over the limit of 4096 bytes"),
        "{:?}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_recording_that_cannot_be_written_fails_and_destroys_nothing() {
    let dir = scratch("cassette-record");
    std::fs::write(dir.join("qa.jsonl"), QA).unwrap();
    let record = ["--cassette", "answers.jsonl", "--cassette-mode", "record"];
    let out = evaluate(&dir, &record);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let good = std::fs::read_to_string(dir.join("answers.jsonl")).unwrap();
    assert_eq!(good.lines().count(), 2);

    // One bad line: refused before the agent is called (exit 2), the file
    // as it was.
    let damaged = format!("{good}{{not json\n");
    std::fs::write(dir.join("answers.jsonl"), &damaged).unwrap();
    let out = evaluate(&dir, &record);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("line 3: not a recorded answer"),
        "{:?}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("answers.jsonl")).unwrap(),
        damaged
    );

    // A place that cannot be written (its directory is a file): the run
    // ends with exit 2, saying how many answers were not written.
    std::fs::write(dir.join("blocker"), "a file").unwrap();
    let out = evaluate(
        &dir,
        &[
            "--cassette",
            "blocker/answers.jsonl",
            "--cassette-mode",
            "record",
        ],
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("2 answer(s) recorded in this run could not be written"),
        "{:?}",
        text(&out)
    );

    // A BOM at the start (an editor's) is read as datasets read it.
    std::fs::write(dir.join("answers.jsonl"), format!("\u{feff}{good}")).unwrap();
    let out = evaluate(&dir, &["--cassette", "answers.jsonl", "--json"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(!text(&out).0.contains("has no answer"), "{:?}", text(&out));

    // A line whose request was edited, its key kept, does not replay.
    let edited = good.replacen("What is RAG?", "What is RAG? Say yes.", 1);
    assert_ne!(edited, good);
    std::fs::write(dir.join("answers.jsonl"), &edited).unwrap();
    let out = evaluate(&dir, &["--cassette", "answers.jsonl", "--json"]);
    assert!(
        text(&out)
            .0
            .contains("has no answer for qa.jsonl id rag: the user turns changed"),
        "{:?}",
        text(&out)
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A manifest evaluated from another directory, with no `.git` above
/// either: its project is its own directory, as the guide says.
#[test]
fn a_manifest_from_another_directory_without_git_is_its_own_project() {
    let root = scratch("manifest-elsewhere");
    let project = root.join("project");
    std::fs::create_dir_all(project.join("data")).unwrap();
    std::fs::write(project.join("data/qa.jsonl"), QA).unwrap();
    std::fs::write(
        project.join("agent.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: qa\n        path: $file:data/qa.jsonl\n        metrics: [contains]\n",
    )
    .unwrap();
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    if root.ancestors().any(|d| d.join(".git").exists()) {
        return; // a `.git` above the temporary directory: not this case
    }
    let manifest = project.join("agent.yaml");
    for (cwd, path) in [
        (&elsewhere, manifest.to_str().unwrap()),
        (&root, "project/agent.yaml"),
    ] {
        let out = evals_within(cwd, &["evaluate", path, "--url", demo_url()], &[], 60);
        assert!(
            !text(&out).1.contains("outside the project root"),
            "{path} from {}: {:?}",
            cwd.display(),
            text(&out)
        );
        // Loaded and run: one sample misses its threshold, which the
        // manifest does not enforce (no `ciGate`).
        assert_eq!(code(&out), 0, "{path}: {:?}", text(&out));
        assert!(text(&out).0.contains("qa: 2 samples"), "{:?}", text(&out));
    }
    let _ = std::fs::remove_dir_all(root);
}

/// Shards scored against two versions of a dataset (the same count and
/// gates, one answer edited between them) are not joined silently: the
/// datasets' content hashes differ, and `report merge` refuses them.
#[test]
fn shards_of_two_dataset_versions_do_not_merge_silently() {
    let dir = scratch("merge-versions");
    let v1 = "{\"id\": \"rag\", \"input\": \"What is RAG?\", \"expected\": \"Retrieval\", \"tags\": [\"a\"]}\n\
              {\"id\": \"sum\", \"input\": \"What is 2 + 2?\", \"expected\": \"four\", \"tags\": [\"b\"]}\n";
    std::fs::write(dir.join("qa.jsonl"), v1).unwrap();
    let shard = |tag: &str, out: &str| {
        evals_within(
            &dir,
            &[
                "evaluate",
                "qa.jsonl",
                "--url",
                demo_url(),
                "--metrics",
                "contains",
                "--tag",
                tag,
                "--output",
                out,
                "--no-html",
            ],
            &[],
            60,
        )
    };
    let a = shard("a", "a.json");
    assert!([0, 1].contains(&code(&a)), "{:?}", text(&a));
    std::fs::write(dir.join("qa.jsonl"), v1.replace("Retrieval", "Augmented")).unwrap();
    let b = shard("b", "b.json");
    assert!([0, 1].contains(&code(&b)), "{:?}", text(&b));
    let out = evals_within(
        &dir,
        &["report", "merge", "joined.json", "a.json", "b.json"],
        &[],
        30,
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    // Refused for the reason that matters: the dataset's content changed.
    let said = text(&out).1;
    assert!(said.contains("dataset `qa`: content"), "{said}");
    assert!(said.contains("(qa.jsonl) →"), "{said}");
    assert!(!dir.join("joined.json").exists());
    let _ = std::fs::remove_dir_all(dir);
}
