//! Building an instance from (graph, chip, cost model): one option per plan-table option,
//! H_j = the table's HBM bytes / B_HBM in cycles (c_min · cores on the whole chip), ν = ρ · B_HBM /
//! B_NoC,dist.

use crate::chip::ChipSpec;
use crate::cost;
use crate::error::{ModelError, Result};
use crate::graph::{Graph, Operator};
use crate::plan::{plan_graph_cached, CacheStats, OpShape, PlanCache, PlanRules, PlanTable};
use elk_stage::instance::{
    Instance, InstanceOp, LoadOrder, NamedOrder, NocRow, OpOption, INSTANCE_FORMAT,
    INSTANCE_FORMAT_PARALLEL,
};
use elk_stage::units::{Bytes, Cycles};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, RwLock};

/// Which operators of the graph the instance covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpRange {
    /// The whole graph.
    All,
    /// Operators `a..b`.
    Ops(Range<usize>),
    /// Layers `a..b` (per the graph's layer structure).
    Layers(Range<usize>),
}

impl OpRange {
    /// Parses `A..B`.
    pub fn parse_range(s: &str) -> Result<Range<usize>> {
        let bad = || ModelError::Invalid(format!("range '{s}': expected A..B with A < B"));
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let (a, b): (usize, usize) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a < b {
            Ok(a..b)
        } else {
            Err(bad())
        }
    }

    /// What instance names append for it: `, layers 0..1`, `, ops 3..8`, nothing for all.
    fn suffix(&self) -> String {
        match self {
            OpRange::All => String::new(),
            OpRange::Ops(r) => format!(", ops {}..{}", r.start, r.end),
            OpRange::Layers(r) => format!(", layers {}..{}", r.start, r.end),
        }
    }

    /// [`OpRange::suffix`], saying which of the model's layers `--layers` took when they are
    /// not the ones of the same numbers: a model whose first layers are dense (DeepSeek's) has
    /// them in the graph's prologue, so its repeated layers are the MoE ones, and
    /// `--layers 0..1` is the model's layer 3 (`l3.`). Read from the operators' names.
    fn suffix_on(&self, graph: &Graph) -> String {
        let plain = self.suffix();
        let OpRange::Layers(r) = self else {
            return plain;
        };
        let Ok(ops) = self.resolve(graph) else {
            return plain;
        };
        let layer_of = |i: usize| model_layer(&graph.ops[i].name);
        let (Some(first), Some(last)) = (layer_of(ops.start), layer_of(ops.end - 1)) else {
            return plain;
        };
        // Only when the cut starts a model layer (its predecessor is of another one) and the
        // numbers are shifted by whole layers.
        let starts_one = ops.start == 0 || layer_of(ops.start - 1) != Some(first);
        if !starts_one || (first, last + 1) == (r.start, r.end) || last < first {
            return plain;
        }
        format!("{plain} (the model's layers {first}..{})", last + 1)
    }

    fn resolve(&self, g: &Graph) -> Result<Range<usize>> {
        let r = match self {
            OpRange::All => 0..g.ops.len(),
            OpRange::Ops(r) => r.clone(),
            OpRange::Layers(r) => {
                let first = g.layers.layer_range(r.start);
                let last = g.layers.layer_range(r.end - 1);
                match (first, last) {
                    (Some(a), Some(b)) => a.start..b.end,
                    _ => {
                        return Err(ModelError::Invalid(format!(
                            "--layers {}..{}: the graph has {} layers",
                            r.start, r.end, g.layers.layers
                        )))
                    }
                }
            }
        };
        if r.end > g.ops.len() || r.start >= r.end {
            return Err(ModelError::Invalid(format!(
                "operators {}..{}: the graph has {} operators",
                r.start,
                r.end,
                g.ops.len()
            )));
        }
        Ok(r)
    }
}

