//! What `compare` (and `solve`) prints, one row per method: [`Row`] and its [`RowStatus`],
//! a judged run as a row ([`row_of`]), Elk's Ideal as one ([`ideal_row`]), the ratios that
//! relate the rows to Basic, Ideal and the bound, and [`CompareReport`], the whole of
//! `compare`'s results. Apart from the runs in `compare.rs` and `compare/union.rs`, which both
//! build them.

use elk_heuristics::ideal;
use elk_sim::{Evaluation, Judged};
use elk_solver::BoundSource;
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;
use serde::Serialize;
use std::time::Instant;

/// What a row of `compare` (or `solve`) is: written as these strings in `--json`.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowStatus {
    /// A method's schedule, judged by the simulator.
    #[serde(rename = "heuristic")]
    Heuristic,
    /// The method found no schedule (its notes say why).
    #[serde(rename = "no schedule found")]
    NoSchedule,
    /// The method proved that no schedule exists.
    #[serde(rename = "infeasible (proven)")]
    Infeasible,
    /// Elk's Ideal figure.
    #[serde(rename = "not a schedule, not a proven bound")]
    Ideal,
}

impl RowStatus {
    /// The words printed and written (the serde name).
    pub fn as_str(self) -> &'static str {
        match self {
            RowStatus::Heuristic => "heuristic",
            RowStatus::NoSchedule => "no schedule found",
            RowStatus::Infeasible => "infeasible (proven)",
            RowStatus::Ideal => "not a schedule, not a proven bound",
        }
    }
}

impl std::fmt::Display for RowStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One method's verdict as printed.
#[derive(Serialize, Debug, Clone)]
pub struct Row {
    /// The method's name (`elk-full`, `elk-full+retime`, `ideal`).
    pub method: String,
    /// What the row is.
    pub status: RowStatus,
    /// The simulator's makespan.
    pub makespan_cycles: Option<Cycles>,
    /// The same in milliseconds.
    pub makespan_ms: Option<f64>,
    /// T_basic / T (`compare` fills it): a ratio, hence `_x`.
    pub speedup_vs_basic_x: Option<f64>,
    /// 100·T_ideal / T: the method's speed in percent of Ideal's (`compare` fills it).
    pub ideal_pct: Option<f64>,
    /// HBM busy time over the makespan, percent.
    pub hbm_util_pct: Option<f64>,
    /// NoC busy time over the makespan, percent.
    pub noc_util_pct: Option<f64>,
    /// Achieved TFLOP/s.
    pub tflops: Option<f64>,
    /// Wall-clock seconds the method took (`null` with `no_timings`).
    pub compile_s: Option<f64>,
    /// 100·(T − bound)/bound against the certified roofline bound: an upper bound on the
    /// true gap to the optimum (`compare` fills it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gap_le_pct: Option<f64>,
    /// What the method said (orders tried, why it found nothing).
    pub notes: Vec<String>,
    /// `--expert-parallel`: whether the row's schedule is of the instance with parallel sets
    /// (`false`: the one without was faster, [`super::union()`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_sets: Option<bool>,
    /// `--dram-readers auto`: the DRAM-reader count of the chip the row's schedule is of
    /// ([`super::readers`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dram_readers: Option<u64>,
    /// The schedule's first stage, ms: the loads made before the first operator runs, which
    /// nothing overlaps (why one layer may rank the methods unlike the whole model:
    /// [`crate::layer_ranking`]). Not in `--json`.
    #[serde(skip)]
    pub first_stage_ms: Option<f64>,
}

/// Elk's Ideal figure as a row (not a schedule, not a bound).
pub fn ideal_row(inst: &Instance, no_timings: bool) -> Row {
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
        status: RowStatus::Ideal,
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
        parallel_sets: None,
        dram_readers: None,
        first_stage_ms: None,
    }
}

