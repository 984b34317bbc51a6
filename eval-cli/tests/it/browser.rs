//! The HTML report (`evals report html`) opened in headless Chromium from
//! `file://` and used as a person would: the report of a real run (passing,
//! failing and errored samples, three datasets, tags, metadata, a
//! conversation, tool calls, retrieved ids), one with a baseline, and one of
//! 100,000 samples. Each check reads what the page should show from the
//! results files themselves, clicks and types through the DevTools protocol
//! (`chrome/mod.rs`), and fails on any console error, uncaught exception or
//! network request. Screenshots go to `target/screenshots/`.
//!
//! Chromium is `CHROME`, else `chromium`, `chromium-browser` or
//! `google-chrome` on `PATH`. Without one the tests say loudly that they
//! skipped, unless `EVAL_CI=1` (set by `.ci/run`), when they fail.

use crate::chrome;
use crate::common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrome::{Chrome, Page};
use common::{code, demo_url, evals, evaluate_demo, knowledge_base, scratch, text};
use eval_runtime::results::{Results, SampleRecord, Verdict};
use serde_json::{Value, json};

/// The samples table's page size (the DOM contract).
const PAGE: usize = 100;

/// The Chromium to test with; `None` (after a loud message) when there is
/// none and this is not CI.
fn chromium() -> Option<PathBuf> {
    if let Some(exe) = chrome::find() {
        return Some(exe);
    }
    let msg = "no Chromium found (CHROME, or chromium, chromium-browser, google-chrome on PATH): \
               the HTML report was NOT checked in a browser";
    if std::env::var("EVAL_CI").is_ok_and(|v| v == "1") {
        panic!("{msg}; EVAL_CI=1 requires it (apt-get install chromium)");
    }
    // Written to the process's stderr itself, which the test harness does
    // not capture: the skip is seen without `--nocapture`.
    let bar = "!".repeat(78);
    let _ = writeln!(std::io::stderr(), "\n{bar}\nSKIPPED: {msg}\n{bar}\n");
    None
}

/// `target/screenshots/<name>.png`.
fn screenshot_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("screenshots")
        .join(format!("{name}.png"))
}

fn read(path: &Path) -> Results {
    Results::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `evals report html ARGS...` in `dir`; panics unless it exits 0.
fn report_html(dir: &Path, args: &[&str]) -> Duration {
    let mut all = vec!["report", "html"];
    all.extend_from_slice(args);
    let start = Instant::now();
    let out = evals(dir, &all);
    let took = start.elapsed();
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "evals {all:?}: {stdout}{stderr}");
    took
}

/// A new page of `chrome` showing `report`, rendered.
fn page_at<'a>(
    chrome: &'a mut Chrome,
    report: &Path,
    timeout: Duration,
) -> (Page<'a>, chrome::Load) {
    let url = chrome::file_url(report);
    let mut page = chrome.new_page();
    let load = page.open(&url, timeout);
    (page, load)
}

/// No console error, uncaught exception or error log entry, and no request
/// but the report itself.
fn assert_clean(page: &mut Page, report: &Path) {
    let errors = page.errors();
    assert!(errors.is_empty(), "the page logged errors: {errors:#?}");
    let url = chrome::file_url(report);
    let requests = page.requests();
    assert!(
        requests.iter().all(|r| *r == url),
        "the page requested something besides itself ({url}): {requests:#?}"
    );
    assert!(
        !requests.is_empty(),
        "Network events were not seen at all: the check above proves nothing"
    );
}

/// Waits until `#count` reads `"<shown> of <total> samples"`.
fn expect_count(page: &mut Page, shown: usize, total: usize) {
    let want = format!("{shown} of {total} samples");
    let start = Instant::now();
    loop {
        let got = page.text("#count");
        if got.as_deref().map(str::trim) == Some(want.as_str()) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "#count reads {got:?}, expected {want:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The rows of the samples table as (id, verdict, dataset).
fn rows(page: &mut Page) -> Vec<(String, String, String)> {
    let v = page.eval(
        "[...document.querySelectorAll('table#samples tbody tr.sample')]\
         .map(r => [r.dataset.id, r.dataset.verdict, r.dataset.dataset])",
    );
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |i: usize| r[i].as_str().unwrap_or("").to_string();
            (s(0), s(1), s(2))
        })
        .collect()
}

fn verdict_name(v: Verdict) -> &'static str {
    v.as_str()
}

fn rank(verdict: &str) -> u8 {
    match verdict {
        "error" => 0,
        "fail" => 1,
        "inconclusive" => 2,
        "pass" => 3,
        other => panic!("row with data-verdict {other:?}"),
    }
}

