//! JUnit XML from `evals evaluate --junit` and from the harness, checked
//! against the rules of the JUnit report format CI systems read (Jenkins'
//! `junit-10.xsd` and Ant's layout): a `<testsuites>` root with totals, one
//! `<testsuite>` per dataset whose counts match its cases, each `<testcase>`
//! named with `classname` and a decimal `time`, a `<failure>` or `<error>`
//! carrying `message` and `type`.

mod common;

use common::{code, demo_url, evals, scratch, text};

/// Checks `xml` against the format's rules; returns (tests, failures,
/// errors) of the root and the failure messages.
fn validate(xml: &str) -> ((usize, usize, usize), Vec<String>) {
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
                        messages.push(message.to_string());
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
    let out = evals(
        &dir,
        &[
            "evaluate",
            "qa.jsonl",
            "--url",
            demo_url(),
            "--metrics",
            "contains",
            "--junit",
            "out/junit.xml",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(stdout.contains("junit: out/junit.xml"), "{stdout}");
    let xml = std::fs::read_to_string(dir.join("out/junit.xml")).unwrap();
    let (counts, messages) = validate(&xml);
    assert_eq!(counts, (3, 1, 1), "{xml}");
    assert!(
        messages.iter().any(|m| m == "contains 0.000 >= 1"),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("no `expected` field")),
        "{messages:?}"
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
        .evaluate(libtest_mimic::Arguments::from_iter(["junit", "-q"]));
    assert_eq!(out.code, 101);
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let (counts, messages) = validate(&xml);
    assert_eq!(counts, (3, 1, 1), "{xml}");
    assert!(
        messages.iter().any(|m| m == "contains 0.000 >= 1"),
        "{messages:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}
