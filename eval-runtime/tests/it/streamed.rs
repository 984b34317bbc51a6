//! A `.jsonl` dataset is not held: its samples are read again from the file
//! as they run. They are the samples a full load gives (same names, same
//! collisions resolved, same subsets), and a file changed in place during
//! the run makes the samples read after the change errors that say so.

use std::path::PathBuf;

use eval_runtime::plan::PlanBuilder;
use eval_runtime::results::{SampleRecord, Verdict};
use eval_runtime::{FnAgent, Response, Runner, Sample};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eval-streamed-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn echo(sample: &Sample) -> Response {
    Response::new(sample.input.last().to_string())
}

fn run(path: &std::path::Path, plan: PlanBuilder) -> Vec<SampleRecord> {
    let runner = Runner::new();
    let prepared = runner.prepare(plan).unwrap();
    prepared
        .evaluate(&FnAgent(echo), |_| {})
        .unwrap()
        .results
        .samples
        .into_iter()
        .inspect(|s| {
            assert!(
                s.source.starts_with(&*path.to_string_lossy()),
                "{}",
                s.source
            )
        })
        .collect()
}

/// Samples whose names collide (identical inputs, inputs that differ only
/// in punctuation, ids that slug alike), tags, a BOM and CRLF line ends.
const DATA: &str = "\u{feff}{\"input\": \"What is RAG?\", \"expected\": \"What is RAG?\"}\r\n\
{\"input\": \"What is RAG?\", \"expected\": \"What is RAG?\"}\r\n\
{\"input\": \"What is RAG!\", \"expected\": \"x\", \"tags\": [\"advanced\"]}\n\
\n\
{\"id\": \"a-b\", \"input\": \"one\", \"expected\": \"one\"}\n\
{\"id\": \"a_b\", \"input\": \"two\", \"expected\": \"two\", \"tags\": [\"advanced\"]}\n\
{\"input\": \"What is RAG?\", \"expected\": \"What is RAG?\"}\n\
{\"input\": \"three\", \"expected\": \"three\", \"context\": [\"c\"], \"tags\": [\"advanced\"]}\n";

#[test]
fn streamed_samples_are_those_a_full_load_gives() {
    let dir = scratch("same");
    let path = dir.join("d.jsonl");
    std::fs::write(&path, DATA).unwrap();
    let full = eval_datasets::Dataset::load(&path).unwrap();
    let names = eval_datasets::naming::test_names(&full.samples);
    assert_eq!(names.len(), 7);
    let plan = || PlanBuilder::new().dataset(path.to_str().unwrap(), "exact_match");
    let records = run(&path, plan());
    // In the results file's order (by name): the names a full load gives.
    let mut want: Vec<String> = names.iter().map(|n| format!("d::{n}")).collect();
    want.sort();
    let got: Vec<&str> = records.iter().map(|s| s.test_name.as_str()).collect();
    assert_eq!(got, want);
    for r in &records {
        let i = names
            .iter()
            .position(|n| r.test_name == format!("d::{n}"))
            .unwrap();
        let s = &full.samples[i];
        assert_eq!(
            (r.id.as_str(), r.source.as_str()),
            (s.id.as_str(), &*s.source.to_string())
        );
        assert_eq!(r.input, s.input.turns().to_vec());
        assert_eq!(r.tags, s.tags);
    }
    assert!(records.iter().all(|s| s.verdict != Verdict::Error));

    // Subsets pick what a full load's subset picks.
    let mut advanced = eval_datasets::Subset::default();
    advanced.tags = vec!["advanced".into()];
    let tagged = run(&path, plan().subset(advanced.clone()));
    let picked = |subset: eval_datasets::Subset| -> Vec<String> {
        let mut v: Vec<String> = subset
            .pick(&full.samples)
            .into_iter()
            .map(|i| format!("d::{}", names[i]))
            .collect();
        v.sort();
        v
    };
    let names_of = |r: &[SampleRecord]| r.iter().map(|s| s.test_name.clone()).collect::<Vec<_>>();
    assert_eq!(names_of(&tagged), picked(advanced));
    let mut three = eval_datasets::Subset::default();
    (three.sample_size, three.seed) = (Some(3), 7);
    let drawn = run(&path, plan().subset(three.clone()));
    assert_eq!(names_of(&drawn), picked(three));
}

#[test]
fn a_file_changed_in_place_during_the_run_makes_its_samples_errors() {
    let dir = scratch("changed");
    let path = dir.join("d.jsonl");
    std::fs::write(&path, DATA).unwrap();
    let runner = Runner::new();
    let prepared = runner
        .prepare(PlanBuilder::new().dataset(path.to_str().unwrap(), "exact_match"))
        .unwrap();
    // Rewritten in place (same inode), with other content at the offsets
    // the load kept.
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut file, b"{\"input\": \"appended\"}\n").unwrap();
    drop(file);
    let outcome = prepared.evaluate(&FnAgent(echo), |_| {}).unwrap();
    let samples = &outcome.results.samples;
    assert_eq!(samples.len(), 7, "every planned sample has a record");
    for s in samples {
        assert_eq!(s.verdict, Verdict::Error, "{}", s.test_name);
        let error = s.error.as_deref().unwrap_or_default();
        assert!(
            error.contains("changed during the run") && error.contains("d.jsonl:"),
            "{error}"
        );
    }
    assert!(!outcome.verdict.passed());
}
