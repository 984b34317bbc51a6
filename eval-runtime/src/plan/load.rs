//! A plan's datasets read: samples, test names, metric sets and gates,
//! checked before any agent call (seed 000's field table, metrics whose
//! judge is not configured, retrieval scopes).
//!
//! `--exact <dataset>::<sample>` (as `cargo nextest run` runs each test)
//! reads one record through the dataset's name index instead of the whole
//! file; every full load writes that index (`<results dir>/index/`).

use std::path::{Path, PathBuf};

use eval_datasets::metric::{MetricKind, MetricSpec};
use eval_datasets::retrieval::{RankMetric, RetrievalDataset};
use eval_datasets::{Dataset, Sample, index, naming};
use serde_json::Value;

use super::build::all_gates;
use super::read::{Read, apply_plan, digest, held};
use super::samples::{Names, Samples};
use super::{DatasetPlan, DatasetSource, Metrics, Plan, PlanError};
use crate::output::Gate;
use crate::services::Services;

/// One dataset of a plan, read.
#[derive(Debug)]
pub(crate) struct LoadedDataset {
    /// The plan it was read from.
    pub plan: DatasetPlan,
    /// The samples (of the plan's subset), in file order: held, or read
    /// again when they run ([`sample`](Self::sample)).
    pub samples: Samples,
    /// The sample part of each sample's test name.
    pub names: Names,
    /// The distinct metric sets its samples are scored with.
    pub spec_sets: Vec<Vec<MetricSpec>>,
    /// Per sample, its set in `spec_sets` (empty: all use set 0).
    pub spec_of: Vec<u32>,
    /// Some sample is a retrieval query.
    pub retrieval: bool,
    /// Some sample is not.
    pub ordinary: bool,
    /// Gates on its means (explicit, `ciGate`, its own thresholds).
    pub gates: Vec<Gate>,
    /// Samples the plan holds for it (more than `samples` when only one
    /// sample was read for `--exact`).
    pub planned: usize,
    /// Things worth saying that are not errors (thresholds not checked).
    pub notes: Vec<String>,
    /// SHA-256 of the dataset file's bytes (of the samples, for inline
    /// ones), when known.
    pub sha256: Option<String>,
    /// What the dataset says it is, for report headers.
    pub description: Option<String>,
}

impl LoadedDataset {
    /// The dataset as messages name it: its file as written, else `inline`.
    pub(crate) fn shown(&self) -> String {
        match &self.plan.source {
            DatasetSource::File { shown, .. } => shown.clone(),
            DatasetSource::Embedded { shown, .. } => shown.to_string(),
            DatasetSource::Samples(_) => "inline".into(),
        }
    }

    /// `sample`'s cluster: the value of the field the plan clusters by.
    pub(crate) fn cluster_of(&self, sample: &Sample) -> Option<String> {
        self.plan
            .cluster
            .as_deref()
            .and_then(|field| super::cluster_value(sample, field))
    }

    /// Sample `i`, as the plan has it (its tools added); read from its
    /// file when it is not held. An error says why it cannot be read.
    pub(crate) fn sample(&self, i: usize) -> Result<std::borrow::Cow<'_, Sample>, String> {
        let sample = self.samples.get(i)?;
        if let Samples::OnDisk(_) = self.samples {
            let mut sample = sample.into_owned();
            apply_plan(&self.plan, &mut sample);
            return Ok(std::borrow::Cow::Owned(sample));
        }
        Ok(sample)
    }

    /// The metrics of sample `i`.
    pub(crate) fn specs(&self, i: usize) -> &[MetricSpec] {
        let set = self.spec_of.get(i).map_or(0, |s| *s as usize);
        self.spec_sets.get(set).map_or(&[], Vec::as_slice)
    }

    /// The metrics its samples are asked, as written (each once, in
    /// first-seen order), and whether they depend on the sample (its own
    /// evaluators, or the dataset's own metrics by kind of sample) rather
    /// than being the metrics given for every sample.
    pub(crate) fn asked(&self) -> (Vec<crate::model::WrittenMetric>, bool) {
        let mut written: Vec<crate::model::WrittenMetric> = Vec::new();
        for spec in self.spec_sets.iter().flatten() {
            let w = crate::model::WrittenMetric::of(spec);
            if !written.contains(&w) {
                written.push(w);
            }
        }
        let given = matches!(
            &self.plan.metrics,
            Metrics::Given(given) if self.spec_sets.iter().all(|set| set == given)
        );
        (written, !given)
    }
}

