//! Golden datasets (seed 002): `query` with `ground_truth`, or
//! `source_docs`. `contexts` (reference passages) → reference_contexts;
//! `source_docs` kept.

use super::record::{has_key, rename_key};
use super::{Adapter, Input, Records};

/// The golden-dataset record schema (tried after deepeval's: a deepeval
/// golden is not also read as one).
pub(crate) struct Golden;

impl Adapter for Golden {
    fn recognises(&self, input: &Input<'_>) -> bool {
        let Input::Record(r) = input else {
            return false;
        };
        (has_key(&r.fields, "query") && has_key(&r.fields, "ground_truth"))
            || has_key(&r.fields, "source_docs")
    }

    fn rewrite(&self, input: Input<'_>, _: &mut Records<'_>) {
        if let Input::Record(r) = input {
            rename_key(&mut r.fields, "contexts", "reference_contexts");
        }
    }
}
