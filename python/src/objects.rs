//! Instances and schedules: built, compared, solved, saved and loaded, simulated. Every
//! long computation runs with the GIL released (`Python::detach`, pyo3's name for
//! `allow_threads`); a progress callback re-attaches only to be called.

use crate::errors::Failure;
use crate::exact::{exact_request, python_worker, StepsTold};
use elk_app::compare::run::{run, run_reader_counts, CompareOn, CompareWatch};
use elk_app::compare::{self, ChipLabel};
use elk_app::request::{
    keys, BoundChoice, ChipRequest, Collected, CompareRequest, Cut, DramReaders, InstanceInput,
    Notice, SolveRequest,
};
use elk_model::chip::ChipSpec;
use elk_model::graph::Graph;
use elk_model::plan::{CacheStats, PlanCache};
use elk_sim::detailed::{simulate_detailed, DetailedConfig};
use elk_sim::evaluate_with;
use elk_sim::trace::{ChromeTrace, NoTrace};
use elk_stage::instance::{ChipRef, Instance, InstanceFile};
use elk_stage::schedule::Schedule;
use pyo3::prelude::*;
use std::cell::Cell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Writes `contents` to `path` atomically, as the CLI writes its output files.
fn write_atomic(path: &Path, contents: &str) -> Result<(), Failure> {
    elk_stage::error::write_atomic(path, contents.as_bytes())
        .map_err(|e| Failure::runtime(format!("{e}: {}", e.error)))
}

/// The progress callback, called with (k, n, name) with the GIL re-acquired; its errors are
/// ignored (a broken progress bar must not fail a solve).
pub(crate) fn report_progress(progress: Option<&Py<PyAny>>, k: usize, n: usize, name: &str) {
    if let Some(cb) = progress {
        Python::attach(|py| {
            let _ = cb.call1(py, (k, n, name));
        });
    }
}

/// Warns when the plan cache could not be written (the results are unaffected), as the CLI
/// does, naming Python's way to skip it.
fn warn_on_write_error(stats: &CacheStats, notice: &mut dyn Notice) {
    if let Some(e) = &stats.write_error {
        notice.warn(format!(
            "plan cache not updated: {e} (pass cache=False to skip it)"
        ));
    }
}

/// `lines` without repeats, each where it first came.
fn first_of_each(lines: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    lines
        .into_iter()
        .filter(|l| seen.insert(l.clone()))
        .collect()
}

/// Builds the instance of a request's keywords (an `InstanceKeys` object as JSON: what
/// `compare --model … --chip …` builds), GIL released; `cache = false` is `--no-cache`.
/// Returns it with the warnings the CLI prints on stderr.
#[pyfunction]
pub fn build_instance(
    py: Python<'_>,
    keys_json: &str,
    cache: bool,
) -> PyResult<(NativeInstance, Vec<String>)> {
    let request = keys::parse::<keys::InstanceKeys>("instance", keys_json)
        .and_then(|k| k.request())
        .map_err(Failure::from)?;
    let result = py.detach(|| -> Result<(NativeInstance, Vec<String>), Failure> {
        let start = Instant::now();
        let mut notice = Collected::default();
        let plan_cache = if cache {
            PlanCache::default_location()
        } else {
            None
        };
        let built = request.build(plan_cache, &mut notice)?;
        warn_on_write_error(&built.cache, &mut notice);
        let whole = request.cut == Cut::default();
        Ok((
            NativeInstance {
                instance: built.instance,
                input: InstanceInput::Build(Box::new(request.clone())),
                chip: Some((built.chip.spec, built.chip.record)),
                graph: whole.then_some(built.graph),
                build_s: start.elapsed().as_secs_f64(),
            },
            notice.0,
        ))
    })?;
    Ok(result)
}

