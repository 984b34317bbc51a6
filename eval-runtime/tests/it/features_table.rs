//! The guide's feature table (docs/src/getting-started.md, "Cargo
//! features") lists exactly eval-runtime's features (but the internal
//! `_`-named ones, e.g. `_cli`, which only eval-cli enables), marks exactly the
//! default ones "(default)", and the crate-count table names the script
//! that measures it.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("eval-runtime sits in the workspace")
}

/// (every feature but `default`, the default ones) from Cargo.toml.
fn cargo_features() -> (BTreeSet<String>, BTreeSet<String>) {
    let text = std::fs::read_to_string(root().join("eval-runtime/Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    let features = manifest["features"].as_table().expect("a [features] table");
    let all = features
        .keys()
        // `_cli` and any `_`-named feature: internal, not for test authors.
        .filter(|k| *k != "default" && !k.starts_with('_'))
        .cloned()
        .collect();
    let default = features["default"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    (all, default)
}

/// (features, default ones) as the guide's table has them: the rows under
/// the `| feature | what it brings | without it |` header.
fn table_features(guide: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut lines = guide
        .lines()
        .skip_while(|l| !l.starts_with("| feature | what it brings |"))
        .skip(2);
    let (mut all, mut default) = (BTreeSet::new(), BTreeSet::new());
    for row in lines.by_ref().take_while(|l| l.starts_with('|')) {
        let cell = row.split('|').nth(1).unwrap_or("").trim();
        let name = cell.split('`').nth(1).unwrap_or("").to_string();
        assert!(!name.is_empty(), "a row names no feature: {row}");
        if cell.contains("(default)") {
            default.insert(name.clone());
        }
        all.insert(name);
    }
    (all, default)
}

#[test]
fn the_guides_feature_table_is_cargo_tomls() {
    let guide = std::fs::read_to_string(root().join("docs/src/getting-started.md")).unwrap();
    let (all, default) = cargo_features();
    let (shown, shown_default) = table_features(&guide);
    assert!(!all.is_empty());
    assert_eq!(
        shown, all,
        "the guide's feature table lists every feature of eval-runtime"
    );
    assert_eq!(
        shown_default, default,
        "the table marks the default features"
    );
    assert!(
        guide.contains("scripts/first-build-crates.sh"),
        "the crate counts name the script that measures them"
    );
    assert!(root().join("scripts/first-build-crates.sh").is_file());
}

#[test]
fn a_table_missing_a_feature_is_seen() {
    let guide = "| feature | what it brings | without it |\n|---|---|---|\n| `http` (default) | a | b |\n\nafter\n";
    let (shown, default) = table_features(guide);
    assert_eq!(shown, BTreeSet::from(["http".to_string()]));
    assert_eq!(default, shown);
    assert_ne!(shown, cargo_features().0, "otel and tokenizer are missing");
}
