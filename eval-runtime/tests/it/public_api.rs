//! The public API of the library crates is what `api/<crate>.txt` lists, so
//! a change to it is a deliberate one: this test reads the sources (with
//! syn) and fails on any difference, naming what appeared and what went.
//! After a deliberate change, `UPDATE_PUBLIC_API=1 cargo test -p
//! eval-runtime --test it public_api` rewrites the listings.
//!
//! Listed: the public module tree and every `pub use`, and every item
//! declared `pub` (not `pub(crate)`) anywhere in the crate, by its module
//! and signature — functions, methods, structs with their public fields,
//! enums with their variants, traits with their methods, constants,
//! statics, type aliases, macros and trait impls. An item declared `pub` in
//! a private module is listed too: it is public API as soon as something
//! re-exports it. An item marked `#[doc(hidden)]` is listed by its name
//! only: it is the contract between this workspace's crates (the metric
//! families' enums, which grow with each metric), not API for users, as
//! `cargo public-api` leaves hidden items out.

use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Fields, ImplItem, Item, TraitItem, Visibility};

/// The library crates and their sources, from eval-runtime's directory.
const CRATES: &[(&str, &str)] = &[
    ("eval-runtime", "src"),
    ("eval-datasets", "../eval-datasets/src"),
    ("eval-macros", "../eval-macros/src"),
];

fn tokens(t: &impl ToTokens) -> String {
    t.to_token_stream().to_string()
}

/// Whether `attrs` hold `#[doc(hidden)]`.
fn is_hidden(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("doc") && tokens(&a.meta).replace(' ', "") == "doc(hidden)")
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// The file of `mod name;` declared in `file` (a `#[path]` wins).
fn module_file(file: &Path, module: &syn::ItemMod) -> PathBuf {
    let dir = file.parent().unwrap();
    for attr in &module.attrs {
        if attr.path().is_ident("path")
            && let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(lit) = &nv.value
            && let syn::Lit::Str(s) = &lit.lit
        {
            return dir.join(s.value());
        }
    }
    let stem = file.file_stem().unwrap().to_string_lossy();
    // `a.rs` declares its children in `a/`; `mod.rs` and `lib.rs` beside them.
    let base = if matches!(stem.as_ref(), "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(stem.as_ref())
    };
    let name = module.ident.to_string();
    let flat = base.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        base.join(name).join("mod.rs")
    }
}