/// Choices of an instance that are not in the graph or chip.
#[derive(Clone, Debug)]
pub struct InstanceOptions {
    /// The operators covered.
    pub range: OpRange,
    /// The load-order policy.
    pub load_order: LoadOrder,
    /// Preload window W, when set.
    pub preload_window: Option<u32>,
    /// Where plan tables are cached between runs (`None`: always enumerate).
    pub plan_cache: Option<PlanCache>,
    /// The stage model's NoC row. Built instances use the phased row by default: the paced
    /// detailed replay agrees with it within 0.83 % on the Fig-17 grid, where SPEC §4's row
    /// is up to 8.7 % optimistic (docs/detailed.md). SPEC §4's row stays for the reference
    /// artifact's files and on request (`--noc-row spec`).
    pub noc_row: NocRow,
    /// Run independent chains of operators side by side on groups of cores, as parallel
    /// sets (`--expert-parallel`, docs/core-groups.md).
    pub parallel: bool,
}

impl Default for InstanceOptions {
    fn default() -> InstanceOptions {
        InstanceOptions {
            range: OpRange::All,
            load_order: LoadOrder::Named(NamedOrder::Fixed),
            preload_window: None,
            plan_cache: None,
            noc_row: NocRow::Phased,
            parallel: false,
        }
    }
}

/// NoC bandwidth available for distributing HBM data, bytes/s. All-to-all: every core
/// injects at its rate. Mesh/torus: additionally bounded by the throughput of the
/// controllers' distribution traffic on the chip's links and routes
/// ([`crate::chip::network::distribution_bytes_per_s`]).
pub fn noc_distribution_bytes_per_s(chip: &ChipSpec) -> f64 {
    let all = chip.noc_bytes_per_s();
    crate::chip::network::distribution_bytes_per_s(chip).map_or(all, |by_links| all.min(by_links))
}

/// [`noc_distribution_bytes_per_s`] with how it is reached, for people: which bound
/// decides, and whether it caps HBM loads below the HBM bandwidth.
pub fn noc_distribution_explained(chip: &ChipSpec) -> String {
    use elk_stage::units::si;
    let all = chip.noc_bytes_per_s();
    let dist = noc_distribution_bytes_per_s(chip);
    let injection = format!(
        "cores × injection = {} × {}",
        chip.cores,
        si(chip.noc.injection_bytes_per_s_per_core, "B/s")
    );
    let mut s = match crate::chip::network::distribution_bytes_per_s(chip) {
        None => format!("{} = {injection} (all-to-all)", si(dist, "B/s")),
        Some(by_links) => {
            let controllers = chip.hbm.controllers.max(1) as f64;
            let by_links = format!(
                "controllers × link rate / hottest link's share = {controllers} × {} / {:.3} \
                 (the controllers' traffic to every core on the {}×{} {:?}'s routes)",
                si(chip.noc.link_bytes_per_s, "B/s"),
                controllers * chip.noc.link_bytes_per_s / by_links,
                chip.noc.width.unwrap_or(1),
                chip.noc.height.unwrap_or(1),
                chip.noc.topology,
            );
            if dist < all {
                format!(
                    "{} = {by_links}, below {injection} = {}",
                    si(dist, "B/s"),
                    si(all, "B/s")
                )
            } else {
                format!(
                    "{} = {injection} (the controllers' links allow more)",
                    si(dist, "B/s")
                )
            }
        }
    };
    if dist < chip.hbm.bandwidth_bytes_per_s {
        s.push_str(&format!(
            "; below the HBM's {}: HBM loads are NoC-bound",
            si(chip.hbm.bandwidth_bytes_per_s, "B/s")
        ));
    }
    s
}

/// Plans `graph` on `chip` and builds the stage-model instance of the operators in range.
pub fn build_instance(graph: &Graph, chip: &ChipSpec, opts: &InstanceOptions) -> Result<Instance> {
    build_instance_with_stats(graph, chip, opts).map(|(inst, _)| inst)
}