/// `compare(chip=Chip(…, dram_readers="auto"))`: `compare --dram-readers auto --json`'s
/// results and config as JSON ([`run_reader_counts`]: every count of DRAM-reader cores the
/// chip offers, merged), the instance of the count with the fastest schedule, and every
/// count's warnings, each once, in the order they came (a model's warnings repeat on every
/// count); `progress(k, n, name)` before each method row of each count, as one run of
/// counts × rows whose names say the count (`readers 8 of 0/8/16: elk-full`). `layer_exact`
/// is refused, as the CLI refuses `--layer-exact` with `auto`. The instance is built from the
/// keywords (`cache = false` is `--no-cache`), GIL released.
#[pyfunction]
#[pyo3(signature = (keys_json, cache, no_timings=false, progress=None, bound="stage", layer_exact=None, work_limit=None))]
#[allow(clippy::too_many_arguments)]
pub fn compare_reader_counts(
    py: Python<'_>,
    keys_json: &str,
    cache: bool,
    no_timings: bool,
    progress: Option<Py<PyAny>>,
    bound: &str,
    layer_exact: Option<f64>,
    work_limit: Option<u64>,
) -> PyResult<(String, String, NativeInstance, Vec<String>)> {
    let built = keys::parse::<keys::InstanceKeys>("instance", keys_json)
        .and_then(|k| k.request())
        .map_err(Failure::from)?;
    let request = CompareRequest {
        input: InstanceInput::Build(Box::new(built.clone())),
        bound: BoundChoice::parse(bound).map_err(Failure::from)?,
        layer_exact_s: layer_exact,
        layer_work_limit: work_limit,
        no_timings,
    };
    let config = serde_json::to_string(&request.config()).map_err(Failure::from)?;
    let result = py.detach(|| -> Result<_, Failure> {
        let mut notice = Collected::default();
        let plans = if cache {
            PlanCache::default_location()
        } else {
            None
        };
        // The counts `run_reader_counts` will try, to name them in the progress; a chip that
        // does not resolve is left for it to refuse.
        let each = built
            .chip
            .each_reader_count(&mut Collected::default())
            .map(|each| each.into_iter().map(|(readers, _)| readers).collect())
            .unwrap_or_default();
        let watch = Told::new(progress.as_ref(), Some(Counts::of(each)));
        // No bound cache, as in `NativeInstance::compare`.
        let counts = run_reader_counts(&request, plans, &mut notice, None, &watch)?;
        // The kept count's, as the CLI warns (the others' are not returned).
        warn_on_write_error(&counts.built.cache, &mut notice);
        let json = serde_json::to_string(&counts.outcome.results(None))?;
        let readers = counts.outcome.report.dram_reader_counts[counts.kept].readers;
        let mut input = built.clone();
        input.chip.dram_readers = Some(DramReaders::Count(readers));
        let whole = built.cut == Cut::default();
        let kept = NativeInstance {
            instance: counts.built.instance,
            input: InstanceInput::Build(Box::new(input)),
            chip: Some((counts.built.chip.spec, counts.built.chip.record)),
            graph: whole.then_some(counts.built.graph),
            build_s: counts.build_s,
        };
        Ok((json, kept, first_of_each(notice.0)))
    })?;
    Ok((result.0, config, result.1, result.2))
}

/// Python's [`CompareWatch`]: `progress(k, n, name)` before each method row, and `(n + 1, n,
/// "")` once at the end. In a union both instances' rows are one run, each named for its
/// instance (the total counts the rows with parallel sets twice until the ones without
/// start: those lack `elk-full-groups`); with `counts` (`dram_readers="auto"`) every
/// count's rows are one run, each named for its count (the total counts the rows of the
/// count being compared once for each count left).
struct Told<'a> {
    progress: Option<&'a Py<PyAny>>,
    counts: Option<Counts>,
    /// In a union: the rows with parallel sets, which the rows without follow.
    with_sets: Cell<usize>,
}

/// The DRAM-reader counts of a `dram_readers="auto"` compare, and where it is.
struct Counts {
    each: Vec<u64>,
    /// `0/8/16`.
    listed: String,
    /// The count being compared (its index in `each`; `None`: none yet).
    at: Cell<Option<usize>>,
    /// The steps of the counts before it.
    before: Cell<usize>,
    /// The steps of the count being compared, as last told.
    steps: Cell<usize>,
}

