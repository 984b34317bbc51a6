//! The three ways in, each a thin layer that builds a plan and turns the
//! engine's verdict into its outcome: the attribute's tests
//! ([`attribute`]), the libtest-mimic [`harness`], and the [`runner`] the
//! `evals` command uses.

pub(crate) mod attribute;
pub(crate) mod calibrate;
pub(crate) mod direct;
mod globals;
pub(crate) mod harness;
pub(crate) mod probe;
pub(crate) mod runner;
mod trials;
