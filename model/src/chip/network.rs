//! The network as resources with capacities (bytes per cycle) and traffic classes as sparse
//! usage vectors (resource, bytes on it per byte delivered). Links of a 2-D mesh or torus
//! (dimension-order routing), per-core ports of an all-to-all exchange, and the HBM
//! controllers' ports are all resources; the detailed simulator shares them max-min fairly
//! (`elk_sim::detailed::fair`), and [`distribution_bytes_per_s`] derives the stage model's
//! B_NoC,dist of a mesh or torus from them.

use super::{ChipSpec, Placement, Topology};

/// A resource index.
pub type Res = usize;

/// Sparse usage: bytes crossing each resource per byte of the class.
pub type Usage = Vec<(Res, f64)>;

/// Where the HBM controllers sit and how they deliver.
#[derive(Clone, Debug, PartialEq)]
pub enum HbmLayout {
    /// C controllers at these cores, each serving 1/C of every tensor (interleaved) and
    /// sending its bytes to every core, ρ copies (many-to-many unicast).
    Distributed(Vec<usize>),
    /// The paper's emulation: one core broadcasting at the full HBM rate (multicast: each
    /// byte leaves the source once).
    SingleBroadcast(usize),
}

/// The chip's network.
pub struct Network {
    /// Capacity of each resource, bytes per cycle.
    pub capacity: Vec<f64>,
    /// Name of each resource (for the hottest-links report).
    pub names: Vec<String>,
    /// Number of NoC resources (links or ports); controller ports follow them.
    pub noc_resources: usize,
    topology: Topology,
    width: usize,
    height: usize,
    cores: usize,
}

/// The network seen by the traffic that will flow on it: resources that every traffic class
/// uses with the same weights (and that have the same capacity) behave identically under
/// max-min fairness, so each such group is simulated as one resource — on an all-to-all
/// chip, 5,888 ejection ports become one. Utilisation is reported per group.
pub struct Compressed {
    /// Capacity of each group (of one member), bytes per cycle.
    pub capacity: Vec<f64>,
    /// Representative name and member count of each group.
    pub names: Vec<(String, usize)>,
    /// Groups that are NoC resources (the rest are controller ports).
    pub noc_groups: usize,
    /// Group of each controller's port.
    pub controller: Vec<Res>,
    /// The shift class.
    pub shift: Usage,
    /// Mean hops of a shift.
    pub shift_hops: f64,
    /// Per controller: distribution usage for ρ = 1 (unicast), and mean hops.
    pub unit: Vec<(Usage, f64)>,
    /// Per ring given to [`Network::compress`] (a group's region): its shift usage and mean
    /// hops.
    pub rings: Vec<(Usage, f64)>,
    /// Per controller: multicast route counts (broadcast emulation).
    counts: Vec<Usage>,
    cores: usize,
}

impl Compressed {
    /// Unicast distribution usage of controller `c` for replication ρ.
    pub fn distribution(&self, c: usize, rho: f64) -> Usage {
        self.unit[c].0.iter().map(|&(r, w)| (r, w * rho)).collect()
    }

    /// Broadcast usage of controller `c` for ρ: a link carries a byte once if any of its
    /// ρ destinations lies beyond it.
    pub fn broadcast(&self, c: usize, rho: f64) -> Usage {
        let frac = rho / self.cores as f64;
        self.counts[c]
            .iter()
            .map(|&(r, n)| (r, (n * frac).min(1.0)))
            .collect()
    }
}

const DIRS: [(&str, i64, i64); 4] = [("+x", 1, 0), ("-x", -1, 0), ("+y", 0, 1), ("-y", 0, -1)];

impl Network {
    /// The network of `chip` with `controllers` HBM controller ports of `port_capacity`
    /// bytes/cycle each.
    pub fn new(chip: &ChipSpec, controllers: usize, port_capacity: f64) -> Network {
        let per_cycle = |bytes_per_s: f64| bytes_per_s / chip.clock_hz;
        let cores = chip.cores as usize;
        let (mut capacity, mut names) = (Vec::new(), Vec::new());
        let (width, height) = match chip.noc.topology {
            Topology::AllToAll => (cores, 1),
            _ => (
                chip.noc.width.unwrap_or(1) as usize,
                chip.noc.height.unwrap_or(1) as usize,
            ),
        };
        match chip.noc.topology {
            Topology::AllToAll => {
                let port = per_cycle(chip.noc.injection_bytes_per_s_per_core);
                for k in 0..cores {
                    capacity.push(port);
                    names.push(format!("core {k} injection"));
                }
                for k in 0..cores {
                    capacity.push(port);
                    names.push(format!("core {k} ejection"));
                }
            }
            Topology::Mesh | Topology::Torus => {
                let link = per_cycle(chip.noc.link_bytes_per_s);
                for k in 0..cores {
                    let (x, y) = (k % width, k / width);
                    for (d, _, _) in DIRS {
                        capacity.push(link);
                        names.push(format!("({x},{y}){d}"));
                    }
                }
            }
        }
        let noc_resources = capacity.len();
        for c in 0..controllers {
            capacity.push(port_capacity);
            names.push(format!("HBM controller {c}"));
        }
        Network {
            capacity,
            names,
            noc_resources,
            topology: chip.noc.topology,
            width,
            height,
            cores,
        }
    }

