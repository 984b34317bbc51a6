//! Steps 6 and 7's material: the pairs deduplicated and fixed, checked
//! as samples, written as golden records, and the reports printed.

use std::path::{Path, PathBuf};

use crate::profile::{self, DatasetStats};
use eval_datasets::similarity::{Query, same_question};
use eval_datasets::{Dataset, Sample};
use serde_json::{Map, Value};

use super::{EDGE_CASES, Pair};
use crate::Failure;

/// Drops queries that repeat an earlier one (`evals lint`'s measure); how many.
pub(super) fn dedupe(pairs: &mut Vec<Pair>) -> usize {
    let before = pairs.len();
    let mut seen: Vec<Query> = Vec::new();
    pairs.retain(|p| {
        let q = Query::new(&p.query);
        if seen.iter().any(|s| same_question(s, &q).is_some()) {
            false
        } else {
            seen.push(q);
            true
        }
    });
    before - pairs.len()
}

/// The safe fixes: whitespace trimmed, repeated queries dropped.
pub(super) fn fix(pairs: &mut Vec<Pair>) -> usize {
    for p in pairs.iter_mut() {
        p.query = p.query.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(t) = &mut p.ground_truth {
            *t = t.trim().to_string();
        }
    }
    dedupe(pairs)
}

/// The golden record of pair `i` (`eval-001`...).
pub(super) fn golden(i: usize, p: &Pair) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("id".into(), Value::from(format!("eval-{:03}", i + 1)));
    o.insert("query".into(), Value::from(p.query.clone()));
    o.insert(
        "ground_truth".into(),
        p.ground_truth.clone().map_or(Value::Null, Value::from),
    );
    o.insert("contexts".into(), Value::from(p.contexts.clone()));
    o.insert("source_docs".into(), Value::from(p.source_docs.clone()));
    o.insert("metadata".into(), Value::Object(p.metadata.clone()));
    o
}

/// The pairs as samples, for the lint.
pub(super) fn to_samples(pairs: &[Pair]) -> Result<Vec<Sample>, Failure> {
    let records: Vec<Map<String, Value>> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| golden(i, p))
        .collect();
    let text = eval_datasets::write::objects_to_jsonl(records);
    Dataset::from_bytes("new.jsonl", text.as_bytes())
        .map(|d| d.samples)
        .or_else(|e| match e {
            eval_datasets::DatasetError::Empty { .. } => Ok(Vec::new()),
            other => Err(Failure::config(other.to_string())),
        })
}

/// Step 6's report: coverage, then quality.
pub(super) fn report_validation(
    pairs: &[Pair],
    findings: &[eval_datasets::lint::Finding],
    edge_cases: &[&str],
    dropped: usize,
) {
    let count = |key: &str| {
        let mut m: std::collections::BTreeMap<String, usize> = Default::default();
        for p in pairs {
            if let Some(v) = p.metadata.get(key).and_then(Value::as_str) {
                *m.entry(v.to_string()).or_default() += 1;
            }
        }
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let with_edge = pairs
        .iter()
        .filter(|p| p.metadata.get("edge_case").is_some_and(|e| !e.is_null()))
        .count();
    let codes = |code: &str| findings.iter().filter(|f| f.code == code).count();
    errln!("\nELICIT: Quality Validation\n\n1. Coverage analysis:");
    errln!("   - Query type distribution: {}", count("query_type"));
    errln!("   - Difficulty distribution: {}", count("difficulty"));
    errln!(
        "   - Edge case coverage: {with_edge} of {} pairs (categories asked for: {})",
        pairs.len(),
        if edge_cases.is_empty() {
            "none".to_string()
        } else {
            edge_cases.join(", ")
        }
    );
    errln!("\n2. Quality metrics:");
    errln!(
        "   - Duplicate queries detected: {} left (DUPLICATE_QUERIES); {dropped} near-duplicate(s) already dropped",
        codes("DUPLICATE_QUERIES")
    );
    errln!("   - Answers without context: {}", codes("MISSING_CONTEXT"));
    errln!(
        "   - Very short answers (<10 words): {}",
        codes("SHORT_ANSWER")
    );
    errln!(
        "   - Missing source references: {}",
        codes("MISSING_SOURCE_DOCS")
    );
    errln!("\n3. Issues found: {}", findings.len());
    for f in findings.iter().take(20) {
        errln!(
            "   {} {}: {}",
            f.code,
            if f.line > 0 {
                format!("pair {}", f.line)
            } else {
                "dataset".into()
            },
            f.message
        );
    }
}

pub(super) fn write(path: &Path, text: &str) -> Result<(), Failure> {
    eval_datasets::files::write_atomically(path, text.as_bytes())
        .map_err(|e| Failure::config(format!("cannot write {}: {e}", path.display())))
}

/// `part` of `whole` in percent, rounded half up on whole numbers
/// (5 of 12 is 42).
pub(super) fn percent(part: usize, whole: usize) -> usize {
    if whole == 0 {
        return 0;
    }
    (part * 200 + whole) / (2 * whole)
}

/// The duplicates, under the names the stats file gives them: dropped
/// while the dataset was made (`creation.near_duplicates_dropped`), and
/// left in it (`quality.findings.DUPLICATE_QUERIES`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Duplicates {
    pub dropped: usize,
    pub left: usize,
}

