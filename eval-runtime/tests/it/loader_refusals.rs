//! `loaderRef`s resolved against a loader directory (the CLI's
//! `--loader-dir`): each refusal says why, with the path — out by `..`, an
//! absolute path elsewhere, a symlink leading out, missing, not a regular
//! file, too large, not UTF-8 — and the reason reaches the sample's error.

use std::path::{Path, PathBuf};

use eval_runtime::Harness;
use eval_runtime::results::Results;
use eval_runtime::retrieval::{LoadError, MemoryRetriever, RetrieverAgent, load_from_dir};

/// `<tmp>/root/docs/ok.md` (the loader directory is `root/docs`) and
/// `<tmp>/root/secret.txt` outside it.
fn tree(name: &str) -> (PathBuf, PathBuf) {
    let base = std::env::temp_dir().join(format!(
        "eval-loader-refusals-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&base);
    let docs = base.join("root/docs");
    std::fs::create_dir_all(docs.join("sub")).unwrap();
    std::fs::write(docs.join("ok.md"), "Refunds within 30 days.").unwrap();
    std::fs::write(base.join("root/secret.txt"), "secret").unwrap();
    (base.join("root"), docs)
}

fn refused(dir: &Path, r: &str, limit: u64) -> (LoadError, String) {
    let e = load_from_dir(dir, r, false, limit).unwrap_err();
    let line = e.to_string();
    (e, line)
}

#[test]
fn a_file_inside_is_loaded() {
    let (_, docs) = tree("inside");
    assert_eq!(
        load_from_dir(&docs, "ok.md", false, 1 << 20).unwrap(),
        "Refunds within 30 days."
    );
    assert_eq!(
        load_from_dir(&docs, "sub/../ok.md", false, 1 << 20).unwrap(),
        "Refunds within 30 days."
    );
}

#[test]
fn each_refusal_says_why_with_the_path() {
    let (root, docs) = tree("why");
    let real_docs = docs.canonicalize().unwrap();

    let (e, line) = refused(&docs, "../secret.txt", 1 << 20);
    assert!(matches!(e, LoadError::DotDot { .. }), "{e:?}");
    assert!(
        line.contains("../secret.txt resolves (after `..`) to ")
            && line.contains(&format!(
                "{}, outside the loader directory",
                root.join("secret.txt").display()
            )),
        "{line}"
    );

    let outside = root.join("secret.txt");
    let (e, line) = refused(&docs, &outside.display().to_string(), 1 << 20);
    assert!(matches!(e, LoadError::Absolute { .. }), "{e:?}");
    assert_eq!(
        line,
        format!(
            "{} is an absolute path outside the loader directory {}",
            outside.display(),
            docs.display()
        )
    );

    let (e, line) = refused(&docs, "nope.md", 1 << 20);
    assert!(matches!(e, LoadError::Missing { .. }), "{e:?}");
    assert!(
        line.starts_with(&format!(
            "{} does not exist (",
            docs.join("nope.md").display()
        )),
        "{line}"
    );

    let (e, line) = refused(&docs, "sub", 1 << 20);
    assert!(matches!(e, LoadError::NotAFile { .. }), "{e:?}");
    assert_eq!(
        line,
        format!(
            "{} is not a regular file (a directory)",
            real_docs.join("sub").display()
        )
    );

    let (e, line) = refused(&docs, "ok.md", 5);
    assert!(
        matches!(
            e,
            LoadError::TooLarge {
                size: 23,
                limit: 5,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        line,
        format!(
            "{} is too large: 23 bytes, over the limit of 5 bytes (EVAL_MAX_DATASET_BYTES)",
            real_docs.join("ok.md").display()
        )
    );

    std::fs::write(docs.join("latin1.md"), b"caf\xE9").unwrap();
    let (e, line) = refused(&docs, "latin1.md", 1 << 20);
    assert!(matches!(e, LoadError::NotText { offset: 3, .. }), "{e:?}");
    assert!(
        line.ends_with("latin1.md is not UTF-8 text (invalid byte at offset 3)"),
        "{line}"
    );

    // Allowed anywhere, the file outside is read; the other checks stay.
    assert_eq!(
        load_from_dir(&docs, "../secret.txt", true, 1 << 20).unwrap(),
        "secret"
    );
    assert!(matches!(
        load_from_dir(&docs, "../secret.txt", true, 2),
        Err(LoadError::TooLarge { .. })
    ));
}

#[cfg(unix)]
#[test]
fn a_symlink_leading_out_is_named_as_such() {
    let (root, docs) = tree("symlink");
    std::os::unix::fs::symlink(root.join("secret.txt"), docs.join("link.md")).unwrap();
    std::os::unix::fs::symlink(&root, docs.join("up")).unwrap();
    let real_secret = root.join("secret.txt").canonicalize().unwrap();
    for r in ["link.md", "up/secret.txt"] {
        let (e, line) = refused(&docs, r, 1 << 20);
        assert!(matches!(e, LoadError::Symlink { .. }), "{r}: {e:?}");
        assert_eq!(
            line,
            format!(
                "{} leads through a symlink to {}, outside the loader directory {}",
                docs.join(r).display(),
                real_secret.display(),
                docs.display()
            ),
            "{r}"
        );
    }
}

#[test]
fn the_reason_reaches_the_samples_error() {
    let (root, docs) = tree("harness");
    std::fs::write(
        root.join("ld.json"),
        r#"{"version": "1", "id": "ld", "defaults": {"topK": 2, "scopePrefix": "eval:ld:"},
  "documents": [{"sourceId": "eval:ld:a", "loaderRef": "ok.md"},
                {"sourceId": "eval:ld:b", "loaderRef": "../secret.txt"}],
  "queries": [{"id": "q", "query": "refunds", "relevant": {"sourceIds": ["eval:ld:a"]}}]}"#,
    )
    .unwrap();
    let agent = RetrieverAgent::new(MemoryRetriever::new())
        .base_dir(&root)
        .loader_dir(&docs, false);
    let out = Harness::new()
        .base_dir(&root)
        .results_file(root.join("r.json"))
        .dataset("ld.json", "recall_at_k >= 0.5")
        .agent(agent)
        .evaluate(crate::common::harness_args(&["harness", "-q"]));
    assert_eq!(out.code, 101);
    let r = Results::read(&root.join("r.json")).unwrap();
    let error = r.samples[0].error.as_deref().unwrap();
    assert!(
        error.contains("1 document(s) could not be loaded: ld.json:3: loaderRef `../secret.txt` (document `eval:ld:b`): ")
            && error.contains("resolves (after `..`) to ")
            && error.contains("outside the loader directory"),
        "{error}"
    );
}
