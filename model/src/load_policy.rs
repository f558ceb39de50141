//! The stage-model instance each MoE load policy faces in one routed step (docs/moe.md).
//!
//! Every policy's instance of a step has the same operators, so the policies differ only in
//! which expert weights are loaded and from which stage on:
//! - every expert that receives tokens has its real operators, sized by its tokens;
//! - every expert that receives none has two *idle* operators (its gate/up and down weights):
//!   nothing computes, but a policy that loads it must bring its weights in by then;
//! - after each layer's top-k step a *wait* operator (no compute, no load): the stage in
//!   which the router's choice is known, so on-demand loads have a stage to run in.
//!
//! | policy | idle experts loaded | loads released only after the router |
//! |---|---|---|
//! | `load-all` | all | none |
//! | `predicted-m` | the predicted ones | the experts with tokens that were not predicted |
//! | `on-demand` | none | every expert with tokens |
//! | `oracle` | none | none |
//!
//! The oracle's instance is therefore a relaxation of every other policy's (fewer loads,
//! fewer constraints, the same stages): any policy's schedule without its idle loads
//! ([`StepInstances::project`]) is a schedule of the oracle's, no longer than it, and a lower
//! bound of the oracle's instance bounds every policy of that step.

use crate::build::InstanceMemo;
use crate::error::{ModelError, Result};
use crate::graph::Role;
use crate::zoo::{expert_op, topk_layer, ExpertTokens, ZooModel, ZooParams};
use elk_stage::instance::{Instance, InstanceOp, OpOption};
use elk_stage::schedule::Schedule;
use elk_stage::units::{Bytes, Cycles, OpId};

/// How an MoE runtime decides which expert weights to load, and when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Preload every expert of every layer: what a static compiler must do without knowledge
    /// of the routing.
    LoadAll,
    /// Load an expert only once its layer's router has chosen it.
    OnDemand,
    /// Preload the m most likely experts of each layer; the others that receive tokens are
    /// loaded on demand.
    Predicted(usize),
    /// Knows this step's routing: loads exactly the experts with tokens, whenever it likes.
    Oracle,
}

impl Policy {
    /// Parses `load-all`, `on-demand`, `predicted-M` or `oracle`.
    pub fn parse(s: &str) -> Result<Policy> {
        match s {
            "load-all" => Ok(Policy::LoadAll),
            "on-demand" => Ok(Policy::OnDemand),
            "oracle" => Ok(Policy::Oracle),
            _ => match s.strip_prefix("predicted-").map(str::parse::<usize>) {
                Some(Ok(m)) if m >= 1 => Ok(Policy::Predicted(m)),
                _ => Err(ModelError::Invalid(format!(
                    "policy '{s}': expected load-all, on-demand, predicted-M (M ≥ 1 experts per \
                     layer, e.g. predicted-2) or oracle"
                ))),
            },
        }
    }

    /// Parses `s` (as [`Policy::parse`]) for a model with `experts` experts per layer:
    /// `predicted-M` must leave some expert to load on demand, M < E (predicting all E
    /// preloads every expert, which is `load-all` under another name).
    pub fn parse_for(s: &str, experts: u64) -> Result<Policy> {
        let p = Policy::parse(s)?;
        match p {
            Policy::Predicted(m) if m as u64 >= experts => Err(ModelError::Invalid(format!(
                "policy '{s}': the model has {experts} experts per layer, so predicting {m} \
                 preloads every one of them (that is load-all); give predicted-M with M < \
                 {experts}"
            ))),
            p => Ok(p),
        }
    }

    /// Its name in tables and JSON.
    pub fn name(&self) -> String {
        match self {
            Policy::LoadAll => "load-all".into(),
            Policy::OnDemand => "on-demand".into(),
            Policy::Predicted(m) => format!("predicted-{m}"),
            Policy::Oracle => "oracle".into(),
        }
    }
}

/// What an operator of a step's instance is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Not an expert's (attention, norms, router, …).
    Other,
    /// An operator of an expert that receives tokens.
    Expert {
        /// Layer.
        layer: usize,
        /// Expert.
        expert: usize,
    },
    /// One weight of an expert that receives no token.
    Idle {
        /// Layer.
        layer: usize,
        /// Expert.
        expert: usize,
    },
    /// The stage after a layer's top-k step.
    Wait {
        /// Layer.
        layer: usize,
    },
}

