//! Temporal partitions (SPEC §3): `t[d][v]` splits tensor v's tile along dimension d among the
//! R_v cores that hold the same tile, to be rotated between compute steps.
//!
//! Constraints: `t[d][v]` > 1 only if d indexes v; `t[d][v]` divides R_v and is at most the tile
//! extent L_d; splitting L_d into `t[d][v]` pieces keeps the padding efficiency
//! L_d / (⌈L_d/t⌉·t) at the operator's padding threshold (as the spatial partition must);
//! Π_d `t[d][v]` divides R_v; the values of one dimension form a divisor chain.
//! Each (d, v) slot has its own candidate list (the reference sorted these lists in place, so
//! a dimension could get another dimension's candidates; here each list stays its own).

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

/// Calls `visit(t)` for every admissible temporal partition of spatial partition `p`;
/// `t[d][v]` is 1 outside the slots.
pub fn for_each(shape: &OpShape, p: &[u64], cores: u64, mut visit: impl FnMut(&[Vec<u64>])) {
    let nd = shape.dims.len();
    let nv = shape.tensors.len();
    let r = replicas(shape, p);
    let tile: Vec<u64> = shape
        .dims
        .iter()
        .zip(p)
        .map(|(&d, &pi)| d.div_ceil(pi))
        .collect();
    let slots: Vec<(usize, usize)> = (0..nd)
        .flat_map(|d| (0..nv).map(move |v| (d, v)))
        .filter(|&(d, v)| shape.tensors[v].indexed_by(d) && r[v] > 1 && tile[d] > 1)
        .collect();
    let (_, padding) = super::spatial::thresholds(&shape.dims, cores);
    let candidates: Vec<Vec<u64>> = slots
        .iter()
        .map(|&(d, v)| {
            let l = tile[d];
            divisors(r[v])
                .into_iter()
                .filter(|&x| x <= l && l as f64 / (l.div_ceil(x) * x) as f64 >= padding)
                .collect()
        })
        .collect();
    let mut t = vec![vec![1u64; nv]; nd];
    let mut used = vec![1u64; nv];
    rec(0, &slots, &candidates, &r, &mut t, &mut used, &mut visit);
}

fn rec(
    i: usize,
    slots: &[(usize, usize)],
    candidates: &[Vec<u64>],
    r: &[u64],
    t: &mut Vec<Vec<u64>>,
    used: &mut Vec<u64>,
    visit: &mut impl FnMut(&[Vec<u64>]),
) {
    if i == slots.len() {
        if t.iter().all(|row| is_divisor_chain(row)) {
            visit(t);
        }
        return;
    }
    let (d, v) = slots[i];
    for &x in &candidates[i] {
        let prod = used[v] * x;
        if r[v] % prod != 0 {
            continue;
        }
        // The row of dimension d must stay a divisor chain among the slots already set.
        let row_ok = t[d]
            .iter()
            .enumerate()
            .filter(|&(w, &y)| w != v && y > 1)
            .all(|(_, &y)| x % y == 0 || y % x == 0);
        if !row_ok {
            continue;
        }
        t[d][v] = x;
        used[v] = prod;
        rec(i + 1, slots, candidates, r, t, used, visit);
        used[v] /= x;
        t[d][v] = 1;
    }
}

/// Whether the values (ignoring order) form a chain in which each divides the next.
pub fn is_divisor_chain(values: &[u64]) -> bool {
    let mut s: Vec<u64> = values.iter().copied().filter(|&x| x > 1).collect();
    s.sort_unstable();
    s.windows(2).all(|w| w[1] % w[0] == 0)
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
    }
}
