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
/// (after the artifact's sort when the shape's rules ask for it).
/// `divs` holds the divisors of every number up to `cores` (each R_v is at most Π p ≤ cores).
pub fn candidate_rows(
    shape: &OpShape,
    p: &[u64],
    cores: u64,
    divs: &Divisors,
) -> Vec<Vec<Vec<u64>>> {
    let nv = shape.tensors.len();
    let r = replicas(shape, p);
    let (_, padding) = super::spatial::thresholds(&shape.dims, cores);
    let mut lists: Vec<Vec<Vec<u64>>> = shape
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
            product(&choices, 0, &mut row, &mut |row| {
                let m = row.iter().copied().max().unwrap_or(1);
                if is_divisor_chain(row) && (m == 1 || step_efficiency(l, m) >= padding) {
                    rows.push(row.to_vec());
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

/// Every combination of one value per entry of `choices`, the last entry varying fastest.
fn product(choices: &[Vec<u64>], i: usize, row: &mut Vec<u64>, visit: &mut impl FnMut(&[u64])) {
    if i == choices.len() {
        visit(row);
        return;
    }
    for &x in &choices[i] {
        row[i] = x;
        product(choices, i + 1, row, visit);
    }
    row[i] = 1;
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
    let lists = candidate_rows(shape, p, cores, divs);
    let tile: Vec<u64> = shape
        .dims
        .iter()
        .zip(p)
        .map(|(&d, &pi)| d.div_ceil(pi))
        .collect();
    // Each row's per-step padding efficiency along its dimension, computed once.
    let efficiency = lists
        .iter()
        .zip(&tile)
        .map(|(rows, &l)| {
            rows.iter()
                .map(|row| step_efficiency(l, row.iter().copied().max().unwrap_or(1)))
                .collect()
        })
        .collect();
    let search = Search {
        lists: &lists,
        efficiency,
        r: replicas(shape, p),
        padding: super::spatial::thresholds(&shape.dims, cores).1,
    };
    let nv = shape.tensors.len();
    let mut t = vec![vec![1u64; nv]; shape.dims.len()];
    let mut used = vec![1u64; nv];
    search.rec(0, 1.0, &mut t, &mut used, &mut visit);
}

struct Search<'a> {
    lists: &'a [Vec<Vec<u64>>],
    /// `efficiency[d][i]`: step efficiency of row `lists[d][i]`.
    efficiency: Vec<Vec<f64>>,
    r: Vec<u64>,
    padding: f64,
}

impl Search<'_> {
    /// Extends `t` from dimension `d` on; `efficiency` is the product of the rows chosen so
    /// far, multiplied in dimension order as the reference does (the order matters for the
    /// last bit at the threshold). Every factor is ≤ 1 and rounding is monotone, so a prefix
    /// below the threshold cannot be completed: it is cut there.
    fn rec(
        &self,
        d: usize,
        efficiency: f64,
        t: &mut Vec<Vec<u64>>,
        used: &mut Vec<u64>,
        visit: &mut impl FnMut(&[Vec<u64>]),
    ) {
        if d == self.lists.len() {
            visit(t);
            return;
        }
        for (row, &e) in self.lists[d].iter().zip(&self.efficiency[d]) {
            let efficiency = efficiency * e;
            if efficiency < self.padding {
                continue;
            }
            // Π_d t[d][v] must divide R_v; a prefix that does not cannot be completed.
            if row
                .iter()
                .zip(used.iter())
                .zip(&self.r)
                .any(|((&x, &u), &r)| x > 1 && r % (u * x) != 0)
            {
                continue;
            }
            for (v, &x) in row.iter().enumerate() {
                used[v] *= x;
            }
            t[d].copy_from_slice(row);
            self.rec(d + 1, efficiency, t, used, visit);
            for (v, &x) in row.iter().enumerate() {
                used[v] /= x;
            }
        }
        t[d].iter_mut().for_each(|x| *x = 1);
    }
}

/// Whether the values (ignoring order) form a chain in which each divides the next: sorted,
/// each divides the next exactly when every two of them are comparable by divisibility.
pub fn is_divisor_chain(values: &[u64]) -> bool {
    values.iter().enumerate().all(|(i, &a)| {
        values[i + 1..]
            .iter()
            .all(|&b| a <= 1 || b <= 1 || a % b == 0 || b % a == 0)
    })
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
