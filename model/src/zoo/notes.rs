//! What `models show` says about a model beyond its operator table: the form of latent
//! attention a run builds and its KV cache per token, the dense layers before the MoE ones,
//! the weight dtype, and the convention of a published active count.

use super::{ZooModel, ZooParams};
use crate::graph::Mode;
use elk_stage::units::si;

impl ZooModel {
    /// One line per fact a reader of `params`' graph needs beyond its operators (none for most
    /// models).
    pub fn notes(&self, params: &ZooParams) -> Vec<String> {
        let mut out = Vec::new();
        let layers = params.layers.unwrap_or(self.layers());
        if let Some(m) = &self.config.mla {
            let per_token = params.dtypes.kv.bytes().of(m.cache_width());
            out.push(if params.mode == Mode::Decode {
                format!(
                    "attention:         multi-head latent, absorbed (decode): {} heads over one \
                     latent KV head; KV cache {} + {} = {} elements per token and layer, {} B \
                     at {} × {layers} layers",
                    self.config.heads,
                    m.kv_rank,
                    m.rope_dim,
                    m.cache_width(),
                    per_token,
                    params.dtypes.kv,
                )
            } else {
                format!(
                    "attention:         multi-head latent, expanded ({}): kv_b_proj gives each \
                     of the {} heads its keys and values",
                    params.mode.as_str(),
                    self.config.heads
                )
            });
        }
        if let Some(moe) = self
            .moe()
            .filter(|m| m.dense_layers > 0 || m.layer_freq > 1)
        {
            let n = moe.moe_layers(layers);
            out.push(format!(
                "layers:            {} dense (FFN {}), {n} MoE; routing is per MoE layer (a \
                 routing's layer i is the i-th MoE layer)",
                layers - n,
                self.config.ffn_dim
            ));
        }
        if let Some(w) = self.weight_dtype {
            out.push(format!(
                "weights:           published as {w}; this graph's are {} (--dtype chooses)",
                params.dtypes.weights
            ));
        }
        if self.active_without_embedding {
            if let (Some(a), Ok((_, active))) =
                (self.published_active_params, self.parameter_counts())
            {
                out.push(format!(
                    "published active:  {} leaves out the input embedding: {} compared",
                    si(a, ""),
                    si(self.active_as_published(active) as f64, "")
                ));
            }
        }
        out
    }
}
