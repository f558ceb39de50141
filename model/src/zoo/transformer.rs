//! One generator for every transformer of the zoo: decoder LMs (Llama, OPT, Gemma), encoders
//! (BERT), and vision transformers (ViT, DiT). Operators follow the reference graphs' style:
//! norms as their elementwise/reduce steps, softmax as four steps, biases as separate Adds.

use super::builder::{Act, Builder, In};
use super::mla::{self, Mla};
use super::moe::{ffn, moe_block, ExpertTokens, Moe};
use crate::dtype::Dtypes;
use crate::graph::{OpKind, Role};

/// How a normalisation is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Norm {
    /// RMSNorm with a scale vector.
    Rms,
    /// LayerNorm with scale and bias.
    Layer,
    /// LayerNorm without parameters (DiT, modulated by adaLN).
    LayerNoAffine,
}

/// The feed-forward block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ffn {
    /// `down(act(gate(x)) * up(x))`; the activation op type (`Sigmoid` for SiLU, `Gelu`).
    Gated(&'static str),
    /// `down(act(up(x)))` with the activation op type.
    Plain(&'static str),
}

/// Whether queries and keys are normalised (RMSNorm) before rotary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QkNorm {
    /// No norm (Llama, Mistral, Qwen2, Mixtral).
    None,
    /// Over each head's `head_dim` values, one scale vector of `head_dim` (Qwen3).
    PerHead,
    /// Over all heads' values of a token, one scale vector of the projection's width (OLMoE).
    Full,
}

/// Which linear layers carry a bias vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bias {
    /// No linear layer has a bias (Llama, Mistral, Phi-3).
    None,
    /// Only the fused QKV projection (Qwen2).
    Qkv,
    /// Every linear layer (OPT, BERT, ViT, DiT).
    All,
}

impl Bias {
    fn qkv(self) -> bool {
        self != Bias::None
    }

    fn all(self) -> bool {
        self == Bias::All
    }
}

/// Where the token stream comes from and what closes the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Token ids → embedding gather; LM head over the vocabulary (tied or not).
    DecoderLm {
        /// The LM head reuses the embedding table.
        tied: bool,
    },
    /// BERT: word, position and token-type gathers; a tanh pooler.
    Bert,
    /// ViT: patch embedding, CLS token, position embedding; a classifier on the CLS token.
    Vit {
        /// Patch pixels × channels.
        patch_elems: u64,
        /// Classes.
        classes: u64,
    },
    /// DiT: latent patches, timestep MLP and label embedding, adaLN-Zero blocks.
    Dit {
        /// Patch elements in (patch² × latent channels).
        patch_elems: u64,
        /// Output elements per patch (patch² × out channels).
        out_elems: u64,
        /// Sinusoidal timestep features.
        freq_dim: u64,
        /// Label classes (+1 for the null class).
        labels: u64,
    },
}

/// Hyper-parameters of one transformer.
#[derive(Clone, Debug)]
pub struct Transformer {
    /// Residual width.
    pub hidden: u64,
    /// Layers.
    pub layers: usize,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads (GQA when fewer than `heads`).
    pub kv_heads: u64,
    /// Head dimension.
    pub head_dim: u64,
    /// Feed-forward width.
    pub ffn_dim: u64,
    /// Vocabulary (0 for vision models).
    pub vocab: u64,
    /// Learned position embeddings (rows), 0 when positions are rotary or fixed.
    pub positions: u64,
    /// Norm kind.
    pub norm: Norm,
    /// Norm before (pre-LN) or after (post-LN, BERT) each block.
    pub pre_norm: bool,
    /// Extra norms after attention and FFN (Gemma 2).
    pub sandwich_norm: bool,
    /// Which linear layers have biases.
    pub bias: Bias,
    /// Rotary position embedding on q and k.
    pub rotary: bool,
    /// Feed-forward kind.
    pub ffn: Ffn,
    /// Input and output framing.
    pub frame: Frame,
    /// The MoE block that replaces the FFN of its layers (`None`: a dense model).
    pub moe: Option<Moe>,
    /// Multi-head latent attention in place of the (grouped-query) attention; `kv_heads` and
    /// `head_dim` then describe the heads before absorption (heads, nope + rope).
    pub mla: Option<Mla>,
    /// RMSNorm on the queries and keys before rotary (Qwen3: per head; OLMoE: whole width).
    pub qk_norm: QkNorm,
    /// The attention pattern, repeated over the layers: `None` attends to every token,
    /// `Some(w)` to the last `w` only (sliding window). Empty: every layer global.
    pub windows: Vec<Option<u64>>,
}

