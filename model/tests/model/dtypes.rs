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