/// Builds `builder`'s plan and reads its datasets, reporting every problem
/// of both at once (a pattern matching nothing and a bad line of another dataset).
pub(crate) fn prepare(
    builder: &super::PlanBuilder,
    config: &crate::config::Config,
    services: &Services,
    exact: Option<&str>,
    index_dir: Option<&Path>,
) -> Result<(Plan, Vec<LoadedDataset>), PlanError> {
    let (plan, mut problems) = builder.build_lenient(config);
    match load(&plan, services, exact, index_dir) {
        Ok(loaded) if problems.is_empty() => Ok((plan, loaded)),
        Ok(_) => Err(PlanError::new(problems)),
        Err(e) if plan.datasets.is_empty() && !problems.is_empty() => {
            // Nothing was left to load: "no sample selected" says nothing new.
            let _ = e;
            Err(PlanError::new(problems))
        }
        Err(mut e) => {
            problems.append(&mut e.problems);
            Err(PlanError::new(problems))
        }
    }
}

/// Reads every dataset of `plan`, reporting every problem. With `exact` (a
/// full test name) and an `index_dir`, the one sample is read through the
/// index when it can be, and the other datasets are not read at all.
pub(crate) fn load(
    plan: &Plan,
    services: &Services,
    exact: Option<&str>,
    index_dir: Option<&Path>,
) -> Result<Vec<LoadedDataset>, PlanError> {
    // A cassette that cannot be used is refused before any agent is called.
    if let Some(cassette) = &services.cassette {
        cassette
            .check()
            .map_err(|e| PlanError::new(vec![e.to_string()]))?;
    }
    if let (Some(name), Some(dir)) = (exact, index_dir)
        && let Some(one) = load_exact(plan, services, name, dir)
    {
        return Ok(vec![one]);
    }
    let mut problems = Vec::new();
    let mut loaded = Vec::new();
    let mut unselected = Vec::new();
    for d in &plan.datasets {
        match load_one(d, services, index_dir, &plan.base_dir) {
            Ok(l) if l.samples.len() == 0 => unselected.push(l.plan.name),
            Ok(l) => loaded.push(l),
            Err(mut e) => problems.append(&mut e),
        }
    }
    if !problems.is_empty() {
        return Err(PlanError::new(problems));
    }
    if loaded.is_empty() {
        let subset = plan.datasets.first().map(|d| &d.subset);
        let mut why = Vec::new();
        if let Some(s) = subset {
            if !s.tags.is_empty() {
                let plural = if s.tags.len() > 1 { "s" } else { "" };
                why.push(format!("tag{plural} {}", s.tags.join(" and ")));
            }
            if s.sample_size == Some(0) {
                why.push("sample size 0".into());
            }
            if s.max == Some(0) {
                why.push("at most 0 samples".into());
            }
        }
        return Err(PlanError::new(vec![format!(
            "no sample selected{}: nothing to evaluate",
            if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join(", "))
            }
        )]));
    }
    for name in unselected {
        if let Some(first) = loaded.first_mut() {
            first.notes.push(format!(
                "no sample of `{name}` selected; it is not evaluated"
            ));
        }
    }
    Ok(loaded)
}

/// The dataset's samples as the file (or the attribute's bytes) holds them.
/// The samples of `d`, and its description (a manifest's or a suite's,
/// else what the file says it is).
fn read(d: &DatasetPlan) -> Result<(Vec<Sample>, Option<String>), Vec<String>> {
    let dataset = match &d.source {
        DatasetSource::File { path, shown } => {
            Dataset::load_limited(path, shown, d.max_dataset_bytes)
        }
        DatasetSource::Embedded { shown, bytes } => Dataset::from_bytes(shown, bytes),
        DatasetSource::Samples(samples) => return Ok((samples.clone(), None)),
    };
    let dataset = dataset.map_err(|e| e.problems())?;
    if let Some(m) = &d.manifest {
        m.check_fields(&dataset).map_err(|e| e.problems())?;
    }
    let description = d
        .manifest
        .as_ref()
        .and_then(|m| m.description.clone())
        .or(dataset.description);
    Ok((dataset.samples, description))
}

