//! The listing's lines: each item described once, at its first public path
//! (promised before internal, then shortest, then alphabetical), with its
//! fields, variants, methods and trait impls (impls written anywhere in the
//! crate whose self type resolves to it); every other path to it an
//! `alias` line; a re-export of another crate a `use` line.

use std::collections::BTreeMap;
use std::path::Path;

use syn::{Fields, ImplItem, Item, TraitItem};

use super::model::{Crate, Target, enabled, is_hidden, is_pub, tokens};
use super::publish::Publication;

/// A crate's listing: promised and internal lines, sorted, and the `pub`
/// items no public path reaches.
pub(super) struct Listing {
    pub(super) promised: Vec<String>,
    pub(super) internal: Vec<String>,
    pub(super) unreachable: Vec<String>,
}

/// Lines, each promised or internal.
type Lines = Vec<(bool, String)>;

/// `fn <path> <generics> (<args>) -> <ret>`, qualifiers (`async`,
/// `const`...) after it in brackets.
fn sig_line(kind: &str, path: &str, sig: &syn::Signature) -> String {
    let text = tokens(sig);
    let head = format!("fn {}", sig.ident);
    let at = text.find(&head).unwrap_or(0);
    let quals = text[..at].trim();
    let rest = &text[at + head.len()..];
    if quals.is_empty() {
        format!("{kind} {path}{rest}")
    } else {
        format!("{kind} {path}{rest} [{quals}]")
    }
}

/// The listing of the crate whose `lib.rs` is in `src`.
pub(super) fn listing(src: &Path) -> Listing {
    let krate = Crate::load(src);
    let mut by_target: BTreeMap<Target, Vec<Publication>> = BTreeMap::new();
    for p in krate.publications() {
        by_target.entry(p.target.clone()).or_default().push(p);
    }
    for ps in by_target.values_mut() {
        ps.sort_by(|a, b| a.rank().cmp(&b.rank()));
        ps.dedup_by(|a, b| a.path == b.path);
    }
    let canon: BTreeMap<Target, (String, bool)> = by_target
        .iter()
        .map(|(t, ps)| (t.clone(), (ps[0].path.clone(), ps[0].internal)))
        .collect();
    let impls = krate.attached_impls();
    let mut lines: Lines = Vec::new();
    for (target, ps) in &by_target {
        if let Target::External(external) = target {
            for p in ps {
                lines.push((p.internal, format!("use {} = {external}", p.path)));
            }
            continue;
        }
        let (path, internal) = &canon[target];
        for p in &ps[1..] {
            lines.push((p.internal, format!("alias {} -> {path}", p.path)));
        }
        match target {
            Target::Module(_) => lines.push((*internal, format!("mod {path}"))),
            Target::Decl(d) => {
                describe(&krate.decls[*d].item, path, *internal, &mut lines);
                for (m, imp) in impls.get(d).into_iter().flatten() {
                    krate.describe_impl(*m, imp, path, *internal, &canon, &mut lines);
                }
            }
            Target::External(_) => {}
        }
    }
    let mut unreachable = Vec::new();
    for (i, d) in krate.decls.iter().enumerate() {
        if d.is_pub && !by_target.contains_key(&Target::Decl(i)) {
            unreachable.push(format!("{} {}", krate.file_of(&Target::Decl(i)), d.name));
        }
    }
    for (i, m) in krate.mods.iter().enumerate().skip(1) {
        if m.is_pub && !by_target.contains_key(&Target::Module(i)) {
            unreachable.push(format!(
                "{} mod {}",
                krate.file_of(&Target::Module(i)),
                m.name
            ));
        }
    }
    let split = |internal: bool| {
        let mut out: Vec<String> = lines
            .iter()
            .filter(|(i, _)| *i == internal)
            .map(|(_, l)| l.clone())
            .collect();
        out.sort();
        out.dedup();
        out
    };
    Listing {
        promised: split(false),
        internal: split(true),
        unreachable,
    }
}

/// An item's own lines, at `path`: its signature, public fields, variants,
/// trait methods. A `#[doc(hidden)]` enum is its name only.
fn describe(item: &Item, path: &str, internal: bool, lines: &mut Lines) {
    let file = Path::new(path);
    match item {
        Item::Fn(f) => lines.push((internal, sig_line("fn", path, &f.sig))),
        Item::Struct(s) => {
            lines.push((internal, format!("struct {path}{}", tokens(&s.generics))));
            let fields: Vec<_> = match &s.fields {
                Fields::Named(f) => f.named.iter().collect(),
                Fields::Unnamed(f) => f.unnamed.iter().collect(),
                Fields::Unit => Vec::new(),
            };
            for (n, f) in fields.into_iter().enumerate() {
                if is_pub(&f.vis) && enabled(&f.attrs, file) {
                    let name = f.ident.as_ref().map_or(n.to_string(), |i| i.to_string());
                    let hidden = internal || is_hidden(&f.attrs);
                    lines.push((hidden, format!("field {path}.{name}: {}", tokens(&f.ty))));
                }
            }
        }
        Item::Enum(e) if is_hidden(&e.attrs) => {
            lines.push((internal, format!("enum {path} (hidden)")));
        }
        Item::Enum(e) => {
            lines.push((internal, format!("enum {path}{}", tokens(&e.generics))));
            for v in e.variants.iter().filter(|v| enabled(&v.attrs, file)) {
                // The fields' types, not their docs.
                let mut fields = v.fields.clone();
                fields.iter_mut().for_each(|f| f.attrs.clear());
                let line = format!("variant {path}::{}{}", v.ident, tokens(&fields));
                lines.push((internal || is_hidden(&v.attrs), line));
            }
        }
        Item::Union(u) => lines.push((internal, format!("union {path}{}", tokens(&u.generics)))),
        Item::Trait(t) => {
            lines.push((internal, format!("trait {path}{}", tokens(&t.generics))));
            for i in &t.items {
                let line = match i {
                    TraitItem::Fn(f) => {
                        sig_line("trait fn", &format!("{path}::{}", f.sig.ident), &f.sig)
                    }
                    TraitItem::Const(c) => {
                        format!("trait const {path}::{}: {}", c.ident, tokens(&c.ty))
                    }
                    TraitItem::Type(t) => format!("trait type {path}::{}", t.ident),
                    _ => continue,
                };
                lines.push((internal, line));
            }
        }
        Item::Const(c) => lines.push((internal, format!("const {path}: {}", tokens(&c.ty)))),
        Item::Static(s) => lines.push((internal, format!("static {path}: {}", tokens(&s.ty)))),
        Item::Type(t) => lines.push((
            internal,
            format!("type {path}{} = {}", tokens(&t.generics), tokens(&t.ty)),
        )),
        Item::Macro(_) => lines.push((internal, format!("macro {path}"))),
        _ => {}
    }
}

