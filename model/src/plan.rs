//! Intra-operator plans (SPEC §3): every operator's menu of execution options.
//!
//! A plan is a spatial partition p (cores per loop dimension, [`spatial`]) and a temporal
//! partition t (rotation splits per dimension and tensor, [`temporal`]); its per-core
//! consequences are a [`Geometry`], priced by a [`CostModel`]. [`table`]
//! reduces the plans of one operator to its hot Pareto front and cold→hot options.
//! Identical operators (same [`OpShape`]) are planned once; unique shapes in parallel.

pub mod cache;
mod cost_model;
mod geometry;
mod rules;
mod shape;
pub mod spatial;
pub mod table;
pub mod temporal;

pub use cache::{CacheStats, PlanCache};
pub use cost_model::{CostModel, PlanCost};
pub use geometry::{Geometry, Round};
pub use rules::PlanRules;
pub use shape::{OpShape, TensorShape};
pub use table::{Enumeration, FrontPoint, OptionEntry, PlanTable};

use crate::chip::ChipSpec;
use crate::error::{ModelError, Result};
use crate::graph::Graph;
use rayon::prelude::*;
use std::collections::HashMap;

/// The plan tables of a whole graph.
#[derive(Clone, Debug)]
pub struct GraphPlans {
    /// For each operator, the index of its shape in `unique`.
    pub shape_of: Vec<usize>,
    /// Each distinct operator shape, the first operator with it, and its table.
    pub unique: Vec<(OpShape, usize, PlanTable)>,
    /// How many tables came from the plan cache.
    pub cache: CacheStats,
    /// Plans enumerated, priced and skipped over the shapes enumerated in this call (zero
    /// for shapes read from the cache).
    pub enumeration: Enumeration,
}

impl GraphPlans {
    /// The table of operator `i`.
    pub fn table(&self, i: usize) -> &PlanTable {
        &self.unique[self.shape_of[i]].2
    }

    /// `fnv1a64:…` over the `Debug` text of every unique table in order (an f64's `Debug`
    /// round-trips, so equal digests mean equal tables): what shows that a change to
    /// enumeration leaves the tables as they were.
    pub fn tables_digest(&self) -> String {
        let mut h = elk_stage::hash::Fnv1a64::default();
        for (_, _, table) in &self.unique {
            h.update(format!("{table:?}\n").as_bytes());
        }
        h.finish()
    }
}

/// Plans every operator of `graph` on `chip`, priced by `model` (usually
/// `cost::for_chip(chip)`), under the graph's [`PlanRules`].
pub fn plan_graph(graph: &Graph, chip: &ChipSpec, model: &dyn CostModel) -> Result<GraphPlans> {
    plan_graph_cached(graph, chip, model, None)
}

