//! Where the `evals` command reads from: `loaderRef`s only inside
//! `--loader-dir` and a manifest's datasets only inside its project (unless
//! `--allow-outside`), and dataset files only when they are regular files
//! within `EVAL_MAX_DATASET_BYTES`.

use crate::common;

use common::*;

#[cfg(unix)]
#[test]
fn loader_refs_stay_inside_the_loader_dir_unless_allowed() {
    let dir = scratch("loader-contain");
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(
        dir.join("secret.txt"),
        "Refunds are accepted within 30 days of purchase.",
    )
    .unwrap();
    // Inside the loader directory, but a symlink to a file outside it; and
    // a symlinked directory leading out.
    std::os::unix::fs::symlink(dir.join("secret.txt"), dir.join("docs/refunds.md")).unwrap();
    std::os::unix::fs::symlink(&dir, dir.join("docs/up")).unwrap();
    let dataset = |r: &str| {
        format!(
            r#"{{"version": "1", "id": "lc", "defaults": {{"topK": 2, "scopePrefix": "eval:lc:"}},
  "documents": [{{"sourceId": "eval:lc:refunds", "loaderRef": "{r}"}}],
  "queries": [{{"id": "q", "query": "When are refunds accepted?", "relevant": {{"sourceIds": ["eval:lc:refunds"]}}}}]}}"#
        )
    };
    let url = format!("{}/retrieval", demo_url().trim_end_matches('/'));
    for r in ["refunds.md", "up/secret.txt"] {
        std::fs::write(dir.join("lc.json"), dataset(r)).unwrap();
        let args = ["evaluate", "lc.json", "--url", &url, "--loader-dir", "docs"];
        let out = evals(&dir, &args);
        assert_eq!(code(&out), 2, "{r}: {:?}", text(&out));
        assert!(
            text(&out)
                .0
                .contains(&format!("loaderRef `{r}` (document `eval:lc:refunds`)")),
            "{r}: {:?}",
            text(&out)
        );
        // The explicit opt-out reads it.
        let mut allowed = args.to_vec();
        allowed.extend(["--allow-outside", "--json"]);
        let out = evals(&dir, &allowed);
        assert_eq!(code(&out), 0, "{r}: {:?}", text(&out));
        let v: serde_json::Value = serde_json::from_str(&text(&out).0).unwrap();
        assert_eq!(v["samples"][0]["verdict"], "pass", "{v}");
    }
}

