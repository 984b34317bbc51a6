//! What `#[eval_dataset]` expands to calls. Not a public API: the macro and
//! this module change together. It only re-exports; the behaviour is in
//! `front::attribute` and the engine.

pub use crate::front::attribute::UserDecl;
pub use crate::front::attribute::{
    Decl, Embedded, check_async, check_sync, gates_async, gates_sync, run_async, run_sync,
};
pub use crate::metrics::user::{AsyncPair, Awaited, Blocking, Itself, into_metric};
pub use eval_datasets::Repeat;
pub use eval_datasets::metric::{GateDecl, MetricDecl, Op, OptionValue, Stat};
pub use std::borrow::Cow;