/// [`build_instance`], and how its plan tables were obtained (cache hits, tables built, a
/// failed cache write).
pub fn build_instance_with_stats(
    graph: &Graph,
    chip: &ChipSpec,
    opts: &InstanceOptions,
) -> Result<(Instance, CacheStats)> {
    let range = opts.range.resolve(graph)?;
    let sub = Graph {
        name: graph.name.clone(),
        ops: graph.ops[range.clone()].to_vec(),
        layers: graph.layers,
        plan_rules: graph.plan_rules,
        dtypes: graph.dtypes,
    };
    let model = cost::for_chip_with(chip, &graph.dtypes)?;
    let plans = plan_graph_cached(&sub, chip, model.as_ref(), opts.plan_cache.as_ref())?;
    let b_noc = noc_distribution_bytes_per_s(chip);
    let ops = if opts.parallel {
        side_by_side(
            &sub,
            &plans,
            chip,
            model.as_ref(),
            opts.plan_cache.as_ref(),
            b_noc,
        )
    } else {
        sub.ops
            .iter()
            .enumerate()
            .map(|(i, op)| instance_op(op, plans.table(i), chip, b_noc))
            .collect()
    };
    Ok((assemble(graph, chip, opts, ops), plans.cache))
}

/// The stage-model operators of `graph` with its parallel sets (docs/core-groups.md §CG-1):
/// each set one operator whose options place its members on groups of cores, every other
/// operator as [`instance_op`] builds it.
fn side_by_side(
    graph: &Graph,
    plans: &crate::plan::GraphPlans,
    chip: &ChipSpec,
    model: &dyn crate::plan::CostModel,
    cache: Option<&PlanCache>,
    b_noc: f64,
) -> Vec<InstanceOp> {
    let work: Vec<f64> = (0..graph.ops.len())
        .map(|i| plans.table(i).best_exec())
        .collect();
    let hbm: Vec<u64> = (0..graph.ops.len())
        .map(|i| plans.table(i).hbm_bytes(chip.cores))
        .collect();
    let steps = SetMemo::default().steps(graph, (&work, &hbm), (chip, model, cache), b_noc);
    steps
        .into_iter()
        .map(|step| match step {
            ParallelStep::Op(i) => instance_op(&graph.ops[i], plans.table(i), chip, b_noc),
            ParallelStep::Set { op, .. } => op,
        })
        .collect()
}

/// One step of a graph run with parallel sets: an operator on its own, or a set as its
/// stage-model operator.
#[derive(Clone, Debug)]
pub enum ParallelStep {
    /// Graph operator i.
    Op(usize),
    /// The set of these members (each a chain of graph operators).
    Set {
        /// The members' graph operators.
        members: Vec<Vec<usize>>,
        /// Its stage-model operator.
        op: InstanceOp,
    },
}

/// The parallel sets built so far, by their members' shapes (the same layer again is priced
/// once), with the group plan tables behind them.
#[derive(Default)]
struct SetMemo {
    tables: crate::parallel::options::GroupTables,
    sets: HashMap<Vec<Vec<OpShape>>, Option<InstanceOp>>,
}

impl SetMemo {
    /// `graph`'s steps with its parallel sets; `facts` are each graph operator's fastest
    /// execution (cycles) and HBM bytes on the whole chip. A set no allocation of groups can
    /// plan runs its members one after another, as without sets.
    fn steps(
        &mut self,
        graph: &Graph,
        facts: (&[f64], &[u64]),
        (chip, model, cache): (&ChipSpec, &dyn crate::plan::CostModel, Option<&PlanCache>),
        b_noc: f64,
    ) -> Vec<ParallelStep> {
        use crate::parallel::options::{member_shapes, renamed};
        use crate::parallel::{dependences, set_op, steps, GroupPlanner, Step};
        let tables = std::mem::take(&mut self.tables);
        let mut planner = GroupPlanner::resume(chip, model, cache, tables);
        let mut out = Vec::new();
        for step in steps(&dependences(graph), facts.0) {
            let members = match step {
                Step::Op(i) => {
                    out.push(ParallelStep::Op(i));
                    continue;
                }
                Step::Set(members) => members,
            };
            let made = self
                .sets
                .entry(member_shapes(graph, &members))
                .or_insert_with(|| set_op(graph, &members, facts, &mut planner, b_noc));
            match made {
                Some(op) => out.push(ParallelStep::Set {
                    op: renamed(op, graph, &members),
                    members,
                }),
                None => out.extend(members.concat().into_iter().map(ParallelStep::Op)),
            }
        }
        self.tables = planner.into_tables();
        out
    }
}

