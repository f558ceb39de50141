//! Temporal partitions (SPEC §3): `t[d][v]` splits tensor v's tile along dimension d among the
//! R_v cores that hold the same tile, to be rotated between compute steps.
//!
//! A temporal partition is one *row* `t[d][·]` per dimension. A row is a candidate for
//! dimension d when `t[d][v]` > 1 only if d indexes v, each `t[d][v]` divides R_v, its values
//! form a divisor chain, and its largest value m (the number of compute steps along d) is at
//! most the tile extent L_d and keeps L_d's padding efficiency L_d / (⌈L_d/m⌉·m) at the
//! operator's padding threshold. A partition picks one candidate row per dimension such that
//! Π_d `t[d][v]` divides R_v and the per-step padding efficiency of the whole plan,
//! Π_d L_d / (⌈L_d/m_d⌉·m_d), also reaches the threshold. SPEC §3 gives no padding rule for
//! temporal splits; these two are the reference artifact's (`is_temp_dim_valid_for_variables`
//! and `valid_temporal_dim_var_parts`), the temporal counterpart of the spatial padding
//! efficiency, and with them our plan counts are the artifact's.
//!
//! Enumeration order is the artifact's: rows of one dimension in lexicographic order of
//! (`t[d][0]`, `t[d][1]`, …), dimensions outermost first. Under
//! [`PlanRules::sorted_candidate_lists`](super::PlanRules) the per-dimension lists are sorted
//! (as lists of rows) before they are assigned to dimensions — the artifact's in-place sort,
//! which SPEC §3 calls a bug; by default each dimension keeps its own list.

use super::shape::OpShape;

/// Replica counts R_v = Π of p over the dimensions that do not index tensor v.
pub fn replicas(shape: &OpShape, p: &[u64]) -> Vec<u64> {
    shape
        .tensors
        .iter()
        .map(|t| {
            (0..p.len())
                .filter(|&d| !t.indexed_by(d))
                .map(|d| p[d])
                .product()
        })
        .collect()
}

/// Padding efficiency of splitting extent `l` into `m` steps: l / (⌈l/m⌉·m).
fn step_efficiency(l: u64, m: u64) -> f64 {
    l as f64 / (l.div_ceil(m) * m) as f64
}

/// The candidate rows of every dimension for spatial partition `p`, in enumeration order
/// (after the artifact's sort when the shape's rules ask for it): per dimension, its rows one
/// after another, each as many values as the shape has tensors (one buffer per dimension, not
/// one per row; a sort of these compares as a sort of lists of rows does, the rows being of
/// equal length).
/// `divs` holds the divisors of every number up to `cores` (each R_v is at most Π p ≤ cores).
pub fn candidate_rows(shape: &OpShape, p: &[u64], cores: u64, divs: &Divisors) -> Vec<Vec<u64>> {
    let r = replicas(shape, p);
    let (_, padding) = super::spatial::thresholds(&shape.dims, cores);
    rows_of(shape, p, &r, padding, divs)
}

/// [`candidate_rows`] given the partition's replica counts `r` and the padding threshold.
fn rows_of(shape: &OpShape, p: &[u64], r: &[u64], padding: f64, divs: &Divisors) -> Vec<Vec<u64>> {
    let nv = shape.tensors.len();
    let mut lists: Vec<Vec<u64>> = shape
        .dims
        .iter()
        .zip(p)
        .enumerate()
        .map(|(d, (&dim, &pd))| {
            let l = dim.div_ceil(pd);
            let choices: Vec<Vec<u64>> = (0..nv)
                .map(|v| {
                    if shape.tensors[v].indexed_by(d) && l > 1 {
                        divs.of(r[v])
                            .iter()
                            .copied()
                            .take_while(|&x| x <= l)
                            .collect()
                    } else {
                        vec![1]
                    }
                })
                .collect();
            let mut rows = Vec::new();
            let mut row = vec![1u64; nv];
            chains(&choices, 0, &mut row, &mut |row| {
                let m = row.iter().copied().max().unwrap_or(1);
                if m == 1 || step_efficiency(l, m) >= padding {
                    rows.extend_from_slice(row);
                }
            });
            rows
        })
        .collect();
    if shape.rules.sorted_candidate_lists {
        lists.sort();
    }
    lists
}

/// Every combination of one value per entry of `choices` that is a divisor chain
/// ([`is_divisor_chain`]), the last entry varying fastest: the product's order, with a value
/// not comparable by divisibility to one chosen before it cut at once (no extension of such
/// a prefix is a chain, so the same rows come out in the same order).
fn chains(choices: &[Vec<u64>], i: usize, row: &mut Vec<u64>, visit: &mut impl FnMut(&[u64])) {
    if i == choices.len() {
        visit(row);
        return;
    }
    for &x in &choices[i] {
        if !row[..i].iter().all(|&a| comparable(a, x)) {
            continue;
        }
        row[i] = x;
        chains(choices, i + 1, row, visit);
    }
    row[i] = 1;
}

