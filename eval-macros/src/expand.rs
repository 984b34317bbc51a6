//! Code generation: the user's function stays as written; next to it, a
//! module of the same name holds the embedded dataset and one one-line
//! `#[test]` per sample calling the runtime's hidden entry point.

use eval_datasets::metric::{Op, OptionValue, Stat};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned};

use crate::private::private;
use crate::validate::Checked;

/// `path` as written beside the function, as seen from the module the
/// expansion puts next to it: `crate::` and `::` paths stay; `self::x` is
/// `super::x`, `super::x` is `super::super::x`, `a::x` is `super::a::x`.
fn from_inner_module(path: &syn::Path) -> syn::Path {
    let mut out = path.clone();
    let first = path.segments.first().map(|s| s.ident.to_string());
    if path.leading_colon.is_some() || first.as_deref() == Some("crate") {
        return out;
    }
    let span = syn::spanned::Spanned::span(path);
    let sup = syn::PathSegment::from(syn::Ident::new("super", span));
    if first.as_deref() == Some("self") {
        if let Some(s) = out.segments.first_mut() {
            s.ident = syn::Ident::new("super", span);
        }
        return out;
    }
    out.segments.insert(0, sup);
    out
}

/// A threshold: `Some((op, value))` or `None`.
fn bound_tokens(bound: Option<(Op, f64)>) -> TokenStream {
    match bound {
        Some((op, value)) => {
            let op = match op {
                Op::AtLeast => quote!(::eval_runtime::#private::Op::AtLeast),
                Op::AtMost => quote!(::eval_runtime::#private::Op::AtMost),
            };
            quote!(::core::option::Option::Some((#op, #value)))
        }
        None => quote!(::core::option::Option::None),
    }
}

/// A metric of the catalogue as its `MetricDecl`.
fn metric_decl(m: &crate::validate::CheckedMetric) -> TokenStream {
    let name = &m.name;
    let options = m.options.iter().map(|(k, v)| {
        let v = match v {
            OptionValue::Bool(b) => quote!(::eval_runtime::#private::OptionValue::Bool(#b)),
            OptionValue::Str(s) => {
                let s = s.as_ref();
                quote!(::eval_runtime::#private::OptionValue::Str(
                    ::eval_runtime::#private::Cow::Borrowed(#s)
                ))
            }
            OptionValue::Num(n) => quote!(::eval_runtime::#private::OptionValue::Num(#n)),
        };
        quote!((#k, #v))
    });
    let bound = bound_tokens(m.bound);
    let named = match &m.named {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    quote! {
        ::eval_runtime::#private::MetricDecl {
            name: #name,
            options: &[#(#options),*],
            bound: #bound,
            named: #named,
        }
    }
}

/// A gate as its `GateDecl`: the statistic, and the metric it is on.
fn gate_decl(stat: Stat, m: &crate::validate::CheckedMetric) -> TokenStream {
    let stat = match stat {
        Stat::Percentile(p) => quote!(::eval_runtime::#private::Stat::Percentile(#p)),
        Stat::PassAt(k) => quote!(::eval_runtime::#private::Stat::PassAt(#k)),
        Stat::PassHat(k) => quote!(::eval_runtime::#private::Stat::PassHat(#k)),
        Stat::Mean => quote!(::eval_runtime::#private::Stat::Mean),
    };
    let metric = metric_decl(m);
    quote! {
        ::eval_runtime::#private::GateDecl { stat: #stat, metric: #metric }
    }
}

/// A metric of the user's as its `UserDecl`: each path made a metric by a
/// function the expansion writes; a path that is not a metric fails to
/// compile there, spanned at the path.
fn user_decl(u: &crate::validate::UserMetricArg) -> TokenStream {
    let path = &u.path;
    let span = syn::spanned::Spanned::span(path);
    let bound = bound_tokens(u.bound);
    let gate = match u.gate {
        None => quote!(::core::option::Option::None),
        Some(Stat::Percentile(p)) => quote!(::core::option::Option::Some(
            ::eval_runtime::#private::Stat::Percentile(#p)
        )),
        Some(_) => quote!(::core::option::Option::Some(
            ::eval_runtime::#private::Stat::Mean
        )),
    };
    let at = u.at;
    let path = from_inner_module(path);
    let make = quote_spanned!(span=> || ::eval_runtime::#private::into_metric(&#path));
    quote! {
        ::eval_runtime::#private::UserDecl { metric: #make, bound: #bound, at: #at, gate: #gate }
    }
}

/// `file:line:column` of the function's name, as the compiler knows it
/// (empty outside a compiler: unit tests).
fn site(ident: &Ident) -> String {
    if !proc_macro::is_available() {
        return String::new();
    }
    let span = ident.span().unwrap();
    format!("{}:{}:{}", span.file(), span.line(), span.column())
}

pub(crate) fn expand(c: Checked) -> TokenStream {
    let func = &c.func;
    let fn_ident = &func.sig.ident;
    let abs_path = &c.abs_path;
    let shown_path = &c.shown_path;

    let metrics = c.metrics.iter().map(metric_decl);
    let gates = c.gates.iter().map(|(stat, m)| gate_decl(*stat, m));
    let user = c.user.iter().map(user_decl);
    let user_checks = c.user.iter().map(|u| {
        let path = &u.path;
        let span = syn::spanned::Spanned::span(path);
        quote_spanned!(span=> let _ = ::eval_runtime::#private::into_metric(&#path);)
    });
    let ci_gate = c.ci_gate;
    let enforce_thresholds = c.enforce_thresholds;
    let timeout = match c.timeout_secs {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    };
    let repeat = match c.repeat {
        eval_datasets::Repeat::Runs(n) => quote!(::eval_runtime::#private::Repeat::Runs(#n)),
        eval_datasets::Repeat::Auto { max } => {
            quote!(::eval_runtime::#private::Repeat::Auto { max: #max })
        }
    };
    let some_str = |v: &Option<String>| match v {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    };
    let inconclusive = some_str(&c.inconclusive);
    let cluster = some_str(&c.cluster);
    let tracked = &c.tracked;
    let allow = c.allow_custom_prefix;
    let allow_outside = c.allow_outside;
    let threshold_gates = c.threshold_gates;
    let model = match &c.model {
        Some(m) => quote!(::core::option::Option::Some(#m)),
        None => quote!(::core::option::Option::None),
    };
    let sample_tags = &c.sample_tags;
    let max_samples = match c.max_samples {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    };
    let notes = &c.notes;
    // This binary's list of datasets (see `eval_datasets::registry`), keyed
    // by where the attribute is, so expanding it again keeps its entry.
    let registry =
        match eval_datasets::registry::record(&fn_ident.to_string(), shown_path, &site(fn_ident)) {
            Some((dir, key)) => {
                let dir = dir.to_string_lossy().into_owned();
                quote!(::core::option::Option::Some((#dir, #key)))
            }
            None => quote!(::core::option::Option::None),
        };
    let (entry, gates_entry) = if c.is_async {
        (
            quote!(::eval_runtime::#private::run_async),
            quote!(::eval_runtime::#private::gates_async),
        )
    } else {
        (
            quote!(::eval_runtime::#private::run_sync),
            quote!(::eval_runtime::#private::gates_sync),
        )
    };
    // Judges the dataset's gates (explicit, ciGate, a retrieval dataset's own
    // thresholds) when every sample ran in this process.
    let gate_test = if c.gate_test {
        quote! {
            #[test]
            fn gates() { #gates_entry(&__EVAL_DATASET, super::#fn_ident) }
        }
    } else {
        quote!()
    };
    let tests = c.test_names.iter().enumerate().map(|(i, name)| {
        let ident = Ident::new(name, Span::call_site());
        quote! {
            #[test]
            fn #ident() { __eval_run(#i) }
        }
    });

    // The module takes the function's span so IDEs show one "Run Tests" for
    // the dataset; the tests keep the attribute's span.
    let mod_ident = fn_ident.clone();
    let check = if c.is_async {
        quote!(::eval_runtime::#private::check_async)
    } else {
        quote!(::eval_runtime::#private::check_sync)
    };
    let ret_span = syn::spanned::Spanned::span(&func.sig.output);
    let check_call = quote_spanned!(ret_span=> #check(#fn_ident););
    quote! {
        #func

        // Type-checks the function's shape in every build (not only under
        // `cfg(test)`), so a wrong signature is reported where it is written.
        const _: () = {
            #[allow(dead_code, clippy::needless_borrows_for_generic_args)]
            fn __eval_check() {
                #check_call
                #(#user_checks)*
            }
        };

        #[cfg(test)]
        #[doc(hidden)]
        mod #mod_ident {
            #(const _: &[u8] = ::core::include_bytes!(#tracked);)*

            #[allow(clippy::needless_borrows_for_generic_args)]
            static __EVAL_DATASET: ::eval_runtime::#private::Embedded =
                ::eval_runtime::#private::Embedded::new(::eval_runtime::#private::Decl {
                    module_path: ::core::module_path!(),
                    package: ::core::env!("CARGO_PKG_NAME"),
                    path: #shown_path,
                    bytes: ::core::include_bytes!(#abs_path),
                    metrics: &[#(#metrics),*],
                    gates: &[#(#gates),*],
                    ci_gate: #ci_gate,
                    enforce_thresholds: #enforce_thresholds,
                    timeout_secs: #timeout,
                    repeat: #repeat,
                    inconclusive: #inconclusive,
                    cluster: #cluster,
                    allow_custom_prefix: #allow,
                    allow_outside: #allow_outside,
                    threshold_gates: #threshold_gates,
                    model: #model,
                    sample_tags: &[#(#sample_tags),*],
                    max_samples: #max_samples,
                    notes: &[#(#notes),*],
                    registry: #registry,
                    user_metrics: &[#(#user),*],
                });

            fn __eval_run(index: usize) {
                #entry(&__EVAL_DATASET, index, super::#fn_ident)
            }

            #(#tests)*
            #gate_test
        }
    }
}
