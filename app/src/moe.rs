//! MoE load policies over sampled routing steps (docs/moe.md): for each step, each policy's
//! instance is scheduled by the heuristics, judged by the simulator, and set against the
//! oracle's schedule and the oracle's certified lower bound.
//!
//! A policy's makespan is a distribution over steps (mean, p50, p99), as is the expert weight
//! it loads. The oracle's instance is a relaxation of every policy's
//! ([`elk_model::load_policy`]), so:
//! - the oracle's makespan is the best of its own schedules and of every policy's schedule
//!   without its idle loads (each re-judged on the oracle's instance): never above a policy's
//!   on any step, by construction, and checked;
//! - a certified lower bound of the oracle's instance ([`StepBound`]) bounds every policy's
//!   makespan of that step.
//!
//! What a run reports (the per-step rows and each policy's summary) is in `moe/results.rs`.

mod resident;
mod results;
mod setup;
mod spec;

pub use resident::{Calibration, Candidate, ResidentReport, Residents};
use results::summarise;
pub use results::{
    p50_p99, title, MoeReport, MoeResults, MoeSection, PolicyStep, PolicySummary, StepBound,
    StepResult,
};
use setup::{best_schedule, methods_of, Setup};
pub use spec::{experts_of, MoeInputs, MoeSpec};

use crate::{AppError, Result};
use elk_model::build::InstanceMemo;
use elk_model::load_policy::{Policy, ResidentSet, StepInstances};
use elk_model::zoo::ZooModel;
use elk_sim::{evaluate, validate};
use elk_solver::bounds::BoundSource;
use elk_stage::instance::Instance;
use elk_stage::units::Cycles;
use rayon::prelude::*;

/// The heuristics that schedule every policy's instance by default: the fastest two that
/// honour a load's own window (Elk's timeline and its greedy allocator); the best judged
/// schedule of the two is the policy's.
pub const DEFAULT_METHODS: [&str; 1] = ["elk-dyn"];

/// What [`run`] reports as it goes (for a progress display; nothing depends on it).
#[derive(Clone, Copy, Debug)]
pub enum MoeProgress<'a> {
    /// `done` of `of` steps have their instances built (one at a time, in order).
    Built {
        /// Steps built.
        done: usize,
        /// Steps in all.
        of: usize,
    },
    /// `done` of `of` distinct oracle instances have their certified bound (only with a
    /// bound other than the roofline, which is instant; steps in parallel).
    Bounded {
        /// Instances bounded.
        done: usize,
        /// Distinct instances in all.
        of: usize,
    },
    /// `done` of `of` (step, policy) instances are scheduled by every method (steps run in
    /// parallel); `last` is the one just finished, e.g. "step 3, on-demand".
    Scheduled {
        /// Instances scheduled.
        done: usize,
        /// Instances in all.
        of: usize,
        /// The instance just scheduled.
        last: &'a str,
    },
}

/// Runs every policy on `spec.steps` sampled steps of `model`, each step bounded by the
/// roofline, telling `progress` as each step is built and each policy's instance is
/// scheduled.
pub fn run(
    model: &ZooModel,
    spec: &MoeSpec,
    progress: &(dyn Fn(MoeProgress) + Sync),
) -> Result<MoeReport> {
    run_with_bound(model, spec, StepBound::Roofline, progress)
}

/// [`run`], each step bounded by `bound`. With parallel sets (`spec.opts.parallel`), the
/// steps run without them, then with them ([`MoeReport::expert_parallel`]).
pub fn run_with_bound(
    model: &ZooModel,
    spec: &MoeSpec,
    bound: StepBound,
    progress: &(dyn Fn(MoeProgress) + Sync),
) -> Result<MoeReport> {
    let mut memo = InstanceMemo::new(&spec.chip, &spec.opts);
    memo.set_parallel(false);
    let mut report = run_on(model, spec, bound, progress, &memo, None)?;
    if spec.opts.parallel {
        memo.set_parallel(true);
        let with = run_on(model, spec, bound, progress, &memo, Some(&report))?;
        report.expert_parallel = Some(Box::new(with));
    }
    Ok(report)
}

