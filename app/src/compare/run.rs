//! A [`CompareRequest`] answered on its instance(s): every method's row with the bound the
//! request chose, the union with the instance without parallel sets (`--expert-parallel`),
//! and the optional layer section (`--layer-exact`); with `--dram-readers auto`, every count
//! of DRAM-reader cores merged ([`run_reader_counts`]). The CLI's `compare` and Python's
//! `compare()` both call [`run`] (and [`run_reader_counts`]); what each shows while it runs
//! is its [`CompareWatch`].

use crate::bound::{
    cached_bound, coupled_bound, stage_cached_with_options, Beyond, BoundCache, Coupled, Staged,
    COUPLED_LIMIT,
};
use crate::compare::{compare_with_stage_options, union, ChipLabel, CompareReport};
use crate::error::{AppError, Result};
use crate::gap::{layer_section, layer_section_union, GapStep, LayerSection, LAYER};
use crate::request::{
    BoundChoice, BuiltInstance, CompareRequest, DramReaders, InstanceInput, InstanceRequest,
    Notice, RequestError,
};
use elk_model::build::{cut_instance, OpRange};
use elk_model::graph::Graph;
use elk_model::plan::PlanCache;
use elk_solver::segments::SegmentStep;
use elk_solver::WorkerCommand;
use elk_stage::instance::Instance;
use elk_stage::units::Cycles;

/// What a front end shows while a compare runs. Every method has a default that shows
/// nothing.
pub trait CompareWatch {
    /// `--dram-readers auto`: the count `readers` is built and compared next.
    fn reader_count(&self, _readers: u64) {}
    /// Method row `k` of `n` starts (`k = n + 1`: the rows are done). `sets`: in a union,
    /// which instance (`true`: the one with parallel sets); `None` outside one.
    fn method(&self, _sets: Option<bool>, _k: usize, _n: usize, _name: &str) {}
    /// The coupled segment LP of `inst` starts (`--bound segment`).
    fn coupled_started(&self, _inst: &Instance) {}
    /// A step of it.
    fn coupled_step(&self, _inst: &Instance, _step: &SegmentStep) {}
    /// It finished (read from the cache, solved, or unfinished).
    fn coupled_finished(&self, _found: &Coupled) {}
    /// The stage relaxation's LP of `inst` starts (`--bound stage`, the default, and
    /// `segment`).
    fn stage_started(&self, _inst: &Instance) {}
    /// It finished (solved, not tried, or unfinished).
    fn stage_finished(&self, _found: &Staged) {}
    /// The layer section starts (`--layer-exact`).
    fn layer_started(&self) {}
    /// A step of the layer's gap, on `layer` (in a union, the instance it is on).
    fn layer_step(&self, _layer: &Instance, _step: GapStep<'_>) {}
    /// The layer section is done.
    fn layer_finished(&self) {}
}

/// A [`CompareWatch`] that shows nothing.
pub struct Unwatched;

impl CompareWatch for Unwatched {}

/// What a compare runs on: the instance, the graph it was built from (`None`: read from a
/// file), the chip it was built for and, with `--expert-parallel`, the same without parallel
/// sets (and its graph).
#[derive(Clone, Copy)]
pub struct CompareOn<'a> {
    /// The instance (with parallel sets in a union).
    pub inst: &'a Instance,
    /// Its whole model's graph, which `--layer-exact` cuts its layer from.
    pub graph: Option<&'a Graph>,
    /// The chip, for the header and the Ideal note.
    pub chip: Option<ChipLabel<'a>>,
    /// `--expert-parallel`: the instance without parallel sets, and its graph.
    pub without: Option<(&'a Instance, Option<&'a Graph>)>,
}

/// A compare's answer.
pub struct CompareOutcome {
    /// Every method's row and the bound (the union's with `--expert-parallel`).
    pub report: CompareReport,
    /// The coupled segment LP behind the bound, when one was read or solved.
    pub segment: Option<Coupled>,
    /// The stage relaxation's LP, when the request asked for it (`--bound stage` or
    /// `segment`).
    pub stage: Option<Staged>,
    /// `--layer-exact`: the layer's instance and its section.
    pub layer: Option<(Instance, LayerSection)>,
}

/// `compare --json`'s results: every method's row and the bound, then the optional sections.
/// The CLI prints it; Python returns it (its `moe` section is added after, as the CLI's is
/// last).
#[derive(serde::Serialize)]
pub struct CompareResults<'a> {
    /// Every method's row and the bound.
    #[serde(flatten)]
    pub base: &'a CompareReport,
    /// `--layer-exact`: one layer solved exactly.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<&'a LayerSection>,
    /// `--routing`: the MoE load policies over sampled steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moe: Option<&'a crate::moe::MoeSection>,
}