/// The rows shown are the first page of `expected` samples (as many, every
/// one of them among `expected`), failing first (errors, then failures).
fn expect_rows(page: &mut Page, expected: &[&SampleRecord]) {
    expect_count_rows(page, expected, true);
}

fn expect_count_rows(page: &mut Page, expected: &[&SampleRecord], same_set: bool) {
    let shown = rows(page);
    assert_eq!(
        shown.len(),
        expected.len().min(PAGE),
        "rows on the first page: {shown:?}"
    );
    let ranks: Vec<u8> = shown.iter().map(|r| rank(&r.1)).collect();
    assert!(
        ranks.windows(2).all(|w| w[0] <= w[1]),
        "failing samples come first (error, fail, pass): {shown:?}"
    );
    for (id, verdict, dataset) in &shown {
        let s = expected
            .iter()
            .find(|s| &s.id == id && &s.dataset == dataset)
            .unwrap_or_else(|| panic!("row {dataset}/{id} should not be shown"));
        assert_eq!(verdict, verdict_name(s.verdict), "{dataset}/{id}");
    }
    if same_set && expected.len() <= PAGE {
        let mut want: Vec<_> = expected
            .iter()
            .map(|s| (s.id.clone(), s.dataset.clone()))
            .collect();
        let mut got: Vec<_> = shown.iter().map(|r| (r.0.clone(), r.2.clone())).collect();
        want.sort();
        got.sort();
        assert_eq!(got, want);
    }
}

/// What `#search` finds: the term in the id, test name, name, input,
/// expected answer or output, case aside.
fn found(s: &SampleRecord, term: &str) -> bool {
    let term = term.to_lowercase();
    [&s.id, &s.test_name]
        .into_iter()
        .chain(s.name.as_ref())
        .chain(s.input.iter())
        .chain(s.expected.as_ref())
        .chain(s.output.as_ref())
        .any(|f| f.to_lowercase().contains(&term))
}

/// The filters: dataset, verdict, tag, search text (empty: any).
type Filters<'a> = (&'a str, &'a str, &'a str, &'a str);

/// Sets the filters (empty: all; `#f-metric` is left as it is) and checks
/// count and rows against the same selection made from the results.
fn filter_and_check(page: &mut Page, samples: &[SampleRecord], filters: Filters) -> usize {
    filter_by_metric_and_check(page, samples, filters, "")
}

/// [`filter_and_check`] with `#f-metric` set too: samples whose `metric`
/// did not pass (failed or errored).
fn filter_by_metric_and_check(
    page: &mut Page,
    samples: &[SampleRecord],
    (dataset, verdict, tag, search): Filters,
    metric: &str,
) -> usize {
    page.select("#f-dataset", dataset);
    page.select("#f-verdict", verdict);
    page.select("#f-tag", tag);
    page.select("#f-metric", metric);
    page.type_into("#search", search);
    let expected: Vec<&SampleRecord> = samples
        .iter()
        .filter(|s| dataset.is_empty() || s.dataset == dataset)
        .filter(|s| verdict.is_empty() || verdict_name(s.verdict) == verdict)
        .filter(|s| tag.is_empty() || s.tags.iter().any(|t| t == tag))
        .filter(|s| search.is_empty() || found(s, search))
        .filter(|s| metric.is_empty() || s.metrics.iter().any(|m| m.name == metric && !m.passed))
        .collect();
    expect_count(page, expected.len(), samples.len());
    expect_rows(page, &expected);
    if !expected.is_empty() {
        assert_eq!(
            page.text("#page").map(|t| t.trim().to_string()),
            Some(format!("page 1 of {}", expected.len().div_ceil(PAGE))),
            "filters start again from page 1"
        );
    }
    expected.len()
}

/// The texts of the detail row that follows the row of `s`, after clicking
/// it: `{input, expected, output, context, tools, meta, metrics: [...]}`.
fn open_detail(page: &mut Page, s: &SampleRecord) -> Value {
    let row = format!(
        "table#samples tr.sample[data-id={}][data-dataset={}]",
        json!(s.id),
        json!(s.dataset)
    );
    assert_eq!(page.count(&row), 1, "one row for {row}");
    page.click(&row);
    let detail = page.eval(&format!(
        "(() => {{ const r = document.querySelector({}); const d = r.nextElementSibling; \
         if (!d || !d.classList.contains('detail')) return null; \
         const t = c => {{ const e = d.querySelector(c); return e ? e.textContent : null; }}; \
         return {{input: t('.d-input'), expected: t('.d-expected'), output: t('.d-output'), \
                 context: t('.d-context'), tools: t('.d-tools'), meta: t('.d-meta'), \
                 metrics: [...d.querySelectorAll('table.d-metrics tbody tr')].map(r => r.textContent)}}; }})()",
        json!(row)
    ));
    assert!(
        !detail.is_null(),
        "clicking {row} opened no tr.detail right after it"
    );
    detail
}

