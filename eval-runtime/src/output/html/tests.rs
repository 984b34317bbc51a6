use std::collections::BTreeMap;
use std::io::Read as _;

use super::*;
use crate::output::{DatasetTerms, Gate, SampleRecord, Verdict, test_record};
use base64::Engine as _;
use eval_datasets::metric::Op;

fn results(records: Vec<SampleRecord>) -> Results {
    let terms = BTreeMap::from([(
        "qa".to_string(),
        DatasetTerms::new(None, vec![Gate::new("contains", Op::AtLeast, 0.5)], false),
    )]);
    Results::new("evals", records, &terms)
}

/// The JSON the page embeds, decoded whichever way it is embedded.
fn embedded(page: &str) -> serde_json::Value {
    let start = page
        .find("id=\"report-data\"")
        .expect("the data element is there");
    let open = start + page[start..].find('>').unwrap() + 1;
    let close = open + page[open..].find("</script>").unwrap();
    let text = &page[open..close];
    let json = if page[start..open].contains("gzip-base64") {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .unwrap();
        let mut out = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut out)
            .unwrap();
        out
    } else {
        text.to_string()
    };
    serde_json::from_str(&json).expect("the embedded data is JSON")
}

/// Every URL-bearing place of the page: `src=`, `href=`, `url(`.
fn urls(page: &str) -> Vec<String> {
    let re =
        regex::Regex::new(r#"(?i)(?:\bsrc\s*=|\bhref\s*=|url\s*\()\s*["']?([^"')\s>]*)"#).unwrap();
    re.captures_iter(page).map(|c| c[1].to_string()).collect()
}

#[test]
fn the_page_names_no_url_and_holds_its_style_and_script() {
    let page = html(
        &[results(vec![test_record("qa", "qa::a", Verdict::Pass)])],
        None,
    );
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("<style>") && page.contains("<script>\n"));
    assert!(urls(&page).is_empty(), "{:?}", urls(&page));
    for scheme in ["http:", "https:", "ftp:", "data:", "file:"] {
        assert!(!page.contains(scheme), "{scheme} in the page");
    }
    assert!(!page.contains("://"), "a URL in the page");
    // The script never parses data as markup.
    assert!(!JS.contains("innerHTML") && !JS.contains("insertAdjacentHTML"));
    assert!(!JS.contains("document.write") && !JS.contains("eval("));
}

#[test]
fn a_sample_cannot_end_the_data_element() {
    let mut nasty = test_record("qa", "qa::x", Verdict::Fail);
    nasty.output = Some("</script><script>alert(1)</script><!-- ".into());
    nasty.input = vec!["</SCRIPT>".into()];
    let page = html(&[results(vec![nasty])], None);
    let start = page.find("id=\"report-data\"").unwrap();
    let rest = &page[start..];
    // The first `</script>` after the data's start ends the data element: the
    // sample's text is before it only escaped.
    let end = rest.to_ascii_lowercase().find("</script>").unwrap();
    assert!(!rest[..end].contains('<'));
    let data = embedded(&page);
    assert_eq!(
        data["runs"][0]["samples"][0]["output"],
        "</script><script>alert(1)</script><!-- "
    );
    assert_eq!(data["runs"][0]["samples"][0]["input"][0], "</SCRIPT>");
}

#[test]
fn every_sample_and_the_summaries_are_in_the_data() {
    let records: Vec<SampleRecord> = (0..250)
        .map(|i| {
            let v = [Verdict::Pass, Verdict::Fail, Verdict::Error][i % 3];
            let mut r = test_record("qa", &format!("qa::s{i:03}"), v);
            r.latency_ms = (i + 1) as f64;
            r.tags = vec![format!("t{}", i % 2)];
            r
        })
        .collect();
    let page = html(&[results(records)], None);
    let data = embedded(&page);
    let samples = data["runs"][0]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 250);
    let ids: std::collections::BTreeSet<&str> =
        samples.iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 250);
    assert!(ids.contains("qa::s000") && ids.contains("qa::s249"));
    let dataset = &data["runs"][0]["meta"]["datasets"][0];
    assert_eq!(dataset["summary"]["name"], "qa");
    assert_eq!(dataset["summary"]["metrics"][0]["gate"]["passed"], false);
    // Latency 1..=250 ms: p50 125.5, p95 = 1 + 0.95 * 249 = 237.55 (H&F 7).
    let latency = dataset["latency_ms"].as_array().unwrap();
    assert_eq!(latency[0], 125.5);
    assert!((latency[1].as_f64().unwrap() - 237.55).abs() < 1e-9);
    // 84 passes scored 1, 83 failures scored 0; errors have no score.
    let h = &dataset["histograms"]["contains"];
    assert_eq!((h["lo"].as_f64(), h["hi"].as_f64()), (Some(0.0), Some(1.0)));
    let counts: Vec<u64> = h["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(counts.len(), UNIT_BINS);
    assert_eq!(
        (counts[0], counts[9], counts.iter().sum::<u64>()),
        (83, 84, 167)
    );
    assert_eq!(h["threshold"], 1.0);
}