    /// The resource of controller `c`'s HBM port.
    pub fn controller(&self, c: usize) -> Res {
        self.noc_resources + c
    }

    /// Width × height of a mesh or torus (None on an all-to-all chip, which has no grid).
    pub fn grid(&self) -> Option<(usize, usize)> {
        (self.topology != Topology::AllToAll).then_some((self.width, self.height))
    }

    /// Adds `weight` on every link from core `s` to core `d` (dimension order: x, then y;
    /// on a torus the shorter way round, half each way when both are as short). Returns the
    /// number of hops.
    pub fn route(&self, s: usize, d: usize, weight: f64, acc: &mut [f64]) -> usize {
        if self.topology == Topology::AllToAll {
            if s != d {
                acc[s] += weight;
                acc[self.cores + d] += weight;
            }
            return usize::from(s != d);
        }
        let (w, h) = (self.width as i64, self.height as i64);
        let (x, y) = ((s % self.width) as i64, (s / self.width) as i64);
        let (tx, ty) = ((d % self.width) as i64, (d / self.width) as i64);
        let torus = self.topology == Topology::Torus;
        // The ways along one dimension from `from` to `to` of `n`: (step, hops, share of the
        // weight). On a torus, cores n/2 apart are as far either way round: half goes each
        // way. (Sending them all one way loaded that direction's links (k + 2)/k as much as
        // balanced routing under uniform traffic: a k-ary torus saturated at 8/(k + 2) of a
        // link per node, not the textbook's 8/k.)
        let ways = |from: i64, to: i64, n: i64| -> [(i64, i64, f64); 2] {
            let fwd = (to - from).rem_euclid(n);
            if from == to {
                [(0, 0, 0.0); 2]
            } else if !torus {
                [((to - from).signum(), (to - from).abs(), 1.0), (0, 0, 0.0)]
            } else if 2 * fwd == n {
                [(1, fwd, 0.5), (-1, fwd, 0.5)]
            } else if 2 * fwd < n {
                [(1, fwd, 1.0), (0, 0, 0.0)]
            } else {
                [(-1, n - fwd, 1.0), (0, 0, 0.0)]
            }
        };
        let link = |x: i64, y: i64, dir: usize| ((y * w + x) as usize) * 4 + dir;
        let (along_x, along_y) = (ways(x, tx, w), ways(y, ty, h));
        // x first along row y, then y along column tx (whichever way x went).
        for (dx, n, share) in along_x {
            for i in 0..n {
                let cx = (x + i * dx).rem_euclid(w);
                acc[link(cx, y, if dx > 0 { 0 } else { 1 })] += weight * share;
            }
        }
        for (dy, n, share) in along_y {
            for i in 0..n {
                let cy = (y + i * dy).rem_euclid(h);
                acc[link(tx, cy, if dy > 0 { 2 } else { 3 })] += weight * share;
            }
        }
        (along_x[0].1 + along_y[0].1) as usize
    }

    /// One transfer from core `s` to core `d`: the links it crosses and its hop count.
    pub fn unicast(&self, s: usize, d: usize) -> (Usage, usize) {
        let mut acc = vec![0.0; self.noc_resources];
        let hops = self.route(s, d, 1.0, &mut acc);
        (Self::sparse(&acc), hops)
    }

    /// The non-zero entries of a dense usage.
    pub fn sparse(acc: &[f64]) -> Usage {
        acc.iter()
            .enumerate()
            .filter(|(_, &v)| v > 0.0)
            .map(|(r, &v)| (r, v))
            .collect()
    }

