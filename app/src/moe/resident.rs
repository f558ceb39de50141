//! Which experts a resident policy keeps in SRAM (docs/moe.md, "Resident experts").
//!
//! Both resident policies rank the experts by how often they are needed: their *presence*,
//! the probability that a step gives them a token, 1 − (1 − p)^n for n tokens of which each
//! picks the expert with probability p ([`elk_model::routing::Routing::inclusion`]); under the
//! balanced routing, whose steps are all alike, 1 or 0 as its step has it.
//! Keeping the n most present experts is the optimum of the knapsack "save the most expert
//! loads per step in expectation under n experts' SRAM" (every expert weighs the same:
//! [`top_by_value`]), so the set of a given size is certified optimal for that objective.
//!
//! - `resident-N` keeps the N most present experts and loads the others on demand.
//! - `resident-auto` chooses N and the others' policy (load-all or on-demand) by the
//!   expected step makespan: each candidate is scheduled by the run's heuristics on
//!   [`CALIBRATION_STEPS`] calibration steps, judged by the simulator, and the lowest mean
//!   wins. The candidates with N = 0 are load-all and on-demand themselves, so on those steps
//!   resident-auto's mean is never above the better of the two. The N searched are a grid up
//!   to the most the SRAM allows: the choice of N is measured, not proven.

use super::setup::{best_schedule, Setup};
use super::spec::MoeSpec;
use crate::{AppError, Result};
use elk_model::build::InstanceMemo;
use elk_model::load_policy::{top_by_value, Policy, ResidentSet, StepInstances};
use elk_model::zoo::ZooModel;
use elk_stage::method::Method;
use rayon::prelude::*;
use serde::Serialize;

/// Calibration steps on which resident-auto's candidates are scheduled (fewer when the run
/// has fewer steps; one for the balanced routing, whose steps are all alike).
pub const CALIBRATION_STEPS: usize = 4;

/// Mixed into the run's seed for the calibration stream, so that no calibration step is one
/// of the run's.
const CALIBRATION_SEED: u64 = 0xCA11_B4A7_E5EE_D000;

/// A resident policy's set, as `moe` reports it.
#[derive(Clone, Debug, Serialize)]
pub struct ResidentReport {
    /// `resident-auto` or `resident-N`.
    pub policy: String,
    /// The policy of the experts not resident.
    pub rest: String,
    /// Experts resident, over all layers.
    pub experts: usize,
    /// Routed experts of the model's layers.
    pub of_experts: usize,
    /// Experts resident per MoE layer.
    pub experts_per_layer: Vec<usize>,
    /// The resident experts, named as their operators are (`l5.moe.e110`: model layer 5's
    /// expert 110; a model's dense layers have none).
    pub resident: Vec<String>,
    /// SRAM per core they reserve, bytes.
    pub sram_bytes_per_core: u64,
    /// That share of the chip's SRAM per core, %.
    pub sram_pct: f64,
    /// Expert weight bytes per step the set saves in expectation (over the presence
    /// estimate): every resident expert's under load-all, each one's presence times its
    /// bytes under on-demand.
    pub expected_bytes_saved_per_step: f64,
    /// The knapsack's certified gap for that objective, % (0: equal item sizes make the
    /// top-N optimal).
    pub knapsack_gap_pct: f64,
    /// resident-auto's search (absent for resident-N).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
}

/// resident-auto's search over the number of resident experts and the others' policy.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// Calibration steps each candidate was scheduled on.
    pub steps: usize,
    /// The most experts the SRAM leaves room for (beside the largest operator's smallest
    /// footprint).
    pub max_experts: usize,
    /// The share of the chip's SRAM per core one resident expert takes, %.
    pub expert_sram_pct: f64,
    /// Every candidate, in search order.
    pub candidates: Vec<Candidate>,
    /// The chosen candidate's mean, ms.
    pub chosen_mean_ms: f64,
    /// The better of load-all and on-demand (the candidates with no expert resident) on the
    /// same steps, ms: what the chosen set saves is the difference.
    pub without_resident_ms: f64,
}

/// One candidate of resident-auto's search.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// The others' policy.
    pub rest: String,
    /// Experts resident.
    pub experts: usize,
    /// Mean judged makespan over the calibration steps, ms (`None`: no heuristic found a
    /// schedule on some step).
    pub mean_ms: Option<f64>,
}

/// A run's resident policies: per policy of the run, its set (`None` for the others), and
/// what each set is.
#[derive(Clone, Debug, Default)]
pub struct Residents {
    /// Aligned with the run's policies.
    pub sets: Vec<Option<ResidentSet>>,
    /// One per resident policy, in the policies' order.
    pub reports: Vec<ResidentReport>,
}

