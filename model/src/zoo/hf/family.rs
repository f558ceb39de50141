//! The config.json families read (`model_type`), what each one's keys become in a model file,
//! and the keys that change nothing elk-opt models.
//!
//! An absent key takes the value transformers gives it where that value is a rule (no
//! `num_key_value_heads` in Llama: one KV head per query head). Where transformers' default is
//! only some other model's number (Mistral's 8 KV heads, Qwen3's `head_dim` 128), the key is
//! required: real files always write it, and a file without it is more likely a mistake.

use super::{Config, Line};

/// The `model_type` values read, in the order errors list them.
pub const SUPPORTED: [&str; 11] = [
    "llama",
    "mistral",
    "qwen2",
    "qwen3",
    "mixtral",
    "qwen2_moe",
    "qwen3_moe",
    "olmoe",
    "deepseek_v2",
    "deepseek_v3",
    "kimi_k2",
];

/// Keys that change neither the graph nor the parameter count in any family, so they are read
/// past without a word: provenance, tokenizer ids, numerics (epsilons, the rotary base and
/// scaling change values, not shapes), training and inference settings (dropout, router losses,
/// the KV cache flag, whether top-k gates are renormalised).
pub const IGNORED: [&str; 24] = [
    "architectures",
    "auto_map",
    "transformers_version",
    "torch_dtype",
    "dtype",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "tokenizer_class",
    "rms_norm_eps",
    "rope_theta",
    "rope_scaling",
    "max_position_embeddings",
    "initializer_range",
    "use_cache",
    "attention_dropout",
    "pretraining_tp",
    "router_aux_loss_coef",
    "router_jitter_noise",
    "output_router_logits",
    "norm_topk_prob",
    "aux_loss_alpha",
    "seq_aux",
    "ep_size",
];

/// Keys every family reads.
const COMMON: [&str; 11] = [
    "model_type",
    "_name_or_path",
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "intermediate_size",
    "hidden_act",
    "tie_word_embeddings",
];

/// The Qwen families' sliding-window keys.
const QWEN_WINDOW: [&str; 4] = [
    "use_sliding_window",
    "sliding_window",
    "max_window_layers",
    "layer_types",
];

/// The Qwen MoE families' expert keys.
const QWEN_MOE: [&str; 5] = [
    "num_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "decoder_sparse_step",
    "mlp_only_layers",
];

/// transformers' `max_window_layers` when a Qwen config leaves it out.
const QWEN_MAX_WINDOW_LAYERS: u64 = 28;

/// One `model_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Llama,
    Mistral,
    Qwen2,
    Qwen3,
    Mixtral,
    Qwen2Moe,
    Qwen3Moe,
    Olmoe,
    DeepseekV2,
    DeepseekV3,
    /// Kimi K2: a DeepSeek-V3 architecture under its own model_type.
    KimiK2,
}

use Family::*;

const FAMILIES: [Family; 11] = [
    Llama, Mistral, Qwen2, Qwen3, Mixtral, Qwen2Moe, Qwen3Moe, Olmoe, DeepseekV2, DeepseekV3,
    KimiK2,
];

impl Family {
    pub fn of(model_type: &str) -> Option<Family> {
        let i = SUPPORTED.iter().position(|s| *s == model_type)?;
        Some(FAMILIES[i])
    }

    pub fn name(self) -> &'static str {
        SUPPORTED[self as usize]
    }

    fn qwen(self) -> bool {
        matches!(self, Qwen2 | Qwen3 | Qwen2Moe | Qwen3Moe)
    }

    /// DeepSeek-V2, V3 or Kimi K2: latent attention, dense layers first (hf/deepseek.rs).
    pub fn deepseek(self) -> bool {
        matches!(self, DeepseekV2 | DeepseekV3 | KimiK2)
    }

    /// The DeepSeek-V3 architecture (V3's defaults: sigmoid scores, noaux_tc).
    pub fn deepseek_v3(self) -> bool {
        matches!(self, DeepseekV3 | KimiK2)
    }

    /// Whether the family reads `key` (mapped to the model file, or checked and refused).
    pub fn reads(self, key: &str) -> bool {
        let own: &[&str] = match self {
            Llama => &["attention_bias", "mlp_bias"],
            Mistral => &["sliding_window"],
            Mixtral => &["sliding_window", "num_local_experts", "num_experts_per_tok"],
            Qwen2 => &[],
            Qwen3 | Qwen3Moe => &["attention_bias"],
            Qwen2Moe => &["shared_expert_intermediate_size"],
            Olmoe => &[
                "attention_bias",
                "clip_qkv",
                "num_experts",
                "num_experts_per_tok",
            ],
            DeepseekV2 | DeepseekV3 | KimiK2 => &super::deepseek::KEYS,
        };
        COMMON.contains(&key)
            || own.contains(&key)
            || (self.qwen() && QWEN_WINDOW.contains(&key))
            || (matches!(self, Qwen2Moe | Qwen3Moe) && QWEN_MOE.contains(&key))
    }
}

