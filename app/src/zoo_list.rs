//! `elk-opt models list`'s rows (`elk-opt/models-list/1`): the zoo's models with their
//! parameter counts, shared by the CLI and the Python package's `models()`.

use elk_model::zoo;
use serde::Serialize;

/// One zoo model as `models list` shows it.
#[derive(Serialize, Debug, Clone)]
pub struct ModelRow {
    /// The model's name (`--model NAME`).
    pub name: &'static str,
    /// Its number of layers.
    pub layers: usize,
    /// It has a KV cache (decode mode applies).
    pub decode: bool,
    /// Experts per layer and experts per token (MoE models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experts: Option<ExpertsRow>,
    /// The graph's parameters: all of them.
    pub total_params: u64,
    /// Those one token uses.
    pub active_params: u64,
    /// The published count.
    pub published_params: Option<f64>,
    /// The published count of active parameters (MoE models).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published_active_params: Option<f64>,
    /// Where the published count comes from.
    pub source: &'static str,
}

/// An MoE model's experts.
#[derive(Serialize, Debug, Clone)]
pub struct ExpertsRow {
    /// Routed experts per layer.
    pub experts: u64,
    /// Experts each token is routed to (top-k).
    #[serde(rename = "experts_per_token")]
    pub top_k: u64,
}

/// Every zoo model's row, in the zoo's order.
pub fn rows() -> elk_model::Result<Vec<ModelRow>> {
    zoo::models()
        .iter()
        .map(|m| {
            let (total_params, active_params) = m.parameter_counts()?;
            Ok(ModelRow {
                name: &m.name,
                layers: m.layers(),
                decode: m.supports_decode(),
                experts: m.moe().map(|x| ExpertsRow {
                    experts: x.experts,
                    top_k: x.top_k,
                }),
                total_params,
                active_params,
                published_params: m.published_params,
                published_active_params: m.published_active_params,
                source: &m.source,
            })
        })
        .collect()
}