/// The sets of `setup`'s resident policies on `model`'s run `spec`.
pub(super) fn choose(
    model: &ZooModel,
    spec: &MoeSpec,
    setup: &Setup,
    memo: &InstanceMemo,
    methods: &[Box<dyn Method>],
) -> Result<Residents> {
    if !setup.policies.iter().any(Policy::is_resident) {
        return Ok(Residents {
            sets: vec![None; setup.policies.len()],
            reports: Vec::new(),
        });
    }
    let calibration = Calibrating::new(model, spec, setup, memo)?;
    let mut residents = Residents::default();
    for p in &setup.policies {
        let chosen = match p {
            Policy::ResidentTop(n) => {
                calibration.fits(*p, *n)?;
                Some(calibration.top(*p, *n, Policy::OnDemand, None)?)
            }
            Policy::ResidentAuto => Some(calibration.auto(methods)?),
            _ => None,
        };
        residents.sets.push(chosen.as_ref().map(|(s, _)| s.clone()));
        residents.reports.extend(chosen.map(|(_, r)| r));
    }
    Ok(residents)
}

/// What choosing a set needs: each expert's presence, and the calibration steps.
struct Calibrating<'a> {
    setup: &'a Setup,
    /// `presence[l][e]`: the probability that a step gives it a token.
    presence: Vec<Vec<f64>>,
    steps: Vec<StepInstances>,
    expert_bytes: u64,
    share: u64,
    sram: u64,
}