/// Shape of one run: batch, query tokens per sequence, attended tokens, decode or not, and
/// the tokens each expert receives (MoE models).
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    /// Batch.
    pub batch: u64,
    /// Tokens processed per sequence (1 in decode).
    pub q: u64,
    /// Tokens attended over (KV length in decode).
    pub kv: u64,
    /// Attention reads K and V from the HBM cache.
    pub decode: bool,
    /// Tokens per routed expert and layer; `None`: the balanced routing of the run's tokens.
    pub experts: Option<&'a ExpertTokens>,
    /// Gated FFNs as separate gate and up matmuls ([`super::ZooParams::separate_gate_up`]).
    pub separate_gate_up: bool,
}

/// Appends `norm(x)`; `w` prefixes the weight names.
pub(super) fn norm(b: &mut Builder, kind: Norm, name: &str, x: &Act, w: &str) -> Act {
    let centred = if kind == Norm::Rms {
        x.clone()
    } else {
        let s = b.reduce_last(&format!("{name}.sum"), OpKind::Reduce, "Sum", x);
        let mean = b.unary(&format!("{name}.mean"), "Divide", &s);
        b.with_rows(
            &format!("{name}.centre"),
            OpKind::Elementwise,
            "Subtract",
            x,
            &mean,
        )
    };
    let sq = b.binary(&format!("{name}.sq"), "Multiply", &centred, &centred);
    let s = b.reduce_last(&format!("{name}.sqsum"), OpKind::Reduce, "Sum", &sq);
    let var = b.unary(&format!("{name}.var"), "Divide", &s);
    let eps = b.unary(&format!("{name}.eps"), "Add", &var);
    let sd = b.unary(&format!("{name}.sqrt"), "Sqrt", &eps);
    let y = b.with_rows(
        &format!("{name}.div"),
        OpKind::Elementwise,
        "Divide",
        &centred,
        &sd,
    );
    match kind {
        Norm::LayerNoAffine => y,
        Norm::Rms => b.with_vector(&format!("{name}.scale"), "Multiply", &y, &format!("{w}.g")),
        Norm::Layer => {
            let g = b.with_vector(&format!("{name}.scale"), "Multiply", &y, &format!("{w}.g"));
            b.with_vector(&format!("{name}.shift"), "Add", &g, &format!("{w}.b"))
        }
    }
}

/// The softmax of the scaled scores `sc` over their last axis, in four steps (max, exp, sum,
/// divide) as in the reference graphs; `p` prefixes the names.
pub(super) fn softmax(b: &mut Builder, p: &str, sc: &Act) -> Act {
    let step = |b: &mut Builder, name: &str, x: &Act, rows: Option<&Act>| {
        let name = format!("{p}.softmax.{name}");
        match rows {
            Some(r) => b.with_rows(&name, OpKind::Softmax, "SoftmaxBasic", x, r),
            None => b.reduce_last(&name, OpKind::Softmax, "SoftmaxBasic", x),
        }
    };
    let mx = step(b, "max", sc, None);
    let ex = step(b, "exp", sc, Some(&mx));
    let sm = step(b, "sum", &ex, None);
    step(b, "div", &ex, Some(&sm))
}

/// Rotary embedding of `x` ([m, heads·d]): rotate-half slice, two products, a sum.
pub(super) fn rotary(b: &mut Builder, name: &str, x: &Act) -> Act {
    let rot = {
        let r: Vec<usize> = (0..x.shape.len()).collect();
        b.op(
            &format!("{name}.rot"),
            OpKind::Slice,
            "Slice",
            &x.shape,
            &r,
            vec![In::act(x, &r)],
        )
    };
    let (m, n) = (x.shape[0], x.shape[1]);
    let table = |src: &str| In::named(src, Role::Activation, &[0, 1], &[m, n]);
    let cos = {
        let ins = vec![In::act(x, &[0, 1]), table("rope.cos")];
        b.op(
            &format!("{name}.cos"),
            OpKind::Elementwise,
            "Multiply",
            &[m, n],
            &[0, 1],
            ins,
        )
    };
    let sin = {
        let ins = vec![In::act(&rot, &[0, 1]), table("rope.sin")];
        b.op(
            &format!("{name}.sin"),
            OpKind::Elementwise,
            "Multiply",
            &[m, n],
            &[0, 1],
            ins,
        )
    };
    b.binary(&format!("{name}.add"), "Add", &cos, &sin)
}

