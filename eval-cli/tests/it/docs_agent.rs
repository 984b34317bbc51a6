//! The README's and the guide's examples that talk to an agent or a judge
//! (`evals evaluate`, `evals calibrate`, `evals generate`, `evals create`)
//! run as written against the demo
//! agent and the scripted judge, in a scratch copy of `examples/`: an
//! example's `--url http://127.0.0.1:8080…` is pointed at the demo agent
//! (same path), `EVAL_AGENT_URL`, `EVAL_JUDGE_URL` and `EVAL_EMBED_URL` at
//! the running servers. Each must run (exit 0, or 1 for a verdict that
//! failed), never refuse to start (exit 2) or crash; every file it reads
//! must be shipped, except the few a reader makes first (a baseline).
//!
//! Examples holding a placeholder (`--url ...`, `FILE`) are checked for
//! their flags only, by `docs::shell_examples_name_real_subcommands_flags_and_targets`.

use std::process::Command;

use crate::docs::{Cmd, runnable, scratch, shell_commands};

/// Files an example may name that the reader makes first (the docs say how).
const MADE_BY_THE_READER: &[&str] = &["evals/baseline.json", "evals/generated.jsonl"];

/// Flags whose value is a file the command reads.
const READ_FLAGS: &[&str] = &[
    "--tools",
    "--baseline",
    "--cassette",
    "--queries",
    "--ground-truth",
    "--traces",
    "--corpus",
];

/// `--url` of an example pointed at `agent` (the example's path kept).
fn with_demo_url(args: &[String], agent: &str) -> Vec<String> {
    let mut out = args.to_vec();
    for i in 0..out.len() {
        if out[i] == "--url"
            && let Some(url) = out.get(i + 1)
        {
            let path = url
                .split_once("://")
                .and_then(|(_, rest)| rest.find('/').map(|p| rest[p..].to_string()))
                .unwrap_or_default();
            out[i + 1] = format!("{agent}{path}");
        }
    }
    out
}

/// The files `args` reads: the positional arguments, and the values of
/// [`READ_FLAGS`].
fn inputs(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let a = &args[i];
        if READ_FLAGS.contains(&a.as_str()) {
            out.extend(args.get(i + 1).cloned());
            i += 2;
        } else if a.starts_with('-') {
            // A flag's value follows unless the flag is a switch; the values
            // this test cares about are named in READ_FLAGS.
            i += if args.get(i + 1).is_some_and(|v| !v.starts_with('-')) && takes_value(a) {
                2
            } else {
                1
            };
        } else {
            out.push(a.clone());
            i += 1;
        }
    }
    out
}

/// Whether `flag` of `evals evaluate`/`calibrate` takes a value.
fn takes_value(flag: &str) -> bool {
    !matches!(
        flag,
        "--stream"
            | "--estimate"
            | "--json"
            | "--no-html"
            | "--ci-gate"
            | "--yes"
            | "--allow-outside"
            | "--fix"
            | "--fresh"
            | "--no-upload"
    )
}

#[test]
fn agent_examples_run_against_the_demo_agent_and_the_scripted_judge() {
    let agent = eval_examples::demo::spawn(eval_examples::demo::DemoConfig::default())
        .expect("start the demo agent");
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default())
        .expect("start the scripted judge");
    let judge_url = format!("{}/v1", judge.url());
    let mut ran = Vec::new();
    let mut problems = Vec::new();
    let examples: Vec<Cmd> = shell_commands()
        .into_iter()
        .filter(|c| c.words[0].text == "evals")
        .collect();
    for cmd in examples {
        let Some(args) = runnable(&cmd) else { continue };
        if !matches!(
            args.first().map(String::as_str),
            Some("evaluate" | "calibrate" | "generate" | "create")
        ) {
            continue;
        }
        let args = with_demo_url(&args, &agent.url());
        let dir = scratch(1000 + ran.len() + problems.len());
        let missing: Vec<String> = inputs(&args)
            .into_iter()
            .filter(|p| !dir.join(p).exists())
            .collect();
        if !missing.is_empty() {
            if !missing
                .iter()
                .all(|m| MADE_BY_THE_READER.contains(&m.as_str()))
            {
                problems.push(format!(
                    "{}: `evals {}` reads {missing:?}, which the repository does not ship",
                    cmd.at,
                    args.join(" ")
                ));
            }
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        }
        let out = Command::new(env!("CARGO_BIN_EXE_evals"))
            .args(&args)
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .env("EVAL_CACHE", "off")
            .env("EVAL_AGENT_URL", agent.url())
            .env("EVAL_JUDGE_URL", &judge_url)
            .env("EVAL_EMBED_URL", &judge_url)
            .env_remove("EVAL_JUDGE_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .output()
            .expect("run evals");
        let code = out.status.code().unwrap_or(-1);
        if !matches!(code, 0 | 1) {
            problems.push(format!(
                "{}: `evals {}` exited {code}:\n{}{}",
                cmd.at,
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        ran.push(format!(
            "{}: evals {} (exit {code})",
            cmd.at,
            args.join(" ")
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!("ran {} example(s):\n  {}", ran.len(), ran.join("\n  "));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for sub in ["evaluate", "calibrate", "generate", "create"] {
        assert!(
            ran.iter().any(|r| r.contains(&format!("evals {sub} "))),
            "no runnable `evals {sub}` example was found in the docs: {ran:?}"
        );
    }
    assert!(
        ran.iter()
            .any(|r| r.contains("--tools examples/tools.json")),
        "the tools example ran: {ran:?}"
    );
}