fn load_one(
    d: &DatasetPlan,
    services: &Services,
    index_dir: Option<&Path>,
    base: &Path,
) -> Result<LoadedDataset, Vec<String>> {
    if let DatasetSource::File { path, shown } = &d.source
        && let Some(streamed) = super::streamed::load(d, path, shown, index_dir)
    {
        let loaded = streamed?;
        return finish(d, loaded, services, base);
    }
    let (mut samples, description) = read(d)?;
    let mut names = naming::test_names(&samples);
    let sha256 = digest(d, &samples);
    if let (Some(dir), DatasetSource::File { path, .. }) = (index_dir, &d.source)
        && let Ok(idx) = index::path_for(dir, path)
        && !idx.exists()
    {
        // A cache: failing to write it only costs speed later.
        let _ = index::write(&idx, &samples, &names, sha256.as_deref());
    }
    if !d.subset.is_all() {
        let keep = d.subset.pick(&samples);
        let mut all: Vec<Option<(Sample, String)>> =
            samples.into_iter().zip(names).map(Some).collect();
        (samples, names) = keep.into_iter().filter_map(|i| all[i].take()).unzip();
    }
    let planned = samples.len();
    let names = Names::of(names).ok_or_else(|| super::samples::too_long(&shown(d)))?;
    let read = held(d, samples, names, planned);
    let mut loaded = finish(d, read, services, base)?;
    loaded.sha256 = sha256;
    loaded.description = description;
    Ok(loaded)
}

