//! `#[eval_dataset]`: every sample of a dataset file becomes a `#[test]`.
//!
//! Use it through `eval-runtime` (`use eval_runtime::prelude::*;`), which
//! re-exports it and holds all the behaviour; this crate only parses the
//! attribute, reads the dataset and generates tiny test functions.
//!
//! The shape follows thiserror's: `parse` builds a typed view of the
//! attribute (keeping spans), `validate` reports every problem at once as
//! spanned errors, `expand` writes the tests.

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![deny(unreachable_pub)]

use proc_macro::TokenStream;

#[cfg(test)]
mod again;
mod expand;
mod parse;
mod private;
mod schema_file;
mod validate;

/// Generates one `#[test]` per sample of a dataset file, in a module named
/// after the function. See `eval_runtime`'s crate docs for the full syntax.
///
/// ```ignore
/// #[eval_dataset("evals/rag.jsonl", metrics(contains >= 1.0, partial_match >= 0.5))]
/// async fn rag(sample: &Sample) -> eval_runtime::Result<Response> {
///     HttpAgent::from_env()?.respond(sample).await
/// }
/// ```
#[proc_macro_attribute]
pub fn eval_dataset(args: TokenStream, item: TokenStream) -> TokenStream {
    let item2: proc_macro2::TokenStream = item.clone().into();
    let result = parse::parse(args.into(), item.into())
        .and_then(validate::validate)
        .map(expand::expand);
    match result {
        Ok(tokens) => tokens.into(),
        Err(err) => {
            // Keep the user's function so only the attribute errors show.
            let mut out = err.to_compile_error();
            out.extend(item2);
            out.into()
        }
    }
}