/// One routed step's operators, from which each policy's instance is made.
#[derive(Clone, Debug)]
pub struct StepInstances {
    /// Every idle expert loaded, nothing released (the load-all instance).
    base: Instance,
    slots: Vec<Slot>,
    /// Per layer, the index of its wait operator.
    waits: Vec<usize>,
    /// `[layer][expert]`: receives tokens.
    touched: Vec<Vec<bool>>,
    /// Weight bytes of one expert (every expert has the same).
    expert_weight_bytes: u64,
}

impl StepInstances {
    /// The operators of `model`'s step in which experts receive `counts` tokens.
    pub fn build(
        model: &ZooModel,
        params: &ZooParams,
        counts: &ExpertTokens,
        memo: &mut InstanceMemo,
    ) -> Result<StepInstances> {
        if model.moe().is_none() {
            return Err(ModelError::Invalid(format!(
                "{} has no experts: load policies apply to MoE models",
                model.name
            )));
        }
        // Check the routing as it is, then give every expert without tokens one phantom
        // token: its operators carry its weights' plan tables and loads.
        model.check_routing(params, Some(counts))?;
        let layers = counts.layers();
        let touched: Vec<Vec<bool>> = (0..layers)
            .map(|l| counts.layer(l).iter().map(|&n| n > 0).collect())
            .collect();
        let slots_counts = ExpertTokens::new(
            (0..layers)
                .map(|l| counts.layer(l).iter().map(|&n| n.max(1)).collect())
                .collect(),
        );
        let graph = model.build_slots(params, &slots_counts)?;
        let expert_weight_bytes = graph
            .ops
            .iter()
            .filter(|o| expert_op(&o.name).is_some_and(|(l, e, _)| l == 0 && e == 0))
            .flat_map(|o| o.inputs())
            .filter(|t| t.role == Role::Weight)
            .map(|t| t.bytes().0)
            .sum();
        let mut inst = memo.instance(&graph)?;
        let mut ops = Vec::with_capacity(inst.ops.len() + layers);
        let mut slots = Vec::with_capacity(ops.capacity());
        let mut waits = vec![usize::MAX; layers];
        let built_ops = std::mem::take(&mut inst.ops);
        for (op, built) in graph.ops.iter().zip(built_ops) {
            match expert_op(&op.name) {
                Some((layer, expert, _)) if !touched[layer][expert] => {
                    // Only the operators with the expert's weights stay, computing nothing.
                    if !op.inputs().iter().any(|t| t.role == Role::Weight) {
                        continue;
                    }
                    ops.push(idle(built));
                    slots.push(Slot::Idle { layer, expert });
                }
                Some((layer, expert, _)) => {
                    ops.push(built);
                    slots.push(Slot::Expert { layer, expert });
                }
                None => {
                    let wait = topk_layer(&op.name);
                    ops.push(built);
                    slots.push(Slot::Other);
                    if let Some(layer) = wait {
                        waits[layer] = ops.len();
                        ops.push(InstanceOp {
                            name: format!("l{layer}.moe.wait"),
                            hbm_cycles: Cycles::ZERO,
                            options: vec![empty_option()],
                            flops: Some(0.0),
                            preload_window: None,
                            parallel: None,
                        });
                        slots.push(Slot::Wait { layer });
                    }
                }
            }
        }
        let base = Instance { ops, ..inst };
        Ok(StepInstances {
            base,
            slots,
            waits,
            touched,
            expert_weight_bytes,
        })
    }

    /// What each operator is.
    pub fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// Weight bytes of one expert.
    pub fn expert_weight_bytes(&self) -> u64 {
        self.expert_weight_bytes
    }

    /// Experts that receive tokens, over all layers.
    pub fn touched(&self) -> usize {
        self.touched.iter().flatten().filter(|&&t| t).count()
    }

    /// Whether policy `p` loads idle expert `e` of layer `l`, given each layer's experts
    /// most likely first (`ranking`).
    fn loads_idle(p: &Policy, ranking: &[Vec<usize>], l: usize, e: usize) -> bool {
        match p {
            Policy::LoadAll => true,
            Policy::Predicted(m) => predicted(ranking, l, *m, e),
            Policy::OnDemand | Policy::Oracle => false,
        }
    }

    /// Experts whose weights policy `p` loads in this step: those with tokens, and the idle
    /// ones it preloads.
    pub fn experts_loaded(&self, p: &Policy, ranking: &[Vec<usize>]) -> usize {
        let idle = self
            .touched
            .iter()
            .enumerate()
            .map(|(l, t)| {
                t.iter()
                    .enumerate()
                    .filter(|&(e, &x)| !x && Self::loads_idle(p, ranking, l, e))
                    .count()
            })
            .sum::<usize>();
        self.touched() + idle
    }