fn list_items(items: &[Item], module: &str, file: &Path, out: &mut Vec<String>) {
    let at = |name: &str| {
        if module.is_empty() {
            name.to_string()
        } else {
            format!("{module}::{name}")
        }
    };
    for item in items {
        match item {
            Item::Mod(m) => {
                let path = at(&m.ident.to_string());
                if is_pub(&m.vis) {
                    out.push(format!("mod {path}"));
                }
                // Items behind a feature are listed as the default build has them.
                let test_only = m
                    .attrs
                    .iter()
                    .any(|a| a.path().is_ident("cfg") && tokens(&a.meta).contains("test"));
                if test_only {
                    continue; // #[cfg(test)] mod tests
                }
                match &m.content {
                    Some((_, inner)) => list_items(inner, &path, file, out),
                    None => {
                        let child = module_file(file, m);
                        let text = std::fs::read_to_string(&child)
                            .unwrap_or_else(|e| panic!("{}: {e}", child.display()));
                        let parsed = syn::parse_file(&text)
                            .unwrap_or_else(|e| panic!("{}: {e}", child.display()));
                        list_items(&parsed.items, &path, &child, out);
                    }
                }
            }
            Item::Use(u) if is_pub(&u.vis) => {
                out.push(format!("use {module}: {}", tokens(&u.tree)));
            }
            Item::Fn(f) if is_pub(&f.vis) => {
                out.push(format!("fn {}: {}", at(""), tokens(&f.sig)));
            }
            Item::Struct(s) if is_pub(&s.vis) => {
                let name = at(&s.ident.to_string());
                out.push(format!("struct {name}{}", tokens(&s.generics)));
                if let Fields::Named(fields) = &s.fields {
                    for f in fields.named.iter().filter(|f| is_pub(&f.vis)) {
                        let field = f.ident.as_ref().unwrap();
                        out.push(format!("field {name}.{field}: {}", tokens(&f.ty)));
                    }
                }
            }
            Item::Enum(e) if is_pub(&e.vis) && is_hidden(&e.attrs) => {
                let name = at(&e.ident.to_string());
                out.push(format!("enum {name} (hidden)"));
            }
            Item::Enum(e) if is_pub(&e.vis) => {
                let name = at(&e.ident.to_string());
                out.push(format!("enum {name}{}", tokens(&e.generics)));
                for v in &e.variants {
                    out.push(format!("variant {name}::{}{}", v.ident, tokens(&v.fields)));
                }
            }
            Item::Trait(t) if is_pub(&t.vis) => {
                let name = at(&t.ident.to_string());
                out.push(format!("trait {name}{}", tokens(&t.generics)));
                for i in &t.items {
                    if let TraitItem::Fn(f) = i {
                        out.push(format!("trait fn {name}: {}", tokens(&f.sig)));
                    }
                }
            }
            Item::Const(c) if is_pub(&c.vis) => {
                out.push(format!(
                    "const {}: {}",
                    at(&c.ident.to_string()),
                    tokens(&c.ty)
                ));
            }
            Item::Static(s) if is_pub(&s.vis) => {
                out.push(format!(
                    "static {}: {}",
                    at(&s.ident.to_string()),
                    tokens(&s.ty)
                ));
            }
            Item::Type(t) if is_pub(&t.vis) => {
                out.push(format!(
                    "type {} = {}",
                    at(&t.ident.to_string()),
                    tokens(&t.ty)
                ));
            }
            Item::Macro(m) if m.attrs.iter().any(|a| a.path().is_ident("macro_export")) => {
                out.push(format!("macro {}", tokens(&m.ident)));
            }
            Item::Impl(i) => {
                let ty = tokens(&i.self_ty);
                if let Some((_, tr, _)) = &i.trait_ {
                    out.push(format!("impl {module}: {} for {ty}", tokens(tr)));
                    continue;
                }
                for ii in &i.items {
                    if let ImplItem::Fn(f) = ii
                        && is_pub(&f.vis)
                    {
                        out.push(format!("fn {module}: {ty}::{}", tokens(&f.sig)));
                    }
                    // issue39: setters two types share, written once in a
                    // `macro_rules!` expanded in each impl: listed as its fns.
                    if let ImplItem::Macro(m) = ii {
                        for f in macro_fns(file, &m.mac) {
                            out.push(format!("fn {module}: {ty}::{}", tokens(&f.sig)));
                        }
                    }
                    if let ImplItem::Const(c) = ii
                        && is_pub(&c.vis)
                    {
                        out.push(format!(
                            "const {module}: {ty}::{}: {}",
                            c.ident,
                            tokens(&c.ty)
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}

/// The pub fns an impl gets from the crate's `macro_rules!` that `mac`
/// calls (found in the crate's `src/` above `file`): its first arm's body
/// read as impl items.
fn macro_fns(file: &Path, mac: &syn::Macro) -> Vec<syn::ImplItemFn> {
    let name = mac.path.segments.last().unwrap().ident.to_string();
    let src = file.ancestors().find(|d| d.ends_with("src")).unwrap();
    let mut files = vec![src.to_path_buf()];
    while let Some(f) = files.pop() {
        if f.is_dir() {
            files.extend(std::fs::read_dir(&f).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        if f.extension().is_none_or(|e| e != "rs")
            || !text.contains(&format!("macro_rules! {name}"))
        {
            continue;
        }
        let parsed = syn::parse_file(&text).unwrap();
        for item in parsed.items {
            let Item::Macro(m) = item else { continue };
            if m.ident.as_ref().is_none_or(|i| *i != name) {
                continue;
            }
            // `() => { <items> };`: the items between the arm's braces.
            let text = m.mac.tokens.to_string();
            let open = text
                .find("=>")
                .and_then(|at| text[at..].find('{').map(|b| at + b));
            let body = &text[open.unwrap() + 1..text.rfind('}').unwrap()];
            let block: syn::ItemImpl = syn::parse_str(&format!("impl X {{ {body} }}")).unwrap();
            return block
                .items
                .into_iter()
                .filter_map(|i| match i {
                    ImplItem::Fn(f) if is_pub(&f.vis) => Some(f),
                    _ => None,
                })
                .collect();
        }
    }
    panic!("no macro_rules! {name} under {}", src.display());
}

fn listing(src: &Path) -> String {
    let lib = src.join("lib.rs");
    let parsed = syn::parse_file(&std::fs::read_to_string(&lib).unwrap()).unwrap();
    let mut out = Vec::new();
    list_items(&parsed.items, "", &lib, &mut out);
    out.sort();
    out.dedup();
    out.join("\n") + "\n"
}

#[test]
fn the_public_api_is_what_the_listings_say() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("UPDATE_PUBLIC_API").is_some();
    let mut changed = Vec::new();
    for (name, src) in CRATES {
        let now = listing(&here.join(src));
        let file = here.join("tests/it/api").join(format!("{name}.txt"));
        let before = std::fs::read_to_string(&file).unwrap_or_default();
        if now == before {
            continue;
        }
        if update {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &now).unwrap();
            continue;
        }
        let old: std::collections::BTreeSet<&str> = before.lines().collect();
        let new: std::collections::BTreeSet<&str> = now.lines().collect();
        let mut lines = vec![format!("{name} ({}):", file.display())];
        lines.extend(new.difference(&old).map(|l| format!("  + {l}")));
        lines.extend(old.difference(&new).map(|l| format!("  - {l}")));
        changed.push(lines.join("\n"));
    }
    assert!(
        changed.is_empty(),
        "the public API changed; if that is meant, rewrite the listings with \
         UPDATE_PUBLIC_API=1 cargo test -p eval-runtime --test it public_api\n{}",
        changed.join("\n")
    );
}

#[test]
fn the_listing_sees_items_fields_methods_and_reexports() {
    let dir = std::env::temp_dir().join(format!("eval-public-api-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inner")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "pub mod inner;\nmod hidden;\npub use hidden::Thing;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("inner.rs"),
        "pub struct S { pub a: u32, b: u8 }\nimpl S { pub fn get(&self) -> u32 { self.a } fn private(&self) {} }\npub(crate) fn internal() {}\n",
    )
    .unwrap();
    std::fs::write(dir.join("hidden.rs"), "pub enum Thing { A, B(u8) }\n").unwrap();
    let listed = listing(&dir);
    for expected in [
        "mod inner",
        "use : hidden :: Thing",
        "struct inner::S",
        "field inner::S.a: u32",
        "fn inner: S::fn get (& self) -> u32",
        "enum hidden::Thing",
        "variant hidden::Thing::B(u8)",
    ] {
        assert!(
            listed.lines().any(|l| l == expected),
            "{expected:?} not in\n{listed}"
        );
    }
    for absent in ["b: u8", "private", "internal", "mod hidden"] {
        assert!(!listed.contains(absent), "{absent:?} listed:\n{listed}");
    }
}
