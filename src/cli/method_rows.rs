//! One row per method, shared by `solve`, `compare` and `gap`: run through
//! [`elk_sim::run_judged`] (the one run-and-judge path), with the method names clap accepts
//! read from the one registry: the faithful [`elk_heuristics::NAMES`], then the named
//! [`elk_heuristics::VARIANTS`], then each of them re-timed (`NAME+retime`; `compare` adds
//! the rows of [`COMPARE_RETIMED`], re-timing the schedules it already has).

use elk_heuristics::ideal;
use elk_sim::{Evaluation, Judged};
use elk_solver::{Retimed, RETIME_SUFFIX};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome, Solved};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;
use std::time::Instant;

/// Every registered heuristic: the faithful ones, then the variants.
pub(super) fn heuristic_names() -> impl Iterator<Item = &'static str> {
    elk_heuristics::NAMES
        .into_iter()
        .chain(elk_heuristics::VARIANTS)
}

/// The legend line of the re-timed rows, under every table that has them.
pub(super) const RETIME_LEGEND: &str = "*+retime: that schedule's options, load order and load starts kept, its load work re-timed by an LP (docs/exact.md)";

/// The re-timed methods `compare` adds after the plain heuristics.
pub(super) const COMPARE_RETIMED: [&str; 2] = ["elk-dyn", "elk-full"];

/// The names `--method` accepts: every registered heuristic, then `ideal` (a figure), then
/// every heuristic re-timed (`NAME+retime`).
pub(super) fn method_parser() -> clap::builder::PossibleValuesParser {
    let mut names: Vec<&'static str> = heuristic_names().collect();
    names.push("ideal");
    // clap keeps possible values as &'static str: the eight names are leaked once, when the
    // parser is built.
    names
        .extend(heuristic_names().map(|n| -> &'static str {
            Box::leak(format!("{n}{RETIME_SUFFIX}").into_boxed_str())
        }));
    clap::builder::PossibleValuesParser::new(names)
}

/// One method's verdict as printed.
#[derive(Serialize)]
pub(super) struct Row {
    pub(super) method: String,
    pub(super) status: String,
    pub(super) makespan_cycles: Option<Cycles>,
    pub(super) makespan_ms: Option<f64>,
    /// T_basic / T (`compare` fills it): a ratio, hence `_x`.
    pub(super) speedup_vs_basic_x: Option<f64>,
    /// 100·T_ideal / T: the method's speed in percent of Ideal's (`compare` fills it).
    pub(super) ideal_pct: Option<f64>,
    /// HBM busy time over the makespan, percent.
    pub(super) hbm_util_pct: Option<f64>,
    /// NoC busy time over the makespan, percent.
    pub(super) noc_util_pct: Option<f64>,
    /// Achieved TFLOP/s.
    pub(super) tflops: Option<f64>,
    pub(super) compile_s: Option<f64>,
    /// 100·(T − bound)/bound against the certified roofline bound: an upper bound on the
    /// true gap to the optimum (`compare` fills it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) gap_le_pct: Option<f64>,
    pub(super) notes: Vec<String>,
}

/// Elk's Ideal figure as a row (not a schedule, not a bound).
pub(super) fn ideal_row(inst: &Instance, no_timings: bool) -> Row {
    let start = Instant::now();
    let report = ideal(inst);
    let mut notes = vec![
        "Elk's definition: fastest option per operator, whole SRAM, loads never contend".into(),
    ];
    if report.cycles.is_none() {
        notes.push("the preload window leaves the relaxed loads no room: no figure".into());
    }
    Row {
        method: "ideal".into(),
        status: "not a schedule, not a proven bound".into(),
        makespan_cycles: report.cycles,
        makespan_ms: report.cycles.map(|c| inst.ms(c)),
        speedup_vs_basic_x: None,
        ideal_pct: report.cycles.map(|_| 100.0),
        hbm_util_pct: report.cycles.map(|c| 100.0 * (report.hbm_cycles / c)),
        noc_util_pct: None,
        tflops: None,
        compile_s: (!no_timings).then(|| start.elapsed().as_secs_f64()),
        gap_le_pct: None,
        notes,
    }
}

/// Runs `m` and judges it: its row, and its schedule with the simulator's evaluation.
/// A method error (an invalid schedule included) is an error, never a blank row.
pub(super) fn run_method(
    inst: &Instance,
    m: &dyn Method,
) -> anyhow::Result<(Row, Option<(Schedule, Evaluation)>)> {
    let judged = elk_sim::run_judged(inst, m, &Budget::default())?;
    Ok(row_of(m.name(), judged))
}

