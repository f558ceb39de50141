//! What a plan (p, t) implies per core: tile extents, tensor tiles, footprints, iterations,
//! rotation rounds and output replicas — everything a cost model prices.

use super::shape::OpShape;
use super::temporal::replicas;

/// One rotation round (SPEC §3): `iters` shifts of the participating tensors.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    /// Shifts in the round (g − 1).
    pub iters: u64,
    /// Tensors rotated in it.
    pub tensors: usize,
    /// Elements moved per shift (Σ tiles of the participating tensors).
    pub elems: u64,
    /// Bytes moved per shift (Σ tile × bytes per element of the participating tensors).
    pub bytes: u64,
}

/// The per-core consequences of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    /// Cores the operator runs on: the chip's, or its group's under the clean rules
    /// ([`super::spatial::groups`]).
    pub cores: u64,
    /// L_d = ⌈D_d / p_d⌉.
    pub tile: Vec<u64>,
    /// Per-iteration extents ⌈L_d / max_v `t[d][v]`⌉.
    pub step: Vec<u64>,
    /// Tile elements per tensor z_v.
    pub z: Vec<u64>,
    /// Whether tensor v rotates (some `t[d][v]` > 1).
    pub rotates: Vec<bool>,
    /// Replica counts R_v.
    pub replicas: Vec<u64>,
    /// Per dimension d, bit v set when d indexes tensor v (tensors past 63 are left out):
    /// what [`TensorShape::indexed_by`](super::TensorShape::indexed_by) answers, read once
    /// per partition for the cost models' inner loop.
    pub indexes: Vec<u64>,
    /// Iterations I = Π_d max_v `t[d][v]`.
    pub iterations: u64,
    /// Rotation rounds ordered by elements moved, descending.
    pub rounds: Vec<Round>,
    /// Output replicas k = R_0 / Π_d `t[d][0]`.
    pub output_replicas: u64,
    /// Execution footprint in bytes per core (each tensor at its own bytes per element).
    pub hot_bytes: u64,
    /// Footprint of the HBM-sourced tensors while they wait, bytes per core.
    pub cold_bytes: u64,
    /// Scratch row for the rounds (kept to avoid allocating per plan).
    row: Vec<u64>,
}

/// Elements of one tile of `axes` given per-dimension extents `ext(d)`: a plain axis has the
/// extent of its dimension; a compound (window) axis spans Σ extents − (n − 1).
pub fn tile_elems(axes: &[Vec<usize>], ext: impl Fn(usize) -> u64) -> u64 {
    axes.iter()
        .map(|a| match a.as_slice() {
            [] => 1,
            [d] => ext(*d),
            many => many.iter().map(|&d| ext(d)).sum::<u64>() + 1 - many.len() as u64,
        })
        .product()
}

impl Geometry {
    /// The geometry of spatial partition `p` and temporal partition `t` on `cores` cores.
    pub fn new(shape: &OpShape, p: &[u64], t: &[Vec<u64>], cores: u64) -> Geometry {
        let mut g = Geometry::for_partition(shape, p, cores);
        g.set_temporal(shape, t);
        g
    }

    /// The partition-level part (tiles, replicas); call [`Geometry::set_temporal`] next.
    /// Enumeration keeps one per spatial partition and refills it for every t, so the hot
    /// loop allocates nothing.
    pub fn for_partition(shape: &OpShape, p: &[u64], cores: u64) -> Geometry {
        Geometry {
            cores,
            tile: shape
                .dims
                .iter()
                .zip(p)
                .map(|(&d, &pi)| d.div_ceil(pi))
                .collect(),
            step: Vec::with_capacity(p.len()),
            z: Vec::with_capacity(shape.tensors.len()),
            rotates: Vec::with_capacity(shape.tensors.len()),
            replicas: replicas(shape, p),
            indexes: (0..shape.dims.len())
                .map(|d| {
                    (shape.tensors.iter().take(64).enumerate())
                        .filter(|(_, t)| t.indexed_by(d))
                        .fold(0, |bits, (v, _)| bits | 1 << v)
                })
                .collect(),
            iterations: 1,
            rounds: Vec::new(),
            output_replicas: 1,
            hot_bytes: 0,
            cold_bytes: 0,
            row: Vec::with_capacity(shape.tensors.len()),
        }
    }

    /// Recomputes everything that depends on the temporal partition `t`.
    pub fn set_temporal(&mut self, shape: &OpShape, t: &[Vec<u64>]) {
        self.set_footprint(shape, t);
        self.set_steps(t);
        self.set_rounds(shape, t);
    }