impl Transformer {
    /// Appends the attention block of layer `l` on normalised input `x` ([m, hidden]).
    fn attention(&self, b: &mut Builder, l: usize, x: &Act, run: &Run, mask: bool) -> Act {
        if let Some(m) = &self.mla {
            return mla::attention(b, m, self.heads, l, x, run);
        }
        let p = format!("l{l}.attn");
        let (bt, hk, d) = (run.batch, self.kv_heads, self.head_dim);
        let g = self.heads / self.kv_heads * run.q;
        // One fused QKV projection, then slices — as in the reference graphs.
        let widths = [self.heads * d, hk * d, hk * d];
        let qkv_w: u64 = widths.iter().sum();
        let qkv = b.linear(
            &format!("{p}.qkv"),
            x,
            qkv_w,
            &format!("{p}.wqkv"),
            self.bias.qkv(),
        );
        let mut q = slice_cols(b, &format!("{p}.q"), &qkv, widths[0]);
        let mut k = slice_cols(b, &format!("{p}.k"), &qkv, widths[1]);
        let v = slice_cols(b, &format!("{p}.v"), &qkv, widths[2]);
        if self.qk_norm != QkNorm::None {
            q = self.qk_norm_of(b, &format!("{p}.q_norm"), &q);
            k = self.qk_norm_of(b, &format!("{p}.k_norm"), &k);
        }
        if self.rotary {
            q = rotary(b, &format!("{p}.q_rope"), &q);
            k = rotary(b, &format!("{p}.k_rope"), &k);
        }
        // A sliding-window layer keeps only the last `w` tokens in its (rolling) KV cache.
        // Prefill and training compute full score matrices, as for causal masking: the
        // builder models no banded attention.
        let s = match self.windows.get(l % self.windows.len().max(1)) {
            Some(Some(w)) if run.decode => run.kv.min(*w),
            _ => run.kv,
        };
        let (k_in, v_in) = if run.decode {
            (
                In::named(
                    &format!("{p}.k_cache"),
                    Role::KvCache,
                    &[0, 1, 4, 3],
                    &[bt, hk, d, s],
                ),
                In::named(
                    &format!("{p}.v_cache"),
                    Role::KvCache,
                    &[0, 1, 4, 3],
                    &[bt, hk, s, d],
                ),
            )
        } else {
            (
                In::act(&k.view(&[bt, hk, d, s]), &[0, 1, 4, 3]),
                In::act(&v.view(&[bt, hk, s, d]), &[0, 1, 4, 3]),
            )
        };
        let qv = q.view(&[bt, hk, g, d]);
        let scores = b.op(
            &format!("{p}.qk"),
            OpKind::BatchMatMul,
            "BatchMatMul",
            &[bt, hk, g, s, d],
            &[0, 1, 2, 3],
            vec![In::act(&qv, &[0, 1, 2, 4]), k_in],
        );
        let mut sc = b.unary(&format!("{p}.scale"), "Divide", &scores);
        if mask {
            let ins = vec![
                In::act(&sc, &[0, 1, 2, 3]),
                In::named("attention_mask", Role::Activation, &[0, 3], &[bt, s]),
            ];
            sc = b.op(
                &format!("{p}.mask"),
                OpKind::Elementwise,
                "Add",
                &sc.shape.clone(),
                &[0, 1, 2, 3],
                ins,
            );
        }
        let pr = softmax(b, &p, &sc);
        let ctx = b.op(
            &format!("{p}.pv"),
            OpKind::BatchMatMul,
            "BatchMatMul",
            &[bt, hk, g, d, s],
            &[0, 1, 2, 3],
            vec![In::act(&pr, &[0, 1, 2, 4]), v_in],
        );
        let m = x.shape[0];
        let ctx2 = ctx.view(&[m, self.heads * d]);
        b.linear(
            &format!("{p}.o"),
            &ctx2,
            self.hidden,
            &format!("{p}.wo"),
            self.bias.all(),
        )
    }

