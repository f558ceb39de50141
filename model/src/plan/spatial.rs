//! Spatial partitions (SPEC §3): `p[d]` cores along each loop dimension.
//!
//! A partition is kept when Π p ≤ cores, the core utilisation Π p / cores reaches
//! 0.9·min(P/(P+2N), max(D)·n/220) and the padding efficiency Π D / Π(⌈D/p⌉·p) reaches
//! 0.9·min(P/(P+N), max(D)·n/220), with P = Π D, N = cores and n = number of dimensions
//! (the reference's thresholds). Every `p[d]` in `1..=D[d]` is a candidate; the search prunes a
//! prefix as soon as the remaining dimensions cannot reach the utilisation or the padding
//! efficiency has already dropped below its threshold (it only falls as dimensions are added).

/// The two thresholds for loop extents `dims` on `cores` cores.
pub fn thresholds(dims: &[u64], cores: u64) -> (f64, f64) {
    let p: f64 = dims.iter().map(|&d| d as f64).product();
    let n = cores as f64;
    let spread = dims.iter().copied().max().unwrap_or(1) as f64 * dims.len() as f64 / 220.0;
    let utilisation = 0.9 * (p / (p + 2.0 * n)).min(spread);
    let padding = 0.9 * (p / (p + n)).min(spread);
    (utilisation, padding)
}

/// Every admissible spatial partition, in lexicographic order of p.
pub fn partitions(dims: &[u64], cores: u64) -> Vec<Vec<u64>> {
    let (utilisation, padding) = thresholds(dims, cores);
    let min_cores = utilisation * cores as f64;
    // suffix[i] = Π dims[i..], capped at cores (the most cores the suffix can still use).
    let mut suffix = vec![1u64; dims.len() + 1];
    for i in (0..dims.len()).rev() {
        suffix[i] = suffix[i + 1].saturating_mul(dims[i]).min(cores);
    }
    let mut out = Vec::new();
    let mut p = Vec::with_capacity(dims.len());
    let search = Search {
        dims,
        cores,
        min_cores,
        padding,
        suffix: &suffix,
    };
    search.rec(0, 1, 1.0, &mut p, &mut out);
    out
}

struct Search<'a> {
    dims: &'a [u64],
    cores: u64,
    min_cores: f64,
    padding: f64,
    suffix: &'a [u64],
}

impl Search<'_> {
    fn rec(&self, i: usize, used: u64, efficiency: f64, p: &mut Vec<u64>, out: &mut Vec<Vec<u64>>) {
        if i == self.dims.len() {
            if used as f64 >= self.min_cores {
                out.push(p.clone());
            }
            return;
        }
        let d = self.dims[i];
        for pi in 1..=d {
            let used_now = used * pi;
            if used_now > self.cores {
                break;
            }
            let reachable = used_now.saturating_mul(self.suffix[i + 1]).min(self.cores);
            if (reachable as f64) < self.min_cores {
                continue;
            }
            let eff = efficiency * d as f64 / (d.div_ceil(pi) * pi) as f64;
            if eff < self.padding {
                continue;
            }
            p.push(pi);
            self.rec(i + 1, used_now, eff, p, out);
            p.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_the_reference_for_rotation_free_operators() {
        // The reference's plan counts for elementwise operators (no temporal partitions)
        // on 1,472 cores: per-op-stats.json, n_all_configs.
        assert_eq!(partitions(&[8, 1, 768], 1472).len(), 432);
        assert_eq!(partitions(&[8, 1], 1472).len(), 5);
        assert_eq!(partitions(&[8, 12, 1, 1], 1472).len(), 26);
        assert_eq!(partitions(&[8, 1, 2304], 1472).len(), 528);
        assert_eq!(partitions(&[8, 1, 3072], 1472).len(), 280);
    }

    #[test]
    fn small_case_by_hand() {
        // dims [4, 4] on 4 cores: P = 16, u = 0.9·min(16/24, 4·2/220) = 0.0327, so every
        // partition with Π p ≤ 4 and padding efficiency ≥ 0.9·min(16/20, 0.036) qualifies.
        let p = partitions(&[4, 4], 4);
        assert_eq!(
            p,
            vec![
                vec![1, 1],
                vec![1, 2],
                vec![1, 3],
                vec![1, 4],
                vec![2, 1],
                vec![2, 2],
                vec![3, 1],
                vec![4, 1]
            ]
        );
    }
}
