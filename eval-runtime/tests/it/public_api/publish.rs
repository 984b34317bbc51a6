//! The public paths of a crate: from the root, through `pub mod` and
//! `pub use` (a re-exported module is walked under its new path), each
//! name that reaches something. What is reached through a `#[doc(hidden)]`
//! module, or is itself hidden, is internal.

use super::model::{Crate, Target};

/// A name a module makes public.
struct Export {
    name: String,
    targets: Vec<Target>,
    /// The `pub use` is `#[doc(hidden)]`.
    hidden: bool,
}

/// One public path to a target.
#[derive(Clone, Debug)]
pub(super) struct Publication {
    pub(super) target: Target,
    pub(super) path: String,
    pub(super) internal: bool,
}

impl Publication {
    /// The order in which a target's paths are preferred: promised, then
    /// short, then alphabetical.
    pub(super) fn rank(&self) -> (bool, usize, &str) {
        (self.internal, self.path.matches("::").count(), &self.path)
    }
}

impl Crate {
    /// The names module `m` makes public: its `pub` items, its `pub use`
    /// leaves, and what its `pub use <module>::*` bring (names it declares
    /// or imports itself win). `stack`: the modules being globbed.
    fn exports(&self, m: usize, stack: &mut Vec<usize>) -> Vec<Export> {
        let module = &self.mods[m];
        let mut out: Vec<Export> = module
            .declared
            .iter()
            .filter(|d| d.is_pub)
            .map(|d| Export {
                name: d.name.clone(),
                targets: vec![d.target.clone()],
                hidden: false,
            })
            .collect();
        for leaf in module.uses.iter().filter(|l| l.is_pub) {
            let Some(name) = &leaf.name else { continue };
            if name == "_" {
                continue;
            }
            let found = self.resolve_path(m, &leaf.path, &mut Vec::new());
            assert!(
                !found.is_empty(),
                "{}: cannot resolve `pub use {}` (name {name})",
                module.file.display(),
                leaf.path.join("::"),
            );
            // A name in two namespaces (`mod diff` and `fn diff`) is
            // re-exported in those where it is `pub`.
            let targets: Vec<Target> = found.into_iter().filter(|t| self.declared_pub(t)).collect();
            assert!(
                !targets.is_empty(),
                "{}: `pub use {}` re-exports nothing declared pub",
                module.file.display(),
                leaf.path.join("::"),
            );
            out.push(Export {
                name: name.clone(),
                targets,
                hidden: leaf.hidden,
            });
        }
        stack.push(m);
        for leaf in module.uses.iter().filter(|l| l.is_pub && l.name.is_none()) {
            let targets = self.resolve_path(m, &leaf.path, &mut Vec::new());
            assert!(
                !targets.is_empty(),
                "{}: cannot resolve `pub use {}::*`",
                module.file.display(),
                leaf.path.join("::"),
            );
            for target in targets {
                match target {
                    Target::Module(g) if stack.contains(&g) => {}
                    Target::Module(g) => {
                        for export in self.exports(g, stack) {
                            if out.iter().all(|e| e.name != export.name) {
                                out.push(Export {
                                    hidden: export.hidden || leaf.hidden,
                                    ..export
                                });
                            }
                        }
                    }
                    Target::External(p) => out.push(Export {
                        name: "*".into(),
                        targets: vec![Target::External(format!("{p}::*"))],
                        hidden: leaf.hidden,
                    }),
                    Target::Decl(d) => panic!(
                        "{}: `pub use {}::*` globs an item ({}), not a module",
                        module.file.display(),
                        leaf.path.join("::"),
                        self.decls[d].name
                    ),
                }
            }
        }
        stack.pop();
        out
    }

    /// Every public path of the crate.
    pub(super) fn publications(&self) -> Vec<Publication> {
        let mut out = Vec::new();
        self.walk(0, "", false, &mut Vec::new(), &mut out);
        out
    }

    /// Whether `target` is declared `pub` (another crate's item is).
    fn declared_pub(&self, target: &Target) -> bool {
        match target {
            Target::Module(m) => self.mods[*m].is_pub,
            Target::Decl(d) => self.decls[*d].is_pub,
            Target::External(_) => true,
        }
    }

    fn hidden(&self, target: &Target) -> bool {
        match target {
            Target::Module(m) => self.mods[*m].hidden,
            Target::Decl(d) => self.decls[*d].hidden,
            Target::External(_) => false,
        }
    }

    fn walk(
        &self,
        m: usize,
        prefix: &str,
        internal: bool,
        stack: &mut Vec<usize>,
        out: &mut Vec<Publication>,
    ) {
        stack.push(m);
        for export in self.exports(m, &mut Vec::new()) {
            let path = if prefix.is_empty() {
                export.name.clone()
            } else {
                format!("{prefix}::{}", export.name)
            };
            for target in export.targets {
                let internal = internal || export.hidden || self.hidden(&target);
                if let Target::Module(g) = target
                    && !stack.contains(&g)
                {
                    self.walk(g, &path, internal, stack, out);
                }
                out.push(Publication {
                    target,
                    path: path.clone(),
                    internal,
                });
            }
        }
        stack.pop();
    }
}
