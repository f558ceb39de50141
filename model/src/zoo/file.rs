//! The model file (`--model FILE.toml`, docs/model-files.md): a transformer's hyper-parameters
//! as TOML. The zoo is these files embedded in the binary, so adding a model is a file, not
//! code.
//!
//! Strict on purpose: a misspelt key silently taking a default would build another model
//! with a plausible parameter count. Unknown keys, missing keys and wrong types are errors
//! naming the line and key; so are values the generator cannot build (heads that do not
//! divide the width, KV heads that do not divide the heads).

use super::mla::Mla;
use super::moe::{GroupScore, Groups, Moe, Scoring};
use super::transformer::{Bias, Ffn, Frame, Norm, QkNorm, Transformer};
use super::ZooModel;
use crate::error::{ModelError, Result};
use serde::Deserialize;

/// The file as written; [`parse`] checks what serde cannot and maps it to a [`Transformer`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    name: String,
    source: String,
    #[serde(default)]
    published_params: Option<f64>,
    #[serde(default)]
    published_active_params: Option<f64>,
    #[serde(default)]
    published_active_without_embedding: bool,
    weight_dtype: Option<String>,
    layers: usize,
    hidden: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    vocab: u64,
    positions: u64,
    norm: RawNorm,
    norm_position: NormPosition,
    rotary: bool,
    bias: RawBias,
    tied_embeddings: bool,
    ffn: RawFfn,
    #[serde(default)]
    qk_norm: RawQkNorm,
    moe: Option<RawMoe>,
    mla: Option<RawMla>,
    attention: Option<RawAttention>,
    frame: Option<RawFrame>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum RawNorm {
    Rms,
    Layer,
    LayerNoAffine,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum NormPosition {
    Pre,
    Post,
    Sandwich,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum RawBias {
    None,
    Qkv,
    All,
}

impl RawBias {
    fn qkv(self) -> bool {
        !matches!(self, RawBias::None)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFfn {
    kind: FfnKind,
    dim: u64,
    activation: Activation,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum FfnKind {
    Gated,
    Plain,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum Activation {
    Silu,
    Gelu,
    Relu,
}

#[derive(Deserialize, Clone, Copy, Default, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum RawQkNorm {
    #[default]
    None,
    PerHead,
    Full,
}

/// `[moe]`: the FFN of every layer is a mixture of experts.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMoe {
    experts: u64,
    top_k: u64,
    expert_dim: u64,
    #[serde(default)]
    shared_dim: u64,
    #[serde(default)]
    shared_gate: bool,
    #[serde(default)]
    dense_layers: usize,
    #[serde(default = "one")]
    layer_freq: usize,
    #[serde(default)]
    scoring: RawScoring,
    #[serde(default)]
    score_bias: bool,
    groups: Option<u64>,
    topk_groups: Option<u64>,
    group_score: Option<RawGroupScore>,
}

fn one() -> usize {
    1
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(rename_all = "kebab-case")]
enum RawScoring {
    #[default]
    Softmax,
    Sigmoid,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
enum RawGroupScore {
    Top2Sum,
    Max,
}

/// `[mla]`: multi-head latent attention in place of grouped-query attention.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMla {
    q_rank: u64,
    kv_rank: u64,
    rope_dim: u64,
    nope_dim: u64,
    v_dim: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAttention {
    window: u64,
    pattern: Vec<Span>,
}

#[derive(Deserialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum Span {
    Local,
    Global,
}

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
enum RawFrame {
    DecoderLm,
    Bert,
    Vit {
        tokens: u64,
        patch_elems: u64,
        classes: u64,
    },
    Dit {
        tokens: u64,
        patch_elems: u64,
        out_elems: u64,
        freq_dim: u64,
        labels: u64,
    },
}

/// The most layers a file may have.
pub(super) const MAX_LAYERS: usize = 10_000;

/// The largest width, head count, vocabulary or table a file may have (2^24).
const MAX_DIM: u64 = 1 << 24;

/// Parses and checks a model file; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<ZooModel> {
    let bad = |detail: String| ModelError::ModelFile {
        file: file.into(),
        detail,
    };
    let raw: RawModel = toml::from_str(text).map_err(|e| bad(parse_error(text, &e)))?;
    let at = |table: &str, key: &str, msg: String| bad(locate(text, table, key, &msg));
    check(&raw, &at)?;
    let (frame, fixed_tokens) = match raw.frame.unwrap_or(RawFrame::DecoderLm) {
        RawFrame::DecoderLm => (
            Frame::DecoderLm {
                tied: raw.tied_embeddings,
            },
            None,
        ),
        RawFrame::Bert => (Frame::Bert, None),
        RawFrame::Vit {
            tokens,
            patch_elems,
            classes,
        } => (
            Frame::Vit {
                patch_elems,
                classes,
            },
            Some(tokens),
        ),
        RawFrame::Dit {
            tokens,
            patch_elems,
            out_elems,
            freq_dim,
            labels,
        } => (
            Frame::Dit {
                patch_elems,
                out_elems,
                freq_dim,
                labels,
            },
            Some(tokens),
        ),
    };
    let act = match raw.ffn.activation {
        // SiLU is x · sigmoid(x): the generator emits the Sigmoid and the product.
        Activation::Silu => "Sigmoid",
        Activation::Gelu => "Gelu",
        Activation::Relu => "Relu",
    };
    let windows = raw
        .attention
        .as_ref()
        .map(|a| {
            a.pattern
                .iter()
                .map(|s| (*s == Span::Local).then_some(a.window))
                .collect()
        })
        .unwrap_or_default();
    Ok(ZooModel {
        name: raw.name,
        published_params: raw.published_params,
        published_active_params: raw.published_active_params,
        active_without_embedding: raw.published_active_without_embedding,
        weight_dtype: raw
            .weight_dtype
            .as_deref()
            .and_then(crate::dtype::Dtype::parse_name),
        source: raw.source,
        fixed_tokens,
        config: Transformer {
            hidden: raw.hidden,
            layers: raw.layers,
            heads: raw.heads,
            kv_heads: raw.kv_heads,
            head_dim: raw.head_dim,
            ffn_dim: raw.ffn.dim,
            vocab: raw.vocab,
            positions: raw.positions,
            norm: match raw.norm {
                RawNorm::Rms => Norm::Rms,
                RawNorm::Layer => Norm::Layer,
                RawNorm::LayerNoAffine => Norm::LayerNoAffine,
            },
            pre_norm: raw.norm_position != NormPosition::Post,
            sandwich_norm: raw.norm_position == NormPosition::Sandwich,
            bias: match raw.bias {
                RawBias::None => Bias::None,
                RawBias::Qkv => Bias::Qkv,
                RawBias::All => Bias::All,
            },
            rotary: raw.rotary,
            ffn: match raw.ffn.kind {
                FfnKind::Gated => Ffn::Gated(act),
                FfnKind::Plain => Ffn::Plain(act),
            },
            frame,
            windows,
            qk_norm: match raw.qk_norm {
                RawQkNorm::None => QkNorm::None,
                RawQkNorm::PerHead => QkNorm::PerHead,
                RawQkNorm::Full => QkNorm::Full,
            },
            moe: raw.moe.as_ref().map(|m| Moe {
                experts: m.experts,
                top_k: m.top_k,
                expert_dim: m.expert_dim,
                shared_dim: m.shared_dim,
                shared_gate: m.shared_gate,
                dense_layers: m.dense_layers,
                layer_freq: m.layer_freq,
                scoring: match m.scoring {
                    RawScoring::Softmax => Scoring::Softmax,
                    RawScoring::Sigmoid => Scoring::Sigmoid,
                },
                score_bias: m.score_bias,
                groups: m.groups.map(|count| Groups {
                    count,
                    top: m.topk_groups.unwrap_or(count),
                    score: match m.group_score {
                        Some(RawGroupScore::Max) => GroupScore::Max,
                        _ => GroupScore::TopTwoSum,
                    },
                }),
            }),
            mla: raw.mla.as_ref().map(|m| Mla {
                q_rank: (m.q_rank > 0).then_some(m.q_rank),
                kv_rank: m.kv_rank,
                rope_dim: m.rope_dim,
                nope_dim: m.nope_dim,
                v_dim: m.v_dim,
            }),
        },
    })
}

/// A TOML or serde error as `line N: key 'k': message`, in the file's vocabulary (keys, not
/// fields). A key missing at the top level has no line to name (serde points at the start).
fn parse_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message();
    if let Some(rest) = msg.strip_prefix("missing field `") {
        let key = rest.split('`').next().unwrap_or(rest);
        let line = crate::error::toml_error_line(text, e);
        return match e.span() {
            Some(span) if span.start > 0 => {
                let prefix = line.split(" missing field").next().unwrap_or("");
                format!("{prefix} missing key '{key}'")
            }
            _ => format!("missing key '{key}'"),
        };
    }
    negative_count(text, e).unwrap_or_else(|| crate::error::toml_error_line(text, e))
}

/// The keys whose least value is 1 (the generator needs at least one layer, head, width,
/// expert, token …); every other whole-number key may be 0. [`check`] refuses a 0 in each.
const AT_LEAST_ONE: [(&str, &str); 16] = [
    ("", "layers"),
    ("", "hidden"),
    ("", "heads"),
    ("", "kv_heads"),
    ("", "head_dim"),
    ("ffn", "dim"),
    ("moe", "experts"),
    ("moe", "top_k"),
    ("moe", "expert_dim"),
    ("moe", "layer_freq"),
    ("mla", "kv_rank"),
    ("mla", "rope_dim"),
    ("mla", "nope_dim"),
    ("mla", "v_dim"),
    ("attention", "window"),
    ("frame", "tokens"),
];

/// serde's "invalid value: integer `-24`, expected u64" for a negative whole number, in the
/// file's terms: `line N: key 'moe.experts': -24: expected a whole number ≥ 1`, naming the
/// key's least value (so that -24 and 0 are refused alike).
fn negative_count(text: &str, e: &toml::de::Error) -> Option<String> {
    let rest = e.message().strip_prefix("invalid value: integer `")?;
    let (value, expected) = rest.split_once("`, expected ")?;
    if !value.starts_with('-') || !matches!(expected.trim(), "u64" | "usize") {
        return None;
    }
    let start = e.span()?.start.min(text.len());
    let span_line = text[..start].matches('\n').count() + 1;
    // The span's line and its table; serde points at the header of an internally tagged
    // table (`[frame]`), whose line with this value is then the key's.
    let mut table = "";
    let mut found = None;
    for (i, l) in text.lines().enumerate() {
        let (n, t) = (i + 1, l.trim());
        if let Some(h) = t.strip_prefix('[') {
            if n > span_line {
                break;
            }
            table = h.split(']').next().unwrap_or("").trim();
            continue;
        }
        let Some((k, v)) = t.split_once('=') else {
            continue;
        };
        let v = v.split('#').next().unwrap_or("").trim();
        if n == span_line || (n > span_line && v == value) {
            found = Some((n, k.trim()));
            break;
        }
    }
    let (line_no, key) = found?;
    let least = u64::from(AT_LEAST_ONE.contains(&(table, key)));
    let path = if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    };
    Some(format!(
        "line {line_no}: key '{path}': {value}: expected a whole number ≥ {least}"
    ))
}

/// The checks serde cannot make; `at(table, key, message)` builds the located error.
fn check(raw: &RawModel, at: &dyn Fn(&str, &str, String) -> ModelError) -> Result<()> {
    if raw.name.is_empty() || raw.name.contains(char::is_whitespace) {
        return Err(at(
            "",
            "name",
            "must be one word (it is used on the command line)".into(),
        ));
    }
    if raw.source.trim().is_empty() {
        return Err(at(
            "",
            "source",
            "must say where the hyper-parameters (and a published count) come from".into(),
        ));
    }
    if raw
        .published_params
        .is_some_and(|p| !(p.is_finite() && p > 0.0))
    {
        return Err(at(
            "",
            "published_params",
            "must be a positive number".into(),
        ));
    }
    let positive = [
        ("", "layers", raw.layers as u64),
        ("", "hidden", raw.hidden),
        ("", "heads", raw.heads),
        ("", "kv_heads", raw.kv_heads),
        ("", "head_dim", raw.head_dim),
        ("ffn", "dim", raw.ffn.dim),
    ];
    for (table, key, v) in positive {
        if v == 0 {
            return Err(at(table, key, "must be ≥ 1".into()));
        }
    }
    // Caps far above any published model, so that sizes stay inside u64 (the generator
    // multiplies two dimensions with the token count) and a typo cannot ask for a billion
    // layers of operators.
    if raw.layers > MAX_LAYERS {
        return Err(at("", "layers", format!("must be ≤ {MAX_LAYERS}")));
    }
    let frame_dims = match &raw.frame {
        Some(RawFrame::Vit {
            tokens,
            patch_elems,
            classes,
        }) => vec![
            ("tokens", *tokens),
            ("patch_elems", *patch_elems),
            ("classes", *classes),
        ],
        Some(RawFrame::Dit {
            tokens,
            patch_elems,
            out_elems,
            freq_dim,
            labels,
        }) => vec![
            ("tokens", *tokens),
            ("patch_elems", *patch_elems),
            ("out_elems", *out_elems),
            ("freq_dim", *freq_dim),
            ("labels", *labels),
        ],
        _ => Vec::new(),
    };
    let dims = positive[1..]
        .iter()
        .copied()
        .chain([("", "vocab", raw.vocab), ("", "positions", raw.positions)])
        .chain(
            raw.attention
                .as_ref()
                .map(|a| ("attention", "window", a.window)),
        )
        .chain(frame_dims.into_iter().map(|(k, v)| ("frame", k, v)));
    for (table, key, v) in dims {
        if v > MAX_DIM {
            return Err(at(table, key, format!("{v} is above the cap {MAX_DIM}")));
        }
    }
    if let Some(m) = &raw.moe {
        check_moe(raw, m, at)?;
    }
    if let Some(m) = &raw.mla {
        check_mla(raw, m, at)?;
    }
    if let Some(d) = &raw.weight_dtype {
        if crate::dtype::Dtype::parse_name(d).is_none() {
            return Err(at(
                "",
                "weight_dtype",
                format!(
                    "\"{d}\": expected one of {}",
                    crate::dtype::Dtype::ALL.map(|d| d.as_str()).join(", ")
                ),
            ));
        }
    }
    if raw.published_active_without_embedding && raw.published_active_params.is_none() {
        return Err(at(
            "",
            "published_active_without_embedding",
            "qualifies published_active_params, which the file does not state".into(),
        ));
    }
    match raw.published_active_params {
        Some(_) if raw.moe.is_none() => {
            return Err(at(
                "",
                "published_active_params",
                "applies to a model with [moe]: a dense model's parameters are all active".into(),
            ))
        }
        Some(_) if raw.published_params.is_none() => {
            return Err(at(
                "",
                "published_active_params",
                "needs published_params, the total it is a part of".into(),
            ))
        }
        Some(a) if !(a.is_finite() && a > 0.0 && raw.published_params.is_some_and(|p| a <= p)) => {
            return Err(at(
                "",
                "published_active_params",
                "must be a positive number no larger than published_params".into(),
            ))
        }
        _ => {}
    }
    if raw.hidden % raw.heads != 0 {
        return Err(at(
            "",
            "heads",
            format!("{} heads do not divide hidden {}", raw.heads, raw.hidden),
        ));
    }
    if raw.heads % raw.kv_heads != 0 {
        return Err(at(
            "",
            "kv_heads",
            format!(
                "{} KV heads do not divide {} query heads",
                raw.kv_heads, raw.heads
            ),
        ));
    }
    if raw.rotary && raw.head_dim % 2 != 0 {
        return Err(at(
            "",
            "head_dim",
            format!("{} is odd: rotary rotates pairs", raw.head_dim),
        ));
    }
    let text_model = matches!(raw.frame, None | Some(RawFrame::DecoderLm | RawFrame::Bert));
    if text_model && raw.vocab == 0 {
        return Err(at("", "vocab", "a text model needs a vocabulary".into()));
    }
    if !text_model && raw.vocab != 0 {
        return Err(at(
            "",
            "vocab",
            "a vision model has no vocabulary: 0".into(),
        ));
    }
    if raw.tied_embeddings && !matches!(raw.frame, None | Some(RawFrame::DecoderLm)) {
        return Err(at(
            "",
            "tied_embeddings",
            "only a decoder-lm frame has an LM head to tie".into(),
        ));
    }
    if let Some(RawFrame::Vit { tokens: 0, .. } | RawFrame::Dit { tokens: 0, .. }) = raw.frame {
        return Err(at("frame", "tokens", "must be ≥ 1".into()));
    }
    if let Some(a) = &raw.attention {
        if a.window == 0 {
            return Err(at("attention", "window", "must be ≥ 1 token".into()));
        }
        if !a.pattern.contains(&Span::Local) {
            return Err(at(
                "attention",
                "pattern",
                "names no \"local\" layer: drop [attention] for global attention everywhere".into(),
            ));
        }
        if matches!(raw.frame, Some(RawFrame::Dit { .. } | RawFrame::Vit { .. })) {
            return Err(at(
                "attention",
                "window",
                "a sliding window applies to the KV cache of a text model".into(),
            ));
        }
    }
    Ok(())
}

/// The `[moe]` table's own rules.
fn check_moe(
    raw: &RawModel,
    m: &RawMoe,
    at: &dyn Fn(&str, &str, String) -> ModelError,
) -> Result<()> {
    for (key, v) in [
        ("experts", m.experts),
        ("top_k", m.top_k),
        ("expert_dim", m.expert_dim),
    ] {
        if v == 0 {
            return Err(at("moe", key, "must be ≥ 1".into()));
        }
        if v > MAX_DIM {
            return Err(at("moe", key, format!("{v} is above the cap {MAX_DIM}")));
        }
    }
    if m.experts > 4096 {
        return Err(at(
            "moe",
            "experts",
            format!("{} is above the cap 4096", m.experts),
        ));
    }
    if m.shared_dim > MAX_DIM {
        return Err(at(
            "moe",
            "shared_dim",
            format!("{} is above the cap {MAX_DIM}", m.shared_dim),
        ));
    }
    if m.top_k > m.experts {
        return Err(at(
            "moe",
            "top_k",
            format!("{} is more than the {} experts", m.top_k, m.experts),
        ));
    }
    if m.shared_gate && m.shared_dim == 0 {
        return Err(at(
            "moe",
            "shared_gate",
            "gates no shared expert: set shared_dim".into(),
        ));
    }
    if !matches!(raw.frame, None | Some(RawFrame::DecoderLm)) {
        return Err(at(
            "moe",
            "experts",
            "experts apply to a decoder-lm frame".into(),
        ));
    }
    if m.layer_freq == 0 {
        return Err(at("moe", "layer_freq", "must be ≥ 1".into()));
    }
    if m.dense_layers >= raw.layers {
        return Err(at(
            "moe",
            "dense_layers",
            format!(
                "{} dense layers leave none of the {} layers for the experts",
                m.dense_layers, raw.layers
            ),
        ));
    }
    check_groups(m, at)
}

/// `[moe] groups`, `topk_groups` and `group_score`: all three or none.
fn check_groups(m: &RawMoe, at: &dyn Fn(&str, &str, String) -> ModelError) -> Result<()> {
    let Some(groups) = m.groups else {
        for (key, set) in [
            ("topk_groups", m.topk_groups.is_some()),
            ("group_score", m.group_score.is_some()),
        ] {
            if set {
                return Err(at(
                    "moe",
                    key,
                    "applies with groups, which is not set".into(),
                ));
            }
        }
        return Ok(());
    };
    if groups == 0 || m.experts % groups != 0 {
        return Err(at(
            "moe",
            "groups",
            format!("{groups} groups do not divide the {} experts", m.experts),
        ));
    }
    let Some(top) = m.topk_groups else {
        return Err(at(
            "moe",
            "groups",
            "needs topk_groups, the groups each token keeps".into(),
        ));
    };
    if top == 0 || top > groups {
        return Err(at(
            "moe",
            "topk_groups",
            format!("{top}: expected 1 to the {groups} groups"),
        ));
    }
    let per_group = m.experts / groups;
    if m.top_k > top * per_group {
        return Err(at(
            "moe",
            "top_k",
            format!(
                "{} experts cannot be picked from {top} groups of {per_group}",
                m.top_k
            ),
        ));
    }
    match m.group_score {
        None => Err(at(
            "moe",
            "groups",
            "needs group_score (\"top2-sum\" or \"max\")".into(),
        )),
        Some(RawGroupScore::Top2Sum) if per_group < 2 => Err(at(
            "moe",
            "group_score",
            format!("\"top2-sum\" needs two experts per group, a group has {per_group}"),
        )),
        Some(_) => Ok(()),
    }
}

/// The `[mla]` table's own rules: the top-level head keys must agree with it.
fn check_mla(
    raw: &RawModel,
    m: &RawMla,
    at: &dyn Fn(&str, &str, String) -> ModelError,
) -> Result<()> {
    for (key, v) in [
        ("q_rank", m.q_rank),
        ("kv_rank", m.kv_rank),
        ("rope_dim", m.rope_dim),
        ("nope_dim", m.nope_dim),
        ("v_dim", m.v_dim),
    ] {
        if v == 0 && key != "q_rank" {
            return Err(at("mla", key, "must be ≥ 1".into()));
        }
        if v > MAX_DIM {
            return Err(at("mla", key, format!("{v} is above the cap {MAX_DIM}")));
        }
    }
    if !raw.rotary {
        return Err(at(
            "",
            "rotary",
            "[mla] has a RoPE part (rope_dim): rotary must be true".into(),
        ));
    }
    if m.rope_dim % 2 != 0 {
        return Err(at(
            "mla",
            "rope_dim",
            format!("{} is odd: rotary rotates pairs", m.rope_dim),
        ));
    }
    if raw.head_dim != m.nope_dim + m.rope_dim {
        return Err(at(
            "",
            "head_dim",
            format!(
                "{} is not [mla] nope_dim + rope_dim = {} (a query head's width)",
                raw.head_dim,
                m.nope_dim + m.rope_dim
            ),
        ));
    }
    if raw.kv_heads != raw.heads {
        return Err(at(
            "",
            "kv_heads",
            format!(
                "{} is not heads = {}: with [mla] every query head has its key and value \
                 (expanded from one latent)",
                raw.kv_heads, raw.heads
            ),
        ));
    }
    if raw.qk_norm != RawQkNorm::None || raw.attention.is_some() || raw.bias.qkv() {
        return Err(at(
            "mla",
            "kv_rank",
            "latent attention is modelled without qk_norm, a sliding window or biases".into(),
        ));
    }
    Ok(())
}

/// `line N: key 'table.key': msg`, the line found by scanning the text for the key inside its
/// table (`table` empty: the top level); without the line when the key is not written.
fn locate(text: &str, table: &str, key: &str, msg: &str) -> String {
    let path = if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    };
    let mut current = "";
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(header) = t.strip_prefix('[') {
            current = header.split(']').next().unwrap_or("").trim();
            continue;
        }
        let written = t
            .split('=')
            .next()
            .map(str::trim)
            .is_some_and(|k| k == key && t.contains('='));
        if current == table && written {
            return format!("line {}: key '{path}': {msg}", i + 1);
        }
    }
    format!("key '{path}': {msg}")
}

