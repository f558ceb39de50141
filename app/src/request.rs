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
pub(crate) mod error;
mod exact;
mod input;
mod instance;
pub mod keys;
mod model;
mod moe;
mod notice;
mod sweep;

pub use chip::{ChipRequest, ChosenChip, DramReaders, DEFAULT_CHIP};
pub use compare::{
    positive_seconds, BoundChoice, CompareConfig, CompareRequest, SolveConfig, SolveRequest,
};
pub use error::RequestError;
pub use exact::{ExactConfig, ExactKeys, ExactRequest, DEFAULT_TIME_LIMIT_S};
pub use input::{InstanceInput, SourceConfig};
pub use instance::{
    build_on, BuiltInstance, Cut, InstanceConfig, InstanceRequest, StageChoices,
    WINDOW_AT_LEAST_ONE,
};
pub use model::{zoo_model, GraphConfig, ModelRequest, ModelSource, RunShape, DEFAULT_MODEL};
pub use moe::{MoeConfig, MoeRequest, PreparedMoe, DEFAULT_MOE_MODEL};
pub use notice::{Collected, Notice};
pub use sweep::{SweepConfig, SweepRequest, SweepResults};
