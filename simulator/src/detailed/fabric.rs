//! The chip as a replay sees it: the compressed network, where loads enter it and at what
//! rates; and, once the replay is over, the utilisation of its links and controller ports.

use super::regions::SetRegions;
use super::{DetailedConfig, DetailedError, HbmLayout, LinkUse};
use elk_model::chip::network::{Compressed, Network, Usage};
use elk_model::chip::ChipSpec;
use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;

/// What the replay reads about the chip and never changes.
pub(super) struct Fabric {
    /// Resources grouped by how every traffic class uses them (one group simulates as one).
    pub net: Compressed,
    /// HBM bandwidth, bytes per cycle.
    pub b_hbm: f64,
    /// Bytes a shift moves per comm cycle (the full injection rate of every core).
    pub inject: f64,
    /// Bytes one core injects per cycle.
    pub inject_per_core: f64,
    /// The parallel sets run region by region, and their regions' rings.
    pub sets: SetRegions,
    /// HBM controllers; a load is one flow per controller.
    pub controllers: usize,
    /// One controller broadcasting (rather than each delivering its share).
    broadcast: bool,
    /// Cycles per hop (a shift ends its mean hop count after its last byte leaves).
    pub hop_latency: f64,
}

impl Fabric {
    /// The network of `chip` with the controllers of `cfg`, for replaying `s` of `inst` (in
    /// its cycles): with the regions of its parallel sets. `Err` when the controllers are
    /// not cores of the chip.
    pub fn new(
        chip: &ChipSpec,
        cfg: &DetailedConfig,
        (inst, s): (&Instance, &Schedule),
    ) -> Result<Fabric, DetailedError> {
        let clock_hz = inst.clock_hz;
        let b_hbm = chip.hbm.bandwidth_bytes_per_s / clock_hz; // bytes per cycle
        let inject_per_core = chip.noc.injection_bytes_per_s_per_core / clock_hz;
        let (sources, broadcast) = match &cfg.layout {
            HbmLayout::Distributed(c) => (c.clone(), false),
            HbmLayout::SingleBroadcast(c) => (vec![*c], true),
        };
        if sources.is_empty() || sources.iter().any(|&c| c >= chip.cores as usize) {
            return Err(DetailedError(format!(
                "HBM controllers at cores {sources:?}: need at least one, each < {}",
                chip.cores
            )));
        }
        let controllers = sources.len();
        let port = if broadcast {
            b_hbm
        } else {
            b_hbm / controllers as f64
        };
        let network = Network::new(chip, controllers, port);
        let grid = match network.grid() {
            Some((w, h)) => (w, h, true),
            None => (chip.cores as usize, 1, false),
        };
        let sets = SetRegions::new(inst, s, grid);
        Ok(Fabric {
            net: network.compress(&sources, &sets.rings),
            b_hbm,
            inject: inject_per_core * chip.cores as f64,
            inject_per_core,
            sets,
            controllers,
            broadcast,
            hop_latency: chip.noc.hop_latency_cycles,
        })
    }

    /// The resources controller `c`'s share of a load crosses, ρ copies over the NoC.
    pub fn load_usage(&self, c: usize, rho: f64) -> Usage {
        let mut usage = if self.broadcast {
            self.net.broadcast(c, rho)
        } else {
            self.net.distribution(c, rho)
        };
        usage.push((self.net.controller[c], 1.0));
        usage
    }
}

/// Bytes each resource group carried over a replay of a given makespan.
pub(super) struct Utilisation<'a> {
    pub net: &'a Compressed,
    pub carried: &'a [f64],
    pub makespan: f64,
}

impl Utilisation<'_> {
    /// Bytes carried / (capacity × makespan) of group `r` (0 for an empty replay).
    fn of(&self, r: usize) -> f64 {
        if self.makespan > 0.0 {
            self.carried[r] / (self.net.capacity[r] * self.makespan)
        } else {
            0.0
        }
    }

    /// The mean over NoC links (or ports), each group weighted by its members.
    pub fn link_mean(&self) -> f64 {
        let noc = self.net.noc_groups;
        let members: usize = (0..noc).map(|g| self.net.names[g].1).sum();
        (0..noc)
            .map(|g| self.of(g) * self.net.names[g].1 as f64)
            .sum::<f64>()
            / members.max(1) as f64
    }

    /// Up to 10 NoC groups that carried anything, hottest first (ties by group number).
    pub fn hottest_links(&self) -> Vec<LinkUse> {
        let net = self.net;
        let mut order: Vec<usize> = (0..net.noc_groups).collect();
        order.sort_by(|&a, &b| self.of(b).total_cmp(&self.of(a)).then(a.cmp(&b)));
        order
            .iter()
            .take(10)
            .filter(|&&r| self.carried[r] > 0.0)
            .map(|&r| LinkUse {
                name: match net.names[r].1 {
                    1 => net.names[r].0.clone(),
                    m => format!("{} (and {} alike)", net.names[r].0, m - 1),
                },
                utilisation: self.of(r),
            })
            .collect()
    }

    /// Each controller port's.
    pub fn controllers(&self) -> Vec<f64> {
        self.net.controller.iter().map(|&g| self.of(g)).collect()
    }
}