    /// RMSNorm of the queries or keys `x` ([m, heads·d]), its scale vector `{name}.g`.
    fn qk_norm_of(&self, b: &mut Builder, name: &str, x: &Act) -> Act {
        let (m, width) = (x.shape[0], x.shape[1]);
        let d = self.head_dim;
        let rows = match self.qk_norm {
            QkNorm::PerHead => x.view(&[m * (width / d), d]),
            _ => x.clone(),
        };
        let y = norm(b, Norm::Rms, name, &rows, name);
        y.view(&[m, width])
    }

    fn ffn(&self, b: &mut Builder, l: usize, x: &Act, run: &Run) -> Act {
        let p = format!("l{l}.ffn");
        match self.moe.as_ref().and_then(|m| Some((m, m.moe_index(l)?))) {
            Some((moe, index)) => {
                let balanced;
                let tokens = match run.experts {
                    Some(t) => t.layer(index),
                    None => {
                        balanced = ExpertTokens::balanced(moe, 1, x.shape[0]);
                        balanced.layer(0)
                    }
                };
                moe_block(b, moe, self.ffn, (l, index), x, tokens)
            }
            None => {
                let model_weights = b.weights_as(b.dtypes().ffn);
                let y = ffn(b, self.ffn, &p, &p, x, self.ffn_dim, self.bias.all());
                b.weights_as(Some(model_weights));
                y
            }
        }
    }

    /// One residual block: `x + f(norm(x))` (pre-norm) or `norm(x + f(x))` (post-norm),
    /// with Gemma's extra norm on `f`'s output and DiT's modulation hooks.
    fn block(
        &self,
        b: &mut Builder,
        l: usize,
        name: &str,
        x: &Act,
        f: &mut dyn FnMut(&mut Builder, &Act) -> Act,
    ) -> Act {
        let w = format!("l{l}.{name}_norm");
        if self.pre_norm {
            let h = norm(b, self.norm, &format!("l{l}.{name}.norm"), x, &w);
            let mut y = f(b, &h);
            if self.sandwich_norm {
                y = norm(
                    b,
                    self.norm,
                    &format!("l{l}.{name}.post_norm"),
                    &y,
                    &format!("{w}_post"),
                );
            }
            b.binary(&format!("l{l}.{name}.residual"), "Add", x, &y)
        } else {
            let y = f(b, x);
            let r = b.binary(&format!("l{l}.{name}.residual"), "Add", x, &y);
            norm(b, self.norm, &format!("l{l}.{name}.norm"), &r, &w)
        }
    }

    /// Token (+ learned position, + token type) embeddings of `m` tokens.
    fn embed_tokens(&self, b: &mut Builder, m: u64, with_types: bool) -> Act {
        let h = self.hidden;
        let mut x = gather(b, "embed.tokens", m, h, self.vocab);
        if self.positions > 0 {
            let p = gather(b, "embed.positions", m, h, self.positions);
            x = b.binary("embed.add_pos", "Add", &x, &p);
        }
        if with_types {
            let t = gather(b, "embed.token_types", m, h, 2);
            x = b.binary("embed.add_type", "Add", &x, &t);
        }
        x
    }

