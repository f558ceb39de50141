//! `--dtype`: bytes follow each tensor's dtype, the IPU model refuses what it does not price,
//! the roofline scales compute by its speedup keys.

use elk_model::build::{build_instance, InstanceOptions};
use elk_model::chip::{ChipSpec, CostModelSpec};
use elk_model::dtype::Dtypes;
use elk_model::graph::Mode;
use elk_model::zoo::{self, ZooParams};

fn llama7b(d: &str) -> elk_model::graph::Graph {
    let mut p = ZooParams::new(Mode::Decode, 1, 2048);
    p.dtypes = Dtypes::parse(d).unwrap();
    zoo::build("llama2-7b", &p).unwrap()
}

/// Σ hbm_cycles as bytes.
fn hbm_bytes(g: &elk_model::graph::Graph, chip: &ChipSpec) -> f64 {
    let inst = build_instance(g, chip, &InstanceOptions::default()).unwrap();
    let cycles: f64 = inst.ops.iter().map(|o| o.hbm_cycles.0).sum();
    cycles / chip.clock_hz * chip.hbm.bandwidth_bytes_per_s
}

#[test]
fn int8_weights_halve_the_weight_bytes_and_keep_the_kv_cache() {
    let chip = ChipSpec::preset("sn40l-like").unwrap();
    let (fp16, w8) = (llama7b("fp16"), llama7b("w8a16"));
    let params = fp16.totals().parameters as f64;
    assert!((params - 6.738e9).abs() / 6.738e9 < 0.01);
    assert_eq!(
        w8.totals().weight_bytes.0 as f64,
        params,
        "1 byte per parameter"
    );
    assert_eq!(w8.totals().kv_bytes, fp16.totals().kv_bytes);
    let (a, b) = (hbm_bytes(&fp16, &chip), hbm_bytes(&w8, &chip));
    // fp16: 2 B per parameter + KV; w8a16: 1 B per parameter + the same KV (tiles round up
    // a little).
    let kv = fp16.totals().kv_bytes.0 as f64;
    assert!((a - (2.0 * params + kv)).abs() / a < 0.02, "{a}");
    assert!((b - (params + kv)).abs() / b < 0.02, "{b}");
    assert!((a - b - params).abs() / params < 0.02, "{a} {b}");
    assert!(w8.name.ends_with("w8a16"), "{}", w8.name);
}

#[test]
fn the_ipu_model_refuses_int8_in_one_line() {
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let mut p = ZooParams::new(Mode::Decode, 1, 64);
    p.layers = Some(1);
    p.dtypes = Dtypes::parse("int8").unwrap();
    let g = zoo::build("llama2-7b", &p).unwrap();
    let e = build_instance(&g, &chip, &InstanceOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "ipu-mk2 cost model on ipu-pod4: dtype int8 not modelled (fp16, fp32)"
    );
    p.dtypes = Dtypes::parse("fp32").unwrap();
    let g = zoo::build("llama2-7b", &p).unwrap();
    assert!(build_instance(&g, &chip, &InstanceOptions::default()).is_ok());
}

#[test]
fn the_roofline_speedup_key_divides_compute() {
    let mut chip = ChipSpec::preset("tt-blackhole-like").unwrap();
    let mut p = ZooParams::new(Mode::Prefill, 1, 256);
    p.layers = Some(1);
    p.dtypes = Dtypes::parse("fp8").unwrap();
    let g = zoo::build("llama2-7b", &p).unwrap();
    // The QKV projection on one core, one iteration: the same plan priced twice.
    let op = g.ops.iter().find(|o| o.name.ends_with("attn.qkv")).unwrap();
    let shape = elk_model::plan::OpShape::of(op, g.plan_rules);
    let ones = vec![1; shape.dims.len()];
    let t = vec![vec![1; shape.tensors.len()]; shape.dims.len()];
    let geometry = elk_model::plan::Geometry::new(&shape, &ones, &t, chip.cores);
    let comp = |chip: &ChipSpec| {
        let model = elk_model::cost::for_chip_with(chip, &g.dtypes).unwrap();
        model.cost(&shape, &geometry).comp
    };
    let base = comp(&chip);
    if let CostModelSpec::Roofline { fp8_speedup_x, .. } = &mut chip.cost_model {
        *fp8_speedup_x = 2.0;
    }
    let fast = comp(&chip);
    assert!(
        base > 0.0 && (base / fast - 2.0).abs() < 1e-9,
        "{base} {fast}"
    );
}

