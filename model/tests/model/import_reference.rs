//! The bert-base cross-check of SPEC §2.1.2: our reference-compatible import of
//! `bert-base.json` (decode, batch 8, KV 512) against the reference artifact's own parse,
//! `TExpr_bert-base-b8.json`: same operator count, op types, dimension extents, HBM flags.

use super::fixtures::fixtures;
use elk_model::graph::{Mode, Residency};
use elk_model::import::{import_file, Compat, ImportOptions};
use serde_json::Value;

#[test]
fn bert_base_matches_reference_parse_operator_by_operator() {
    let dir = fixtures();
    let mut opts = ImportOptions::new(Mode::Decode, 8, 512);
    opts.compat = Compat::Reference;
    let g = import_file(&dir.join("models/bert-base.json"), &opts).unwrap();
    let text =
        std::fs::read_to_string(dir.join("reference/bert-base/TExpr_bert-base-b8.json")).unwrap();
    let reference: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(g.ops.len(), reference.len(), "operator count");
    assert_eq!(g.ops.len(), 547);
    let mut mismatches = Vec::new();
    for (i, (op, r)) in g.ops.iter().zip(&reference).enumerate() {
        let r_type = r[0].as_str().unwrap();
        let r_dims: Vec<u64> = r[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let r_vars: Vec<Vec<Vec<usize>>> = serde_json::from_value(r[2].clone()).unwrap();
        let r_on_chip: Vec<bool> = serde_json::from_value(r[3].clone()).unwrap();
        let on_chip: Vec<bool> = op
            .inputs()
            .iter()
            .map(|t| t.residency == Residency::OnChip)
            .collect();
        let vars: Vec<Vec<Vec<usize>>> = op.tensors.iter().map(|t| t.axes.clone()).collect();
        if op.op_type != r_type || op.dims != r_dims || on_chip != r_on_chip || vars != r_vars {
            mismatches.push(format!(
                "op {i} {}: ours {} {:?} {:?} {:?} / reference {r_type} {r_dims:?} {r_vars:?} {r_on_chip:?}",
                op.name, op.op_type, op.dims, vars, on_chip
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches[..mismatches.len().min(15)].join("\n")
    );
}

#[test]
fn bert_base_layers_are_detected() {
    let mut opts = ImportOptions::new(Mode::Decode, 8, 512);
    opts.compat = Compat::Reference;
    let g = import_file(&fixtures().join("models/bert-base.json"), &opts).unwrap();
    // Layer 0 computes the attention mask (2 extra operators), so the repeating 44-operator
    // layer starts inside it: 19 + 11 x 44 + 44 = 547.
    assert_eq!(g.layers.ops_per_layer, 44);
    assert_eq!(g.layers.layers, 11);
    assert_eq!(g.layers.total(), 547);
}

#[test]
fn every_model_file_imports_in_decode_and_prefill() {
    let dir = fixtures().join("models");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        13,
        "expected the 13 reference graphs in {}",
        dir.display()
    );
    for compat in [Compat::Clean, Compat::Reference] {
        for (mode, batch, seq) in [(Mode::Decode, 8, 512), (Mode::Prefill, 2, 128)] {
            let mut opts = ImportOptions::new(mode, batch, seq);
            opts.compat = compat;
            for f in &files {
                let g = import_file(f, &opts).unwrap_or_else(|e| panic!("{e}"));
                assert!(!g.ops.is_empty(), "{}", f.display());
                assert!(g.ops.iter().all(|o| o.dims.iter().all(|&d| d > 0)));
                assert!(
                    g.ops
                        .iter()
                        .all(|o| o.dims.iter().all(|&d| d != 99 && d != 66)),
                    "{}: a placeholder survived",
                    f.display()
                );
            }
        }
    }
}

#[test]
fn clean_decode_gives_attention_scores_the_kv_length() {
    let g = import_file(
        &fixtures().join("models/bert-base.json"),
        &ImportOptions::new(Mode::Decode, 8, 512),
    )
    .unwrap();
    let softmax = g.ops.iter().find(|o| o.op_type == "SoftmaxBasic").unwrap();
    assert_eq!(softmax.dims, [8, 12, 1, 512]);
    let slice = g.ops.iter().find(|o| o.op_type == "Slice").unwrap();
    assert_eq!(
        slice.dims,
        [8, 1, 768],
        "clean Slice uses its output extents"
    );
    assert!(
        g.ops.iter().any(|o| o.op_type == "GatherV2"),
        "clean decode keeps the embedding gather"
    );
}
