//! DeepSeek-V2/V3 and Kimi K2 from their held-out config.json files (model/tests/fixtures/hf):
//! parameter, active and KV-cache counts computed by hand from the configs, latent attention's
//! two forms, the dense layers before the MoE ones, and the one-line refusals of bad configs.

use super::hf_config::{fixture, read};
use elk_model::dtype::Dtype;
use elk_model::graph::{Graph, Mode};
use elk_model::zoo::{self, hf, ExpertTokens, ZooModel, ZooParams};
use serde_json::{json, Value};

/// The fixture of `dir` with `edits` applied (`null` is transformers' None, `"-"` removes the
/// key), read as `config.json`; the error's text.
fn refused(dir: &str, edits: Value) -> String {
    let (_, text) = fixture(dir);
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for (k, x) in edits.as_object().unwrap() {
        if x == "-" {
            v.as_object_mut().unwrap().remove(k);
        } else {
            v[k] = x.clone();
        }
    }
    hf::read("config.json", &v.to_string())
        .unwrap_err()
        .to_string()
}

/// DeepSeek-V3 by hand, from its config.json (hidden 7168, 128 heads, q_lora_rank 1536,
/// kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128, vocab 129280, 61 layers of which the first
/// 3 are dense with intermediate_size 18432, then 58 MoE layers of 256 experts of 2048, top-8,
/// 1 shared expert, noaux_tc):
/// - embedding and LM head: 2 · 129280 · 7168 = 1,853,358,080;
/// - attention per layer: q_a 7168·1536 = 11,010,048, its norm 1,536, q_b 1536·128·192 =
///   37,748,736, kv_a 7168·576 = 4,128,768, its norm 512, kv_b 512·128·(128 + 128) =
///   16,777,216, o 128·128·7168 = 117,440,512: 187,107,328; the two norms 14,336;
/// - a dense layer: + 3 · 7168 · 18432 = 396,361,728 → 583,483,392, × 3 = 1,750,450,176;
/// - an MoE layer: router 7168·256 = 1,835,008, the score bias 256, 257 experts (256 routed +
///   1 shared) of 3 · 7168 · 2048 = 44,040,192 → 11,320,164,608 + 187,121,664 =
///   11,507,286,272, × 58 = 667,422,603,776;
/// - the final norm 7,168.
///
/// In all 671,026,419,200. Active per token: 9 experts in place of 257 in each MoE layer,
/// 187,121,664 + 1,835,008 + 256 + 9 · 44,040,192 = 585,318,656, × 58 = 33,948,482,048, plus
/// the embeddings, the dense layers and the final norm: 37,552,297,472 (36,625,618,432 without
/// the input embedding, DeepSeek's convention for its "37 B activated").
/// KV cache per token: 61 layers · (512 + 64) elements · 2 bytes (fp16) = 70,272 bytes.
const V3: (u64, u64, u64) = (671_026_419_200, 37_552_297_472, 61 * 576 * 2);

#[test]
fn deepseek_v3_has_the_counts_computed_by_hand() {
    let m = read("DeepSeek-V3").model;
    assert_eq!(m.parameter_counts().unwrap(), (V3.0, V3.1));
    // The KV cache of a decode step: B · S · 70,272 bytes at fp16.
    let mut p = ZooParams::new(Mode::Decode, 3, 100);
    p.dtypes = elk_model::dtype::Dtypes::default();
    let g = m.build(&p).unwrap();
    assert_eq!(g.totals().kv_bytes.0, 3 * 100 * V3.2);
    // Within the published counts: 671 B in all, 37 B activated without the input embedding.
    let zoo = zoo::find("deepseek-v3").unwrap();
    assert_eq!(zoo.parameter_counts().unwrap(), (V3.0, V3.1));
    assert!(zoo.count_mismatches().unwrap().is_empty());
    assert!((V3.0 as f64 / 671e9 - 1.0).abs() < 0.001);
    assert!((V3.1 as f64 - 129_280.0 * 7168.0) / 37e9 - 1.0 < 0.01);
}