/// Block floats (Tenstorrent's bfp8, bfp4: 16 elements share an 8-bit exponent) are exact
/// sixteenths of a byte: a 4096 × 4096 bfp8 weight is 4096² · 17/16 bytes, a bfp4 one
/// 4096² · 9/16, and a model's weight bytes are its parameters · 17/16.
#[test]
fn block_float_weights_take_exact_sixteenths_of_a_byte() {
    let build = |d: &str| {
        let mut p = ZooParams::new(Mode::Decode, 1, 2048);
        p.dtypes = Dtypes::parse(d).unwrap();
        zoo::build("llama3-8b", &p).unwrap()
    };
    let wo = |g: &elk_model::graph::Graph| {
        let t = g
            .ops
            .iter()
            .flat_map(|o| o.inputs())
            .find(|t| t.source.ends_with(".wo"))
            .unwrap()
            .clone();
        assert_eq!(t.elements(), 4096 * 4096);
        t.bytes().0
    };
    let (bf16, bfp8, bfp4) = (
        build("bf16"),
        build("w=bfp8,kv=bf16,a=bf16"),
        build("w=bfp4,kv=bf16,a=bf16"),
    );
    assert_eq!(wo(&bf16), 33_554_432);
    assert_eq!(wo(&bfp8), 17_825_792);
    assert_eq!(wo(&bfp4), 9_437_184);
    let params = bf16.totals().parameters;
    assert_eq!(params, 8_030_261_248);
    assert_eq!(bfp8.totals().parameters, params);
    assert_eq!(bfp8.totals().weight_bytes.0, params / 16 * 17);
    assert_eq!(bfp4.totals().weight_bytes.0, params / 16 * 9);
    // The KV cache and the activations keep bf16's bytes.
    assert_eq!(bfp8.totals().kv_bytes, bf16.totals().kv_bytes);
    let out = |g: &elk_model::graph::Graph| g.ops.iter().map(|o| o.output().bytes().0).sum::<u64>();
    assert_eq!(out(&bfp8), out(&bf16));
    assert!(
        bfp8.name.ends_with("w=bfp8,kv=bf16,a=bf16"),
        "{}",
        bfp8.name
    );
    // A bfp8 KV cache beside bf16 weights: the other way round.
    let kv8 = build("w=bf16,kv=bfp8,a=bf16");
    assert_eq!(kv8.totals().weight_bytes, bf16.totals().weight_bytes);
    assert_eq!(kv8.totals().kv_bytes.0, bf16.totals().kv_bytes.0 / 32 * 17);
}

/// A decode step at batch 1 is almost all weight traffic: bfp8 weights move 17/32 of fp16's
/// weight bytes through HBM (the plans' tiles round up a little), the KV cache the same.
#[test]
fn bfp8_weights_cut_the_weight_traffic_to_seventeen_thirty_seconds() {
    let chip = ChipSpec::preset("sn40l-like").unwrap();
    let (fp16, bfp8) = (llama7b("fp16"), llama7b("w=bfp8,kv=fp16,a=fp16"));
    let params = fp16.totals().parameters as f64;
    let kv = fp16.totals().kv_bytes.0 as f64;
    assert_eq!(bfp8.totals().weight_bytes.0 as f64, params * 17.0 / 16.0);
    let b = hbm_bytes(&bfp8, &chip);
    assert!((b - (params * 17.0 / 16.0 + kv)).abs() / b < 0.02, "{b}");
    let a = hbm_bytes(&fp16, &chip);
    assert!(
        ((a - b) - params * 15.0 / 16.0).abs() / params < 0.02,
        "{a} {b}"
    );
}

#[test]
fn the_ipu_model_refuses_block_floats_in_one_line() {
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let mut p = ZooParams::new(Mode::Decode, 1, 64);
    p.layers = Some(1);
    for (d, name) in [
        ("w=bfp8,kv=fp16,a=fp16", "bfp8"),
        ("w=fp16,kv=bfp4,a=fp16", "bfp4"),
    ] {
        p.dtypes = Dtypes::parse(d).unwrap();
        let g = zoo::build("llama2-7b", &p).unwrap();
        let e = build_instance(&g, &chip, &InstanceOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("ipu-mk2 cost model on ipu-pod4: dtype {name} not modelled (fp16, fp32)")
        );
    }
}

/// A graph file keeps whole sizes as the integers it always held (`"dtype_bytes":2`) and
/// writes a block float's as its decimal (`1.0625`); both read back to the same graph.
#[test]
fn graph_files_keep_integer_sizes_and_write_fractions_as_decimals() {
    let mut p = ZooParams::new(Mode::Decode, 1, 64);
    p.layers = Some(1);
    for (d, has, lacks) in [
        ("fp16", "\"dtype_bytes\":2,", "\"dtype_bytes\":2.0"),
        (
            "w=bfp8,kv=bf16,a=bf16",
            "\"dtype_bytes\":1.0625,",
            "\"dtype_bytes\":1,",
        ),
        (
            "w=bfp4,kv=bfp8,a=fp16",
            "\"dtype_bytes\":0.5625,",
            "\"dtype_bytes\":0,",
        ),
    ] {
        p.dtypes = Dtypes::parse(d).unwrap();
        let g = zoo::build("llama2-7b", &p).unwrap();
        let json = serde_json::to_string(&g).unwrap();
        assert!(json.contains(has) && !json.contains(lacks), "{d}");
        let back: elk_model::graph::Graph = serde_json::from_str(&json).unwrap();
        assert_eq!(back.ops, g.ops, "{d}");
        assert_eq!(back.dtypes, g.dtypes, "{d}");
    }
}
