//! Where a parallel set's groups sit on the chip (docs/core-groups.md §CG-7): each group is a
//! region of the core grid, its cores in a ring whose shifts stay inside it.
//!
//! On a mesh or torus each group is a near-square rectangle (its last row may be partial),
//! packed bottom-left on a skyline, largest group first. When the rectangles do not all fit
//! (the groups fill the chip and their shapes do not tile it), every group is a band of
//! consecutive cores in row-major order instead, which always fits. On an all-to-all chip
//! the cores have no geometry and every group is such a band of core ids.

/// One group's cores, row by row.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    /// (y, first x, cores) of each row it has cores in, by increasing y.
    pub rows: Vec<(usize, usize, usize)>,
}

impl Region {
    /// Its cores as grid indices (y · width + x), in ring order: along the first row, back
    /// along the next (a snake), so consecutive cores are neighbours and, in a rectangle,
    /// the ring's closing route runs inside it.
    pub fn ring(&self, width: usize) -> Vec<usize> {
        let mut cores = Vec::new();
        for (k, &(y, x, n)) in self.rows.iter().enumerate() {
            let row = (x..x + n).map(|x| y * width + x);
            if k % 2 == 0 {
                cores.extend(row);
            } else {
                cores.extend(row.rev());
            }
        }
        cores
    }

    /// Its cores.
    pub fn cores(&self) -> usize {
        self.rows.iter().map(|r| r.2).sum()
    }

    /// (x, y) of its bounding box's first column and row.
    pub fn origin(&self) -> (usize, usize) {
        let x0 = self.rows.iter().map(|r| r.1).min().unwrap_or(0);
        (x0, self.rows.first().map_or(0, |r| r.0))
    }

    /// Width × height of its bounding box.
    pub fn bounding_box(&self) -> (usize, usize) {
        let x1 = self.rows.iter().map(|r| r.1 + r.2).max().unwrap_or(0);
        (x1 - self.origin().0, self.rows.len())
    }
}

/// How a set's groups were laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    /// Each group a rectangle (its last row possibly partial).
    Rectangles,
    /// Each group a band of consecutive cores in row-major order.
    Bands,
}

/// The regions of `groups` (cores each, together at most width × height) on a
/// `width` × `height` grid, in the groups' order; `grid` false (an all-to-all chip) lays
/// them out as bands of core ids.
pub fn place(width: usize, height: usize, groups: &[u64], grid: bool) -> (Packing, Vec<Region>) {
    if grid {
        for squarest_first in [true, false] {
            if let Some(regions) = rectangles(width, height, groups, squarest_first) {
                return (Packing::Rectangles, regions);
            }
        }
    }
    (Packing::Bands, bands(width, groups))
}

/// Skyline bottom-left packing, largest group first: each group takes, among the shapes
/// of width within a factor of two of its square root, the squarest shape at its lowest
/// position (then the leftmost) when `squarest_first`, else the
/// position whose top is lowest (then the squarest, then the leftmost), which packs tighter.
/// `None` when a group finds no position.
fn rectangles(
    width: usize,
    height: usize,
    groups: &[u64],
    squarest_first: bool,
) -> Option<Vec<Region>> {
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by_key(|&m| (std::cmp::Reverse(groups[m]), m));
    let mut sky = vec![0usize; width];
    let mut regions = vec![Region { rows: Vec::new() }; groups.len()];
    for m in order {
        let g = usize::try_from(groups[m]).ok()?;
        let side = (g as f64).sqrt().ceil() as usize;
        // (ranking, [x, y, w]) of the best position so far.
        let mut best: Option<([usize; 4], [usize; 3])> = None;
        for w in (side / 2).max(1)..=(2 * side).min(width) {
            let h = g.div_ceil(w);
            for x in 0..=width - w {
                let y = sky[x..x + w].iter().copied().max().unwrap_or(0);
                if y + h > height {
                    continue;
                }
                let key = if squarest_first {
                    [w.abs_diff(h), y, x, 0]
                } else {
                    [y + h, w.abs_diff(h), x, 0]
                };
                if best.is_none_or(|b| key < b.0) {
                    best = Some((key, [x, y, w]));
                }
            }
        }
        let (_, [x, y, w]) = best?;
        let h = g.div_ceil(w);
        let last = g - (h - 1) * w;
        regions[m].rows = (0..h)
            .map(|r| (y + r, x, if r + 1 == h { last } else { w }))
            .collect();
        for (c, s) in sky[x..x + w].iter_mut().enumerate() {
            *s = if c < last { y + h } else { y + h - 1 };
        }
    }
    Some(regions)
}