/// The stage-model operator of `op` planned as `t`: H = the table's HBM bytes / B_HBM
/// (c_min · cores when every option runs on the whole chip), one option per table entry,
/// ν = ρ · B_HBM / B_NoC,dist (`b_noc`).
fn instance_op(op: &Operator, t: &PlanTable, chip: &ChipSpec, b_noc: f64) -> InstanceOp {
    let b_hbm = chip.hbm.bandwidth_bytes_per_s;
    let hbm_bytes = t.hbm_bytes(chip.cores);
    let bytes = hbm_bytes as f64;
    InstanceOp {
        name: op.name.clone(),
        hbm_cycles: Cycles(bytes / b_hbm * chip.clock_hz),
        options: t
            .options
            .iter()
            .map(|o| OpOption {
                cold: Bytes(o.cold),
                hot: Bytes(o.hot),
                exec_cycles: Cycles(o.exec()),
                comm_cycles: Cycles(o.comm),
                noc_per_hbm: if hbm_bytes > 0 {
                    o.rho * b_hbm / b_noc
                } else {
                    0.0
                },
                groups: None,
                members: None,
            })
            .collect::<Vec<_>>()
            .into(),
        flops: Some(op.flops().0 as f64),
        preload_window: None,
        parallel: None,
    }
}

/// The instance of `ops` (all of `graph`'s operators in `opts.range`).
fn assemble(
    graph: &Graph,
    chip: &ChipSpec,
    opts: &InstanceOptions,
    ops: Vec<InstanceOp>,
) -> Instance {
    let format = if ops.iter().any(|o| o.parallel.is_some()) {
        INSTANCE_FORMAT_PARALLEL
    } else {
        INSTANCE_FORMAT
    };
    Instance {
        format: format.into(),
        name: format!(
            "{} on {}{}{}{}{}",
            graph.name,
            chip.name,
            noc_row_suffix(opts.noc_row),
            if opts.parallel {
                ", expert-parallel"
            } else {
                ""
            },
            opts.preload_window
                .map_or(String::new(), |w| format!(", window {w}")),
            opts.range.suffix_on(graph)
        ),
        sram_bytes: Bytes(chip.sram_bytes_per_core),
        clock_hz: chip.clock_hz,
        load_order: opts.load_order,
        preload_window: opts.preload_window,
        noc_row: opts.noc_row,
        ops,
    }
}

/// Builds the instances of many graphs of one model on one chip (an MoE model's sampled
/// steps), planning each operator shape once: the stage-model operator of a shape is kept in
/// memory, so a step whose experts receive token counts seen before plans nothing. Parallel
/// sets are built on request ([`InstanceMemo::parallel_steps`]), each set's members' shapes
/// once.
///
/// Shared by reference across threads (the steps of a run are built in parallel): the shapes
/// are read under a shared lock and planned under an exclusive one, so each shape is planned
/// once, and the instances are assembled outside both.
pub struct InstanceMemo {
    chip: ChipSpec,
    opts: InstanceOptions,
    b_noc: f64,
    ops: RwLock<Shapes>,
    sets: Mutex<SetMemo>,
}

/// The shapes planned so far, by their [`OpShape::print`]: an operator is found by its print
/// and [`OpShape::matches`], without building its shape.
#[derive(Default)]
struct Shapes {
    by_print: rustc_hash::FxHashMap<u64, Vec<Arc<Planned>>>,
    count: usize,
}

