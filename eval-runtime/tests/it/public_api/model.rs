//! A crate's module tree as its sources declare it, and name resolution
//! within it: what a name means in a module (a declared item, else an
//! import, else what a glob import brings), as rustc resolves it, enough for
//! this crate's own code. What cannot be resolved is a panic naming it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::{Item, UseTree, Visibility};

pub(super) fn tokens(t: &impl ToTokens) -> String {
    t.to_token_stream().to_string()
}

/// Whether `attrs` hold `#[doc(hidden)]`.
pub(super) fn is_hidden(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("doc") && tokens(&a.meta).replace(' ', "") == "doc(hidden)")
}

pub(super) fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// Whether `attrs`' `#[cfg]`s hold in the build listed: every feature on,
/// not a test, on Linux. Another predicate is a panic naming `file`.
pub(super) fn enabled(attrs: &[syn::Attribute], file: &Path) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("cfg")).all(|a| {
        let meta: syn::Meta = a
            .parse_args()
            .unwrap_or_else(|e| panic!("{}: #[cfg] not understood: {e}", file.display()));
        cfg_holds(&meta, file)
    })
}

fn cfg_holds(meta: &syn::Meta, file: &Path) -> bool {
    let name = meta.path().get_ident().map(|i| i.to_string());
    let nested = |list: &syn::MetaList| -> Vec<bool> {
        let metas = list
            .parse_args_with(
                syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
            )
            .unwrap_or_else(|e| panic!("{}: #[cfg] not understood: {e}", file.display()));
        metas.iter().map(|m| cfg_holds(m, file)).collect()
    };
    match (name.as_deref(), meta) {
        (Some("test" | "docsrs" | "windows" | "doc"), syn::Meta::Path(_)) => false,
        (Some("unix" | "debug_assertions"), syn::Meta::Path(_)) => true,
        (Some("feature"), syn::Meta::NameValue(_)) => true,
        (Some("target_os"), syn::Meta::NameValue(nv)) => tokens(&nv.value) == "\"linux\"",
        (Some("not"), syn::Meta::List(l)) => !nested(l).iter().all(|b| *b),
        (Some("all"), syn::Meta::List(l)) => nested(l).iter().all(|b| *b),
        (Some("any"), syn::Meta::List(l)) => nested(l).iter().any(|b| *b),
        _ => panic!(
            "{}: #[cfg({})] not understood by the listing",
            file.display(),
            tokens(meta)
        ),
    }
}

/// What a name stands for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Target {
    Module(usize),
    Decl(usize),
    /// A path into another crate (or the prelude), as written.
    External(String),
}

/// One leaf of a `use` tree: `path` imported as `name` (`None`: a glob).
pub(super) struct UseLeaf {
    pub(super) path: Vec<String>,
    pub(super) name: Option<String>,
    pub(super) is_pub: bool,
    pub(super) hidden: bool,
}

/// A name a module declares: an item or a child module.
pub(super) struct Named {
    pub(super) name: String,
    pub(super) target: Target,
    pub(super) is_pub: bool,
}

pub(super) struct Module {
    /// Where it is declared (`config::parsed`; empty for the root).
    pub(super) name: String,
    pub(super) file: PathBuf,
    pub(super) parent: Option<usize>,
    pub(super) is_pub: bool,
    pub(super) hidden: bool,
    pub(super) declared: Vec<Named>,
    pub(super) uses: Vec<UseLeaf>,
    pub(super) impls: Vec<syn::ItemImpl>,
}

/// An item declared somewhere (not a module).
pub(super) struct Decl {
    pub(super) module: usize,
    pub(super) name: String,
    pub(super) item: Item,
    pub(super) is_pub: bool,
    pub(super) hidden: bool,
}

pub(super) struct Crate {
    pub(super) src: PathBuf,
    pub(super) mods: Vec<Module>,
    pub(super) decls: Vec<Decl>,
    externs: BTreeSet<String>,
}

