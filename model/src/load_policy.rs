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
//! With parallel sets ([`InstanceMemo::parallel`], `--expert-parallel`; docs/core-groups.md)
//! the sets are those of the step's own graph: the experts with tokens (and the shared
//! expert) side by side, on groups sized for this step's tokens, one operator at the place of
//! its first member; idle experts stay outside every set, where they were. A set's load is one
//! load: released after the router when any of its experts' loads would be.
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

mod resident;

pub use resident::{share_per_core, top_by_value, ResidentSet};

use crate::build::{InstanceMemo, ParallelStep};
use crate::error::{ModelError, Result};
use crate::graph::{Graph, Operator, Role};
use crate::zoo::{ExpertTokens, ZooModel, ZooParams};
use elk_stage::instance::{Instance, InstanceOp, OpOption, INSTANCE_FORMAT_PARALLEL};
use elk_stage::schedule::Schedule;
use elk_stage::units::{Bytes, Cycles, OpId};
use std::collections::HashMap;

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
    /// Keeps the n experts (over all layers) whose residency saves the most HBM traffic in
    /// expectation resident in SRAM; the others on demand (a hand-sized hot set, as
    /// Tenstorrent's hot/cold MoE kernel keeps one).
    ResidentTop(usize),
    /// Keeps the resident set `moe` chooses under the chip's SRAM ([`ResidentSet`]), the
    /// others loaded as the better of load-all and on-demand.
    ResidentAuto,
}

