//! The module layout of `src/` stays as designed (read from the sources,
//! comments ignored):
//!
//! * the top-level modules stand in layers ([`LAYERS`], bottom first), and a
//!   module only imports modules of lower layers: the data model imports
//!   nothing but the leaves, configuration only the model, the clients
//!   (HTTP, agents, services) the configuration, and so on up to the front
//!   ends. No import cycle can form between them;
//! * every top-level module has its layer: a new one is placed on purpose;
//! * no two files import each other in a loop, inside a module either;
//! * no source file grows past ~800 lines, and no function past 150 lines
//!   in any crate of the workspace ([`function_length`]).
//!
//! `crate::Name` paths are resolved through the crate root's `pub use`
//! lines (`crate::Usage` is `model`'s), and `super::` paths from the file's
//! own place.

mod function_length;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom first. A module may import the modules of any layer
/// below its own, and none of its own layer or above.
const LAYERS: &[&[&str]] = &[
    // Leaves: statistics, masking secrets, the run's permits, stderr notes,
    // dataset profiles. They import nothing of the crate.
    &["stats", "secrets", "permit", "notice"],
    // The data model: usage, settings as data, sample reports, provenance,
    // every error as data.
    &["model"],
    // Settings, read once (and where files go, price tables).
    &["config"],
    // Output renders model types: results files, reports, summaries, diffs.
    &["output"],
    // Clients, lowest first: HTTP plumbing, agents, record/replay of
    // agents, retrievers, the judge and embeddings, cost.
    &["http"],
    // The model APIs besides OpenAI's: Azure, Anthropic (translation, auth).
    &["provider"],
    // The agent's trace context and spans in, evaluation results out.
    &["otel"],
    &["agent"],
    &["cassette"],
    &["retrieval"],
    &["services"],
    &["cost"],
    // Metrics score one sample.
    &["metrics"],
    // What to run, and running it.
    &["plan"],
    &["engine"],
    &["estimate"],
    // The front ends: the attribute's support, the harness, the runner.
    &["front"],
    &["macro_support"],
    // What only the `evals` command uses (hidden, behind `_cli`).
    &["cli_support"],
];

struct Source {
    /// Module path, e.g. `["engine", "evaluate"]` (`mod.rs`: the folder).
    module: Vec<String>,
    /// The text without comments.
    code: String,
    lines: usize,
    path: PathBuf,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// eval-datasets' sources: its layout is held here too, with one reader.
fn datasets_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../eval-datasets/src")
}

fn sources() -> Vec<Source> {
    sources_in(&src())
}

fn sources_in(src: &Path) -> Vec<Source> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            Source {
                module,
                code: without_comments(&text),
                lines: text.lines().count(),
                path,
            }
        })
        .collect()
}

/// The text with `//` comments removed (doc comments included; a `//`
/// inside a string literal cuts the line short, which only loses paths).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |at| &l[..at]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path starting with `head::` in `code`, groups expanded (nested
/// ones too): `use crate::{a, b::{c, d}}` gives `a`, `b::c` and `b::d`.
fn paths_after(code: &str, head: &str) -> Vec<String> {
    fn expand(prefix: &str, group: &str, out: &mut Vec<String>) {
        let mut depth = 0;
        let mut item = String::new();
        let mut items = Vec::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    items.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        items.push(item);
        for item in items {
            let item: String = item.split_whitespace().collect::<Vec<_>>().join(" ");
            if item.is_empty() {
                continue;
            }
            match item.split_once("::{") {
                Some((head, rest)) => {
                    let inner = rest.strip_suffix('}').unwrap_or(rest);
                    expand(&format!("{prefix}{head}::"), inner, out);
                }
                None => out.push(format!("{prefix}{item}")),
            }
        }
    }
    let mut out = Vec::new();
    let needle = format!("{head}::");
    let mut rest = code;
    while let Some(at) = rest.find(&needle) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + needle.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let (prefix, after) = rest.split_at(end);
        match after.strip_prefix('{') {
            Some(group) if prefix.is_empty() || prefix.ends_with("::") => {
                let mut depth = 1;
                let close = group
                    .char_indices()
                    .find(|&(_, c)| {
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        depth == 0
                    })
                    .map_or(group.len(), |(i, _)| i);
                expand(prefix, &group[..close], &mut out);
            }
            _ => out.push(prefix.trim_end_matches(':').to_string()),
        }
    }
    out
}