impl Shapes {
    /// The planned shape of `op`, if there is one.
    fn find(&self, op: &Operator, print: u64, rules: PlanRules) -> Option<&Arc<Planned>> {
        self.by_print
            .get(&print)?
            .iter()
            .find(|p| p.shape.matches(op, rules))
    }

    /// The planned `shape` under any print (a gather reading rows has its shape rewritten,
    /// so operators of one shape may print differently).
    fn with_shape(&self, shape: &OpShape) -> Option<Arc<Planned>> {
        self.by_print
            .values()
            .flatten()
            .find(|p| p.shape == *shape)
            .cloned()
    }
}

/// An operator shape's stage-model operator, its fastest execution (cycles) and its HBM
/// bytes, on the whole chip.
struct Planned {
    shape: OpShape,
    op: InstanceOp,
    best_exec: f64,
    hbm_bytes: u64,
}

impl InstanceMemo {
    /// An empty memo for `chip`; `opts.range` must be the whole graph. Its instances have no
    /// parallel sets (`opts.parallel` is for the caller: [`InstanceMemo::parallel`]).
    pub fn new(chip: &ChipSpec, opts: &InstanceOptions) -> InstanceMemo {
        InstanceMemo {
            chip: chip.clone(),
            opts: InstanceOptions {
                range: OpRange::All,
                ..opts.clone()
            },
            b_noc: noc_distribution_bytes_per_s(chip),
            ops: RwLock::default(),
            sets: Mutex::default(),
        }
    }

    /// The chip's cores (what a resident tensor spreads over).
    pub fn cores(&self) -> u64 {
        self.chip.cores
    }

    /// The chip's SRAM, all cores, bytes: an output operator whose weight exceeds it runs
    /// as column chunks ([`Graph::split_wide_outputs`], as the request layer cuts a dense
    /// model for its chip).
    pub fn total_sram_bytes(&self) -> u64 {
        self.chip.total_sram_bytes()
    }

    /// Operator shapes planned so far.
    pub fn shapes(&self) -> usize {
        self.shapes_read().count
    }

    /// The shapes planned so far, to read (a poisoned lock only means another thread panicked
    /// while planning: what it had inserted is whole).
    fn shapes_read(&self) -> std::sync::RwLockReadGuard<'_, Shapes> {
        self.ops.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The shapes planned so far, to add to: one thread plans at a time, so each shape is
    /// planned once.
    fn shapes_write(&self) -> std::sync::RwLockWriteGuard<'_, Shapes> {
        self.ops.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the options ask for parallel sets (`--expert-parallel`).
    pub fn parallel(&self) -> bool {
        self.opts.parallel
    }

    /// Asks for parallel sets (`on`) or not, keeping what is planned.
    pub fn set_parallel(&mut self, on: bool) {
        self.opts.parallel = on;
    }

    /// Plans the shapes of `graph` not planned yet; returns each operator's planned shape.
    fn plan(&self, graph: &Graph) -> Result<Vec<Arc<Planned>>> {
        let rules = graph.plan_rules;
        let prints: Vec<u64> = graph
            .ops
            .iter()
            .map(|op| OpShape::print(op, rules))
            .collect();
        let find_all = |planned: &Shapes| -> Vec<Option<Arc<Planned>>> {
            graph
                .ops
                .iter()
                .zip(&prints)
                .map(|(op, &print)| planned.find(op, print, rules).cloned())
                .collect()
        };
        // Most steps find every shape planned: a read lock, shared by the threads.
        let found = find_all(&self.shapes_read());
        if found.iter().all(Option::is_some) {
            return Ok(found.into_iter().flatten().collect());
        }
        let mut planned = self.shapes_write();
        let mut missing: Vec<(OpShape, &Operator)> = Vec::new();
        for (op, &print) in graph.ops.iter().zip(&prints) {
            if planned.find(op, print, rules).is_some() {
                continue;
            }
            let shape = OpShape::of(op, rules);
            if let Some(same) = planned.with_shape(&shape) {
                planned.by_print.entry(print).or_default().push(same);
            } else if !missing.iter().any(|(s, _)| *s == shape) {
                missing.push((shape, op));
            }
        }
        if !missing.is_empty() {
            self.plan_missing(graph, missing, &mut planned)?;
        }
        let found = find_all(&planned);
        let unplanned = graph.ops.iter().zip(&found).find(|(_, p)| p.is_none());
        if let Some((op, _)) = unplanned {
            return Err(ModelError::Invalid(format!(
                "operator {} was planned under no shape",
                op.name
            )));
        }
        Ok(found.into_iter().flatten().collect())
    }

