//! The settings are documented once, in `src/config/settings.md`: the
//! rustdoc of `eval_runtime::config` and the guide's configuration reference
//! (`docs/src/configuration.md`) both include that file. These tests keep the
//! table and the code in step:
//!
//! * every `EVAL_*` variable the crates read (a `"EVAL_..."` string literal in
//!   their non-test sources) has a row in the table;
//! * every `EVAL_*` name the table mentions is one the code reads;
//! * every `EVAL_*` name the README and the guide mention is in the table
//!   (or is the test suite's own `EVAL_CI`), so prose cannot name a variable
//!   that does not exist.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Variables the docs may name that are not settings of the crates.
const NOT_SETTINGS: &[&str] = &[
    // Read by the workspace's own tests and `.ci/run`: a missing xmllint or
    // Chromium fails the test instead of skipping it.
    "EVAL_CI",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'
}

/// Every `EVAL_XYZ` in `text` (at least one character after `EVAL_`), with
/// the character that follows it. A name ending in `_` followed by `*`
/// (`EVAL_JUDGE_*`) or written `EVAL_*` is a family, returned with `*`.
fn names_in(text: &str) -> Vec<(String, Option<char>)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("EVAL_") {
        let before = rest[..i].chars().next_back();
        let after = &rest[i..];
        let len = after
            .find(|c: char| !is_name_char(c))
            .unwrap_or(after.len());
        let name = &after[..len];
        let next = after[len..].chars().next();
        if !before.is_some_and(is_name_char) {
            out.push((name.to_string(), next));
        }
        rest = &after[len.max(5)..];
    }
    out
}

/// The names the code reads: `"EVAL_..."` literals outside tests.
fn read_by_code() -> BTreeSet<String> {
    fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "tests" {
                    walk(&path, files);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                files.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for krate in ["eval-datasets", "eval-macros", "eval-runtime", "eval-cli"] {
        walk(&workspace().join(krate).join("src"), &mut files);
    }
    let mut names = BTreeSet::new();
    for file in files {
        let text = read(&file);
        // A file's unit tests (a `#[cfg(test)] mod tests` at its end) name
        // variables for their own sake (typos, made-up ones).
        let code = match text.find("\n#[cfg(test)]\nmod tests") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        for (name, next) in names_in(code) {
            let quoted = code.contains(&format!("\"{name}\""));
            if quoted && next == Some('"') && name.len() > "EVAL_".len() {
                names.insert(name);
            }
        }
    }
    assert!(
        names.len() > 20,
        "found only {names:?}: did the sources move?"
    );
    names
}

fn table() -> String {
    read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config/settings.md"))
}

/// The names in the table's first column.
fn rows(table: &str) -> BTreeSet<String> {
    table
        .lines()
        .filter_map(|l| l.strip_prefix('|'))
        .filter_map(|l| l.split('|').next())
        .flat_map(|cell| names_in(cell).into_iter().map(|(n, _)| n))
        .collect()
}

#[test]
fn every_variable_the_code_reads_has_a_row() {
    let rows = rows(&table());
    let missing: Vec<_> = read_by_code()
        .into_iter()
        .filter(|n| !rows.contains(n))
        .collect();
    assert!(
        missing.is_empty(),
        "read by the code but not in eval-runtime/src/config/settings.md: {missing:?}"
    );
}

#[test]
fn the_table_names_only_variables_the_code_reads() {
    let code = read_by_code();
    let unknown: BTreeSet<_> = names_in(&table())
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !code.contains(n))
        .collect();
    assert!(
        unknown.is_empty(),
        "eval-runtime/src/config/settings.md names variables no code reads: {unknown:?}"
    );
}

#[test]
fn the_docs_name_only_variables_of_the_table() {
    let rows = rows(&table());
    let mut docs = vec![workspace().join("README.md")];
    for entry in std::fs::read_dir(workspace().join("docs/src")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    let mut unknown = BTreeSet::new();
    for doc in &docs {
        for (name, next) in names_in(&read(doc)) {
            let family = next == Some('*');
            let known = if family {
                // `EVAL_JUDGE_*`: some row starts so; `EVAL_*` any.
                rows.iter().any(|r| r.starts_with(&name))
            } else {
                rows.contains(&name) || NOT_SETTINGS.contains(&name.as_str())
            };
            if !known {
                unknown.insert(format!("{} ({})", name, doc.display()));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "the docs name variables that are not in eval-runtime/src/config/settings.md: {unknown:?}"
    );
}

#[test]
fn the_table_is_included_by_the_rustdoc_and_the_guide() {
    let config = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config.rs"));
    assert!(
        config.contains("#![doc = include_str!(\"config/settings.md\")]"),
        "config.rs's module docs must include config/settings.md"
    );
    assert!(
        !config.lines().any(|l| l.starts_with("//! | `EVAL_")),
        "config.rs keeps a table of its own again: edit config/settings.md instead"
    );
    let chapter = read(&workspace().join("docs/src/configuration.md"));
    assert!(
        chapter.contains("{{#include ../../eval-runtime/src/config/settings.md}}"),
        "docs/src/configuration.md must include the settings table"
    );
    assert!(
        !chapter.lines().any(|l| l.starts_with("| `EVAL_")),
        "docs/src/configuration.md keeps a table of its own again: edit eval-runtime/src/config/settings.md instead"
    );
}
