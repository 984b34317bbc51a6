//! The end of `evals evaluate` writes its files in a fixed order (results,
//! HTML report, JUnit) and a file that cannot be written is named itself:
//! a read-only results folder names the results file, not the page beside
//! it, and no line of the summary claims a file that was not written.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{code, demo_url, scratch, text};

/// A dataset of three samples, one the demo agent answers wrong.
const DATA: &str = "{\"id\": \"a\", \"input\": \"What is the capital of France?\", \"expected\": \"Paris\"}\n\
{\"id\": \"b\", \"input\": \"What is the capital of France?\", \"expected\": \"Lyon\"}\n\
{\"id\": \"c\", \"input\": \"What is the capital of France?\", \"expected\": \"Paris\"}\n";

/// A folder nothing can be written into: mode 0555, and, when this test
/// runs as root (whom modes do not stop), the command then runs as `nobody`
/// (`Some(uid)`).
fn read_only(dir: &Path) -> Option<u32> {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let probe = dir.join("probe");
    match std::fs::write(&probe, b"x") {
        Ok(()) => {
            std::fs::remove_file(&probe).unwrap();
            Some(65534)
        }
        Err(_) => None,
    }
}

/// `evals evaluate data.jsonl` against the demo agent in `dir`, as `uid`
/// when given (`dir` is then opened to every user but the read-only parts).
fn evaluate(dir: &Path, extra: &[&str], env: &[(&str, &str)], uid: Option<u32>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.args([
        "evaluate",
        "data.jsonl",
        "--url",
        demo_url(),
        "--metrics",
        "contains",
    ])
    .args(extra)
    .current_dir(dir)
    .env_remove("EVAL_AGENT_URL")
    .env_remove("EVAL_RESULTS_DIR")
    .env_remove("EVAL_JUNIT")
    .env_remove("GITHUB_STEP_SUMMARY")
    .env_remove("EVAL_STEP_SUMMARY")
    .env("EVAL_CACHE", "off")
    .env("HOME", dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(uid) = uid {
        cmd.uid(uid).gid(uid);
    }
    cmd.output().expect("run evals")
}

/// A scratch folder holding the dataset, writable by everyone (for `nobody`).
fn folder(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("data.jsonl"), DATA).unwrap();
    for p in [dir.as_path(), &dir.join("data.jsonl")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    dir
}

#[test]
fn a_read_only_results_folder_names_the_results_file() {
    let dir = folder("end-ro-results");
    let uid = read_only(&dir.join("ro"));
    let out = evaluate(&dir, &["--output", "ro/r.json"], &[], uid);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(stderr.contains("ro/r.json"), "{stderr}");
    assert!(
        !stderr.contains("r.html"),
        "the page is not to blame: {stderr}"
    );
    assert!(
        !stdout.contains("results: ") && !stdout.contains("html: "),
        "{stdout}"
    );
    assert!(!dir.join("ro/r.json").exists() && !dir.join("ro/r.html").exists());
}

#[test]
fn a_page_that_cannot_be_written_is_named_and_the_results_file_is_written() {
    let dir = folder("end-ro-html");
    // Where the page goes is a directory: the page alone cannot be written.
    std::fs::create_dir_all(dir.join("out/r.html")).unwrap();
    let out = evaluate(&dir, &["--output", "out/r.json"], &[], None);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(stderr.contains("out/r.html"), "{stderr}");
    assert!(!stderr.contains("r.json"), "{stderr}");
    assert!(!stdout.contains("html: "), "{stdout}");
    let results = std::fs::read_to_string(dir.join("out/r.json")).unwrap();
    assert!(results.contains("\"samples\""), "{results}");
}

#[test]
fn a_read_only_junit_folder_names_the_junit_file() {
    let dir = folder("end-ro-junit");
    std::fs::create_dir_all(dir.join("out")).unwrap();
    std::fs::set_permissions(dir.join("out"), std::fs::Permissions::from_mode(0o777)).unwrap();
    let uid = read_only(&dir.join("ro"));
    let out = evaluate(
        &dir,
        &["--output", "out/r.json", "--junit", "ro/j.xml"],
        &[],
        uid,
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}{stderr}");
    assert!(stderr.contains("ro/j.xml"), "{stderr}");
    assert!(
        !stderr.contains("r.json") && !stderr.contains("r.html"),
        "{stderr}"
    );
    assert!(!stdout.contains("junit: "), "{stdout}");
    // The files before it are written, whole.
    let results = std::fs::read_to_string(dir.join("out/r.json")).unwrap();
    assert_eq!(results.matches("\"test_name\"").count(), 3, "{results}");
    assert!(dir.join("out/r.html").is_file());
}

#[test]
fn a_read_only_step_summary_folder_names_the_summary_file() {
    let dir = folder("end-ro-markdown");
    let uid = read_only(&dir.join("ro"));
    let summary = dir.join("ro/summary.md");
    let out = evaluate(
        &dir,
        &["--output", "r.json"],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
        uid,
    );
    let (stdout, stderr) = text(&out);
    // A summary that cannot be appended is a warning; the run's verdict stands.
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(stderr.contains("ro/summary.md"), "{stderr}");
    assert!(
        !stderr.contains("r.json") && !stderr.contains("r.html"),
        "{stderr}"
    );
    assert!(!summary.exists());
    assert!(stdout.contains("results: r.json"), "{stdout}");
    assert!(dir.join("r.json").is_file() && dir.join("r.html").is_file());
}

#[test]
fn junit_streamed_from_the_records_is_the_junit_of_the_results_file() {
    // Streamed (the command's end) and from a results file in memory
    // (`evals report junit`... the same writer): one document, byte for byte
    // but for times.
    let dir = folder("end-junit-same");
    let out = evaluate(&dir, &["--output", "r.json", "--junit", "j.xml"], &[], None);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(stdout.contains("junit: j.xml"), "{stdout}");
    let streamed = std::fs::read_to_string(dir.join("j.xml")).unwrap();
    let results = eval_runtime::results::Results::read(&dir.join("r.json")).unwrap();
    // issue39:reports: the streamed file's paths are relative to the
    // workspace root of the working directory; a scratch folder outside any
    // workspace is its own root, so the paths are as the results file's.
    assert!(streamed.contains("file=\"data.jsonl\""), "{streamed}");
    assert_eq!(streamed, eval_runtime::__cli::results::junit_xml(&results));
    assert_eq!(streamed.matches("<testcase ").count(), 3, "{streamed}");
    assert_eq!(streamed.matches("<failure ").count(), 1, "{streamed}");
}
