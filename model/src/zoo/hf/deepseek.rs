//! The DeepSeek families (`deepseek_v2`, `deepseek_v3`, and Kimi K2's `kimi_k2`, a DeepSeek-V3
//! architecture): multi-head latent attention (`[mla]`), dense layers before the MoE ones,
//! shared experts, group-limited routing and the FP8 checkpoint's weight dtype.
//!
//! transformers' defaults for the latent widths and the expert counts are DeepSeek-V3's
//! numbers, not rules, so those keys are required (every published file writes them).

use super::family::Family;
use super::{Config, Line};

type Mapped<T> = Result<T, String>;

/// The keys the DeepSeek families read besides the common ones.
pub(super) const KEYS: [&str; 19] = [
    "attention_bias",
    "q_lora_rank",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "qk_nope_head_dim",
    "v_head_dim",
    "n_routed_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "n_shared_experts",
    "first_k_dense_replace",
    "moe_layer_freq",
    "n_group",
    "topk_group",
    "topk_method",
    "scoring_func",
    "num_nextn_predict_layers",
    "quantization_config",
    "routed_scaling_factor",
];

/// `head_dim` (a query head's width before absorption: nope + rope) and `[mla]`.
pub(super) fn mla(c: &Config) -> Mapped<(Line, Vec<Line>)> {
    let kv = c.required("kv_lora_rank")?;
    let need = |key: &'static str, what: &str| -> Mapped<u64> {
        c.count(key)?.ok_or_else(|| {
            format!("key 'kv_lora_rank': {kv} needs {key}, {what} (missing or null)")
        })
    };
    let rope = need("qk_rope_head_dim", "the RoPE key cached beside the latent")?;
    let nope = need(
        "qk_nope_head_dim",
        "each head's key and query width without RoPE",
    )?;
    let v = need("v_head_dim", "each head's value width")?;
    let (q, q_note) = match c.count("q_lora_rank")? {
        Some(r) => (r, ""),
        None => (0, " null: a full-rank query projection"),
    };
    let head = Line::new(
        "",
        "head_dim",
        nope + rope,
        "qk_nope_head_dim + qk_rope_head_dim: a query head before absorption",
    );
    let lines = vec![
        Line::new("mla", "q_rank", q, q_note).read_from("q_lora_rank"),
        Line::new("mla", "kv_rank", kv, "").read_from("kv_lora_rank"),
        Line::new("mla", "rope_dim", rope, "").read_from("qk_rope_head_dim"),
        Line::new("mla", "nope_dim", nope, "").read_from("qk_nope_head_dim"),
        Line::new("mla", "v_dim", v, "").read_from("v_head_dim"),
    ];
    Ok((head, lines))
}

/// `kv_heads`: every query head has its key and value (expanded from the latent).
pub(super) fn kv_heads(c: &Config, heads: u64) -> Mapped<Line> {
    let line = match c.count("num_key_value_heads")? {
        Some(n) if n == heads => Line::new("", "kv_heads", n, ""),
        Some(n) => {
            return Err(format!(
                "key 'num_key_value_heads': {n}: latent attention expands the latent into \
                 every query head's key and value ({heads}, num_attention_heads)"
            ))
        }
        None => Line::new("", "kv_heads", heads, " absent: num_attention_heads"),
    };
    Ok(line.read_from("num_key_value_heads"))
}

