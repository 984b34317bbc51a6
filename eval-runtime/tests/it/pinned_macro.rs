//! eval-runtime takes exactly the eval-macros of its own version: the
//! macro's expansion builds the runtime's private `Decl` through
//! `__private_<version>` (eval-macros' src/private.rs names it after the
//! macro's version, eval-runtime's build.rs after the runtime's). These
//! tests fail when the two crates' versions or the requirement drift.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("eval-runtime sits in the workspace")
        .to_path_buf()
}

fn manifest(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap();
    text.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `table[key]` as a string, or the workspace's when it says
/// `{ workspace = true }` / `key.workspace = true`.
fn field<'a>(own: &'a toml::Value, inherited: Option<&'a toml::Value>) -> &'a toml::Value {
    match own.get("workspace").and_then(toml::Value::as_bool) {
        Some(true) => inherited.expect("a workspace value to inherit"),
        _ => own,
    }
}

fn version_of(krate: &str, workspace: &toml::Table) -> String {
    let m = manifest(&root().join(krate).join("Cargo.toml"));
    let own = &m["package"]["version"];
    let inherited = workspace["workspace"]
        .get("package")
        .and_then(|p| p.get("version"));
    field(own, inherited).as_str().unwrap().to_string()
}

/// eval-runtime's requirement on eval-macros (its own table, or the
/// workspace's dependency it inherits).
fn requirement(workspace: &toml::Table) -> String {
    let m = manifest(&root().join("eval-runtime/Cargo.toml"));
    let own = &m["dependencies"]["eval-macros"];
    let inherited = workspace["workspace"]
        .get("dependencies")
        .and_then(|d| d.get("eval-macros"));
    let dep = field(own, inherited);
    match dep {
        toml::Value::String(s) => s.clone(),
        other => other["version"].as_str().unwrap().to_string(),
    }
}

#[test]
fn the_runtime_requires_exactly_its_own_version_of_the_macro() {
    let workspace = manifest(&root().join("Cargo.toml"));
    let runtime = version_of("eval-runtime", &workspace);
    let macros = version_of("eval-macros", &workspace);
    assert_eq!(runtime, env!("CARGO_PKG_VERSION"));
    assert_eq!(
        macros, runtime,
        "eval-macros and eval-runtime are released together at the same version"
    );
    assert_eq!(
        requirement(&workspace),
        format!("={macros}"),
        "eval-runtime must require eval-macros at exactly its version (`=x.y.z`), \
         or a newer macro could build a `Decl` this runtime does not have"
    );
}

/// The two rules that name the module agree, and the runtime defines it.
#[test]
fn the_versioned_module_is_named_alike_on_both_sides() {
    let tail: String = env!("CARGO_PKG_VERSION")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let name = format!("__private_{tail}");
    // The runtime's side (build.rs) and the macro's (src/private.rs) both
    // spell the rule; each is checked to still hold it.
    let build = std::fs::read_to_string(root().join("eval-runtime/build.rs")).unwrap();
    assert!(
        build.contains("pub mod __private_{tail}"),
        "build.rs names the module"
    );
    let macros = std::fs::read_to_string(root().join("eval-macros/src/private.rs")).unwrap();
    assert!(
        macros.contains("format!(\"__private_{tail}\")"),
        "eval-macros names it alike"
    );
    for src in [&build, &macros] {
        assert!(src.contains("if c.is_ascii_alphanumeric() { c } else { '_' }"));
    }
    // The module exists under this version's name (written out: a version
    // bump without the path below bumped fails here).
    assert_eq!(
        name, "__private_0_1_0",
        "bump the path below to eval_runtime::{name}"
    );
    let decl = std::any::type_name::<eval_runtime::__private_0_1_0::Decl>();
    assert!(decl.ends_with("Decl"), "{decl}");
}