/// What the crate root's `pub use module::{...}` lines make of a name:
/// `Usage` → `model`.
fn root_aliases(src: &Path, tops: &BTreeSet<String>) -> BTreeMap<String, String> {
    let lib = without_comments(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut aliases = BTreeMap::new();
    for path in paths_after(&lib.replace("pub use ", "pub use crate::"), "crate") {
        let mut parts = path.split("::").map(str::trim);
        let Some(first) = parts.next() else { continue };
        if !tops.contains(first) {
            continue;
        }
        let last = path.rsplit("::").next().unwrap_or("").trim();
        let name = last.rsplit(" as ").next().unwrap_or(last).trim();
        if !name.is_empty() && name != "self" && name != "*" {
            aliases.insert(name.to_string(), first.to_string());
        }
    }
    aliases.insert("__private".into(), "macro_support".into());
    aliases
}

/// Top-level module → the top-level modules its files import, with one
/// example path each.
fn dependencies() -> BTreeMap<String, BTreeMap<String, String>> {
    dependencies_in(&src())
}

fn dependencies_in(src: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let sources = sources_in(src);
    let tops: BTreeSet<String> = sources
        .iter()
        .filter_map(|s| s.module.first().cloned())
        .collect();
    let aliases = root_aliases(src, &tops);
    let resolve = |first: &str| aliases.get(first).cloned().unwrap_or(first.to_string());
    let mut deps: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for s in &sources {
        let Some(top) = s.module.first() else {
            continue; // lib.rs
        };
        let mut targets = Vec::new();
        for path in paths_after(&s.code, "crate") {
            let first = path.split("::").next().unwrap_or("").trim();
            targets.push((resolve(first), format!("crate::{path}")));
        }
        // `super::` from a nested module climbs to its parent (and on).
        for path in paths_after(&s.code, "super") {
            let mut at: Vec<&str> = s.module[..s.module.len() - 1]
                .iter()
                .map(String::as_str)
                .collect();
            let mut parts = path.split("::").map(str::trim).peekable();
            while parts.peek() == Some(&"super") {
                parts.next();
                at.pop();
            }
            let first = at
                .first()
                .copied()
                .or_else(|| parts.next())
                .unwrap_or("")
                .to_string();
            targets.push((resolve(&first), format!("super::{path}")));
        }
        for (target, example) in targets {
            if &target != top && tops.contains(&target) {
                deps.entry(top.clone())
                    .or_default()
                    .entry(target)
                    .or_insert_with(|| format!("{}: {example}", s.path.display()));
            }
        }
    }
    deps
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

#[test]
fn every_top_level_module_has_a_layer() {
    let tops: BTreeSet<String> = sources()
        .iter()
        .filter_map(|s| s.module.first().cloned())
        .collect();
    for top in &tops {
        assert!(
            layer_of(top).is_some(),
            "module `{top}` has no layer: add it to LAYERS in {}",
            file!()
        );
    }
    for layer in LAYERS {
        for module in *layer {
            assert!(
                tops.contains(*module),
                "LAYERS names `{module}`, which is not a module of src/"
            );
        }
    }
}

#[test]
fn modules_import_only_lower_layers() {
    let deps = dependencies();
    assert!(
        deps.get("engine").is_some_and(|d| d.contains_key("model")),
        "the reader must see the engine's imports: {deps:#?}"
    );
    let mut wrong = Vec::new();
    for (from, targets) in &deps {
        let Some(from_layer) = layer_of(from) else {
            continue; // reported by every_top_level_module_has_a_layer
        };
        for (to, example) in targets {
            if layer_of(to).is_none_or(|l| l >= from_layer) {
                wrong.push(format!("`{from}` imports `{to}` ({example})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers (a module may only import lower layers; see LAYERS):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_model_imports_only_the_leaves() {
    let deps = dependencies();
    let leaves = LAYERS[0];
    for to in deps.get("model").into_iter().flat_map(BTreeMap::keys) {
        assert!(
            leaves.contains(&to.as_str()),
            "the model imports `{to}`: {:?}",
            deps["model"][to]
        );
    }
}

#[test]
fn the_reader_resolves_groups_aliases_and_super() {
    assert_eq!(
        paths_after("use crate::{a::{b, c::D}, e};", "crate"),
        ["a::b", "a::c::D", "e"]
    );
    assert_eq!(
        paths_after("use crate::m::{A, n::{B, C}};", "crate"),
        ["m::A", "m::n::B", "m::n::C"]
    );
    assert_eq!(paths_after("x_crate::a; crate::b::C", "crate"), ["b::C"]);
    let tops: BTreeSet<String> = ["model", "front"].map(String::from).into();
    let aliases = root_aliases(&src(), &tops);
    assert_eq!(aliases.get("Usage").map(String::as_str), Some("model"));
    assert_eq!(aliases.get("Harness").map(String::as_str), Some("front"));
}

#[test]
fn no_source_file_is_huge() {
    for s in sources() {
        assert!(
            s.lines <= 800,
            "{} has {} lines: split it by concept",
            s.path.display(),
            s.lines
        );
    }
}

/// What reads the process's own settings: only the front ends call it (and
/// pass what they read down as arguments).
const GLOBAL_READS: &[&str] = &[
    "::global(",
    "own_or_global(",
    "max_dataset_bytes()",
    "::from_env(",
];

#[test]
fn only_the_front_ends_read_the_process_settings() {
    let mut found = Vec::new();
    for s in sources() {
        if s.module.first().map(String::as_str) == Some("front") {
            continue;
        }
        for (n, line) in s.code.lines().enumerate() {
            for read in GLOBAL_READS {
                if line.contains(read) {
                    found.push(format!("{}:{}: {}", s.path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "settings fetched below the front ends (pass a Config or Services down instead):\n{}",
        found.join("\n")
    );
}

/// The steps of a run's end: only `engine/end.rs` takes them (the streamed
/// writer is `engine/write.rs`, the in-memory results it uses are in
/// `engine/mod.rs`; the writers themselves in `output/`).
const END_STEPS: &[&str] = &[
    "write_junit(",
    "auto_step_summary(",
    "check_baseline(",
    "write_streamed(",
    "write_html_along(",
    "write_junit_along(",
    "results_of(",
    "write_html(",
];

#[test]
fn a_run_ends_in_one_place() {
    let mut found = Vec::new();
    for s in sources() {
        let place = s.module.join("/");
        if place == "engine/end"
            || place == "engine/write"
            || place == "engine"
            || s.module.first().is_some_and(|m| m == "output")
        {
            continue;
        }
        for (n, line) in s.code.lines().enumerate() {
            if line.trim_start().starts_with("pub") {
                continue; // a re-export
            }
            for step in END_STEPS {
                if line.contains(step) {
                    found.push(format!("{}:{}: {}", s.path.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a step of the end of a run taken outside engine/end.rs (call end_run with an Ending):\n{}",
        found.join("\n")
    );
    for front in ["front/harness", "front/attribute", "front/runner"] {
        let s = sources()
            .into_iter()
            .find(|s| s.module.join("/") == front)
            .unwrap();
        assert!(
            s.code.contains("end_run("),
            "{front} does not end its run with end_run"
        );
    }
}

/// File → the files it imports: `crate::` and `super::` paths resolved to
/// the deepest file module they name, leaving out the file's own ancestors
/// (a `mod.rs` is its folder's face: children name what it re-exports).
fn file_dependencies(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let sources = sources_in(src);
    let files: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let tops: BTreeSet<String> = files.iter().filter_map(|m| m.first().cloned()).collect();
    let aliases = root_aliases(src, &tops);
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in &sources {
        let mut named: Vec<Vec<String>> = Vec::new();
        for path in paths_after(&s.code, "crate") {
            let mut parts: Vec<String> = path.split("::").map(|p| p.trim().to_string()).collect();
            if let Some(first) = parts.first_mut()
                && let Some(module) = aliases.get(first.as_str())
            {
                *first = module.clone();
            }
            named.push(parts);
        }
        if !s.module.is_empty() {
            for path in paths_after(&s.code, "super") {
                let mut at = s.module[..s.module.len() - 1].to_vec();
                let mut parts = path.split("::").map(|p| p.trim().to_string()).peekable();
                while parts.peek().is_some_and(|p| p == "super") {
                    parts.next();
                    at.pop();
                }
                at.extend(parts);
                named.push(at);
            }
        }
        for full in named {
            let Some(target) = (1..=full.len())
                .rev()
                .map(|n| full[..n].to_vec())
                .find(|prefix| files.contains(prefix))
            else {
                continue;
            };
            if s.module.starts_with(&target) {
                continue; // itself, or an ancestor's face
            }
            deps.entry(s.module.join("/"))
                .or_default()
                .insert(target.join("/"));
        }
    }
    deps
}

/// A loop in `deps`, as `a -> b -> a`, if there is one.
fn a_loop(deps: &BTreeMap<String, BTreeSet<String>>) -> Option<String> {
    fn visit(
        node: &str,
        deps: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<String> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            return Some(format!("{} -> {node}", stack[at..].join(" -> ")));
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_string());
        for next in deps.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, deps, stack, done) {
                return Some(found);
            }
        }
        stack.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    deps.keys()
        .find_map(|node| visit(node, deps, &mut Vec::new(), &mut done))
}

#[test]
fn no_files_import_each_other_in_a_loop() {
    let runtime = file_dependencies(&src());
    assert!(
        runtime
            .get("model/results")
            .is_some_and(|d| d.contains("model/summary")),
        "the reader must see sibling files: {runtime:#?}"
    );
    for (name, deps) in [
        ("eval-runtime", runtime),
        ("eval-datasets", file_dependencies(&datasets_src())),
    ] {
        if let Some(found) = a_loop(&deps) {
            panic!("{name}: files import each other in a loop: {found}");
        }
    }
}

/// eval-datasets: no cycle between its top-level modules; the leaves the
/// design promises depend on nothing of the crate (the sample model only on
/// the tool-call model it holds); the retrieval model does not depend on the
/// adapters that read it.
#[test]
fn eval_datasets_modules_have_no_cycle_and_its_leaves_stand_alone() {
    let deps: BTreeMap<String, BTreeSet<String>> = dependencies_in(&datasets_src())
        .into_iter()
        .map(|(from, to)| (from, to.into_keys().collect()))
        .collect();
    if let Some(found) = a_loop(&deps) {
        panic!("eval-datasets: import cycle: {found}\nall dependencies: {deps:#?}");
    }
    let uses = |module: &str| deps.get(module).cloned().unwrap_or_default();
    for leaf in ["hash", "suggest", "files", "rank", "terminal"] {
        assert!(
            uses(leaf).is_empty(),
            "`{leaf}` should be a leaf, uses {:?}",
            uses(leaf)
        );
    }
    // The sample model holds tool calls, whose definitions are read through
    // `files`; nothing else.
    let only = |module: &str, allowed: &[&str]| {
        let used = uses(module);
        assert!(
            used.iter().all(|m| allowed.contains(&m.as_str())),
            "`{module}` may use only {allowed:?}, uses {used:?}"
        );
    };
    // Errors show what files hold by the one terminal rule.
    only("error", &["terminal"]);
    only("sample", &["tool"]);
    only("tool", &["files"]);
    assert!(
        !deps["retrieval"].contains("formats"),
        "the retrieval model must not depend on the adapters that read it"
    );
}

/// Modules of eval-datasets' `formats/` every adapter may use.
const FORMAT_LEAVES: &[&str] = &["record", "text", "tools"];

/// Inside eval-datasets' `formats/`, no adapter uses another: adapters see
/// only the contract in `formats/mod.rs` and the leaves `record`, `text`
/// and `tools`.
#[test]
fn eval_datasets_adapters_use_only_the_contract_and_the_leaves() {
    let sources = sources_in(&datasets_src());
    let in_formats = |s: &&Source| s.module.len() >= 2 && s.module[0] == "formats";
    let adapters: BTreeSet<String> = sources
        .iter()
        .filter(in_formats)
        .map(|s| s.module[1].clone())
        .filter(|m| !FORMAT_LEAVES.contains(&m.as_str()))
        .collect();
    assert_eq!(adapters.len(), 11, "{adapters:?}");
    for s in sources.iter().filter(in_formats) {
        let own = &s.module[1];
        let parent = &s.module[..s.module.len() - 1];
        let mut used: Vec<Vec<String>> = paths_after(&s.code, "super")
            .into_iter()
            .map(|p| {
                let mut full = parent.to_vec();
                full.extend(p.split("::").map(|x| x.trim().to_string()));
                full
            })
            .collect();
        used.extend(
            paths_after(&s.code, "crate")
                .into_iter()
                .map(|p| p.split("::").map(|x| x.trim().to_string()).collect()),
        );
        for path in used {
            // `crate::runevals` is `formats::runevals` (re-exported by lib.rs).
            let adapter = match path.first().map(String::as_str) {
                Some("runevals") => Some("runevals".to_string()),
                Some("formats") => path.get(1).cloned(),
                _ => None,
            };
            if let Some(adapter) = adapter
                && adapters.contains(&adapter)
                && &adapter != own
            {
                panic!(
                    "{}: the `{own}` adapter uses the `{adapter}` adapter ({}); adapters only use formats/mod.rs, record, text and tools",
                    s.path.display(),
                    path.join("::")
                );
            }
        }
    }
}

#[test]
fn no_eval_datasets_file_is_huge() {
    for s in sources_in(&datasets_src()) {
        assert!(
            s.lines <= 800,
            "{} has {} lines: split it by concept",
            s.path.display(),
            s.lines
        );
    }
}