/// `[moe]`: routed and shared experts, the dense layers first, the routing's scores and
/// groups. `None` routed experts: a dense model.
pub(super) fn moe(f: Family, c: &Config, layers: u64) -> Mapped<Vec<Line>> {
    let Some(experts) = c.count("n_routed_experts")? else {
        return Ok(Vec::new());
    };
    let dim = c.required("moe_intermediate_size")?;
    let top_k = c.required("num_experts_per_tok")?;
    let shared = c.uint("n_shared_experts")?.unwrap_or(0);
    let dense = c.uint("first_k_dense_replace")?.unwrap_or(0);
    if dense >= layers {
        return Err(format!(
            "key 'first_k_dense_replace': {dense}: leaves none of the {layers} layers \
             (num_hidden_layers) for the experts"
        ));
    }
    let freq = c.count("moe_layer_freq")?.unwrap_or(1);
    let v3 = f.deepseek_v3();
    let scoring = match c.string("scoring_func")? {
        Some(s @ ("softmax" | "sigmoid")) => s,
        None if v3 => "sigmoid",
        None => "softmax",
        Some(other) => {
            return Err(format!(
                "key 'scoring_func': \"{other}\": elk-opt models softmax and sigmoid"
            ))
        }
    };
    let method = match c.string("topk_method")? {
        Some(m) => m,
        None if v3 => "noaux_tc",
        None => "greedy",
    };
    let mut lines = vec![
        Line::new("moe", "experts", experts, "").read_from("n_routed_experts"),
        Line::new("moe", "top_k", top_k, "").read_from("num_experts_per_tok"),
        Line::new("moe", "expert_dim", dim, "").read_from("moe_intermediate_size"),
        Line::new(
            "moe",
            "shared_dim",
            shared * dim,
            &format!(" × moe_intermediate_size: {shared} shared expert(s) of {dim}"),
        )
        .read_from("n_shared_experts"),
        Line::new("moe", "dense_layers", dense, "").read_from("first_k_dense_replace"),
        Line::new("moe", "layer_freq", freq, "").read_from("moe_layer_freq"),
        Line::new("moe", "scoring", format!("\"{scoring}\""), "").read_from("scoring_func"),
    ];
    let score = match method {
        "greedy" => return Ok(lines),
        "group_limited_greedy" => "max",
        "noaux_tc" => "top2-sum",
        other => {
            return Err(format!(
                "key 'topk_method': \"{other}\": elk-opt models greedy, group_limited_greedy \
                 and noaux_tc"
            ))
        }
    };
    let groups = c.required("n_group")?;
    let top = c.required("topk_group")?;
    if experts % groups != 0 {
        return Err(format!(
            "key 'n_group': {groups} groups do not divide the {experts} experts \
             (n_routed_experts)"
        ));
    }
    if top > groups {
        return Err(format!(
            "key 'topk_group': {top} is above the {groups} groups (n_group)"
        ));
    }
    lines.extend([
        Line::new("moe", "score_bias", method == "noaux_tc", "")
            .read_from("topk_method")
            .with_comment(": e_score_correction_bias with noaux_tc"),
        Line::new("moe", "groups", groups, "").read_from("n_group"),
        Line::new("moe", "topk_groups", top, "").read_from("topk_group"),
        Line::new("moe", "group_score", format!("\"{score}\""), "")
            .read_from("topk_method")
            .with_comment(&format!(": {method}")),
    ]);
    Ok(lines)
}

/// The weight dtype of an FP8 checkpoint (`quantization_config.quant_method = "fp8"`), as
/// `weight_dtype`; any other quantisation is refused, naming it.
pub(super) fn weight_dtype(c: &Config) -> Mapped<Option<Line>> {
    let Some(q) = c.get("quantization_config") else {
        return Ok(None);
    };
    match q.get("quant_method").and_then(|m| m.as_str()) {
        Some("fp8") => Ok(Some(
            Line::new("", "weight_dtype", "\"fp8\"", "")
                .read_from("quantization_config")
                .with_comment(": quant_method fp8, the published checkpoint's weights"),
        )),
        Some(other) => Err(format!(
            "key 'quantization_config': quant_method \"{other}\": elk-opt maps fp8 only (drop \
             the key and pass --dtype)"
        )),
        None => Err(format!(
            "key 'quantization_config': {q}: expected a quant_method"
        )),
    }
}

/// The note on the multi-token-prediction module, when the file has one.
pub(super) fn mtp_note(file: &str, c: &Config) -> Mapped<Option<String>> {
    Ok(c.uint("num_nextn_predict_layers")?
        .filter(|&n| n > 0)
        .map(|n| {
            format!(
                "{file}: ignoring the multi-token-prediction module (num_nextn_predict_layers \
                 = {n}): decode runs the main model; its parameters are not counted"
            )
        }))
}
