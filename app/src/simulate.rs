//! A schedule judged against its instance, as `simulate --json` and Python's
//! `Schedule.simulate()` both report it: the validator's verdict, the stage model's
//! evaluation with a unit on every number, the method's claim when the simulator disagrees
//! with it, and how to rebuild the instance when the schedule breaks its load-order policy.

use elk_sim::trace::TraceSink;
use elk_sim::{evaluate_with, validate, Evaluation, StageEval, Violation};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;

/// `simulate --json`'s results.
#[derive(Serialize, Debug)]
pub struct Judgement {
    /// The instance's name.
    pub instance: String,
    /// The method that made the schedule.
    pub method: String,
    /// No violation.
    pub valid: bool,
    /// Every rule the schedule breaks, one line each.
    pub violations: Vec<String>,
    /// How to rebuild the instance when the schedule breaks its load-order policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The makespan the method claimed, when the simulator's differs from it by more than
    /// [`elk_sim::CLAIM_TOLERANCE`] (the simulator's is authoritative).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method_claim_cycles: Option<Cycles>,
    /// The stage model's evaluation (valid schedules only).
    #[serde(skip)]
    pub evaluation: Option<Evaluation>,
    /// The evaluation as `--json` prints it.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    evaluation_json: Option<EvaluationJson>,
}

/// Validates `sched` against `inst` and, when it is valid, evaluates it (its events to
/// `sink`). The caller has checked that the schedule is of this instance.
pub fn judge(inst: &Instance, sched: &Schedule, sink: &mut dyn TraceSink) -> Judgement {
    let violations = validate(inst, sched);
    let evaluation = violations
        .is_empty()
        .then(|| evaluate_with(inst, sched, sink));
    Judgement {
        instance: inst.name.clone(),
        method: sched.method.clone(),
        valid: violations.is_empty(),
        violations: violations.iter().map(ToString::to_string).collect(),
        hint: load_order_hint(inst, &violations),
        method_claim_cycles: evaluation
            .as_ref()
            .filter(|e| {
                (e.makespan_cycles - sched.makespan_cycles).abs().get()
                    > elk_sim::CLAIM_TOLERANCE * e.makespan_cycles.get()
            })
            .map(|_| sched.makespan_cycles),
        evaluation_json: evaluation.as_ref().map(EvaluationJson::from),
        evaluation,
    }
}

/// When the schedule breaks the instance's load-order policy: which policy, and the flag
/// that rebuilds the instance with one the schedule meets.
pub fn load_order_hint(inst: &Instance, violations: &[Violation]) -> Option<String> {
    let breaks_policy = violations
        .iter()
        .any(|v| matches!(v, Violation::LoadOrderPolicy { .. }));
    if !breaks_policy {
        return None;
    }
    Some(match inst.load_order {
        LoadOrder::Named(NamedOrder::Fixed) => "the instance has load_order=fixed and this \
            schedule permutes loads; rebuild it with --load-order free"
            .into(),
        LoadOrder::Displacement { max_displacement } => format!(
            "the instance has load_order={{\"max_displacement\": {max_displacement}}} and this \
             schedule moves loads further; rebuild it with --load-order free (or a larger D)"
        ),
        LoadOrder::Named(NamedOrder::Free) => return None,
    })
}

/// The stage model's verdict as `--json` prints it: a unit on every number, the bound
/// counts named, utilisations in percent.
#[derive(Serialize, Debug)]
struct EvaluationJson {
    stages: Vec<StageEval>,
    makespan_cycles: Cycles,
    makespan_ms: f64,
    stages_bound: StagesBound,
    breakdown: BreakdownJson,
    hbm_util_pct: f64,
    noc_util_pct: f64,
    tflops: Option<f64>,
}

/// How many stages each resource bounds.
#[derive(Serialize, Debug)]
struct StagesBound {
    compute_stages: usize,
    noc_stages: usize,
    hbm_stages: usize,
}

/// Where the time goes (Fig 18); the four parts sum to the makespan.
#[derive(Serialize, Debug)]
struct BreakdownJson {
    execute_only_cycles: Cycles,
    preload_only_cycles: Cycles,
    overlapped_cycles: Cycles,
    noc_bound_cycles: Cycles,
}

impl From<&Evaluation> for EvaluationJson {
    fn from(e: &Evaluation) -> EvaluationJson {
        let [compute_stages, noc_stages, hbm_stages] = e.stages_bound;
        let b = &e.breakdown;
        EvaluationJson {
            stages: e.stages.clone(),
            makespan_cycles: e.makespan_cycles,
            makespan_ms: e.makespan_ms,
            stages_bound: StagesBound {
                compute_stages,
                noc_stages,
                hbm_stages,
            },
            breakdown: BreakdownJson {
                execute_only_cycles: b.execute_only,
                preload_only_cycles: b.preload_only,
                overlapped_cycles: b.overlapped,
                noc_bound_cycles: b.noc_bound,
            },
            hbm_util_pct: 100.0 * e.hbm_utilisation,
            noc_util_pct: 100.0 * e.noc_utilisation,
            tflops: e.tflops,
        }
    }
}