/// What the search knows about a temporal partition when it reaches it, built up dimension
/// by dimension so a visit does not recompute it.
pub struct Leaf<'a> {
    /// `t[d]`: dimension d's row.
    pub t: &'a [Vec<u64>],
    /// Per tensor, Π_d `t[d][v]` (> 1 exactly when the tensor rotates; `used[0]` is the
    /// output's split).
    pub used: &'a [u64],
    /// Per tensor, its tile elements z_v, when every axis of every tensor is one dimension
    /// or none (products then build up per dimension); `None` with a window axis.
    pub z: Option<&'a [u64]>,
    /// Per dimension, the per-iteration extent ⌈L_d / max_v `t[d][v]`⌉.
    pub step: &'a [u64],
    /// Iterations Π_d max_v `t[d][v]`.
    pub iterations: u64,
}

/// Calls `visit(t)` for every admissible temporal partition of spatial partition `p`
/// (`t[d]` is dimension d's row); `divs` covers 1..=`cores` ([`Divisors::up_to`]).
pub fn for_each(
    shape: &OpShape,
    p: &[u64],
    cores: u64,
    divs: &Divisors,
    mut visit: impl FnMut(&[Vec<u64>]),
) {
    for_each_leaf(shape, p, cores, divs, |leaf| visit(leaf.t));
}

/// [`for_each`], with each partition's [`Leaf`].
pub fn for_each_leaf(
    shape: &OpShape,
    p: &[u64],
    cores: u64,
    divs: &Divisors,
    mut visit: impl FnMut(&Leaf),
) {
    let r = replicas(shape, p);
    let (_, padding) = super::spatial::thresholds(&shape.dims, cores);
    let lists = rows_of(shape, p, &r, padding, divs);
    let tile: Vec<u64> = shape
        .dims
        .iter()
        .zip(p)
        .map(|(&d, &pi)| d.div_ceil(pi))
        .collect();
    let nv = shape.tensors.len();
    let nd = shape.dims.len();
    // Each row's per-step padding efficiency, its split (largest value) and its step extent,
    // and per tensor its factor of the tile elements, computed once per row.
    let split = |row: &[u64]| row.iter().copied().max().unwrap_or(1);
    let per_row = (0..nd)
        .map(|d| {
            lists[d]
                .chunks_exact(nv)
                .map(|row| {
                    let m = split(row);
                    RowFacts {
                        efficiency: step_efficiency(tile[d], m),
                        split: m,
                        step: tile[d].div_ceil(m),
                    }
                })
                .collect()
        })
        .collect();
    // z_v = Π over v's axes of ⌈L_d / t[d][v]⌉: a product over dimensions when every axis
    // is a single dimension (a repeated one counts once per axis).
    let plain = shape
        .tensors
        .iter()
        .all(|t| t.axes.iter().all(|a| a.len() <= 1));
    let factors: Option<Vec<Vec<u64>>> = plain.then(|| {
        (0..nd)
            .map(|d| {
                let times: Vec<u32> = shape
                    .tensors
                    .iter()
                    .map(|t| t.axes.iter().filter(|a| a.as_slice() == [d]).count() as u32)
                    .collect();
                lists[d]
                    .iter()
                    .enumerate()
                    .map(|(k, &x)| tile[d].div_ceil(x).pow(times[k % nv]))
                    .collect()
            })
            .collect()
    });
    let search = Search {
        lists: &lists,
        nv,
        per_row,
        factors,
        r,
        padding,
    };
    let mut state = State {
        t: vec![vec![1u64; nv]; nd],
        used: vec![1u64; nv],
        z: vec![1u64; (nd + 1) * nv],
        step: vec![1u64; nd],
        iterations: vec![1u64; nd + 1],
    };
    search.rec(0, 1.0, &mut state, &mut visit);
}

/// What enumeration needs of one candidate row, computed once.
struct RowFacts {
    /// Its per-step padding efficiency.
    efficiency: f64,
    /// Its largest value (the steps along its dimension).
    split: u64,
    /// The step extent ⌈L_d / split⌉.
    step: u64,
}

struct Search<'a> {
    /// Per dimension, its rows one after another ([`candidate_rows`]).
    lists: &'a [Vec<u64>],
    /// Values per row (tensors).
    nv: usize,
    /// `per_row[d][i]`: the facts of dimension d's row i.
    per_row: Vec<Vec<RowFacts>>,
    /// `factors[d][i·nv + v]`: row i's factor of tensor v's tile elements (plain axes only).
    factors: Option<Vec<Vec<u64>>>,
    r: Vec<u64>,
    padding: f64,
}

/// The search's position: the rows chosen so far and the products they build.
struct State {
    t: Vec<Vec<u64>>,
    used: Vec<u64>,
    /// Row d (nv entries): tile elements after dimensions 0..d.
    z: Vec<u64>,
    step: Vec<u64>,
    /// Entry d: iterations after dimensions 0..d.
    iterations: Vec<u64>,
}

