//! JSON read strictly, by every reader of a JSON file (datasets,
//! manifests' JSON, price tables): an object that gives a key twice is an
//! error at the second one (`duplicate key `x` in one object`), where
//! serde_json would silently keep the last value.

pub use crate::formats::parse_strict;