/// What the bundle is: its name, the records written, the files (the
/// JSONL first), the dataset read back and its statistics.
pub(super) struct Bundle {
    pub name: String,
    pub records: Vec<Map<String, Value>>,
    pub files: Vec<PathBuf>,
    pub dataset: Dataset,
    pub stats: DatasetStats,
}

/// `created_at` of this run's records: now, `YYYY-MM-DDTHH:MM:SSZ`.
fn now_rfc3339() -> String {
    let s = eval_datasets::files::utc_stamp(std::time::SystemTime::now());
    // `YYYYMMDDTHHMMSSZ`
    match (s.len(), s.get(0..4), s.get(4..6), s.get(6..8)) {
        (16, Some(y), Some(m), Some(d)) => {
            format!("{y}-{m}-{d}T{}:{}:{}Z", &s[9..11], &s[11..13], &s[13..15])
        }
        _ => s,
    }
}

/// Writes the bundle of `pairs` under `out_dir` as the next version of
/// `slug`'s dataset: every record with `metadata.version` (that number)
/// and `created_at` (one time for the run); `creation` goes to the stats
/// file. Runs into one folder at once each get a version of their own:
/// the version is picked and the bundle written under a lock.
pub(super) fn write_bundle(
    out_dir: &Path,
    slug: &str,
    pairs: &[Pair],
    mut creation: Value,
) -> Result<Bundle, crate::Failure> {
    std::fs::create_dir_all(out_dir)
        .map_err(|e| Failure::config(format!("cannot create {}: {e}", out_dir.display())))?;
    let lock_path = out_dir.join(format!(".{slug}-eval-dataset.lock"));
    let lock = eval_datasets::files::lock(&lock_path)
        .map_err(|e| Failure::config(format!("cannot lock {}: {e}", lock_path.display())))?;
    let version = (1..)
        .find(|v| {
            !out_dir
                .join(format!("{slug}-eval-dataset-v{v}.jsonl"))
                .exists()
        })
        .unwrap_or(1);
    let created_at = now_rfc3339();
    let name = format!("{slug}-eval-dataset-v{version}");
    let records: Vec<Map<String, Value>> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut r = golden(i, p);
            if let Some(Value::Object(m)) = r.get_mut("metadata") {
                m.insert("created_at".into(), Value::from(created_at.clone()));
                m.insert("version".into(), Value::from(version));
            }
            r
        })
        .collect();
    let jsonl = out_dir.join(format!("{name}.jsonl"));
    let csv = out_dir.join(format!("{name}.csv"));
    let guide = out_dir.join(format!("{slug}-annotation-guide.md"));
    let stats = out_dir.join(format!("{slug}-dataset-stats.json"));
    write(
        &jsonl,
        &eval_datasets::write::objects_to_jsonl(records.clone()),
    )?;
    let columns = [
        "id",
        "query",
        "ground_truth",
        "contexts",
        "source_docs",
        "metadata",
    ];
    let csv_text = eval_datasets::write::objects_to_csv(&records, &columns)
        .map_err(|e| Failure::config(format!("cannot write {}: {e}", csv.display())))?;
    write(&csv, &csv_text)?;
    let shown = jsonl.to_string_lossy().into_owned();
    let dataset = Dataset::load_as(&jsonl, &shown).map_err(|e| Failure::config(e.to_string()))?;
    let file_name = profile::dataset_name(&jsonl);
    let st = DatasetStats::of(&file_name, &dataset);
    let mut stats_json: Value = serde_json::from_str(&st.to_json()).unwrap_or(Value::Null);
    if let Some(c) = creation.as_object_mut() {
        c.insert("version".into(), Value::from(version));
        c.insert("created_at".into(), Value::from(created_at));
    }
    if let Some(o) = stats_json.as_object_mut() {
        o.insert("creation".into(), creation);
    }
    write(
        &stats,
        &format!(
            "{}\n",
            serde_json::to_string_pretty(&stats_json).unwrap_or_default()
        ),
    )?;
    write(&guide, &profile::guide(&file_name, &dataset, &st))?;
    drop(lock);
    Ok(Bundle {
        name,
        records,
        files: vec![jsonl, csv, guide, stats],
        dataset,
        stats: st,
    })
}