    /// Groups the resources by (capacity, weight in every class) for the controllers at
    /// `sources` and the shifts of `rings` (each a group's cores in ring order, see
    /// [`Network::ring_dense`]) (see [`Compressed`]).
    pub fn compress(&self, sources: &[usize], rings: &[Vec<usize>]) -> Compressed {
        let (shift, shift_hops) = self.shift_dense();
        let ring_usage: Vec<(Vec<f64>, f64)> = rings.iter().map(|r| self.ring_dense(r)).collect();
        let dists: Vec<(Vec<f64>, f64)> = sources
            .iter()
            .map(|&c| self.distribution_dense(c, 1.0))
            .collect();
        let counts: Vec<Vec<f64>> = sources.iter().map(|&c| self.broadcast_counts(c)).collect();
        let mut group_of = vec![0usize; self.capacity.len()];
        let mut groups: std::collections::BTreeMap<Vec<u64>, usize> = Default::default();
        let mut names: Vec<(String, usize)> = Vec::new();
        let mut capacity = Vec::new();
        for r in 0..self.noc_resources {
            let mut key = vec![self.capacity[r].to_bits(), shift[r].to_bits()];
            key.extend(dists.iter().map(|d| d.0[r].to_bits()));
            key.extend(counts.iter().map(|c| c[r].to_bits()));
            key.extend(ring_usage.iter().map(|u| u.0[r].to_bits()));
            let next = names.len();
            let g = *groups.entry(key).or_insert(next);
            if g == next {
                names.push((self.names[r].clone(), 0));
                capacity.push(self.capacity[r]);
            }
            names[g].1 += 1;
            group_of[r] = g;
        }
        let noc_groups = names.len();
        let controller = (0..sources.len())
            .map(|c| {
                names.push((self.names[self.controller(c)].clone(), 1));
                capacity.push(self.capacity[self.controller(c)]);
                names.len() - 1
            })
            .collect();
        // Class usage per group: the weight of any member (they are all equal).
        let sparse = |dense: &[f64]| -> Usage {
            let mut seen = vec![false; noc_groups];
            let mut u = Vec::new();
            for (r, &w) in dense.iter().enumerate() {
                let g = group_of[r];
                if w != 0.0 && !seen[g] {
                    seen[g] = true;
                    u.push((g, w));
                }
            }
            u
        };
        Compressed {
            capacity,
            names,
            noc_groups,
            controller,
            shift: sparse(&shift),
            shift_hops,
            unit: dists.iter().map(|(d, h)| (sparse(d), *h)).collect(),
            rings: ring_usage.iter().map(|(u, h)| (sparse(u), *h)).collect(),
            counts: counts.iter().map(|c| sparse(c)).collect(),
            cores: self.cores,
        }
    }

    /// HBM distribution from a controller at `core`: each byte reaches ρ cores, spread over
    /// all cores. Unicast: ρ/cores of every byte to each core. Returns (usage, mean hops).
    pub fn distribution(&self, core: usize, rho: f64) -> (Usage, f64) {
        let (acc, hops) = self.distribution_dense(core, rho);
        (Self::sparse(&acc), hops)
    }

    fn distribution_dense(&self, core: usize, rho: f64) -> (Vec<f64>, f64) {
        let mut acc = vec![0.0; self.noc_resources];
        let share = rho / self.cores as f64;
        let mut hops = 0usize;
        for d in 0..self.cores {
            hops += self.route(core, d, share, &mut acc);
            if self.topology == Topology::AllToAll && d == core {
                // A controller's own core still receives its share through its port.
                acc[self.cores + d] += share;
            }
        }
        if self.topology == Topology::AllToAll {
            // Distributed controllers have their own exchange ports (the analytic model's
            // B_NoC,dist = cores × injection): their bytes do not use the core's injection.
            acc[core] = 0.0;
        }
        (acc, hops as f64 / self.cores as f64)
    }

    /// Per NoC resource: how many of the source's routes cross it (a route split both ways
    /// round a torus counts half on each side). On an all-to-all chip
    /// the emulated controller feeds the exchange through its own port (the controller
    /// port, at the full HBM rate), not through its core's injection.
    fn broadcast_counts(&self, core: usize) -> Vec<f64> {
        let mut count = vec![0.0; self.noc_resources];
        for d in 0..self.cores {
            self.route(core, d, 1.0, &mut count);
        }
        if self.topology == Topology::AllToAll {
            count[core] = 0.0;
            count[self.cores + core] = 1.0;
        }
        count
    }

    /// An operator's shifts: every core sends to its ring neighbour (next core in x, the
    /// row wrapping round), each carrying 1/cores of the bytes.
    pub fn shift(&self) -> (Usage, f64) {
        let (acc, hops) = self.shift_dense();
        (Self::sparse(&acc), hops)
    }

