//! Which files a dataset path names — the one rule for every path a plan
//! is given (`evals evaluate FILE`, [`PlanBuilder::dataset`](super::PlanBuilder::dataset),
//! the harness's `.dataset(...)`):
//!
//! 1. a path that exists (a file, a folder, a symlink) is that path,
//!    literally, whatever characters its name holds (`set[12].jsonl` is the
//!    file of that name, never `set1.jsonl`);
//! 2. `glob:PATTERN` is a pattern on purpose (for the rare pattern that is
//!    also an existing file's name);
//! 3. a path that names nothing and holds `*`, `?` or `[` is a pattern:
//!    the dataset files (`.jsonl`, `.ndjson`, `.csv`, `.json`...) it matches,
//!    in order; none is an error saying both readings;
//! 4. anything else is a literal path (a missing file is reported when it
//!    is read).
//!
//! The base directory is never a pattern: its own `[`, `*` or `?` are
//! matched literally.

use std::path::{Path, PathBuf};

/// Written before a pattern to have it globbed even when a file has its
/// name.
pub(crate) const GLOB_PREFIX: &str = "glob:";

/// The characters that make a path that names nothing a pattern.
const PATTERN_CHARS: [char; 3] = ['*', '?', '['];

/// The files `written` names (relative to `base` unless absolute), each
/// with the path to show for it; or why it names none.
pub(crate) fn dataset_files(base: &Path, written: &str) -> Result<Vec<(PathBuf, String)>, String> {
    let full = base.join(written);
    // An existing path is literal; a dangling symlink too (reading it says so).
    if std::fs::symlink_metadata(&full).is_ok() {
        return Ok(vec![(full, written.to_string())]);
    }
    if let Some(pattern) = written.strip_prefix(GLOB_PREFIX) {
        return matches(base, pattern, written, true);
    }
    if written.contains(PATTERN_CHARS) {
        return matches(base, written, written, false);
    }
    Ok(vec![(full, written.to_string())])
}

/// The dataset files `pattern` matches under `base`, sorted; none is an
/// error (`asked`: the pattern was marked with [`GLOB_PREFIX`]).
fn matches(
    base: &Path,
    pattern: &str,
    written: &str,
    asked: bool,
) -> Result<Vec<(PathBuf, String)>, String> {
    let shown = eval_datasets::terminal::escaped(written);
    let text = if Path::new(pattern).is_absolute() || base.as_os_str().is_empty() {
        pattern.to_string()
    } else {
        let base_text = base.to_string_lossy();
        let sep = if base_text.ends_with(std::path::MAIN_SEPARATOR) {
            ""
        } else {
            std::path::MAIN_SEPARATOR_STR
        };
        format!("{}{sep}{pattern}", glob::Pattern::escape(&base_text))
    };
    let paths = glob::glob(&text).map_err(|e| {
        let why = if asked {
            String::new()
        } else {
            " (no file has this name, so it was read as a pattern)".to_string()
        };
        format!("`{shown}`{why}: bad pattern: {e}")
    })?;
    let mut files = Vec::new();
    for entry in paths {
        let path = entry.map_err(|e| {
            format!(
                "`{shown}`: {}",
                eval_datasets::terminal::escaped(&e.to_string())
            )
        })?;
        if eval_datasets::Format::from_path(&path.to_string_lossy()).is_err() {
            continue; // a pattern like `evals/*` also matches READMEs
        }
        let shown = path
            .strip_prefix(base)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| path.to_string_lossy().into_owned());
        files.push((path, shown));
    }
    if files.is_empty() {
        let base = base.display().to_string();
        let base = eval_datasets::terminal::escaped(&base);
        return Err(if asked {
            format!("`{shown}`: the pattern matches no dataset file (relative to {base})")
        } else {
            format!(
                "`{shown}`: no such file, and read as a pattern it matches no dataset file (relative to {base})"
            )
        });
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("eval-paths-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(found: &[(PathBuf, String)]) -> Vec<&str> {
        found.iter().map(|(_, s)| s.as_str()).collect()
    }

    #[test]
    fn an_existing_file_is_that_file_whatever_its_name_holds() {
        let dir = scratch("literal");
        for name in ["set[12].jsonl", "set1.jsonl", "a*b?.jsonl"] {
            std::fs::write(dir.join(name), "{\"input\": \"q\"}\n").unwrap();
        }
        let found = dataset_files(&dir, "set[12].jsonl").unwrap();
        assert_eq!(
            found,
            vec![(dir.join("set[12].jsonl"), "set[12].jsonl".into())]
        );
        assert_eq!(
            names(&dataset_files(&dir, "a*b?.jsonl").unwrap()),
            ["a*b?.jsonl"]
        );
        // Alone, too (the old code said it "matches no dataset file").
        std::fs::remove_file(dir.join("set1.jsonl")).unwrap();
        assert_eq!(
            names(&dataset_files(&dir, "set[12].jsonl").unwrap()),
            ["set[12].jsonl"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_path_naming_nothing_is_a_pattern_and_glob_asks_for_one() {
        let dir = scratch("pattern");
        for name in ["set[12].jsonl", "set1.jsonl", "set2.csv", "notes.md"] {
            std::fs::write(dir.join(name), "x\n").unwrap();
        }
        assert_eq!(
            names(&dataset_files(&dir, "set[1-2].*").unwrap()),
            ["set1.jsonl", "set2.csv"]
        );
        assert_eq!(names(&dataset_files(&dir, "*").unwrap()).len(), 3);
        // A pattern that is also a file's name: `glob:` asks for the pattern.
        assert_eq!(
            names(&dataset_files(&dir, "glob:set[12].jsonl").unwrap()),
            ["set1.jsonl"]
        );
        let e = dataset_files(&dir, "none-*.jsonl").unwrap_err();
        assert!(
            e.contains(
                "`none-*.jsonl`: no such file, and read as a pattern it matches no dataset file"
            ),
            "{e}"
        );
        let e = dataset_files(&dir, "glob:none-*.jsonl").unwrap_err();
        assert!(e.contains("the pattern matches no dataset file"), "{e}");
        // No pattern characters: literal, missing or not.
        assert_eq!(
            dataset_files(&dir, "missing.jsonl").unwrap(),
            vec![(dir.join("missing.jsonl"), "missing.jsonl".into())]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_base_directory_is_never_a_pattern() {
        let dir = scratch("base").join("proj[1]");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.jsonl"), "x\n").unwrap();
        assert_eq!(names(&dataset_files(&dir, "*.jsonl").unwrap()), ["a.jsonl"]);
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn hostile_names_in_errors_are_escaped() {
        let dir = scratch("hostile");
        let e = dataset_files(&dir, "x\u{1b}[2J\u{202e}*.jsonl").unwrap_err();
        assert!(!e.contains('\u{1b}') && !e.contains('\u{202e}'), "{e:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