impl Counts {
    fn of(each: Vec<u64>) -> Counts {
        let listed = each
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("/");
        Counts {
            each,
            listed,
            at: Cell::new(None),
            before: Cell::new(0),
            steps: Cell::new(0),
        }
    }
}

impl<'a> Told<'a> {
    fn new(progress: Option<&'a Py<PyAny>>, counts: Option<Counts>) -> Told<'a> {
        Told {
            progress,
            counts: counts.filter(|c| !c.each.is_empty()),
            with_sets: Cell::new(0),
        }
    }

    /// Step `k` of `n` of one compare (of an instance, or a union's two); `k > n`: done.
    fn step(&self, k: usize, n: usize, name: &str) {
        let Some(counts) = &self.counts else {
            return report_progress(self.progress, k, n, name);
        };
        let at = counts.at.get().unwrap_or(0);
        let before = counts.before.get();
        let total = before + n * (counts.each.len() - at);
        counts.steps.set(n);
        if k > n {
            // One end, after the last count's rows.
            if at + 1 == counts.each.len() {
                report_progress(self.progress, total + 1, total, "");
            }
            return;
        }
        let name = format!("readers {} of {}: {name}", counts.each[at], counts.listed);
        report_progress(self.progress, before + k, total, &name);
    }
}

impl CompareWatch for Told<'_> {
    fn reader_count(&self, readers: u64) {
        let Some(counts) = &self.counts else {
            return;
        };
        if let Some(at) = counts.each.iter().position(|&r| r == readers) {
            if counts.at.get().is_some() {
                counts.before.set(counts.before.get() + counts.steps.get());
            }
            counts.at.set(Some(at));
        }
    }

    fn method(&self, sets: Option<bool>, k: usize, n: usize, name: &str) {
        match sets {
            None => self.step(k, n, name),
            Some(true) => {
                self.with_sets.set(n);
                if k <= n {
                    self.step(k, 2 * n, &format!("with parallel sets: {name}"));
                }
            }
            Some(false) => {
                let first = self.with_sets.get();
                let name = if k <= n {
                    format!("without parallel sets: {name}")
                } else {
                    String::new()
                };
                self.step(first + k, first + n, &name);
            }
        }
    }
}

/// A stage-model instance (elk-instance/1) with the chip it was built for.
#[pyclass(module = "elk_opt._native", frozen)]
pub struct NativeInstance {
    instance: Instance,
    /// What it was built from, or the file it was read from: the `config` of every result.
    input: InstanceInput,
    chip: Option<(ChipSpec, ChipRef)>,
    /// The graph of a whole model (not cut, not read from a file): `compare(layer_exact=…)`
    /// cuts its layer from it.
    graph: Option<Graph>,
    build_s: f64,
}

impl NativeInstance {
    /// The progress of a gap or exact solve on this instance, and with `without`
    /// (`--expert-parallel`) on that one after it.
    fn steps_told<'a>(
        &'a self,
        progress: Option<&'a Py<PyAny>>,
        without: Option<&'a NativeInstance>,
    ) -> StepsTold<'a> {
        let insts = std::iter::once(&self.instance)
            .chain(without.map(|w| &w.instance))
            .collect();
        StepsTold::new(progress, insts)
    }

    fn label(&self) -> Option<ChipLabel<'_>> {
        self.chip
            .as_ref()
            .map(|(spec, record)| ChipLabel { spec, record })
    }
}

#[pymethods]
impl NativeInstance {
    /// The instance's name (`llama2-13b decode b32 kv2048 on ipu-pod4`).
    #[getter]
    fn name(&self) -> String {
        self.instance.name.clone()
    }

    /// Its number of operators.
    #[getter]
    fn operators(&self) -> usize {
        self.instance.ops.len()
    }

    /// What it was built from (or the file read) as `--json` prints it in `config`, as JSON.
    #[getter]
    fn config(&self) -> PyResult<String> {
        Ok(serde_json::to_string(&self.input.config()).map_err(Failure::from)?)
    }

    /// Seconds spent building it (plan tables) or reading it.
    #[getter]
    fn build_s(&self) -> f64 {
        self.build_s
    }