#[test]
fn the_other_held_out_configs_have_their_counts() {
    // Computed as for V3 above (see the fixtures' README):
    // DeepSeek-V2: hidden 5120, 128 heads, 60 layers (1 dense of 12288), 160 experts of 1536,
    //   top-6, 2 shared: 235,741,434,880 in all (236 B published), 21,375,800,320 active (21 B).
    // DeepSeek-V2-Lite: hidden 2048, 16 heads with a full-rank query, 27 layers (1 dense of
    //   10944), 64 experts of 1408, top-6, 2 shared: 15,706,484,224 (15.7 B), 2,661,150,208
    //   active (2.45 B without the input embedding; 2.4 B published).
    // Kimi K2: hidden 7168, 64 heads, 61 layers (1 dense of 18432), 384 experts of 2048, top-8,
    //   1 shared: 1,026,408,232,448 in all (1.04 T published: 1.3 % more, which the config
    //   does not account for), 32,861,500,928 active (31.69 B without the input embedding;
    //   32 B published).
    for (dir, total, active, layers) in [
        ("DeepSeek-V2", 235_741_434_880u64, 21_375_800_320u64, 60),
        ("DeepSeek-V2-Lite", 15_706_484_224, 2_661_150_208, 27),
        ("Kimi-K2-Instruct", 1_026_408_232_448, 32_861_500_928, 61),
    ] {
        let m = read(dir).model;
        assert_eq!(m.parameter_counts().unwrap(), (total, active), "{dir}");
        let mut p = ZooParams::new(Mode::Decode, 2, 10);
        p.dtypes = elk_model::dtype::Dtypes::default();
        let kv = m.build(&p).unwrap().totals().kv_bytes.0;
        assert_eq!(kv, 2 * 10 * layers * 576 * 2, "{dir}");
    }
    let lite = zoo::find("deepseek-v2-lite").unwrap();
    assert_eq!(
        lite.parameter_counts().unwrap(),
        (15_706_484_224, 2_661_150_208)
    );
    assert!(lite.count_mismatches().unwrap().is_empty());
}

#[test]
fn each_zoo_twin_builds_the_same_graph_as_its_config() {
    for (dir, name) in [
        ("DeepSeek-V3", "deepseek-v3"),
        ("DeepSeek-V2-Lite", "deepseek-v2-lite"),
    ] {
        let from_json = read(dir).model;
        let twin = zoo::find(name).unwrap();
        assert_eq!(from_json.default_dtypes(), twin.default_dtypes(), "{dir}");
        for (mode, batch, seq) in [(Mode::Decode, 4, 512), (Mode::Prefill, 1, 16)] {
            let mut p = ZooParams::new(mode, batch, seq);
            p.dtypes = twin.default_dtypes();
            let (a, b): (Graph, Graph) = (from_json.build(&p).unwrap(), twin.build(&p).unwrap());
            assert!(a.ops == b.ops, "{dir}: the operators differ");
            assert_eq!(a.layers, b.layers, "{dir}");
        }
    }
}

#[test]
fn decode_absorbs_and_prefill_expands_with_the_same_parameters() {
    let m = zoo::find("deepseek-v2-lite").unwrap();
    let build = |mode| {
        // The dense first layer alone: every parameter of it is in both graphs.
        let mut p = ZooParams::new(mode, 2, 64);
        p.layers = Some(1);
        m.build(&p).unwrap()
    };
    let (decode, prefill) = (build(Mode::Decode), build(Mode::Prefill));
    assert!(decode.name.ends_with("mla:absorbed"), "{}", decode.name);
    assert!(prefill.name.ends_with("mla:expanded"), "{}", prefill.name);
    let has = |g: &Graph, name: &str| g.ops.iter().any(|o| o.name == name);
    assert!(has(&decode, "l0.attn.absorb_uk") && has(&decode, "l0.attn.absorb_uv"));
    assert!(!has(&decode, "l0.attn.k_nope"));
    assert!(has(&prefill, "l0.attn.k_nope") && !has(&prefill, "l0.attn.absorb_uk"));
    assert_eq!(decode.totals().parameters, prefill.totals().parameters);
    // One shared latent head: the scores read 512 + 64 cached elements per token, for every
    // one of the 16 heads (no per-head keys or values in the cache).
    let scores = decode
        .ops
        .iter()
        .find(|o| o.name == "l0.attn.qk_latent")
        .unwrap();
    assert_eq!(scores.dims, vec![2, 1, 16, 64, 512]);
    assert_eq!(decode.totals().kv_bytes.0, 2 * 64 * 576 * 2);
}