/// The row of a judged run of the method `method`, and its schedule with the evaluation.
pub(super) fn row_of(method: &str, judged: Judged) -> (Row, Option<(Schedule, Evaluation)>) {
    let mut row = Row {
        method: method.into(),
        status: "heuristic".into(),
        makespan_cycles: None,
        makespan_ms: None,
        speedup_vs_basic_x: None,
        ideal_pct: None,
        hbm_util_pct: None,
        noc_util_pct: None,
        tflops: None,
        compile_s: Some(judged.seconds),
        gap_le_pct: None,
        notes: judged.solved.notes.clone(),
    };
    if let Some(claim) = judged.claim_differs() {
        row.notes
            .push(format!("method's own estimate {:.1} cycles", claim.get()));
    }
    match &judged.solved.outcome {
        Outcome::Unknown { reason } => {
            row.status = "no schedule found".into();
            row.notes.push(reason.clone());
        }
        Outcome::Infeasible { reason } => {
            row.status = "infeasible (proven)".into();
            row.notes.push(reason.clone());
        }
        _ => {}
    }
    let Some(e) = judged.evaluation else {
        return (row, None);
    };
    let Some(s) = judged.solved.outcome.schedule().cloned() else {
        return (row, None);
    };
    row.makespan_cycles = Some(e.makespan_cycles);
    row.makespan_ms = Some(e.makespan_ms);
    row.hbm_util_pct = Some(100.0 * e.hbm_utilisation);
    row.noc_util_pct = Some(100.0 * e.noc_utilisation);
    row.tflops = e.tflops;
    (row, Some((s, e)))
}

/// A heuristic of the registry by its (clap-validated) name.
pub(super) fn heuristic(name: &str) -> anyhow::Result<Box<dyn Method>> {
    elk_heuristics::by_name(name)
        .ok_or_else(|| anyhow::anyhow!("no heuristic named '{name}' (a clap value-parser bug)"))
}

/// A heuristic, or `NAME+retime`: the heuristic with its load work re-timed by the LP of
/// [`elk_solver::retime`] (a separate, named method; the faithful ones are never re-timed
/// silently). `no_timings` leaves the LP's wall-clock time out of the notes.
pub(super) fn method_named(name: &str, no_timings: bool) -> anyhow::Result<Box<dyn Method>> {
    let Some(inner) = name.strip_suffix(RETIME_SUFFIX) else {
        return heuristic(name);
    };
    let retimed = Retimed::new(heuristic(inner)?);
    Ok(Box::new(if no_timings {
        retimed.without_timings()
    } else {
        retimed
    }))
}

/// A method's recorded result, returned again under its name: `compare` re-times the
/// schedules it already has instead of running the heuristic a second time.
struct Replay {
    name: &'static str,
    solved: Solved,
}

impl Method for Replay {
    fn name(&self) -> &str {
        self.name
    }

    fn schedule(&self, _: &Instance, _: &Budget) -> Result<Solved, MethodError> {
        Ok(self.solved.clone())
    }
}

/// The row of `NAME+retime` from the judged run of heuristic `name` (`inner`): the re-timing
/// runs on its schedule, and the compile time is the heuristic's plus the LP's.
pub(super) fn retimed_row(
    inst: &Instance,
    name: &'static str,
    inner: &Judged,
    no_timings: bool,
) -> anyhow::Result<(Row, Option<(Schedule, Evaluation)>)> {
    let replay = Replay {
        name,
        solved: inner.solved.clone(),
    };
    let m = Retimed::new(Box::new(replay));
    let m = if no_timings { m.without_timings() } else { m };
    let (mut row, result) = run_method(inst, &m)?;
    row.compile_s = row.compile_s.map(|s| s + inner.seconds);
    Ok((row, result))
}