impl Search<'_> {
    /// Extends `t` from dimension `d` on; `efficiency` is the product of the rows chosen so
    /// far, multiplied in dimension order as the reference does (the order matters for the
    /// last bit at the threshold). Every factor is ≤ 1 and rounding is monotone, so a prefix
    /// below the threshold cannot be completed: it is cut there.
    fn rec(&self, d: usize, efficiency: f64, s: &mut State, visit: &mut impl FnMut(&Leaf)) {
        let nv = self.nv;
        if d == self.lists.len() {
            visit(&Leaf {
                t: &s.t,
                used: &s.used,
                z: self.factors.as_ref().map(|_| &s.z[d * nv..(d + 1) * nv]),
                step: &s.step,
                iterations: s.iterations[d],
            });
            return;
        }
        let rows = self.lists[d].chunks_exact(nv);
        for (i, (row, facts)) in rows.zip(&self.per_row[d]).enumerate() {
            let efficiency = efficiency * facts.efficiency;
            if efficiency < self.padding {
                continue;
            }
            // Π_d t[d][v] must divide R_v; a prefix that does not cannot be completed.
            if row
                .iter()
                .zip(s.used.iter())
                .zip(&self.r)
                .any(|((&x, &u), &r)| x > 1 && r % (u * x) != 0)
            {
                continue;
            }
            for (v, &x) in row.iter().enumerate() {
                s.used[v] *= x;
            }
            if let Some(f) = &self.factors {
                let (done, next) = s.z.split_at_mut((d + 1) * nv);
                let f = &f[d][i * nv..(i + 1) * nv];
                for v in 0..nv {
                    next[v] = done[d * nv + v] * f[v];
                }
            }
            s.step[d] = facts.step;
            s.iterations[d + 1] = s.iterations[d] * facts.split;
            s.t[d].copy_from_slice(row);
            self.rec(d + 1, efficiency, s, visit);
            for (v, &x) in row.iter().enumerate() {
                s.used[v] /= x;
            }
        }
        s.t[d].iter_mut().for_each(|x| *x = 1);
    }
}

/// Whether the values (ignoring order) form a chain in which each divides the next: sorted,
/// each divides the next exactly when every two of them are comparable by divisibility.
pub fn is_divisor_chain(values: &[u64]) -> bool {
    values
        .iter()
        .enumerate()
        .all(|(i, &a)| values[i + 1..].iter().all(|&b| comparable(a, b)))
}

/// Whether one of `a`, `b` divides the other, 1s (no split) comparable with anything.
fn comparable(a: u64, b: u64) -> bool {
    a <= 1 || b <= 1 || a % b == 0 || b % a == 0
}

/// The divisors of every number 1..=n, in increasing order, from one sieve (trial division
/// per replica count was the largest cost of enumeration).
pub struct Divisors {
    /// `start[k]..start[k + 1]`: where k's divisors are in `values`.
    start: Vec<usize>,
    values: Vec<u64>,
}

impl Divisors {
    /// The table for 1..=n.
    pub fn up_to(n: u64) -> Divisors {
        let n = usize::try_from(n).unwrap_or(usize::MAX).max(1);
        // counts first, so the values land in one buffer in increasing order
        let mut count = vec![0usize; n + 1];
        for i in 1..=n {
            for j in (i..=n).step_by(i) {
                count[j] += 1;
            }
        }
        let mut start = Vec::with_capacity(n + 2);
        start.push(0);
        for k in 0..=n {
            start.push(start[k] + count[k]);
        }
        let mut next = start.clone();
        let mut values = vec![0u64; start[n + 1]];
        for i in 1..=n {
            for j in (i..=n).step_by(i) {
                values[next[j]] = i as u64;
                next[j] += 1;
            }
        }
        Divisors { start, values }
    }

    /// The divisors of `k` (trial division when `k` is beyond the table).
    pub fn of(&self, k: u64) -> std::borrow::Cow<'_, [u64]> {
        match usize::try_from(k) {
            Ok(i) if i + 1 < self.start.len() => {
                std::borrow::Cow::Borrowed(&self.values[self.start[i]..self.start[i + 1]])
            }
            _ => std::borrow::Cow::Owned(divisors(k)),
        }
    }
}

/// Divisors of n in increasing order.
pub fn divisors(n: u64) -> Vec<u64> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut i = 1;
    while i * i <= n {
        if n % i == 0 {
            small.push(i);
            if i * i != n {
                large.push(n / i);
            }
        }
        i += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisors_and_chains() {
        assert_eq!(divisors(12), vec![1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors(1), vec![1]);
        assert!(is_divisor_chain(&[4, 1, 2]));
        assert!(!is_divisor_chain(&[2, 3]));
        assert!(is_divisor_chain(&[6, 2, 12, 1, 6]));
        assert!(!is_divisor_chain(&[4, 2, 6]));
        assert!(is_divisor_chain(&[]));
        let table = Divisors::up_to(100);
        for k in 0..=120 {
            assert_eq!(table.of(k).to_vec(), divisors(k), "divisors of {k}");
        }
    }
}