type Mapped<T> = Result<T, String>;

/// The model file's values for config `c` of family `f`, top-level keys first, then `[ffn]`,
/// `[moe]` and `[attention]`; `Err` is the one-line refusal.
pub(super) fn map(f: Family, c: &Config) -> Mapped<Vec<Line>> {
    let layers = c.required("num_hidden_layers")?;
    let hidden = c.required("hidden_size")?;
    let heads = c.required("num_attention_heads")?;
    let vocab = c.required("vocab_size")?;
    let inter = c.required("intermediate_size")?;
    if let Some(v) = c.get("clip_qkv").filter(|_| f.reads("clip_qkv")) {
        return Err(format!(
            "key 'clip_qkv': {v}: clamping q, k and v is not modelled (the generator emits no \
             clamp)"
        ));
    }
    let (head_line, mla_lines) = if f.deepseek() {
        super::deepseek::mla(c)?
    } else {
        (head_dim(f, c, hidden, heads)?, Vec::new())
    };
    let kv_line = if f.deepseek() {
        super::deepseek::kv_heads(c, heads)?
    } else {
        kv_heads(f, c, heads)?
    };
    let mut lines = vec![
        Line::new("", "layers", layers, "").read_from("num_hidden_layers"),
        Line::new("", "hidden", hidden, "").read_from("hidden_size"),
        Line::new("", "heads", heads, "").read_from("num_attention_heads"),
        kv_line,
        head_line,
        Line::new("", "vocab", vocab, "").read_from("vocab_size"),
        Line::new("", "positions", 0, "no learned position table: rotary"),
        Line::new("", "norm", "\"rms\"", "RMSNorm"),
        Line::new(
            "",
            "norm_position",
            "\"pre\"",
            "a norm before attention and before the FFN",
        ),
        Line::new(
            "",
            "rotary",
            true,
            "rope_theta and rope_scaling change values, not the graph",
        ),
        bias(f, c)?,
        match c.boolean("tie_word_embeddings")? {
            Some(t) => Line::new("", "tied_embeddings", t, ""),
            None => Line::new("", "tied_embeddings", false, " absent: false, the default"),
        }
        .read_from("tie_word_embeddings"),
        match f {
            Qwen3 | Qwen3Moe => Line::new(
                "",
                "qk_norm",
                "\"per-head\"",
                "qwen3: RMSNorm of each head's queries and keys",
            ),
            Olmoe => Line::new(
                "",
                "qk_norm",
                "\"full\"",
                "olmoe: RMSNorm of the whole query and key projections",
            ),
            _ => Line::new("", "qk_norm", "\"none\"", ""),
        },
    ];
    if f.deepseek() {
        lines.extend(super::deepseek::weight_dtype(c)?);
    }
    let dim_note = match f {
        Qwen2Moe | Qwen3Moe => ": the width of a dense layer, which this model has none of",
        Mixtral | Olmoe => ": also each expert's width",
        DeepseekV2 | DeepseekV3 | KimiK2 => ": the width of the dense layers before the MoE ones",
        _ => "",
    };
    lines.extend([
        Line::new("ffn", "kind", "\"gated\"", "gate_proj, up_proj, down_proj"),
        Line::new("ffn", "dim", inter, dim_note).read_from("intermediate_size"),
        activation(c)?,
    ]);
    if f.deepseek() {
        lines.extend(super::deepseek::moe(f, c, layers)?);
        lines.extend(mla_lines);
    } else {
        lines.extend(moe(f, c, inter)?);
    }
    lines.extend(window(f, c, layers)?);
    Ok(lines)
}

fn kv_heads(f: Family, c: &Config, heads: u64) -> Mapped<Line> {
    let line = match c.count("num_key_value_heads")? {
        Some(n) => Line::new("", "kv_heads", n, ""),
        None if matches!(f, Llama | Olmoe) => Line::new(
            "",
            "kv_heads",
            heads,
            " absent: num_attention_heads, transformers' rule",
        ),
        None => {
            return Err(format!(
                "missing key 'num_key_value_heads' ({}'s default is a fixed count, not a rule)",
                f.name()
            ))
        }
    };
    Ok(line.read_from("num_key_value_heads"))
}

fn head_dim(f: Family, c: &Config, hidden: u64, heads: u64) -> Mapped<Line> {
    let line = match c.count("head_dim")? {
        Some(d) => Line::new("", "head_dim", d, ""),
        None if matches!(f, Qwen3 | Qwen3Moe) => {
            return Err(format!(
                "missing key 'head_dim' ({}'s default is not hidden_size / num_attention_heads)",
                f.name()
            ))
        }
        // A zero head count is refused by the model file's check, naming num_attention_heads.
        None => Line::new(
            "",
            "head_dim",
            hidden.checked_div(heads).unwrap_or(0),
            " absent: hidden_size / num_attention_heads",
        ),
    };
    Ok(line.read_from("head_dim"))
}

