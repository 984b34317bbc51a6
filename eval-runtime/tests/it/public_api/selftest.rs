//! The lister read on small crates written to a temporary directory: what
//! it must list, where, and what it must not.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::describe::{Listing, listing};

/// Writes `files` (paths under `src/`) as a crate depending on
/// eval-datasets, and lists it.
fn crate_of(files: &[(&str, &str)]) -> (Listing, PathBuf) {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("eval-public-api-{}-{n}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"x\"\n[dependencies]\neval-datasets = \"0.1\"\n",
    )
    .unwrap();
    for (path, text) in files {
        let file = src.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    (listing(&src), dir)
}

const LIB: &str = r#"
pub mod inner;
mod hidden;
pub use hidden::Thing;
#[doc(hidden)]
pub mod __private {
    pub use crate::secret::Internal;
    pub use crate::inner::S;
}
mod secret { pub struct Internal; }
pub mod twice { pub use crate::inner::S as Same; }
mod methods {
    use crate::inner::S;
    impl S { pub fn elsewhere(&self) {} fn not_this(&self) {} }
    impl std::fmt::Display for S {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { Ok(()) }
    }
}
mod globbed { pub fn g() {} pub struct G; pub(crate) fn crate_only() {} }
pub use globbed::*;
pub use eval_datasets::x;
pub use eval_datasets::prelude::*;
mod lost { pub fn nobody_reaches_me() {} }
#[doc(hidden)]
pub struct Shadow;
impl Shadow { pub fn shade(&self) {} }
pub(crate) fn internal() {}
#[cfg(test)]
mod tests { pub fn test_only() {} }
"#;

const INNER: &str = "pub struct S { pub a: u32, b: u8 }
impl S { pub fn get(&self) -> u32 { self.a } fn private(&self) {} #[doc(hidden)] pub fn hush(&self) {} }
pub(crate) fn internal() {}
";

#[test]
fn the_listing_sees_items_fields_methods_and_reexports() {
    let (listed, dir) = crate_of(&[
        ("lib.rs", LIB),
        ("inner.rs", INNER),
        ("hidden.rs", "pub enum Thing { A, B(u8) }\n"),
    ]);
    let promised = listed.promised.join("\n");
    let internal = listed.internal.join("\n");
    for expected in [
        "mod inner",
        "mod twice",
        "struct inner::S",
        "field inner::S.a: u32",
        "fn inner::S::get (& self) -> u32",
        // An impl in another module than its type is the type's.
        "fn inner::S::elsewhere (& self)",
        "impl inner::S: std::fmt::Display",
        // A pub item of a private module, re-exported at the root.
        "enum Thing",
        "variant Thing::B(u8)",
        // Reached by two paths: described once, and one alias.
        "alias twice::Same -> inner::S",
        // A glob re-export.
        "fn g ()",
        "struct G",
        // Another crate's items: one line each.
        "use x = eval_datasets::x",
        "use * = eval_datasets::prelude::*",
    ] {
        assert!(
            listed.promised.iter().any(|l| l == expected),
            "{expected:?} not promised in\n{promised}"
        );
    }
    // Reached only through a #[doc(hidden)] module: internal.
    for expected in [
        "mod __private",
        "struct __private::Internal",
        "alias __private::S -> inner::S",
        // Itself hidden, at the root; a hidden method of a promised type.
        "struct Shadow",
        "fn Shadow::shade (& self)",
        "fn inner::S::hush (& self)",
    ] {
        assert!(
            listed.internal.iter().any(|l| l == expected),
            "{expected:?} not internal in\n{internal}"
        );
    }
    let all = format!("{promised}\n{internal}");
    for absent in [
        "b: u8",
        "private (",
        "not_this",
        "fn internal",
        "crate_only",
        "test_only",
        "nobody_reaches_me",
        "hidden::Thing",
        "mod hidden",
        "mod secret",
        "mod methods",
        "mod globbed",
        "struct twice::Same",
        "struct __private::S",
        "Internal\nstruct",
    ] {
        assert!(!all.contains(absent), "{absent:?} listed:\n{all}");
    }
    assert_eq!(
        all.lines().filter(|l| l.starts_with("struct ")).count(),
        4,
        "S, G, Internal and Shadow, each described once:\n{all}"
    );
    assert!(
        !promised.contains("Shadow") && !promised.contains("hush"),
        "{promised}"
    );
    assert_eq!(listed.unreachable, ["src/lib.rs nobody_reaches_me"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_name_the_listing_cannot_resolve_is_a_panic_naming_it() {
    let outcome = std::panic::catch_unwind(|| {
        crate_of(&[("lib.rs", "mod a { pub struct A; }\npub use a::Missing;\n")])
    });
    let message = match outcome {
        Ok(_) => String::from("no panic"),
        Err(e) => e
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_else(|| String::from("a panic without a message")),
    };
    assert!(
        message.contains("lib.rs") && message.contains("a::Missing"),
        "{message}"
    );
}