    /// Cycles to milliseconds at the instance's clock.
    fn ms(&self, cycles: f64) -> f64 {
        cycles / self.instance.clock_hz * 1e3
    }

    /// `compare --json`'s results (without `moe`) and config, as JSON; `progress(k, n,
    /// name)` before each method row. `bound`: `--bound`; `layer_exact`: `--layer-exact
    /// SECONDS`, its exact part in `python`'s worker. `without`: `--expert-parallel`, this
    /// instance (with parallel sets) and `without` (the same, without), their union
    /// ([`compare::union`]); the layer is cut from this one, as the CLI cuts it.
    #[pyo3(signature = (no_timings=false, progress=None, bound="stage", layer_exact=None, python=None, without=None, work_limit=None))]
    #[allow(clippy::too_many_arguments)]
    fn compare(
        &self,
        py: Python<'_>,
        no_timings: bool,
        progress: Option<Py<PyAny>>,
        bound: &str,
        layer_exact: Option<f64>,
        python: Option<PathBuf>,
        without: Option<PyRef<'_, NativeInstance>>,
        work_limit: Option<u64>,
    ) -> PyResult<(String, String)> {
        let without = without.as_deref();
        // Checked before any work, as the CLI's flags are.
        let request = CompareRequest {
            input: self.input.clone(),
            bound: BoundChoice::parse(bound).map_err(Failure::from)?,
            layer_exact_s: layer_exact,
            layer_work_limit: work_limit,
            no_timings,
        };
        request.validate().map_err(Failure::from)?;
        let config = serde_json::to_string(&request.config()).map_err(Failure::from)?;
        let json = py.detach(|| -> Result<String, Failure> {
            let on = CompareOn {
                inst: &self.instance,
                graph: self.graph.as_ref(),
                chip: self.label(),
                without: without.map(|w| (&w.instance, w.graph.as_ref())),
            };
            let watch = Told::new(progress.as_ref(), None);
            // Solved every time: the Python package keeps no bound cache (the bits are the
            // same as the CLI's cached ones).
            let outcome = run(&request, on, None, python.map(python_worker), &watch)?;
            Ok(serde_json::to_string(&outcome.results(None))?)
        })?;
        Ok((json, config))
    }

    /// `gap --json`'s results as JSON, and the schedule of its last row (what `gap -o`
    /// writes; `None`: none); `progress(k, n, name)` for each heuristic, then the exact
    /// solve's events, then `(n + 1, n, "")`. `without`: `--expert-parallel`, the union of
    /// this instance (with parallel sets) and `without` ([`elk_app::gap::gap_union`];
    /// `union.parallel_sets` says which instance the schedule is of).
    #[pyo3(signature = (exact_keys, python, no_timings=false, progress=None, without=None))]
    fn gap(
        &self,
        py: Python<'_>,
        exact_keys: &str,
        python: PathBuf,
        no_timings: bool,
        progress: Option<Py<PyAny>>,
        without: Option<PyRef<'_, NativeInstance>>,
    ) -> PyResult<(String, Option<NativeSchedule>, String)> {
        let without = without.as_deref();
        let request = exact_request(&self.input, exact_keys, no_timings, without.is_some())?;
        let config = serde_json::to_string(&request.config()).map_err(Failure::from)?;
        let settings = request.exact;
        let result = py.detach(|| -> Result<(String, Option<NativeSchedule>), Failure> {
            let told = self.steps_told(progress.as_ref(), without);
            let report = match without {
                None => elk_app::gap::gap_report(
                    &self.instance,
                    &settings,
                    no_timings,
                    Some(python_worker(python.clone())),
                    &|step| told.tell(step),
                )?,
                Some(other) => elk_app::gap::gap_union(
                    &self.instance,
                    &other.instance,
                    &settings,
                    no_timings,
                    Some(python_worker(python.clone())),
                    &|sets, step| told.tell_on(usize::from(!sets), step),
                )?,
            };
            told.done();
            let json = serde_json::to_string(&report)?;
            Ok((
                json,
                report.schedule.map(|schedule| NativeSchedule { schedule }),
            ))
        })?;
        Ok((result.0, result.1, config))
    }