/// Names every module sees without importing them.
const PRELUDE: &[&str] = &[
    "Option",
    "Some",
    "None",
    "Result",
    "Ok",
    "Err",
    "String",
    "Vec",
    "Box",
    "ToString",
    "ToOwned",
    "From",
    "Into",
    "TryFrom",
    "TryInto",
    "Default",
    "Clone",
    "Copy",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Iterator",
    "IntoIterator",
    "DoubleEndedIterator",
    "ExactSizeIterator",
    "Extend",
    "FromIterator",
    "AsRef",
    "AsMut",
    "Drop",
    "Fn",
    "FnMut",
    "FnOnce",
    "Send",
    "Sync",
    "Sized",
    "Unpin",
    "str",
    "bool",
    "char",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "f32",
    "f64",
];

/// The file of `mod name;` whose children live in `dir` (a `#[path]`,
/// relative to `file`'s directory, wins).
fn module_file(file: &Path, dir: &Path, module: &syn::ItemMod) -> PathBuf {
    for attr in &module.attrs {
        if attr.path().is_ident("path")
            && let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(lit) = &nv.value
            && let syn::Lit::Str(s) = &lit.lit
        {
            return file.parent().unwrap().join(s.value());
        }
    }
    let name = module.ident.to_string();
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

/// Where the modules a file declares live: beside `mod.rs`, `lib.rs` and a
/// `#[path]` file, else in the directory named after the file.
fn children_dir(file: &Path, by_path: bool) -> PathBuf {
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_string_lossy();
    if by_path || matches!(stem.as_ref(), "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(stem.as_ref())
    }
}

fn parse(file: &Path) -> Vec<Item> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    syn::parse_file(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .items
}

/// Flattens a `use` tree into its leaves.
fn leaves(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.clone(), prefix.last().cloned()));
        }
        UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push((path, Some(n.ident.to_string())));
        }
        UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push((path, Some(r.rename.to_string())));
        }
        UseTree::Glob(_) => out.push((prefix.clone(), None)),
        UseTree::Group(g) => g.items.iter().for_each(|t| leaves(t, prefix, out)),
    }
}

/// The name an item declares, if it is one the listing knows.
fn declared_name(item: &Item) -> Option<(String, bool, &[syn::Attribute])> {
    Some(match item {
        Item::Struct(i) => (i.ident.to_string(), is_pub(&i.vis), &i.attrs[..]),
        Item::Enum(i) => (i.ident.to_string(), is_pub(&i.vis), &i.attrs[..]),
        Item::Union(i) => (i.ident.to_string(), is_pub(&i.vis), &i.attrs[..]),
        Item::Fn(i) => (i.sig.ident.to_string(), is_pub(&i.vis), &i.attrs[..]),
        Item::Trait(i) => (i.ident.to_string(), is_pub(&i.vis), &i.attrs[..]),
        Item::Const(i) => (i.ident.to_string(), is_pub(&i.vis), &i.attrs[..]),
        Item::Static(i) => (i.ident.to_string(), is_pub(&i.vis), &i.attrs[..]),
        Item::Type(i) => (i.ident.to_string(), is_pub(&i.vis), &i.attrs[..]),
        Item::Macro(i) => (i.ident.as_ref()?.to_string(), false, &i.attrs[..]),
        _ => return None,
    })
}

impl Crate {
    /// Reads the crate whose `lib.rs` is in `src`; its dependencies (the
    /// external crates a path may start with) from `src/../Cargo.toml`.
    pub(super) fn load(src: &Path) -> Crate {
        let mut externs: BTreeSet<String> = ["std", "core", "alloc", "proc_macro"]
            .into_iter()
            .map(String::from)
            .collect();
        if let Ok(text) = std::fs::read_to_string(src.join("../Cargo.toml")) {
            let manifest: toml::Table = text.parse().unwrap();
            for table in ["dependencies", "dev-dependencies"] {
                if let Some(deps) = manifest.get(table).and_then(|d| d.as_table()) {
                    externs.extend(deps.keys().map(|k| k.replace('-', "_")));
                }
            }
        }
        let mut krate = Crate {
            src: src.to_path_buf(),
            mods: Vec::new(),
            decls: Vec::new(),
            externs,
        };
        let lib = src.join("lib.rs");
        let items = parse(&lib);
        let dir = children_dir(&lib, false);
        krate.add_module(None, String::new(), &lib, &dir, items, (true, false));
        krate
    }

