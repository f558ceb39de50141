//! `--mode training`: the step's FLOPs against 6·N·tokens, its gradient MatMuls, its Adam
//! state, and `forward-batch` as the old forward-only graph.

use elk_model::graph::{Graph, Mode, OpKind, Role};
use elk_model::zoo::{self, AdamState, ZooParams};

/// N: the parameters a token is multiplied by — every weight but the embedding tables read
/// only by gathers (a lookup does no multiply-adds), counted over the forward pass (the
/// update reads every parameter). A tied table is also the LM head's weight, so it counts.
fn multiplied_params(g: &Graph) -> u64 {
    let mut multiplied = std::collections::BTreeMap::new();
    for op in g.ops.iter().filter(|o| o.op_type != "Adam") {
        for t in op.inputs().iter().filter(|t| t.role == Role::Weight) {
            let by_matmul = op.kind != OpKind::Gather;
            let e = multiplied
                .entry(t.source.as_str())
                .or_insert((t.elements(), false));
            e.1 |= by_matmul;
        }
    }
    multiplied
        .values()
        .filter(|(_, m)| *m)
        .map(|(n, _)| n)
        .sum()
}

/// The step's FLOPs over 6·N·T and over 6·N·T + 12·L·S·d_attn·T (attention's score and
/// context MatMuls, forward and backward), T = batch·S tokens.
fn ratios(g: &Graph, batch: u64, seq: u64, layers: u64, d_attn: u64) -> (f64, f64) {
    let f = g.totals().flops.0 as f64;
    let t = (batch * seq) as f64;
    let six = 6.0 * multiplied_params(g) as f64 * t;
    let attention = 12.0 * (layers * seq * d_attn) as f64 * t;
    (f / six, f / (six + attention))
}

/// The check of issue 18: within 10 % of 6·N·T (at S 512, where attention is small), and
/// within 2 % once attention is counted (at every S).
fn check(g: &Graph, batch: u64, seq: u64, layers: u64, d_attn: u64) -> Result<(), String> {
    let (six, with_attention) = ratios(g, batch, seq, layers, d_attn);
    if seq <= 512 && (six - 1.0).abs() > 0.10 {
        return Err(format!("{}: F / 6NT = {six:.3}", g.name));
    }
    if (with_attention - 1.0).abs() > 0.02 {
        return Err(format!(
            "{}: F / (6NT + 12LSdT) = {with_attention:.3}",
            g.name
        ));
    }
    Ok(())
}

fn build(model: &str, mode: Mode, batch: u64, seq: u64) -> Graph {
    zoo::build(model, &ZooParams::new(mode, batch, seq)).unwrap()
}

/// Dense transformers: Llama2-7B (Llama style: RMSNorm, rotary, gated FFN, no biases) and
/// OPT-1.3B (GPT style: LayerNorm, learned positions, biases, tied head). L and d_attn =
/// heads · head dim from their model files.
const DENSE: [(&str, u64, u64); 2] = [("llama2-7b", 32, 4096), ("opt-1.3b", 24, 2048)];

#[test]
fn training_flops_are_six_n_tokens_and_a_forward_or_a_missing_gradient_is_not() {
    for (model, layers, d_attn) in DENSE {
        for (batch, seq) in [(2, 512), (1, 2048)] {
            let g = build(model, Mode::Training, batch, seq);
            check(&g, batch, seq, layers, d_attn).unwrap();
        }
        let (batch, seq) = (2, 512);
        // The forward pass alone is a third of it.
        let forward = build(model, Mode::ForwardBatch, batch, seq);
        let (r, _) = ratios(&forward, batch, seq, layers, d_attn);
        assert!((0.3..0.4).contains(&r), "{model}: forward / 6NT = {r}");
        assert!(check(&forward, batch, seq, layers, d_attn).is_err());
        // A step without the weight-gradient MatMuls (dW = Xᵀ·dY, input 1 of every Dot) is
        // caught; so is one without the input-gradient MatMuls.
        let g = build(model, Mode::Training, batch, seq);
        for missing in ["DotGrad.grad.1", "DotGrad.grad.0"] {
            let (op_type, slot) = missing.split_once('.').unwrap();
            let mut wrong = g.clone();
            wrong
                .ops
                .retain(|o| !(o.op_type == op_type && o.name.ends_with(&format!(".{slot}"))));
            assert!(wrong.ops.len() < g.ops.len(), "{model}: {missing}");
            assert!(
                check(&wrong, batch, seq, layers, d_attn).is_err(),
                "{model}: the step without {missing} passes"
            );
        }
    }
}

