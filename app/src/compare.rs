//! One row per method, shared by the CLI's `solve`, `compare` and `gap` and by the Python
//! package: run through [`elk_sim::run_judged`] (the one run-and-judge path), with the method
//! names read from the one registry: the faithful [`elk_heuristics::NAMES`], then the named
//! [`elk_heuristics::VARIANTS`] (and, on an instance with parallel sets,
//! [`elk_heuristics::SET_VARIANTS`]), then each of them re-timed (`NAME+retime`; `compare` adds
//! the rows of [`COMPARE_RETIMED`], re-timing the schedules it already has). [`compare`] is
//! the whole of `elk-opt compare`'s results (without its optional `layer` and `moe`
//! sections), so the CLI's `--json` and Python's `compare()` are one computation.
//!
//! ```
//! let inst = elk_stage::corpus::random_instance(7, &elk_stage::corpus::RandomSpec::tiny(6, 3));
//! let beyond = elk_app::bound::Beyond::default(); // no bound beyond the roofline computed
//! let report = elk_app::compare::compare(&inst, None, true, beyond, &mut |_, _, _| {}).unwrap();
//! assert_eq!(report.bound_source, "roofline");
//! assert_eq!(report.methods[0].method, "basic");
//! assert_eq!(report.methods.last().unwrap().method, "ideal");
//! ```

use crate::portfolio::Portfolio;
use elk_sim::{Evaluation, Judged};
use elk_solver::{Retimed, StageQueue, RETIME_SUFFIX, STAGE_QUEUE};
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Solved};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

pub mod readers;
mod rows;
pub mod run;
mod union;
use rows::fill_ratios;
pub use rows::{fastest, ideal_row, row_of, run_method, CompareReport, Row, RowStatus};
pub use union::{ideal_union, solve_union, union};
pub(crate) use union::{paired, MethodRow};

/// Every registered heuristic: the faithful ones, then the variants.
pub fn heuristic_names() -> impl Iterator<Item = &'static str> {
    elk_heuristics::all_names()
}

/// Every method `solve --method` accepts, in the order `--help` lists them: the heuristics,
/// `ideal` (Elk's figure), `stage-lp+queue`, then each heuristic re-timed (`NAME+retime`).
/// The one list the CLI's parser and Python's `methods()` both read.
pub fn solve_method_names() -> Vec<String> {
    heuristic_names()
        .map(String::from)
        .chain(["ideal".to_string(), STAGE_QUEUE.to_string()])
        .chain(heuristic_names().map(|n| format!("{n}{RETIME_SUFFIX}")))
        .collect()
}

/// The heuristics with a row of `inst`: every registered one but a variant that only searches
/// parallel sets' group sizes on an instance without sets (it would repeat Elk-Full's row).
pub fn heuristic_names_on(inst: &Instance) -> impl Iterator<Item = &'static str> + '_ {
    heuristic_names().filter(|n| elk_heuristics::runs_on(n, inst))
}

/// The re-timed methods `compare` adds after the plain heuristics.
pub const COMPARE_RETIMED: [&str; 2] = ["elk-dyn", "elk-full"];

/// The legend line of the `stage-lp+queue` row, under every table that has it.
pub const STAGE_QUEUE_LEGEND: &str = "stage-lp+queue: the stage relaxation LP's options (the heaviest per operator), their loads queued and re-timed; elk-opt's variant (docs/heuristics.md)";

/// The legend line of the re-timed rows, under every table that has them.
pub const RETIME_LEGEND: &str = "*+retime: that schedule's options, load order and load starts kept, its load work re-timed by an LP (docs/exact.md)";

/// A heuristic of the registry by its (clap-validated) name.
pub fn heuristic(name: &str) -> Result<Box<dyn Method>, MethodError> {
    elk_heuristics::by_name(name).ok_or_else(|| MethodError::Input {
        method: name.to_string(),
        detail: format!(
            "no heuristic named '{name}' (one of {})",
            heuristic_names().collect::<Vec<_>>().join(", ")
        ),
    })
}

