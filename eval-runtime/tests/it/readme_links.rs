//! What crates.io and docs.rs show renders there: every publishable crate's
//! README (its Cargo.toml's `readme`) and eval-runtime's rustdoc front page
//! link only by absolute URL (a relative `docs/...` link or image breaks
//! on crates.io), and every link into the guide — under the workspace's
//! `homepage`, the one base URL — names a page of `docs/src` and, with an
//! anchor, one of its headings.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const CRATES: [&str; 4] = ["eval-datasets", "eval-macros", "eval-runtime", "eval-cli"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("eval-runtime sits in the workspace")
}

fn manifest(path: &Path) -> toml::Table {
    std::fs::read_to_string(path).unwrap().parse().unwrap()
}

/// The guide's base URL: the workspace's `homepage`.
fn guide_base() -> String {
    let ws = manifest(&root().join("Cargo.toml"));
    let base = ws["workspace"]["package"]["homepage"].as_str().unwrap();
    assert!(
        base.starts_with("https://") && base.ends_with('/'),
        "{base}"
    );
    base.to_string()
}

/// Every crate's README file, as its Cargo.toml names it.
fn readmes() -> Vec<PathBuf> {
    CRATES
        .iter()
        .map(|c| {
            let dir = root().join(c);
            let m = manifest(&dir.join("Cargo.toml"));
            let readme = m["package"]["readme"]
                .as_str()
                .unwrap_or_else(|| panic!("{c} names no readme"));
            for key in ["repository", "homepage", "documentation", "description"] {
                assert!(m["package"].get(key).is_some(), "{c} has no `{key}`");
            }
            dir.join(readme)
        })
        .collect()
}

/// Link targets: `](target)` and `src="target"`.
fn targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [("](", ')'), ("src=\"", '"')] {
        let mut rest = text;
        while let Some(i) = rest.find(open) {
            let after = &rest[i + open.len()..];
            let Some(end) = after.find(close) else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(page: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut out = BTreeSet::new();
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.insert(slug(
                line.trim_start_matches('#')
                    .trim()
                    .replace('`', "")
                    .as_str(),
            ));
        }
    }
    out
}

/// What is wrong with the links of `text` (shown as `shown`).
fn problems(shown: &str, text: &str, base: &str) -> Vec<String> {
    let mut out = Vec::new();
    for link in targets(text) {
        if !link.starts_with("https://") && !link.starts_with("http://127.0.0.1") {
            out.push(format!("{shown}: `{link}` is not an absolute URL"));
            continue;
        }
        let Some(rest) = link.strip_prefix(base) else {
            continue;
        };
        let (page, anchor) = rest.split_once('#').unwrap_or((rest, ""));
        let source = match page {
            "" | "index.html" => root().join("docs/src/introduction.md"),
            p if p.ends_with(".html") => root().join("docs/src").join(p.replace(".html", ".md")),
            p => root().join("docs/src").join(p),
        };
        let Ok(content) = std::fs::read(&source) else {
            out.push(format!(
                "{shown}: `{link}`: the guide has no {}",
                source.display()
            ));
            continue;
        };
        let page_text = String::from_utf8_lossy(&content);
        if !anchor.is_empty() && !anchors(&page_text).contains(anchor) {
            out.push(format!("{shown}: `{link}`: no heading with that anchor"));
        }
    }
    out
}

#[test]
fn crate_readmes_link_only_by_absolute_url_into_pages_that_exist() {
    let base = guide_base();
    let mut found = Vec::new();
    let mut guide_links = 0;
    for path in readmes() {
        let text = std::fs::read_to_string(&path).unwrap();
        guide_links += targets(&text)
            .iter()
            .filter(|l| l.starts_with(&base))
            .count();
        found.extend(problems(&path.display().to_string(), &text, &base));
    }
    let lib = std::fs::read_to_string(root().join("eval-runtime/src/lib.rs")).unwrap();
    let front: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !front.contains("docs/src/"),
        "the front page names guide files by path"
    );
    guide_links += targets(&front)
        .iter()
        .filter(|l| l.starts_with(&base))
        .count();
    found.extend(problems("eval-runtime/src/lib.rs", &front, &base));
    assert!(guide_links >= 30, "only {guide_links} links into the guide");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn a_relative_link_or_a_missing_page_is_caught() {
    let base = guide_base();
    let text = format!(
        "[a](docs/src/metrics.md) ![b](docs/src/report.png) [c]({base}nowhere.html) [d]({base}metrics.html#no-such-heading) [e]({base}metrics.html)"
    );
    let found = problems("x", &text, &base);
    assert_eq!(found.len(), 4, "{found:#?}");
}

/// `text` with its links into the guide's sources (`docs/src/PAGE.md#a`,
/// `docs/src/IMAGE`) made absolute under `base` (`PAGE.html#a`, `IMAGE`;
/// `SUMMARY.md`, the book itself, is `base`).
fn absolute(text: &str, base: &str) -> String {
    let mut out = text.to_string();
    for (open, close) in [("](docs/src/", ')'), ("src=\"docs/src/", '"')] {
        let mut done = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(i) = rest.find(open) {
            let after = &rest[i + open.len()..];
            let end = after.find(close).unwrap_or(after.len());
            let (page, anchor) = match after[..end].split_once('#') {
                Some((p, a)) => (p, format!("#{a}")),
                None => (&after[..end], String::new()),
            };
            let page = match page {
                "SUMMARY.md" => String::new(),
                p => match p.strip_suffix(".md") {
                    Some(stem) => format!("{stem}.html"),
                    None => p.to_string(),
                },
            };
            done.push_str(&rest[..i]);
            done.push_str(&open[..open.len() - "docs/src/".len()]);
            done.push_str(&format!("{base}{page}{anchor}"));
            rest = &after[end..];
        }
        done.push_str(rest);
        out = done;
    }
    out
}

/// eval-runtime's README on crates.io is the repository's README with its
/// guide links made absolute (the repository's own stay relative, so they
/// work where the repository is read). `UPDATE_README=1` rewrites it.
#[test]
fn eval_runtimes_readme_is_the_repository_readme_with_absolute_links() {
    let base = guide_base();
    let repository = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        repository.contains("](docs/src/"),
        "the repository README links the guide's sources"
    );
    let want = absolute(&repository, &base);
    let path = root().join("eval-runtime/README.md");
    if std::env::var_os("UPDATE_README").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "eval-runtime/README.md is not README.md with absolute links: \
         UPDATE_README=1 cargo test -p eval-runtime --test it readme"
    );
    assert_eq!(
        absolute(
            "[a](docs/src/x.md#b) [c](docs/src/SUMMARY.md) <img src=\"docs/src/i.png\">",
            "https://g/"
        ),
        "[a](https://g/x.html#b) [c](https://g/) <img src=\"https://g/i.png\">"
    );
}