#[cfg(test)]
mod tests {
    use super::parse;

    const LLAMA: &str = include_str!("../../zoo/llama2-7b.toml");

    fn error(text: &str) -> String {
        parse("m.toml", text).unwrap_err().to_string()
    }

    /// The 1-based line of `text` that starts with `prefix`.
    fn line_of(text: &str, prefix: &str) -> usize {
        1 + text.lines().position(|l| l.starts_with(prefix)).unwrap()
    }

    /// The example without its lines that start with `prefix`.
    fn without(prefix: &str) -> String {
        LLAMA
            .lines()
            .filter(|l| !l.starts_with(prefix))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    #[test]
    fn an_unknown_key_names_its_line() {
        let text = LLAMA.replacen("rotary =", "rotray =", 1);
        let line = line_of(&text, "rotray");
        let e = error(&text);
        let want = format!("m.toml: line {line}: key 'rotray': unknown field");
        assert!(e.starts_with(&want), "{e}");
    }

    #[test]
    fn a_wrong_type_names_its_line_and_key() {
        let text = LLAMA.replacen("hidden = 4096", "hidden = \"4096\"", 1);
        let line = line_of(&text, "hidden");
        let e = error(&text);
        let want = format!("m.toml: line {line}: key 'hidden': invalid type");
        assert!(e.starts_with(&want), "{e}");
    }

    #[test]
    fn a_count_may_be_written_as_an_integer() {
        let text = LLAMA.replacen("6.738e9", "6_738_415_616", 1);
        let m = parse("m.toml", &text).unwrap();
        assert_eq!(m.published_params, Some(6_738_415_616.0));
    }

    #[test]
    fn a_published_count_is_optional_but_an_active_count_needs_it() {
        let text = without("published_params");
        let m = parse("m.toml", &text).unwrap();
        assert_eq!(m.published_params, None);
        assert!(
            m.count_mismatches().unwrap().is_empty(),
            "nothing to differ from"
        );
        let mixtral = include_str!("../../zoo/mixtral-8x7b.toml");
        let text: String = mixtral
            .lines()
            .filter(|l| !l.starts_with("published_params"))
            .map(|l| format!("{l}\n"))
            .collect();
        let line = line_of(&text, "published_active_params");
        assert_eq!(
            error(&text),
            format!(
                "m.toml: line {line}: key 'published_active_params': needs published_params, \
                 the total it is a part of"
            )
        );
    }

    #[test]
    fn a_missing_key_is_named() {
        let text = without("vocab");
        assert_eq!(error(&text), "m.toml: missing key 'vocab'");
        let text = without("dim");
        let ffn = 1 + text.lines().position(|l| l == "[ffn]").unwrap();
        assert_eq!(
            error(&text),
            format!("m.toml: line {ffn}: missing key 'dim'")
        );
    }

    #[test]
    fn heads_that_do_not_divide_the_width_are_refused_at_their_line() {
        let text = LLAMA.replacen("heads = 32", "heads = 30", 1);
        let line = line_of(&text, "heads");
        assert_eq!(
            error(&text),
            format!("m.toml: line {line}: key 'heads': 30 heads do not divide hidden 4096")
        );
        let text = LLAMA.replacen("kv_heads = 32", "kv_heads = 5", 1);
        assert!(error(&text).contains("key 'kv_heads': 5 KV heads do not divide 32"));
        let text = LLAMA.replacen("vocab = 32000", "vocab = 100000000000", 1);
        assert!(error(&text).contains("key 'vocab': 100000000000 is above the cap 16777216"));
    }

    #[test]
    fn a_negative_number_names_the_key_s_least_value_as_zero_does() {
        // Every key whose least value is 1, at 0 and at -3: both refused naming 1.
        let moe = include_str!("../../zoo/mixtral-8x7b.toml");
        let deepseek = include_str!("../../zoo/deepseek-v3.toml");
        let window = format!("{LLAMA}\n[attention]\nwindow = 4096\npattern = [\"local\"]\n");
        let vit = include_str!("../../zoo/vit-h-14.toml");
        for &(table, key) in &super::AT_LEAST_ONE {
            let base = match table {
                "mla" => deepseek,
                "moe" if key == "layer_freq" => deepseek,
                "moe" => moe,
                "attention" => window.as_str(),
                "frame" => vit,
                _ => LLAMA,
            };
            let path = if table.is_empty() {
                key.to_string()
            } else {
                format!("{table}.{key}")
            };
            let at = |v: &str| {
                let mut in_table = table.is_empty();
                let text: String = base
                    .lines()
                    .map(|l| {
                        if let Some(h) = l.strip_prefix('[') {
                            in_table = h.split(']').next() == Some(table);
                        }
                        let k = l.split('=').next().unwrap_or("").trim();
                        if in_table && k == key && l.contains('=') {
                            format!("{key} = {v}\n")
                        } else {
                            format!("{l}\n")
                        }
                    })
                    .collect();
                assert_ne!(text, base, "{path}");
                error(&text)
            };
            let zero = at("0");
            assert!(
                zero.contains(&format!("key '{path}': must be ≥ 1")),
                "{zero}"
            );
            let negative = at("-3");
            assert!(
                negative.contains(&format!("key '{path}': -3: expected a whole number ≥ 1")),
                "{negative}"
            );
        }
        // A key that may be 0 names 0.
        let text = LLAMA.replacen("positions = 0", "positions = -2", 1);
        let line = line_of(&text, "positions");
        assert_eq!(
            error(&text),
            format!("m.toml: line {line}: key 'positions': -2: expected a whole number ≥ 0")
        );
    }

    #[test]
    fn a_key_of_a_table_is_named_with_its_table() {
        let text = format!("{LLAMA}\n[attention]\nwindow = 0\npattern = [\"local\"]\n");
        let line = line_of(&text, "window");
        assert_eq!(
            error(&text),
            format!("m.toml: line {line}: key 'attention.window': must be ≥ 1 token")
        );
        let text = LLAMA.replacen("kind = \"gated\"", "kind = \"gate\"", 1);
        assert!(error(&text).contains("key 'kind': unknown variant `gate`"));
    }
}