/// Clicks the row of `s` again: its detail closes.
fn close_detail(page: &mut Page, s: &SampleRecord) {
    let row = format!(
        "table#samples tr.sample[data-id={}][data-dataset={}]",
        json!(s.id),
        json!(s.dataset)
    );
    page.click(&row);
    let open = page.eval(&format!(
        "(() => {{ const d = document.querySelector({}).nextElementSibling; \
         return !!d && d.classList.contains('detail'); }})()",
        json!(row)
    ));
    assert_eq!(open, json!(false), "a second click closes {row}'s detail");
}

fn has(detail: &Value, part: &str, needle: &str) {
    let got = detail[part].as_str().unwrap_or_else(|| {
        panic!("the detail has no .d-{part}: {detail:#}");
    });
    assert!(
        got.contains(needle),
        ".d-{part} should hold {needle:?}: {got:?}"
    );
}

/// A Q&A dataset (a pass, a wrong answer, a conversation, a sample with no
/// expected answer), and a tool-use dataset (one calls the wrong tool).
const QA: &str = r#"{"id": "rag", "input": "What is RAG?", "expected": "Retrieval", "tags": ["rag", "smoke"], "metadata": {"difficulty": "easy", "owner": "docs-team"}}
{"id": "sum", "input": "What is 2 + 2?", "expected": "five", "tags": ["math"], "metadata": {"difficulty": "trick"}}
{"id": "memory", "input": ["My name is Ada.", "What's my name?"], "expected": "Ada", "tags": ["memory"]}
{"id": "hello", "input": "Hello", "tags": ["smoke"]}
"#;
const TOOLS: &str = r#"{"id": "multiply", "input": "What is 15 * 23?", "expected": "345", "expected_tools": [{"name": "calculator", "arguments": {"expression": "15 * 23"}}], "tags": ["math"]}
{"id": "chunking", "input": "Look up what chunking is.", "expected": "smaller", "expected_tools": [{"name": "lookup", "arguments": {"query": "Look up what chunking is."}}], "tags": ["lookup"]}
{"id": "wrong-tool", "input": "What is 9 * 9?", "expected": "81", "expected_tools": [{"name": "lookup", "arguments": {"query": "nine times nine"}}], "tags": ["math"]}
"#;

/// Runs `evals ARGS` in `dir`; panics unless it exits with `want`.
fn run(dir: &Path, args: &[&str], want: i32) {
    expect_exit(evals(dir, args), args, want);
}

/// Panics unless `out` (of `evals ARGS`) exited with `want`.
fn expect_exit(out: std::process::Output, args: &[&str], want: i32) {
    assert_eq!(code(&out), want, "evals {args:?}: {:?}", text(&out));
}

/// Really runs the demo agent: the Q&A dataset (`qa.json`), the tool-use
/// dataset through its OpenAI route, streamed, tools offered
/// (`tools.json`), the retrieval dataset before (`kb1.json`) and after
/// (`kb2.json`) the shipping document lost its words.
fn real_runs(dir: &Path) {
    std::fs::write(dir.join("qa.jsonl"), QA).unwrap();
    std::fs::write(dir.join("tools.jsonl"), TOOLS).unwrap();
    std::fs::write(
        dir.join("definitions.json"),
        Value::from(eval_examples::demo::tool_definitions()).to_string(),
    )
    .unwrap();
    let url = demo_url().trim_end_matches('/');
    let chat = format!("{url}/v1/chat/completions");
    let retrieval = format!("{url}/retrieval");
    let qa = ["--output", "qa.json"];
    expect_exit(evaluate_demo(dir, "qa.jsonl", "contains", &qa, &[]), &qa, 1);
    run(
        dir,
        &[
            "evaluate",
            "tools.jsonl",
            "--url",
            &chat,
            "--protocol",
            "openai",
            "--model",
            "demo-agent",
            "--stream",
            "--tools",
            "definitions.json",
            "--metrics",
            "tool_correctness, contains",
            "--output",
            "tools.json",
        ],
        1,
    );
    for (file, shipping, want) in [
        (
            "kb1.json",
            "Express shipping costs $9.99; standard shipping is free.",
            0,
        ),
        ("kb2.json", "Parcels leave the warehouse on weekdays.", 1),
    ] {
        std::fs::write(dir.join("kb.json"), knowledge_base(shipping, "")).unwrap();
        run(
            dir,
            &["evaluate", "kb.json", "--url", &retrieval, "--output", file],
            want,
        );
    }
}

