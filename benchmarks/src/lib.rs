//! `elk-benchmarks`: the graphs the criterion benches time, built the same way the tests and
//! the CLI build them, so a bench measures exactly what a user runs.
//!
//! ```
//! let (graph, chip) = elk_benchmarks::bert_base_reference().unwrap();
//! assert_eq!(graph.ops.len(), 547);
//! assert_eq!(chip.cores, 1472);
//! ```
#![deny(missing_docs)]

use elk_model::chip::ChipSpec;
use elk_model::graph::{Graph, Mode};
use elk_model::import::{import_file, Compat, ImportOptions};
use elk_model::zoo::{self, ZooParams};
use std::path::PathBuf;

/// `tests/fixtures/` at the repository root, the corpus the tests read too: the reference
/// artifact's graphs (`models/`) and its converted runs (`reference/`).
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The reference artifact's configuration: `bert-base.json` (reference import), decode,
/// batch 8, KV 512, on `ipu-mk2` (1,472 cores).
pub fn bert_base_reference() -> elk_model::Result<(Graph, ChipSpec)> {
    let mut opts = ImportOptions::new(Mode::Decode, 8, 512);
    opts.compat = Compat::Reference;
    let graph = import_file(&fixtures().join("models/bert-base.json"), &opts)?;
    Ok((graph, ChipSpec::preset("ipu-mk2")?))
}

/// Llama2-13B (zoo) decode, batch 32, KV 2048, on `ipu-pod4` (5,888 cores).
pub fn llama2_13b_pod4() -> elk_model::Result<(Graph, ChipSpec)> {
    let graph = zoo::build("llama2-13b", &ZooParams::new(Mode::Decode, 32, 2048))?;
    Ok((graph, ChipSpec::preset("ipu-pod4")?))
}

/// Llama2-70B (zoo) decode, batch 32, KV 2048, on `ipu-pod4` (5,888 cores).
pub fn llama2_70b_pod4() -> elk_model::Result<(Graph, ChipSpec)> {
    let graph = zoo::build("llama2-70b", &ZooParams::new(Mode::Decode, 32, 2048))?;
    Ok((graph, ChipSpec::preset("ipu-pod4")?))
}
