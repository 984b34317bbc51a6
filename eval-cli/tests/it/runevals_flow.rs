//! Seed 003's flow of `evals evaluate` with no file: discovery, the starter
//! offered on a terminal ("Create a starter evals file with sample
//! prompts? (Y/n)", driven through a pseudo-terminal), `.env.local` and
//! `.env.local.user` for the agent's settings (the environment wins; values
//! never printed), and reports under `.evals/results/`.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{code, demo_url, evals, evals_with, scratch, text};
use rexpect::process::WaitStatus;

/// `evals evaluate` in `dir`, in a pseudo-terminal, the demo agent named
/// by a flag.
fn in_a_terminal(dir: &Path) -> rexpect::session::PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.args(["evaluate", "--url", demo_url()])
        .current_dir(dir)
        .env("TERM", "xterm")
        .env("NO_COLOR", "1")
        .env("EVAL_CACHE", "off")
        .env_remove("EVAL_AGENT_URL")
        .env_remove("EVAL_JUDGE_URL");
    rexpect::session::spawn_command(cmd, Some(30_000)).expect("start in a pty")
}

#[test]
fn with_no_evals_file_a_terminal_is_offered_the_starter() {
    // Yes: the starter is written and the run goes on with it.
    let dir = scratch("starter-yes");
    let mut p = in_a_terminal(&dir);
    p.exp_string("No prompts file found in current directory or ./evals/")
        .expect("says what is missing");
    p.exp_string("Create a starter evals file with sample prompts? (Y/n): ")
        .expect("the offer");
    p.send_line("").expect("Enter: the default, yes");
    p.exp_string("created evals/evals.json").expect("says so");
    p.exp_string("evals: 3 samples, 3 passed")
        .expect("the run went on");
    let rest = p.exp_eof().expect("the run ends");
    let status = p.process().wait().expect("its status");
    assert!(
        matches!(status, WaitStatus::Exited(_, 0)),
        "{status:?}: {rest}"
    );
    assert!(dir.join("evals/evals.json").is_file());
    assert!(
        dir.join(".evals/results/evals.json").is_file(),
        "seed 003's results folder"
    );

    // No: nothing is written, and the command says how to get one later.
    let dir = scratch("starter-no");
    let mut p = in_a_terminal(&dir);
    p.exp_string("(Y/n): ").expect("the offer");
    p.send_line("n").expect("answer no");
    let rest = p.exp_eof().expect("the run ends");
    assert!(
        rest.contains("none was created (`evals init` writes the starter"),
        "{rest}"
    );
    let status = p.process().wait().expect("its status");
    assert!(matches!(status, WaitStatus::Exited(_, 2)), "{status:?}");
    assert!(!dir.join("evals").exists());

    // Not a terminal: no question, the error names `evals init`.
    let dir = scratch("starter-pipe");
    let out = evals(&dir, &["evaluate", "--url", demo_url()]);
    assert_eq!(code(&out), 2);
    let (stdout, stderr) = text(&out);
    assert!(!stderr.contains("(Y/n)"), "{stderr}");
    assert!(stderr.contains("run `evals init`"), "{stdout}{stderr}");
}

#[test]
fn env_local_files_set_the_agent_and_the_environment_wins() {
    let dir = scratch("env-local");
    assert_eq!(code(&evals(&dir, &["init"])), 0);
    std::fs::write(
        dir.join(".env.local"),
        format!(
            "# the agent\nEVAL_AGENT_URL={}\nEVAL_JUDGE_MODEL=\"judge-model\"\n",
            demo_url()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join(".env.local.user"),
        "EVAL_JUDGE_API_KEY=sk-local-secret-42\n",
    )
    .unwrap();

    // No --url: .env.local names the agent.
    let out = evals(&dir, &["evaluate"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    assert!(
        stderr
            .contains("note: .env.local: EVAL_AGENT_URL, EVAL_JUDGE_MODEL (the environment wins)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("note: .env.local.user: EVAL_JUDGE_API_KEY"),
        "{stderr}"
    );
    assert!(
        stdout.contains("results: .evals/results/evals.json"),
        "{stdout}"
    );
    for file in [".evals/results/evals.json", ".evals/results/evals.html"] {
        let written = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(
            !written.contains("sk-local-secret-42"),
            "{file} holds the key"
        );
    }
    assert!(!format!("{stdout}{stderr}").contains("sk-local-secret-42"));

    // The environment wins: an agent nobody listens at.
    let out = evals_with(
        &dir,
        &["evaluate"],
        &[("EVAL_AGENT_URL", "http://127.0.0.1:9/")],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(
        code(&out),
        2,
        "every sample failed to reach it:\n{stdout}{stderr}"
    );
    assert!(
        stderr.contains("note: .env.local: EVAL_JUDGE_MODEL (the environment wins)"),
        "{stderr}"
    );

    // A line that is not KEY=VALUE is an error naming the file, not its text.
    std::fs::write(
        dir.join(".env.local.user"),
        "EVAL_JUDGE_API_KEY sk-broken-secret\n",
    )
    .unwrap();
    let out = evals(&dir, &["evaluate"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("error: .env.local.user: entry 1 is not a KEY=VALUE line"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-broken-secret"), "{stderr}");
}

/// `evals init` run several times at once: one writes the starter, the
/// others say it exists; the file is the starter, whole.
#[test]
fn concurrent_inits_write_the_starter_once() {
    let dir = scratch("init-concurrent");
    let outs: Vec<_> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..6).map(|_| s.spawn(|| evals(&dir, &["init"]))).collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let wrote = outs.iter().filter(|o| code(o) == 0).count();
    assert_eq!(wrote, 1, "{:?}", outs.iter().map(text).collect::<Vec<_>>());
    for o in outs.iter().filter(|o| code(o) != 0) {
        assert_eq!(code(o), 2);
        assert!(
            text(o).1.contains("already exists; not overwriting it"),
            "{:?}",
            text(o)
        );
    }
    let written = std::fs::read_to_string(dir.join("evals/evals.json")).unwrap();
    assert!(
        written.contains("\"schemaVersion\": \"1.6.0\""),
        "{written}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.join("evals")).unwrap().collect();
    assert_eq!(left.len(), 1, "{left:?}");
}