/// A category's label as seed 002's report shows it (`Multi-hop`).
fn label(key: &str) -> &str {
    match key {
        "unanswerable" => "Unanswerable",
        "ambiguous" => "Ambiguous",
        "multi_hop" => "Multi-hop",
        "temporal" => "Temporal",
        "contradictory" => "Contradictory",
        "out_of_scope" => "Out-of-scope",
        other => other,
    }
}

/// Seed 002's closing report.
pub(super) fn summary(
    name: &str,
    domain: &str,
    pairs: &[Pair],
    langsmith: &str,
    files: &[PathBuf],
    duplicates: Duplicates,
) {
    let n = pairs.len();
    let count = |key: &str, value: &str| {
        pairs
            .iter()
            .filter(|p| p.metadata.get(key).and_then(Value::as_str) == Some(value))
            .count()
    };
    let share = |key: &str, value: &str| {
        let k = count(key, value);
        format!("{k} ({}%)", percent(k, n))
    };
    outln!("Evaluation Dataset Created\n");
    outln!("Dataset:     {name}");
    outln!("Total Pairs: {n}");
    outln!("Domain:      {}", eval_datasets::terminal::escaped(domain));
    outln!("LangSmith:   {langsmith}\n");
    outln!("Distribution:");
    for (label, t) in [
        ("Factual", "factual"),
        ("Analytical", "analytical"),
        ("Procedural", "procedural"),
        ("Multi-hop", "multi_hop"),
    ] {
        outln!("  {:<13} {}", format!("{label}:"), share("query_type", t));
    }
    outln!("\nDifficulty:");
    for (label, d) in [("Easy", "easy"), ("Medium", "medium"), ("Hard", "hard")] {
        outln!("  {:<7} {}", format!("{label}:"), share("difficulty", d));
    }
    outln!("\nEdge Cases:");
    for e in EDGE_CASES {
        outln!(
            "  {:<15}{}",
            format!("{}:", label(e)),
            count("edge_case", e)
        );
    }
    outln!("\nDuplicates:");
    outln!(
        "  Dropped:  {} (near_duplicates_dropped)",
        duplicates.dropped
    );
    outln!("  Left:     {} (DUPLICATE_QUERIES)", duplicates.left);
    outln!("\nFiles Created:");
    let what = [
        "Full dataset (JSONL)",
        "Dataset (CSV export)",
        "Annotation guide",
        "Statistical summary",
    ];
    for (f, w) in files.iter().zip(what) {
        outln!("  {:<44} - {w}", f.display().to_string());
    }
    if let Some(jsonl) = files.first() {
        outln!("\nNext Steps:");
        outln!(
            "  1. Run `evals evaluate {} --url ...` to evaluate your RAG pipeline against this dataset",
            jsonl.display()
        );
        outln!("  2. Run `evals report accept` on the result to establish baseline metrics");
        outln!("  3. Review annotation guide and share with team annotators");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_half_up() {
        assert_eq!(percent(5, 12), 42);
        assert_eq!(percent(1, 8), 13);
        assert_eq!(percent(1, 3), 33);
        assert_eq!(percent(2, 3), 67);
        assert_eq!(percent(0, 0), 0);
        assert_eq!(percent(12, 12), 100);
    }

    #[test]
    fn created_at_is_rfc3339_utc() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(
            t.ends_with('Z') && &t[4..5] == "-" && &t[10..11] == "T",
            "{t}"
        );
    }
}