/// Which projections have biases: the model file has none, the QKV projection's or every
/// linear layer's.
fn bias(f: Family, c: &Config) -> Mapped<Line> {
    let attention = if f.reads("attention_bias") {
        c.boolean("attention_bias")?.unwrap_or(false)
    } else {
        false
    };
    let refuse_attention = || {
        Err(
            "key 'attention_bias': true: biases on q, k, v and o are not modelled (elk-opt \
             models none, qkv or all)"
                .to_string(),
        )
    };
    match f {
        Llama => match (attention, c.boolean("mlp_bias")?.unwrap_or(false)) {
            (false, false) => Ok(Line::new(
                "",
                "bias",
                "\"none\"",
                "attention_bias and mlp_bias false",
            )),
            (true, true) => Ok(Line::new(
                "",
                "bias",
                "\"all\"",
                "attention_bias and mlp_bias true",
            )),
            (true, false) => refuse_attention(),
            (false, true) => Err("key 'mlp_bias': true: biases on the FFN without biases on \
                 q, k, v and o are not modelled (elk-opt models none, qkv or all)"
                .into()),
        },
        Qwen2 | Qwen2Moe => Ok(Line::new(
            "",
            "bias",
            "\"qkv\"",
            "qwen2: biases on q, k and v, always",
        )),
        _ if attention => refuse_attention(),
        _ if f.reads("attention_bias") => {
            Ok(Line::new("", "bias", "\"none\"", "").read_from("attention_bias"))
        }
        _ => Ok(Line::new("", "bias", "\"none\"", "")),
    }
}

fn activation(c: &Config) -> Mapped<Line> {
    let act = c.string("hidden_act")?;
    let value = match act.unwrap_or("silu") {
        "silu" | "swish" => "silu",
        "gelu" | "gelu_new" | "gelu_pytorch_tanh" | "gelu_fast" | "gelu_python"
        | "gelu_accurate" => "gelu",
        "relu" => "relu",
        other => {
            return Err(format!(
                "key 'hidden_act': \"{other}\": elk-opt models silu, relu and the gelu family \
                 (gelu, gelu_new, gelu_pytorch_tanh, gelu_fast, gelu_python, gelu_accurate)"
            ))
        }
    };
    let note = if act.is_none() {
        " absent: silu, the default"
    } else {
        ""
    };
    Ok(Line::new("ffn", "activation", format!("\"{value}\""), note).read_from("hidden_act"))
}

/// `[moe]`: Mixtral and OLMoE size their experts with `intermediate_size`; the Qwen MoE
/// families with `moe_intermediate_size`, Qwen2-MoE adding a gated shared expert.
fn moe(f: Family, c: &Config, inter: u64) -> Mapped<Vec<Line>> {
    let (experts_key, dim, dim_key) = match f {
        Mixtral => ("num_local_experts", inter, "intermediate_size"),
        Olmoe => ("num_experts", inter, "intermediate_size"),
        Qwen2Moe | Qwen3Moe => (
            "num_experts",
            c.required("moe_intermediate_size")?,
            "moe_intermediate_size",
        ),
        _ => return Ok(Vec::new()),
    };
    if matches!(f, Qwen2Moe | Qwen3Moe) {
        let dense_among_moe = "layers with a dense FFN among the MoE ones are not modelled \
                               (elk-opt puts the experts in every layer)";
        if let Some(step) = c.uint("decoder_sparse_step")?.filter(|s| *s != 1) {
            return Err(format!(
                "key 'decoder_sparse_step': {step}: {dense_among_moe}"
            ));
        }
        match c.get("mlp_only_layers") {
            None => {}
            Some(serde_json::Value::Array(a)) if a.is_empty() => {}
            Some(serde_json::Value::Array(a)) => {
                let v = serde_json::Value::Array(a.clone());
                return Err(format!("key 'mlp_only_layers': {v}: {dense_among_moe}"));
            }
            Some(v) => {
                return Err(format!(
                    "key 'mlp_only_layers': {v}: expected a list of layer indices"
                ))
            }
        }
    }
    let mut lines = vec![
        Line::new("moe", "experts", c.required(experts_key)?, "").read_from(experts_key),
        Line::new("moe", "top_k", c.required("num_experts_per_tok")?, "")
            .read_from("num_experts_per_tok"),
        Line::new("moe", "expert_dim", dim, "").read_from(dim_key),
    ];
    if f == Qwen2Moe {
        let shared = c.required_uint("shared_expert_intermediate_size")?;
        lines.extend([
            Line::new("moe", "shared_dim", shared, "").read_from("shared_expert_intermediate_size"),
            Line::new(
                "moe",
                "shared_gate",
                shared > 0,
                "qwen2_moe: shared_expert_gate, a sigmoid gate on the shared expert",
            ),
        ]);
    }
    Ok(lines)
}

