//! Multi-head latent attention (DeepSeek-V2/V3, Kimi K2; docs/model-files.md, `[mla]`).
//!
//! The keys and values of every head come from one compressed latent per token: the KV cache
//! holds that latent (`kv_rank`) and one shared RoPE key (`rope_dim`), 576 elements per token
//! and layer for DeepSeek-V3 instead of 2 · 128 heads · 128.
//!
//! The same parameters build two graphs:
//! - **expanded** (prefill, training, forward-batch): `kv_b_proj` expands the latent into every
//!   head's key (`nope_dim`) and value (`v_dim`), and attention runs per head as in the
//!   reference implementation;
//! - **absorbed** (decode, as real decode kernels such as FlashMLA run it): `kv_b_proj`'s key
//!   half W_UK is absorbed into the query (a batched matmul per head, `q_nope · W_UK`), so every
//!   head attends over the one shared latent head of the cache (scores over `kv_rank +
//!   rope_dim`, the PV product over `kv_rank`), and the value half W_UV is applied per head
//!   afterwards, before `o_proj`.
//!
//! `kv_b_proj` is two weights in both forms, `{p}.wkv_b.uk` ([heads, nope_dim, kv_rank]) and
//! `{p}.wkv_b.uv` ([heads, kv_rank, v_dim]), so the parameter count is the same whatever the
//! mode. The graph's name says which form it built (`mla:absorbed`, `mla:expanded`).

use super::builder::{Act, Builder, In};
use super::transformer::{norm, rotary, slice_cols, softmax, Norm, Run};
use crate::graph::{OpKind, Role};

/// The latent attention's widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mla {
    /// The query's low rank (`q_lora_rank`, with an RMSNorm on it); `None`: a full-rank query
    /// projection (DeepSeek-V2-Lite).
    pub q_rank: Option<u64>,
    /// The KV latent (`kv_lora_rank`).
    pub kv_rank: u64,
    /// The RoPE part of each query and the shared RoPE key (`qk_rope_head_dim`).
    pub rope_dim: u64,
    /// The part of each head's query and key without position (`qk_nope_head_dim`).
    pub nope_dim: u64,
    /// Each head's value (`v_head_dim`).
    pub v_dim: u64,
}

impl Mla {
    /// KV-cache elements per token and layer: the latent and the shared RoPE key.
    pub fn cache_width(&self) -> u64 {
        self.kv_rank + self.rope_dim
    }

    /// The form a run builds: absorbed in decode, expanded otherwise.
    pub fn form(decode: bool) -> &'static str {
        if decode {
            "mla:absorbed"
        } else {
            "mla:expanded"
        }
    }
}

/// The attention block of layer `l` on the normalised input `x` ([m, hidden]) with `heads`
/// query heads, returning `o_proj`'s output ([m, hidden]).
pub(super) fn attention(
    b: &mut Builder,
    mla: &Mla,
    heads: u64,
    l: usize,
    x: &Act,
    run: &Run,
) -> Act {
    let p = format!("l{l}.attn");
    let (h, dn, dr) = (heads, mla.nope_dim, mla.rope_dim);
    let hidden = x.shape[1];
    let q = match mla.q_rank {
        Some(r) => {
            let qa = b.linear(&format!("{p}.q_a"), x, r, &format!("{p}.wq_a"), false);
            let qa = norm(
                b,
                Norm::Rms,
                &format!("{p}.q_a_norm"),
                &qa,
                &format!("{p}.q_a_norm"),
            );
            b.linear(
                &format!("{p}.q_b"),
                &qa,
                h * (dn + dr),
                &format!("{p}.wq_b"),
                false,
            )
        }
        None => b.linear(
            &format!("{p}.q"),
            x,
            h * (dn + dr),
            &format!("{p}.wq"),
            false,
        ),
    };
    let q_nope = slice_cols(b, &format!("{p}.q_nope"), &q, h * dn);
    let q_pe = slice_cols(b, &format!("{p}.q_pe"), &q, h * dr);
    let q_pe = rotary(b, &format!("{p}.q_rope"), &q_pe);
    // kv_a_proj_with_mqa: the latent and the shared RoPE key of each new token (in decode,
    // what is appended to the cache).
    let kva = b.linear(
        &format!("{p}.kv_a"),
        x,
        mla.cache_width(),
        &format!("{p}.wkv_a"),
        false,
    );
    let latent = slice_cols(b, &format!("{p}.latent"), &kva, mla.kv_rank);
    let latent = norm(
        b,
        Norm::Rms,
        &format!("{p}.kv_a_norm"),
        &latent,
        &format!("{p}.kv_a_norm"),
    );
    let k_pe = slice_cols(b, &format!("{p}.k_pe"), &kva, dr);
    let k_pe = rotary(b, &format!("{p}.k_rope"), &k_pe);
    let ctx = if run.decode {
        absorbed(b, mla, h, &p, &q_nope, &q_pe, run)
    } else {
        expanded(b, mla, h, &p, (&q_nope, &q_pe), (&latent, &k_pe), run)
    };
    b.linear(&format!("{p}.o"), &ctx, hidden, &format!("{p}.wo"), false)
}

