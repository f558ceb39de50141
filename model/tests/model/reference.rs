//! The reference artifact's three runs (`tests/fixtures/reference/{bert-base,llama2-7,opt-6.7}`):
//! its parsed operator lists (`TExpr_*.json[.gz]`) as graphs, its stage-model instances, and
//! the chip it ran on (`docs/ipu-mk2-artifact.toml`).

use super::fixtures::fixtures;
use elk_model::chip::ChipSpec;
use elk_model::graph::{detect_layers, Graph, OpKind, Operator, Residency, Role, Tensor};
use elk_model::plan::PlanRules;
use elk_stage::instance::Instance;
use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;

/// One run of the artifact: decode, batch 8, on 1,472 cores.
pub struct Run {
    /// Folder under `tests/fixtures/reference/`.
    pub name: &'static str,
    /// KV length.
    pub kv: u64,
    /// The artifact's parsed operator list.
    pub texpr: &'static str,
    /// The graph in `tests/fixtures/models/`, when there is one (there is no OPT-6.7B graph).
    pub graph: Option<&'static str>,
}

pub const RUNS: [Run; 3] = [
    Run {
        name: "bert-base",
        kv: 512,
        texpr: "TExpr_bert-base-b8.json",
        graph: Some("bert-base.json"),
    },
    Run {
        name: "llama2-7",
        kv: 2048,
        texpr: "TExpr_llama2-7-b8.json.gz",
        graph: Some("llama2-7.json"),
    },
    Run {
        name: "opt-6.7",
        kv: 2048,
        texpr: "TExpr_opt-6.7-b8.json.gz",
        graph: None,
    },
];

impl Run {
    fn dir(&self) -> PathBuf {
        fixtures().join("reference").join(self.name)
    }

    /// `[op_type, dims, variables, ignore_inputs, op_type_id, op_id, inputs]` per operator.
    pub fn texpr(&self) -> Vec<Value> {
        let path = self.dir().join(self.texpr);
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut text = String::new();
        if self.texpr.ends_with(".gz") {
            flate2::read::GzDecoder::new(file).read_to_string(&mut text)
        } else {
            std::io::BufReader::new(file).read_to_string(&mut text)
        }
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::from_str(&text).unwrap()
    }

    /// The artifact's instance (every cold→hot table entry an option).
    pub fn instance(&self) -> Instance {
        Instance::read(&self.dir().join("instance.json")).unwrap()
    }

    /// The artifact's operator list as a graph, planned by `rules`: operator i is named
    /// `Op_i_<type>` like the instance's, inputs flagged on chip are on-chip activations and
    /// the others HBM weights.
    pub fn graph(&self, rules: PlanRules) -> Graph {
        let ops: Vec<Operator> = self
            .texpr()
            .iter()
            .enumerate()
            .map(|(i, e)| texpr_operator(i, e))
            .collect();
        Graph {
            name: format!("{} (artifact operator list)", self.name),
            layers: detect_layers(&ops),
            ops,
            plan_rules: rules,
            dtypes: Default::default(),
        }
    }
}

/// The chip of the artifact's runs: ipu-mk2 with HBM "4000" = 4.194304e12 B/s.
pub fn artifact_chip() -> ChipSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/ipu-mk2-artifact.toml");
    ChipSpec::load(path.to_str().unwrap()).unwrap()
}

fn kind(op_type: &str) -> OpKind {
    match op_type {
        "Dot" => OpKind::MatMul,
        "BatchMatMul" => OpKind::BatchMatMul,
        "Add" | "Subtract" | "Multiply" | "Divide" | "Maximum" | "Power" => OpKind::Elementwise,
        "Relu" | "Negative" | "Sigmoid" | "Sqrt" | "Tanh" | "Erf" => OpKind::Unary,
        "Sum" => OpKind::Reduce,
        "SoftmaxBasic" => OpKind::Softmax,
        "Slice" => OpKind::Slice,
        other => panic!("op type {other} is not in the artifact's decode lists"),
    }
}

fn texpr_operator(i: usize, e: &Value) -> Operator {
    let op_type = e[0].as_str().unwrap();
    let dims: Vec<u64> = serde_json::from_value(e[1].clone()).unwrap();
    let vars: Vec<Vec<Vec<usize>>> = serde_json::from_value(e[2].clone()).unwrap();
    let on_chip: Vec<bool> = serde_json::from_value(e[3].clone()).unwrap();
    let tensors = vars
        .into_iter()
        .enumerate()
        .map(|(v, axes)| {
            let hbm = v > 0 && !on_chip[v - 1];
            Tensor {
                source: format!("op{i}.t{v}"),
                shape: axes.iter().map(|a| dims[a[0]]).collect(),
                axes,
                dtype_bytes: elk_model::dtype::DtypeBytes::whole(2),
                role: if hbm { Role::Weight } else { Role::Activation },
                producer: None,
                residency: if hbm {
                    Residency::Hbm
                } else {
                    Residency::OnChip
                },
            }
        })
        .collect();
    Operator {
        name: format!("Op_{i}_{op_type}"),
        kind: kind(op_type),
        op_type: op_type.into(),
        dims,
        tensors,
        after: Vec::new(),
        moe: None,
    }
}
