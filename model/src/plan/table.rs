//! Per-operator tables (SPEC §3): the hot Pareto front, the cold candidates and the cold→hot
//! table whose entries are the operator's options.
//!
//! Two passes over the plans keep memory small: the first finds the hot front; the second
//! pairs every plan, as a cold layout, with the front plans of the same spatial partition.

use super::geometry::Geometry;
use super::shape::OpShape;
use super::CostModel;
use super::{spatial, temporal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A point of the hot Pareto front.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrontPoint {
    /// Execution footprint, bytes per core.
    pub hot: u64,
    /// Compute cycles.
    pub comp: f64,
    /// Communication cycles.
    pub comm: f64,
}

/// One option of an operator: a cold layout waiting in SRAM and the hot plan it runs with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptionEntry {
    /// Cold footprint, bytes per core.
    pub cold: u64,
    /// Hot footprint, bytes per core.
    pub hot: u64,
    /// Compute cycles.
    pub comp: f64,
    /// Communication cycles, warm-up included.
    pub comm: f64,
    /// Warm-up cycles (included in `comm`).
    pub warm_up: f64,
    /// Broadcast ratio ρ = cold / c_min (1 without HBM data).
    pub rho: f64,
}

impl OptionEntry {
    /// comp + comm.
    pub fn exec(&self) -> f64 {
        self.comp + self.comm
    }
}

/// Everything planning learned about one operator shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanTable {
    /// Spatial partitions that passed the thresholds.
    pub spatial: usize,
    /// Plans (spatial × temporal) evaluated.
    pub plans: u64,
    /// Hot Pareto front, increasing hot, strictly decreasing exec (under the reference rules
    /// several plans may share a hot size, each faster than the one before).
    pub front: Vec<FrontPoint>,
    /// Distinct cold sizes of plans that fit in SRAM (bytes per core).
    pub cold_sizes: Vec<u64>,
    /// The cold→hot table: the best pair per (cold size, front hot size), sorted.
    pub table: Vec<OptionEntry>,
    /// The options: table entries Pareto-optimal in (cold, hot, exec, comm).
    pub options: Vec<OptionEntry>,
    /// Smallest cold size in the table (bytes per core).
    pub c_min: u64,
}

impl PlanTable {
    /// The fastest execution over all options.
    pub fn best_exec(&self) -> f64 {
        self.options
            .iter()
            .map(OptionEntry::exec)
            .fold(f64::INFINITY, f64::min)
    }

    /// Table entries removed by Pareto pruning.
    pub fn pruned(&self) -> usize {
        self.table.len() - self.options.len()
    }

    /// The smallest hot footprint.
    pub fn min_hot(&self) -> u64 {
        self.front.first().map_or(0, |f| f.hot)
    }
}

/// How much of one enumeration was priced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Enumeration {
    /// Plans enumerated (spatial × temporal; [`PlanTable::plans`]).
    pub plans: u64,
    /// Plans that fit in SRAM.
    pub fitting: u64,
    /// Fitting plans priced in full (rotation rounds and cost model).
    pub costed: u64,
    /// Fitting plans not priced: their lower bound already reaches the exec of a priced plan
    /// with a smaller hot footprint (of the same partition or an earlier chunk), so they
    /// cannot be on the front.
    pub skipped: u64,
}

impl Enumeration {
    /// The sum of two counts.
    pub fn plus(self, o: Enumeration) -> Enumeration {
        Enumeration {
            plans: self.plans + o.plans,
            fitting: self.fitting + o.fitting,
            costed: self.costed + o.costed,
            skipped: self.skipped + o.skipped,
        }
    }
}

/// The (hot, exec) Pareto staircase of the plans priced so far: increasing hot, strictly
/// decreasing exec. A sorted vector: lookups (one or two per plan) bisect it, and inserts
/// (a new Pareto point) are rare.
#[derive(Default)]
struct Staircase(Vec<(u64, f64)>);

impl Staircase {
    /// The fastest exec among the priced plans with a hot footprint below `hot` (∞: none).
    fn fastest_below(&self, hot: u64) -> f64 {
        match self.0.partition_point(|p| p.0 < hot) {
            0 => f64::INFINITY,
            i => self.0[i - 1].1,
        }
    }

    /// Adds a priced plan; whether it is faster than every priced plan with a hot footprint
    /// up to its own (and so now on the staircase).
    fn insert(&mut self, hot: u64, exec: f64) -> bool {
        let upto = self.0.partition_point(|p| p.0 <= hot);
        if upto > 0 && self.0[upto - 1].1 <= exec {
            return false;
        }
        // The points it dominates (hot ≥ its own, exec ≥ its own) follow it contiguously.
        let from = self.0.partition_point(|p| p.0 < hot);
        let to = from + self.0[from..].iter().take_while(|p| p.1 >= exec).count();
        self.0.splice(from..to, [(hot, exec)]);
        true
    }
}

