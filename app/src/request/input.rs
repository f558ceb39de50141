//! Where a command's instance comes from: a file, or built from a request.

use super::instance::{InstanceConfig, InstanceRequest};
use serde::Serialize;
use std::path::PathBuf;

/// The instance a command works on.
#[derive(Clone, Debug, PartialEq)]
pub enum InstanceInput {
    /// `--instance FILE` (Python's `Instance.load`): the file fixes the graph, the chip, the
    /// cut and the stage-model choices.
    File(PathBuf),
    /// Built from a model and a chip.
    Build(Box<InstanceRequest>),
}

impl Default for InstanceInput {
    /// The built-in default: [`InstanceRequest::default`].
    fn default() -> Self {
        InstanceInput::Build(Box::default())
    }
}

impl InstanceInput {
    /// The inputs as `--json` prints them in `config`: the file read, or what the instance
    /// is built from.
    pub fn config(&self) -> SourceConfig {
        match self {
            InstanceInput::File(path) => SourceConfig::File {
                instance: path.clone(),
            },
            InstanceInput::Build(r) => SourceConfig::Built(Box::new(r.config())),
        }
    }
}

/// The inputs of an instance as `--json` prints them in `config`.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum SourceConfig {
    /// `--instance FILE`.
    File {
        /// The file.
        instance: PathBuf,
    },
    /// Built from a graph and a chip.
    Built(Box<InstanceConfig>),
}
