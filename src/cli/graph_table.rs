//! The operator table and totals shared by `models show` and `import`.

use elk_model::graph::{Graph, Residency, Role};
use elk_stage::units::{si, Bytes, Flops};
use serde::Serialize;

#[derive(Serialize)]
struct TensorRow<'a> {
    source: &'a str,
    role: Role,
    residency: Residency,
    shape: &'a [u64],
    bytes: Bytes,
}

#[derive(Serialize)]
struct OpRow<'a> {
    index: usize,
    name: &'a str,
    kind: &'a str,
    op_type: &'a str,
    dims: &'a [u64],
    flops: Flops,
    hbm_bytes: Bytes,
    on_chip_bytes: Bytes,
    inputs: Vec<TensorRow<'a>>,
}

/// Where the repeated layers sit, every count named by what it counts.
#[derive(Serialize)]
struct LayersJson {
    prologue_ops: usize,
    layers: usize,
    ops_per_layer: usize,
    epilogue_ops: usize,
}

/// A graph as `models show --json` and `import --json` print it in `results`.
#[derive(Serialize)]
pub(super) struct GraphJson<'a> {
    name: &'a str,
    operators: usize,
    layers: LayersJson,
    totals: elk_model::graph::GraphTotals,
    /// Operators of each kind in one representative layer (layer 1, or 0 with one layer).
    layer_kind_counts: std::collections::BTreeMap<&'static str, usize>,
    hbm_rule: &'static str,
    ops: Vec<OpRow<'a>>,
}

const HBM_RULE: &str = "weights and KV cache come from HBM; an activation is on chip only if \
the previous operator produced or read it, otherwise it is treated as spilled to HBM";

/// The graph as `--json` prints it (every operator).
pub(super) fn json(g: &Graph) -> GraphJson<'_> {
    let ops = g
        .ops
        .iter()
        .enumerate()
        .map(|(index, o)| OpRow {
            index,
            name: &o.name,
            kind: o.kind.as_str(),
            op_type: &o.op_type,
            dims: &o.dims,
            flops: o.flops(),
            hbm_bytes: o.hbm_bytes(),
            on_chip_bytes: o.on_chip_bytes(),
            inputs: o
                .inputs()
                .iter()
                .map(|t| TensorRow {
                    source: &t.source,
                    role: t.role,
                    residency: t.residency,
                    shape: &t.shape,
                    bytes: t.bytes(),
                })
                .collect(),
        })
        .collect();
    let l = g.layers;
    GraphJson {
        name: &g.name,
        operators: g.ops.len(),
        layers: LayersJson {
            prologue_ops: l.prologue,
            layers: l.layers,
            ops_per_layer: l.ops_per_layer,
            epilogue_ops: l.epilogue,
        },
        totals: g.totals(),
        layer_kind_counts: layer_kind_counts(g),
        hbm_rule: HBM_RULE,
        ops,
    }
}

/// Prints the graph as a table (`all`: every operator; otherwise the prologue, the first
/// layer and the epilogue).
pub fn print(g: &Graph, all: bool) {
    println!("{}: {} operators", g.name, g.ops.len());
    println!(
        "{:>5}  {:<28} {:<13} {:<28} {:>14} {:>12}",
        "#", "operator", "kind", "dims", "FLOPs", "HBM bytes"
    );
    let l = g.layers;
    let first_layer_end = l.prologue + l.ops_per_layer;
    let last_layers_start = l.prologue + l.ops_per_layer * l.layers;
    for (i, op) in g.ops.iter().enumerate() {
        let hidden = !all && l.layers > 1 && i >= first_layer_end && i < last_layers_start;
        if hidden {
            if i == first_layer_end {
                println!(
                    "{:>5}  … layers 1..{} repeat layer 0 ({} operators each; --all prints them)",
                    "",
                    l.layers - 1,
                    l.ops_per_layer
                );
            }
            continue;
        }
        println!(
            "{:>5}  {:<28} {:<13} {:<28} {:>14} {:>12}",
            i,
            truncate(&op.name, 28),
            op.kind.as_str(),
            truncate(&format!("{:?}", op.dims), 28),
            op.flops().to_string(),
            op.hbm_bytes().to_string()
        );
    }
    let t = g.totals();
    println!();
    println!(
        "layers: {} prologue + {} x {} + {} epilogue operators",
        l.prologue, l.layers, l.ops_per_layer, l.epilogue
    );
    println!("parameters:        {}", si(t.parameters as f64, ""));
    println!("weight bytes:      {}", t.weight_bytes);
    println!("KV-cache bytes:    {}", t.kv_bytes);
    if t.optimizer_bytes.0 > 0 {
        println!(
            "optimizer bytes:   {} (Adam moments and master weights)",
            t.optimizer_bytes
        );
    }
    println!("HBM bytes loaded:  {} (summed over operators)", t.hbm_bytes);
    println!("FLOPs:             {}", t.flops);
    println!("HBM rule:          {HBM_RULE}");
}

fn layer_kind_counts(g: &Graph) -> std::collections::BTreeMap<&'static str, usize> {
    let layer = usize::from(g.layers.layers > 1);
    elk_model::graph::OpKind::ALL
        .iter()
        .map(|k| (k.as_str(), g.count_in_layer(layer, *k)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('…');
        t
    }
}
