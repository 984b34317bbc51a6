//! The annotation guide of a dataset, written from the dataset itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use eval_datasets::dataset::FIELD_ALIASES;
use eval_datasets::lint::{self, IMBALANCE_SHARE, MIN_SAMPLES, NEAR_DUPLICATE, SHORT_ANSWER_WORDS};
use eval_datasets::{Dataset, Sample};
use serde_json::{Map, Value};

use super::stats::{DatasetStats, fields_of, word};

/// Characters an example's texts are cut to.
pub const EXAMPLE_CHARS: usize = 240;
/// Items of a list an example shows (contexts, source documents).
const EXAMPLE_ITEMS: usize = 3;
/// Examples at most.
const MAX_EXAMPLES: usize = 12;

/// What to write in each field of the sample model, in the order shown.
const FIELD_NOTES: &[(&str, &str)] = &[
    (
        "id",
        "a stable, unique name for the sample (results and reviews refer to it)",
    ),
    (
        "input",
        "what the user asks; a list of user turns for a conversation",
    ),
    (
        "expected",
        "the correct answer, complete enough to be checked against the sources; one per turn when each turn is graded",
    ),
    (
        "accepted_answers",
        "every other answer that counts as right",
    ),
    (
        "context",
        "the passages the agent is given or retrieved for this input",
    ),
    (
        "reference_contexts",
        "the passages that support the expected answer, copied from the sources",
    ),
    (
        "tags",
        "labels to select and group samples (part of the test names)",
    ),
    (
        "metadata",
        "free key/values: `query_type`, `difficulty`, `edge_case` and the like (below)",
    ),
    ("agent_args", "arguments sent to the agent with this sample"),
    ("rubric_vars", "values for the judge rubric's template"),
    (
        "evaluators",
        "the evaluators this sample asks for (runevals)",
    ),
    ("turn_evaluators", "the evaluators of each turn (runevals)"),
    (
        "expected_tools",
        "the tool calls the agent should make, in order",
    ),
    ("tools", "tool definitions offered to the agent"),
    (
        "relevant_ids",
        "the document ids a retrieval query should find",
    ),
];

/// Values seed 002 suggests for its metadata fields.
const SEED_VALUES: &[(&str, &str)] = &[
    (
        "query_type",
        "`factual`, `analytical`, `procedural`, `multi_hop`",
    ),
    ("difficulty", "`easy`, `medium`, `hard`"),
    (
        "edge_case",
        "`unanswerable`, `ambiguous`, `multi_hop`, `temporal`, `contradictory`, `out_of_scope` (null for none)",
    ),
];

/// The annotation guide of `dataset` (named `name`, its file name), with its
/// figures from `stats`: Markdown, the same bytes for the same dataset.
pub fn guide(name: &str, dataset: &Dataset, stats: &DatasetStats) -> String {
    let mut g = String::new();
    let n = stats.samples;
    let stem = std::path::Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| name.to_string());
    let _ = writeln!(g, "# Annotation guide: {}\n", plain(name));
    let _ = writeln!(
        g,
        "Written by `evals guide` from the dataset itself ({n} samples, {}): the fields its \
         samples use, the values its metadata takes, the checks `evals lint` runs, examples \
         from the file and the review checklist. Regenerate it when the dataset changes \
         (`evals guide {}`); `evals stats --write` writes the figures beside it (`{}-stats.json`).\n",
        stats.format.to_uppercase(),
        plain(name),
        plain(&stem)
    );

    fields_section(&mut g, stats);
    vocabulary_section(&mut g, stats, &dataset.samples);
    rules_section(&mut g, name, stats);
    examples_section(&mut g, &dataset.samples);
    checklist_section(&mut g, name, stats);
    // issue37:escape: names, values and examples from the dataset, shown
    // under the terminal rule (a reader `cat`s the guide, a browser shows it).
    match eval_datasets::terminal::escaped_layout(&g, false) {
        std::borrow::Cow::Borrowed(_) => g,
        std::borrow::Cow::Owned(shown) => shown,
    }
}

fn share(k: usize, n: usize) -> String {
    if n == 0 {
        return "0%".into();
    }
    format!("{:.0}%", k as f64 * 100.0 / n as f64)
}

