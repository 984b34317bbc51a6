//! The one containment rule (`files::contained`): a path given in a file or
//! an attribute stays inside its root — no `..` out, no absolute path
//! elsewhere, no symlink (to a file or a directory) leading out.

#![cfg(unix)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use eval_datasets::files::{ContainmentError, contained};

/// `<tmp>/root` with `root/evals/in.jsonl`, and `<tmp>/outside/secret.jsonl`.
fn tree(name: &str) -> (PathBuf, PathBuf) {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "eval-datasets-contain-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(base.join("root/evals")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    std::fs::write(base.join("root/evals/in.jsonl"), "{\"input\": \"a\"}\n").unwrap();
    std::fs::write(base.join("outside/secret.jsonl"), "{\"input\": \"s\"}\n").unwrap();
    (base.join("root"), base.join("outside"))
}

fn outside(result: Result<PathBuf, ContainmentError>) -> ContainmentError {
    match result {
        Err(e @ ContainmentError::Outside { .. }) => e,
        other => panic!("expected Outside, got {other:?}"),
    }
}

#[test]
fn paths_inside_the_root_resolve_to_the_real_file() {
    let (root, _) = tree("inside");
    let real = root.join("evals/in.jsonl").canonicalize().unwrap();
    assert_eq!(
        contained(&root, &root.join("evals/in.jsonl")).unwrap(),
        real
    );
    assert_eq!(
        contained(&root, &root.join("evals/../evals/./in.jsonl")).unwrap(),
        real
    );
    // A symlink that stays inside is fine.
    symlink("evals/in.jsonl", root.join("alias.jsonl")).unwrap();
    assert_eq!(contained(&root, &root.join("alias.jsonl")).unwrap(), real);
    // A root reached through a symlink is the same root.
    let linked_root = root.with_file_name("root-link");
    symlink(&root, &linked_root).unwrap();
    assert_eq!(
        contained(&linked_root, &linked_root.join("evals/in.jsonl")).unwrap(),
        real
    );
}

#[test]
fn dotdot_absolute_paths_and_symlinks_out_are_refused() {
    let (root, out) = tree("refused");
    // `..` out of the root, whether or not the file exists.
    let e = outside(contained(&root, &root.join("../outside/secret.jsonl")));
    assert_eq!(
        e.to_string(),
        format!(
            "resolves to {}, outside {}",
            out.join("secret.jsonl").display(),
            root.display()
        )
    );
    outside(contained(&root, &root.join("../../nowhere/x.jsonl")));
    // An absolute path elsewhere.
    outside(contained(&root, &out.join("secret.jsonl")));
    outside(contained(&root, Path::new("/nonexistent-outside/x.jsonl")));
    // A symlink to a file outside, and one to a directory outside.
    symlink(out.join("secret.jsonl"), root.join("evals/leak.jsonl")).unwrap();
    let e = outside(contained(&root, &root.join("evals/leak.jsonl")));
    assert!(
        e.to_string().contains("through a symlink"),
        "names the symlink: {e}"
    );
    symlink(&out, root.join("evals/dir")).unwrap();
    outside(contained(&root, &root.join("evals/dir/secret.jsonl")));
    // A relative symlink climbing out.
    symlink("../../outside/secret.jsonl", root.join("evals/up.jsonl")).unwrap();
    outside(contained(&root, &root.join("evals/up.jsonl")));
}

#[test]
fn a_missing_file_inside_is_missing_not_outside() {
    let (root, _) = tree("missing");
    let err = contained(&root, &root.join("evals/nope.jsonl")).unwrap_err();
    assert!(matches!(err, ContainmentError::Missing { .. }), "{err:?}");
    // A dangling symlink is missing too.
    symlink("gone.jsonl", root.join("evals/dangling.jsonl")).unwrap();
    let err = contained(&root, &root.join("evals/dangling.jsonl")).unwrap_err();
    assert!(matches!(err, ContainmentError::Missing { .. }), "{err:?}");
}