impl Calibrating<'_> {
    fn new<'a>(
        model: &ZooModel,
        spec: &MoeSpec,
        setup: &'a Setup,
        memo: &InstanceMemo,
    ) -> Result<Calibrating<'a>> {
        let seed = spec.seed ^ CALIBRATION_SEED;
        let (layers, e) = (setup.layers, setup.moe.experts as usize);
        let presence = if spec.routing.is_deterministic() {
            // Every step alike: one step says which experts have tokens.
            let counts = spec
                .routing
                .sample(&setup.moe, layers, setup.tokens, seed, 0)?
                .counts(setup.moe.experts);
            (0..layers)
                .map(|l| {
                    let row = counts.layer(l);
                    (0..e)
                        .map(|x| f64::from(u8::from(row.get(x).is_some_and(|&n| n > 0))))
                        .collect()
                })
                .collect()
        } else {
            // A token picks the expert with probability p, so n tokens leave it without one
            // with probability (1 − p)^n (tokens drawn independently, as every sampled
            // routing draws them; a trace's tokens are its own, and this is their average).
            (0..layers)
                .map(|l| {
                    spec.routing
                        .inclusion(&setup.moe, l)
                        .iter()
                        .map(|p| 1.0 - (1.0 - p).powf(setup.tokens as f64))
                        .collect()
                })
                .collect()
        };
        let n_steps = if spec.routing.is_deterministic() {
            1
        } else {
            CALIBRATION_STEPS.min(spec.steps.max(1))
        };
        let steps = (0..n_steps as u64)
            .map(|step| setup.step_seeded(model, spec, seed, step, memo))
            .collect::<Result<Vec<_>>>()?;
        let first = &steps[0];
        let sram = first.instance(&Policy::Oracle, &setup.ranking).sram_bytes.0;
        Ok(Calibrating {
            setup,
            presence,
            expert_bytes: first.expert_weight_bytes(),
            share: first.expert_share(),
            sram,
            steps,
        })
    }

    /// The model layer of MoE layer `index` (the routing's layer).
    fn model_layer(&self, index: usize) -> usize {
        let moe = &self.setup.moe;
        (0..)
            .filter(|&l| moe.is_moe_layer(l))
            .nth(index)
            .unwrap_or(index)
    }

    fn of_experts(&self) -> usize {
        self.presence.iter().map(Vec::len).sum()
    }

    /// The `n` most present experts, the others following `rest`, reported as policy `p`.
    fn top(
        &self,
        p: Policy,
        n: usize,
        rest: Policy,
        calibration: Option<Calibration>,
    ) -> Result<(ResidentSet, ResidentReport)> {
        let all = self.of_experts();
        if n > all {
            return Err(AppError::Model(elk_model::ModelError::Invalid(format!(
                "policy '{}': the run has {all} routed experts ({} layers × {}), so {n} cannot \
                 be resident",
                p.name(),
                self.setup.layers,
                self.setup.moe.experts
            ))));
        }
        let e = self.setup.moe.experts as usize;
        let flat: Vec<f64> = self.presence.iter().flatten().copied().collect();
        let chosen: Vec<(usize, usize)> = top_by_value(&flat, n)
            .into_iter()
            .map(|i| (i / e, i % e))
            .collect();
        let set = ResidentSet::new(self.setup.layers, e, &chosen, rest);
        let reserved = self.steps[0].reserved_bytes(&set);
        let saved_per_expert = |&(l, x): &(usize, usize)| match rest {
            Policy::LoadAll => 1.0,
            _ => self.presence[l][x],
        };
        let report = ResidentReport {
            policy: p.name(),
            rest: rest.name(),
            experts: set.count(),
            of_experts: all,
            experts_per_layer: set.per_layer(),
            resident: chosen
                .iter()
                .map(|&(l, x)| format!("l{}.moe.e{x}", self.model_layer(l)))
                .collect(),
            sram_bytes_per_core: reserved,
            sram_pct: 100.0 * reserved as f64 / self.sram.max(1) as f64,
            expected_bytes_saved_per_step: chosen.iter().map(saved_per_expert).sum::<f64>()
                * self.expert_bytes as f64,
            knapsack_gap_pct: 0.0,
            calibration,
        };
        Ok((set, report))
    }

    /// Refuses `n` resident experts (policy `p`) when they leave no room for the largest of
    /// every operator's smallest footprint.
    fn fits(&self, p: Policy, n: usize) -> Result<()> {
        let max = self.max_experts();
        if n <= max || n > self.of_experts() {
            return Ok(());
        }
        Err(AppError::Model(elk_model::ModelError::Invalid(format!(
            "policy '{}': {n} resident experts reserve {} bytes per core of the chip's {} \
             bytes of SRAM per core, leaving too little for the largest operator's smallest \
             footprint ({} bytes); at most {max} fit",
            p.name(),
            n as u64 * self.share,
            self.sram,
            self.need()
        ))))
    }

    /// The largest of every operator's smallest footprint, bytes per core: no schedule can
    /// hold less in some stage.
    fn need(&self) -> u64 {
        let oracle = self.steps[0].instance(&Policy::Oracle, &self.setup.ranking);
        oracle
            .ops
            .iter()
            .filter_map(|o| o.options.iter().map(|x| x.hot.0).min())
            .max()
            .unwrap_or(0)
    }

    /// The most experts whose reservation leaves room for the largest of every operator's
    /// smallest footprint (no schedule can hold less).
    fn max_experts(&self) -> usize {
        let room = self.sram.saturating_sub(self.need()) / self.share.max(1);
        (room as usize).min(self.of_experts())
    }

    /// resident-auto: the candidate of lowest mean judged makespan on the calibration steps.
    fn auto(&self, methods: &[Box<dyn Method>]) -> Result<(ResidentSet, ResidentReport)> {
        let max = self.max_experts();
        let mut counts: Vec<usize> = [0, 1, 2, 4, 8, 12, 16]
            .iter()
            .map(|&sixteenths| max * sixteenths / 16)
            .collect();
        counts.dedup();
        let rests = [Policy::LoadAll, Policy::OnDemand];
        let grid: Vec<(Policy, usize)> = rests
            .iter()
            .flat_map(|&r| counts.iter().map(move |&n| (r, n)))
            .collect();
        let candidates: Vec<Candidate> = grid
            .par_iter()
            .map(|&(rest, n)| self.measure(rest, n, methods))
            .collect::<Result<_>>()?;
        let best = candidates
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.mean_ms.map(|m| (i, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        let Some((at, _)) = best else {
            return Err(AppError::Model(elk_model::ModelError::Invalid(
                "policy 'resident-auto': no candidate had a schedule on every calibration \
                 step, not even load-all or on-demand with no expert resident"
                    .into(),
            )));
        };
        let (rest, n) = grid[at];
        let without_resident_ms = candidates
            .iter()
            .filter(|c| c.experts == 0)
            .filter_map(|c| c.mean_ms)
            .fold(f64::INFINITY, f64::min);
        let calibration = Calibration {
            steps: self.steps.len(),
            max_experts: max,
            expert_sram_pct: 100.0 * self.share as f64 / self.sram.max(1) as f64,
            chosen_mean_ms: candidates[at].mean_ms.unwrap_or(f64::NAN),
            without_resident_ms,
            candidates,
        };
        self.top(Policy::ResidentAuto, n, rest, Some(calibration))
    }

    /// The mean judged makespan of keeping the `n` most present experts, the others as
    /// `rest`, over the calibration steps.
    fn measure(&self, rest: Policy, n: usize, methods: &[Box<dyn Method>]) -> Result<Candidate> {
        let (set, _) = self.top(Policy::ResidentAuto, n, rest, None)?;
        let mut total = 0.0;
        for si in &self.steps {
            let inst = si.instance_with(&Policy::ResidentAuto, &self.setup.ranking, Some(&set));
            match best_schedule(&inst, methods) {
                Ok((_, t, _)) => total += inst.ms(t),
                Err(_) => {
                    return Ok(Candidate {
                        rest: rest.name(),
                        experts: n,
                        mean_ms: None,
                    })
                }
            }
        }
        Ok(Candidate {
            rest: rest.name(),
            experts: n,
            mean_ms: Some(total / self.steps.len() as f64),
        })
    }
}
