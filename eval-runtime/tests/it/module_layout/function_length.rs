//! No function grows past [`MAX_LINES`] lines, in any crate of the
//! workspace: a function is counted from its `fn` line to its closing brace
//! (methods, trait methods with a body and functions nested in other
//! functions included). Test code is not counted: `tests/` folders,
//! `#[test]` functions and `#[cfg(test)]` modules.
//!
//! The sources are parsed with `syn`; proc-macro2's `span-locations` gives
//! the line numbers.

use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The longest a function may be, in lines.
const MAX_LINES: usize = 150;

/// Functions still to split: (file from the workspace root, function, its
/// length when listed). A listed function may not grow; the goal is an
/// empty list.
const ALLOWLIST: &[(&str, &str, usize)] = &[];

/// The workspace's Rust sources outside `tests/` folders and `target/`.
fn workspace_sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() {
                if name != "tests" && name != "target" && !name.to_string_lossy().starts_with('.') {
                    walk(&path, out);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = workspace();
    let mut out = Vec::new();
    for krate in [
        "",
        "eval-datasets",
        "eval-macros",
        "eval-runtime",
        "eval-cli",
        "docs",
    ] {
        let dir = root.join(krate);
        for part in ["src", "examples", "benches"] {
            walk(&dir.join(part), &mut out);
        }
        for file in ["build.rs", "doctests.rs"] {
            let path = dir.join(file);
            if path.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// A function: where it starts, its name (`Type::method`, `outer::inner`)
/// and its length in lines.
#[derive(Debug)]
struct Function {
    line: usize,
    name: String,
    lines: usize,
}

#[derive(Default)]
struct Collector {
    /// The names around the current item: the impl's type, outer functions.
    scope: Vec<String>,
    found: Vec<Function>,
}

fn is_test_code(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        let path = attr.path();
        if path.is_ident("test") || path.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        path.is_ident("cfg")
            && attr
                .meta
                .require_list()
                .is_ok_and(|list| list.tokens.to_string().trim() == "test")
    })
}

impl Collector {
    fn function(
        &mut self,
        attrs: &[syn::Attribute],
        sig: &syn::Signature,
        block: &syn::Block,
        visit: impl FnOnce(&mut Self),
    ) {
        if is_test_code(attrs) {
            return;
        }
        let first = sig.fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        let mut name = self.scope.clone();
        name.push(sig.ident.to_string());
        self.found.push(Function {
            line: first,
            name: name.join("::"),
            lines: last + 1 - first,
        });
        self.scope.push(sig.ident.to_string());
        visit(self);
        self.scope.pop();
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_fn(&mut self, node: &'ast syn::ItemFn) {
        self.function(&node.attrs, &node.sig, &node.block, |this| {
            syn::visit::visit_item_fn(this, node)
        });
    }

    fn visit_impl_item_fn(&mut self, node: &'ast syn::ImplItemFn) {
        self.function(&node.attrs, &node.sig, &node.block, |this| {
            syn::visit::visit_impl_item_fn(this, node)
        });
    }

    fn visit_trait_item_fn(&mut self, node: &'ast syn::TraitItemFn) {
        if let Some(block) = &node.default {
            self.function(&node.attrs, &node.sig, block, |this| {
                syn::visit::visit_trait_item_fn(this, node)
            });
        }
    }

    fn visit_item_impl(&mut self, node: &'ast syn::ItemImpl) {
        if is_test_code(&node.attrs) {
            return;
        }
        let ty = &node.self_ty;
        let name = quote::quote!(#ty).to_string().replace(' ', "");
        self.scope.push(name);
        syn::visit::visit_item_impl(self, node);
        self.scope.pop();
    }

    fn visit_item_trait(&mut self, node: &'ast syn::ItemTrait) {
        self.scope.push(node.ident.to_string());
        syn::visit::visit_item_trait(self, node);
        self.scope.pop();
    }

    fn visit_item_mod(&mut self, node: &'ast syn::ItemMod) {
        if !is_test_code(&node.attrs) {
            syn::visit::visit_item_mod(self, node);
        }
    }
}

/// The functions of one source text, test code left out.
fn functions_in(text: &str) -> Result<Vec<Function>, syn::Error> {
    let file = syn::parse_file(text)?;
    let mut collector = Collector::default();
    collector.visit_file(&file);
    Ok(collector.found)
}

#[test]
fn the_reader_counts_from_the_fn_line_to_the_closing_brace() {
    let text = "/// doc\n#[inline]\npub fn one() {\n    let x = 1;\n}\n\
                struct S;\nimpl S {\n    fn two(&self) {\n        fn inner() {}\n    }\n}\n\
                #[cfg(test)]\nmod tests {\n    fn helper() {\n\n    }\n}\n\
                #[test]\nfn a_test() {}\n";
    let found = functions_in(text).expect("parses");
    let got: Vec<(usize, &str, usize)> = found
        .iter()
        .map(|f| (f.line, f.name.as_str(), f.lines))
        .collect();
    assert_eq!(
        got,
        [(3, "one", 3), (8, "S::two", 3), (9, "S::two::inner", 1)]
    );
}

#[test]
fn no_function_is_long() {
    let root = workspace();
    let mut too_long = Vec::new();
    let mut listed_seen = Vec::new();
    let sources = workspace_sources();
    assert!(
        sources.len() > 100,
        "the walk found {} files",
        sources.len()
    );
    for path in sources {
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let relative = path
            .strip_prefix(&root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let functions = functions_in(&text).unwrap_or_else(|e| panic!("{relative}: {e}"));
        for f in functions {
            let listed = ALLOWLIST
                .iter()
                .find(|(file, name, _)| *file == relative && *name == f.name);
            match listed {
                Some(&(_, _, allowed)) => {
                    listed_seen.push((relative.clone(), f.name.clone()));
                    if f.lines <= MAX_LINES {
                        too_long.push(format!(
                            "{relative}:{} {} is {} lines now: remove it from ALLOWLIST",
                            f.line, f.name, f.lines
                        ));
                    } else if f.lines > allowed {
                        too_long.push(format!(
                            "{relative}:{} {} is {} lines, grown past its allowance of {allowed} (split it)",
                            f.line, f.name, f.lines
                        ));
                    }
                }
                None if f.lines > MAX_LINES => too_long.push(format!(
                    "{relative}:{} {} is {} lines (at most {MAX_LINES}: split it)",
                    f.line, f.name, f.lines
                )),
                None => {}
            }
        }
    }
    let stale: Vec<_> = ALLOWLIST
        .iter()
        .filter(|(file, name, _)| !listed_seen.iter().any(|(f, n)| f == file && n == name))
        .collect();
    assert!(
        too_long.is_empty(),
        "functions longer than {MAX_LINES} lines (or allowlisted ones to update):\n{}",
        too_long.join("\n")
    );
    assert!(
        stale.is_empty(),
        "allowlisted functions that are gone (remove them from ALLOWLIST): {stale:?}"
    );
}
