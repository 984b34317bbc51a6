//! Helpers of the `evals` binary's tests: run it, read what it printed,
//! a demo agent on loopback, scratch directories.

#![allow(dead_code)]

pub mod loopback;
pub mod terminal;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn evals(dir: &Path, args: &[&str]) -> Output {
    evals_with(dir, args, &[])
}

pub fn evals_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_evals"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("EVAL_AGENT_URL")
        .env_remove("EVAL_JUDGE_URL")
        .env_remove("EVAL_EMBED_URL")
        .env_remove("EVAL_CONCURRENCY")
        .env_remove("EVAL_SAMPLE_TIMEOUT_SECS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("EVAL_STEP_SUMMARY")
        .env("EVAL_CACHE", "off");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run evals")
}

/// `evals evaluate DATASET --url <the demo agent> --metrics METRICS EXTRA...`
/// in `dir`, with `env` set: the run most report tests start from.
pub fn evaluate_demo(
    dir: &Path,
    dataset: &str,
    metrics: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let mut args = vec![
        "evaluate",
        dataset,
        "--url",
        demo_url(),
        "--metrics",
        metrics,
    ];
    args.extend_from_slice(extra);
    evals_with(dir, &args, env)
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn demo_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let server =
            eval_examples::demo::spawn(eval_examples::demo::DemoConfig::default()).unwrap();
        let url = server.url();
        std::mem::forget(server);
        url
    })
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("evals-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn fixtures() -> PathBuf {
    repo().join("tests/fixtures/public")
}

/// The JUnit schema the tests check JUnit files against (`junit.xsd`).
pub fn junit_schema() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/junit.xsd")
}

/// `xmllint --noout --schema junit.xsd <xml>`: `None` when xmllint is not
/// installed, else whether the file matches (with xmllint's complaint).
pub fn xmllint_junit(xml: &Path) -> Option<Result<(), String>> {
    let out = match Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(junit_schema())
        .arg(xml)
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("cannot run xmllint: {e}"),
    };
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(said)
    })
}

/// Checks `xml` against the JUnit schema with xmllint. Without xmllint the
/// check is skipped with a loud message, unless `EVAL_CI=1` (CI, which
/// installs it), where that is a failure. Returns whether it was checked.
pub fn check_junit_schema(xml: &Path) -> bool {
    match xmllint_junit(xml) {
        Some(Ok(())) => true,
        Some(Err(said)) => panic!(
            "{} does not match the JUnit schema {}:\n{said}",
            xml.display(),
            junit_schema().display()
        ),
        None if std::env::var("EVAL_CI").is_ok_and(|v| v == "1") => panic!(
            "xmllint is not installed (Debian: apt-get install libxml2-utils), and EVAL_CI=1 requires the JUnit schema check"
        ),
        None => {
            // On the real stderr: libtest hides what a passing test prints.
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! SKIPPED the JUnit schema check of {}: xmllint is not installed (Debian: apt-get install libxml2-utils). EVAL_CI=1 makes this a failure. !!!\n",
                xml.display()
            );
            false
        }
    }
}

/// The results an HTML report embeds (its `#report-data` element, plain JSON).
pub fn report_data(page: &str) -> serde_json::Value {
    let start = page
        .find("id=\"report-data\"")
        .expect("the report's data element");
    let open = start + page[start..].find('>').expect("its start tag ends") + 1;
    assert!(
        !page[start..open].contains("gzip"),
        "small reports embed plain JSON"
    );
    let close = open + page[open..].find("</script>").expect("its end tag");
    serde_json::from_str(&page[open..close]).expect("the embedded data is JSON")
}

/// The (dataset, id) of every sample the HTML report at `path` holds.
pub fn report_samples(path: &Path) -> std::collections::BTreeSet<(String, String)> {
    let page = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let data = report_data(&page);
    data["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .flat_map(|r| r["samples"].as_array().expect("samples").iter())
        .map(|s| {
            (
                s["dataset"].as_str().unwrap().to_string(),
                s["id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// An Unrag retrieval dataset of three documents and three queries;
/// `shipping` is the shipping document's text, `defaults` more of its
/// `defaults` object (`, "thresholds": {...}`).
pub fn knowledge_base(shipping: &str, defaults: &str) -> String {
    format!(
        r#"{{"version": "1", "id": "kb", "defaults": {{"topK": 2, "scopePrefix": "eval:kb:"{defaults}}},
  "documents": [
    {{"sourceId": "eval:kb:refunds", "content": "Refunds are accepted within 30 days of purchase."}},
    {{"sourceId": "eval:kb:shipping", "content": "{shipping}"}},
    {{"sourceId": "eval:kb:password", "content": "Reset your password from the account settings page."}}
  ],
  "queries": [
    {{"id": "q_refund", "query": "When are refunds accepted?", "relevant": {{"sourceIds": ["eval:kb:refunds"]}}}},
    {{"id": "q_express", "query": "What does express shipping cost?", "relevant": {{"sourceIds": ["eval:kb:shipping"]}}}},
    {{"id": "q_password", "query": "How do I reset my password?", "relevant": {{"sourceIds": ["eval:kb:password"]}}}}
  ]}}"#
    )
}

/// The `.bak` files in `dir`, sorted.
pub fn backups(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".bak"))
        .collect();
    found.sort();
    found
}

/// Arguments for a harness run inside this test process, with everything
/// libtest-mimic prints sent to a log file of its own: the samples these
/// tests fail on purpose would otherwise print `FAILED` lines (libtest-mimic
/// writes to the real stdout, which `cargo test` does not capture) into a
/// green run.
pub fn harness_args(args: &[&str]) -> libtest_mimic::Arguments {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("eval-harness-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join(format!("{n}.log")).display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--logfile", &log]);
    libtest_mimic::Arguments::from_iter(all)
}