/// Decode: every head's query absorbed into the latent, attention over the one latent head of
/// the cache, W_UV per head. Returns the context `[batch, heads · v_dim]`.
fn absorbed(
    b: &mut Builder,
    mla: &Mla,
    h: u64,
    p: &str,
    q_nope: &Act,
    q_pe: &Act,
    run: &Run,
) -> Act {
    let (bt, s, c, dn, dr, dv) = (
        run.batch,
        run.kv,
        mla.kv_rank,
        mla.nope_dim,
        mla.rope_dim,
        mla.v_dim,
    );
    // q_nope [bt, h·dn] → per head h: [bt, dn] · W_UK[h] [dn, c] → [bt, c].
    let q_lat = b.op(
        &format!("{p}.absorb_uk"),
        OpKind::BatchMatMul,
        "BatchMatMul",
        &[1, h, bt, c, dn],
        &[0, 1, 2, 3],
        vec![
            In::act(&q_nope.view(&[1, h, bt, dn]), &[0, 1, 2, 4]),
            In::named(
                &format!("{p}.wkv_b.uk"),
                Role::Weight,
                &[1, 4, 3],
                &[h, dn, c],
            ),
        ],
    );
    // One latent KV head: the latent cache [bt, s, c] and the RoPE-key cache [bt, s, dr],
    // kv_rank + rope_dim elements per token.
    let latent_cache = |axes: &[usize]| {
        In::named(
            &format!("{p}.latent_cache"),
            Role::KvCache,
            axes,
            &[bt, 1, s, c],
        )
    };
    let nope = b.op(
        &format!("{p}.qk_latent"),
        OpKind::BatchMatMul,
        "BatchMatMul",
        &[bt, 1, h, s, c],
        &[0, 1, 2, 3],
        vec![
            In::act(&q_lat.view(&[bt, 1, h, c]), &[0, 1, 2, 4]),
            latent_cache(&[0, 1, 3, 4]),
        ],
    );
    let rope = b.op(
        &format!("{p}.qk_rope"),
        OpKind::BatchMatMul,
        "BatchMatMul",
        &[bt, 1, h, s, dr],
        &[0, 1, 2, 3],
        vec![
            In::act(&q_pe.view(&[bt, 1, h, dr]), &[0, 1, 2, 4]),
            In::named(
                &format!("{p}.k_pe_cache"),
                Role::KvCache,
                &[0, 1, 3, 4],
                &[bt, 1, s, dr],
            ),
        ],
    );
    let scores = b.binary(&format!("{p}.qk"), "Add", &nope, &rope);
    let sc = b.unary(&format!("{p}.scale"), "Divide", &scores);
    let pr = softmax(b, p, &sc);
    // P · latent: [bt, h, s] · [bt, s, c] → [bt, h, c].
    let ctx = b.op(
        &format!("{p}.pv_latent"),
        OpKind::BatchMatMul,
        "BatchMatMul",
        &[bt, 1, h, c, s],
        &[0, 1, 2, 3],
        vec![In::act(&pr, &[0, 1, 2, 4]), latent_cache(&[0, 1, 4, 3])],
    );
    // Per head h: [bt, c] · W_UV[h] [c, dv] → [bt, dv].
    let out = b.op(
        &format!("{p}.absorb_uv"),
        OpKind::BatchMatMul,
        "BatchMatMul",
        &[1, h, bt, dv, c],
        &[0, 1, 2, 3],
        vec![
            In::act(&ctx.view(&[1, h, bt, c]), &[0, 1, 2, 4]),
            In::named(
                &format!("{p}.wkv_b.uv"),
                Role::Weight,
                &[1, 4, 3],
                &[h, c, dv],
            ),
        ],
    );
    out.view(&[bt, h * dv])
}