/// [`run_with_bound`] with or without parallel sets, as `memo` builds the steps; with them,
/// `without` is the run without, whose steps each policy may keep ([`run_step`]).
fn run_on(
    model: &ZooModel,
    spec: &MoeSpec,
    bound: StepBound,
    progress: &(dyn Fn(MoeProgress) + Sync),
    memo: &InstanceMemo,
    without: Option<&MoeReport>,
) -> Result<MoeReport> {
    let setup = Setup::new(model, spec)?;
    let methods = methods_of(spec)?;
    let residents = resident::choose(model, spec, &setup, memo, &methods)?;
    // The steps are built in parallel: each plans only the shapes the memo lacks.
    let done = std::sync::atomic::AtomicUsize::new(0);
    let built: Vec<StepInstances> = (0..spec.steps)
        .into_par_iter()
        .map(|step| {
            let si = setup.step(model, spec, step as u64, memo)?;
            let done = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(MoeProgress::Built {
                done,
                of: spec.steps,
            });
            Ok(si)
        })
        .collect::<Result<_>>()?;
    let touched_total: usize = built.iter().map(StepInstances::touched).sum();
    let bounds = step_bounds(
        &built,
        &setup.ranking,
        &residents,
        bound,
        (spec.opts.plan_cache.as_ref(), progress),
    )?;
    let scheduled = std::sync::atomic::AtomicUsize::new(0);
    let of = spec.steps * setup.policies.len();
    let tag = if memo.parallel() {
        ", expert-parallel"
    } else {
        ""
    };
    let on_scheduled = |step: usize, p: &Policy| {
        let done = scheduled.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let last = format!("step {step}, {}{tag}", p.name());
        progress(MoeProgress::Scheduled {
            done,
            of,
            last: &last,
        });
    };
    let steps: Vec<StepResult> = built
        .par_iter()
        .zip(&bounds)
        .enumerate()
        .map(|(step, (si, b))| {
            run_step(
                step,
                si,
                *b,
                &setup.policies,
                &setup.ranking,
                &residents.sets,
                &methods,
                &on_scheduled,
                without.map(|w| &w.steps[step]),
            )
        })
        .collect::<Result<_>>()?;
    let summary = summarise(&setup.policies, &steps, setup.layers);
    let e = setup.moe.experts as f64;
    let k = setup.moe.top_k.min(setup.moe.experts) as f64;
    Ok(MoeReport {
        summary,
        mean_touched_experts_per_layer: touched_total as f64
            / (spec.steps.max(1) * setup.layers.max(1)) as f64,
        uniform_expected_experts_per_layer: e * (1.0 - (1.0 - k / e).powf(setup.tokens as f64)),
        planned_shapes: memo.shapes(),
        warnings: steps
            .iter()
            .find_map(|s| s.dominant.clone())
            .into_iter()
            .collect(),
        steps,
        resident: residents.reports,
        expert_parallel: None,
    })
}

/// The instance each policy of `spec` (and the oracle, last) faces in step `step`: what
/// `elk-opt moe --emit-instances` writes, e.g. for `solve --exact` on a policy's instance.
pub fn step_instances(
    model: &ZooModel,
    spec: &MoeSpec,
    step: u64,
) -> Result<Vec<(Policy, Instance)>> {
    let setup = Setup::new(model, spec)?;
    let memo = InstanceMemo::new(&spec.chip, &spec.opts);
    let methods = methods_of(spec)?;
    let residents = resident::choose(model, spec, &setup, &memo, &methods)?;
    let si = setup.step(model, spec, step, &memo)?;
    Ok(setup
        .policies
        .iter()
        .zip(&residents.sets)
        .map(|(p, set)| (*p, si.instance_with(p, &setup.ranking, set.as_ref())))
        .collect())
}

