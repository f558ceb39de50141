//! Mutation fuzzing of every input parser (proptest generators of mutated real files, since
//! libFuzzer needs a nightly toolchain here): the reference-graph importer (JSON and
//! einstein_v2 expressions), ONNX models, chip TOML, `elk-instance/1`, `elk-schedule/1` (then validated,
//! evaluated and replayed when valid), sweep grid TOML, and routing logs (CSV, JSON lines). Each parser must return a value
//! or a one-line error — never panic. `ELK_FUZZ_CASES` sets the cases per target (default
//! 256; the note of the hardening issue records a longer run).
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got

#[path = "cli/common.rs"]
#[allow(dead_code)]
mod common;
#[path = "fuzz/mutate.rs"]
mod mutate;
#[path = "fuzz/targets.rs"]
mod targets;