/// Every heuristic's row (the faithful ones, then the variants, then the re-timed rows of
/// [`COMPARE_RETIMED`]), and the best schedule among them (the warm start). `starting(k, n,
/// name)` is called before row `k` of `n` is computed (a progress display).
pub(super) fn all_heuristics(
    inst: &Instance,
    starting: &dyn Fn(usize, usize, &str),
) -> anyhow::Result<(Vec<Row>, Option<Schedule>)> {
    let n = heuristic_names().count() + COMPARE_RETIMED.len();
    let mut rows = Vec::new();
    let mut best: Option<(Schedule, Cycles)> = None;
    let mut keep = |result: Option<(Schedule, Evaluation)>| {
        if let Some((s, e)) = result {
            if best.as_ref().is_none_or(|(_, t)| e.makespan_cycles < *t) {
                best = Some((s, e.makespan_cycles));
            }
        }
    };
    let mut inner = Vec::new();
    for (k, name) in heuristic_names().enumerate() {
        starting(k + 1, n, name);
        let judged = elk_sim::run_judged(inst, heuristic(name)?.as_ref(), &Budget::default())?;
        if COMPARE_RETIMED.contains(&name) {
            inner.push((name, judged.clone()));
        }
        let (row, result) = row_of(name, judged);
        keep(result);
        rows.push(row);
    }
    for (k, (name, judged)) in inner.iter().enumerate() {
        starting(
            n - inner.len() + k + 1,
            n,
            &format!("{name}{RETIME_SUFFIX}"),
        );
        let (row, result) = retimed_row(inst, name, judged, false)?;
        keep(result);
        rows.push(row);
    }
    Ok((rows, best.map(|b| b.0)))
}

/// Σ_j ν_j·H_j and Σ_j exec_j of `options` on `inst`, cycles: the NoC time its loads need
/// and its operators' execution time.
fn load_noc_and_exec(inst: &Instance, options: &[usize]) -> (f64, f64) {
    inst.ops
        .iter()
        .zip(options)
        .filter_map(|(op, &k)| op.options.get(k).map(|o| (op, o)))
        .fold((0.0, 0.0), |(noc, exec), (op, o)| {
            (
                noc + o.noc_per_hbm * op.hbm_cycles.get(),
                exec + o.exec_cycles.get(),
            )
        })
}

/// Notes for `compare` on the methods slower than Basic because their options' loads cost
/// more NoC time (ux-2 #10): only when that happens, with the numbers. `chosen` holds each
/// method's options; `chip`, when known, says why the NoC cost matters here.
pub(super) fn behind_basic_notes(
    inst: &Instance,
    chip: Option<&elk_model::chip::ChipSpec>,
    rows: &[Row],
    chosen: &[(String, Vec<usize>)],
) -> Vec<String> {
    let Some(basic_t) = rows.first().and_then(|r| r.makespan_cycles) else {
        return Vec::new();
    };
    let Some((_, basic_opts)) = chosen.iter().find(|(m, _)| m == "basic") else {
        return Vec::new();
    };
    let (basic_noc, basic_exec) = load_noc_and_exec(inst, basic_opts);
    let hbm: f64 = inst.ops.iter().map(|o| o.hbm_cycles.get()).sum();
    if hbm <= 0.0 {
        return Vec::new();
    }
    let ms = |c: f64| inst.ms(Cycles(c));
    let why_here = chip.map_or(String::new(), |c| {
        use elk_stage::units::si;
        format!(
            " (B_NoC,dist {} against the HBM's {})",
            si(elk_model::build::noc_distribution_bytes_per_s(c), "B/s"),
            si(c.hbm.bandwidth_bytes_per_s, "B/s")
        )
    });
    let mut notes = Vec::new();
    for (method, options) in chosen {
        let Some(t) = rows
            .iter()
            .find(|r| &r.method == method)
            .and_then(|r| r.makespan_cycles)
        else {
            continue;
        };
        let (noc, exec) = load_noc_and_exec(inst, options);
        // Slower than Basic, and its loads need at least a tenth more NoC time: that is why.
        if t <= basic_t || noc <= 1.1 * basic_noc {
            continue;
        }
        notes.push(format!(
            "{method} is {:.2}x slower than Basic here because its options replicate their data more: its loads cost {:.3} NoC cycles per HBM cycle (Basic's {:.3}), {:.3} ms of NoC time for {:.3} ms of HBM time (Basic's {:.3} ms); it picks options by execution time ({:.3} ms in all, Basic's {:.3}) and not by that NoC cost, which is small where the NoC distributes HBM data much faster than the HBM delivers it, and not on this chip{why_here}",
            t.get() / basic_t.get(),
            noc / hbm,
            basic_noc / hbm,
            ms(noc),
            ms(hbm),
            ms(basic_noc),
            ms(exec),
            ms(basic_exec),
        ));
    }
    notes
}
