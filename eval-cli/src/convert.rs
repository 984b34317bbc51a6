//! `evals convert` (JSONL ↔ CSV ↔ runevals JSON) and `evals upgrade`
//! (legacy runevals → versioned, after a timestamped backup).

use std::path::{Path, PathBuf};

use eval_datasets::{Dataset, Sample, files, runevals, write};

use crate::Failure;
use crate::convert_names::SourceNames;

/// Flags of `evals convert`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The dataset to read (.jsonl, .csv, .json).
    pub input: PathBuf,
    /// The file to write; its extension picks the format (.jsonl, .csv, or .json for runevals).
    pub output: PathBuf,
    /// Replace OUTPUT if it exists (a backup is written first).
    #[arg(long)]
    pub force: bool,
    /// The schemaVersion of a runevals output (default: the source's own when
    /// it is a runevals document, else the current one). JSONL and CSV have no
    /// place for it: give it back on a runevals → JSONL → runevals round trip.
    #[arg(long, value_name = "1.x.y")]
    pub schema_version: Option<String>,
    /// A runevals file that names no evaluators is scored on runevals'
    /// default dimensions (relevance, coherence, similarity, groundedness):
    /// write them as each sample's `evaluators` in JSONL or CSV, which have
    /// no such rule, so the converted file is scored the same.
    #[arg(long)]
    pub keep_default_dimensions: bool,
}

/// Flags of `evals upgrade`.
#[derive(Debug, clap::Args)]
pub struct UpgradeArgs {
    /// A legacy runevals file (a bare array, or {prompts, expected_responses}).
    pub file: PathBuf,
}

