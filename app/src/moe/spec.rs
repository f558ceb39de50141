//! One `moe` run's inputs: [`MoeInputs`] as the CLI and Python give them, and [`MoeSpec`],
//! the routing and policies parsed and checked.

use elk_model::build::InstanceOptions;
use elk_model::chip::ChipSpec;
use elk_model::load_policy::Policy;
use elk_model::routing::Routing;
use elk_model::zoo::{ZooModel, ZooParams};

/// One run: a model, its run shape and chip, a routing and the policies to compare.
#[derive(Clone, Debug)]
pub struct MoeSpec {
    /// Batch, KV length, mode, layers, dtypes.
    pub params: ZooParams,
    /// The chip.
    pub chip: ChipSpec,
    /// Instance options (plan cache, NoC row, load order).
    pub opts: InstanceOptions,
    /// How tokens choose experts.
    pub routing: Routing,
    /// Steps sampled.
    pub steps: usize,
    /// The seed of the samples.
    pub seed: u64,
    /// The policies, in table order (the oracle is added last when missing).
    pub policies: Vec<Policy>,
    /// The heuristics scheduling each instance (registry names).
    pub methods: Vec<String>,
}

/// The experts of `model`, given as `given` (`--model`): an error naming the zoo's MoE
/// models when it has none (bad input: the CLI exits 2).
pub fn experts_of(model: &ZooModel, given: &str) -> elk_model::Result<elk_model::zoo::Moe> {
    model.moe().copied().ok_or_else(|| {
        elk_model::ModelError::Invalid(format!(
            "--model {given}: not an MoE model (the zoo's: mixtral-8x7b, qwen3-30b-a3b, \
             olmoe-1b-7b; or a model file with a [moe] table)"
        ))
    })
}

/// The run's inputs as `elk-opt moe` takes them (and Python's `moe()`).
#[derive(Clone, Debug)]
pub struct MoeInputs {
    /// Batch, KV length, layers, dtypes (decode).
    pub params: ZooParams,
    /// The chip, named by its label (`ipu-pod4 @ 8 TB/s HBM`).
    pub chip: ChipSpec,
    /// Instance options (plan cache, NoC row, load order).
    pub opts: InstanceOptions,
    /// `--routing` as given (`uniform`, `zipf:1.2`, …).
    pub routing: String,
    /// `--steps`.
    pub steps: usize,
    /// `--seed`.
    pub seed: u64,
    /// `--policies` (empty: load-all, on-demand, predicted-k, oracle).
    pub policies: Vec<String>,
    /// `--methods`: registry names.
    pub methods: Vec<String>,
}

impl MoeSpec {
    /// The spec of `inputs` for a model with `moe`'s experts: the routing and the policies
    /// parsed, the heuristics checked against the registry (bad input: the CLI exits 2).
    pub fn new(moe: &elk_model::zoo::Moe, inputs: MoeInputs) -> elk_model::Result<MoeSpec> {
        let routing = Routing::parse(&inputs.routing)?;
        let names = if inputs.policies.is_empty() {
            // predicted-k only where k < E: with top_k = E it would be load-all again.
            let predicted = (moe.top_k < moe.experts).then(|| format!("predicted-{}", moe.top_k));
            ["load-all".to_string(), "on-demand".into()]
                .into_iter()
                .chain(predicted)
                .chain(["oracle".to_string()])
                .collect()
        } else {
            inputs.policies.clone()
        };
        let policies = names
            .iter()
            .map(|p| Policy::parse_for(p, moe.experts))
            .collect::<elk_model::Result<Vec<_>>>()?;
        if let Some(p) = policies.iter().find(|p| p.is_resident()) {
            if inputs.opts.parallel {
                return Err(elk_model::ModelError::Invalid(format!(
                    "policy '{}': resident experts with --expert-parallel are not modelled (a \
                     parallel set loads its experts as one load); run it without \
                     --expert-parallel",
                    p.name()
                )));
            }
        }
        for m in &inputs.methods {
            if elk_heuristics::by_name(m).is_none() {
                return Err(elk_model::ModelError::Invalid(format!(
                    "--methods {m}: unknown heuristic; known: {}",
                    elk_heuristics::all_names().collect::<Vec<_>>().join(", ")
                )));
            }
        }
        Ok(MoeSpec {
            params: inputs.params,
            chip: inputs.chip,
            opts: inputs.opts,
            routing,
            steps: inputs.steps,
            seed: inputs.seed,
            policies,
            methods: inputs.methods,
        })
    }
}