    /// The footprint part of [`Geometry::set_temporal`]: tiles `z`, `rotates`, `hot_bytes`
    /// and `cold_bytes`. Enumeration calls it first and skips the rest for plans that do not
    /// fit, and pass 2 of the tables needs nothing else.
    pub fn set_footprint(&mut self, shape: &OpShape, t: &[Vec<u64>]) {
        let nd = shape.dims.len();
        self.z.clear();
        self.rotates.clear();
        for (v, ts) in shape.tensors.iter().enumerate() {
            let tile = &self.tile;
            self.z
                .push(tile_elems(&ts.axes, |d| tile[d].div_ceil(t[d][v])));
            self.rotates.push((0..nd).any(|d| t[d][v] > 1));
        }
        self.set_bytes(shape);
    }

    /// `hot_bytes` and `cold_bytes` from `z` and `rotates`: a rotating tensor holds two tiles.
    fn set_bytes(&mut self, shape: &OpShape) {
        let (mut hot, mut cold) = (0, 0);
        for ((ts, &z), &rotates) in shape.tensors.iter().zip(&self.z).zip(&self.rotates) {
            let bytes = ts.dtype_bytes.of(z);
            hot += if rotates { 2 * bytes } else { bytes };
            if ts.from_hbm {
                cold += bytes;
            }
        }
        self.hot_bytes = hot;
        self.cold_bytes = cold;
    }

    /// [`Geometry::set_footprint`] and [`Geometry::set_steps`] from what the search built up
    /// for the partition (the same values, without recomputing them from `t`).
    pub fn set_leaf(&mut self, shape: &OpShape, leaf: &super::temporal::Leaf) {
        match leaf.z {
            Some(z) => {
                self.z.clear();
                self.z.extend_from_slice(z);
                self.rotates.clear();
                self.rotates.extend(leaf.used.iter().map(|&u| u > 1));
                self.set_bytes(shape);
            }
            None => self.set_footprint(shape, leaf.t),
        }
        self.step.clear();
        self.step.extend_from_slice(leaf.step);
        self.iterations = leaf.iterations;
        self.output_replicas = (self.replicas[0] / leaf.used[0]).max(1);
    }

    /// The next part of [`Geometry::set_temporal`] (after [`Geometry::set_footprint`] with
    /// the same `t`): per-step extents, iterations and output replicas. Enumeration then asks
    /// the cost model for a bound ([`CostModel::exec_lower_bound`](super::CostModel)) before
    /// it pays for the rounds.
    pub fn set_steps(&mut self, t: &[Vec<u64>]) {
        self.step.clear();
        self.iterations = 1;
        for (d, row) in t.iter().enumerate() {
            let split = row.iter().copied().max().unwrap_or(1);
            self.iterations *= split;
            self.step.push(self.tile[d].div_ceil(split));
        }
        let out_split: u64 = t.iter().map(|row| row[0]).product();
        self.output_replicas = (self.replicas[0] / out_split).max(1);
    }

    /// Rotation rounds of every dimension (SPEC §3): with row r = `t[d][·]`, repeatedly take
    /// g = gcd of the entries > 1; a round shifts g − 1 times the tensors with r_v > 1
    /// (moving Σ z_v elements per shift); divide those entries by g. Sorted by elements,
    /// descending (stable). The last part of [`Geometry::set_temporal`], after
    /// [`Geometry::set_steps`] with the same `t`.
    pub fn set_rounds(&mut self, shape: &OpShape, t: &[Vec<u64>]) {
        self.rounds.clear();
        for row in t {
            self.row.clear();
            self.row.extend_from_slice(row);
            loop {
                let g = self
                    .row
                    .iter()
                    .filter(|&&x| x > 1)
                    .fold(0, |acc, &x| gcd(acc, x));
                if g < 2 {
                    break; // done (or not a divisor chain; enumeration never produces that)
                }
                let (mut tensors, mut elems, mut bytes) = (0, 0, 0);
                for (v, x) in self.row.iter_mut().enumerate() {
                    if *x > 1 {
                        tensors += 1;
                        elems += self.z[v];
                        bytes += shape.tensors[v].dtype_bytes.of(self.z[v]);
                        *x /= g;
                    }
                }
                self.rounds.push(Round {
                    iters: g - 1,
                    tensors,
                    elems,
                    bytes,
                });
            }
        }
        self.rounds.sort_by_key(|r| std::cmp::Reverse(r.elems));
    }

    /// (number of shifts, bytes shifted) over all rounds: round i repeats once per
    /// combination of the earlier rounds, G_i = Π_{i'<i} (iters + 1).
    pub fn shift_totals(&self) -> (f64, f64) {
        let mut before = 1.0;
        let (mut shifts, mut bytes) = (0.0, 0.0);
        for r in &self.rounds {
            let iters = r.iters as f64;
            bytes += before * r.bytes as f64 * iters;
            shifts += before * iters * r.tensors as f64;
            before *= iters + 1.0;
        }
        (shifts, bytes)
    }

    /// Output elements of one compute step.
    pub fn output_step_elems(&self, shape: &OpShape) -> u64 {
        tile_elems(&shape.tensors[0].axes, |d| self.step[d])
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