fn ext(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

pub fn run(args: Args) -> Result<u8, Failure> {
    let shown = args.input.to_string_lossy().into_owned();
    let data = Dataset::load_limited(
        &args.input,
        &shown,
        eval_runtime::Config::max_dataset_bytes(),
    )
    .map_err(|e| Failure::config(e.to_string()))?;
    if data.samples.iter().any(|s| s.relevant_ids().is_some()) {
        return Err(Failure::config(format!(
            "{shown} is a retrieval dataset (Unrag): its documents have no place in JSONL, CSV or runevals files; nothing written"
        )));
    }
    // issue38:convert: the source's own field names, id types and version.
    let source_text = files::read_text(&args.input, eval_runtime::Config::max_dataset_bytes())
        .unwrap_or_default();
    let mut names = SourceNames::read(&ext(&args.input), &source_text);
    let asked = args.schema_version.is_some();
    if let Some(v) = args.schema_version.clone() {
        names.runevals_version = Some(v);
    }
    // runevals' default dimensions, written out where the format has no
    // file-wide rule for them (JSONL, CSV).
    let (samples, kept) = match ext(&args.output).as_str() {
        "json" => (data.samples, None),
        _ if args.keep_default_dimensions => keep_default_dimensions(data.samples),
        _ => {
            if let Some(warning) = default_dimensions_dropped(&data.samples, &shown) {
                errln!("warning: {warning}");
            }
            (data.samples, None)
        }
    };
    let (text, changed) = render(&samples, &args.output, &names, asked)?;
    // What was read must read back the same.
    let out_shown = args.output.to_string_lossy().into_owned();
    let back = Dataset::from_bytes(&out_shown, text.as_bytes())
        .map_err(|e| Failure::config(format!("the converted file would not read back: {e}")))?;
    let lost = differences(&samples, &back.samples);
    if !lost.is_empty() {
        return Err(Failure::config(format!(
            "{} cannot hold everything in {shown}; nothing written. What would be lost:\n{}",
            out_shown,
            lost.join("\n")
        )));
    }
    if args.output.exists() {
        if !args.force {
            return Err(Failure::config(format!(
                "{out_shown} exists; pass --force to replace it (a backup is kept)"
            )));
        }
        let backup = files::backup(&args.output)
            .map_err(|e| Failure::config(format!("cannot back up {out_shown}: {e}")))?;
        errln!("backup: {}", backup.display());
    }
    files::write_atomically(&args.output, text.as_bytes())
        .map_err(|e| Failure::config(format!("cannot write {out_shown}: {e}")))?;
    outln!("wrote {} samples to {out_shown}", back.samples.len());
    if let Some(note) = changed {
        outln!("note: {note}");
    }
    if let Some(note) = kept {
        outln!("note: {note}");
    }
    Ok(0)
}

/// What a conversion to JSONL or CSV without `--keep-default-dimensions`
/// changes of a runevals file scored on its default dimensions (`None`:
/// no sample is).
fn default_dimensions_dropped(samples: &[Sample], shown: &str) -> Option<String> {
    let n = samples.iter().filter(|s| s.runevals_defaults).count();
    (n > 0).then(|| {
        format!(
            "{shown} names no evaluators, so runevals scores its {n} item(s) on its default dimensions (relevance, coherence, similarity, groundedness); JSONL and CSV have no such rule, so the converted file is scored by its own defaults (partial_match with an expected answer): pass --keep-default-dimensions to write them as each sample's `evaluators`"
        )
    })
}

/// issue38:runevals — a runevals file that names no evaluators is scored on
/// runevals' default dimensions (`runevals::default_evaluators`), a rule of
/// the runevals format that JSONL and CSV do not have: each such sample
/// gets those evaluators written as its own `evaluators`, so the converted
/// file is scored on the same metrics. The samples, and a note saying so.
fn keep_default_dimensions(mut samples: Vec<Sample>) -> (Vec<Sample>, Option<String>) {
    let mut kept = 0;
    let mut names: Vec<String> = Vec::new();
    for s in samples.iter_mut().filter(|s| s.runevals_defaults) {
        let defaults = runevals::default_evaluators(s);
        for name in defaults.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        if s.evaluators.is_empty() && s.turn_evaluators.is_empty() {
            s.evaluators = defaults;
            kept += 1;
        }
        s.runevals_defaults = false;
    }
    let note = (kept > 0).then(|| {
        format!(
            "the source names no evaluators, so runevals scores it on its default dimensions; {kept} sample(s) carry them as their own `evaluators` ({}), so the converted file is scored the same (metrics given when it is evaluated are added to them)",
            names.join(", ")
        )
    });
    (samples, note)
}

/// The output text, and what it changed that the source said (a note).
fn render(
    samples: &[Sample],
    output: &Path,
    names: &SourceNames,
    asked: bool,
) -> Result<(String, Option<String>), Failure> {
    match ext(output).as_str() {
        "jsonl" | "ndjson" => Ok((
            write::objects_to_jsonl(samples.iter().map(|s| names.apply_jsonl(write::record(s)))),
            None,
        )),
        "csv" => {
            let lost = write::csv_losses(samples);
            if !lost.is_empty() {
                return Err(Failure::config(format!(
                    "CSV cannot hold everything; nothing written. What would be lost:\n{}",
                    lost.join("\n")
                )));
            }
            let records: Vec<_> = samples
                .iter()
                .map(|s| names.apply(write::record(s)))
                .collect();
            let columns: Vec<&str> = write::CSV_COLUMNS
                .iter()
                .map(|c| names.name(c))
                .filter(|c| records.iter().any(|r| r.contains_key(*c)))
                .collect();
            write::objects_to_csv(&records, &columns)
                .map(|t| (t, None))
                .map_err(|e| Failure::config(format!("cannot write CSV: {e}")))
        }
        "json" => render_runevals(samples, output, names, asked),
        other => Err(Failure::config(format!(
            "{}: unsupported output format `.{other}` (expected .jsonl, .csv or .json)",
            output.display()
        ))),
    }
}

/// issue38:convert — a runevals document of the source's own schemaVersion
/// (upgrading is `evals upgrade`'s job); the current one, said in a note,
/// when that version cannot hold the samples (an error when `asked` for by
/// `--schema-version`).
fn render_runevals(
    samples: &[Sample],
    output: &Path,
    names: &SourceNames,
    asked: bool,
) -> Result<(String, Option<String>), Failure> {
    let mut root = names.runevals_root.clone();
    if let Some(kept) = names.to_metadata() {
        let meta = root
            .entry("metadata")
            .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
        if let Some(m) = meta.as_object_mut() {
            m.insert(crate::convert_names::META_KEY.into(), kept);
        }
    }
    let pretty = |version: &str| {
        serde_json::to_string_pretty(&write::to_runevals_with(samples, version, root.clone()))
            .map(|t| t + "\n")
            .map_err(|e| Failure::config(e.to_string()))
    };
    let current = runevals::CURRENT_VERSION;
    let Some(own) = names.runevals_version.as_deref().filter(|v| *v != current) else {
        return Ok((pretty(current)?, None));
    };
    if !runevals_version_ok(own) {
        return Err(Failure::config(format!(
            "schemaVersion `{own}`: expected a 1.x.y version such as \"1.2.0\"; nothing written"
        )));
    }
    let text = pretty(own)?;
    match Dataset::from_bytes(&output.to_string_lossy(), text.as_bytes()) {
        Ok(_) => Ok((text, None)),
        Err(e) if asked => Err(Failure::config(format!(
            "schemaVersion {own} cannot hold these samples as written: {}\nnothing written; give a later --schema-version",
            e.to_string().lines().next().unwrap_or_default()
        ))),
        Err(e) => Ok((
            pretty(current)?,
            Some(format!(
                "schemaVersion {own} cannot hold these samples as written ({}); wrote schemaVersion {current}",
                e.to_string().lines().next().unwrap_or_default()
            )),
        )),
    }
}

/// `1.x.y`, digits only.
fn runevals_version_ok(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() == 3
        && parts[0] == "1"
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Field by field, what differs between the samples read and read back.
fn differences(a: &[Sample], b: &[Sample]) -> Vec<String> {
    let mut out = Vec::new();
    if a.len() != b.len() {
        out.push(format!("{} samples became {}", a.len(), b.len()));
        return out;
    }
    for (x, y) in a.iter().zip(b) {
        let at = x.source.to_string();
        let mut diff = |what: &str, same: bool| {
            if !same {
                out.push(format!("{at}: {what}"));
            }
        };
        diff("id", x.id == y.id && x.explicit_id == y.explicit_id);
        diff("input", x.input == y.input);
        diff("expected answer", x.expected == y.expected);
        diff("context", x.context == y.context);
        diff(
            "reference_contexts",
            x.reference_contexts == y.reference_contexts,
        );
        diff("tags", x.tags == y.tags);
        diff("metadata", x.metadata == y.metadata);
        diff("agent_args", x.agent_args == y.agent_args);
        diff("rubric_vars", x.rubric_vars == y.rubric_vars);
        diff("evaluators", x.evaluators == y.evaluators);
        diff(
            "per-turn evaluators",
            x.turn_evaluators == y.turn_evaluators,
        );
        for (k, v) in &x.extra {
            if y.extra.get(k) != Some(v) {
                out.push(format!("{at}: field `{k}`"));
            }
        }
    }
    out
}

pub fn upgrade(args: UpgradeArgs) -> Result<u8, Failure> {
    let shown = args.file.to_string_lossy().into_owned();
    let done = upgrade_file(&args.file)?;
    outln!(
        "upgraded {shown} to schemaVersion {} ({} items); backup: {}",
        runevals::CURRENT_VERSION,
        done.items,
        done.backup.display()
    );
    Ok(0)
}

/// A legacy runevals file rewritten as a versioned one.
pub struct Upgraded {
    /// Items of the document.
    pub items: usize,
    /// The backup of the original.
    pub backup: PathBuf,
}

/// Whether `file` is a `.json` runevals document in a legacy shape (a bare
/// array, `{prompts, expected_responses}`, or `items` without
/// `schemaVersion`): what `evals evaluate` upgrades before it runs (seed
/// 003). A file that does not parse is not one (its load reports it).
/// Whether `file` is a runevals document (any version).
pub fn is_runevals(file: &Path) -> bool {
    ext(file) == "json"
        && files::read_text(file, eval_runtime::Config::max_dataset_bytes())
            .ok()
            .and_then(|text| {
                serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}')).ok()
            })
            .is_some_and(|doc| runevals::shape(&doc).is_some())
}

pub fn is_legacy(file: &Path) -> bool {
    if ext(file) != "json" {
        return false;
    }
    let Ok(text) = files::read_text(file, eval_runtime::Config::max_dataset_bytes()) else {
        return false;
    };
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text.trim_start_matches('\u{feff}'))
    else {
        return false;
    };
    match runevals::shape(&doc) {
        Some(runevals::Shape::LegacyArray | runevals::Shape::LegacyPair) => true,
        Some(runevals::Shape::Versioned) => doc.get("schemaVersion").is_none(),
        None => false,
    }
}

