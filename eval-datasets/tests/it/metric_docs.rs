//! The guide's metric table (`docs/src/metrics.md`) lists every metric of
//! the catalogue, by its name in the first column of a row, and names no
//! metric the catalogue does not have: a metric added without its row, or a
//! row left behind by a removed metric, fails here.

use std::path::Path;

/// The names in the first column of the table under `# Metrics`.
fn table_names(page: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in page
        .lines()
        .skip_while(|l| !l.starts_with("| metric | score"))
    {
        if !line.starts_with('|') {
            break;
        }
        let first = line.split('|').nth(1).unwrap_or("");
        // `a` / `b`, `c`: every name in backquotes.
        names.extend(
            first
                .split('`')
                .skip(1)
                .step_by(2)
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty()),
        );
    }
    names
}

#[test]
fn the_guides_metric_table_lists_exactly_the_catalogue() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/metrics.md");
    let page = std::fs::read_to_string(&page).unwrap();
    let names = table_names(&page);
    assert!(names.len() > 10, "the table was not found: {names:?}");
    let missing: Vec<&str> = eval_datasets::metric::catalog()
        .map(|m| m.name)
        .filter(|n| !names.iter().any(|t| t == n))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/src/metrics.md's table has no row for {missing:?}"
    );
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| eval_datasets::metric::lookup(n).is_none())
        .collect();
    assert!(
        unknown.is_empty(),
        "docs/src/metrics.md's table names metrics the catalogue does not have: {unknown:?}"
    );
}

#[test]
fn the_table_reader_finds_what_a_row_names() {
    let page = "# M\n\n| metric | score |\n|---|---|\n| `a` / `b` | x `y` |\n| `c`, `d` | z |\n\nafter `e`\n";
    assert_eq!(table_names(page), ["a", "b", "c", "d"]);
}

/// Longest a cell of the metric table may be, in characters: a table row
/// is read across a page; a longer definition goes under "Definitions in
/// full", linked from its row.
const MAX_CELL_CHARS: usize = 300;

#[test]
fn no_cell_of_the_metric_table_is_a_paragraph() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/metrics.md");
    let page = std::fs::read_to_string(&page).unwrap();
    let rows: Vec<&str> = page
        .lines()
        .skip_while(|l| !l.starts_with("| metric | score"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert!(rows.len() > 10, "the table was not found");
    let long: Vec<(usize, String)> = rows
        .iter()
        // `\|` is a pipe inside a cell, not between cells.
        .flat_map(|row| {
            row.replace("\\|", "¦")
                .split('|')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .map(|cell| (cell.trim().chars().count(), cell))
        .filter(|(n, _)| *n > MAX_CELL_CHARS)
        .collect();
    assert!(
        long.is_empty(),
        "cells of docs/src/metrics.md's table over {MAX_CELL_CHARS} characters: {long:#?}"
    );
}