impl CompareOutcome {
    /// The results as `--json` prints them, with `moe` (`compare --routing`'s section).
    pub fn results<'a>(&'a self, moe: Option<&'a crate::moe::MoeSection>) -> CompareResults<'a> {
        CompareResults {
            base: &self.report,
            layer: self.layer.as_ref().map(|(_, s)| s),
            moe,
        }
    }
}

/// Answers `request` on `on`. The bound: the best of the roofline, the coupled LP's bound of
/// this very instance when `bound_cache` holds it, and what the request asks for: with
/// [`BoundChoice::Stage`] (the default) the stage relaxation's LP, with
/// [`BoundChoice::Segment`] that and the coupled LP's, solved (and kept in `bound_cache`)
/// when the cache lacks it. The layer's exact part runs in `worker`. A `--layer-exact`
/// without a graph is refused before any work.
pub fn run(
    request: &CompareRequest,
    on: CompareOn<'_>,
    bound_cache: Option<&BoundCache>,
    worker: Option<WorkerCommand>,
    watch: &dyn CompareWatch,
) -> Result<CompareOutcome> {
    request.validate().map_err(refused)?;
    if request.layer_exact_s.is_some() && on.graph.is_none() {
        return Err(refused(RequestError::refused(
            "--layer-exact cuts a layer from the model's graph: give --model, --import or \
             --onnx, not --instance (or run `gap` on a cut instance)",
        )));
    }
    let sets = on.without.map(|_| true);
    let (mut report, mut segment, mut staged) =
        methods_and_bound(request, on.inst, on, sets, bound_cache, watch)?;
    if let Some((plain, _)) = on.without {
        let (other, other_segment, other_staged) =
            methods_and_bound(request, plain, on, Some(false), bound_cache, watch)?;
        if other.bound_cycles < report.bound_cycles {
            segment = other_segment;
            staged = other_staged;
        }
        report = union(report, other);
    }
    let layer = match (request.layer_exact_s, on.graph) {
        (Some(seconds), Some(graph)) => Some(layer(
            on,
            graph,
            (seconds, request.layer_work_limit),
            request.no_timings,
            worker,
            watch,
        )?),
        _ => None,
    };
    Ok(CompareOutcome {
        report,
        segment,
        stage: staged,
        layer,
    })
}

/// The instance request of `request` when it asks for `--dram-readers auto` (then
/// [`run_reader_counts`] answers it, not [`run`]).
pub fn every_reader_count(request: &CompareRequest) -> Option<&InstanceRequest> {
    match &request.input {
        InstanceInput::Build(b) if b.chip.dram_readers == Some(DramReaders::Auto) => Some(b),
        _ => None,
    }
}

/// `--dram-readers auto` answered: the model built and compared ([`run`], the
/// `--expert-parallel` union included) on the chip with each count of DRAM-reader cores it
/// offers, the chip read once; the counts merged by [`super::readers::best_over_counts`].
/// The segment LP is the bound's count's. Instances are planned through `plans`, their
/// warnings told to `notice`. Refused with `--layer-exact` (the layer is of one chip), and
/// for a request without `auto`.
pub fn run_reader_counts(
    request: &CompareRequest,
    plans: Option<PlanCache>,
    notice: &mut dyn Notice,
    bound_cache: Option<&BoundCache>,
    watch: &dyn CompareWatch,
) -> Result<ReaderCounts> {
    request.validate().map_err(refused)?;
    let Some(build) = every_reader_count(request) else {
        return Err(refused(RequestError::refused(
            "every DRAM-reader count is compared with `--dram-readers auto` only",
        )));
    };
    if request.layer_exact_s.is_some() {
        return Err(refused(RequestError::refused(AUTO_OF_ONE_CHIP)));
    }
    let mut builds = Vec::new();
    let mut outcomes = Vec::new();
    for (readers, chip) in build.chip.each_reader_count(notice)? {
        watch.reader_count(readers);
        let start = std::time::Instant::now();
        let built = build.build_on(chip.clone(), plans.clone(), notice)?;
        let build_s = start.elapsed().as_secs_f64();
        let plain = if build.choices.expert_parallel {
            Some(build.without_sets().build_on(chip, plans.clone(), notice)?)
        } else {
            None
        };
        let on = CompareOn {
            inst: &built.instance,
            graph: Some(&built.graph),
            chip: Some(built.chip.as_label()),
            without: plain.as_ref().map(|p| (&p.instance, Some(&p.graph))),
        };
        outcomes.push(run(request, on, bound_cache, None, watch)?);
        builds.push((readers, built, build_s));
    }
    let mut segments = Vec::new();
    let mut stages = Vec::new();
    let mut reports = Vec::new();
    for ((readers, built, _), outcome) in builds.iter().zip(outcomes) {
        segments.push(outcome.segment);
        stages.push(outcome.stage);
        reports.push((*readers, &built.chip.spec, outcome.report));
    }
    let (kept, bounded, report) = super::readers::best_over_counts(reports)
        .ok_or_else(|| refused(RequestError::refused("the chip offers no count of readers")))?;
    let (_, built, build_s) = builds.swap_remove(kept);
    Ok(ReaderCounts {
        outcome: CompareOutcome {
            report,
            segment: segments.swap_remove(bounded),
            stage: stages.swap_remove(bounded),
            layer: None,
        },
        kept,
        built,
        build_s,
    })
}