/// Pass 1 over one spatial partition: the plans that were, when enumerated, faster than every
/// earlier plan of the partition with the same hot size (in enumeration order).
#[derive(Default)]
struct Pass1 {
    counts: Enumeration,
    /// The partition's priced plans as a staircase (skipping and recording).
    stair: Staircase,
    /// (exec, point, offset of its t in `arena`).
    records: Vec<(f64, FrontPoint, usize)>,
    /// The records' temporal partitions, row after row (records are frequent and most are
    /// superseded, so one flat buffer instead of a nested `Vec` each).
    arena: Vec<u64>,
    colds: std::collections::BTreeSet<u64>,
}

struct FrontPlan {
    point: FrontPoint,
    t: Vec<Vec<u64>>,
}

/// Partitions per chunk of pass 1 (see [`build_counted`]).
const SEED_CHUNK: usize = 32;

/// Pass 1 over spatial partition `p`; `seed` holds plans priced in earlier chunks.
fn pass1(
    shape: &OpShape,
    p: &[u64],
    cores: u64,
    sram: u64,
    cost: &dyn CostModel,
    divs: &temporal::Divisors,
    seed: &Staircase,
) -> Pass1 {
    let mut local = Pass1::default();
    let mut g = Geometry::for_partition(shape, p, cores);
    let mut last_cold = None;
    temporal::for_each_leaf(shape, p, cores, divs, |leaf| {
        let t = leaf.t;
        local.counts.plans += 1;
        g.set_leaf(shape, leaf);
        if g.hot_bytes > sram {
            return;
        }
        local.counts.fitting += 1;
        if last_cold != Some(g.cold_bytes) {
            last_cold = Some(g.cold_bytes);
            local.colds.insert(g.cold_bytes);
        }
        let bound = cost.exec_lower_bound(shape, &g);
        // bound ≥ the smaller of the two (the shared staircase decides most plans alone)
        if bound >= seed.fastest_below(g.hot_bytes)
            || bound >= local.stair.fastest_below(g.hot_bytes)
        {
            local.counts.skipped += 1;
            return;
        }
        g.set_rounds(shape, t);
        local.counts.costed += 1;
        let c = cost.cost(shape, &g);
        let exec = c.exec();
        // A record is a plan faster than every earlier one of its hot size; of those, only
        // the ones faster than every priced plan with a smaller hot size can reach the front,
        // and those are exactly the plans the partition's own staircase takes.
        if local.stair.insert(g.hot_bytes, exec) {
            let point = FrontPoint {
                hot: g.hot_bytes,
                comp: c.comp,
                comm: c.comm,
            };
            local.records.push((exec, point, local.arena.len()));
            t.iter().for_each(|row| local.arena.extend_from_slice(row));
        }
    });
    local
}

/// Plans one operator shape on `cores` cores with `sram` bytes each; `None` when no plan fits.
/// The shape's [`PlanRules`](super::PlanRules) decide whether superseded plans stay on the
/// front.
pub fn build(shape: &OpShape, cores: u64, sram: u64, cost: &dyn CostModel) -> Option<PlanTable> {
    build_counted(shape, cores, sram, cost).0
}