    /// Plans `missing`, shapes of operators of `graph` that `planned` lacks, into it.
    fn plan_missing(
        &self,
        graph: &Graph,
        missing: Vec<(OpShape, &Operator)>,
        planned: &mut Shapes,
    ) -> Result<()> {
        let sub = Graph {
            name: graph.name.clone(),
            ops: missing.iter().map(|(_, op)| (*op).clone()).collect(),
            layers: graph.layers,
            plan_rules: graph.plan_rules,
            dtypes: graph.dtypes,
        };
        let model = cost::for_chip_with(&self.chip, &graph.dtypes)?;
        let plans = plan_graph_cached(
            &sub,
            &self.chip,
            model.as_ref(),
            self.opts.plan_cache.as_ref(),
        )?;
        for (i, (shape, op)) in missing.into_iter().enumerate() {
            let t = plans.table(i);
            let made = Planned {
                shape,
                op: instance_op(op, t, &self.chip, self.b_noc),
                best_exec: t.best_exec(),
                hbm_bytes: t.hbm_bytes(self.chip.cores),
            };
            let print = OpShape::print(op, graph.plan_rules);
            planned
                .by_print
                .entry(print)
                .or_default()
                .push(Arc::new(made));
            planned.count += 1;
        }
        Ok(())
    }

    /// The instance of all of `graph`'s operators, as [`build_instance`] builds it without
    /// parallel sets.
    pub fn instance(&self, graph: &Graph) -> Result<Instance> {
        let planned = self.plan(graph)?;
        let ops = graph
            .ops
            .iter()
            .zip(&planned)
            .map(|(op, p)| InstanceOp {
                name: op.name.clone(),
                hbm_cycles: p.op.hbm_cycles,
                options: Arc::clone(&p.op.options),
                flops: p.op.flops,
                preload_window: p.op.preload_window,
                parallel: p.op.parallel.clone(),
            })
            .collect();
        let opts = InstanceOptions {
            parallel: false,
            ..self.opts.clone()
        };
        Ok(assemble(graph, &self.chip, &opts, ops))
    }

    /// `graph`'s steps with its parallel sets, as [`build_instance`] builds them with
    /// `parallel` (an operator on its own is [`InstanceMemo::instance`]'s).
    pub fn parallel_steps(&self, graph: &Graph) -> Result<Vec<ParallelStep>> {
        let planned = self.plan(graph)?;
        let work: Vec<f64> = planned.iter().map(|p| p.best_exec).collect();
        let hbm: Vec<u64> = planned.iter().map(|p| p.hbm_bytes).collect();
        let model = cost::for_chip_with(&self.chip, &graph.dtypes)?;
        let cache = self.opts.plan_cache.as_ref();
        let on = (&self.chip, model.as_ref(), cache);
        let mut sets = self.sets.lock().unwrap_or_else(|e| e.into_inner());
        Ok(sets.steps(graph, (&work, &hbm), on, self.b_noc))
    }
}

/// The model layer an operator named `l<N>.…` (the zoo's names) belongs to.
fn model_layer(name: &str) -> Option<usize> {
    let rest = name.strip_prefix('l')?;
    let digits = rest.split('.').next()?;
    digits.parse().ok()
}