/// Why `--dram-readers auto` is refused with `--layer-exact` (and the CLI's `--routing`).
pub const AUTO_OF_ONE_CHIP: &str = "--dram-readers auto with --layer-exact or --routing: give \
     one count of readers (the layer and the routing are of one chip)";

/// [`run_reader_counts`]'s answer.
pub struct ReaderCounts {
    /// The counts merged: every method's fastest row, the lowest bound (and its segment and
    /// stage LPs), no layer section.
    pub outcome: CompareOutcome,
    /// The index in `outcome.report.dram_reader_counts` of the count with the fastest
    /// schedule.
    pub kept: usize,
    /// That count's instance: the header's, `--csv`'s and `--emit-instance`'s.
    pub built: BuiltInstance,
    /// Seconds spent building it.
    pub build_s: f64,
}

/// A refusal of the request.
fn refused(e: impl Into<RequestError>) -> AppError {
    AppError::Request(e.into())
}

/// Every method's row on `inst` and the bound of the request's rule, with the coupled and
/// stage LPs behind it.
fn methods_and_bound(
    request: &CompareRequest,
    inst: &Instance,
    on: CompareOn<'_>,
    sets: Option<bool>,
    bound_cache: Option<&BoundCache>,
    watch: &dyn CompareWatch,
) -> Result<(CompareReport, Option<Coupled>, Option<Staged>)> {
    // The stage LP's options come with its bound (solved or cached): `stage-lp+queue` takes
    // them instead of solving the same LP again.
    let (staged, stage_options) = match request.bound {
        BoundChoice::Roofline => (None, None),
        BoundChoice::Stage | BoundChoice::Segment => {
            watch.stage_started(inst);
            let (found, options) = stage_cached_with_options(inst, bound_cache)?;
            watch.stage_finished(&found);
            (Some(found), options)
        }
    };
    let segment = match request.bound {
        BoundChoice::Roofline | BoundChoice::Stage => {
            bound_cache.and_then(|cache| cached_bound(inst, cache))
        }
        BoundChoice::Segment => {
            watch.coupled_started(inst);
            let found = coupled_bound(inst, COUPLED_LIMIT, bound_cache, &|s| {
                watch.coupled_step(inst, s)
            })?;
            watch.coupled_finished(&found);
            Some(found)
        }
    };
    let beyond = Beyond {
        segment: segment
            .as_ref()
            .and_then(|c| c.bound.as_ref())
            .map(|s| Cycles(s.bound_cycles)),
        stage: staged.and_then(|s| s.cycles()).map(Cycles),
    };
    let report = compare_with_stage_options(
        inst,
        on.chip,
        request.no_timings,
        beyond,
        stage_options,
        &mut |k, n, name| watch.method(sets, k, n, name),
    )?;
    Ok((report, segment, staged))
}

/// The layer section: layer [`LAYER`] cut from the whole model (and, in a union, from the
/// model without parallel sets), solved within `seconds` and the work budget `work_limit`.
fn layer(
    on: CompareOn<'_>,
    graph: &Graph,
    (seconds, work_limit): (f64, Option<u64>),
    no_timings: bool,
    worker: Option<WorkerCommand>,
    watch: &dyn CompareWatch,
) -> Result<(Instance, LayerSection)> {
    let range = OpRange::Layers(LAYER..LAYER + 1);
    let layer = cut_instance(on.inst, graph, &range)?;
    watch.layer_started();
    let other = match on.without {
        Some((plain, Some(plain_graph))) => Some(cut_instance(plain, plain_graph, &range)?),
        _ => None,
    };
    let section = match &other {
        None => layer_section(&layer, seconds, work_limit, no_timings, worker, &|step| {
            watch.layer_step(&layer, step)
        })?,
        Some(other) => layer_section_union(
            &layer,
            other,
            seconds,
            work_limit,
            no_timings,
            worker,
            &|sets, step| watch.layer_step(if sets { &layer } else { other }, step),
        )?,
    };
    watch.layer_finished();
    Ok((layer, section))
}