    /// The whole chain; returns the operators, the prologue (the frame's operators, and the
    /// dense layers before a model's MoE layers), (ops per layer, repeated layers) and the
    /// operators after the prologue up to the epilogue. The repeated layers are `None` when
    /// they differ in operator count (an MoE routing that gives layers different numbers of
    /// experts with tokens, dense layers among MoE ones, every layer dense under `--num-layers`
    /// of a model whose MoE layers come later).
    pub fn build(
        &self,
        run: &Run,
        dtypes: Dtypes,
    ) -> (Builder, usize, Option<(usize, usize)>, usize) {
        let mut b = Builder::new(dtypes);
        b.separate_gate_up = run.separate_gate_up;
        let m = run.batch * run.q;
        let h = self.hidden;
        let mut cond = None;
        let mut x = match self.frame {
            Frame::DecoderLm { .. } => self.embed_tokens(&mut b, m, false),
            Frame::Bert => {
                let s = self.embed_tokens(&mut b, m, true);
                norm(&mut b, Norm::Layer, "embed.norm", &s, "embed.norm")
            }
            Frame::Vit { patch_elems, .. } => {
                let patches = Act {
                    source: "pixels".into(),
                    shape: vec![m, patch_elems],
                };
                let e = graph_input_linear(&mut b, "patch_embed", &patches, h);
                let c = b.with_vector("embed.cls", "Add", &e, "embed.cls_token");
                let ins = vec![
                    In::act(&c, &[0, 1]),
                    In::named(
                        "embed.positions",
                        Role::Weight,
                        &[0, 1],
                        &[m / run.batch, h],
                    ),
                ];
                b.op(
                    "embed.add_pos",
                    OpKind::Elementwise,
                    "Add",
                    &[m, h],
                    &[0, 1],
                    ins,
                )
            }
            Frame::Dit {
                patch_elems,
                freq_dim,
                labels,
                ..
            } => {
                let patches = Act {
                    source: "latent".into(),
                    shape: vec![m, patch_elems],
                };
                let e = graph_input_linear(&mut b, "patch_embed", &patches, h);
                let ins = vec![
                    In::act(&e, &[0, 1]),
                    In::named(
                        "embed.positions",
                        Role::Weight,
                        &[0, 1],
                        &[m / run.batch, h],
                    ),
                ];
                let x = b.op(
                    "embed.add_pos",
                    OpKind::Elementwise,
                    "Add",
                    &[m, h],
                    &[0, 1],
                    ins,
                );
                let t_in = Act {
                    source: "timestep_freqs".into(),
                    shape: vec![run.batch, freq_dim],
                };
                let t1 = graph_input_linear(&mut b, "t_embed.fc1", &t_in, h);
                let t1 = b.unary("t_embed.act", "Sigmoid", &t1);
                let t2 = b.linear("t_embed.fc2", &t1, h, "t_embed.fc2.w", true);
                let y = gather(&mut b, "y_embed.table", run.batch, h, labels);
                let c = b.binary("cond.add", "Add", &t2, &y);
                cond = Some(b.unary("cond.silu", "Sigmoid", &c));
                x
            }
        };
        let start = b.ops.len();
        let mut sizes = Vec::with_capacity(self.layers);
        for l in 0..self.layers {
            let before = b.ops.len();
            x = self.layer(&mut b, l, &x, run, cond.as_ref());
            sizes.push(b.ops.len() - before);
        }
        let layer_ops = b.ops.len() - start;
        // Dense layers before the MoE ones (DeepSeek's first_k_dense_replace) join the
        // prologue, so that the MoE layers are the repeated block.
        let dense = match &self.moe {
            Some(m)
                if m.dense_layers < self.layers
                    && (m.dense_layers..self.layers).all(|l| m.is_moe_layer(l)) =>
            {
                m.dense_layers
            }
            _ => 0,
        };
        let prologue = start + sizes[..dense].iter().sum::<usize>();
        let repeated = &sizes[dense..];
        let per_layer = match repeated {
            [] => None,
            [first, rest @ ..] => rest
                .iter()
                .all(|n| n == first)
                .then_some((*first, repeated.len())),
        };
        let layer_ops = layer_ops - (prologue - start);
        self.epilogue(&mut b, &x, run, cond.as_ref());
        (b, prologue, per_layer, layer_ops)
    }

    fn layer(&self, b: &mut Builder, l: usize, x: &Act, run: &Run, cond: Option<&Act>) -> Act {
        let mask = matches!(self.frame, Frame::Bert);
        if let Some(c) = cond {
            return self.dit_layer(b, l, x, run, c);
        }
        let x = self.block(b, l, "attn", x, &mut |b, h| {
            self.attention(b, l, h, run, mask)
        });
        self.block(b, l, "ffn", &x, &mut |b, h| self.ffn(b, l, h, run))
    }

    /// DiT block with adaLN-Zero: shift/scale/gate from the condition, six vectors per block.
    fn dit_layer(&self, b: &mut Builder, l: usize, x: &Act, run: &Run, c: &Act) -> Act {
        let h = self.hidden;
        let ada = b.linear(
            &format!("l{l}.adaln"),
            c,
            6 * h,
            &format!("l{l}.adaln.w"),
            true,
        );
        let mut x = x.clone();
        for part in ["attn", "ffn"] {
            let n = norm(b, Norm::LayerNoAffine, &format!("l{l}.{part}.norm"), &x, "");
            let n = modulate(b, &format!("l{l}.{part}.mod"), &n, &ada);
            let y = if part == "attn" {
                self.attention(b, l, &n, run, false)
            } else {
                self.ffn(b, l, &n, run)
            };
            let g = b.with_cond(&format!("l{l}.{part}.gate"), "Multiply", &y, &ada);
            x = b.binary(&format!("l{l}.{part}.residual"), "Add", &x, &g);
        }
        x
    }