    /// `solve --exact --json`'s results as JSON, and the schedule found (`None`: none).
    /// `without`: `--expert-parallel`, the faster result of this instance (with parallel
    /// sets) and `without` ([`elk_app::gap::solve_exact_union`]; `union.parallel_sets`
    /// says which instance the schedule is of).
    #[pyo3(signature = (exact_keys, python, no_timings=false, progress=None, without=None))]
    fn solve_exact(
        &self,
        py: Python<'_>,
        exact_keys: &str,
        python: PathBuf,
        no_timings: bool,
        progress: Option<Py<PyAny>>,
        without: Option<PyRef<'_, NativeInstance>>,
    ) -> PyResult<(String, Option<NativeSchedule>, String)> {
        let without = without.as_deref();
        let request = exact_request(&self.input, exact_keys, no_timings, without.is_some())?;
        let config = serde_json::to_string(&request.config()).map_err(Failure::from)?;
        let settings = request.exact;
        let result = py.detach(|| -> Result<(String, Option<NativeSchedule>), Failure> {
            let told = self.steps_told(progress.as_ref(), without);
            let (json, schedule) = match without {
                None => {
                    let (summary, schedule) = elk_app::gap::solve_exact(
                        &self.instance,
                        &settings,
                        no_timings,
                        Some(python_worker(python.clone())),
                        &|step| told.tell(step),
                    )?;
                    (serde_json::to_string(&summary)?, schedule)
                }
                Some(other) => {
                    let out = elk_app::gap::solve_exact_union(
                        &self.instance,
                        &other.instance,
                        &settings,
                        no_timings,
                        Some(python_worker(python.clone())),
                        &|sets, step| told.tell_on(usize::from(!sets), step),
                    )?;
                    (serde_json::to_string(&out)?, out.schedule)
                }
            };
            told.done();
            let schedule = schedule.map(|schedule| NativeSchedule { schedule });
            Ok((json, schedule))
        })?;
        Ok((result.0, result.1, config))
    }

    /// `solve --method M --json`'s results (the method's row) as JSON, its schedule
    /// (`None`: `ideal`, or no schedule found) and the config as JSON. `without`: `--expert-parallel`, the faster
    /// schedule of this instance (with parallel sets) and `without`
    /// ([`compare::solve_union`]; the row's `parallel_sets` says which).
    #[pyo3(signature = (method, no_timings=false, without=None))]
    fn solve(
        &self,
        py: Python<'_>,
        method: &str,
        no_timings: bool,
        without: Option<PyRef<'_, NativeInstance>>,
    ) -> PyResult<(String, Option<NativeSchedule>, String)> {
        let without = without.as_deref();
        let config = SolveRequest {
            input: self.input.clone(),
            method: method.to_string(),
            output: None,
            trace: None,
            no_timings,
        }
        .config();
        let config = serde_json::to_string(&config).map_err(Failure::from)?;
        let result = py.detach(|| -> Result<(String, Option<NativeSchedule>), Failure> {
            if method == "ideal" {
                let row = match without {
                    None => compare::ideal_row(&self.instance, no_timings),
                    Some(other) => {
                        compare::ideal_union(&self.instance, &other.instance, no_timings)
                    }
                };
                return Ok((serde_json::to_string(&row)?, None));
            }
            let m = compare::method_named(method, no_timings)?;
            let (mut row, result) = match without {
                None => compare::run_method(&self.instance, m.as_ref())?,
                Some(other) => compare::solve_union(&self.instance, &other.instance, m.as_ref())?,
            };
            if no_timings {
                row.compile_s = None;
            }
            let schedule = result.map(|(s, _)| NativeSchedule { schedule: s });
            Ok((serde_json::to_string(&row)?, schedule))
        })?;
        Ok((result.0, result.1, config))
    }

    /// The instance file's text (elk-instance/1, with the chip it was built for).
    fn to_json(&self) -> PyResult<String> {
        let file = InstanceFile {
            instance: self.instance.clone(),
            chip: self.chip.as_ref().map(|(_, r)| r.clone()),
        };
        Ok(file.to_json().map_err(Failure::from)?)
    }