#[test]
fn the_dense_layers_are_the_prologue_and_routing_is_per_moe_layer() {
    let m = zoo::find("deepseek-v3").unwrap();
    let p = ZooParams::new(Mode::Decode, 1, 16);
    let g = m.build(&p).unwrap();
    assert_eq!(g.layers.layers, 58);
    let first = g.layers.layer_range(0).unwrap();
    assert_eq!(g.ops[first.start].name, "l3.attn.norm.sq");
    assert!(g.ops[..g.layers.prologue]
        .iter()
        .any(|o| o.name == "l2.ffn.down"));
    assert_eq!(g.layers.total(), g.ops.len());
    // A routing has one entry per MoE layer: 58, not 61.
    assert_eq!(m.moe_layers(&p).unwrap(), 58);
    let one = |layers| {
        let mut t = vec![vec![0; 256]; layers];
        for l in &mut t {
            l[..8].fill(1);
        }
        ExpertTokens::new(t)
    };
    let routed = m.build_routed(&p, Some(&one(58))).unwrap();
    let top_k_layers: Vec<usize> = routed.ops.iter().filter_map(|o| o.top_k()).collect();
    assert_eq!(top_k_layers, (0..58).collect::<Vec<_>>());
    let e = m.build_routed(&p, Some(&one(61))).unwrap_err().to_string();
    assert_eq!(
        e,
        "the routing has 61 layers, deepseek-v3 has 58 MoE layers"
    );
    // Two layers are both dense: the graph builds, a routing has nothing to route.
    let mut two = p;
    two.layers = Some(2);
    let g = m.build(&two).unwrap();
    assert_eq!((g.layers.layers, g.layers.total()), (2, g.ops.len()));
    assert!(!zoo::has_experts(&g));
    let e = m.moe_layers(&two).unwrap_err().to_string();
    assert!(
        e.contains("deepseek-v3 with 2 layers has no MoE layer: its first 3 layers are dense"),
        "{e}"
    );
}

#[test]
fn fp8_checkpoints_default_to_fp8_weights_and_mtp_is_a_note() {
    let v3 = read("DeepSeek-V3");
    assert_eq!(v3.model.default_dtypes().weights, Dtype::Fp8);
    assert_eq!(v3.model.default_dtypes().kv, Dtype::Fp16);
    assert!(v3.model_file.contains("weight_dtype = \"fp8\""));
    assert_eq!(v3.warnings.len(), 1, "{:?}", v3.warnings);
    assert!(v3.warnings[0]
        .contains("ignoring the multi-token-prediction module (num_nextn_predict_layers = 1)"));
    let v2 = read("DeepSeek-V2");
    assert!(v2.warnings.is_empty(), "{:?}", v2.warnings);
    assert_eq!(
        v2.model.default_dtypes(),
        elk_model::dtype::Dtypes::default()
    );
    // The fp8 graph's weights take one byte each.
    let mut p = ZooParams::new(Mode::Decode, 1, 8);
    p.layers = Some(1);
    p.dtypes = v3.model.default_dtypes();
    let t = v3.model.build(&p).unwrap().totals();
    assert_eq!(t.weight_bytes.0, t.parameters);
    let e = refused(
        "DeepSeek-V3",
        json!({"quantization_config": {"quant_method": "awq"}}),
    );
    assert!(
        e.starts_with("config.json: key 'quantization_config': quant_method \"awq\""),
        "{e}"
    );
}

