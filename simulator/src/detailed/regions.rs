//! The parallel sets a replay runs region by region (docs/core-groups.md §CG-7): each set
//! operator whose chosen option records its members' cycles has its groups placed as regions
//! of the chip ([`elk_model::chip::region`]), one ring per region; sets with the same
//! allocation share their regions. What the report says about them is [`SetLayout`].

use elk_model::chip::region::{self, Packing, Region};
use elk_stage::instance::{Instance, MemberCycles};
use elk_stage::schedule::Schedule;
use serde::Serialize;
use std::collections::BTreeMap;

/// Where the replay put one allocation's groups.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SetLayout {
    /// The cores of each member's group, in member order.
    pub groups_cores: Vec<u64>,
    /// `rectangles`, or `bands` of row-major cores when the rectangles did not fit; on an
    /// all-to-all chip, `core ranges` (consecutive core ids; the cores have no geometry).
    pub packing: &'static str,
    /// Each group's bounding box on the grid, in member order.
    pub regions: Vec<RegionBox>,
    /// The set operators run on these groups.
    pub sets: usize,
}

/// A region's bounding box, in cores of the grid (x across, y down; an all-to-all chip is
/// one row of core ids).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RegionBox {
    /// Its first column.
    pub x: usize,
    /// Its first row.
    pub y: usize,
    /// Columns it spans.
    pub width_cores: usize,
    /// Rows it spans.
    pub height_cores: usize,
}

impl SetLayout {
    /// The layout of `groups` placed as `regions` with `packing` (`grid` false: all-to-all),
    /// no set run on it yet.
    fn of(groups_cores: Vec<u64>, packing: Packing, regions: &[Region], grid: bool) -> SetLayout {
        SetLayout {
            groups_cores,
            packing: match packing {
                Packing::Rectangles => "rectangles",
                Packing::Bands if grid => "bands",
                Packing::Bands => "core ranges",
            },
            regions: regions.iter().map(RegionBox::of).collect(),
            sets: 0,
        }
    }
}

impl RegionBox {
    /// `r`'s bounding box.
    fn of(r: &Region) -> RegionBox {
        let ((x, y), (width_cores, height_cores)) = (r.origin(), r.bounding_box());
        RegionBox {
            x,
            y,
            width_cores,
            height_cores,
        }
    }
}

/// The sets of one replay.
pub(super) struct SetRegions {
    /// Per operator: for a set run region by region, the index of each member's ring.
    pub rings_of: Vec<Option<Vec<usize>>>,
    /// Every ring: a region's cores in ring order (for the network's compression).
    pub rings: Vec<Vec<usize>>,
    /// The layouts, by allocation.
    pub layouts: Vec<SetLayout>,
}

impl SetRegions {
    /// The regions of `s`'s sets on a `width` × `height` grid (`grid` false: all-to-all).
    pub fn new(inst: &Instance, s: &Schedule, (width, height, grid): (usize, usize, bool)) -> Self {
        let mut by_groups: BTreeMap<Vec<u64>, (usize, Vec<usize>)> = BTreeMap::new();
        let mut rings = Vec::new();
        let mut layouts = Vec::new();
        let rings_of = (0..inst.ops.len())
            .map(|i| {
                let option = inst.ops[i].options.get(s.options[i])?;
                option.members.as_ref()?;
                let groups = option.groups.clone()?;
                let (layout, ids) = by_groups.entry(groups.clone()).or_insert_with(|| {
                    let (packing, regions) = region::place(width, height, &groups, grid);
                    let first = rings.len();
                    rings.extend(regions.iter().map(|r| r.ring(width)));
                    layouts.push(SetLayout::of(groups, packing, &regions, grid));
                    (layouts.len() - 1, (first..rings.len()).collect())
                });
                layouts[*layout].sets += 1;
                Some(ids.clone())
            })
            .collect();
        SetRegions {
            rings_of,
            rings,
            layouts,
        }
    }
}

/// A set operator's members while they run: each computes, then shifts inside its region.
pub(super) struct SetRun {
    /// The set's operator.
    pub op: usize,
    /// (when its shift starts, member) of the members still computing, latest first.
    pub waiting: Vec<(f64, usize)>,
    /// Member shifts in flight.
    pub flows: usize,
    /// When the last departed member shift's bytes have crossed its hops.
    pub latest: f64,
    /// The dispatch and combine have started.
    pub exchanging: bool,
}

impl SetRun {
    /// Set `op` starting at `t` with `m`'s members: each shifts after its compute (execution
    /// less its NoC cycles). Returns it and when the last member's compute ends.
    pub fn start(op: usize, t: f64, m: &MemberCycles) -> (SetRun, f64) {
        let compute = |k: usize| (m.exec_cycles[k] - m.comm_cycles[k]).get().max(0.0);
        let mut waiting: Vec<(f64, usize)> = (0..m.exec_cycles.len())
            .map(|k| (t + compute(k), k))
            .collect();
        waiting.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        let end = waiting.first().map_or(t, |w| w.0);
        let run = SetRun {
            op,
            waiting,
            flows: 0,
            latest: t,
            exchanging: false,
        };
        (run, end)
    }

    /// The members whose compute has ended by `t`, earliest first.
    pub fn due(&mut self, t: f64) -> Vec<usize> {
        let mut due = Vec::new();
        while self.waiting.last().is_some_and(|w| w.0 <= t) {
            due.extend(self.waiting.pop().map(|w| w.1));
        }
        due
    }

    /// Cycles from `t` to the next member's compute end.
    pub fn until_due(&self, t: f64) -> f64 {
        self.waiting.last().map_or(f64::INFINITY, |w| w.0 - t)
    }
}
