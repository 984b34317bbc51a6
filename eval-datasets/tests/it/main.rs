//! eval-datasets's integration tests: every integration test of the crate in one binary (one link
//! instead of one per file), a module per former file.

mod architecture_doc;
mod containment;
mod fuzz;
mod letta026;
mod loaders;
mod manifest;
mod metric_docs;
mod paraphrase;
mod public_fixtures;
mod reading;
mod runevals;
mod runevals_defaults; // issue38:runevals
mod suites;
mod tool_fields;
mod writing;