/// The results files of the real run's report.
const RUN: [&str; 3] = ["qa.json", "tools.json", "kb2.json"];

#[test]
fn the_report_of_a_real_run_filters_and_opens_its_samples() {
    let Some(exe) = chromium() else { return };
    let dir = scratch("browser-run");
    real_runs(&dir);
    let runs: Vec<Results> = RUN.iter().map(|f| read(&dir.join(f))).collect();
    let samples: Vec<SampleRecord> = runs.iter().flat_map(|r| r.samples.clone()).collect();
    let summary_rows: usize = runs
        .iter()
        .flat_map(|r| &r.datasets)
        .map(|d| d.metrics.len())
        .sum();
    // What the run is meant to hold, so that the checks below mean something.
    for v in [Verdict::Pass, Verdict::Fail, Verdict::Error] {
        assert!(samples.iter().any(|s| s.verdict == v), "a {v:?} sample");
    }
    let get = |dataset: &str, id: &str| -> SampleRecord {
        samples
            .iter()
            .find(|s| s.dataset == dataset && s.id == id)
            .unwrap_or_else(|| panic!("{dataset}/{id} in {samples:#?}"))
            .clone()
    };
    let sum = get("qa", "sum");
    assert_eq!(sum.verdict, Verdict::Fail);
    let wrong_tool = get("tools", "wrong-tool");
    assert!(!wrong_tool.tool_calls.is_empty() && wrong_tool.expected_tools.is_some());
    let express = get("kb", "q_express");
    assert!(!express.relevant_ids.is_empty(), "{express:#?}");
    let refund = get("kb", "q_refund");
    assert!(!refund.retrieved_ids.is_empty(), "{refund:#?}");
    let hello = get("qa", "hello");
    assert_eq!(hello.verdict, Verdict::Error);

    report_html(&dir, &[RUN[0], RUN[1], RUN[2], "-o", "report.html"]);
    let report = dir.join("report.html");
    let mut chrome = Chrome::launch(&exe, &dir.join("profile"));
    let (mut page, load) = page_at(&mut chrome, &report, Duration::from_secs(30));
    eprintln!("report of {} samples ready in {load:?}", samples.len());

    // Summary: one row per dataset and metric; a chart per scored metric.
    assert_eq!(page.count("#summary-table tbody tr"), summary_rows);
    assert_eq!(page.count("#datasets-table tbody tr"), 3);
    assert!(page.count("svg.dist") >= 1);
    assert!(page.count("svg.dist line.threshold") >= 1);

    // Everything, failing first; then each filter alone and together.
    let all: Vec<&SampleRecord> = samples.iter().collect();
    expect_count(&mut page, samples.len(), samples.len());
    expect_rows(&mut page, &all);
    page.screenshot(&screenshot_path("report"), true);
    for verdict in ["pass", "fail", "error"] {
        let n = filter_and_check(&mut page, &samples, ("", verdict, "", ""));
        assert!(n >= 1 && n < samples.len(), "{verdict} narrows the table");
    }
    for dataset in ["qa", "tools", "kb"] {
        let n = filter_and_check(&mut page, &samples, (dataset, "", "", ""));
        assert!(n >= 1 && n < samples.len(), "{dataset} narrows the table");
    }
    for tag in ["math", "smoke"] {
        let n = filter_and_check(&mut page, &samples, ("", "", tag, ""));
        assert!(n >= 2 && n < samples.len(), "{tag} narrows the table");
    }
    assert_eq!(
        filter_and_check(&mut page, &samples, ("", "", "", "2 + 2")),
        1
    );
    // Found, then opened (the search box still has the focus).
    let d = open_detail(&mut page, &sum);
    has(&d, "expected", "five");
    assert_eq!(
        filter_and_check(&mut page, &samples, ("", "", "", "ada")),
        1,
        "search ignores case"
    );
    assert_eq!(
        filter_and_check(&mut page, &samples, ("qa", "fail", "math", "")),
        1
    );
    assert_eq!(
        filter_and_check(&mut page, &samples, ("tools", "pass", "smoke", "")),
        0
    );
    // Samples whose tool_correctness did not pass: the wrong tool only.
    assert_eq!(
        filter_by_metric_and_check(&mut page, &samples, ("", "", "", ""), "tool_correctness"),
        1
    );
    filter_and_check(&mut page, &samples, ("", "", "", ""));

    // A failed answer: the question, what was expected, what was said.
    let d = open_detail(&mut page, &sum);
    has(&d, "input", "What is 2 + 2?");
    has(&d, "expected", "five");
    has(
        &d,
        "output",
        sum.output.as_deref().expect("the answer is kept"),
    );
    has(&d, "meta", "trick");
    has(&d, "meta", "math");
    assert_eq!(
        d["metrics"].as_array().unwrap().len(),
        sum.metrics.len(),
        "one row per metric: {d:#}"
    );
    assert!(
        d["metrics"][0].as_str().unwrap().contains("contains"),
        "{d:#}"
    );
    page.screenshot(&screenshot_path("report-detail"), false);
    close_detail(&mut page, &sum);
    // The conversation's turns.
    let d = open_detail(&mut page, &get("qa", "memory"));
    has(&d, "input", "My name is Ada.");
    has(&d, "input", "What's my name?");
    // The wrong tool: expected `lookup`, made `calculator`.
    let d = open_detail(&mut page, &wrong_tool);
    has(&d, "tools", "lookup");
    has(&d, "tools", "calculator");
    has(&d, "expected", "81");
    // The README's picture: the samples table, this detail open.
    page.eval("document.querySelector('table#samples').scrollIntoView({block: 'start'}); window.scrollBy(0, -150)");
    page.screenshot(&screenshot_path("readme"), false);
    // Retrieval: the ids retrieved and the relevant ones.
    for s in [&express, &refund] {
        let d = open_detail(&mut page, s);
        for id in s.retrieved_ids.iter().chain(&s.relevant_ids) {
            has(&d, "context", id);
        }
    }
    // The error says why.
    let d = open_detail(&mut page, &hello);
    let why = hello
        .error
        .clone()
        .or_else(|| hello.metrics.iter().find_map(|m| m.error.clone()))
        .expect("the error sample has a cause");
    let shown = format!("{} {}", d["metrics"], d["meta"]);
    assert!(
        shown.contains(why.split('`').next().unwrap().trim()),
        "the detail says why {why:?}: {d:#}"
    );
    assert_clean(&mut page, &report);
    let _ = std::fs::remove_dir_all(dir);
}

