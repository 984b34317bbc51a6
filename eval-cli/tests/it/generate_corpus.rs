//! `evals generate` and the corpus it reads: every file of a corpus folder
//! must be inside it (a symlink to a file or a folder elsewhere is refused,
//! and what it leads to never reaches the judge), and the corpus as a whole
//! is bounded (`EVAL_MAX_DATASET_BYTES`), refused from the files' sizes
//! before anything is read.

use crate::common;

use std::path::Path;

use common::{code, evals_with, scratch, text};
use eval_examples::judge::{self, JudgeConfig, Recorded};

const SECRET: &str = "SECRET-TOKEN-7f3a9c";

/// A paragraph of plain words (enough for a chunk).
fn paragraph(topic: &str) -> String {
    format!(
        "The {topic} service stores every order in a ledger. Each ledger entry records the \
         customer, the amount and the time of the payment. Refunds are written as new entries \
         that point back to the original one, so the history is never rewritten.\n"
    )
}

/// `evals generate CORPUS -o out.jsonl --count 10 --types factual` in
/// `dir` against the recording judge: exit code, stdout, stderr.
fn generate(dir: &Path, corpus: &str, env: &[(&str, &str)]) -> (i32, String, String, Recorded) {
    let (server, log) = judge::spawn_recording(JudgeConfig::default()).unwrap();
    let url = format!("{}/v1", server.url());
    let mut all = vec![
        ("EVAL_JUDGE_URL", url.as_str()),
        ("EVAL_JUDGE_MODEL", "judge-model-1"),
    ];
    all.extend_from_slice(env);
    let out = evals_with(
        dir,
        &[
            "generate",
            corpus,
            "-o",
            "out.jsonl",
            "--count",
            "10",
            "--types",
            "factual",
        ],
        &all,
    );
    let (stdout, stderr) = text(&out);
    drop(server);
    (code(&out), stdout, stderr, log)
}

fn judge_saw(log: &Recorded) -> String {
    log.lock()
        .unwrap()
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_corpus_are_refused_and_never_sent() {
    use std::os::unix::fs::symlink;
    let dir = scratch("generate-symlinks");
    let secret = format!("{SECRET} is the launch code. {}", paragraph("secret"));
    std::fs::write(dir.join("outside_secret.txt"), &secret).unwrap();
    std::fs::create_dir(dir.join("outside")).unwrap();
    std::fs::write(dir.join("outside/secret.md"), &secret).unwrap();

    // A file symlink out.
    let corpus = dir.join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::write(corpus.join("a.md"), paragraph("billing")).unwrap();
    symlink("../outside_secret.txt", corpus.join("notes.txt")).unwrap();
    let (code, out, err, log) = generate(&dir, "corpus", &[]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("notes.txt"), "{err}");
    assert!(err.contains("outside"), "{err}");
    assert!(err.contains("through a symlink"), "{err}");
    assert!(
        !judge_saw(&log).contains(SECRET),
        "the secret reached the judge"
    );
    assert!(judge_saw(&log).is_empty(), "nothing is asked");
    assert!(!dir.join("out.jsonl").exists());

    // A folder symlink out (its files are not .md/.txt names themselves).
    std::fs::remove_file(corpus.join("notes.txt")).unwrap();
    symlink("../outside", corpus.join("more")).unwrap();
    let (code, out, err, log) = generate(&dir, "corpus", &[]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("more"), "{err}");
    assert!(err.contains("through a symlink"), "{err}");
    assert!(!judge_saw(&log).contains(SECRET));
    assert!(!dir.join("out.jsonl").exists());

    // `..` inside a link that comes back in is fine, and so is a link to
    // a file or folder of the corpus (each file read once) and a link
    // looping back to the corpus itself.
    std::fs::remove_file(corpus.join("more")).unwrap();
    std::fs::create_dir(corpus.join("sub")).unwrap();
    std::fs::write(corpus.join("sub/b.md"), paragraph("shipping")).unwrap();
    symlink("../corpus/a.md", corpus.join("again.md")).unwrap();
    symlink("sub", corpus.join("same")).unwrap();
    symlink(".", corpus.join("loop")).unwrap();
    let (code, out, err, log) = generate(&dir, "corpus", &[]);
    // 0, or 1 when the small corpus runs out of new questions.
    assert!(code == 0 || code == 1, "{out}\n{err}");
    assert!(err.contains("(2 documents"), "each file once: {err}");
    assert!(!judge_saw(&log).contains(SECRET));
}

#[test]
fn a_corpus_over_the_total_limit_is_refused_before_it_is_read() {
    let dir = scratch("generate-total");
    let corpus = dir.join("corpus");
    std::fs::create_dir(&corpus).unwrap();
    // Each file under the limit, the two together over it. The first is
    // not UTF-8: read, it would be refused for that instead.
    let mut first = paragraph("billing").into_bytes();
    first.extend_from_slice(&[0xff; 300]);
    std::fs::write(corpus.join("a.md"), &first).unwrap();
    std::fs::write(corpus.join("b.md"), paragraph("shipping").repeat(2)).unwrap();
    let limit = [("EVAL_MAX_DATASET_BYTES", "600")];
    let (code, out, err, log) = generate(&dir, "corpus", &limit);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("corpus"), "{err}");
    assert!(err.contains("limit of 600 bytes"), "{err}");
    assert!(err.contains("EVAL_MAX_DATASET_BYTES"), "{err}");
    assert!(!err.contains("UTF-8"), "refused before reading: {err}");
    assert!(judge_saw(&log).is_empty());

    // Under a limit that holds them both, it goes (the bad file aside).
    std::fs::write(corpus.join("a.md"), paragraph("billing")).unwrap();
    let (code, out, err, _) = generate(&dir, "corpus", &[("EVAL_MAX_DATASET_BYTES", "4096")]);
    assert!(code == 0 || code == 1, "{out}\n{err}");
    assert!(err.contains("(2 documents"), "{err}");
}
