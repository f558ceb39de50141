//! `elk-opt simulate`: judge a schedule against its instance (validate + evaluate).

use clap::Args;
use elk_app::simulate::{judge, Judgement};
use elk_sim::trace::ChromeTrace;
use elk_sim::validate;
use elk_stage::instance::{Instance, InstanceFile};
use elk_stage::schedule::Schedule;
use serde::Serialize;
use std::path::PathBuf;

/// The instance, the schedule, and the outputs.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// The instance (elk-instance/1).
    #[arg(long)]
    instance: PathBuf,
    /// The schedule (elk-schedule/1).
    #[arg(long)]
    schedule: PathBuf,
    /// Write a Chrome trace (open in Perfetto).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    detailed: super::detailed::DetailedFlags,
}

/// `simulate --json`: the inputs.
#[derive(Serialize)]
struct Config<'a> {
    instance: &'a std::path::Path,
    schedule: &'a std::path::Path,
    trace: Option<&'a std::path::Path>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    detailed: Option<super::detailed::ReplayConfig>,
}

/// The schedule broke the stage model's rules (exit code 2: the input is wrong).
#[derive(Debug, thiserror::Error)]
#[error("invalid schedule: {first} ({count} violation(s) in all){}", suffix(.hint))]
pub struct Invalid {
    /// The first violation.
    pub first: String,
    /// How many.
    pub count: usize,
    /// How to rebuild the instance, when that would make the schedule valid.
    pub hint: Option<String>,
}

impl Invalid {
    fn of(inst: &Instance, violations: &[elk_sim::Violation]) -> Invalid {
        Invalid {
            first: violations
                .first()
                .map(ToString::to_string)
                .unwrap_or_default(),
            count: violations.len(),
            hint: elk_app::simulate::load_order_hint(inst, violations),
        }
    }
}

/// `; hint` or nothing.
fn suffix(hint: &Option<String>) -> String {
    hint.as_ref().map(|h| format!("; {h}")).unwrap_or_default()
}

/// Checks first that the schedule was built for this instance (by hash; exit 2 with one
/// line when not), and warns when a schedule without a hash names another instance.
fn check_pairing(inst: &Instance, sched: &Schedule) -> anyhow::Result<()> {
    sched.check_instance(inst)?;
    if sched.instance_hash.is_none() && sched.instance != inst.name {
        eprintln!(
            "warning: {}",
            elk_stage::error::one_line(&format!(
                "the schedule names instance '{}', this instance is '{}' (the schedule has no \
                 instance_hash to check them by)",
                sched.instance, inst.name
            ))
        );
    }
    Ok(())
}

pub fn run(a: SimulateArgs) -> anyhow::Result<()> {
    let file = InstanceFile::read(&a.instance)?;
    let inst = &file.instance;
    let sched = Schedule::read(&a.schedule)?;
    check_pairing(inst, &sched)?;
    let violations = validate(inst, &sched);
    if a.detailed.detailed {
        if !violations.is_empty() {
            return Err(Invalid::of(inst, &violations).into());
        }
        let analytic = elk_sim::evaluate(inst, &sched);
        let config = a.json.then(|| config(&a));
        return a.detailed.run(
            inst,
            file.chip.as_ref(),
            &sched,
            &analytic,
            a.trace.as_ref(),
            config.as_ref(),
        );
    }
    let mut trace = ChromeTrace::new(inst.clock_hz);
    let out = judge(inst, &sched, &mut trace);
    if let (Some(_), Some(path)) = (&out.evaluation, &a.trace) {
        super::output::write_atomic(path, &trace.to_json())?;
    }
    if a.json {
        super::json::print_json("simulate", &config(&a), &out)?;
    } else {
        print_human(&out);
    }
    if violations.is_empty() {
        Ok(())
    } else {
        Err(Invalid::of(inst, &violations).into())
    }
}

/// The inputs of `a` as `--json` prints them.
fn config(a: &SimulateArgs) -> Config<'_> {
    Config {
        instance: &a.instance,
        schedule: &a.schedule,
        trace: a.trace.as_deref(),
        detailed: a.detailed.detailed.then(|| a.detailed.config()),
    }
}

fn print_human(out: &Judgement) {
    println!("{} — schedule by {}", out.instance, out.method);
    for v in &out.violations {
        println!("violation: {v}");
    }
    if let Some(h) = &out.hint {
        println!("hint: {h}");
    }
    let Some(e) = &out.evaluation else {
        return;
    };
    println!(
        "makespan:        {} = {:.6} ms",
        e.makespan_cycles, e.makespan_ms
    );
    if let Some(claim) = out.method_claim_cycles {
        println!("method's claim:  {claim} (the simulator's number above is authoritative)");
    }
    let [c, n, h] = e.stages_bound;
    println!(
        "stages bound by: compute {c}, NoC {n}, HBM {h} (of {} stages incl. prologue)",
        e.stages.len()
    );
    let b = &e.breakdown;
    let pct = |x: elk_stage::units::Cycles| {
        100.0 * x.get() / e.makespan_cycles.get().max(f64::MIN_POSITIVE)
    };
    println!(
        "time breakdown:  execute-only {:.1}%, overlapped {:.1}%, preload-only {:.1}%, NoC-bound {:.1}%",
        pct(b.execute_only),
        pct(b.overlapped),
        pct(b.preload_only),
        pct(b.noc_bound)
    );
    println!(
        "HBM utilisation: {:.1}%   NoC utilisation: {:.1}%",
        100.0 * e.hbm_utilisation,
        100.0 * e.noc_utilisation
    );
    if let Some(t) = e.tflops {
        println!("achieved:        {t:.2} TFLOP/s");
    }
}
