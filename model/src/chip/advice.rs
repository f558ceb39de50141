//! What to change in a chip whose NoC distributes HBM data slower than the HBM delivers it
//! (B_NoC,dist below the HBM bandwidth): which keys to raise, and to what, so that the NoC
//! is no longer the bound of HBM loads. Each value is checked by computing B_NoC,dist of the
//! chip with it, so the advice is never short.

use super::{ChipSpec, Placement, Topology};
use crate::build::noc_distribution_bytes_per_s;

/// Values that lift B_NoC,dist to the HBM bandwidth, each on its own (`both`: together).
#[derive(Clone, Debug, PartialEq)]
pub struct DistributionAdvice {
    /// B_NoC,dist now, bytes/s.
    pub now_bytes_per_s: f64,
    /// The HBM bandwidth to reach, bytes/s.
    pub hbm_bytes_per_s: f64,
    /// `noc.injection_bytes_per_s_per_core` at least this, when the cores' injection is
    /// below the HBM bandwidth (needed whatever else changes).
    pub injection_bytes_per_s_per_core: Option<f64>,
    /// `noc.link_bytes_per_s` at least this, with the chip's controllers (mesh and torus).
    pub link_bytes_per_s: Option<f64>,
    /// `hbm.controllers` at least this, with the chip's link rate (edge placement, at most
    /// one controller per edge core); `None` when no count does it.
    pub controllers: Option<u64>,
    /// Twice the controllers (at most the edge cores) with a link rate of at least this.
    pub both: Option<(u64, f64)>,
    /// When no count of controllers does it alone: the most (one per edge core) and the
    /// B_NoC,dist they reach, bytes/s.
    pub most_controllers: Option<(u64, f64)>,
}

/// `v` rounded up at its fourth significant digit: a value to type that is never short.
fn round_up(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(v.log10().floor() as i32 - 3);
    (v / scale).ceil() * scale
}

/// B_NoC,dist by the links of `chip` with `controllers` controllers and links of `link`
/// bytes/s (`None`: all-to-all, no links to share).
fn by_links(chip: &ChipSpec, controllers: u64, link: f64) -> Option<f64> {
    let mut c = chip.clone();
    c.hbm.controllers = controllers;
    c.noc.link_bytes_per_s = link;
    super::network::distribution_bytes_per_s(&c)
}

/// The link rate at which `controllers` controllers distribute at least `target` bytes/s
/// over the links: B_NoC,dist by links is proportional to the link rate.
fn link_for(chip: &ChipSpec, controllers: u64, target: f64) -> Option<f64> {
    let rate = chip.noc.link_bytes_per_s;
    let mut link = round_up(rate * target / by_links(chip, controllers, rate)?);
    // Rounding up keeps it above; this guards against float noise all the same.
    while by_links(chip, controllers, link).is_some_and(|b| b < target) {
        link = round_up(link * (1.0 + 1e-4));
    }
    Some(link)
}

/// The edge cores of a mesh or torus: the most controllers edge placement spreads out.
fn edge_cores(chip: &ChipSpec) -> u64 {
    let (w, h) = (chip.noc.width.unwrap_or(1), chip.noc.height.unwrap_or(1));
    if w < 2 || h < 2 {
        w * h
    } else {
        2 * (w + h) - 4
    }
}

