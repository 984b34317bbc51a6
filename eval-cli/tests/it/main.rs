//! The `evals` command's integration tests: every integration test of the crate in one binary (one link
//! instead of one per file), a module per former file.

mod chrome;
mod common;

mod any_agent;
mod browser;
mod calibrate;
mod consistency;
mod convert_defaults; // issue38:runevals
mod convert_round_trip; // issue38:convert
mod create;
mod create_answers; // issue38:answers
mod create_walk; // issue38:walk
mod datasets;
mod docs;
mod docs_agent;
mod end_files;
mod evaluate;
mod exec_metric;
mod faults;
mod front_ends;
mod generate;
mod generate_corpus;
mod guide;
mod hostile_names;
mod html;
mod interactive;
mod interactive_untrusted;
mod junit;
mod openai;
mod paths;
mod provenance;
mod robustness;
mod runevals_defaults; // issue38:runevals
mod runevals_flow;
mod settings_at_start;
mod special_files;
mod spill;
mod suite_models; // issue38:models
mod summary;
mod terminal;
mod traces;
mod unrag_command; // issue38:models
mod workflow; // issue39:reports
