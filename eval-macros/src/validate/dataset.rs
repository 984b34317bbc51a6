//! The attribute's dataset, checked: where it is (inside the project), how
//! it is named (a path, or a manifest and one of its datasets), and what it
//! holds (samples left to test, a retrieval dataset's scope, its own
//! metrics and gates).

use std::path::PathBuf;

use eval_datasets::metric::Stat;
use eval_datasets::{Dataset, DatasetError, ManifestDataset};
use proc_macro2::Span;
use syn::LitStr;

use super::CheckedMetric;
use crate::parse::Input;

/// What the attribute's nodes and the manifest's dataset settle between
/// them, filled in as they are checked.
pub(super) struct Found {
    pub(super) metrics: Vec<CheckedMetric>,
    pub(super) gates: Vec<(Span, (Stat, CheckedMetric))>,
    pub(super) ci_gate: bool,
    pub(super) enforce_thresholds: bool,
    pub(super) threshold_gates: bool,
    pub(super) model: Option<String>,
    pub(super) notes: Vec<String>,
    pub(super) subset: Option<eval_datasets::Subset>,
    pub(super) tracked: Vec<String>,
    pub(super) repeat: Option<eval_datasets::Repeat>,
}

/// Where the attribute's paths are read from, and which they may name.
pub(super) struct Place {
    pub(super) manifest_dir: PathBuf,
    /// The project: the nearest directory with `.git`.
    root: PathBuf,
    pub(super) allow_outside: bool,
}

impl Place {
    pub(super) fn of(input: &Input) -> Place {
        let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_default();
        // Paths stay inside the project, as a manifest's `$file:` paths do.
        let allow_outside = input.allow_outside.as_ref().is_some_and(|b| b.value);
        let root = eval_datasets::manifest::project_root(&manifest_dir);
        Place {
            manifest_dir,
            root,
            allow_outside,
        }
    }

    /// Whether `written` is inside the project (or may be outside); an error
    /// at `span` if not.
    pub(super) fn inside(&self, written: &str, errors: &mut Vec<syn::Error>, span: Span) -> bool {
        if self.allow_outside {
            return true;
        }
        match eval_datasets::files::contained(&self.root, &self.manifest_dir.join(written)) {
            Err(eval_datasets::files::ContainmentError::Outside {
                resolved,
                root,
                symlink,
            }) => {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "{written}: resolves to {}{}, outside the project {}/ (the nearest directory with .git at or above the crate): keep datasets inside it, or add `allow_outside = true` if that is intended",
                        resolved.display(),
                        if symlink { " (through a symlink)" } else { "" },
                        root.display()
                    ),
                ));
                false
            }
            // A missing file is reported when it is read.
            _ => true,
        }
    }
}

/// The dataset as named: the path as written, the file, the dataset read
/// (`None` when it could not be named), and the span problems point at.
pub(super) struct Source {
    pub(super) shown_path: String,
    pub(super) abs: PathBuf,
    pub(super) loaded: Option<Result<Dataset, DatasetError>>,
    pub(super) span: Span,
}

/// The dataset path, or the manifest and its dataset (whose settings join
/// `found`).
pub(super) fn source(
    input: &Input,
    place: &Place,
    found: &mut Found,
    errors: &mut Vec<syn::Error>,
) -> Source {
    match (&input.path, &input.manifest) {
        (Some(path), Some(_)) => {
            errors.push(syn::Error::new(
                path.span(),
                "give a dataset path or `manifest = ...` with `dataset = ...`, not both",
            ));
            nothing(path.span())
        }
        (Some(path), None) => {
            if let Some(d) = &input.dataset {
                errors.push(syn::Error::new(
                    d.span(),
                    "`dataset = ...` names a dataset of a manifest: add `manifest = \"agent.yaml\"`",
                ));
            }
            let shown = path.value();
            let abs = place.manifest_dir.join(&shown);
            let loaded = place
                .inside(&shown, errors, path.span())
                .then(|| Dataset::load_as(&abs, &shown));
            Source {
                shown_path: shown,
                abs,
                loaded,
                span: path.span(),
            }
        }
        (None, Some(manifest)) => {
            let file = place.manifest_dir.join(manifest.value());
            found.tracked.push(file.to_string_lossy().into_owned());
            match manifest_dataset(input, manifest, &file, place, errors) {
                Ok((manifest_repeat, manifest_gate, d)) => {
                    take_manifest_dataset(
                        &d,
                        manifest_repeat,
                        manifest_gate,
                        manifest.span(),
                        found,
                    );
                    Source {
                        shown_path: d.shown.clone(),
                        abs: d.file.clone(),
                        loaded: Some(d.load()),
                        span: manifest.span(),
                    }
                }
                Err(problems) => {
                    for p in problems {
                        errors.push(syn::Error::new(manifest.span(), p));
                    }
                    nothing(manifest.span())
                }
            }
        }
        (None, None) => unreachable!("parse requires a path or a manifest"),
    }
}