/// [`plan_graph`], reading and writing each shape's table in `cache` when given. The tables
/// are the same either way ([`cache`] says why).
pub fn plan_graph_cached(
    graph: &Graph,
    chip: &ChipSpec,
    model: &dyn CostModel,
    cache: Option<&PlanCache>,
) -> Result<GraphPlans> {
    let mut index: HashMap<OpShape, usize> = HashMap::new();
    let mut shapes: Vec<(OpShape, usize)> = Vec::new();
    let shape_of = graph
        .ops
        .iter()
        .enumerate()
        .map(|(i, op)| {
            let s = OpShape::of(op, graph.plan_rules);
            *index.entry(s.clone()).or_insert_with(|| {
                shapes.push((s, i));
                shapes.len() - 1
            })
        })
        .collect();
    let (cores, sram) = (chip.cores, chip.sram_bytes_per_core);
    let found: Vec<(Option<PlanTable>, Source)> = shapes
        .par_iter()
        .map(|(s, _)| table_from(s, cores, sram, model, cache))
        .collect();
    let mut stats = CacheStats::default();
    let mut enumeration = Enumeration::default();
    let mut tables = Vec::with_capacity(found.len());
    for (t, source) in found {
        match source {
            Source::Cache => stats.hits += 1,
            Source::Built(counts) => {
                stats.built += 1;
                enumeration = enumeration.plus(counts);
            }
            Source::Rebuilt {
                counts,
                rejected,
                written,
            } => {
                stats.built += 1;
                stats.rejected += usize::from(rejected);
                stats.write_error = stats.write_error.or(written);
                enumeration = enumeration.plus(counts);
            }
        }
        tables.push(t);
    }
    let unique = shapes
        .into_iter()
        .zip(tables)
        .map(|((s, first), t)| match t {
            Some(t) => Ok((s, first, t)),
            None => Err(ModelError::NoPlanFits {
                op: graph.ops[first].name.clone(),
                sram_bytes_per_core: chip.sram_bytes_per_core,
                cores: chip.cores,
                why: why_no_plan_fits(&graph.ops[first], &s, chip),
            }),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(GraphPlans {
        shape_of,
        unique,
        cache: stats,
        enumeration,
    })
}

/// The table of `shape` on `cores` cores with `sram` bytes each: read from `cache` when it
/// holds it, else built (and kept there); `None` when no plan fits.
pub fn table_on(
    shape: &OpShape,
    cores: u64,
    sram: u64,
    model: &dyn CostModel,
    cache: Option<&PlanCache>,
) -> Option<PlanTable> {
    table_from(shape, cores, sram, model, cache).0
}

/// [`table_on`], and where the table came from.
fn table_from(
    s: &OpShape,
    cores: u64,
    sram: u64,
    model: &dyn CostModel,
    cache: Option<&PlanCache>,
) -> (Option<PlanTable>, Source) {
    let Some(cache) = cache else {
        let (t, counts) = table::build_counted(s, cores, sram, model);
        return (t, Source::Built(counts));
    };
    let key = PlanCache::key(s, cores, sram, model);
    let rejected = match cache.load(&key) {
        cache::Lookup::Hit(t) => return (t, Source::Cache),
        cache::Lookup::Miss => false,
        cache::Lookup::Rejected => true,
    };
    let (t, counts) = table::build_counted(s, cores, sram, model);
    let written = cache.store(&key, t.as_ref()).err();
    (
        t,
        Source::Rebuilt {
            counts,
            rejected,
            written,
        },
    )
}

/// Why no plan of `op` (planned as `shape`) fits `chip`, naming the tensor: each tensor as
/// planned (a gather's rows, not its table) spread evenly over every core is the least any
/// plan holds of it per core. The largest tensor is named; when it alone exceeds the SRAM
/// that is the reason, else the tensors together (and, under that, the double buffers,
/// replicas and padding that every admissible plan adds).
pub fn why_no_plan_fits(op: &crate::graph::Operator, shape: &OpShape, chip: &ChipSpec) -> String {
    use elk_stage::units::si;
    // Tensor v of the shape is tensor v of the operator (OpShape::of keeps the order).
    debug_assert_eq!(shape.tensors.len(), op.tensors.len());
    let cores = chip.cores.max(1);
    let per_core: Vec<(usize, u64)> = shape
        .tensors
        .iter()
        .enumerate()
        .map(|(v, t)| {
            let elems = geometry::tile_elems(&t.axes, |d| shape.dims[d]);
            (v, t.dtype_bytes.of(elems).div_ceil(cores))
        })
        .collect();
    let Some(&(v, largest)) = per_core
        .iter()
        .max_by_key(|(v, b)| (*b, std::cmp::Reverse(*v)))
    else {
        return "it has no tensors".into();
    };
    let total: u64 = per_core.iter().map(|(_, b)| b).sum();
    let name = op.tensors.get(v).map_or("?", |t| t.source.as_str());
    let role = if v == 0 {
        "output"
    } else if shape.tensors[v].from_hbm {
        "HBM input"
    } else {
        "input"
    };
    let bytes = |b: u64| si(b as f64, "B");
    if largest > chip.sram_bytes_per_core {
        format!(
            "its {role} '{name}' alone needs {} per core spread over all {cores} cores ({} in all)",
            bytes(largest),
            bytes(largest * cores)
        )
    } else {
        format!(
            "its tensors need {} per core spread over all {cores} cores (the largest, {role} '{name}', {}), and every admissible plan adds double buffers, replicas or padding beyond the {}",
            bytes(total),
            bytes(largest),
            bytes(chip.sram_bytes_per_core)
        )
    }
}

/// Where one shape's table came from.
enum Source {
    /// Enumerated, no cache in use.
    Built(Enumeration),
    /// Read from the cache.
    Cache,
    /// Enumerated and written to the cache (`rejected`: over an entry that was not trusted;
    /// `written`: the write's error, if it failed).
    Rebuilt {
        counts: Enumeration,
        rejected: bool,
        written: Option<String>,
    },
}