fn share_text(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn fields_section(g: &mut String, stats: &DatasetStats) {
    let n = stats.samples;
    let _ = writeln!(g, "## Fields\n");
    let _ = writeln!(
        g,
        "| field | samples | also read from | what to write |\n|---|---|---|---|"
    );
    let mut unused = Vec::new();
    for (field, note) in FIELD_NOTES {
        let Some(&k) = stats.coverage.fields.get(*field) else {
            unused.push(format!("`{field}`"));
            continue;
        };
        let aliases: Vec<String> = FIELD_ALIASES
            .iter()
            .filter(|(alias, canonical)| canonical == field && alias != field)
            .map(|(alias, _)| format!("`{alias}`"))
            .collect();
        let aliases = if aliases.is_empty() {
            "—".to_string()
        } else {
            aliases.join(", ")
        };
        let _ = writeln!(
            g,
            "| `{field}` | {k} of {n} ({}) | {aliases} | {note} |",
            share(k, n)
        );
    }
    let own: Vec<(&String, &usize)> = stats
        .coverage
        .fields
        .iter()
        .filter(|(f, _)| !FIELD_NOTES.iter().any(|(known, _)| known == f))
        .collect();
    for (field, k) in &own {
        let note = match field.as_str() {
            "source_docs" => "the documents the answer comes from (kept as written)",
            _ => "kept with the sample as written",
        };
        let _ = writeln!(
            g,
            "| {} | {k} of {n} ({}) | — | {note} |",
            code(field),
            share(**k, n)
        );
    }
    let _ = writeln!(g);
    if !unused.is_empty() {
        let _ = writeln!(
            g,
            "No sample here uses {}; the loader reads them too.\n",
            unused.join(", ")
        );
    }
}

fn vocabulary_section(g: &mut String, stats: &DatasetStats, samples: &[Sample]) {
    let c = &stats.coverage;
    let n = stats.samples;
    let _ = writeln!(g, "## Vocabularies\n");
    let _ = writeln!(
        g,
        "Use these values as they are written here: a new spelling of an existing value \
         splits its counts.\n"
    );
    let seed: [(&str, &BTreeMap<String, usize>); 3] = [
        ("query_type", &c.query_types),
        ("difficulty", &c.difficulty),
        ("edge_case", &c.edge_cases),
    ];
    for (field, values) in seed {
        let _ = writeln!(g, "### metadata `{field}`\n");
        if values.is_empty() {
            let suggested = SEED_VALUES
                .iter()
                .find(|(f, _)| *f == field)
                .map_or("", |(_, v)| v);
            let _ = writeln!(
                g,
                "Not set in this dataset. Seed 002's values: {suggested}.\n"
            );
        } else {
            vocabulary_table(g, values, n);
        }
    }
    let in_metadata = samples
        .iter()
        .any(|s| s.metadata.contains_key("category") || s.extra.contains_key("category"));
    if in_metadata {
        let _ = writeln!(g, "### metadata `category`\n");
        vocabulary_table(g, &c.categories, n);
    }
    if !c.tags.is_empty() {
        let _ = writeln!(
            g,
            "### `tags`\n\nA sample may carry several; the first is its category when metadata \
             has no `category`.\n"
        );
        vocabulary_table(g, &c.tags, n);
    }
    for (key, values) in &c.metadata {
        let _ = writeln!(g, "### metadata {}\n", code(key));
        vocabulary_table(g, values, n);
    }
}

fn vocabulary_table(g: &mut String, values: &BTreeMap<String, usize>, n: usize) {
    let _ = writeln!(g, "| value | samples | share |\n|---|---|---|");
    for (value, k) in values {
        let _ = writeln!(g, "| {} | {k} | {} |", code(value), share(*k, n));
    }
    let _ = writeln!(g);
    // Values that normalise alike: one value written two ways.
    let mut by_form: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for value in values.keys() {
        by_form
            .entry(lint::normalise(value))
            .or_default()
            .push(value);
    }
    for same in by_form.values().filter(|v| v.len() > 1) {
        let shown: Vec<String> = same.iter().map(|v| code(v)).collect();
        let _ = writeln!(
            g,
            "{} look like one value written {} ways: pick one.\n",
            shown.join(", "),
            same.len()
        );
    }
}

fn rules_section(g: &mut String, name: &str, stats: &DatasetStats) {
    let _ = writeln!(g, "## Checks\n");
    let _ = writeln!(
        g,
        "`evals lint {}` runs these (seed 002's codes); an error fails it. Now: {} error(s), \
         {} warning(s).\n",
        plain(name),
        stats.quality.errors,
        stats.quality.warnings
    );
    let _ = writeln!(
        g,
        "| code | severity | when | found here |\n|---|---|---|---|"
    );
    for rule in lint::rules() {
        let found = stats.quality.findings.get(rule.code).copied().unwrap_or(0);
        let _ = writeln!(
            g,
            "| `{}` | {} | {} | {found} |",
            rule.code,
            rule.severity,
            rule.when.replace('|', "\\|")
        );
    }
    let _ = writeln!(g);
}

/// The group a sample's example stands for: its `query_type` and
/// `difficulty` when the file uses them, else its category.
fn group_of(s: &Sample, by_seed: bool) -> String {
    let get = |field: &str| {
        s.metadata
            .get(field)
            .or_else(|| s.extra.get(field))
            .and_then(word)
    };
    if by_seed {
        let parts: Vec<String> = ["query_type", "difficulty"]
            .iter()
            .filter_map(|f| get(f).map(|v| format!("`{f}` {}", code(&v))))
            .collect();
        if parts.is_empty() {
            return "no `query_type` or `difficulty`".into();
        }
        return parts.join(" · ");
    }
    match get("category").or_else(|| s.tags.first().cloned()) {
        Some(c) => format!("category {}", code(&c)),
        None => "no category".into(),
    }
}

fn examples_section(g: &mut String, samples: &[Sample]) {
    let _ = writeln!(g, "## Examples from the file\n");
    if samples.is_empty() {
        let _ = writeln!(g, "The file has no samples.\n");
        return;
    }
    let by_seed = samples.iter().any(|s| {
        ["query_type", "difficulty"].iter().any(|f| {
            s.metadata
                .get(*f)
                .or_else(|| s.extra.get(*f))
                .and_then(word)
                .is_some()
        })
    });
    let mut first: BTreeMap<String, &Sample> = BTreeMap::new();
    for s in samples {
        first.entry(group_of(s, by_seed)).or_insert(s);
    }
    let _ = writeln!(
        g,
        "The first sample of each {} in file order ({} of {} groups shown); texts cut to {} \
         characters, lists to {} items.\n",
        if by_seed {
            "query type and difficulty"
        } else {
            "category"
        },
        first.len().min(MAX_EXAMPLES),
        first.len(),
        EXAMPLE_CHARS,
        EXAMPLE_ITEMS
    );
    let mut shown: Vec<(&String, &&Sample)> = first.iter().collect();
    shown.sort_by_key(|(_, s)| s.index);
    for (group, s) in shown.into_iter().take(MAX_EXAMPLES) {
        let mut whose = if s.explicit_id {
            format!("sample {}", code(&s.id))
        } else {
            format!("sample {}", s.index + 1)
        };
        if s.source.line > 0 {
            let _ = write!(whose, ", line {}", s.source.line);
        }
        let _ = writeln!(g, "### {group}: {whose}\n");
        let text = serde_json::to_string_pretty(&example(s)).unwrap_or_default();
        let fence = "`".repeat(longest_backtick_run(&text).max(2) + 1);
        let _ = writeln!(g, "{fence}json\n{text}\n{fence}\n");
    }
}

/// A sample as an example shows it: its fields in the model's order, texts
/// and lists cut.
fn example(s: &Sample) -> Value {
    let cut_list = |items: &[String]| {
        let mut v: Vec<Value> = items
            .iter()
            .take(EXAMPLE_ITEMS)
            .map(|t| Value::String(cut(t)))
            .collect();
        if items.len() > EXAMPLE_ITEMS {
            v.push(Value::String(format!(
                "… {} more",
                items.len() - EXAMPLE_ITEMS
            )));
        }
        Value::Array(v)
    };
    let mut m = Map::new();
    let present = fields_of(s);
    if s.explicit_id {
        m.insert("id".into(), Value::String(s.id.clone()));
    }
    m.insert(
        "input".into(),
        match &s.input {
            eval_datasets::Input::Text(t) => Value::String(cut(t)),
            eval_datasets::Input::Turns(t) => cut_list(t),
        },
    );
    if let Some(e) = &s.expected {
        m.insert(
            "expected".into(),
            match e {
                eval_datasets::Expected::Text(t) => Value::String(cut(t)),
                eval_datasets::Expected::PerTurn(t) => cut_list(t),
            },
        );
    }
    for (field, list) in [
        ("context", &s.context),
        ("reference_contexts", &s.reference_contexts),
    ] {
        if !list.is_empty() {
            m.insert(field.into(), cut_list(list));
        }
    }
    if let Some(ids) = s.relevant_ids() {
        m.insert("relevant_ids".into(), cut_list(ids));
    }
    if let Some(tools) = &s.expected_tools {
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        m.insert("expected_tools".into(), cut_list(&names));
    }
    if !s.tags.is_empty() {
        m.insert("tags".into(), cut_list(&s.tags));
    }
    if !s.metadata.is_empty() {
        let meta: Map<String, Value> = s
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), cut_value(v)))
            .collect();
        m.insert("metadata".into(), Value::Object(meta));
    }
    for key in present.iter().filter(|f| s.extra.contains_key(f.as_str())) {
        if let Some(v) = s.extra.get(key) {
            m.insert(key.clone(), cut_value(v));
        }
    }
    Value::Object(m)
}