impl Policy {
    /// Parses `load-all`, `on-demand`, `predicted-M`, `resident-N`, `resident-auto` or
    /// `oracle`.
    pub fn parse(s: &str) -> Result<Policy> {
        let count = |prefix: &str| {
            s.strip_prefix(prefix)
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n >= 1)
        };
        match s {
            "load-all" => Ok(Policy::LoadAll),
            "on-demand" => Ok(Policy::OnDemand),
            "oracle" => Ok(Policy::Oracle),
            "resident-auto" => Ok(Policy::ResidentAuto),
            _ => match (count("predicted-"), count("resident-")) {
                (Some(m), _) => Ok(Policy::Predicted(m)),
                (_, Some(n)) => Ok(Policy::ResidentTop(n)),
                _ => Err(ModelError::Invalid(format!(
                    "policy '{s}': expected load-all, on-demand, predicted-M (M ≥ 1 experts per \
                     layer, e.g. predicted-2), resident-N (N ≥ 1 experts kept in SRAM over all \
                     layers), resident-auto or oracle"
                ))),
            },
        }
    }

    /// Whether it keeps experts resident (its instances need a [`ResidentSet`]).
    pub fn is_resident(&self) -> bool {
        matches!(self, Policy::ResidentTop(_) | Policy::ResidentAuto)
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
            Policy::ResidentTop(n) => format!("resident-{n}"),
            Policy::ResidentAuto => "resident-auto".into(),
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
    /// A parallel set (with parallel sets only): the step's `set`-th.
    Set {
        /// Its index among the step's sets.
        set: usize,
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
    /// Per parallel set, the experts (layer, expert) among its members.
    set_experts: Vec<Vec<(usize, usize)>>,
    /// `[layer][expert]`: receives tokens.
    touched: Vec<Vec<bool>>,
    /// Weight bytes of one expert (every expert has the same).
    expert_weight_bytes: u64,
    /// Per operator, the SRAM per core its expert weights reserve when resident
    /// ([`share_per_core`]); 0 for an operator without expert weights.
    shares: Vec<u64>,
}

/// `graph` with every output operator whose weight exceeds the chip's SRAM cut into column
/// chunks of at most a quarter of it, as the request layer cuts a dense model (the LM head
/// of a model on a Tensix chip; docs/chips.md, "Weights larger than the chip"); the request
/// layer warns of each cut, once per run.
fn fitted(mut graph: Graph, memo: &InstanceMemo) -> Graph {
    let sram = memo.total_sram_bytes();
    graph.split_wide_outputs(sram, sram / 4);
    graph
}

impl StepInstances {
    /// The operators of `model`'s step in which experts receive `counts` tokens.
    pub fn build(
        model: &ZooModel,
        params: &ZooParams,
        counts: &ExpertTokens,
        memo: &InstanceMemo,
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
        let graph = fitted(model.build_slots(params, &slots_counts)?, memo);
        // One expert's weights: the first expert's (a model's first layers may be dense).
        let first = graph.ops.iter().find_map(|o| o.expert());
        let expert_weight_bytes = graph
            .ops
            .iter()
            .filter(|o| first.is_some() && o.expert() == first)
            .flat_map(|o| o.inputs())
            .filter(|t| t.role == Role::Weight)
            .map(|t| t.bytes().0)
            .sum();
        let cores = memo.cores();
        let share = |op: &Operator| -> u64 {
            op.inputs()
                .iter()
                .filter(|t| t.role == Role::Weight)
                .map(|t| share_per_core(t.bytes().0, cores))
                .sum()
        };
        let mut inst = memo.instance(&graph)?;
        let mut sets = if memo.parallel() {
            StepSets::of(memo, &fitted(model.build_slots(params, counts)?, memo))?
        } else {
            StepSets::default()
        };
        let mut ops = Vec::with_capacity(inst.ops.len() + layers);
        let mut slots = Vec::with_capacity(ops.capacity());
        let mut shares = Vec::with_capacity(ops.capacity());
        let mut waits = vec![usize::MAX; layers];
        let built_ops = std::mem::take(&mut inst.ops);
        let mut wait_after = |layer: usize, ops: &mut Vec<InstanceOp>, slots: &mut Vec<Slot>| {
            waits[layer] = ops.len();
            ops.push(wait_op(layer));
            slots.push(Slot::Wait { layer });
        };
        for (op, built) in graph.ops.iter().zip(built_ops) {
            if let Some(&set) = sets.by_op.get(&op.name) {
                // A set stands at its first member's place; its other members are in it.
                if let Some(made) = sets.ops[set].take() {
                    let routers = sets.routers[set].clone();
                    ops.push(made);
                    slots.push(Slot::Set { set });
                    for layer in routers {
                        wait_after(layer, &mut ops, &mut slots);
                    }
                }
                continue;
            }
            match op.expert() {
                Some((layer, expert)) if !touched[layer][expert] => {
                    // Only the operators with the expert's weights stay, computing nothing.
                    if !op.inputs().iter().any(|t| t.role == Role::Weight) {
                        continue;
                    }
                    ops.push(idle(built));
                    slots.push(Slot::Idle { layer, expert });
                    shares.push(share(op));
                }
                Some((layer, expert)) => {
                    ops.push(built);
                    slots.push(Slot::Expert { layer, expert });
                    shares.push(share(op));
                }
                None => {
                    let wait = op.top_k();
                    ops.push(built);
                    slots.push(Slot::Other);
                    if let Some(layer) = wait {
                        wait_after(layer, &mut ops, &mut slots);
                    }
                }
            }
        }
        // Every operator but the experts' reserves nothing when resident.
        let mut at = 0;
        let shares = slots
            .iter()
            .map(|s| match s {
                Slot::Expert { .. } | Slot::Idle { .. } => {
                    at += 1;
                    shares[at - 1]
                }
                _ => 0,
            })
            .collect();
        let mut base = Instance { ops, ..inst };
        if memo.parallel() {
            base.name.push_str(", expert-parallel");
            if !sets.experts.is_empty() {
                base.format = INSTANCE_FORMAT_PARALLEL.into();
            }
        }
        Ok(StepInstances {
            base,
            slots,
            waits,
            set_experts: sets.experts,
            touched,
            expert_weight_bytes,
            shares,
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
            // A resident policy's other experts, without its set: on demand.
            Policy::OnDemand | Policy::Oracle | Policy::ResidentTop(_) | Policy::ResidentAuto => {
                false
            }
        }
    }

    /// Experts whose weights policy `p` loads in this step: those with tokens, and the idle
    /// ones it preloads; with `resident`, none of its experts.
    pub fn experts_loaded(
        &self,
        p: &Policy,
        ranking: &[Vec<usize>],
        resident: Option<&ResidentSet>,
    ) -> usize {
        let p = rest_of(p, resident);
        self.touched
            .iter()
            .enumerate()
            .map(|(l, t)| {
                t.iter()
                    .enumerate()
                    .filter(|&(e, &x)| x || Self::loads_idle(&p, ranking, l, e))
                    .filter(|&(e, _)| !resident.is_some_and(|r| r.holds(l, e)))
                    .count()
            })
            .sum()
    }

    /// Expert weight bytes policy `p` loads in this step (with `resident`, none of its
    /// experts').
    pub fn expert_bytes(
        &self,
        p: &Policy,
        ranking: &[Vec<usize>],
        resident: Option<&ResidentSet>,
    ) -> u64 {
        self.experts_loaded(p, ranking, resident) as u64 * self.expert_weight_bytes
    }

    /// The instance policy `p` faces; `ranking[l]` is layer l's experts, most likely first
    /// (used by `predicted-m`).
    pub fn instance(&self, p: &Policy, ranking: &[Vec<usize>]) -> Instance {
        self.instance_with(p, ranking, None)
    }

    /// The instance policy `p` faces with the experts of `resident` kept in SRAM (the others
    /// following its `rest`, or `p` itself for the oracle), by the rules [`ResidentSet`]'s
    /// module states. Returns it named by `p`.
    pub fn instance_with(
        &self,
        p: &Policy,
        ranking: &[Vec<usize>],
        resident: Option<&ResidentSet>,
    ) -> Instance {
        let rest = rest_of(p, resident);
        let mut inst = self.rest_instance(&rest, ranking);
        inst.name = format!("{}, policy {}", self.base.name, p.name());
        if let Some(set) = resident {
            resident::apply(&mut inst, set, &self.slots, &self.shares);
            inst.name
                .push_str(&format!(", {} experts resident", set.count()));
        }
        inst
    }

    /// SRAM per core that `set` reserves in this step's instances.
    pub fn reserved_bytes(&self, set: &ResidentSet) -> u64 {
        self.slots
            .iter()
            .zip(&self.shares)
            .filter(|(s, _)| match **s {
                Slot::Expert { layer, expert } | Slot::Idle { layer, expert } => {
                    set.holds(layer, expert)
                }
                _ => false,
            })
            .map(|(_, &b)| b)
            .sum()
    }

    /// SRAM per core one expert reserves when resident.
    pub fn expert_share(&self) -> u64 {
        let first = self
            .slots
            .iter()
            .zip(&self.shares)
            .find_map(|(s, _)| match *s {
                Slot::Expert { layer, expert } | Slot::Idle { layer, expert } => {
                    Some((layer, expert))
                }
                _ => None,
            });
        first.map_or(0, |(l, e)| {
            self.reserved_bytes(&ResidentSet::new(l + 1, e + 1, &[(l, e)], Policy::OnDemand))
        })
    }

    /// The instance of a policy that keeps nothing resident.
    fn rest_instance(&self, p: &Policy, ranking: &[Vec<usize>]) -> Instance {
        let mut inst = self.base.clone();
        for (j, slot) in self.slots.iter().enumerate() {
            match *slot {
                Slot::Idle { layer, expert } if !Self::loads_idle(p, ranking, layer, expert) => {
                    let op = &mut inst.ops[j];
                    op.hbm_cycles = Cycles::ZERO;
                    op.options = vec![empty_option()].into();
                }
                Slot::Expert { layer, expert }
                    if released(p, ranking, layer, expert)
                        && inst.ops[j].hbm_cycles > Cycles::ZERO =>
                {
                    // Its load may work from the wait stage on: W_j = j − wait index.
                    inst.ops[j].preload_window = Some((j - self.waits[layer]) as u32);
                }
                Slot::Set { set } => {
                    let experts = &self.set_experts[set];
                    let any = experts.iter().any(|&(l, e)| released(p, ranking, l, e));
                    if any && inst.ops[j].hbm_cycles > Cycles::ZERO {
                        // From the last of its routers' wait stages on.
                        let wait = experts.iter().map(|&(l, _)| self.waits[l]).max();
                        if let Some(wait) = wait.filter(|&w| w < j) {
                            inst.ops[j].preload_window = Some((j - wait) as u32);
                        }
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

/// The policy the experts outside `resident` follow under `p`: its set's rest for a resident
/// policy (on demand without a set), `p` itself otherwise.
fn rest_of(p: &Policy, resident: Option<&ResidentSet>) -> Policy {
    match (p.is_resident(), resident) {
        (true, Some(set)) => set.rest,
        (true, None) => Policy::OnDemand,
        (false, _) => *p,
    }
}

/// Whether policy `p` loads expert `e` of layer `l` (which has tokens) only after its router:
/// on demand, or not predicted.
fn released(p: &Policy, ranking: &[Vec<usize>], l: usize, e: usize) -> bool {
    match p {
        Policy::OnDemand | Policy::ResidentTop(_) | Policy::ResidentAuto => true,
        Policy::Predicted(m) => !predicted(ranking, l, *m, e),
        Policy::LoadAll | Policy::Oracle => false,
    }
}

/// A step's parallel sets (with parallel sets only), from the step's own graph (only the
/// experts with tokens): each set's operator until it is placed, which graph operator is in
/// which set, each set's experts and the layers whose router (top-k) is in it.
#[derive(Default)]
struct StepSets {
    ops: Vec<Option<InstanceOp>>,
    by_op: HashMap<String, usize>,
    experts: Vec<Vec<(usize, usize)>>,
    routers: Vec<Vec<usize>>,
}

impl StepSets {
    fn of(memo: &InstanceMemo, real: &crate::graph::Graph) -> Result<StepSets> {
        let mut sets = StepSets::default();
        for step in memo.parallel_steps(real)? {
            let ParallelStep::Set { members, op } = step else {
                continue;
            };
            let k = sets.ops.len();
            let ops: Vec<&Operator> = members.iter().flatten().map(|&o| &real.ops[o]).collect();
            let mut experts: Vec<(usize, usize)> = ops.iter().filter_map(|o| o.expert()).collect();
            experts.dedup();
            sets.routers
                .push(ops.iter().filter_map(|o| o.top_k()).collect());
            sets.experts.push(experts);
            sets.by_op
                .extend(ops.into_iter().map(|o| (o.name.clone(), k)));
            sets.ops.push(Some(op));
        }
        Ok(sets)
    }
}

/// The operator of the stage after layer `layer`'s router: it computes and loads nothing.
fn wait_op(layer: usize) -> InstanceOp {
    InstanceOp {
        name: format!("l{layer}.moe.wait"),
        hbm_cycles: Cycles::ZERO,
        options: vec![empty_option()].into(),
        flops: Some(0.0),
        preload_window: None,
        parallel: None,
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
        members: None,
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
    }]
    .into();
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