/// Consecutive cores in row-major order, in the groups' order, each cut into rows.
fn bands(width: usize, groups: &[u64]) -> Vec<Region> {
    let mut next = 0usize;
    groups
        .iter()
        .map(|&g| {
            let mut rows = Vec::new();
            let mut left = g as usize;
            while left > 0 {
                let (y, x) = (next / width, next % width);
                let n = left.min(width - x);
                rows.push((y, x, n));
                next += n;
                left -= n;
            }
            Region { rows }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every core of every region, checking each is on the grid and in one region.
    fn covered(width: usize, height: usize, regions: &[Region]) -> Vec<usize> {
        let mut owner = vec![usize::MAX; width * height];
        for (m, r) in regions.iter().enumerate() {
            for c in r.ring(width) {
                assert!(c < width * height, "core {c} off the grid");
                assert_eq!(owner[c], usize::MAX, "core {c} in two regions");
                owner[c] = m;
            }
        }
        owner
    }

    #[test]
    fn groups_become_disjoint_rectangles_of_their_size() {
        // Eight experts of 65 cores and a shared expert of 260 on a 40 × 26 mesh.
        let mut groups = vec![65u64; 8];
        groups.push(260);
        let (packing, regions) = place(40, 26, &groups, true);
        assert_eq!(packing, Packing::Rectangles);
        covered(40, 26, &regions);
        for (r, &g) in regions.iter().zip(&groups) {
            assert_eq!(r.cores() as u64, g);
            let (w, h) = r.bounding_box();
            // Near-square, the last row partial.
            assert!(w.abs_diff(h) <= 2, "{w} × {h} for {g}");
            assert!(w * (h - 1) < g as usize && g as usize <= w * h);
        }
        // 260 cores are 16 wide, 17 tall (last row 4); 65 are 8 × 9 (last row 1) beside it.
        assert_eq!(regions[8].bounding_box(), (16, 17));
        assert_eq!(regions[8].rows.last(), Some(&(16, 0, 4)));
        assert_eq!(regions[0].bounding_box(), (8, 9));
        assert_eq!(regions[0].rows[0], (0, 16, 8));
    }

    #[test]
    fn groups_that_fill_the_chip_fall_back_to_bands() {
        // 8 × 65 + 520 = 1,040: every core; near-square rectangles cannot tile 40 × 26.
        let mut groups = vec![65u64; 8];
        groups.push(520);
        let (packing, regions) = place(40, 26, &groups, true);
        assert_eq!(packing, Packing::Bands);
        let owner = covered(40, 26, &regions);
        assert!(owner.iter().all(|&o| o != usize::MAX));
        assert_eq!(regions[1].rows, [(1, 25, 15), (2, 0, 40), (3, 0, 10)]);
    }

    #[test]
    fn a_ring_is_a_snake_of_neighbours() {
        let r = Region {
            rows: vec![(0, 1, 3), (1, 1, 3), (2, 1, 1)],
        };
        // Row 0 left to right, row 1 back, row 2 from its start.
        assert_eq!(r.ring(5), [1, 2, 3, 8, 7, 6, 11]);
        // No geometry: bands of ids.
        let (packing, regions) = place(10, 1, &[4, 3], false);
        assert_eq!(packing, Packing::Bands);
        assert_eq!(regions[1].ring(10), [4, 5, 6]);
    }
}
