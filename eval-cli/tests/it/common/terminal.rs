//! `evals` on a pseudo-terminal (rexpect), for the tests of what it asks a
//! person: `evals create`'s seven steps, and the answers most walks give.

use std::path::Path;
use std::process::Command;

pub use rexpect::session::PtySession;

/// `evals ARGS` on a pseudo-terminal in `dir`, with `env` set on top of a
/// clean one: no judge, no LangSmith key or endpoint, no answer cache, no
/// colour. Each prompt is waited for at most 30 s.
pub fn evals_pty(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.args(args)
        .current_dir(dir)
        .env("TERM", "xterm")
        .env("NO_COLOR", "1")
        .env("EVAL_CACHE", "off")
        .env_remove("EVAL_JUDGE_URL")
        .env_remove("LANGSMITH_API_KEY")
        .env_remove("LANGSMITH_ENDPOINT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    rexpect::session::spawn_command(cmd, Some(30_000)).expect("start in a pty")
}

/// Waits for `expect`, then types `answer` and Enter.
pub fn step(p: &mut PtySession, expect: &str, answer: &str) {
    p.exp_string(expect)
        .unwrap_or_else(|e| panic!("{expect}: {e}"));
    p.send_line(answer).expect("answer");
}

/// `evals create`'s steps 1 to 4: `domain`, types 1 and 3, a custom size
/// of 10, the ten questions typed, manual answers, and `organisation`
/// (`1` one knowledge base, `2` collections, `3` hierarchical).
pub fn first_steps(p: &mut PtySession, organisation: &str, domain: &str) {
    step(p, "Domain: ", domain);
    step(p, "Select types (comma-separated): ", "1,3");
    step(p, "Your choice? [1/2/3/4]: ", "4");
    step(p, "Number of pairs (10 or more): ", "10");
    step(p, "Your choice? [1/2/3/4/5]: ", "1");
    for (i, q) in TEN_QUESTIONS.iter().enumerate() {
        step(p, &format!("Query {}: ", i + 1), q);
    }
    step(p, "Query 11: ", "");
    step(p, "Your choice? [1/2/3/4]: ", "1");
    step(p, "Your choice? [1/2/3]: ", organisation);
}

/// Step 3's per-pair form of a manual answer: the answer, its source,
/// its passage, confidence and difficulty.
pub fn answer_pair(p: &mut PtySession, answer: &str) {
    step(p, "Expected answer: ", answer);
    step(p, "Source document(s): ", "help/admin.md");
    step(
        p,
        "Relevant context passage(s): ",
        "Every setting is changed from the admin page.",
    );
    step(p, "Confidence level: [high/medium/low]: ", "high");
    step(p, "Difficulty: [easy/medium/hard]: ", "easy");
}

/// Ten how-to questions, typed at step 2.
pub const TEN_QUESTIONS: [&str; 10] = [
    "How do I add a new team member?",
    "How do I reset a forgotten password?",
    "How do I export my invoices to CSV?",
    "How do I change the billing address?",
    "How do I enable two-factor authentication?",
    "How do I cancel a subscription?",
    "How do I connect the Slack integration?",
    "How do I restore a deleted project?",
    "How do I transfer ownership of a workspace?",
    "How do I request a refund for an order?",
];
