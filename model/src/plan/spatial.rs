//! Spatial partitions (SPEC §3): `p[d]` cores along each loop dimension.
//!
//! A partition is kept when Π p ≤ cores, the core utilisation Π p / cores reaches
//! 0.9·min(P/(P+2N), max(D)·n/220) and the padding efficiency Π D / Π(⌈D/p⌉·p) reaches
//! 0.9·min(P/(P+N), max(D)·n/220), with P = Π D, N = cores and n = number of dimensions
//! (the reference's thresholds). Every `p[d]` in `1..=D[d]` is a candidate; the search prunes a
//! prefix as soon as the remaining dimensions cannot reach the utilisation or the padding
//! efficiency has already dropped below its threshold (it only falls as dimensions are added).
//!
//! Under the reference rules N is the chip's cores. Under the clean rules an operator may also
//! run on a smaller group of cores ([`groups`]: N, ⌈N/2⌉, ⌈N/4⌉, …, 1), each group with the
//! floors of its own size; [`grouped_partitions`] lists each partition once, in the largest
//! group that admits it. Why: the floor of the whole chip forces a 4,096-element reduction at
//! batch 1 onto ≥ 1,367 of 5,888 cores, and gathering that many partial sums costs 9× the
//! batch-32 reduction; on 16 cores it is two orders of magnitude cheaper. The halving ladder
//! keeps enumeration at about twice the whole chip's (the groups' partition counts shrink
//! geometrically) while every core count is within a factor two of a group.

/// The two thresholds for loop extents `dims` on `cores` cores.
pub fn thresholds(dims: &[u64], cores: u64) -> (f64, f64) {
    let p: f64 = dims.iter().map(|&d| d as f64).product();
    let n = cores as f64;
    let spread = dims.iter().copied().max().unwrap_or(1) as f64 * dims.len() as f64 / 220.0;
    let utilisation = 0.9 * (p / (p + 2.0 * n)).min(spread);
    let padding = 0.9 * (p / (p + n)).min(spread);
    (utilisation, padding)
}

/// The core groups an operator may run on under the clean rules: `cores`, then halved and
/// rounded up until one core (5,888: 5,888, 2,944, 1,472, …, 23, 12, 6, 3, 2, 1).
pub fn groups(cores: u64) -> Vec<u64> {
    let mut out = vec![cores.max(1)];
    while let Some(&last) = out.last().filter(|&&g| g > 1) {
        out.push(last.div_ceil(2));
    }
    out
}

/// A spatial partition and the group of cores it runs on (its floors are the group's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Cores along each loop dimension.
    pub p: Vec<u64>,
    /// The group's cores (Π p ≤ `cores`); the chip's cores for the whole chip.
    pub cores: u64,
}

/// Every admissible partition on `cores` cores, with its group: the whole chip's partitions
/// first ([`partitions`]), then, unless `whole_chip_only`, each smaller group's
/// ([`groups`]) that no larger group admitted, each group in lexicographic order.
pub fn grouped_partitions(dims: &[u64], cores: u64, whole_chip_only: bool) -> Vec<Placed> {
    let ladder = if whole_chip_only {
        vec![cores]
    } else {
        groups(cores)
    };
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for group in ladder {
        for p in partitions(dims, group) {
            if seen.insert(p.clone()) {
                out.push(Placed { p, cores: group });
            }
        }
    }
    out
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
    fn groups_halve_down_to_one_core() {
        assert_eq!(groups(5888).len(), 14);
        assert_eq!(&groups(5888)[..3], &[5888, 2944, 1472]);
        assert_eq!(&groups(5888)[9..], &[12, 6, 3, 2, 1]);
        assert_eq!(groups(1), vec![1]);
        assert_eq!(groups(4), vec![4, 2, 1]);
    }

    #[test]
    fn a_small_reduction_gets_partitions_below_the_whole_chips_floor() {
        // [1, 4096] on 5,888 cores: the chip's floor is 0.9·4096/(4096+2·5888) ≈ 0.232 of
        // its cores (≥ 1,367); the group of 12 has the floor 0.9·4096/4120·12 ≈ 10.7 and so
        // admits 11 and 12 cores along the reduced dimension (the group of 23 does not: its
        // floor is 20.5).
        let whole = partitions(&[1, 4096], 5888);
        assert!(whole.iter().all(|p| p[1] >= 1367), "{:?}", whole.first());
        let grouped = grouped_partitions(&[1, 4096], 5888, false);
        assert_eq!(
            &grouped[..whole.len()],
            whole
                .iter()
                .map(|p| Placed {
                    p: p.clone(),
                    cores: 5888
                })
                .collect::<Vec<_>>()
                .as_slice()
        );
        let twelve = grouped
            .iter()
            .find(|g| g.p == [1, 12])
            .expect("p = [1, 12] admitted");
        assert_eq!(twelve.cores, 12);
        assert!(
            !grouped.iter().any(|g| g.p == [1, 16]),
            "16 is in no group's range"
        );
        assert!(grouped.iter().any(|g| g.p == [1, 1] && g.cores == 1));
        // No partition twice; the reference's rule is the whole chip alone.
        let distinct: std::collections::HashSet<_> = grouped.iter().map(|g| &g.p).collect();
        assert_eq!(distinct.len(), grouped.len());
        assert_eq!(
            grouped_partitions(&[1, 4096], 5888, true).len(),
            whole.len()
        );
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
