//! Requests: what a user asks for, as the CLI's flags and Python's keyword arguments both
//! describe it, with the defaults, the validation and the one-line refusals in one place.
//!
//! - [`ModelRequest`]: a zoo name, a model file, a Hugging Face config.json, a graph in the
//!   reference format or an ONNX file, with its element types; [`RunShape`] the run it is
//!   built for (mode, batch, KV length, layers).
//! - [`ChipRequest`]: a preset or chip TOML file with its overrides; [`ChosenChip`] the chip
//!   it resolves to and what instances record of it.
//! - [`InstanceRequest`]: a model on a chip, cut and built with the stage-model choices.
//!
//! The CLI parses its flags into these types (`src/cli/`), the Python package builds them
//! from keyword arguments ([`keys`]), and each request's `config()` is what `--json` prints
//! under `config` for both. Resolving a request reports what a user should hear through a
//! [`Notice`]: the CLI prints it on stderr, Python raises it as a warning.

mod chip;
mod compare;
mod error;
mod exact;
mod input;
mod instance;
pub mod keys;
mod model;
mod moe;
mod sweep;

pub use chip::{ChipRequest, ChosenChip, DEFAULT_CHIP};
pub use compare::{
    positive_seconds, BoundChoice, CompareConfig, CompareRequest, SolveConfig, SolveRequest,
};
pub use error::RequestError;
pub use exact::{ExactConfig, ExactKeys, ExactRequest, DEFAULT_TIME_LIMIT_S};
pub use input::{InstanceInput, SourceConfig};
pub use instance::{build_on, BuiltInstance, Cut, InstanceConfig, InstanceRequest, StageChoices};
pub use model::{zoo_model, GraphConfig, ModelRequest, ModelSource, RunShape, DEFAULT_MODEL};
pub use moe::{MoeConfig, MoeRequest, PreparedMoe, DEFAULT_MOE_MODEL};
pub use sweep::{SweepConfig, SweepRequest, SweepResults};

/// What resolving a request tells its user besides its result: warnings (a chip value out of
/// the plausible range, a model file whose counts miss the published ones, …) and the long
/// step (planning every operator) a front end may show progress for.
pub trait Notice {
    /// One warning, on one line, without `warning: `.
    fn warn(&mut self, line: String);
    /// The plan tables of `what` (`llama2-13b decode b32 kv2048 on ipu-pod4`) are being
    /// built: the one step of a build that can take seconds.
    fn planning(&mut self, _what: &str) {}
    /// The plan tables are built.
    fn planned(&mut self) {}
}

/// A [`Notice`] that keeps the warnings (Python's, which raises them after the call).
#[derive(Debug, Default)]
pub struct Collected(pub Vec<String>);

impl Notice for Collected {
    fn warn(&mut self, line: String) {
        self.0.push(line);
    }
}