    fn shift_dense(&self) -> (Vec<f64>, f64) {
        let mut acc = vec![0.0; self.noc_resources];
        let share = 1.0 / self.cores as f64;
        let mut hops = 0usize;
        for k in 0..self.cores {
            let (x, y) = (k % self.width, k / self.width);
            let next = y * self.width + (x + 1) % self.width;
            let target = if self.topology == Topology::AllToAll {
                (k + 1) % self.cores
            } else {
                next
            };
            hops += self.route(k, target, share, &mut acc);
        }
        (acc, hops as f64 / self.cores as f64)
    }

    /// A group's shifts inside its region (docs/core-groups.md §CG-7): each of `ring`'s cores
    /// sends to the next (the last to the first), each carrying 1/|ring| of the bytes.
    /// Returns (dense usage, mean hops); a ring of one core moves nothing.
    pub fn ring_dense(&self, ring: &[usize]) -> (Vec<f64>, f64) {
        let mut acc = vec![0.0; self.noc_resources];
        let share = 1.0 / ring.len().max(1) as f64;
        let mut hops = 0usize;
        for (k, &core) in ring.iter().enumerate() {
            hops += self.route(core, ring[(k + 1) % ring.len()], share, &mut acc);
        }
        (acc, hops as f64 * share)
    }
}

/// Controller cores for a chip's placement: `edges` spreads C controllers evenly along the
/// mesh perimeter (all-to-all: evenly over the core ids), `single-core` is core 0,
/// `explicit` the listed cores.
pub fn controller_cores(chip: &ChipSpec, controllers: usize) -> Vec<usize> {
    let cores = chip.cores as usize;
    match chip.hbm.placement {
        Placement::Explicit if chip.hbm.controller_cores.len() == controllers => chip
            .hbm
            .controller_cores
            .iter()
            .map(|&c| c as usize)
            .collect(),
        Placement::SingleCore => vec![0; controllers.max(1)],
        _ => {
            let (w, h) = match chip.noc.topology {
                Topology::AllToAll => {
                    return (0..controllers)
                        .map(|c| c * cores / controllers.max(1))
                        .collect()
                }
                _ => (
                    chip.noc.width.unwrap_or(1) as usize,
                    chip.noc.height.unwrap_or(1) as usize,
                ),
            };
            // The perimeter, clockwise from (0,0).
            let mut ring = Vec::new();
            ring.extend(0..w);
            ring.extend((1..h).map(|y| y * w + w - 1));
            ring.extend((0..w.saturating_sub(1)).rev().map(|x| (h - 1) * w + x));
            ring.extend((1..h.saturating_sub(1)).rev().map(|y| y * w));
            ring.dedup();
            (0..controllers)
                .map(|c| ring[c * ring.len() / controllers.max(1)])
                .collect()
        }
    }
}

/// The stage model's B_NoC,dist of a mesh or torus chip (None on all-to-all, where it is
/// cores × injection), bytes/s: the throughput of its controllers' distribution traffic on
/// its own links and routes.
///
/// Every load is split evenly over the C controllers, each sending its share to every core
/// (1/cores of each byte per core, ρ = 1), along the dimension-order routes the detailed
/// simulator uses. With all controllers at a common rate r the hottest link carries
/// r · u_max bytes per second, u_max = max over links of Σ_c (bytes on the link per byte of
/// controller c), so the largest common rate is link rate / u_max and
///
/// ```text
///     B_NoC,dist = C · link rate / u_max.
/// ```
///
/// This replaces "3 links out of each controller's router" (4 on a torus), which assumed the
/// routes leave a controller evenly over its links: with x-first routing nearly all of an
/// edge controller's bytes leave on one link, so the old bound was about 2–3× optimistic
/// (docs/detailed.md, "Mesh distribution bandwidth"). Cost: one route per controller and
/// core, about 1 ms for a 40 × 26 mesh with 16 controllers.
pub fn distribution_bytes_per_s(chip: &ChipSpec) -> Option<f64> {
    if chip.noc.topology == Topology::AllToAll {
        return None;
    }
    let controllers = chip.hbm.controllers.max(1) as usize;
    let net = Network::new(chip, controllers, 0.0);
    let mut load = vec![0.0; net.noc_resources];
    for core in controller_cores(chip, controllers) {
        let (acc, _) = net.distribution_dense(core, 1.0);
        for (l, a) in load.iter_mut().zip(acc) {
            *l += a;
        }
    }
    let hottest = load.iter().copied().fold(0.0, f64::max);
    (hottest > 0.0).then(|| controllers as f64 * chip.noc.link_bytes_per_s / hottest)
}