/// No dataset (its problems reported).
fn nothing(span: Span) -> Source {
    Source {
        shown_path: String::new(),
        abs: PathBuf::new(),
        loaded: None,
        span,
    }
}

/// The manifest's dataset the attribute names (or its only one), with the
/// manifest's `repeat` and `ciGate`; the problems if there is none.
fn manifest_dataset(
    input: &Input,
    manifest: &LitStr,
    file: &std::path::Path,
    place: &Place,
    errors: &mut Vec<syn::Error>,
) -> Result<(eval_datasets::Repeat, bool, ManifestDataset), Vec<String>> {
    match &input.dataset {
        // A manifest of one dataset (a letta suite) needs no name.
        None if place.inside(&manifest.value(), errors, manifest.span()) => {
            eval_datasets::Manifest::load_with(
                file,
                &manifest.value(),
                &place.root,
                place.allow_outside,
            )
            .map_err(|e| e.problems())
            .and_then(|m| match m.datasets.as_slice() {
                [one] => Ok((m.repeat, m.ci_gate, one.clone())),
                many => Err(vec![format!(
                    "name the manifest's dataset to test: `dataset = \"...\"` (it has {})",
                    many.iter()
                        .map(|d| d.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )]),
            })
        }
        None => Err(Vec::new()),
        Some(_) if !place.inside(&manifest.value(), errors, manifest.span()) => Err(Vec::new()),
        Some(name) => eval_datasets::Manifest::load_with(
            file,
            &manifest.value(),
            &place.root,
            place.allow_outside,
        )
        .and_then(|m| {
            m.dataset(&name.value())
                .cloned()
                .map(|d| (m.repeat, m.ci_gate, d))
        })
        .map_err(|e| e.problems()),
    }
}

/// A manifest's dataset settles the run: its metrics and gates, its
/// thresholds gating the means, its samples, notes and files.
fn take_manifest_dataset(
    d: &ManifestDataset,
    manifest_repeat: eval_datasets::Repeat,
    manifest_gate: bool,
    span: Span,
    found: &mut Found,
) {
    if found.repeat.is_none() {
        found.repeat = Some(manifest_repeat);
    }
    // Seed 000: a manifest's thresholds gate the means, and
    // fail the run only under `ciGate: true`.
    found.enforce_thresholds = found.ci_gate || manifest_gate;
    found.ci_gate = true;
    // A letta suite: its gate decides, its graders are scored.
    found.threshold_gates = d.threshold_gates;
    found.model = d.model.clone();
    for g in &d.gates {
        let (name, options, bound) = g.spec.decl_parts();
        let named = (g.spec.name != name).then(|| g.spec.name.clone());
        found.gates.push((
            span,
            (
                g.stat,
                CheckedMetric {
                    name,
                    options,
                    bound,
                    named,
                },
            ),
        ));
    }
    if found.subset.is_none() && !d.subset.is_all() {
        found.subset = Some(d.subset.clone());
    }
    found.notes.extend(d.notes.iter().cloned());
    found
        .tracked
        .extend(d.tracked.iter().map(|f| f.to_string_lossy().into_owned()));
    for spec in &d.specs {
        let (name, options, bound) = spec.decl_parts();
        let named = (spec.name != name).then(|| spec.name.clone());
        found.metrics.push(CheckedMetric {
            name,
            options,
            bound,
            named,
        });
    }
}

/// What the dataset's samples settle: the tests (one per sample tested),
/// the metrics the dataset names itself (a runevals file's evaluators), and
/// whether it has gates of its own (a retrieval dataset's thresholds).
#[derive(Default)]
pub(super) struct Samples {
    pub(super) test_names: Vec<String>,
    pub(super) own: Vec<String>,
    pub(super) own_gates: bool,
}

/// The dataset read: its problems, or its samples checked.
pub(super) fn check_samples(
    input: &Input,
    place: &Place,
    source: &Source,
    found: &Found,
    errors: &mut Vec<syn::Error>,
) -> Samples {
    match &source.loaded {
        None => Samples::default(),
        Some(Ok(ds)) => check_loaded(input, ds, source, found.subset.as_ref(), errors),
        Some(Err(err)) => {
            let hint = match err {
                DatasetError::Io { .. } => format!(
                    " (paths are relative to the crate's directory, CARGO_MANIFEST_DIR = {})",
                    place.manifest_dir.display()
                ),
                _ => String::new(),
            };
            for problem in err.problems() {
                errors.push(syn::Error::new(source.span, format!("{problem}{hint}")));
            }
            Samples::default()
        }
    }
}

/// The metrics a dataset names itself (a runevals file's evaluators).
fn own_metrics(ds: &Dataset) -> Vec<String> {
    let mut own: Vec<String> = Vec::new();
    for s in &ds.samples {
        // issue38:runevals: a file naming no evaluators has the
        // default dimensions, as in every front end.
        let defaults = eval_datasets::runevals::default_evaluators(s);
        for evaluators in std::iter::once(&s.evaluators)
            .chain(&s.turn_evaluators)
            .chain(std::iter::once(&defaults))
        {
            let specs = eval_datasets::runevals::specs(evaluators).unwrap_or_default();
            own.extend(specs.into_iter().map(|spec| spec.name));
        }
    }
    own.sort();
    own.dedup();
    own
}

/// A dataset that loaded: something to score it with, a retrieval
/// dataset's scope, the samples left to test.
fn check_loaded(
    input: &Input,
    ds: &Dataset,
    source: &Source,
    subset: Option<&eval_datasets::Subset>,
    errors: &mut Vec<syn::Error>,
) -> Samples {
    let shown_path = &source.shown_path;
    let own = own_metrics(ds);
    let retrieval = ds.samples.iter().any(|s| s.retrieval.is_some());
    if input.manifest.is_none() && input.metrics.is_empty() && own.is_empty() && !retrieval {
        errors.push(syn::Error::new(
            Span::call_site(),
            format!(
                "no metrics to check: {shown_path} names no evaluators of its own; add e.g. `metrics(contains >= 1.0, partial_match >= 0.5)`"
            ),
        ));
    }
    // A retrieval dataset's own thresholds gate its means.
    let own_gates = retrieval
        && eval_datasets::files::read_checked(
            &source.abs,
            eval_datasets::files::DEFAULT_MAX_DATASET_BYTES,
        )
        .ok()
        .and_then(|bytes| {
            eval_datasets::retrieval::RetrievalDataset::from_bytes(shown_path, &bytes).ok()
        })
        .is_some_and(|rd| !rd.thresholds.is_empty());
    // seed 004: a retrieval dataset's ingest deletes its scope.
    let allowed = input.allow_custom_prefix.as_ref().is_some_and(|b| b.value);
    if let Some(q) = ds.samples.first().and_then(|s| s.retrieval.as_ref())
        && !allowed
        && !q.scope_is_allowed()
    {
        let prefix = &q.scope_prefix;
        errors.push(syn::Error::new(
            source.span,
            format!(
                "{shown_path}: scopePrefix `{prefix}` {}: ingest deletes every document under it; add `allow_custom_prefix = true` if that is intended",
                eval_datasets::retrieval::scope_problem(prefix)
            ),
        ));
    }
    let mut test_names = ds.test_names();
    // Only the samples the run is about get a test (the runtime
    // picks the same ones by the same rule).
    if let Some(subset) = subset {
        let keep = subset.pick(&ds.samples);
        test_names = keep.into_iter().map(|i| test_names[i].clone()).collect();
        if test_names.is_empty() {
            errors.push(syn::Error::new(
                source.span,
                format!("{shown_path}: no sample is left by `sample_tags`/`max_samples`"),
            ));
        }
    }
    Samples {
        test_names,
        own,
        own_gates,
    }
}