/// What lifts B_NoC,dist of `chip` to its HBM bandwidth, or `None` when it is already there.
pub fn distribution_advice(chip: &ChipSpec) -> Option<DistributionAdvice> {
    let hbm = chip.hbm.bandwidth_bytes_per_s;
    let now = noc_distribution_bytes_per_s(chip);
    if now >= hbm {
        return None;
    }
    let injection = (chip.noc_bytes_per_s() < hbm).then(|| round_up(hbm / chip.cores as f64));
    let mesh = chip.noc.topology != Topology::AllToAll;
    let current = chip.hbm.controllers.max(1);
    let link = if mesh {
        link_for(chip, current, hbm)
    } else {
        None
    };
    let (controllers, both, most_controllers) = if mesh && chip.hbm.placement == Placement::Edges {
        let most = edge_cores(chip);
        let rate = chip.noc.link_bytes_per_s;
        let reaches = |c: u64| by_links(chip, c, rate).is_some_and(|b| b >= hbm);
        // Doubling, then bisection: B_NoC,dist by links grows with the controllers.
        let mut lo = current;
        let mut hi = None;
        let mut c = current;
        while c < most {
            c = (c * 2).min(most);
            if reaches(c) {
                hi = Some(c);
                break;
            }
            lo = c;
        }
        let controllers = hi.map(|mut hi| {
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if reaches(mid) {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            hi
        });
        let doubled = (current * 2).min(most);
        let both = (doubled > current)
            .then(|| link_for(chip, doubled, hbm).map(|l| (doubled, l)))
            .flatten();
        let ceiling = controllers
            .is_none()
            .then(|| by_links(chip, most, rate).map(|b| (most, b)))
            .flatten();
        (controllers, both, ceiling)
    } else {
        (None, None, None)
    };
    Some(DistributionAdvice {
        now_bytes_per_s: now,
        hbm_bytes_per_s: hbm,
        injection_bytes_per_s_per_core: injection,
        link_bytes_per_s: link,
        controllers,
        both,
        most_controllers,
    })
}

impl DistributionAdvice {
    /// The advice in one phrase, keys as the chip file spells them, e.g. "to make the NoC no
    /// longer the bound of HBM loads, raise noc.link_bytes_per_s from 1.024e11 to ≥ 1.251e12
    /// (1.251 TB/s), or hbm.controllers from 8 to ≥ 96, or both: hbm.controllers = 16 with
    /// noc.link_bytes_per_s ≥ 6.25e11".
    pub fn describe(&self, chip: &ChipSpec) -> String {
        use elk_stage::units::si;
        let rate = |v: f64| format!("{v:e} ({})", si(v, "B/s"));
        let mut ways = Vec::new();
        if let Some(l) = self.link_bytes_per_s {
            ways.push(format!(
                "noc.link_bytes_per_s from {:e} to ≥ {}",
                chip.noc.link_bytes_per_s,
                rate(l)
            ));
        }
        if let Some(c) = self.controllers {
            ways.push(format!(
                "hbm.controllers from {} to ≥ {c}",
                chip.hbm.controllers
            ));
        }
        if let Some((c, l)) = self.both {
            ways.push(format!(
                "both: hbm.controllers = {c} with noc.link_bytes_per_s ≥ {}",
                rate(l)
            ));
        }
        if let Some((c, b)) = self.most_controllers {
            ways.push(format!(
                "(more controllers alone cannot: {c}, one per edge core, reach {})",
                si(b, "B/s")
            ));
        }
        let mut s = String::from("to make the NoC no longer the bound of HBM loads, raise ");
        match self.injection_bytes_per_s_per_core {
            Some(i) => {
                s.push_str(&format!(
                    "noc.injection_bytes_per_s_per_core from {:e} to ≥ {}",
                    chip.noc.injection_bytes_per_s_per_core,
                    rate(i)
                ));
                if !ways.is_empty() {
                    s.push_str(&format!(" and {}", ways.join(", or ")));
                }
            }
            None => s.push_str(&ways.join(", or ")),
        }
        s.replace(", or (more", " (more")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::noc_distribution_bytes_per_s;

    /// A 64 × 32 mesh of 2,048 cores with 8 TB/s of HBM behind the template's 8 controllers
    /// and 102.4 GB/s links: 655 GB/s reach the cores (the review's chip, ux-2 #8).
    fn hypo() -> ChipSpec {
        let toml = crate::chip::template(Topology::Mesh)
            .unwrap()
            .replace("cores = 1040", "cores = 2048")
            .replace("width = 40", "width = 64")
            .replace("height = 26", "height = 32")
            .replace(
                "bandwidth_bytes_per_s = 2e12",
                "bandwidth_bytes_per_s = 8e12",
            );
        ChipSpec::from_toml_str("hypo.toml", &toml).unwrap()
    }

    #[test]
    fn every_value_advised_lifts_the_distribution_to_the_hbm_and_no_less_would() {
        let chip = hypo();
        let hbm = chip.hbm.bandwidth_bytes_per_s;
        let a = distribution_advice(&chip).expect("the chip is NoC-bound");
        assert!(a.now_bytes_per_s < 0.1 * hbm, "{a:?}");
        assert_eq!(a.injection_bytes_per_s_per_core, None, "injection is ample");
        let dist = |controllers: u64, link: f64| {
            let mut c = chip.clone();
            c.hbm.controllers = controllers;
            c.noc.link_bytes_per_s = link;
            noc_distribution_bytes_per_s(&c)
        };
        let current = chip.hbm.controllers;
        let link = a.link_bytes_per_s.unwrap();
        assert!(dist(current, link) >= hbm, "{a:?}");
        // Rounded up at the fourth digit: 0.1 % less falls short.
        assert!(dist(current, link * 0.999) < hbm, "{a:?}");
        // Even a controller on every one of the 188 edge cores is not enough at 102.4 GB/s.
        assert_eq!(a.controllers, None, "{a:?}");
        let (most, reach) = a.most_controllers.unwrap();
        assert_eq!(most, 188);
        assert!(reach < hbm && reach == dist(188, chip.noc.link_bytes_per_s));
        let (c2, l2) = a.both.unwrap();
        assert_eq!(c2, 2 * current);
        assert!(dist(c2, l2) >= hbm && l2 < link, "{a:?}");
        let text = a.describe(&chip);
        assert!(
            text.starts_with(
                "to make the NoC no longer the bound of HBM loads, raise noc.link_bytes_per_s \
                 from 1.024e11 to ≥ "
            ),
            "{text}"
        );
        // With 800 GB/s links, more controllers alone do it, and the count advised is the
        // first that does.
        let mut faster = chip.clone();
        faster.noc.link_bytes_per_s = 8e11;
        let b = distribution_advice(&faster).unwrap();
        let controllers = b.controllers.unwrap();
        assert!(dist(controllers, 8e11) >= hbm, "{b:?}");
        assert!(dist(controllers - 1, 8e11) < hbm, "{b:?}");
        assert!(b.describe(&faster).contains(&format!(
            "or hbm.controllers from 8 to ≥ {controllers}, or both: hbm.controllers = 16 with"
        )));
        // A chip that keeps up needs nothing.
        let mut fast = chip.clone();
        fast.noc.link_bytes_per_s = link;
        assert_eq!(distribution_advice(&fast), None);
    }
}
