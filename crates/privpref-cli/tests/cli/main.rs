//! The command-line tool's tests (they run the `privpref` binary), gathered into one test binary.
#[path = "../../../../tests/common/mod.rs"]
mod common;
#[path = "../support/mod.rs"]
mod support;

mod cli_account;
mod cli_central;
mod cli_experiment;
mod cli_fixtures;
mod cli_kwise;
mod cli_label_sgd;
mod cli_memory;
mod cli_mmap;
mod cli_newton_cg;
mod cli_no_overwrite;
mod cli_notes;
mod cli_policy;
mod cli_provenance;
mod cli_signed_provenance;
mod cli_validation;
mod fuzz_inputs;