/// Runs `m` and judges it: its row, and its schedule with the simulator's evaluation.
/// A method error (an invalid schedule included) is an error, never a blank row.
pub fn run_method(
    inst: &Instance,
    m: &dyn Method,
) -> Result<(Row, Option<(Schedule, Evaluation)>), MethodError> {
    let judged = elk_sim::run_judged(inst, m, &Budget::default())?;
    Ok(row_of(m.name(), judged))
}

/// The row of a judged run of the method `method`, and its schedule with the evaluation.
pub fn row_of(method: &str, judged: Judged) -> (Row, Option<(Schedule, Evaluation)>) {
    let mut row = Row {
        method: method.into(),
        status: RowStatus::Heuristic,
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
        parallel_sets: None,
        dram_readers: None,
        first_stage_ms: None,
    };
    if let Some(claim) = judged.claim_differs() {
        row.notes
            .push(format!("method's own estimate {:.1} cycles", claim.get()));
    }
    match &judged.solved.outcome {
        Outcome::Unknown { reason } => {
            row.status = RowStatus::NoSchedule;
            row.notes.push(reason.clone());
        }
        Outcome::Infeasible { reason } => {
            row.status = RowStatus::Infeasible;
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
    // The evaluation's own ms per cycle (its makespan in both units).
    let ms_per_cycle = if e.makespan_cycles.get() > 0.0 {
        e.makespan_ms / e.makespan_cycles.get()
    } else {
        0.0
    };
    row.first_stage_ms = e.stages.first().map(|d| d.cycles.get() * ms_per_cycle);
    (row, Some((s, e)))
}

/// Fills each row's speedup over Basic (the first row), percent of Ideal (the last row) and
/// gap to `bound` (not Ideal's; [`elk_solver::gap_pct`], which rounds a float's noise below
/// the bound to 0).
pub(super) fn fill_ratios(rows: &mut [Row], bound: Cycles) {
    let ideal_index = rows.len() - 1;
    let ideal_cycles = rows[ideal_index].makespan_cycles;
    let basic = rows[0].makespan_cycles;
    for (i, r) in rows.iter_mut().enumerate() {
        if let Some(t) = r.makespan_cycles {
            r.speedup_vs_basic_x = basic.map(|b| b / t);
            r.ideal_pct = ideal_cycles.map(|i| 100.0 * i.get() / t.get());
            if i != ideal_index {
                r.gap_le_pct = elk_solver::gap_pct(t, bound);
            }
        }
    }
}

/// The fastest schedule's row of `rows`: the one with the smallest makespan that is not
/// Ideal's (Ideal is not a schedule), the first of equals.
pub fn fastest(rows: &[Row]) -> Option<&Row> {
    rows.iter()
        .filter(|r| r.status != RowStatus::Ideal)
        .filter_map(|r| Some((r, r.makespan_cycles?)))
        .min_by(|(_, a), (_, b)| a.get().total_cmp(&b.get()))
        .map(|(r, _)| r)
}

/// `elk-opt compare`'s results (`elk-opt/compare/1`, without the optional `layer` and `moe`
/// sections the CLI adds after these keys).
#[derive(Serialize, Debug, Clone)]
pub struct CompareReport {
    /// The instance's name.
    pub instance: String,
    /// The chip with its HBM bandwidth (`ipu-pod4 @ 16 TB/s HBM`; `null`: an instance file
    /// whose chip is not found).
    pub chip: Option<String>,
    /// The chip's HBM bandwidth, TB/s.
    pub hbm_tbps: Option<f64>,
    /// B_NoC,dist: how fast the NoC can distribute HBM data to the cores, TB/s.
    pub hbm_distribution_tbps: Option<f64>,
    /// Warnings about the chip (Ideal unreachable, with what to raise).
    pub warnings: Vec<String>,
    /// Why a method falls behind Basic, when it does and the reason is known (empty else).
    pub notes: Vec<String>,
    /// The certified lower bound the rows' `gap_le_pct` is measured against, ms.
    pub bound_ms: f64,
    /// Which bound that is: `roofline` or `segment relaxation`.
    pub bound_source: BoundSource,
    /// The roofline bound, ms (equal to `bound_ms` when it is the source).
    pub roofline_bound_ms: f64,
    /// Every method's row: the heuristics, the re-timed rows, then Ideal.
    pub methods: Vec<Row>,
    /// `--dram-readers auto`: each count tried, with its best schedule and bound (absent
    /// otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dram_reader_counts: Vec<ReaderCount>,
    /// The roofline bound's parts (printed by the CLI's table, not in `--json`).
    #[serde(skip)]
    pub roofline: elk_solver::bounds::Roofline,
    /// `bound_ms` in cycles (not in `--json`).
    #[serde(skip)]
    pub bound_cycles: Cycles,
}

impl CompareReport {
    /// The fastest schedule's row ([`fastest`]).
    pub fn best(&self) -> Option<&Row> {
        fastest(&self.methods)
    }
}

/// One count of DRAM-reader cores as `compare` tried it.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct ReaderCount {
    /// Cores that only read DRAM.
    pub readers: u64,
    /// Cores left to compute.
    pub compute_cores: u64,
    /// The DRAM rate the compute cores get, GB/s.
    pub dram_gb_per_s: f64,
    /// The fastest method on this count (`null`: none found a schedule).
    pub best_method: Option<String>,
    /// Its makespan, ms.
    pub best_ms: Option<f64>,
    /// The certified bound on this count's schedules, ms.
    pub bound_ms: f64,
    /// This count's roofline bound's parts (not in `--json`).
    #[serde(skip)]
    pub roofline: elk_solver::bounds::Roofline,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(method: &str, status: RowStatus, cycles: Option<f64>) -> Row {
        let inst =
            elk_stage::corpus::random_instance(1, &elk_stage::corpus::RandomSpec::tiny(2, 2));
        Row {
            method: method.into(),
            status,
            makespan_cycles: cycles.map(Cycles),
            ..ideal_row(&inst, true)
        }
    }

    /// The fastest schedule is never Ideal's figure, skips rows without a schedule and is
    /// the first of equals.
    #[test]
    fn fastest_is_the_first_quickest_schedule_not_ideal() {
        let rows = [
            row("basic", RowStatus::Heuristic, Some(9.0)),
            row("static", RowStatus::NoSchedule, None),
            row("elk-dyn", RowStatus::Heuristic, Some(7.0)),
            row("elk-full", RowStatus::Heuristic, Some(7.0)),
            row("ideal", RowStatus::Ideal, Some(5.0)),
        ];
        assert_eq!(fastest(&rows).map(|r| r.method.as_str()), Some("elk-dyn"));
        assert!(fastest(&rows[4..]).is_none());
    }

    /// A makespan a float rounding below the bound (Llama2-7B B1 on ipu-mk2: 1.5e-12 relative
    /// under the roofline) is 0 % from it; one a millionth below is not rounded away.
    #[test]
    fn a_gap_within_the_bounds_tolerance_below_zero_is_zero() {
        let bound = 4_776_775.296;
        let mut rows = [
            row("basic", RowStatus::Heuristic, Some(bound * (1.0 - 1.5e-12))),
            row("elk-dyn", RowStatus::Heuristic, Some(bound * (1.0 - 1e-6))),
            row("elk-full", RowStatus::Heuristic, Some(bound * 1.01)),
            row("ideal", RowStatus::Ideal, Some(bound * 0.9)),
        ];
        fill_ratios(&mut rows, Cycles(bound));
        let gaps: Vec<Option<f64>> = rows.iter().map(|r| r.gap_le_pct).collect();
        assert_eq!(gaps[0], Some(0.0));
        assert!(gaps[1].unwrap() < -1e-5, "{gaps:?}");
        assert!((gaps[2].unwrap() - 1.0).abs() < 1e-9, "{gaps:?}");
        assert_eq!(gaps[3], None, "Ideal has no gap");
    }
}
