//! Integration tests of elk-model: importer cross-checks against the reference artifact, the
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got
//! zoo's parameter counts, import-vs-zoo agreement and error reporting.

#[path = "model/core_groups.rs"]
mod core_groups;
#[path = "model/deepseek.rs"]
mod deepseek;
#[path = "model/dtypes.rs"]
mod dtypes;
#[path = "model/example_models.rs"]
mod example_models;
#[path = "model/fixtures.rs"]
mod fixtures;
#[path = "model/hf_config.rs"]
mod hf_config;
#[path = "model/import_errors.rs"]
mod import_errors;
#[path = "model/import_reference.rs"]
mod import_reference;
#[path = "model/moe.rs"]
mod moe;
#[path = "model/onnx_fixtures.rs"]
mod onnx_fixtures;
#[path = "model/op_names.rs"]
mod op_names;
#[path = "model/plan_cache.rs"]
mod plan_cache;
#[path = "model/plan_digests.rs"]
mod plan_digests;
#[path = "model/plans_by_hand.rs"]
mod plans_by_hand;
#[path = "model/plans_properties.rs"]
mod plans_properties;
#[path = "model/plans_reference.rs"]
mod plans_reference;
#[path = "model/reference.rs"]
mod reference;
#[path = "model/split.rs"]
mod split;
#[path = "model/tensix.rs"]
mod tensix;
#[path = "model/training.rs"]
mod training;
#[path = "model/zoo_counts.rs"]
mod zoo_counts;
#[path = "model/zoo_files.rs"]
mod zoo_files;
