//! One point of a grid ([`Cell`]): a model, mode, batch, KV length, chip and the overrides of
//! one combination of the grid's lists, and its stable key. Apart from `grid.rs` so that the
//! cell's chip (`cell_chip.rs`) reads it without reading the grid.

use serde::{Deserialize, Serialize};

/// One point of the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// Position in the grid's fixed order.
    pub index: usize,
    /// Model: a zoo name, or a model file as the grid writes it.
    pub model: String,
    /// Mode.
    pub mode: String,
    /// Batch.
    pub batch: u64,
    /// KV / sequence length.
    pub kv: u64,
    /// Chip.
    pub chip: String,
    /// HBM TB/s (None: the chip's).
    pub hbm_tbps: Option<f64>,
    /// NoC factor.
    pub noc_scale: f64,
    /// Compute factor.
    pub compute_scale: f64,
    /// Topology override.
    pub topology: Option<String>,
    /// Cores override.
    pub cores: Option<u64>,
    /// MoE routing (grids with `routings`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<String>,
    /// Parallel sets (grids with `expert_parallel`; absent: false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expert_parallel: bool,
}

impl Cell {
    /// A decode cell on ipu-pod4 at the chip's own bandwidths (the studies' full models).
    pub fn decode(model: &str, batch: u64, kv: u64) -> Cell {
        Cell {
            index: 0,
            model: model.into(),
            mode: "decode".into(),
            batch,
            kv,
            chip: "ipu-pod4".into(),
            hbm_tbps: None,
            noc_scale: 1.0,
            compute_scale: 1.0,
            topology: None,
            cores: None,
            routing: None,
            expert_parallel: false,
        }
    }

    /// A stable text key (for resuming and merging).
    pub fn key(&self) -> String {
        // A routing extends the key; cells without one keep the key they always had.
        let routing = self
            .routing
            .as_ref()
            .map(|r| format!("|routing {r}"))
            .unwrap_or_default();
        // So do parallel sets.
        let sets = if self.expert_parallel {
            "|expert-parallel"
        } else {
            ""
        };
        format!(
            "{}|{}|b{}|s{}|{}|hbm{:?}|noc{}|comp{}|{:?}|cores{:?}{routing}{sets}",
            self.model,
            self.mode,
            self.batch,
            self.kv,
            self.chip,
            self.hbm_tbps,
            self.noc_scale,
            self.compute_scale,
            self.topology,
            self.cores
        )
    }
}