#[test]
fn a_manifest_may_name_datasets_outside_its_project_only_when_allowed() {
    let dir = scratch("manifest-outside");
    std::fs::create_dir_all(dir.join("project/.git")).unwrap();
    std::fs::write(
        dir.join("shared.jsonl"),
        "{\"input\": \"What is the capital of France?\", \"expected\": \"Paris\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("project/agent.yaml"),
        "spec:\n  evaluation:\n    datasets:\n      - name: x\n        path: $file:../shared.jsonl\n        metrics: [contains]\n",
    )
    .unwrap();
    let project = dir.join("project");
    let out = evals(&project, &["evaluate", "agent.yaml", "--url", demo_url()]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("outside the project root"),
        "{:?}",
        text(&out)
    );
    let out = evals(
        &project,
        &[
            "evaluate",
            "agent.yaml",
            "--url",
            demo_url(),
            "--allow-outside",
        ],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
}

/// Runs `evals` with `args` in `dir`, killing it when it is still running
/// after `secs` (then: `None`).
fn evals_within(dir: &std::path::Path, args: &[&str], secs: u64) -> Option<(i32, String)> {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_evals"))
        .args(args)
        .current_dir(dir)
        .env("EVAL_CACHE", "off")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(secs) {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return Some((code(&out), text(&out).1));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn dataset_files_are_checked_before_they_are_read() {
    let dir = scratch("file-checks");
    let line = "{\"input\": \"What is the capital of France?\", \"expected\": \"Paris\"}\n";
    std::fs::write(dir.join("big.jsonl"), line.repeat(4)).unwrap();
    let size = line.len() * 4;
    let args = [
        "evaluate",
        "big.jsonl",
        "--metrics",
        "contains",
        "--url",
        demo_url(),
    ];
    let limit = (size - 1).to_string();
    let out = evals_with(&dir, &args, &[("EVAL_MAX_DATASET_BYTES", &limit)]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains(&format!(
            "error: big.jsonl: dataset is too large: {size} bytes, over the limit of {limit} bytes (EVAL_MAX_DATASET_BYTES)"
        )),
        "{:?}",
        text(&out)
    );
    let out = evals_with(
        &dir,
        &args,
        &[("EVAL_MAX_DATASET_BYTES", &size.to_string())],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    // lint applies the same limit.
    let out = evals_with(
        &dir,
        &["lint", "big.jsonl"],
        &[("EVAL_MAX_DATASET_BYTES", &limit)],
    );
    assert!(
        text(&out).0.contains("dataset is too large"),
        "{:?}",
        text(&out)
    );

    // A FIFO is refused, not waited on.
    #[cfg(unix)]
    {
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("pipe.jsonl"))
            .status()
            .unwrap();
        assert!(made.success());
        for args in [
            &["lint", "pipe.jsonl"][..],
            &[
                "evaluate",
                "pipe.jsonl",
                "--metrics",
                "contains",
                "--url",
                "http://127.0.0.1:9",
            ],
            &["stats", "pipe.jsonl"],
        ] {
            let (code, stderr_or_out) = evals_within(&dir, args, 20)
                .unwrap_or_else(|| panic!("`evals {}` blocked on a FIFO", args.join(" ")));
            assert_ne!(code, 0, "{args:?}");
            let _ = stderr_or_out;
        }
        let out = evals(&dir, &["stats", "pipe.jsonl"]);
        assert!(
            text(&out)
                .1
                .contains("pipe.jsonl: cannot read dataset: not a regular file (a FIFO)"),
            "{:?}",
            text(&out)
        );
    }
}

/// `evals evaluate FILE`: an existing file is that file, whatever its name
/// holds; a name that matches no file is a pattern; `glob:` asks for one.
#[test]
fn an_existing_dataset_path_is_literal_and_patterns_are_asked_for() {
    let dir = scratch("literal-paths");
    let line = "{\"input\": \"What is 2+2?\", \"expected\": \"4\"}\n";
    std::fs::write(dir.join("set[12].jsonl"), line.repeat(3)).unwrap();
    let estimate = |file: &str| {
        let out = evals(
            &dir,
            &["evaluate", file, "--metrics", "contains", "--estimate"],
        );
        let (stdout, stderr) = text(&out);
        (code(&out), format!("{stdout}{stderr}"))
    };
    // Alone: the old code said it "matches no dataset file".
    let (c, said) = estimate("set[12].jsonl");
    assert_eq!(c, 0, "{said}");
    assert!(said.contains("1 dataset(s), 3 sample(s)"), "{said}");
    // Beside a file the same text matches as a pattern: still itself
    // (the old code evaluated set1.jsonl).
    std::fs::write(dir.join("set1.jsonl"), line).unwrap();
    std::fs::write(dir.join("set2.jsonl"), line).unwrap();
    let (c, said) = estimate("set[12].jsonl");
    assert_eq!(c, 0, "{said}");
    assert!(said.contains("1 dataset(s), 3 sample(s)"), "{said}");
    // Asked for: the pattern.
    let (c, said) = estimate("glob:set[12].jsonl");
    assert_eq!(c, 0, "{said}");
    assert!(said.contains("2 dataset(s), 2 sample(s)"), "{said}");
    // Naming no file: a pattern, and when it matches nothing both readings
    // are said.
    let (c, said) = estimate("set[3-9].jsonl");
    assert_eq!(c, 2, "{said}");
    assert!(
        said.contains(
            "`set[3-9].jsonl`: no such file, and read as a pattern it matches no dataset file"
        ),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