    /// Expert weight bytes policy `p` loads in this step.
    pub fn expert_bytes(&self, p: &Policy, ranking: &[Vec<usize>]) -> u64 {
        self.experts_loaded(p, ranking) as u64 * self.expert_weight_bytes
    }

    /// The instance policy `p` faces; `ranking[l]` is layer l's experts, most likely first
    /// (used by `predicted-m`).
    pub fn instance(&self, p: &Policy, ranking: &[Vec<usize>]) -> Instance {
        let mut inst = self.base.clone();
        inst.name = format!("{}, policy {}", self.base.name, p.name());
        for (j, slot) in self.slots.iter().enumerate() {
            match *slot {
                Slot::Idle { layer, expert } if !Self::loads_idle(p, ranking, layer, expert) => {
                    let op = &mut inst.ops[j];
                    op.hbm_cycles = Cycles::ZERO;
                    op.options = vec![empty_option()];
                }
                Slot::Expert { layer, expert } => {
                    let released = match p {
                        Policy::OnDemand => true,
                        Policy::Predicted(m) => !predicted(ranking, layer, *m, expert),
                        Policy::LoadAll | Policy::Oracle => false,
                    };
                    if released && inst.ops[j].hbm_cycles > Cycles::ZERO {
                        // Its load may work from the wait stage on: W_j = j − wait index.
                        inst.ops[j].preload_window = Some((j - self.waits[layer]) as u32);
                    }
                }
                _ => {}
            }
        }
        inst
    }

    /// `s`, a schedule of policy `p`'s instance, as a schedule of the oracle's instance
    /// `oracle`: the idle loads the oracle does not make are dropped. Loads only leave, so
    /// it is valid and no longer (every stage term is monotone in the loads).
    pub fn project(&self, s: &Schedule, oracle: &Instance) -> Schedule {
        let keep = |j: OpId| oracle.is_load(j);
        let mut out = Schedule::new(
            oracle,
            &s.method,
            s.options
                .iter()
                .zip(&self.slots)
                .map(|(&o, slot)| {
                    if matches!(slot, Slot::Idle { .. }) {
                        0
                    } else {
                        o
                    }
                })
                .collect(),
            s.load_order.iter().copied().filter(|&j| keep(j)).collect(),
            s.load_work.iter().filter(|w| keep(w.op)).cloned().collect(),
            s.makespan_cycles,
        );
        out.status = s.status;
        out
    }
}

/// Whether expert `e` is among layer `l`'s `m` most likely.
fn predicted(ranking: &[Vec<usize>], l: usize, m: usize, e: usize) -> bool {
    ranking
        .get(l)
        .is_some_and(|r| r.iter().take(m).any(|&x| x == e))
}

/// An operator's single option when it neither computes nor holds anything.
fn empty_option() -> OpOption {
    OpOption {
        cold: Bytes(0),
        hot: Bytes(0),
        exec_cycles: Cycles::ZERO,
        comm_cycles: Cycles::ZERO,
        noc_per_hbm: 0.0,
        groups: None,
    }
}

/// An idle expert's weight operator: its smallest cold layout, loaded and held through its
/// own stage, computing nothing.
fn idle(mut op: InstanceOp) -> InstanceOp {
    let smallest = op
        .options
        .iter()
        .min_by_key(|o| o.cold)
        .cloned()
        .unwrap_or_else(empty_option);
    op.name = format!("{}.idle", op.name);
    op.options = vec![OpOption {
        hot: smallest.cold,
        exec_cycles: Cycles::ZERO,
        comm_cycles: Cycles::ZERO,
        ..smallest
    }];
    op.flops = Some(0.0);
    op
}

#[cfg(test)]
mod tests {
    use super::Policy;

    #[test]
    fn predicting_every_expert_is_refused_as_load_all_under_another_name() {
        assert_eq!(
            Policy::parse_for("predicted-7", 8).unwrap(),
            Policy::Predicted(7)
        );
        assert_eq!(Policy::parse_for("load-all", 8).unwrap(), Policy::LoadAll);
        for m in [8, 9] {
            let e = Policy::parse_for(&format!("predicted-{m}"), 8)
                .unwrap_err()
                .to_string();
            assert_eq!(
                e,
                format!(
                    "policy 'predicted-{m}': the model has 8 experts per layer, so predicting \
                     {m} preloads every one of them (that is load-all); give predicted-M with \
                     M < 8"
                )
            );
        }
        assert!(Policy::parse_for("predicted-0", 8).is_err());
    }
}
