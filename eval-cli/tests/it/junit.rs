//! JUnit XML from `evals evaluate --junit` and from the harness, validated
//! against the JUnit schema (`junit.xsd` here, with xmllint: skipped with a
//! loud message when it is not installed, a failure under `EVAL_CI=1`),
//! and checked for what a schema cannot say: one `<testsuite>` per dataset
//! whose counts match its cases, totals that add up, one-line messages,
//! and a failure's text that is the report a person reads.

use crate::common;

use common::{check_junit_schema, code, evaluate_demo, scratch, text, xmllint_junit};

/// Checks `xml` against the format's rules; returns (tests, failures,
/// errors) of the root and each failure's (message, text).
fn validate(xml: &str) -> ((usize, usize, usize), Vec<(String, String)>) {
    let doc = roxmltree::Document::parse(xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let int = |n: roxmltree::Node, a: &str| -> usize {
        n.attribute(a)
            .unwrap_or_else(|| panic!("<{}> lacks `{a}`", n.tag_name().name()))
            .parse()
            .unwrap_or_else(|_| panic!("`{a}` of <{}> is not a count", n.tag_name().name()))
    };
    let decimal = |n: roxmltree::Node| {
        let t: f64 = n
            .attribute("time")
            .expect("time")
            .parse()
            .expect("decimal time");
        assert!(t >= 0.0 && t.is_finite());
    };
    decimal(root);
    let (mut tests, mut failures, mut errors, mut messages) = (0, 0, 0, Vec::new());
    for suite in root.children().filter(|n| n.is_element()) {
        assert_eq!(suite.tag_name().name(), "testsuite");
        assert!(suite.attribute("name").is_some_and(|n| !n.is_empty()));
        decimal(suite);
        let cases: Vec<_> = suite.children().filter(|n| n.is_element()).collect();
        let (mut f, mut e) = (0, 0);
        for case in &cases {
            assert_eq!(case.tag_name().name(), "testcase");
            assert!(case.attribute("name").is_some_and(|n| !n.is_empty()));
            assert!(case.attribute("classname").is_some());
            decimal(*case);
            for child in case.children().filter(|n| n.is_element()) {
                match child.tag_name().name() {
                    "failure" | "error" => {
                        if child.tag_name().name() == "failure" {
                            f += 1;
                        } else {
                            e += 1;
                        }
                        let message = child.attribute("message").expect("a message");
                        assert!(!message.contains('\n'), "one line: {message:?}");
                        assert!(child.attribute("type").is_some());
                        messages.push((
                            message.to_string(),
                            child.text().unwrap_or_default().to_string(),
                        ));
                    }
                    "system-out" | "system-err" => {}
                    other => panic!("unexpected <{other}> in a testcase"),
                }
            }
        }
        assert_eq!(int(suite, "tests"), cases.len());
        assert_eq!(int(suite, "failures"), f);
        assert_eq!(int(suite, "errors"), e);
        assert_eq!(int(suite, "skipped"), 0);
        tests += cases.len();
        failures += f;
        errors += e;
    }
    assert_eq!(
        (
            int(root, "tests"),
            int(root, "failures"),
            int(root, "errors")
        ),
        (tests, failures, errors)
    );
    ((tests, failures, errors), messages)
}

/// A pass, a failure and a sample that cannot be scored (no expected answer).
const DATASET: &str = "{\"input\": \"What is RAG?\", \"expected\": \"Retrieval\"}\n\
{\"input\": \"What is 2 + 2?\", \"expected\": \"five <& \\\"quoted\\\">\"}\n\
{\"input\": \"Hello\"}\n";

#[test]
fn the_cli_writes_one_testcase_per_sample() {
    let dir = scratch("junit-cli");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let out = evaluate_demo(
        &dir,
        "qa.jsonl",
        "contains",
        &["--junit", "out/junit.xml"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(stdout.contains("junit: out/junit.xml"), "{stdout}");
    check_junit_schema(&dir.join("out/junit.xml"));
    let xml = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let (counts, failures) = validate(&xml);
    assert_eq!(counts, (3, 1, 1), "{xml}");
    let (message, report) = failures
        .iter()
        .find(|(m, _)| m.starts_with("contains 0.000 < 1"))
        .unwrap_or_else(|| panic!("{failures:?}"));
    // The report a person reads: what was asked, expected and answered, and why it failed.
    assert!(
        report
            .contains("\ninput:    What is 2 + 2?\nexpected: five <& \"quoted\">\nactual:   4\n- "),
        "{report}"
    );
    assert!(report.contains(&format!("\n- {message}\n")), "{report}");
    assert!(
        failures
            .iter()
            .any(|(m, _)| m.contains("no `expected` field")),
        "{failures:?}"
    );
    // The failed sample's answer, as the agent gave it.
    assert!(xml.contains("<system-out>4</system-out>"), "{xml}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_harness_writes_it_too() {
    use eval_runtime::{Harness, Response, Sample};
    let dir = scratch("junit-harness");
    std::fs::write(dir.join("qa.jsonl"), DATASET).unwrap();
    let out = Harness::new()
        .base_dir(&dir)
        .results_file(dir.join("results.json"))
        .junit(dir.join("junit.xml"))
        .dataset("qa.jsonl", "contains")
        .agent_fn(async |s: &Sample| {
            Response::new(if s.input.last().contains("RAG") {
                "Retrieval augmented generation"
            } else {
                "four"
            })
        })
        .evaluate(common::harness_args(&["junit", "-q"]));
    assert_eq!(out.code, 101);
    check_junit_schema(&dir.join("junit.xml"));
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let (counts, failures) = validate(&xml);
    assert_eq!(counts, (3, 1, 1), "{xml}");
    assert!(
        failures
            .iter()
            .any(|(m, report)| m.starts_with("contains 0.000 < 1")
                && report.contains("\nactual:   four\n")),
        "{failures:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn inconclusive_samples_pass_or_fail_as_counted_and_say_so() {
    use eval_runtime::verdict::OnInconclusive;
    use eval_runtime::{Harness, Response, Sample};
    // Repeated 6 times, contains >= 0.5: one sample always right (a pass,
    // proven: Clopper–Pearson's interval of 6 in 6 is [0.025^(1/6), 1] =
    // [0.541, 1]), one wrong on every other run (inconclusive: 3 in 6 is
    // [0.118, 0.882]).
    let data = "{\"id\": \"sure\", \"input\": \"a\", \"expected\": \"yes\"}\n{\"id\": \"coin\", \"input\": \"b\", \"expected\": \"yes\"}\n";
    for (on, code, failures) in [
        (OnInconclusive::Estimate, 0, 0),
        (OnInconclusive::Fail, 101, 1),
    ] {
        let dir = scratch(&format!("junit-inconclusive-{on}"));
        std::fs::write(dir.join("qa.jsonl"), data).unwrap();
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let calls_seen = calls.clone();
        let out = Harness::new()
            .base_dir(&dir)
            .results_file(dir.join("results.json"))
            .junit(dir.join("junit.xml"))
            .dataset("qa.jsonl", "contains >= 0.5")
            .repeat(6)
            .inconclusive(on)
            .agent_fn(async move |s: &Sample| {
                if s.id != "coin" {
                    return Response::new("yes");
                }
                let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Response::new(if n % 2 == 1 { "no" } else { "yes" })
            })
            .evaluate(common::harness_args(&["junit", "-q"]));
        assert_eq!(out.code, code, "{on}");
        assert_eq!(calls_seen.load(std::sync::atomic::Ordering::SeqCst), 6);
        check_junit_schema(&dir.join("junit.xml"));
        let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
        let (counts, messages) = validate(&xml);
        assert_eq!(counts, (2, failures, 0), "{on}: {xml}");
        assert!(
            xml.contains("<testcase name=\"qa::coin\" classname=\"qa\""),
            "{xml}"
        );
        assert!(xml.contains("status=\"inconclusive\""), "{xml}");
        if failures == 0 {
            assert!(
                xml.contains("<system-out>inconclusive (counted as passed): contains 0.500 &gt;= 0.5 (mean of 6 runs, 95% interval 0.118..0.882)</system-out>"),
                "{xml}"
            );
        } else {
            assert_eq!(
                messages[0].0,
                // issue39:reports: then why the last run missed, in words.
                "contains 0.500 >= 0.5 not proven (mean of 6 runs, 95% interval 0.118..0.882, inconclusive): run 6/6: the expected text is not found in the answer",
                "{messages:?}"
            );
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The schema check can fail: a misspelt attribute, a testcase without a
/// name, a time that is not a number, counts that are not whole numbers.
#[test]
fn the_schema_refuses_what_ci_systems_cannot_read() {
    let dir = scratch("junit-schema");
    let good = "<testsuites tests=\"1\"><testsuite name=\"qa\" tests=\"1\" time=\"0.5\">\
<testcase name=\"qa::a\" classname=\"qa\" time=\"0.001\" line=\"3\"><failure message=\"m\" type=\"t\">report</failure>\
<system-out>out</system-out></testcase></testsuite></testsuites>";
    let bad = [
        ("misspelt", good.replace("classname=", "class=")),
        ("nameless", good.replace("name=\"qa::a\" ", "")),
        ("time", good.replace("time=\"0.001\"", "time=\"fast\"")),
        (
            "count",
            good.replace("tests=\"1\" time", "tests=\"1.5\" time"),
        ),
        (
            "order",
            good.replace("<system-out>out</system-out>", "")
                .replace("<failure", "<system-out>out</system-out><failure"),
        ),
        (
            "root",
            good.replace("<testsuites tests=\"1\">", "<tests>")
                .replace("</testsuites>", "</tests>"),
        ),
    ];
    std::fs::write(dir.join("good.xml"), good).unwrap();
    if !check_junit_schema(&dir.join("good.xml")) {
        return;
    }
    for (name, xml) in bad {
        let path = dir.join(format!("{name}.xml"));
        std::fs::write(&path, xml).unwrap();
        let verdict = xmllint_junit(&path).expect("xmllint ran a moment ago");
        assert!(verdict.is_err(), "{name}: the schema should refuse it");
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// issue39:reports: `evals evaluate` run in a member crate of a workspace
/// writes each `file=` relative to the workspace root (where a CI
/// annotator looks), not to the crate.
#[test]
fn file_paths_start_at_the_workspace_root() {
    let root = scratch("junit-workspace");
    std::fs::write(
        root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"crates/app\"]\n",
    )
    .unwrap();
    let app = root.join("crates/app");
    std::fs::create_dir_all(app.join("evals")).unwrap();
    std::fs::write(app.join("Cargo.toml"), "[package]\nname = \"app\"\n").unwrap();
    std::fs::write(
        app.join("evals/qa.jsonl"),
        "{\"input\": \"What is 2 + 2?\", \"expected\": \"five\"}\n",
    )
    .unwrap();
    let out = evaluate_demo(
        &app,
        "evals/qa.jsonl",
        "contains",
        &["--junit", "j.xml", "--output", "r.json"],
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    let xml = std::fs::read_to_string(app.join("j.xml")).unwrap();
    assert!(
        xml.contains("file=\"crates/app/evals/qa.jsonl\" line=\"1\""),
        "{xml}"
    );
    let _ = std::fs::remove_dir_all(root);
}