/// Prefill and training: the latent expanded into every head's key and value, attention per
/// head (the RoPE key shared by the heads). Returns the context `[m, heads · v_dim]`.
fn expanded(
    b: &mut Builder,
    mla: &Mla,
    h: u64,
    p: &str,
    (q_nope, q_pe): (&Act, &Act),
    (latent, k_pe): (&Act, &Act),
    run: &Run,
) -> Act {
    let (bt, q, s, c, dn, dr, dv) = (
        run.batch,
        run.q,
        run.kv,
        mla.kv_rank,
        mla.nope_dim,
        mla.rope_dim,
        mla.v_dim,
    );
    let m = bt * q;
    // kv_b_proj: the latent [m, c] times W_UK [c, h·dn] and W_UV [c, h·dv].
    let expand = |b: &mut Builder, name: &str, w: &str, width: u64| {
        b.op(
            &format!("{p}.{name}"),
            OpKind::MatMul,
            "Dot",
            &[m, h, width, c],
            &[0, 1, 2],
            vec![
                In::act(latent, &[0, 3]),
                In::named(
                    &format!("{p}.{w}"),
                    Role::Weight,
                    &[1, 3, 2],
                    &[h, c, width],
                ),
            ],
        )
    };
    let k_nope = expand(b, "k_nope", "wkv_b.uk", dn);
    let v = expand(b, "v", "wkv_b.uv", dv);
    let nope = b.op(
        &format!("{p}.qk_nope"),
        OpKind::BatchMatMul,
        "BatchMatMul",
        &[bt, h, q, s, dn],
        &[0, 1, 2, 3],
        vec![
            In::act(&q_nope.view(&[bt, h, q, dn]), &[0, 1, 2, 4]),
            In::act(&k_nope.view(&[bt, h, dn, s]), &[0, 1, 4, 3]),
        ],
    );
    let rope = b.op(
        &format!("{p}.qk_rope"),
        OpKind::BatchMatMul,
        "BatchMatMul",
        &[bt, 1, h * q, s, dr],
        &[0, 1, 2, 3],
        vec![
            In::act(&q_pe.view(&[bt, 1, h * q, dr]), &[0, 1, 2, 4]),
            In::act(&k_pe.view(&[bt, 1, dr, s]), &[0, 1, 4, 3]),
        ],
    );
    let scores = b.binary(&format!("{p}.qk"), "Add", &nope, &rope.view(&[bt, h, q, s]));
    let sc = b.unary(&format!("{p}.scale"), "Divide", &scores);
    let pr = softmax(b, p, &sc);
    let ctx = b.op(
        &format!("{p}.pv"),
        OpKind::BatchMatMul,
        "BatchMatMul",
        &[bt, h, q, dv, s],
        &[0, 1, 2, 3],
        vec![
            In::act(&pr, &[0, 1, 2, 4]),
            In::act(&v.view(&[bt, h, s, dv]), &[0, 1, 4, 3]),
        ],
    );
    ctx.view(&[m, h * dv])
}
