//! What every step of a run shares ([`Setup`]: the experts, layers, tokens and ranking, and
//! each step's operators), and the heuristics that schedule its instances.

use super::spec::MoeSpec;
use crate::portfolio::Portfolio;
use crate::{AppError, Result};
use elk_model::build::InstanceMemo;
use elk_model::load_policy::{Policy, StepInstances};
use elk_model::zoo::ZooModel;
use elk_stage::instance::Instance;
use elk_stage::method::MethodError;
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

/// What every step of a run shares: the model's experts, the layers and tokens routed, each
/// layer's experts most likely first, and the policies with the oracle last.
pub(super) struct Setup {
    pub(super) moe: elk_model::zoo::Moe,
    pub(super) layers: usize,
    pub(super) tokens: u64,
    pub(super) ranking: Vec<Vec<usize>>,
    pub(super) policies: Vec<Policy>,
}

impl Setup {
    pub(super) fn new(model: &ZooModel, spec: &MoeSpec) -> Result<Setup> {
        let Some(moe) = model.moe().copied() else {
            return Err(AppError::Model(elk_model::ModelError::Invalid(format!(
                "{} has no experts: --routing and load policies apply to MoE models (models \
                 list shows the experts column)",
                model.name
            ))));
        };
        // Routing is per MoE layer: a model's dense layers (DeepSeek's first ones) have none.
        let layers = model.moe_layers(&spec.params)?;
        let tokens = spec.params.batch
            * if spec.params.mode == elk_model::graph::Mode::Decode {
                1
            } else {
                spec.params.seq
            };
        let mut policies = spec.policies.clone();
        policies.retain(|p| *p != Policy::Oracle);
        policies.push(Policy::Oracle);
        Ok(Setup {
            moe,
            layers,
            tokens,
            ranking: (0..layers).map(|l| spec.routing.ranking(&moe, l)).collect(),
            policies,
        })
    }

    /// The operators of step `step`, its routing sampled from the spec's seed.
    pub(super) fn step(
        &self,
        model: &ZooModel,
        spec: &MoeSpec,
        step: u64,
        memo: &InstanceMemo,
    ) -> Result<StepInstances> {
        self.step_seeded(model, spec, spec.seed, step, memo)
    }

    /// The operators of step `step` of the routing stream of `seed`.
    pub(super) fn step_seeded(
        &self,
        model: &ZooModel,
        spec: &MoeSpec,
        seed: u64,
        step: u64,
        memo: &InstanceMemo,
    ) -> Result<StepInstances> {
        let routing = spec
            .routing
            .sample(&self.moe, self.layers, self.tokens, seed, step)?;
        Ok(StepInstances::build(
            model,
            &spec.params,
            &routing.counts(self.moe.experts),
            memo,
        )?)
    }
}

/// The heuristics of `spec.methods`.
pub(super) fn methods_of(spec: &MoeSpec) -> Result<Vec<Box<dyn elk_stage::method::Method>>> {
    spec.methods
        .iter()
        .map(|m| {
            elk_heuristics::by_name(m).ok_or_else(|| {
                AppError::Model(elk_model::ModelError::Invalid(format!(
                    "unknown method '{m}'"
                )))
            })
        })
        .collect()
}

/// The best judged schedule of `inst` among `methods` ([`crate::portfolio`]).
pub(super) fn best_schedule(
    inst: &Instance,
    methods: &[Box<dyn elk_stage::method::Method>],
) -> Result<(Schedule, Cycles, String)> {
    let p = Portfolio::run(inst, methods.iter().map(|m| m.as_ref()), &mut |_, _| {})
        .map_err(MethodError::from)?;
    match p.best() {
        Some((k, s, t)) => Ok((s.clone(), t, p.runs[k].method.clone())),
        None => Err(AppError::Model(elk_model::ModelError::Invalid(format!(
            "{}: no method found a schedule ({})",
            inst.name,
            p.failures().join("; ")
        )))),
    }
}