/// Each step's certified bound and its source: the lowest of the oracle's instances (the
/// oracle's own, and one per resident set of the run: each bounds the policies that project
/// onto it), each distinct instance bounded once (steps of the balanced routing are all
/// alike), in parallel.
fn step_bounds(
    built: &[StepInstances],
    ranking: &[Vec<usize>],
    residents: &Residents,
    bound: StepBound,
    (plans, progress): Bounding<'_>,
) -> Result<Vec<(Cycles, BoundSource)>> {
    let mut sets: Vec<Option<&ResidentSet>> = vec![None];
    for set in residents.sets.iter().flatten() {
        if !sets.contains(&Some(set)) {
            sets.push(Some(set));
        }
    }
    let per_set: Vec<Vec<(Cycles, BoundSource)>> = sets
        .iter()
        .map(|set| {
            let oracles: Vec<Instance> = built
                .par_iter()
                .map(|si| si.instance_with(&Policy::Oracle, ranking, *set))
                .collect();
            bounds_of(&oracles, bound, (plans, progress))
        })
        .collect::<Result<_>>()?;
    Ok((0..built.len())
        .map(|i| {
            per_set
                .iter()
                .map(|b| b[i])
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap_or((Cycles::ZERO, BoundSource::Roofline))
        })
        .collect())
}

/// Where the steps' bounds are kept (the plan cache's bound cache) and who hears of each
/// one solved.
type Bounding<'a> = (
    Option<&'a elk_model::plan::PlanCache>,
    &'a (dyn Fn(MoeProgress) + Sync),
);

/// The certified bound of each of `oracles`, each distinct instance bounded once (`progress`
/// hears of each, unless the bound is the instant roofline).
fn bounds_of(
    oracles: &[Instance],
    bound: StepBound,
    (plans, progress): Bounding<'_>,
) -> Result<Vec<(Cycles, BoundSource)>> {
    if bound == StepBound::Roofline {
        let roofline = |i: &Instance| {
            (
                elk_solver::bounds::roofline(i).best(),
                BoundSource::Roofline,
            )
        };
        return Ok(oracles.par_iter().map(roofline).collect());
    }
    let hashes: Vec<String> = oracles.iter().map(Instance::content_hash).collect();
    // The first step of each distinct instance.
    let distinct: Vec<usize> = (0..oracles.len())
        .filter(|&i| !hashes[..i].contains(&hashes[i]))
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let solved: Vec<(Cycles, BoundSource)> = distinct
        .par_iter()
        .map(|&i| {
            let b = match bound {
                StepBound::Stage => crate::bound::certified_stage_bound(&oracles[i], plans),
                StepBound::Strongest | StepBound::Roofline => {
                    crate::bound::certified_bound(&oracles[i], plans)
                }
            };
            let done = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(MoeProgress::Bounded {
                done,
                of: distinct.len(),
            });
            b
        })
        .collect::<elk_solver::Result<_>>()?;
    Ok(hashes
        .iter()
        .map(|h| {
            let at = distinct.iter().position(|&i| hashes[i] == *h).unwrap_or(0);
            solved[at]
        })
        .collect())
}

