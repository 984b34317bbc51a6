//! The module layout of `src/` stays as designed (read from the sources,
//! comments ignored):
//!
//! * no import cycle between the top-level modules (a folder is one module);
//! * inside `formats/`, no adapter uses another: adapters see only the
//!   contract in `formats/mod.rs` and the leaf modules `record`, `text` and
//!   `tools`;
//! * no source file grows past ~800 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `pub use formats::runevals;` in lib.rs: `crate::runevals` is `formats`.
const ALIASES: &[(&str, &str)] = &[("runevals", "formats")];

/// Modules of `formats/` every adapter may use.
const FORMAT_LEAVES: &[&str] = &["record", "text", "tools"];

struct Source {
    /// Module path, e.g. `["formats", "runevals", "items"]` (`mod.rs`: the folder).
    module: Vec<String>,
    /// The text without comments.
    code: String,
    lines: usize,
    path: PathBuf,
}

fn sources() -> Vec<Source> {
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let rel = path.strip_prefix(&src).unwrap().with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let code = text
                .lines()
                .map(|l| l.find("//").map_or(l, |at| &l[..at]))
                .collect::<Vec<_>>()
                .join("\n");
            Source {
                module,
                code,
                lines: text.lines().count(),
                path,
            }
        })
        .collect()
}

/// Every path starting with `head::` in `code`, groups expanded one level:
/// `use crate::{a, b::c}` gives `a` and `b::c`.
fn paths_after(code: &str, head: &str) -> Vec<String> {
    let mut out = Vec::new();
    let needle = format!("{head}::");
    let mut rest = code;
    while let Some(at) = rest.find(&needle) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + needle.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let item = item.trim();
                if !item.is_empty() {
                    out.push(item.to_string());
                }
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            out.push(rest[..end].trim_end_matches(':').to_string());
        }
    }
    out
}

fn first_segment(path: &str) -> String {
    let first = path.split("::").next().unwrap_or("").trim().to_string();
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == first)
        .map_or(first, |(_, to)| to.to_string())
}

#[test]
fn top_level_modules_have_no_import_cycle() {
    let sources = sources();
    let tops: BTreeSet<String> = sources
        .iter()
        .filter_map(|s| s.module.first().cloned())
        .collect();
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in &sources {
        let Some(top) = s.module.first() else {
            continue; // lib.rs
        };
        for path in paths_after(&s.code, "crate") {
            let target = first_segment(&path);
            if &target != top && tops.contains(&target) {
                deps.entry(top.clone()).or_default().insert(target);
            }
        }
    }
    // Depth-first search for a back edge.
    fn visit(
        node: &str,
        deps: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if let Some(at) = stack.iter().position(|n| n == node) {
            panic!(
                "import cycle: {} -> {node}\nall dependencies: {deps:#?}",
                stack[at..].join(" -> ")
            );
        }
        if done.contains(node) {
            return;
        }
        stack.push(node.to_string());
        for next in deps.get(node).into_iter().flatten() {
            visit(next, deps, stack, done);
        }
        stack.pop();
        done.insert(node.to_string());
    }
    let mut done = BTreeSet::new();
    for top in &tops {
        visit(top, &deps, &mut Vec::new(), &mut done);
    }
    // The layers the design promises (leaves depend on nothing of ours).
    for leaf in ["error", "sample", "hash", "suggest", "files", "rank"] {
        assert!(
            deps.get(leaf).is_none_or(BTreeSet::is_empty),
            "`{leaf}` should be a leaf, uses {:?}",
            deps[leaf]
        );
    }
    assert!(
        !deps["retrieval"].contains("formats"),
        "the retrieval model must not depend on the adapters that read it"
    );
}

#[test]
fn adapters_use_only_the_contract_and_the_leaves() {
    let sources = sources();
    let adapters: BTreeSet<String> = sources
        .iter()
        .filter(|s| s.module.len() >= 2 && s.module[0] == "formats")
        .map(|s| s.module[1].clone())
        .filter(|m| !FORMAT_LEAVES.contains(&m.as_str()))
        .collect();
    assert_eq!(adapters.len(), 11, "{adapters:?}");
    for s in sources
        .iter()
        .filter(|s| s.module.len() >= 2 && s.module[0] == "formats")
    {
        let own = &s.module[1];
        // What `super::` means in this file (its module's parent).
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
            let into_formats = path.first().map(String::as_str) == Some("formats")
                || path.first().map(String::as_str) == Some("runevals");
            let adapter = if path.first().map(String::as_str) == Some("runevals") {
                Some("runevals".to_string())
            } else {
                path.get(1).cloned()
            };
            if let Some(adapter) = adapter
                && into_formats
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
