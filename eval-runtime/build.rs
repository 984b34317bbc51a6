//! Names the hidden module `#[eval_dataset]`'s expansion calls after this
//! crate's version (`__private_0_1_0` for 0.1.0), as thiserror does: the
//! macro (eval-macros' src/private.rs, the same rule) names it after its own
//! version, so an expansion by another eval-macros version cannot compile
//! against this runtime. The pin `eval-macros = "=x.y.z"` keeps them equal;
//! tests/it/pinned_macro.rs fails when they drift.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let tail: String = version
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let module = format!(
        "/// What the attribute's expansion calls, under this version's name.\n\
         #[doc(hidden)]\n\
         pub mod __private_{tail} {{\n    \
         #[doc(hidden)]\n    \
         pub use crate::__private::*;\n\
         }}\n"
    );
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        println!("cargo:warning=OUT_DIR is not set");
        std::process::exit(1);
    };
    if let Err(e) = std::fs::write(out.join("private.rs"), module) {
        println!(
            "cargo:warning=cannot write {}: {e}",
            out.join("private.rs").display()
        );
        std::process::exit(1);
    }
}