/// A heuristic, or `NAME+retime`: the heuristic with its load work re-timed by the LP of
/// [`elk_solver::retime`] (a separate, named method; the faithful ones are never re-timed
/// silently). `no_timings` leaves the LP's wall-clock time out of the notes.
pub fn method_named(name: &str, no_timings: bool) -> Result<Box<dyn Method>, MethodError> {
    if name == STAGE_QUEUE {
        return Ok(Box::new(StageQueue::default()));
    }
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
pub fn retimed_row(
    inst: &Instance,
    name: &'static str,
    inner: &Judged,
    no_timings: bool,
) -> Result<(Row, Option<(Schedule, Evaluation)>), MethodError> {
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
/// [`COMPARE_RETIMED`], then `stage-lp+queue`), and the best schedule among them (the warm
/// start). `starting(k, n,
/// name)` is called before row `k` of `n` is computed (a progress display).
pub fn all_heuristics(
    inst: &Instance,
    starting: &dyn Fn(usize, usize, &str),
) -> Result<(Vec<Row>, Option<Schedule>), MethodError> {
    let (judged, _) = heuristic_rows(
        inst,
        &mut |k, n, name| starting(k, n, name),
        false,
        &StageQueue::default(),
    )?;
    let mut rows = Vec::new();
    let mut best: Option<(Schedule, Cycles)> = None;
    for (row, result) in judged {
        if let Some((s, e)) = result {
            if best.as_ref().is_none_or(|(_, t)| e.makespan_cycles < *t) {
                best = Some((s, e.makespan_cycles));
            }
        }
        rows.push(row);
    }
    Ok((rows, best.map(|b| b.0)))
}

/// A row and, when its method found one, its schedule with the simulator's evaluation.
type JudgedRow = (Row, Option<(Schedule, Evaluation)>);

/// Every heuristic's row with its judged schedule: the heuristics that run on `inst` (the
/// registry's, [`heuristic_names_on`]) through the portfolio, then the re-timed rows of
/// [`COMPARE_RETIMED`] from the schedules they found (not a second run), then
/// `stage-lp+queue` (`stage_queue`, with the stage LP's options when the caller has them).
/// `starting(k, n, name)` is called before row `k` (1-based) of the `n` is computed; `n`
/// is returned with the rows.
fn heuristic_rows(
    inst: &Instance,
    starting: &mut dyn FnMut(usize, usize, &str),
    no_timings: bool,
    stage_queue: &StageQueue,
) -> Result<(Vec<JudgedRow>, usize), MethodError> {
    let heuristics: Vec<Box<dyn Method>> = heuristic_names_on(inst)
        .map(heuristic)
        .collect::<Result<_, _>>()?;
    // The plain heuristics, their re-timed rows, then `stage-lp+queue`.
    let n = heuristics.len() + COMPARE_RETIMED.len() + 1;
    let p = Portfolio::run(
        inst,
        heuristics.iter().map(|m| m.as_ref()),
        &mut |k, name| starting(k + 1, n, name),
    )?;
    // The runs the re-timed rows replay, kept before the rows take the runs over.
    let retimed: Vec<(&'static str, Judged)> = COMPARE_RETIMED
        .iter()
        .filter_map(|&name| p.of(name).map(|r| (name, r.judged.clone())))
        .collect();
    let mut rows: Vec<_> = p
        .runs
        .into_iter()
        .map(|run| row_of(&run.method, run.judged))
        .collect();
    for (k, (name, judged)) in retimed.iter().enumerate() {
        starting(
            n - COMPARE_RETIMED.len() + k,
            n,
            &format!("{name}{RETIME_SUFFIX}"),
        );
        rows.push(retimed_row(inst, name, judged, no_timings)?);
    }
    starting(n, n, STAGE_QUEUE);
    rows.push(run_method(inst, stage_queue)?);
    Ok((rows, n))
}

/// The chip a compared instance was built for, as headers and `--json` show it.
#[derive(Clone, Copy, Debug)]
pub struct ChipLabel<'a> {
    /// The chip as used (overrides applied).
    pub spec: &'a elk_model::chip::ChipSpec,
    /// What an instance built on it records (the name, the `--hbm-tbps` override).
    pub record: &'a elk_stage::instance::ChipRef,
}

impl<'a> ChipLabel<'a> {
    /// How the user named the chip: the TOML file given, else the preset's name (what
    /// `elk-opt chips show` takes).
    pub fn given(&self) -> &'a str {
        self.record.file.as_deref().unwrap_or(&self.record.name)
    }

    /// Its name with its HBM bandwidth, overridden or not: `ipu-pod4 @ 16 TB/s HBM`.
    pub fn label_with_hbm(&self) -> String {
        // A preset's bandwidth is a round number of GB/s: no float noise in the label.
        let tbps = self
            .record
            .hbm_tbps
            .unwrap_or((self.spec.hbm.bandwidth_bytes_per_s / 1e9).round() / 1e3);
        elk_stage::instance::label(&self.record.name, Some(tbps))
    }

    /// B_NoC,dist when it is below the HBM bandwidth (mesh and torus chips with few
    /// controller links): `(distribution, HBM)` in bytes/s.
    pub fn distribution_below_hbm(&self) -> Option<(f64, f64)> {
        distribution_below_hbm(self.spec)
    }

    /// Why Ideal is out of reach on this chip, when it is: the NoC distributes HBM data slower
    /// than the HBM delivers it, while Ideal assumes loads never contend.
    pub fn ideal_unreachable(&self) -> Option<String> {
        use elk_stage::units::si;
        let (dist, hbm) = self.distribution_below_hbm()?;
        let advice = elk_model::chip::advice::distribution_advice(self.spec)
            .map_or(String::new(), |a| format!("; {}", a.describe(self.spec)));
        Some(format!(
            "Ideal is unreachable on {}: the NoC distributes HBM data at most at {} (B_NoC,dist; \
             `elk-opt chips show {}`), below the HBM's {}, and Ideal assumes loads never contend; \
             every HBM-bound schedule is NoC-bound here{advice}",
            self.record.label(),
            si(dist, "B/s"),
            self.given(),
            si(hbm, "B/s")
        ))
    }
}

/// B_NoC,dist of `spec` when it is below its HBM bandwidth: `(distribution, HBM)`, bytes/s.
pub fn distribution_below_hbm(spec: &elk_model::chip::ChipSpec) -> Option<(f64, f64)> {
    let dist = elk_model::build::noc_distribution_bytes_per_s(spec);
    let hbm = spec.hbm.bandwidth_bytes_per_s;
    (dist < hbm).then_some((dist, hbm))
}

/// Every heuristic of the registry, the re-timed rows of [`COMPARE_RETIMED`], `stage-lp+queue`
/// and Elk's Ideal
/// on `inst`, with each row's speedup over Basic, percent of Ideal and gap to the certified
/// bound: the best of the roofline's and those `beyond` it the caller computed (the stage
/// relaxation's of [`crate::bound::stage`], `compare`'s default; the coupled segment LP's of
/// [`crate::bound::coupled_bound`], `compare --bound segment`; [`crate::bound::certified`]).
/// What `elk-opt compare` prints. `starting(k, n, name)` is called before row `k` (1-based) of the `n` method rows
/// is computed, `starting(n + 1, n, "")` once they are done (a progress display).
/// `no_timings` leaves the compile times out (`null`).
pub fn compare(
    inst: &Instance,
    chip: Option<ChipLabel<'_>>,
    no_timings: bool,
    beyond: crate::bound::Beyond,
    starting: &mut dyn FnMut(usize, usize, &str),
) -> Result<CompareReport, MethodError> {
    compare_with_stage_options(inst, chip, no_timings, beyond, None, starting)
}

/// [`compare`] given the stage LP's options (`stage_options`, from the LP the caller solved for
/// the bound, or from the bound cache), so `stage-lp+queue` does not solve it again.
pub fn compare_with_stage_options(
    inst: &Instance,
    chip: Option<ChipLabel<'_>>,
    no_timings: bool,
    beyond: crate::bound::Beyond,
    stage_options: Option<Vec<usize>>,
    starting: &mut dyn FnMut(usize, usize, &str),
) -> Result<CompareReport, MethodError> {
    let stage_queue = StageQueue::with_options(stage_options);
    let (judged, n) = heuristic_rows(inst, starting, no_timings, &stage_queue)?;
    // Each heuristic's chosen options, for the notes on why a variant falls behind Basic.
    let chosen: Vec<(String, Vec<usize>)> = judged
        .iter()
        .filter(|(row, _)| !row.method.ends_with(RETIME_SUFFIX))
        .filter_map(|(row, result)| {
            result
                .as_ref()
                .map(|(s, _)| (row.method.clone(), s.options.clone()))
        })
        .collect();
    let mut rows: Vec<Row> = judged.into_iter().map(|(row, _)| row).collect();
    starting(n + 1, n, "");
    if no_timings {
        rows.iter_mut().for_each(|r| r.compile_s = None);
    }
    rows.push(ideal_row(inst, no_timings));
    let roof = elk_solver::bounds::roofline(inst);
    let (bound, bound_source) = crate::bound::certified(inst, beyond);
    fill_ratios(&mut rows, bound);
    Ok(CompareReport {
        instance: inst.name.clone(),
        chip: chip.map(|c| c.label_with_hbm()),
        hbm_tbps: chip.map(|c| c.spec.hbm.bandwidth_bytes_per_s / 1e12),
        hbm_distribution_tbps: chip
            .map(|c| elk_model::build::noc_distribution_bytes_per_s(c.spec) / 1e12),
        warnings: chip
            .and_then(|c| c.ideal_unreachable())
            .into_iter()
            .chain(dominant_warning(inst, &rows))
            .collect(),
        notes: behind_basic_notes(inst, chip.map(|c| c.spec), &rows, &chosen),
        bound_ms: inst.ms(bound),
        bound_source,
        roofline_bound_ms: inst.ms(roof.best()),
        methods: rows,
        dram_reader_counts: Vec::new(),
        roofline: roof,
        bound_cycles: bound,
    })
}

/// The warning of [`crate::dominant`] against the fastest schedule of `rows` ([`fastest`]),
/// if any.
pub fn dominant_warning(inst: &Instance, rows: &[Row]) -> Option<String> {
    let best = fastest(rows)?.makespan_cycles?;
    crate::dominant::dominant_class(inst, best).map(|d| d.warning(inst.clock_hz, best))
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
pub fn behind_basic_notes(
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
