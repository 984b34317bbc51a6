//! The guide's layout (docs/src/architecture.md) names every file and
//! folder of eval-datasets/src, each in the crate's own block.

use std::path::Path;

/// The lines of the layout between `eval-datasets/` and `eval-macros/`.
fn block(doc: &str) -> String {
    doc.lines()
        .skip_while(|l| !l.starts_with("eval-datasets/"))
        .take_while(|l| !l.starts_with("eval-macros/"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names of `src` missing from `block` (`x.rs`, folders as `x/`).
fn missing(src: &Path, block: &str) -> Vec<String> {
    let words: Vec<&str> = block.split_whitespace().collect();
    let mut out = Vec::new();
    for item in std::fs::read_dir(src).unwrap() {
        let item = item.unwrap();
        let mut name = item.file_name().to_string_lossy().into_owned();
        if item.path().is_dir() {
            name.push('/');
        }
        if !words.contains(&name.as_str()) {
            out.push(name);
        }
    }
    out.sort();
    out
}

#[test]
fn the_layout_names_every_file_of_eval_datasets() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("../docs/src/architecture.md")).unwrap();
    let block = block(&doc);
    assert!(block.lines().count() > 20, "{block}");
    let gone = missing(&root.join("src"), &block);
    assert!(
        gone.is_empty(),
        "docs/src/architecture.md does not list {gone:?}"
    );
}

#[test]
fn a_file_left_out_is_named() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let gone = missing(&root.join("src"), "eval-datasets/\n  lib.rs sample.rs\n");
    assert!(gone.contains(&"registry.rs".to_string()), "{gone:?}");
    assert!(gone.contains(&"formats/".to_string()), "{gone:?}");
    assert!(!gone.contains(&"lib.rs".to_string()));
}