/// [`build`], with how many plans were priced and skipped.
///
/// A fitting plan is priced only when the cost model's
/// [`exec_lower_bound`](CostModel::exec_lower_bound) is below the fastest exec of the priced
/// plans with a smaller hot footprint (of its partition and of earlier chunks of partitions).
/// The table is the one full pricing builds: docs/plans.md, "Skipping plans", has the proof.
pub fn build_counted(
    shape: &OpShape,
    cores: u64,
    sram: u64,
    cost: &dyn CostModel,
) -> (Option<PlanTable>, Enumeration) {
    let partitions = spatial::partitions(&shape.dims, cores);
    // Replica counts are at most `cores`; past 2^16 the table would be large and the rest
    // falls back to trial division.
    let divs = temporal::Divisors::up_to(cores.min(1 << 16));
    // Pass 1 (parallel over spatial partitions): each partition's record plans per hot size.
    // Partitions go in chunks of a fixed size, in order; each chunk's priced plans join a
    // staircase that lets the later chunks skip more. The chunks are fixed, not the threads'
    // shares, so the counts are the same for any thread count (the tables are the same
    // anyway).
    let mut seed = Staircase::default();
    let mut passes: Vec<Pass1> = Vec::with_capacity(partitions.len());
    for chunk in partitions.chunks(SEED_CHUNK) {
        let done: Vec<Pass1> = chunk
            .par_iter()
            .map(|p| pass1(shape, p, cores, sram, cost, &divs, &seed))
            .collect();
        for pass in &done {
            for &(hot, exec) in &pass.stair.0 {
                seed.insert(hot, exec);
            }
        }
        passes.extend(done);
    }
    // In enumeration order (partition, then temporal partition), the plans faster than every
    // earlier plan of their hot size; ties go to the earlier plan, whatever the thread count.
    // A global record is a record of its own partition, so the partitions' records suffice.
    let counts = passes
        .iter()
        .fold(Enumeration::default(), |a, p| a.plus(p.counts));
    let plans = counts.plans;
    let mut colds = std::collections::BTreeSet::new();
    let mut fastest: BTreeMap<u64, f64> = BTreeMap::new();
    let mut records: Vec<(f64, usize, FrontPlan)> = Vec::new();
    let nv = shape.tensors.len();
    for (pi, pass) in passes.into_iter().enumerate() {
        colds.extend(pass.colds);
        for (exec, point, at) in pass.records {
            let hot = point.hot;
            if fastest.get(&hot).is_none_or(|e| exec < *e) {
                fastest.insert(hot, exec);
                let flat = &pass.arena[at..at + nv * shape.dims.len()];
                let t = (0..shape.dims.len())
                    .map(|d| flat[d * nv..(d + 1) * nv].to_vec())
                    .collect();
                records.push((exec, pi, FrontPlan { point, t }));
            }
        }
    }
    // SPEC §3 keeps the fastest plan of each hot size (its last record); the reference keeps
    // every record, each faster than the one before.
    if !shape.rules.superseded_front_plans {
        let mut seen = std::collections::BTreeSet::new();
        let mut kept: Vec<(f64, usize, FrontPlan)> = records
            .into_iter()
            .rev()
            .filter(|r| seen.insert(r.2.point.hot))
            .collect();
        kept.reverse();
        records = kept;
    }
    // The front: by hot size (stably), a plan only if strictly faster than every one before.
    records.sort_by_key(|r| r.2.point.hot);
    let mut front: Vec<(usize, FrontPlan)> = Vec::new();
    let mut fastest = f64::INFINITY;
    for (exec, pi, plan) in records {
        if exec < fastest {
            fastest = exec;
            front.push((pi, plan));
        }
    }
    if front.is_empty() {
        return (None, counts);
    }
    // Pass 2: every fitting plan as a cold layout, paired with compatible front plans.
    let mut by_partition: BTreeMap<usize, Vec<&FrontPlan>> = BTreeMap::new();
    for (pi, plan) in &front {
        by_partition.entry(*pi).or_default().push(plan);
    }
    let mut pairs: BTreeMap<(u64, u64), OptionEntry> = BTreeMap::new();
    for (pi, hots) in &by_partition {
        let p = &partitions[*pi];
        let mut g = Geometry::for_partition(shape, p, cores);
        let mut factors = Vec::with_capacity(shape.tensors.len());
        temporal::for_each(shape, p, cores, &divs, |t_cold| {
            // Only the cold footprint and tiles matter here.
            g.set_footprint(shape, t_cold);
            for hot in hots {
                if hot.point.hot < g.cold_bytes || !multiples(t_cold, &hot.t, &mut factors) {
                    continue;
                }
                let warm = cost.warm_up(shape, &factors, &g.z);
                let entry = OptionEntry {
                    cold: g.cold_bytes,
                    hot: hot.point.hot,
                    comp: hot.point.comp,
                    comm: hot.point.comm + warm,
                    warm_up: warm,
                    rho: 1.0,
                };
                let key = (entry.cold, entry.hot);
                if pairs.get(&key).is_none_or(|e| entry.exec() < e.exec()) {
                    pairs.insert(key, entry);
                }
            }
        });
    }
    let mut table: Vec<OptionEntry> = pairs.into_values().collect();
    let c_min = table.iter().map(|o| o.cold).min().unwrap_or(0);
    for o in &mut table {
        o.rho = if c_min > 0 {
            o.cold as f64 / c_min as f64
        } else {
            1.0
        };
    }
    let options = pareto(table.clone());
    let table = PlanTable {
        spatial: partitions.len(),
        plans,
        front: front.into_iter().map(|(_, f)| f.point).collect(),
        cold_sizes: colds.into_iter().collect(),
        table,
        options,
        c_min,
    };
    (Some(table), counts)
}

/// Per tensor Π_d t_cold/t_hot into `m` when every `t_cold[d][v]` is a multiple of
/// `t_hot[d][v]` (returns whether it is; `m` is a buffer reused across calls).
fn multiples(cold: &[Vec<u64>], hot: &[Vec<u64>], m: &mut Vec<u64>) -> bool {
    let nv = cold.first().map_or(0, Vec::len);
    m.clear();
    m.resize(nv, 1);
    for (rc, rh) in cold.iter().zip(hot) {
        for v in 0..nv {
            if rc[v] % rh[v] != 0 {
                return false;
            }
            m[v] *= rc[v] / rh[v];
        }
    }
    true
}

/// Entries not dominated in (cold, hot, exec, comm): another entry at most as large in all
/// four and smaller in one removes it. Sorted by (cold, hot).
pub fn pareto(mut entries: Vec<OptionEntry>) -> Vec<OptionEntry> {
    entries.sort_by_key(|e| (e.cold, e.hot));
    let key = |e: &OptionEntry| [e.cold as f64, e.hot as f64, e.exec(), e.comm];
    let dominated = |e: &OptionEntry, by: &OptionEntry| {
        let (a, b) = (key(e), key(by));
        b.iter().zip(&a).all(|(x, y)| x <= y) && b.iter().zip(&a).any(|(x, y)| x < y)
    };
    entries
        .iter()
        .filter(|e| !entries.iter().any(|o| dominated(e, o)))
        .cloned()
        .collect()
}