/// One step's policies on `si`. `without` (the run with parallel sets only) is the same step
/// without sets: each policy keeps the faster of its two schedules, as CG-5's union does
/// (docs/core-groups.md), and a policy with no schedule with sets keeps the one without; the
/// oracle is the faster of the two oracles and the bound the lower of the two bounds, so the
/// oracle stays at or below every policy and the bound at or below the oracle.
#[allow(clippy::too_many_arguments)]
fn run_step(
    step: usize,
    si: &StepInstances,
    (bound, bound_source): (Cycles, BoundSource),
    policies: &[Policy],
    ranking: &[Vec<usize>],
    residents: &[Option<ResidentSet>],
    methods: &[Box<dyn elk_stage::method::Method>],
    on_scheduled: &(dyn Fn(usize, &Policy) + Sync),
    without: Option<&StepResult>,
) -> Result<StepResult> {
    let oracle_inst = si.instance(&Policy::Oracle, ranking);
    let set_of = |i: usize| residents.get(i).and_then(Option::as_ref);
    let mut rows = Vec::with_capacity(policies.len());
    let mut oracle_best: Option<(Cycles, String)> = None;
    // Policy i's row of the step without sets, its method marked so.
    let kept = |i: usize| {
        without.map(|w| {
            let mut r = w.policies[i].clone();
            r.method = format!("{} without sets", r.method);
            r
        })
    };
    for (i, p) in policies.iter().enumerate() {
        // The oracle's own instance is the one already built.
        let built;
        let inst = if *p == Policy::Oracle && set_of(i).is_none() {
            &oracle_inst
        } else {
            built = si.instance_with(p, ranking, set_of(i));
            &built
        };
        let found = best_schedule(inst, methods);
        on_scheduled(step, p);
        let (s, t, method) = match (found, kept(i)) {
            (Ok(found), _) => found,
            (Err(_), Some(r)) => {
                if *p != Policy::Oracle {
                    rows.push(r);
                }
                continue;
            }
            (Err(e), None) => return Err(e),
        };
        if *p == Policy::Oracle {
            oracle_best = match oracle_best {
                Some((o, via)) if o <= t => Some((o, via)),
                _ => Some((t, method)),
            };
            continue;
        }
        // This policy's schedule without its idle loads is one of the oracle's (with the
        // policy's resident experts kept as it keeps them).
        let resident_oracle;
        let oracle_of_p = match set_of(i) {
            None => &oracle_inst,
            Some(set) => {
                resident_oracle = si.instance_with(&Policy::Oracle, ranking, Some(set));
                &resident_oracle
            }
        };
        let projected = si.project(&s, oracle_of_p);
        if let Some(v) = validate(oracle_of_p, &projected).into_iter().next() {
            return Err(AppError::Model(elk_model::ModelError::Invalid(format!(
                "step {step}: {}'s schedule without its idle loads is not the oracle's: {v} \
                 (a bug in the policies' instances)",
                p.name()
            ))));
        }
        let tp = evaluate(oracle_of_p, &projected).makespan_cycles;
        if oracle_best.as_ref().is_none_or(|(o, _)| tp < *o) {
            oracle_best = Some((tp, format!("{method} via {}", p.name())));
        }
        let mine = row(p, inst.ms(t), method, si, ranking, set_of(i));
        rows.push(match kept(i) {
            Some(r) if r.makespan_ms < mine.makespan_ms => r,
            _ => mine,
        });
    }
    let mut oracle_row = oracle_best.as_ref().map(|(o, via)| {
        row(
            &Policy::Oracle,
            oracle_inst.ms(*o),
            via.clone(),
            si,
            ranking,
            None,
        )
    });
    if let Some(r) = kept(policies.len() - 1) {
        if oracle_row
            .as_ref()
            .is_none_or(|o| r.makespan_ms < o.makespan_ms)
        {
            oracle_row = Some(r);
        }
    }
    let o = oracle_best.map_or(Cycles::ZERO, |(o, _)| o);
    rows.push(
        oracle_row.unwrap_or_else(|| row(&Policy::Oracle, 0.0, String::new(), si, ranking, None)),
    );
    let dominant = crate::dominant::dominant_class(&oracle_inst, o).map(|d| {
        format!(
            "step {step}, oracle: {}",
            d.warning(oracle_inst.clock_hz, o)
        )
    });
    let (mut bound_ms, mut bound_source) = (oracle_inst.ms(bound), bound_source);
    if let Some(w) = without.filter(|w| w.bound_ms < bound_ms) {
        (bound_ms, bound_source) = (w.bound_ms, w.bound_source);
    }
    Ok(StepResult {
        index: step,
        touched_experts: si.touched(),
        bound_ms,
        bound_source,
        policies: rows,
        dominant,
    })
}

fn row(
    p: &Policy,
    ms: f64,
    method: String,
    si: &StepInstances,
    ranking: &[Vec<usize>],
    resident: Option<&ResidentSet>,
) -> PolicyStep {
    PolicyStep {
        policy: p.name(),
        makespan_ms: ms,
        method,
        loaded_experts: si.experts_loaded(p, ranking, resident),
        expert_bytes: si.expert_bytes(p, ranking, resident),
    }
}

#[cfg(test)]
mod tests {
    use super::best_schedule;

    #[test]
    fn a_method_without_a_schedule_says_why() {
        let inst = elk_stage::corpus::no_schedule_fits();
        let methods: Vec<_> = ["basic", "elk-dyn-greedy"]
            .iter()
            .map(|m| elk_heuristics::by_name(m).unwrap())
            .collect();
        let err = best_schedule(&inst, &methods).unwrap_err().to_string();
        assert!(
            err.contains("tight: no method found a schedule (basic: no schedule: "),
            "{err}"
        );
        assert!(
            err.contains("; elk-dyn-greedy: no schedule: operator a (stage 1) fits in no option"),
            "{err}"
        );
    }
}