/// What a built instance's name appends for its NoC row: nothing for the default (phased),
/// `, SPEC §4 NoC row` for SPEC's.
fn noc_row_suffix(row: NocRow) -> &'static str {
    match row {
        NocRow::Phased => "",
        NocRow::Spec => ", SPEC §4 NoC row",
    }
}

/// The instance [`build_instance`] gives for `range` of `graph`, cut from `whole`, the instance
/// of all of `graph`'s operators, without planning again: an operator's options depend on its
/// shape and the chip only, so a cut's operators are the whole's (planning one layer costs
/// about as much as the whole model, whose layers share their shapes).
pub fn cut_instance(whole: &Instance, graph: &Graph, range: &OpRange) -> Result<Instance> {
    if whole.ops.iter().any(|o| o.parallel.is_some()) {
        return cut_by_name(whole, graph, range);
    }
    if whole.ops.len() != graph.ops.len() {
        return Err(ModelError::Invalid(format!(
            "instance '{}' has {} operators, graph '{}' {}: not the whole graph's instance",
            whole.name,
            whole.ops.len(),
            graph.name,
            graph.ops.len()
        )));
    }
    let ops = range.resolve(graph)?;
    Ok(Instance {
        name: format!("{}{}", whole.name, range.suffix_on(graph)),
        ops: whole.ops[ops].to_vec(),
        ..whole.clone()
    })
}

/// [`cut_instance`] of an instance with parallel sets, whose operators are not the graph's
/// one to one: the operators and sets whose graph operators are all in `range`; a set only
/// partly in it is an error.
fn cut_by_name(whole: &Instance, graph: &Graph, range: &OpRange) -> Result<Instance> {
    let ops = range.resolve(graph)?;
    let inside: std::collections::HashSet<&str> =
        graph.ops[ops].iter().map(|o| o.name.as_str()).collect();
    let mut kept = Vec::new();
    for op in &whole.ops {
        let names = op.graph_ops();
        let within = names.iter().filter(|n| inside.contains(*n)).count();
        if within == names.len() {
            kept.push(op.clone());
        } else if within > 0 {
            return Err(ModelError::Invalid(format!(
                "parallel set '{}' is only partly in{}: cut at its boundaries",
                op.name,
                range.suffix()
            )));
        }
    }
    Ok(Instance {
        name: format!("{}{}", whole.name, range.suffix_on(graph)),
        ops: kept,
        ..whole.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Mode;
    use crate::zoo::{self, ZooParams};

    #[test]
    fn a_cut_is_the_instance_built_for_the_range() {
        let mut params = ZooParams::new(Mode::Decode, 1, 64);
        params.layers = Some(2);
        let graph = zoo::build("bert-base", &params).unwrap();
        let chip = ChipSpec::preset("ipu-pod4").unwrap();
        let built = |range: OpRange| {
            let opts = InstanceOptions {
                range,
                load_order: LoadOrder::Named(NamedOrder::Free),
                preload_window: Some(3),
                ..InstanceOptions::default()
            };
            build_instance(&graph, &chip, &opts).unwrap()
        };
        let whole = built(OpRange::All);
        for range in [
            OpRange::Layers(1..2),
            OpRange::Layers(0..2),
            OpRange::Ops(2..9),
        ] {
            let cut = cut_instance(&whole, &graph, &range).unwrap();
            assert_eq!(cut, built(range.clone()), "{range:?}");
        }
        // Layer 1 is not layer 0: the cut follows the graph's layer structure.
        let (l0, l1) = (
            cut_instance(&whole, &graph, &OpRange::Layers(0..1)).unwrap(),
            cut_instance(&whole, &graph, &OpRange::Layers(1..2)).unwrap(),
        );
        assert_eq!(l0.ops.len(), graph.layers.ops_per_layer);
        assert_ne!(l0.ops[0].name, l1.ops[0].name);
        assert!(cut_instance(&l0, &graph, &OpRange::Layers(0..1)).is_err());
        assert!(cut_instance(&whole, &graph, &OpRange::Layers(2..3)).is_err());
    }
}
