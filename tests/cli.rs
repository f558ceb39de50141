//! CLI tests: they run the built `elk-opt` binary.
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got

#[path = "cli/browser.rs"]
mod browser;
#[path = "cli/chip_files.rs"]
mod chip_files;
#[path = "cli/common.rs"]
mod common;
#[path = "cli/determinism.rs"]
mod determinism;
#[path = "cli/dram_readers.rs"]
mod dram_readers;
#[path = "cli/dtypes.rs"]
mod dtypes;
#[path = "cli/errors_and_exit_codes.rs"]
mod errors_and_exit_codes;
#[path = "cli/exact.rs"]
mod exact;
#[path = "cli/expert_parallel.rs"]
mod expert_parallel;
#[path = "cli/figures.rs"]
mod figures;
#[path = "cli/golden_errors.rs"]
mod golden_errors;
#[path = "cli/hf_config.rs"]
mod hf_config;
#[path = "cli/html_page.rs"]
mod html_page;
#[path = "cli/identity.rs"]
mod identity;
#[path = "cli/json_envelope.rs"]
mod json_envelope;
#[path = "cli/model_files.rs"]
mod model_files;
#[path = "cli/models_and_import.rs"]
mod models_and_import;
#[path = "cli/moe.rs"]
mod moe;
#[path = "cli/onnx.rs"]
mod onnx;
#[path = "cli/plans.rs"]
mod plans;
#[path = "cli/progress.rs"]
mod progress;
#[path = "cli/refused_flags.rs"]
mod refused_flags;
#[path = "cli/replay_fidelity.rs"]
mod replay_fidelity;
#[path = "cli/routing_import.rs"]
mod routing_import;
#[path = "cli/solve_compare.rs"]
mod solve_compare;
#[path = "cli/stage_model.rs"]
mod stage_model;
#[path = "cli/sweeps.rs"]
mod sweeps;
#[path = "cli/training.rs"]
mod training;
#[path = "cli/work_limit.rs"]
mod work_limit;