    fn epilogue(&self, b: &mut Builder, x: &Act, run: &Run, cond: Option<&Act>) {
        let h = self.hidden;
        match self.frame {
            Frame::DecoderLm { tied } => {
                let n = norm(b, self.norm, "final_norm", x, "final_norm");
                let head = if tied { "embed.tokens" } else { "lm_head.w" };
                lm_head(b, &n, self.vocab, head);
            }
            Frame::Bert => {
                let cls = first_token(b, x, run);
                let p = b.linear("pooler", &cls, h, "pooler.w", true);
                b.unary("pooler.act", "Tanh", &p);
            }
            Frame::Vit { classes, .. } => {
                let n = norm(b, Norm::Layer, "final_norm", x, "final_norm");
                let cls = first_token(b, &n, run);
                b.linear("head", &cls, classes, "head.w", true);
            }
            Frame::Dit { out_elems, .. } => {
                if let Some(c) = cond {
                    let ada = b.linear("final.adaln", c, 2 * h, "final.adaln.w", true);
                    let n = norm(b, Norm::LayerNoAffine, "final.norm", x, "");
                    let s = modulate(b, "final.mod", &n, &ada);
                    b.linear("final.linear", &s, out_elems, "final.linear.w", true);
                }
            }
        }
    }
}

/// adaLN modulation `x · scale + shift` with both vectors taken from the condition `ada`.
fn modulate(b: &mut Builder, name: &str, x: &Act, ada: &Act) -> Act {
    let scaled = b.with_cond(&format!("{name}.scale"), "Multiply", x, ada);
    b.with_cond(&format!("{name}.shift"), "Add", &scaled, ada)
}

/// An embedding lookup: `rows` rows of the `[table_rows, h]` weight `table`, indexed by the
/// graph input `{table}.ids`.
fn gather(b: &mut Builder, table: &str, rows: u64, h: u64, table_rows: u64) -> Act {
    b.op(
        &format!("{table}.gather"),
        OpKind::Gather,
        "GatherV2",
        &[rows, h, table_rows],
        &[0, 1],
        vec![
            In::named(table, Role::Weight, &[2, 1], &[table_rows, h]),
            In::named(&format!("{table}.ids"), Role::Activation, &[0], &[rows]),
        ],
    )
}

/// Columns `[.., width)` of a `[m, n]` activation, as a Slice operator reading only them.
pub(super) fn slice_cols(b: &mut Builder, name: &str, x: &Act, width: u64) -> Act {
    let m = x.shape[0];
    b.op(
        name,
        OpKind::Slice,
        "Slice",
        &[m, width],
        &[0, 1],
        vec![In::act(x, &[0, 1])],
    )
}

/// A linear layer with bias on a graph input (patches, timestep features).
fn graph_input_linear(b: &mut Builder, name: &str, x: &Act, n: u64) -> Act {
    let (m, k) = (x.shape[0], x.shape[1]);
    let ins = vec![
        In::named(&x.source, Role::Activation, &[0, 2], &[m, k]),
        In::named(&format!("{name}.w"), Role::Weight, &[2, 1], &[k, n]),
    ];
    let y = b.op(name, OpKind::MatMul, "Dot", &[m, n, k], &[0, 1], ins);
    b.with_vector(&format!("{name}.bias"), "Add", &y, &format!("{name}.w.b"))
}

/// The LM head: logits of the last token of each sequence.
fn lm_head(b: &mut Builder, x: &Act, vocab: u64, weight: &str) -> Act {
    let (m, h) = (x.shape[0], x.shape[1]);
    let ins = vec![
        In::act(x, &[0, 2]),
        In::named(weight, Role::Weight, &[1, 2], &[vocab, h]),
    ];
    b.op(
        "lm_head",
        OpKind::MatMul,
        "Dot",
        &[m, vocab, h],
        &[0, 1],
        ins,
    )
}

/// The first token of every sequence (`[batch, h]`), as a slice.
fn first_token(b: &mut Builder, x: &Act, run: &Run) -> Act {
    let (m, h) = (x.shape[0], x.shape[1]);
    let xv = x.view(&[run.batch, m / run.batch, h]);
    b.op(
        "cls_token",
        OpKind::Slice,
        "Slice",
        &[run.batch, h, m / run.batch],
        &[0, 1],
        vec![In::act(&xv, &[0, 2, 1])],
    )
}