#[test]
fn every_matmul_gets_its_two_gradient_matmuls_and_every_parameter_one_adam_update() {
    let mut p = ZooParams::new(Mode::Training, 2, 64);
    p.layers = Some(2);
    let g = zoo::build("llama2-7b", &p).unwrap();
    let forward = zoo::build(
        "llama2-7b",
        &ZooParams {
            mode: Mode::ForwardBatch,
            ..p
        },
    )
    .unwrap();
    let contraction_flops = |g: &Graph| -> u64 {
        g.ops
            .iter()
            .filter(|o| o.kind.is_contraction())
            .map(|o| o.flops().0)
            .sum()
    };
    // Every contraction of a decoder LM reads two differentiable inputs: 3× its FLOPs.
    assert_eq!(contraction_flops(&g), 3 * contraction_flops(&forward));
    assert_eq!(&g.ops[..forward.ops.len()], &forward.ops[..]);
    let t = g.totals();
    assert_eq!(t.parameters, forward.totals().parameters);
    // fp32 moments and master: 12 bytes of state per parameter.
    assert_eq!(t.optimizer_bytes.0, 12 * t.parameters);
    let updates: Vec<_> = g.ops.iter().filter(|o| o.op_type == "Adam").collect();
    let weights: std::collections::BTreeSet<_> = forward
        .ops
        .iter()
        .flat_map(|o| o.inputs())
        .filter(|t| t.role == Role::Weight)
        .map(|t| t.source.as_str())
        .collect();
    // Each parameter's chunks cover it once, none above the chunk size.
    for w in &weights {
        let chunks: Vec<_> = updates
            .iter()
            .filter(|u| u.inputs()[3].source == *w)
            .collect();
        let covered: u64 = chunks.iter().map(|u| u.output().elements()).sum();
        let elements = forward
            .ops
            .iter()
            .flat_map(|o| o.inputs())
            .find(|t| t.source == *w)
            .unwrap()
            .elements();
        assert_eq!(covered, elements, "{w}");
        assert!(chunks
            .iter()
            .all(|u| u.output().elements() <= zoo::UPDATE_CHUNK));
    }
    // Llama2-7B's LM head, 32,000 × 4,096: 32 chunks of 1,000 rows.
    let head: Vec<_> = updates
        .iter()
        .filter(|u| u.name.starts_with("lm_head.w.adam"))
        .collect();
    assert_eq!(head.len(), 32);
    assert_eq!(head[31].output().shape, [1000, 4096]);
    for u in &updates {
        // Read the state, write it back, write the parameter: 12 + 12 + 2 bytes per element
        // from HBM, plus the gradient when it was not just computed.
        let n = u.output().elements();
        let grad = u.inputs()[0].bytes().0;
        let hbm = u.hbm_bytes().0;
        assert!(hbm == 26 * n || hbm == 26 * n + grad, "{}: {hbm} B", u.name);
    }
    // Lower-precision state halves it; without a master copy the moments are all.
    for (s, per) in [
        ("bf16", 6),
        ("m=bf16,master=fp32", 8),
        ("m=fp32,master=none", 8),
    ] {
        let adam = AdamState::parse(s).unwrap();
        assert_eq!(adam.to_string(), s);
        let g = zoo::build("llama2-7b", &ZooParams { adam, ..p }).unwrap();
        assert_eq!(g.totals().optimizer_bytes.0, per * t.parameters, "{s}");
        assert!(g.name.ends_with(&format!(" adam {s}")), "{}", g.name);
    }
    for bad in [
        "fp4",
        "m=fp32",
        "m=fp32,master=fp64",
        "master=fp32,m=fp32",
        "",
    ] {
        let e = AdamState::parse(bad).unwrap_err();
        assert!(
            e.starts_with(&format!("--optimizer-dtype '{bad}': expected")),
            "{e}"
        );
    }
    // The state is training's alone.
    let adam = AdamState::parse("bf16").unwrap();
    let e = zoo::build(
        "llama2-7b",
        &ZooParams {
            adam,
            mode: Mode::Prefill,
            ..p
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("applies to --mode training"), "{e}");
}

#[test]
fn forward_batch_is_the_prefill_graph_and_training_is_deterministic() {
    for model in [
        "llama2-7b",
        "bert-base",
        "vit-h-14",
        "dit-xl-2",
        "gemma2-27b",
    ] {
        let mut p = ZooParams::new(Mode::Prefill, 2, 64);
        p.layers = Some(2);
        let prefill = zoo::build(model, &p).unwrap();
        let fb = zoo::build(
            model,
            &ZooParams {
                mode: Mode::ForwardBatch,
                ..p
            },
        )
        .unwrap();
        assert_eq!(fb.ops, prefill.ops, "{model}");
        assert_eq!(
            fb.name,
            prefill.name.replace(" prefill ", " forward-batch ")
        );
        let train = |_| {
            zoo::build(
                model,
                &ZooParams {
                    mode: Mode::Training,
                    ..p
                },
            )
            .unwrap()
        };
        let (a, b) = (train(0), train(1));
        assert_eq!(a, b, "{model}");
        assert!(a.totals().flops.0 > 2 * fb.totals().flops.0, "{model}");
        assert_eq!(a.layers.total(), a.ops.len(), "{model}");
        assert_eq!(a.layers.layers, 2, "{model}");
        let names: std::collections::BTreeSet<_> = a.ops.iter().map(|o| &o.name).collect();
        assert_eq!(
            names.len(),
            a.ops.len(),
            "{model}: operator names are unique"
        );
    }
}

#[test]
fn modes_parse_by_name_and_a_bad_one_lists_them() {
    for m in Mode::ALL {
        assert_eq!(Mode::parse(m.as_str()).unwrap(), m);
    }
    let e = Mode::parse("train").unwrap_err().to_string();
    assert!(
        e.contains("decode, prefill, forward-batch, training"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn an_imported_forward_pass_gets_the_same_step_and_convolutions_are_refused() {
    use elk_model::import::{import_file, ImportOptions};
    let models = super::fixtures::fixtures().join("models");
    let opts = |mode| ImportOptions::new(mode, 2, 64);
    let imported = import_file(&models.join("llama2-7.json"), &opts(Mode::Training)).unwrap();
    let forward = import_file(&models.join("llama2-7.json"), &opts(Mode::ForwardBatch)).unwrap();
    let zoo = build("llama2-7b", Mode::Training, 2, 64);
    let (a, b) = (
        imported.totals().flops.0 as f64,
        zoo.totals().flops.0 as f64,
    );
    assert!((a / b - 1.0).abs() < 0.01, "imported {a} vs zoo {b} FLOPs");
    assert_eq!(imported.layers.total(), imported.ops.len());
    assert_eq!(imported.layers.layers, forward.layers.layers);
    assert_eq!(&imported.ops[..forward.ops.len()], &forward.ops[..]);
    // Every input's producer precedes it, through the backward pass too.
    for g in [&imported, &zoo] {
        for (i, op) in g.ops.iter().enumerate() {
            for t in op.inputs() {
                assert!(t.producer.is_none_or(|p| p < i), "{}: {}", g.name, op.name);
            }
        }
    }
    let e = import_file(&models.join("resnet.json"), &opts(Mode::Training)).unwrap_err();
    let e = e.to_string();
    assert!(
        e.contains("convolutions") && e.contains("--mode forward-batch"),
        "{e}"
    );
    assert!(!e.contains('\n'), "{e}");
}