impl Crate {
    /// The impls written anywhere in the crate, by the item their self type
    /// resolves to (in the impl's module), with that module.
    fn attached_impls(&self) -> BTreeMap<usize, Vec<(usize, &syn::ItemImpl)>> {
        let mut out: BTreeMap<usize, Vec<(usize, &syn::ItemImpl)>> = BTreeMap::new();
        for (m, module) in self.mods.iter().enumerate() {
            for imp in &module.impls {
                let syn::Type::Path(tp) = &*imp.self_ty else {
                    continue; // `&T`, `dyn T`, tuples: no item of ours
                };
                let segments: Vec<String> = tp
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let generic = imp
                    .generics
                    .type_params()
                    .any(|p| segments == [p.ident.to_string()]);
                if tp.qself.is_some() || generic {
                    continue;
                }
                let targets = self.resolve_path(m, &segments, &mut Vec::new());
                assert!(
                    !targets.is_empty(),
                    "{}: cannot resolve the self type `{}` of an impl",
                    module.file.display(),
                    tokens(&imp.self_ty)
                );
                for target in targets {
                    if let Target::Decl(d) = target {
                        out.entry(d).or_default().push((m, imp));
                    }
                }
            }
        }
        out
    }

    /// The lines of `imp` (in module `m`) for the item at `path`: one for a
    /// trait impl (of a public trait), else its public fns and consts.
    fn describe_impl(
        &self,
        m: usize,
        imp: &syn::ItemImpl,
        path: &str,
        internal: bool,
        canon: &BTreeMap<Target, (String, bool)>,
        lines: &mut Lines,
    ) {
        let file = &self.mods[m].file;
        if let Some((bang, tr, _)) = &imp.trait_ {
            let segments: Vec<String> = tr.segments.iter().map(|s| s.ident.to_string()).collect();
            let targets = self.resolve_path(m, &segments, &mut Vec::new());
            let name = match targets.first() {
                None => panic!(
                    "{}: cannot resolve the trait `{}` of an impl for {path}",
                    file.display(),
                    tokens(tr)
                ),
                Some(Target::External(p)) => p.clone(),
                Some(t) => match canon.get(t) {
                    Some((p, _)) => p.clone(),
                    None => return, // a crate-private trait
                },
            };
            let args = tr
                .segments
                .last()
                .map(|s| tokens(&s.arguments))
                .unwrap_or_default();
            let not = if bang.is_some() { "!" } else { "" };
            // The self type's own generic arguments (`Result<A>`).
            let own = match &*imp.self_ty {
                syn::Type::Path(tp) => tp.path.segments.last().map(|s| tokens(&s.arguments)),
                _ => None,
            };
            let own = own.unwrap_or_default();
            let hidden = internal || is_hidden(&imp.attrs);
            lines.push((hidden, format!("impl {path}{own}: {not}{name}{args}")));
            return;
        }
        // A `#[doc(hidden)] impl`'s fns are internal.
        let internal = internal || is_hidden(&imp.attrs);
        for item in &imp.items {
            match item {
                ImplItem::Fn(f) if is_pub(&f.vis) && enabled(&f.attrs, file) => {
                    let hidden = internal || is_hidden(&f.attrs);
                    let line = sig_line("fn", &format!("{path}::{}", f.sig.ident), &f.sig);
                    lines.push((hidden, line));
                }
                ImplItem::Const(c) if is_pub(&c.vis) && enabled(&c.attrs, file) => {
                    let hidden = internal || is_hidden(&c.attrs);
                    let line = format!("const {path}::{}: {}", c.ident, tokens(&c.ty));
                    lines.push((hidden, line));
                }
                // issue39: setters two types share, written once in a
                // `macro_rules!` expanded in each impl: listed as its fns.
                ImplItem::Macro(mac) => {
                    for f in self.macro_fns(&mac.mac) {
                        let line = sig_line("fn", &format!("{path}::{}", f.sig.ident), &f.sig);
                        lines.push((internal, line));
                    }
                }
                _ => {}
            }
        }
    }

    /// The pub fns an impl gets from the crate's `macro_rules!` that `mac`
    /// calls: its first arm's body read as impl items.
    fn macro_fns(&self, mac: &syn::Macro) -> Vec<syn::ImplItemFn> {
        let name = mac.path.segments.last().unwrap().ident.to_string();
        let mut files = vec![self.src.clone()];
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
        panic!("no macro_rules! {name} under {}", self.src.display());
    }
}
