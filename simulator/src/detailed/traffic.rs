//! Synthetic traffic on a mesh or torus and the saturation throughput the model gives it —
//! the check of the NoC model against the textbook's channel-load bounds (Dally & Towles,
//! *Principles and Practices of Interconnection Networks*, ch. 3; docs/detailed.md, "NoC
//! model vs textbook saturation").
//!
//! Every node injects at the same rate λ, split over destinations in the pattern's fixed
//! proportions; each node is one flow whose usage is the sum of its routes (the network's
//! own dimension-order routing) weighted by those proportions. Under max-min fairness all
//! flows rise together until the most loaded link fills, so the smallest max-min rate is the
//! largest λ every node sustains: 1 / (the largest channel load per unit of λ).

use super::fair::max_min_rates;
use super::DetailedError;
use elk_model::chip::network::{Network, Usage};

/// Where each node's injected bytes go (node (x, y) is core `y·width + x`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// 1/N of every node's bytes to every node, itself included (Dally & Towles's
    /// convention; the share to itself never enters the network).
    UniformRandom,
    /// (x, y) sends everything to (y, x); nodes on the diagonal send nothing over the
    /// network. Square grids only.
    Transpose,
    /// A quarter to each of (x ± 1 mod k, y) and (x, y ± 1 mod k). On a torus these are one
    /// hop away; on a mesh an edge node's wrap-around neighbour lies across its row or column.
    NearestNeighbour,
}

impl Traffic {
    /// The three patterns, in table order.
    pub const ALL: [Traffic; 3] = [
        Traffic::UniformRandom,
        Traffic::Transpose,
        Traffic::NearestNeighbour,
    ];

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Traffic::UniformRandom => "uniform random",
            Traffic::Transpose => "transpose",
            Traffic::NearestNeighbour => "nearest neighbour",
        }
    }

    /// (destination, share of the source's bytes) for source `s` on a `w` × `h` grid.
    fn destinations(self, s: usize, w: usize, h: usize) -> Vec<(usize, f64)> {
        let (x, y) = (s % w, s / w);
        match self {
            Traffic::UniformRandom => {
                let share = 1.0 / (w * h) as f64;
                (0..w * h).map(|d| (d, share)).collect()
            }
            Traffic::Transpose => vec![(x * w + y, 1.0)],
            Traffic::NearestNeighbour => [
                (y * w + (x + 1) % w),
                (y * w + (x + w - 1) % w),
                (((y + 1) % h) * w + x),
                (((y + h - 1) % h) * w + x),
            ]
            .into_iter()
            .map(|d| (d, 0.25))
            .collect(),
        }
    }
}

/// The saturation throughput of a pattern on a network.
#[derive(Clone, Debug, PartialEq)]
pub struct Saturation {
    /// The largest injection rate every node sustains, in units of one link's bandwidth.
    pub per_node_links: f64,
    /// The most loaded link (the first of them), which saturates first.
    pub bottleneck: String,
}

/// Per source core, the links one unit of its injection crosses under `traffic`.
pub fn traffic_usage(net: &Network, traffic: Traffic) -> Result<Vec<Usage>, DetailedError> {
    let bad = |what: &str| Err(DetailedError(format!("{} traffic {what}", traffic.name())));
    let Some((w, h)) = net.grid() else {
        return bad("needs a mesh or torus");
    };
    if traffic == Traffic::Transpose && w != h {
        return bad(&format!("needs a square grid, not {w} × {h}"));
    }
    let mut acc = vec![0.0; net.noc_resources];
    Ok((0..w * h)
        .map(|s| {
            acc.fill(0.0);
            for (d, share) in traffic.destinations(s, w, h) {
                net.route(s, d, share, &mut acc);
            }
            Network::sparse(&acc)
        })
        .collect())
}

/// The saturation throughput of `traffic` on `net`, from the max-min rates of one flow per
/// node (nodes whose traffic never leaves them cannot limit it).
pub fn saturation(net: &Network, traffic: Traffic) -> Result<Saturation, DetailedError> {
    let usage = traffic_usage(net, traffic)?;
    let flows: Vec<(&Usage, Option<f64>)> = usage
        .iter()
        .filter(|u| !u.is_empty())
        .map(|u| (u, None))
        .collect();
    let rates = max_min_rates(&net.capacity, &flows);
    let slowest = rates.iter().copied().fold(f64::INFINITY, f64::min);
    // The link whose load per unit of λ, relative to its capacity, is largest.
    let mut load = vec![0.0; net.noc_resources];
    for u in &usage {
        for &(r, w) in u {
            load[r] += w;
        }
    }
    let hottest = (0..net.noc_resources)
        .filter(|&r| load[r] > 0.0)
        .reduce(|a, b| {
            if load[b] / net.capacity[b] > load[a] / net.capacity[a] {
                b
            } else {
                a
            }
        })
        .ok_or_else(|| {
            DetailedError(format!(
                "{} traffic never enters the network",
                traffic.name()
            ))
        })?;
    Ok(Saturation {
        per_node_links: slowest / net.capacity[hottest],
        bottleneck: net.names[hottest].clone(),
    })
}