    fn add_module(
        &mut self,
        parent: Option<usize>,
        name: String,
        file: &Path,
        dir: &Path,
        items: Vec<Item>,
        (is_pub, hidden): (bool, bool),
    ) -> usize {
        let id = self.mods.len();
        self.mods.push(Module {
            name: name.clone(),
            file: file.to_path_buf(),
            parent,
            is_pub,
            hidden,
            declared: Vec::new(),
            uses: Vec::new(),
            impls: Vec::new(),
        });
        for item in items {
            let attrs: &[syn::Attribute] = match &item {
                Item::Mod(m) => &m.attrs,
                Item::Use(u) => &u.attrs,
                Item::Impl(i) => &i.attrs,
                other => declared_name(other).map_or(&[], |d| d.2),
            };
            if !enabled(attrs, file) {
                continue;
            }
            self.add_item(id, &name, file, dir, item);
        }
        id
    }

    fn add_item(&mut self, id: usize, name: &str, file: &Path, dir: &Path, item: Item) {
        match item {
            Item::Mod(m) => {
                let child_name = if name.is_empty() {
                    m.ident.to_string()
                } else {
                    format!("{name}::{}", m.ident)
                };
                let flags = (is_pub(&m.vis), is_hidden(&m.attrs));
                let child = match m.content.clone() {
                    Some((_, inner)) => {
                        let inner_dir = dir.join(m.ident.to_string());
                        self.add_module(Some(id), child_name, file, &inner_dir, inner, flags)
                    }
                    None => {
                        let f = module_file(file, dir, &m);
                        let by_path = m.attrs.iter().any(|a| a.path().is_ident("path"));
                        let d = children_dir(&f, by_path);
                        self.add_module(Some(id), child_name, &f, &d, parse(&f), flags)
                    }
                };
                self.mods[id].declared.push(Named {
                    name: m.ident.to_string(),
                    target: Target::Module(child),
                    is_pub: flags.0,
                });
            }
            Item::Use(u) => {
                let mut out = Vec::new();
                leaves(&u.tree, &mut Vec::new(), &mut out);
                for (path, leaf) in out {
                    self.mods[id].uses.push(UseLeaf {
                        path,
                        name: leaf,
                        is_pub: is_pub(&u.vis),
                        hidden: is_hidden(&u.attrs),
                    });
                }
            }
            Item::Impl(i) => self.mods[id].impls.push(i),
            other => {
                let Some((item_name, item_pub, attrs)) = declared_name(&other) else {
                    return;
                };
                let hidden = is_hidden(attrs);
                // `#[macro_export]` puts a macro at the crate's root.
                let exported = matches!(&other, Item::Macro(_))
                    && attrs.iter().any(|a| a.path().is_ident("macro_export"));
                let (module, item_pub) = if exported { (0, true) } else { (id, item_pub) };
                let decl = self.decls.len();
                self.decls.push(Decl {
                    module,
                    name: item_name.clone(),
                    item: other,
                    is_pub: item_pub,
                    hidden,
                });
                self.mods[module].declared.push(Named {
                    name: item_name,
                    target: Target::Decl(decl),
                    is_pub: item_pub,
                });
            }
        }
    }