/// `[attention]`: Mistral and Mixtral's `sliding_window` in every layer; in the Qwen families a
/// window only with `use_sliding_window`, in the layers `layer_types` names (or from
/// `max_window_layers` on), as transformers applies it.
fn window(f: Family, c: &Config, layers: u64) -> Mapped<Vec<Line>> {
    let lines = |w: u64, local: &[bool], note: &str| {
        let pattern: Vec<&str> = local
            .iter()
            .map(|&l| if l { "\"local\"" } else { "\"global\"" })
            .collect();
        vec![
            Line::new("attention", "window", w, "").read_from("sliding_window"),
            Line::new(
                "attention",
                "pattern",
                format!("[{}]", pattern.join(", ")),
                note,
            ),
        ]
    };
    if matches!(f, Mistral | Mixtral) {
        return Ok(match c.count("sliding_window")? {
            Some(w) => lines(w, &[true], "every layer"),
            None => Vec::new(),
        });
    }
    if !f.qwen() || !c.boolean("use_sliding_window")?.unwrap_or(false) {
        return Ok(Vec::new());
    }
    // transformers drops the window when sliding_window is null, whatever the layers say.
    let Some(w) = c.count("sliding_window")? else {
        return Ok(Vec::new());
    };
    // More layers than a model file may have are refused by its check, naming
    // num_hidden_layers: the pattern need not be longer.
    let n = usize::try_from(layers)
        .unwrap_or(usize::MAX)
        .min(super::super::file::MAX_LAYERS + 1);
    let (local, note) = match c.get("layer_types") {
        Some(v) => (layer_types(v, layers)?, "layer_types".to_string()),
        None => {
            let from = c
                .uint("max_window_layers")?
                .unwrap_or(QWEN_MAX_WINDOW_LAYERS);
            let local = (0..n as u64).map(|i| i >= from).collect();
            (local, format!("layers from max_window_layers = {from} on"))
        }
    };
    if !local.contains(&true) {
        return Ok(Vec::new());
    }
    Ok(lines(w, &local[..period(&local)], &note))
}

/// `layer_types`: `"sliding_attention"` (true) or `"full_attention"` per layer.
fn layer_types(v: &serde_json::Value, layers: u64) -> Mapped<Vec<bool>> {
    let list = v
        .as_array()
        .ok_or_else(|| format!("key 'layer_types': {v}: expected a list of layer types"))?;
    if list.len() as u64 != layers {
        return Err(format!(
            "key 'layer_types': {} entries for {layers} layers (num_hidden_layers)",
            list.len()
        ));
    }
    list.iter()
        .map(|t| match t.as_str() {
            Some("sliding_attention") => Ok(true),
            Some("full_attention") => Ok(false),
            _ => Err(format!(
                "key 'layer_types': {t}: elk-opt models \"full_attention\" and \
                 \"sliding_attention\" layers"
            )),
        })
        .collect()
}

/// The shortest prefix that, repeated, gives `xs` (the model file's pattern repeats).
fn period(xs: &[bool]) -> usize {
    (1..xs.len())
        .find(|&p| xs.iter().enumerate().all(|(i, x)| *x == xs[i % p]))
        .unwrap_or(xs.len())
}

#[cfg(test)]
mod tests {
    use super::{period, Family, FAMILIES, SUPPORTED};

    #[test]
    fn every_supported_type_is_its_family() {
        for (i, name) in SUPPORTED.iter().enumerate() {
            assert_eq!(Family::of(name), Some(FAMILIES[i]));
            assert_eq!(FAMILIES[i].name(), *name);
        }
        assert_eq!(Family::of("gemma2"), None);
    }

    #[test]
    fn the_pattern_is_the_shortest_repeating_prefix() {
        assert_eq!(period(&[true, true, true]), 1);
        assert_eq!(period(&[true, false, true, false]), 2);
        assert_eq!(period(&[true, false, true]), 2);
        assert_eq!(period(&[false, false, true, true]), 4);
    }

    #[test]
    fn a_key_is_read_by_the_families_that_have_it() {
        assert!(Family::Llama.reads("mlp_bias"));
        assert!(!Family::Mistral.reads("mlp_bias"));
        assert!(Family::Qwen3Moe.reads("decoder_sparse_step"));
        assert!(!Family::Qwen3.reads("decoder_sparse_step"));
        assert!(Family::Qwen2.reads("max_window_layers"));
        assert!(!Family::Olmoe.reads("sliding_window"));
    }
}