/// The metric sets, gates and retrieval permissions of loaded samples.
fn finish(
    d: &DatasetPlan,
    read: Read,
    services: &Services,
    base: &Path,
) -> Result<LoadedDataset, Vec<String>> {
    let mut problems = Vec::new();
    let mut notes: Vec<String> = d.manifest.iter().flat_map(|m| m.notes.clone()).collect();
    let evaluators = read.specs.evaluators;
    let kept = read.specs.kept;
    // issue38:runevals: a runevals file naming no evaluators, said so.
    let defaults = read.specs.defaults;
    if defaults > 0 {
        let names: Vec<&str> = read
            .specs
            .default_names
            .iter()
            .map(String::as_str)
            .collect();
        notes.push(eval_datasets::runevals::default_note(
            &shown(d),
            &names,
            defaults,
        ));
    }
    let (mut spec_sets, spec_of) = read.specs.finish(&mut problems);
    if let Metrics::Given(specs) = &d.metrics {
        if evaluators {
            notes.push(added_note(d, specs, kept));
        } else {
            // Every sample has them (and so does a dataset none was picked of).
            spec_sets = vec![specs.clone()];
        }
    }
    let spec_of = if spec_sets.len() == 1 {
        Vec::new()
    } else {
        spec_of
    };
    for spec in spec_sets.iter_mut().flatten() {
        if let Err(e) = read_rubric_file(spec, base) {
            problems.push(e);
        }
        // a scorer runs where relative paths start.
        crate::metrics::exec::settle_dir(spec, base);
        // a schema read and compiled once, before any agent call
        if let Err(e) = crate::metrics::json::prepare(spec, base) {
            problems.push(e);
        }
        if let Err(e) = crate::metrics::judged::geval::read_criteria_file(spec, base) {
            problems.push(e);
        }
    }
    for spec in spec_sets.iter().flatten() {
        if let Some(reason) = crate::metrics::judged::unavailable(spec, services)
            && !problems.contains(&reason)
        {
            // issue38:runevals: the default dimensions say why they are there.
            let why = eval_datasets::runevals::default_needs_judge(&shown(d));
            if defaults > 0 && !problems.contains(&why) {
                problems.push(why);
            }
            problems.push(reason);
        }
    }
    let mut dataset_gates = Vec::new();
    if read.retrieval {
        match retrieval_dataset(d) {
            Some(Ok(rd)) => {
                if let Err(e) = rd.check_scope(d.allow_custom_prefix) {
                    problems.push(e.to_string());
                }
                let union: Vec<&MetricSpec> = spec_sets.iter().flatten().collect();
                (dataset_gates, notes) = threshold_gates(&rd, &union);
            }
            Some(Err(e)) => problems.extend(e.problems()),
            None => {}
        }
    }
    let what = shown(d);
    let thresholds = (d.ci_gate && d.threshold_gates, d.enforce_thresholds);
    let gates = all_gates(&d.gates, thresholds, &spec_sets, dataset_gates, &what)
        .map_err(|mut e| problems.append(&mut e));
    // a `pass@k` gate needs k runs of each sample.
    if let Ok(gates) = &gates {
        problems.extend(crate::plan::runs_needed(gates, d.repeat, &what));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let gates = gates.unwrap_or_default();
    Ok(LoadedDataset {
        plan: d.clone(),
        samples: read.samples,
        names: read.names,
        retrieval: read.retrieval,
        ordinary: read.ordinary,
        spec_sets,
        spec_of,
        gates,
        planned: read.planned,
        notes,
        sha256: read.sha256,
        description: read.description,
    })
}

/// A `rubric(rubric_file = "...")` spec with its file read, once, here
/// (relative to `base`): its text is what the judge sees for every sample.
fn read_rubric_file(spec: &mut MetricSpec, base: &Path) -> Result<(), String> {
    use eval_datasets::metric::JudgedMetric;
    let MetricKind::Judged(JudgedMetric::Rubric {
        text: None,
        file: Some(file),
    }) = &spec.kind
    else {
        return Ok(());
    };
    let path = base.join(file);
    let content = eval_datasets::files::read_text(&path, eval_datasets::files::PROMPT_MAX_BYTES)
        .map_err(|e| {
            format!(
                "rubric_file `{file}` of metric `{}`: cannot read {}: {e}",
                spec.name,
                path.display()
            )
        })?;
    spec.kind = MetricKind::Judged(JudgedMetric::Rubric {
        text: Some(content),
        file: None,
    });
    Ok(())
}

/// What every front end says when metrics are given for a file whose items
/// name their own evaluators: one rule, never silent.
fn added_note(d: &DatasetPlan, given: &[MetricSpec], kept: usize) -> String {
    let names: Vec<&str> = given.iter().map(|s| s.name.as_str()).collect();
    let mut note = format!(
        "{}: its items' own evaluators are scored, and the metrics given ({}) are added to them",
        shown(d),
        names.join(", ")
    );
    if kept > 0 {
        note.push_str(&format!(
            "; where the file already sets a metric of the same name ({kept} item(s)), its own setting is kept"
        ));
    }
    note
}

/// The dataset as messages name it.
fn shown(d: &DatasetPlan) -> String {
    match &d.source {
        DatasetSource::File { shown, .. } => shown.clone(),
        DatasetSource::Embedded { shown, .. } => shown.to_string(),
        DatasetSource::Samples(_) => format!("dataset `{}`", d.name),
    }
}

/// The Unrag dataset a retrieval query came from, parsed again for its
/// document-level settings (`defaults.thresholds`, the scope).
fn retrieval_dataset(
    d: &DatasetPlan,
) -> Option<Result<RetrievalDataset, eval_datasets::DatasetError>> {
    Some(match &d.source {
        DatasetSource::File { path, shown } => {
            RetrievalDataset::load_limited(path, shown, d.max_dataset_bytes)
        }
        DatasetSource::Embedded { shown, bytes } => RetrievalDataset::from_bytes(shown, bytes),
        DatasetSource::Samples(_) => return None,
    })
}

/// Gates from a retrieval dataset's `defaults.thresholds` (`{"min":
/// {"recallAtK": 0.75}, "max": {"p95TotalMs": 800}}`, Unrag's names): the
/// means of the rank metrics scored, and Unrag's latency threshold
/// `max.p95TotalMs` — the 95th percentile of each query's total time
/// (retrieve, plus rerank in `retrieve+rerank` mode, which is what the
/// retriever call takes here) — as `p95(latency_ms) <= t`, with Unrag's
/// quantile definition (see [`eval_datasets::metric::percentile`]). Notes on
/// thresholds this tool does not check.
fn threshold_gates(dataset: &RetrievalDataset, specs: &[&MetricSpec]) -> (Vec<Gate>, Vec<String>) {
    let mut gates = Vec::new();
    let mut notes = Vec::new();
    for (side, op) in [
        ("min", eval_datasets::Op::AtLeast),
        ("max", eval_datasets::Op::AtMost),
    ] {
        let Some(list) = dataset.thresholds.get(side).and_then(Value::as_object) else {
            continue;
        };
        for (metric, value) in list {
            if side == "max"
                && metric == "p95TotalMs"
                && let Some(t) = value.as_f64().filter(|t| *t >= 0.0)
            {
                gates.push(
                    Gate::new("latency_ms", op, t)
                        .with_stat(eval_datasets::metric::Stat::Percentile(95)),
                );
                continue;
            }
            let (Some(rank), Some(t)) = (RankMetric::parse(metric), value.as_f64()) else {
                notes.push(format!(
                    "{}: defaults.thresholds.{side}.{metric} is not a rank metric threshold; not checked",
                    dataset.path
                ));
                continue;
            };
            let name = rank.name().replace("@k", "_at_k");
            if specs
                .iter()
                .any(|s| s.name == name || s.canonical_name() == name)
            {
                gates.push(Gate::new(&name, op, t));
            } else {
                notes.push(format!(
                    "{}: defaults.thresholds.{side}.{metric}: `{name}` is not among the metrics scored; not checked",
                    dataset.path
                ));
            }
        }
    }
    (gates, notes)
}

/// `--exact <prefix>::<sample>`: the one sample, found through its dataset's
/// index and read alone. `None` when there is no usable index (the caller
/// then loads everything, which also reports any problem).
fn load_exact(plan: &Plan, services: &Services, name: &str, dir: &Path) -> Option<LoadedDataset> {
    let (prefix, sample) = name.split_once("::")?;
    let d = plan.datasets.iter().find(|d| d.name == prefix)?;
    let DatasetSource::File { path, shown } = &d.source else {
        return None;
    };
    // The dataset's own metrics (and their `ciGate` gates) depend on every
    // sample: only a full load knows them. So do a runevals document's
    // (`.json`, read whole anyway): its items' evaluators join given metrics.
    let json = eval_datasets::Format::from_path(shown).ok() == Some(eval_datasets::Format::Json);
    if !d.subset.is_all() || d.metrics == Metrics::Own || json {
        return None;
    }
    let idx: PathBuf = index::path_for(dir, path).ok()?;
    let entry = index::lookup(&idx, sample).ok()??;
    let one = Dataset::load_record_limited(path, shown, &entry, d.max_dataset_bytes).ok()?;
    // The record must still be the sample the index named (a same-size edit
    // within one mtime tick, or other naming rules, make it stale).
    let s = &one.samples[0];
    let fresh = entry.name.starts_with(&naming::sample_key(s))
        && entry.name.ends_with(&naming::tag_suffix(s));
    if !fresh {
        let _ = std::fs::remove_file(&idx);
        return None;
    }
    // A manifest's field rules: a failing sample goes through the full load,
    // which reports it.
    if let Some(m) = &d.manifest
        && m.check_fields(&one).is_err()
    {
        return None;
    }
    let planned = index::len(&idx).ok()?;
    let mut read = held(d, one.samples, Names::of([entry.name])?, planned);
    read.sha256 = index::digest_of(&idx).ok().flatten();
    finish(d, read, services, &plan.base_dir).ok()
}

/// Seed 004: ingest deletes every document under a retrieval dataset's
/// scope. Outside `eval:` that needs `allow_custom_prefix` in the dataset's
/// declaration *and* a confirmation outside it, since no prompt is possible
/// in a test: the scope named in `confirmed` (`EVAL_DELETE_SCOPES`). The
/// problem for each custom scope not confirmed.
pub(crate) fn unconfirmed_scopes(datasets: &[LoadedDataset], confirmed: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for d in datasets.iter().filter(|d| d.plan.allow_custom_prefix) {
        let mut scopes: Vec<String> = Vec::new();
        for i in 0..d.samples.len() {
            match d.sample(i) {
                Ok(s) => scopes.extend(
                    s.retrieval
                        .as_ref()
                        .map(|q| q.scope_prefix.clone())
                        .filter(|p| !eval_datasets::retrieval::scope_is_safe(p))
                        .filter(|p| !confirmed.iter().any(|c| c == p)),
                ),
                Err(e) => problems.push(e),
            }
        }
        scopes.sort_unstable();
        scopes.dedup();
        for scope in scopes {
            problems.push(format!(
                "{}: ingest would delete every document under scope `{scope}` (outside `eval:`); `allow_custom_prefix` allows it, and no prompt is possible here: confirm with EVAL_DELETE_SCOPES={scope} (nothing was deleted)",
                d.shown()
            ));
        }
    }
    problems
}