    /// What `name` stands for in module `m` (several targets: one per
    /// namespace). `seen` guards against import cycles.
    pub(super) fn resolve_name(
        &self,
        m: usize,
        name: &str,
        seen: &mut Vec<(usize, String)>,
    ) -> Vec<Target> {
        if seen.iter().any(|(s, n)| *s == m && n == name) {
            return Vec::new();
        }
        seen.push((m, name.to_string()));
        let module = &self.mods[m];
        let mut found: Vec<Target> = module
            .declared
            .iter()
            .filter(|d| d.name == name)
            .map(|d| d.target.clone())
            .collect();
        // A declared item and an import of the same name are in different
        // namespaces (`mod merge; pub use merge::merge;`): both count.
        for leaf in module
            .uses
            .iter()
            .filter(|l| l.name.as_deref() == Some(name))
        {
            found.extend(self.resolve_path(m, &leaf.path, seen));
        }
        // Globs: of our modules, else (a name no dependency has) of another
        // crate's, which cannot be looked into.
        let mut external = Vec::new();
        if found.is_empty() {
            for leaf in module.uses.iter().filter(|l| l.name.is_none()) {
                for target in self.resolve_path(m, &leaf.path, seen) {
                    match target {
                        Target::Module(g) => found.extend(self.resolve_name(g, name, seen)),
                        Target::External(p) => {
                            external.push(Target::External(format!("{p}::{name}")))
                        }
                        Target::Decl(_) => {}
                    }
                }
            }
        }
        if found.is_empty() && !self.externs.contains(name) {
            found = external;
        }
        seen.pop();
        found.sort();
        found.dedup();
        found
    }

    /// What `name` stands for in module `m` as a path's prefix: a module
    /// (one it declares wins: the type namespace holds one `name`), or a
    /// path into another crate.
    fn resolve_prefix(&self, m: usize, name: &str, seen: &mut Vec<(usize, String)>) -> Vec<Target> {
        let declared: Vec<Target> = self.mods[m]
            .declared
            .iter()
            .filter(|d| d.name == name && matches!(d.target, Target::Module(_)))
            .map(|d| d.target.clone())
            .collect();
        if !declared.is_empty() {
            return declared;
        }
        let mut found = self.resolve_name(m, name, seen);
        found.retain(|t| !matches!(t, Target::Decl(_)));
        found
    }

    /// What `path` (as written in module `m`) stands for; empty when
    /// nothing.
    pub(super) fn resolve_path(
        &self,
        m: usize,
        path: &[String],
        seen: &mut Vec<(usize, String)>,
    ) -> Vec<Target> {
        let Some(first) = path.first() else {
            return Vec::new();
        };
        let mut current = match first.as_str() {
            "crate" => vec![Target::Module(0)],
            "self" => vec![Target::Module(m)],
            "super" => vec![Target::Module(self.mods[m].parent.unwrap_or(0))],
            name => {
                let found = if path.len() > 1 {
                    self.resolve_prefix(m, name, seen)
                } else {
                    self.resolve_name(m, name, seen)
                };
                if !found.is_empty() {
                    found
                } else if self.externs.contains(name) {
                    return vec![Target::External(path.join("::"))];
                } else if path.len() == 1 && PRELUDE.contains(&name) {
                    return vec![Target::External(name.to_string())];
                } else {
                    return Vec::new();
                }
            }
        };
        for (i, segment) in path.iter().enumerate().skip(1) {
            let mut next = Vec::new();
            for target in current {
                match target {
                    Target::Module(g) if segment == "super" => {
                        next.push(Target::Module(self.mods[g].parent.unwrap_or(0)));
                    }
                    Target::Module(g) if i + 1 < path.len() => {
                        next.extend(self.resolve_prefix(g, segment, seen));
                    }
                    Target::Module(g) => next.extend(self.resolve_name(g, segment, seen)),
                    Target::External(p) => next.push(Target::External(format!("{p}::{segment}"))),
                    Target::Decl(_) => {}
                }
            }
            current = next;
        }
        current
    }

    /// The file declaring `target`, for messages.
    pub(super) fn file_of(&self, target: &Target) -> String {
        let module = match target {
            Target::Module(m) => *m,
            Target::Decl(d) => self.decls[*d].module,
            Target::External(p) => return p.clone(),
        };
        let file = &self.mods[module].file;
        file.strip_prefix(self.src.parent().unwrap_or(&self.src))
            .unwrap_or(file)
            .display()
            .to_string()
    }
}