/// The first screen of the page a run writes beside its results file
/// (1280×900, nothing scrolled): the run's verdict and counts in a banner,
/// the title naming the dataset (not the binary, `evals`); then the table's
/// expected answers, and a reason beside every failed metric.
#[test]
fn the_first_screen_leads_with_the_verdict() {
    let Some(exe) = chromium() else { return };
    let dir = scratch("browser-verdict");
    std::fs::write(dir.join("qa.jsonl"), QA).unwrap();
    let args = ["--output", "qa.json"];
    expect_exit(
        evaluate_demo(&dir, "qa.jsonl", "contains, exact_match", &args, &[]),
        &args,
        1,
    );
    let run = read(&dir.join("qa.json"));
    let d = &run.datasets[0];
    assert!(d.failed >= 1 && d.errors >= 1, "{d:#?}");
    let report = dir.join("qa.html");
    assert!(report.is_file(), "the run wrote its page beside qa.json");
    let mut chrome = Chrome::launch(&exe, &dir.join("profile"));
    let (mut page, _) = page_at(&mut chrome, &report, Duration::from_secs(30));
    page.screenshot(&screenshot_path("first-screen"), false);
    let first = page.eval(
        "(() => { const b = document.querySelector('#verdict'); if (!b) return null; \
         const r = b.getBoundingClientRect(); \
         const h1 = document.querySelector('h1'); \
         return {title: document.title, h1: h1 && h1.textContent, \
                 headline: b.querySelector('.headline').textContent, \
                 counts: b.querySelector('.counts').textContent, cls: b.className, \
                 top: r.top, bottom: r.bottom, height: window.innerHeight, \
                 first: document.querySelector('main').firstElementChild.firstElementChild === b, \
                 visible: getComputedStyle(b).display !== 'none' && r.height > 0}; })()",
    );
    assert!(!first.is_null(), "no #verdict banner on the page");
    assert_eq!(first["title"], "Eval report: qa", "{first:#}");
    assert_eq!(first["h1"], "Eval report: qa", "{first:#}");
    assert_eq!(first["first"], true, "the banner opens the page: {first:#}");
    assert_eq!(first["visible"], true, "{first:#}");
    assert!(
        first["bottom"].as_f64().unwrap() <= first["height"].as_f64().unwrap()
            && first["top"].as_f64().unwrap() >= 0.0,
        "the banner is above the fold: {first:#}"
    );
    let headline = first["headline"].as_str().unwrap();
    assert!(headline.starts_with("FAILED ("), "{first:#}");
    assert!(first["cls"].as_str().unwrap().contains("fail"), "{first:#}");
    let counts = first["counts"].as_str().unwrap();
    for want in [
        format!("{} samples", d.samples),
        format!("{} passed", d.passed),
        format!("{} failed", d.failed),
        format!("{} errors", d.errors),
        "complete run".to_string(),
    ] {
        assert!(counts.contains(&want), "{want:?} in {counts:?}");
    }
    // The table shows what was expected beside what was said.
    let heads = page
        .eval("[...document.querySelectorAll('table#samples thead th')].map(h => h.textContent)");
    assert!(
        heads.as_array().unwrap().iter().any(|h| h == "expected"),
        "{heads}"
    );
    let sum = run.samples.iter().find(|s| s.id == "sum").unwrap();
    let row = page.eval(&format!(
        "document.querySelector('tr.sample[data-id={}] td.expected').textContent",
        json!(sum.id)
    ));
    assert_eq!(row, "five");
    // Every failed metric says why: `contains` and `exact_match` included.
    let d = open_detail(&mut page, sum);
    let rows = d["metrics"].as_array().unwrap();
    let failed: Vec<_> = sum.metrics.iter().filter(|m| !m.passed).collect();
    assert!(failed.len() >= 2, "{sum:#?}");
    for m in failed {
        let shown = rows
            .iter()
            .filter_map(Value::as_str)
            .find(|r| r.starts_with(&m.name))
            .unwrap();
        assert!(
            shown.contains("the expected text is not found in the answer")
                || shown.contains("the answer is not the expected text"),
            "{} says why: {shown:?}",
            m.name
        );
    }
    assert_clean(&mut page, &report);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_baseline_shows_what_got_worse() {
    let Some(exe) = chromium() else { return };
    let dir = scratch("browser-baseline");
    real_runs(&dir);
    report_html(
        &dir,
        &["kb2.json", "--baseline", "kb1.json", "-o", "baseline.html"],
    );
    let report = dir.join("baseline.html");
    let mut chrome = Chrome::launch(&exe, &dir.join("profile"));
    let (mut page, _) = page_at(&mut chrome, &report, Duration::from_secs(30));
    let worse = page
        .eval("[...document.querySelectorAll('#baseline tr.delta.worse')].map(r => r.textContent)");
    let worse: Vec<&str> = worse
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!worse.is_empty(), "#baseline lists a tr.delta.worse");
    assert!(
        worse.iter().all(|r| r.contains("q_express")),
        "only q_express got worse: {worse:?}"
    );
    assert!(
        worse.iter().any(|r| r.contains("recall_at_k")),
        "its recall fell: {worse:?}"
    );
    assert_eq!(
        page.count("#baseline tr.delta.better"),
        0,
        "nothing got better"
    );
    assert!(
        page.count("#summary-table td.delta") >= 1,
        "the summary shows deltas"
    );
    // The paired comparison per dataset and metric, and the caveat that the
    // dataset's content changed between the runs.
    assert!(
        page.count("#comparisons tbody tr") >= 1,
        "the comparisons table"
    );
    assert_eq!(
        page.text("#comparisons tr[data-metric='recall_at_k'] td:last-child")
            .as_deref()
            .map(|t| t.starts_with("inconclusive")),
        Some(true)
    );
    assert!(
        page.text("#baseline .caveat")
            .is_some_and(|t| t.contains("dataset change")),
        "the caveat is shown"
    );
    page.screenshot(&screenshot_path("baseline"), true);
    assert_clean(&mut page, &report);

    // The watchers see what they watch for: provoked, each is caught.
    page.eval(
        "console.error('provoked'); setTimeout(() => { throw new Error('provoked too'); }); \
         new Image().src = 'http://127.0.0.1:9/provoked.png'; 1",
    );
    let start = Instant::now();
    loop {
        let (errors, requests) = (page.errors(), page.requests());
        let caught = errors
            .iter()
            .any(|e| e.starts_with("console.error") && e.contains("provoked"))
            && errors
                .iter()
                .any(|e| e.starts_with("uncaught") && e.contains("provoked too"))
            && requests.iter().any(|r| r.contains("provoked.png"));
        if caught {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "provoked errors and request not all seen: {errors:#?} {requests:#?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn inconclusive_verdicts_and_a_calibrated_judge_show() {
    let Some(exe) = chromium() else { return };
    let dir = scratch("browser-inconclusive");
    // Answered three times each by the deterministic demo agent: the
    // samples that always pass `contains >= 1` cannot be proved to (three
    // runs never prove a pass rate of 1), so they are inconclusive; `sum`
    // fails every run. `faithfulness` is scored by the scripted judge, and
    // a calibration of it at the same threshold with that judge is in the
    // project's calibration directory.
    std::fs::write(
        dir.join("qa.jsonl"),
        "{\"id\": \"paris\", \"input\": \"What is the capital of France?\", \"expected\": \"Paris\", \"context\": [\"Paris is the capital and largest city of France, on the river Seine.\"]}\n\
         {\"id\": \"sum\", \"input\": \"What is 2 + 2?\", \"expected\": \"five\", \"context\": [\"Two plus two is four.\"]}\n",
    )
    .unwrap();
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default()).unwrap();
    let results = dir.join("results");
    let env = [
        ("EVAL_JUDGE_URL", format!("{}/v1", judge.url())),
        ("EVAL_JUDGE_MODEL", "scripted".to_string()),
        ("EVAL_RESULTS_DIR", results.to_string_lossy().into_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let labels = common::repo().join("examples/calibration/faithfulness-labels.jsonl");
    let out = common::evals_with(
        &dir,
        &[
            "calibrate",
            labels.to_str().unwrap(),
            "--metric",
            "faithfulness >= 0.8",
        ],
        &env,
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let out = evaluate_demo(
        &dir,
        "qa.jsonl",
        "contains, faithfulness >= 0.8",
        &["--repeat", "3", "--output", "run.json"],
        &env,
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let report = dir.join("run.html");
    let mut chrome = Chrome::launch(&exe, &dir.join("profile"));
    let (mut page, _) = page_at(&mut chrome, &report, Duration::from_secs(30));
    let shown = rows(&mut page);
    assert!(
        shown.contains(&("paris".into(), "inconclusive".into(), "qa".into())),
        "{shown:?}"
    );
    assert!(
        shown.contains(&("sum".into(), "fail".into(), "qa".into())),
        "{shown:?}"
    );
    // Failures first, then the inconclusive, then passes.
    assert_eq!(shown[0].1, "fail", "{shown:?}");
    assert_eq!(
        page.text("tr.sample[data-id='paris'] .badge").as_deref(),
        Some("inconclusive")
    );
    // The verdict filter has the state.
    page.select("#f-verdict", "inconclusive");
    expect_count(&mut page, 1, 2);
    // The metric's agreement with human labels, beside it.
    let kappa = page
        .text("#summary-table tr[data-metric='faithfulness'] .calibration")
        .unwrap_or_default();
    assert!(kappa.contains("κ 0.50"), "{kappa:?}");
    assert!(kappa.contains("vs humans"), "{kappa:?}");
    page.screenshot(&screenshot_path("inconclusive"), true);
    assert_clean(&mut page, &report);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_trajectory_from_spans_is_a_timeline_in_the_sample_detail() {
    let Some(exe) = chromium() else { return };
    let dir = scratch("browser-trajectory");
    let (results, report) = crate::traces::spans_run(&dir);
    let run = read(&results);
    let rag = run.samples.iter().find(|s| s.id == "rag").unwrap().clone();
    let steps = rag.trajectory.as_ref().unwrap().steps.clone();
    assert_eq!(steps.len(), 3, "{rag:#?}");
    let mut chrome = Chrome::launch(&exe, &dir.join("profile"));
    let (mut page, _) = page_at(&mut chrome, &report, Duration::from_secs(30));
    open_detail(&mut page, &rag);
    // One row per step, in order, each with its kind, name and bar.
    let shown = page.eval(
        "[...document.querySelectorAll('tr.detail .d-trajectory ol.timeline li.step')]\
         .map(li => [li.dataset.kind, li.dataset.name, !!li.querySelector('.t-bar'), li.textContent])",
    );
    let shown = shown.as_array().expect("steps").clone();
    assert_eq!(shown.len(), steps.len(), "{shown:#?}");
    for (row, step) in shown.iter().zip(&steps) {
        assert_eq!(row[0], json!(step.kind.name()), "{row}");
        assert_eq!(row[1], json!(step.name), "{row}");
        assert_eq!(row[2], json!(true), "a timed step has a bar: {row}");
    }
    let lookup = shown[1][3].as_str().unwrap();
    assert!(
        lookup.contains("tool lookup({\"query\":\"What is RAG?\"})"),
        "{lookup}"
    );
    assert!(
        lookup.contains("Retrieval-augmented"),
        "its result: {lookup}"
    );
    let chat = shown[2][3].as_str().unwrap();
    assert!(chat.contains("tokens"), "{chat}");
    let summary = page.text("tr.detail .d-trajectory p").unwrap_or_default();
    assert!(
        summary.contains("3 steps (from the agent's spans)"),
        "{summary:?}"
    );
    page.screenshot(&screenshot_path("trajectory"), true);
    assert_clean(&mut page, &report);
    let _ = std::fs::remove_dir_all(dir);
}

/// Samples in the large run (`BROWSER_TEST_SAMPLES` to change it by hand).
fn large_size() -> usize {
    std::env::var("BROWSER_TEST_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

#[test]
fn a_report_of_100_000_samples_stays_usable() {
    let Some(exe) = chromium() else { return };
    let n = large_size();
    let dir = scratch("browser-large");
    // Additions the demo agent answers; every 10th expects a wrong sum,
    // every 50th has no expected answer (an error).
    let mut data = String::new();
    for i in 0..n {
        let (a, b) = (i % 977, i / 977);
        let expected = match i % 50 {
            7 => String::new(),
            _ if i % 10 == 3 => format!(r#", "expected": "{}""#, a + b + 1),
            _ => format!(r#", "expected": "{}""#, a + b),
        };
        data.push_str(&format!(
            r#"{{"id": "s{i}", "input": "What is {a} + {b}?"{expected}, "tags": ["t{}"], "metadata": {{"batch": {}}}}}"#,
            i % 7,
            i / 1000
        ));
        data.push('\n');
    }
    std::fs::write(dir.join("big.jsonl"), data).unwrap();
    let start = Instant::now();
    let big = ["--concurrency", "32", "--output", "big.json"];
    expect_exit(
        evaluate_demo(&dir, "big.jsonl", "contains", &big, &[]),
        &big,
        1,
    );
    eprintln!("evals evaluate, {n} samples: {:?}", start.elapsed());
    let samples = read(&dir.join("big.json")).samples;
    assert_eq!(samples.len(), n);

    let took = report_html(&dir, &["big.json", "-o", "big.html"]);
    let report = dir.join("big.html");
    let size = std::fs::metadata(&report).unwrap().len();
    eprintln!(
        "evals report html, {n} samples: {took:?}, {:.1} MB",
        size as f64 / 1e6
    );
    let mut chrome = Chrome::launch(&exe, &dir.join("profile"));
    let (mut page, load) = page_at(&mut chrome, &report, Duration::from_secs(120));
    eprintln!(
        "{n} samples: ready {:.0} ms after navigation start (the page's clock), {:?} from the navigate command",
        load.ready_ms, load.wall
    );
    let all: Vec<&SampleRecord> = samples.iter().collect();
    expect_count(&mut page, n, n);
    expect_count_rows(&mut page, &all, false);
    let pages = n.div_ceil(PAGE);
    assert_eq!(
        page.text("#page").map(|t| t.trim().to_string()),
        Some(format!("page 1 of {pages}"))
    );
    page.screenshot(&screenshot_path("large"), false);

    // Paging moves through the failing-first order and back.
    let first = rows(&mut page);
    page.click("button#next");
    assert_eq!(
        page.text("#page").map(|t| t.trim().to_string()),
        Some(format!("page 2 of {pages}"))
    );
    let second = rows(&mut page);
    assert_eq!(second.len(), PAGE.min(n - PAGE));
    assert!(
        second.iter().all(|r| !first.contains(r)),
        "page 2 shows other samples"
    );
    assert!(rank(&first.last().unwrap().1) <= rank(&second[0].1));
    page.click("button#prev");
    assert_eq!(rows(&mut page), first);

    // Filters and search over all of them, timed.
    let start = Instant::now();
    let failed = filter_and_check(&mut page, &samples, ("", "fail", "", ""));
    eprintln!("verdict filter over {n}: {:?}", start.elapsed());
    assert!(failed > PAGE, "{failed}");
    let start = Instant::now();
    filter_and_check(&mut page, &samples, ("", "", "t3", ""));
    eprintln!("tag filter over {n}: {:?}", start.elapsed());
    let last = samples
        .iter()
        .find(|s| s.id == format!("s{}", n - 1))
        .unwrap();
    let start = Instant::now();
    assert_eq!(
        filter_and_check(&mut page, &samples, ("", "", "", &last.id)),
        1
    );
    eprintln!("search over {n}: {:?}", start.elapsed());
    let d = open_detail(&mut page, last);
    has(&d, "input", &last.input[0]);
    has(&d, "output", last.output.as_deref().unwrap());
    filter_and_check(&mut page, &samples, ("", "", "", ""));
    assert_clean(&mut page, &report);
    let _ = std::fs::remove_dir_all(dir);
}