    /// Writes the instance file (atomically).
    fn save(&self, path: PathBuf) -> PyResult<()> {
        let text = self.to_json()?;
        Ok(write_atomic(&path, &text)?)
    }

    /// Reads an instance file; its chip is found again when it is a preset or its TOML file
    /// is still there.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<NativeInstance> {
        let inst = py.detach(|| -> Result<NativeInstance, Failure> {
            let start = Instant::now();
            let file = InstanceFile::read(&path)?;
            let chip = file.chip.as_ref().and_then(|r| {
                let source = match &r.file {
                    Some(f) if Path::new(f).exists() => f.clone(),
                    _ => r.name.clone(),
                };
                let request = ChipRequest::with_hbm(&source, r.hbm_tbps);
                request
                    .resolve(&mut Collected::default())
                    .ok()
                    .map(|c| (c.spec, c.record))
            });
            Ok(NativeInstance {
                instance: file.instance,
                input: InstanceInput::File(path.clone()),
                chip,
                graph: None,
                build_s: start.elapsed().as_secs_f64(),
            })
        })?;
        Ok(inst)
    }
}

/// A schedule (elk-schedule/1).
#[pyclass(module = "elk_opt._native", frozen)]
pub struct NativeSchedule {
    schedule: Schedule,
}

#[pymethods]
impl NativeSchedule {
    /// The method that produced it.
    #[getter]
    fn method(&self) -> String {
        self.schedule.method.clone()
    }

    /// The schedule file's text, stamped with `inst`'s name and hash (as `solve -o` writes
    /// it).
    fn to_json(&self, inst: &NativeInstance) -> PyResult<String> {
        let mut s = self.schedule.clone();
        s.stamp(&inst.instance);
        Ok(s.to_json().map_err(Failure::from)?)
    }

    /// Writes the schedule file (atomically), stamped with `inst`.
    fn save(&self, path: PathBuf, inst: &NativeInstance) -> PyResult<()> {
        let text = self.to_json(inst)?;
        Ok(write_atomic(&path, &text)?)
    }

    /// Reads a schedule file.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<NativeSchedule> {
        let schedule = Schedule::read(&path).map_err(Failure::from)?;
        Ok(NativeSchedule { schedule })
    }

    /// `simulate --json`'s verdict: validity, violations and the stage model's evaluation,
    /// as JSON. A schedule of another instance raises `ValueError`.
    fn simulate(&self, py: Python<'_>, inst: &NativeInstance) -> PyResult<String> {
        let json = py.detach(|| -> Result<String, Failure> {
            let i = &inst.instance;
            self.schedule.check_instance(i)?;
            let out = elk_app::simulate::judge(i, &self.schedule, &mut NoTrace);
            Ok(serde_json::to_string(&out)?)
        })?;
        Ok(json)
    }

    /// The detailed replay on the chip the instance was built for (`simulate --detailed`,
    /// paced loads): the simulator's report as JSON.
    fn simulate_detailed(&self, py: Python<'_>, inst: &NativeInstance) -> PyResult<String> {
        let json = py.detach(|| -> Result<String, Failure> {
            let Some((spec, record)) = &inst.chip else {
                return Err(Failure::input(
                    "the instance does not record a chip found from here: no detailed replay",
                ));
            };
            self.schedule.check_instance(&inst.instance)?;
            let mut named = spec.clone();
            named.name = record.label();
            let cfg = DetailedConfig::from_chip(&named);
            let report = simulate_detailed(&inst.instance, &self.schedule, &named, &cfg)?;
            Ok(serde_json::to_string(&report)?)
        })?;
        Ok(json)
    }

    /// Writes a Chrome trace of the stage model's evaluation (`solve --trace`).
    fn trace(&self, path: PathBuf, inst: &NativeInstance) -> PyResult<()> {
        self.schedule
            .check_instance(&inst.instance)
            .map_err(Failure::from)?;
        let mut trace = ChromeTrace::new(inst.instance.clock_hz);
        evaluate_with(&inst.instance, &self.schedule, &mut trace);
        Ok(write_atomic(&path, &trace.to_json())?)
    }
}