fn cut_value(v: &Value) -> Value {
    match v {
        Value::String(t) => Value::String(cut(t)),
        Value::Array(items) => {
            let mut out: Vec<Value> = items.iter().take(EXAMPLE_ITEMS).map(cut_value).collect();
            if items.len() > EXAMPLE_ITEMS {
                out.push(Value::String(format!(
                    "… {} more",
                    items.len() - EXAMPLE_ITEMS
                )));
            }
            Value::Array(out)
        }
        Value::Object(_) => {
            let text = v.to_string();
            if text.chars().count() > EXAMPLE_CHARS {
                Value::String(cut(&text))
            } else {
                v.clone()
            }
        }
        other => other.clone(),
    }
}

/// `text` cut to [`EXAMPLE_CHARS`] characters, `…` marking a cut.
fn cut(text: &str) -> String {
    if text.chars().count() <= EXAMPLE_CHARS {
        return text.to_string();
    }
    let mut t: String = text.chars().take(EXAMPLE_CHARS).collect();
    t.push('…');
    t
}

fn longest_backtick_run(text: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// `text` as inline code inside a table cell or heading: one line, `|`
/// escaped, delimited by more backticks than it holds.
fn code(text: &str) -> String {
    let one_line = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    let ticks = "`".repeat(longest_backtick_run(&one_line) + 1);
    if ticks.len() > 1 || one_line.starts_with(' ') || one_line.ends_with(' ') {
        format!("{ticks} {one_line} {ticks}")
    } else {
        format!("`{one_line}`")
    }
}

/// A file name in running text: backticks and newlines dropped.
fn plain(text: &str) -> String {
    text.replace(['`', '\n', '\r'], "")
}

fn checklist_section(g: &mut String, name: &str, stats: &DatasetStats) {
    let _ = writeln!(g, "## Review checklist\n");
    let _ = writeln!(
        g,
        "Before a change to the dataset is merged, the reviewer checks each sample it adds or \
         edits:\n"
    );
    let has = |field: &str| stats.coverage.fields.contains_key(field);
    let mut items = vec![
        "**In scope.** The question is one the agent is meant to answer; a question outside \
         its domain is kept only as an edge case (`edge_case: out_of_scope`)."
            .to_string(),
        "**Realistic input.** Worded as a user would ask it, not copied from the source text; \
         a conversation lists its user turns in order."
            .to_string(),
        format!(
            "**Correct, complete ground truth.** The expected answer is right according to the \
             sources and checkable on its own: a sentence or more (`SHORT_ANSWER` flags answers \
             under {SHORT_ANSWER_WORDS} words), no \"see above\"."
        ),
        "**Supported by context.** The passages that support the answer are copied into \
         `reference_contexts` (or `contexts`), and `source_docs` names the documents they come \
         from."
            .to_string(),
        "**Edge cases marked.** Unanswerable, ambiguous, multi-hop, time-dependent, \
         contradictory and out-of-scope questions carry `edge_case`; an unanswerable \
         question's answer says that the sources do not answer it."
            .to_string(),
        "**Metadata from the vocabularies.** `query_type`, `difficulty` and the other keys use \
         the values listed above; a new value is added on purpose, not by a new spelling."
            .to_string(),
        format!(
            "**No duplicates.** The input is not the same as, nor a rewording of, another \
             (`DUPLICATE_QUERIES` warns at a word overlap of {NEAR_DUPLICATE} or more, and \
             when two inputs differ in one function word only: `do`/`can`, `a`/`the`)."
        ),
        format!(
            "**Balance and size.** No query type, difficulty or category holds more than {} of \
             the samples, and the file keeps at least {MIN_SAMPLES}.",
            share_text(IMBALANCE_SHARE)
        ),
        format!(
            "**Checked and documented.** `evals lint {}` reports no error; `evals stats --write` \
             and `evals guide` are run again so the stats file and this guide match the data.",
            plain(name)
        ),
    ];
    // Items for what this file holds, before the last (checked and documented).
    let mut own = Vec::new();
    if stats.multi_turn > 0 {
        own.push(
            "**Conversations.** Each user turn reads naturally after the one before, and the \
             expected answer (or one per turn) fits the turn it answers."
                .to_string(),
        );
    }
    if has("expected_tools") {
        own.push(
            "**Tool calls.** `expected_tools` lists the calls a correct agent makes, in order, \
             with the arguments that matter."
                .to_string(),
        );
    }
    if has("relevant_ids") {
        own.push(
            "**Relevant documents.** A query's relevant ids name every document that answers \
             it and no other; a query nothing should match has none."
                .to_string(),
        );
    }
    let last = items.pop();
    items.extend(own);
    items.extend(last);
    for item in items {
        let _ = writeln!(g, "- [ ] {item}");
    }
}