#[test]
fn histograms_outside_the_unit_range_span_scores_and_threshold() {
    let h = Histogram::of(vec![100.0, 300.0, 500.0], 1000.0, "<=".into()).unwrap();
    assert_eq!((h.lo, h.hi, h.counts.len()), (100.0, 1000.0, OTHER_BINS));
    assert_eq!(h.counts.iter().sum::<usize>(), 3);
    assert_eq!((h.counts[0], h.counts[4], h.counts[8]), (1, 1, 1));
    // One value: a unit-wide range around it.
    let h = Histogram::of(vec![7.0, 7.0], 7.0, ">=".into()).unwrap();
    assert_eq!((h.lo, h.hi, h.counts[10]), (6.5, 7.5, 2));
    assert!(Histogram::of(Vec::new(), 1.0, ">=".into()).is_none());
}

#[test]
fn with_a_baseline_the_changes_and_the_summary_deltas_are_there() {
    let old = results(vec![
        test_record("qa", "qa::a", Verdict::Pass),
        test_record("qa", "qa::b", Verdict::Fail),
        test_record("qa", "qa::gone", Verdict::Pass),
    ]);
    let new = results(vec![
        test_record("qa", "qa::a", Verdict::Fail),
        test_record("qa", "qa::b", Verdict::Pass),
        test_record("qa", "qa::new", Verdict::Pass),
    ]);
    let data = embedded(&html(std::slice::from_ref(&new), Some(&old)));
    let b = &data["baseline"];
    assert_eq!(b["compared"], 2);
    let changes = b["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2);
    assert_eq!(
        (changes[0]["id"].as_str(), changes[0]["better"].as_bool()),
        (Some("qa::a"), Some(false))
    );
    assert_eq!(
        (changes[1]["id"].as_str(), changes[1]["better"].as_bool()),
        (Some("qa::b"), Some(true))
    );
    assert_eq!(b["added"][0]["id"], "qa::new");
    assert_eq!(b["removed"][0]["id"], "qa::gone");
    // Means 2/3 both times, pass rate 2/3 both times: no movement.
    let delta = &data["runs"][0]["meta"]["datasets"][0]["deltas"]["contains"];
    assert!(delta["mean"].as_f64().unwrap().abs() < 1e-12);
    let worse = results(vec![test_record("qa", "qa::a", Verdict::Fail)]);
    let data = embedded(&html(&[worse], Some(&old)));
    let delta = &data["runs"][0]["meta"]["datasets"][0]["deltas"]["contains"];
    assert!((delta["mean"].as_f64().unwrap() + 2.0 / 3.0).abs() < 1e-12);
    assert!((delta["old_mean"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    // Without one there is no baseline data (and the page shows none).
    assert!(embedded(&html(&[old], None)).get("baseline").is_none());
}

#[test]
fn several_results_files_are_shown_together_and_compared_as_one() {
    let a = results(vec![test_record("qa", "qa::a", Verdict::Pass)]);
    let b = Results::new(
        "harness",
        vec![test_record("rag", "rag::a", Verdict::Fail)],
        &BTreeMap::new(),
    );
    let old = Results::new(
        "old",
        vec![
            test_record("qa", "qa::a", Verdict::Pass),
            test_record("rag", "rag::a", Verdict::Pass),
        ],
        &BTreeMap::new(),
    );
    let page = html(&[a, b], Some(&old));
    assert!(
        page.contains("<title>Eval report: qa, rag (2 results files)</title>"),
        "{page}"
    );
    let data = embedded(&page);
    assert_eq!(data["runs"].as_array().unwrap().len(), 2);
    assert_eq!(data["runs"][1]["samples"][0]["id"], "rag::a");
    let b = &data["baseline"];
    assert_eq!(b["compared"], 2);
    assert!(b["removed"].as_array().unwrap().is_empty());
    assert_eq!(b["changes"][0]["id"], "rag::a");
}

#[test]
fn an_empty_results_file_renders() {
    let empty = Results::new("evals", Vec::new(), &BTreeMap::new());
    let page = html(&[empty], None);
    let data = embedded(&page);
    assert!(data["runs"][0]["samples"].as_array().unwrap().is_empty());
    assert!(page.contains("</html>"));
    // No results at all is a page too.
    let data = embedded(&html(&[], None));
    assert!(data["runs"].as_array().unwrap().is_empty());
    // Runs without samples beside runs with some.
    let one = results(vec![test_record("qa", "qa::a", Verdict::Pass)]);
    let none = Results::new("other", Vec::new(), &BTreeMap::new());
    let data = embedded(&html(&[none.clone(), one, none], None));
    let runs = data["runs"].as_array().unwrap();
    let counts: Vec<usize> = runs
        .iter()
        .map(|r| r["samples"].as_array().unwrap().len())
        .collect();
    assert_eq!(counts, [0, 1, 0]);
    assert_eq!(runs[2]["meta"]["binary"], "other");
}

#[test]
fn large_data_is_embedded_compressed_and_decodes_to_every_sample() {
    let records: Vec<SampleRecord> = (0..=COMPRESS_ABOVE)
        .map(|i| {
            let mut r = test_record("qa", &format!("qa::s{i:05}"), Verdict::Pass);
            r.output = Some(format!("answer number {i}, </script> and all"));
            r
        })
        .collect();
    let page = html(&[results(records)], None);
    assert!(page.contains("data-encoding=\"gzip-base64\""));
    let data = embedded(&page);
    let samples = data["runs"][0]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), COMPRESS_ABOVE + 1);
    let last = format!("answer number {COMPRESS_ABOVE}, </script> and all");
    assert_eq!(samples[COMPRESS_ABOVE]["output"], last.as_str());
    assert_eq!(data["runs"][0]["meta"]["binary"], "evals");
    // One sample fewer: plain JSON.
    let few: Vec<SampleRecord> = (0..COMPRESS_ABOVE)
        .map(|i| test_record("qa", &format!("qa::s{i:05}"), Verdict::Pass))
        .collect();
    let page = html(&[results(few)], None);
    assert!(!page.contains("data-encoding=\"gzip-base64\""));
    assert_eq!(
        embedded(&page)["runs"][0]["samples"]
            .as_array()
            .unwrap()
            .len(),
        COMPRESS_ABOVE
    );
}

#[test]
fn written_atomically_beside_the_results() {
    let dir = std::env::temp_dir().join(format!("eval-html-test-{}", std::process::id()));
    let json = dir.join("sub/evals.json");
    let path = html_path(&json);
    assert_eq!(path, dir.join("sub/evals.html"));
    write_html(
        &path,
        &[results(vec![test_record("qa", "qa::a", Verdict::Pass)])],
        None,
    )
    .unwrap();
    let page = std::fs::read_to_string(&path).unwrap();
    assert_eq!(embedded(&page)["runs"][0]["samples"][0]["id"], "qa::a");
    let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
    assert_eq!(left.len(), 1, "no temporary file left behind");
    let _ = std::fs::remove_dir_all(dir);
}

/// The page of `records` (one run), embedding what `inline` says.
fn page_with(records: Vec<SampleRecord>, inline: Inline) -> String {
    let mut out = Vec::new();
    write_page_with(&mut out, &[results(records)], None, inline).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn a_huge_run_embeds_its_first_failures_and_an_even_share_of_its_passes() {
    // 300 samples: every third fails or errors (100 + 100), 100 pass; the
    // page holds at most 50 samples whole, else 30 not passed and 10 passed.
    let records: Vec<SampleRecord> = (0..300)
        .map(|i| {
            let v = [Verdict::Pass, Verdict::Fail, Verdict::Error][i % 3];
            let mut r = test_record("qa", &format!("qa::s{i:03}"), v);
            r.latency_ms = (i + 1) as f64;
            if v == Verdict::Fail {
                // Scores beyond the unit range: the histogram's range is
                // every score's, not only the embedded ones'.
                r.metrics[0].score = Some(-(i as f64));
            }
            r
        })
        .collect();
    let inline = Inline {
        all: 50,
        failing: 30,
        passing: 10,
    };
    let data = embedded(&page_with(records.clone(), inline));
    let run = &data["runs"][0];
    let ids: Vec<&str> = run["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 40, "{ids:?}");
    let number = |id: &str| id[5..].parse::<usize>().unwrap();
    let (passes, failing): (Vec<&str>, Vec<&str>) =
        ids.iter().copied().partition(|id| number(id) % 3 == 0);
    // The first 30 that did not pass, in the results file's order.
    let want: Vec<String> = (0..300)
        .filter(|i| i % 3 != 0)
        .take(30)
        .map(|i| format!("qa::s{i:03}"))
        .collect();
    assert_eq!(failing, want);
    // Ten of the hundred passes, one in ten.
    let want: Vec<String> = (0..100)
        .step_by(10)
        .map(|j| format!("qa::s{:03}", j * 3))
        .collect();
    assert_eq!(passes, want);
    // The same samples each time.
    assert_eq!(
        embedded(&page_with(records.clone(), inline))["runs"][0]["samples"],
        run["samples"]
    );
    let partial = &run["meta"]["partial"];
    assert_eq!(
        (
            &partial["samples"],
            &partial["shown"],
            &partial["failing"],
            &partial["failing_shown"],
            &partial["passing"],
            &partial["passing_shown"]
        ),
        (
            &serde_json::json!(300),
            &serde_json::json!(40),
            &serde_json::json!(200),
            &serde_json::json!(30),
            &serde_json::json!(100),
            &serde_json::json!(10)
        )
    );
    // The figures are over every sample: latency 1..=300 ms, p50 150.5;
    // the histogram spans the scores of samples not embedded.
    let dataset = &run["meta"]["datasets"][0];
    assert_eq!(dataset["latency_ms"][0], 150.5);
    let h = &dataset["histograms"]["contains"];
    assert_eq!(h["lo"], -298.0);
    assert_eq!(h["hi"], 1.0);
    let counted: u64 = h["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(counted, 200, "every scored sample, embedded or not");
    // Whole below the bound: no `partial`.
    let whole = embedded(&page_with(records, Inline::DEFAULT));
    assert_eq!(whole["runs"][0]["samples"].as_array().unwrap().len(), 300);
    assert!(whole["runs"][0]["meta"].get("partial").is_none());
}

#[test]
fn the_histogram_of_a_plan_is_the_histogram_of_every_score() {
    let scores = vec![0.5, 3.0, -2.0, 3.0, 7.25];
    let whole = Histogram::of(scores.clone(), 1.0, ">=".into()).unwrap();
    let mut plan = PagePlan::default();
    let records: Vec<SampleRecord> = scores
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut r = test_record("qa", &format!("s{i}"), Verdict::Pass);
            r.metrics[0].score = Some(*s);
            r.metrics[0].threshold = 1.0;
            r.metrics[0].op = ">=".into();
            r
        })
        .collect();
    records.iter().for_each(|r| plan.add(r));
    let data = embedded(&page_with(records, Inline::DEFAULT));
    let h = &data["runs"][0]["meta"]["datasets"][0]["histograms"]["contains"];
    assert_eq!(h, &serde_json::to_value(&whole).unwrap());
    assert_eq!(whole.lo, -2.0);
    assert_eq!(whole.counts.iter().sum::<usize>(), 5);
}

#[test]
fn the_page_is_titled_by_its_datasets_and_carries_the_verdict() {
    let run = results(vec![
        test_record("qa", "qa::a", Verdict::Pass),
        test_record("qa", "qa::b", Verdict::Fail),
        test_record("qa", "qa::c", Verdict::Error),
    ]);
    let page = html(&[run], None);
    // Not the binary's name ("evals: evals" before).
    assert!(page.contains("<title>Eval report: qa</title>"), "{page}");
    let data = embedded(&page);
    let v = &data["runs"][0]["meta"]["verdict"];
    assert_eq!(v["passed"], false, "{v}");
    // The words of the terminal summary's first line.
    assert!(
        v["headline"]
            .as_str()
            .unwrap()
            .starts_with("FAILED (2 of 3 samples failed"),
        "{v}"
    );
    assert_eq!(
        [
            &v["samples"],
            &v["passed_samples"],
            &v["failed"],
            &v["errors"]
        ],
        [3, 1, 1, 1],
        "{v}"
    );
    let many = ["d1", "d2", "d3", "d4", "d5"];
    assert_eq!(
        super::title(&["evals"], many.into_iter()),
        "Eval report: d1, d2, d3 and 2 more"
    );
    assert_eq!(
        super::title(&["evals"], std::iter::empty()),
        "Eval report: evals"
    );
    // A dataset's name in the title: HTML-escaped (html-escape), a bidi
    // control shown escaped by the terminal rule.
    let odd = results(vec![test_record("a<b>&\u{202e}c", "x::a", Verdict::Pass)]);
    let page = html(&[odd], None);
    assert!(
        page.contains("<title>Eval report: a&lt;b&gt;&amp;\\u{202e}c</title>"),
        "{}",
        &page[..400]
    );
}