/// `evals upgrade`: rewrites the legacy runevals document `file` as a
/// versioned one, after a timestamped backup, when its samples stay the same.
pub fn upgrade_file(file: &Path) -> Result<Upgraded, Failure> {
    let shown = file.to_string_lossy().into_owned();
    if ext(file) != "json" {
        return Err(Failure::config(format!(
            "{shown}: `evals upgrade` rewrites runevals .json documents; this is not one"
        )));
    }
    let bytes = eval_datasets::files::read_checked(file, eval_runtime::Config::max_dataset_bytes())
        .map_err(|e| Failure::config(eval_datasets::DatasetError::read(&shown, e).to_string()))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| Failure::config(format!("{shown}: not UTF-8 text: {}", e.utf8_error())))?;
    // The document must load as it is (duplicate keys, bad items...): the
    // problems are reported against its own lines.
    let doc = eval_datasets::dataset::parse_json_strict(text.trim_start_matches('\u{feff}'))
        .map_err(|e| {
            let msg = e.to_string();
            let msg = msg.rfind(" at line ").map_or(&msg[..], |at| &msg[..at]);
            Failure::config(format!(
                "{shown}:{}:{}: invalid JSON: {msg}",
                e.line(),
                e.column()
            ))
        })?;
    // A versioned document that only lacks its schemaVersion cannot load
    // before the upgrade; anything else must.
    let lacks_version = doc.get("items").is_some() && doc.get("schemaVersion").is_none();
    let before = match Dataset::from_bytes(&shown, text.as_bytes()) {
        Ok(d) => Some(d),
        Err(_) if lacks_version => None,
        Err(e) => {
            return Err(Failure::config(format!(
                "{e}\n{shown}: not upgraded; fix the problems above first"
            )));
        }
    };
    let upgraded = runevals::upgrade(&doc).map_err(|e| Failure::config(format!("{shown}: {e}")))?;
    let out =
        serde_json::to_string_pretty(&upgraded).map_err(|e| Failure::config(e.to_string()))? + "\n";
    let after = Dataset::from_bytes(&shown, out.as_bytes()).map_err(|e| {
        Failure::config(format!(
            "{shown}: the upgraded document would not load ({e}); nothing written"
        ))
    })?;
    if let Some(before) = &before
        && !differences(&before.samples, &after.samples).is_empty()
    {
        return Err(Failure::config(format!(
            "{shown}: the upgrade would change samples; nothing written"
        )));
    }
    let backup =
        files::backup(file).map_err(|e| Failure::config(format!("cannot back up {shown}: {e}")))?;
    files::write_atomically(file, out.as_bytes())
        .map_err(|e| Failure::config(format!("cannot write {shown}: {e}")))?;
    Ok(Upgraded {
        items: after.samples.len(),
        backup,
    })
}
