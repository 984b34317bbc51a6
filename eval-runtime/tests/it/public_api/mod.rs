//! The public API of the library crates is what `api/<crate>.txt` (the
//! promised API) and `api/<crate>.internal.txt` (what is public only for
//! this workspace's crates) list, so a change to it is a deliberate one:
//! this test reads the sources (with syn) and fails on any difference,
//! naming what appeared and what went. After a deliberate change,
//! `UPDATE_PUBLIC_API=1 cargo test -p eval-runtime --test it public_api`
//! rewrites the listings.
//!
//! Listed by public path, as rustdoc shows the crate: from the root through
//! `pub mod` and `pub use` (re-exports resolved to what they name, a
//! re-exported module walked under its new path). Each item is described
//! once, at its first path (promised before internal, then shortest, then
//! alphabetical): its signature, public fields, variants, trait methods,
//! the inherent `pub fn`s and `pub const`s of impls anywhere in the crate,
//! and its trait impls (of public traits); every other path to it is an
//! `alias` line; a re-export of another crate is a `use` line (that crate
//! has its own listing). What is reached through a `#[doc(hidden)]` module
//! (`__private`), or is itself `#[doc(hidden)]`, is internal; a hidden enum
//! is listed by its name only (the metric families' enums, which grow with
//! each metric). Items behind a feature are listed as if it were on;
//! `#[cfg(test)]` ones are not. An item declared `pub` that no public path
//! reaches is an error, as is a name the listing cannot resolve.
//! A listing with no lines is no file (the internal one of a crate with
//! nothing internal).

mod describe;
mod model;
mod publish;
mod selftest;

use std::path::Path;

use describe::listing;

/// The library crates and their sources, from eval-runtime's directory.
const CRATES: &[(&str, &str)] = &[
    ("eval-runtime", "src"),
    ("eval-datasets", "../eval-datasets/src"),
    ("eval-macros", "../eval-macros/src"),
];

/// The listing file's text: its lines, each ended by a newline.
fn text(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Compares `now` with `file` (rewriting it under `update`; an empty
/// listing is no file); a difference is pushed to `changed`, its lines
/// marked `+` (appeared) and `-` (went).
fn compare(name: &str, file: &Path, now: &str, update: bool, changed: &mut Vec<String>) {
    let before = std::fs::read_to_string(file).ok();
    let expected = (!now.is_empty()).then_some(now);
    if before.as_deref() == expected {
        return;
    }
    if update {
        if now.is_empty() {
            std::fs::remove_file(file).unwrap();
        } else {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, now).unwrap();
        }
        return;
    }
    let before = before.unwrap_or_default();
    let old: std::collections::BTreeSet<&str> = before.lines().collect();
    let new: std::collections::BTreeSet<&str> = now.lines().collect();
    let mut lines = vec![format!("{name} ({}):", file.display())];
    lines.extend(new.difference(&old).map(|l| format!("  + {l}")));
    lines.extend(old.difference(&new).map(|l| format!("  - {l}")));
    if now.is_empty() {
        lines.push("  (no lines: the file goes)".into());
    }
    changed.push(lines.join("\n"));
}

#[test]
fn the_public_api_is_what_the_listings_say() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("UPDATE_PUBLIC_API").is_some();
    let mut changed = Vec::new();
    let mut unreachable = Vec::new();
    for (name, src) in CRATES {
        let listing = listing(&here.join(src));
        unreachable.extend(listing.unreachable.iter().map(|u| format!("{name}: {u}")));
        let api = here.join("tests/it/api");
        let promised = api.join(format!("{name}.txt"));
        compare(
            name,
            &promised,
            &text(&listing.promised),
            update,
            &mut changed,
        );
        let internal = api.join(format!("{name}.internal.txt"));
        compare(
            name,
            &internal,
            &text(&listing.internal),
            update,
            &mut changed,
        );
    }
    assert!(
        changed.is_empty(),
        "the public API changed; if that is meant, rewrite the listings with \
         UPDATE_PUBLIC_API=1 cargo test -p eval-runtime --test it public_api\n{}",
        changed.join("\n")
    );
    assert!(
        unreachable.is_empty(),
        "declared pub but unreachable (make them pub(crate), or re-export them):\n{}",
        unreachable.join("\n")
    );
}

/// issue 39: eval-runtime's promised API fits in a listing a person reads:
/// under 400 items (functions and methods, types, traits, constants,
/// aliases), and a listing, with each public field, enum variant and trait
/// impl on a line of its own, that may shrink but never grow past
/// `CEILING` (lower it as the API is cut). The issue asked for 400 lines;
/// the surface it names as promised has about 330 items but, error enums
/// variant by variant, about 640 lines (see its closing note).
#[test]
fn eval_runtimes_promised_api_stays_small() {
    const MAX_ITEMS: usize = 400;
    const CEILING: usize = 640;
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let promised = listing(&here.join("src")).promised;
    let is_item = |line: &&String| {
        let kind = line.split(' ').next().unwrap_or("");
        matches!(kind, "fn" | "struct" | "enum" | "trait" | "type" | "const")
    };
    let items = promised.iter().filter(is_item).count();
    let lines = promised.len();
    println!(
        "eval-runtime's promised API: {items} items (under {MAX_ITEMS}), \
         {lines} listing lines (ceiling {CEILING})"
    );
    assert!(
        items < MAX_ITEMS && lines <= CEILING,
        "eval-runtime's promised API has {items} items (limit {MAX_ITEMS}) and {lines} \
         listing lines (ceiling {CEILING}): a test author's API grew; put what only the \
         `evals` command uses in `__cli` (src/cli_support.rs) or make it pub(crate)"
    );
}