#[test]
fn a_bad_config_is_refused_naming_the_key() {
    for (edits, want) in [
        (
            json!({"qk_rope_head_dim": "-"}),
            "config.json: key 'kv_lora_rank': 512 needs qk_rope_head_dim, the RoPE key cached \
             beside the latent (missing or null)",
        ),
        (
            json!({"topk_group": 9}),
            "config.json: key 'topk_group': 9 is above the 8 groups (n_group)",
        ),
        (
            json!({"n_group": 7}),
            "config.json: key 'n_group': 7 groups do not divide the 256 experts \
             (n_routed_experts)",
        ),
        (
            json!({"first_k_dense_replace": 61}),
            "config.json: key 'first_k_dense_replace': 61: leaves none of the 61 layers \
             (num_hidden_layers) for the experts",
        ),
        (
            json!({"num_key_value_heads": 8}),
            "config.json: key 'num_key_value_heads': 8: latent attention expands the latent \
             into every query head's key and value (128, num_attention_heads)",
        ),
        (
            json!({"topk_method": "top2"}),
            "config.json: key 'topk_method': \"top2\": elk-opt models greedy, \
             group_limited_greedy and noaux_tc",
        ),
        (
            json!({"scoring_func": "relu"}),
            "config.json: key 'scoring_func': \"relu\": elk-opt models softmax and sigmoid",
        ),
        (
            json!({"kv_lora_rank": 0}),
            "config.json: key 'kv_lora_rank': 0: expected a whole number ≥ 1",
        ),
    ] {
        assert_eq!(refused("DeepSeek-V3", edits.clone()), want, "{edits}");
    }
}

#[test]
fn a_model_file_s_mla_table_must_agree_with_its_heads() {
    let text = zoo::FILES
        .iter()
        .find(|(f, _)| *f == "deepseek-v2-lite.toml")
        .unwrap()
        .1;
    let e = |from: &str, to: &str| {
        let t = text.replacen(from, to, 1);
        assert_ne!(t, text, "{from}");
        ZooModel::from_toml_str("m.toml", &t)
            .unwrap_err()
            .to_string()
    };
    assert!(e("head_dim = 192", "head_dim = 128")
        .contains("key 'head_dim': 128 is not [mla] nope_dim + rope_dim = 192"));
    assert!(e("kv_heads = 16", "kv_heads = 8").contains("key 'kv_heads': 8 is not heads = 16"));
    assert!(e("dense_layers = 1", "dense_layers = 27").contains(
        "key 'moe.dense_layers': 27 dense layers leave none of the 27 layers for the experts"
    ));
    assert!(e("rope_dim = 64", "rope_dim = 63").contains("key 'mla.rope_dim': 63 is odd"));
    assert!(e(
        "dense_layers = 1",
        "dense_layers = 1\ngroups = 3\ntopk_groups = 1\ngroup_score = \"max\""
    )
    .contains("key 'moe.groups': 3 groups do not divide the 64 experts"));
}

/// `--layers` counts the graph's repeated layers, which on DeepSeek are the MoE layers (the
/// dense ones are in the prologue): a cut's name says which of the model's layers it took,
/// and only when they differ from the numbers given.
#[test]
fn a_cut_by_layers_names_the_models_layers_it_took() {
    use elk_model::build::{build_instance, InstanceOptions, OpRange};
    let chip = elk_model::chip::ChipSpec::preset("ipu-pod4").unwrap();
    let name = |model: &str, layers: usize, range: std::ops::Range<usize>| {
        let mut params = ZooParams::new(Mode::Decode, 1, 64);
        params.layers = Some(layers);
        let g = zoo::find(model).unwrap().build(&params).unwrap();
        let opts = InstanceOptions {
            range: OpRange::Layers(range),
            ..InstanceOptions::default()
        };
        build_instance(&g, &chip, &opts).unwrap().name
    };
    // V2-Lite: layer 0 is dense, so the graph's layers 0..2 are the model's 1..3.
    let lite = name("deepseek-v2-lite", 4, 0..2);
    assert!(
        lite.ends_with(", layers 0..2 (the model's layers 1..3)"),
        "{lite}"
    );
    // A model without dense layers first: the numbers are the model's, nothing added.
    let dense = name("llama2-7b", 4, 1..3);
    assert!(dense.ends_with(", layers 1..3"), "{dense}");
}
