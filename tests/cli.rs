//! CLI tests: they run the built `elk-opt` binary.

#[path = "cli/common.rs"]
mod common;
#[path = "cli/errors_and_exit_codes.rs"]
mod errors_and_exit_codes;
#[path = "cli/models_and_import.rs"]
mod models_and_import;
