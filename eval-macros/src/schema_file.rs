//! `json_schema(schema_file = "...")` checked at compile
//! time: the file exists (relative to the crate, inside the project unless
//! `allow_outside`) and is JSON, an object or a boolean. Whether the schema
//! compiles is checked when the test's plan loads (eval-runtime has the
//! validator; this crate stays light). The file is tracked, so editing it
//! rebuilds the test.

use std::path::Path;

use proc_macro2::Span;
use syn::Lit;

use crate::parse::MetricArg;

/// Checks every `schema_file` option of `metrics`, pushing an error at the
/// option's value for a file that is missing or not JSON, and the path of
/// each file read to `tracked`. `inside` is the attribute's project check.
pub(crate) fn check(
    metrics: &[MetricArg],
    dir: &Path,
    inside: &dyn Fn(&str, &mut Vec<syn::Error>, Span) -> bool,
    errors: &mut Vec<syn::Error>,
    tracked: &mut Vec<String>,
) {
    for m in metrics.iter().filter(|m| m.name == "json_schema") {
        for (key, lit) in &m.options {
            let Lit::Str(file) = lit else { continue };
            if key != "schema_file" || file.value().trim().is_empty() {
                continue;
            }
            let written = file.value();
            if !inside(&written, errors, file.span()) {
                continue;
            }
            let path = dir.join(&written);
            let text = match eval_datasets::files::read_text(
                &path,
                eval_datasets::files::PROMPT_MAX_BYTES,
            ) {
                Ok(text) => text,
                Err(e) => {
                    errors.push(syn::Error::new(
                            file.span(),
                            format!(
                                "schema_file `{written}`: cannot read {}: {e} (paths are relative to the crate's directory)",
                                path.display()
                            ),
                        ));
                    continue;
                }
            };
            tracked.push(path.to_string_lossy().into_owned());
            match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(serde_json::Value::Object(_) | serde_json::Value::Bool(_)) => {}
                Ok(_) => errors.push(syn::Error::new(
                    file.span(),
                    format!("schema_file `{written}` is JSON but not a JSON Schema: expected an object (or true / false)"),
                )),
                Err(e) => errors.push(syn::Error::new(
                    file.span(),
                    format!("schema_file `{written}` is not JSON: {e}"),
                )),
            }
        }
    }
}
