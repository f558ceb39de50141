//! The NoC model against the textbook: with the network's own dimension-order routing and
//! max-min rates, the saturation throughput of uniform-random, transpose and
//! nearest-neighbour traffic on k × k meshes and tori (k = 4, 8, 16) is within 2 % of the
//! channel-load bound, derived here without the model's router.
//!
//! Units: λ is each node's injection rate as a fraction of one link's bandwidth; the channel
//! load γ of a link is the traffic it carries per unit of λ; saturation is λ = 1 / max γ.
//! Links are directional (four out of every node), as in Dally & Towles.
//!
//! Uniform random (1/N of every node's traffic to every node, itself included — D&T's
//! convention): cut a k-ary 2-cube (k even) through its middle. N/2 nodes on each side each
//! send half their traffic across, so the cut carries N·λ/2 in all. A mesh's cut is crossed
//! by B = 2k directional channels (k each way), so γ ≥ Nλ/(2·2k) = kλ/4: λ_sat = 4/k. A
//! torus's cut is crossed twice per row (the middle and the wrap-around), B = 4k, so
//! γ ≥ kλ/8: λ_sat = 8/k (D&T §3.3). Dimension-order routing meets the bound: the x-link
//! from column c to c + 1 of a mesh row carries (c + 1)(k − c − 1) sources × destinations
//! at λ/k per (source, destination column), largest at c + 1 = k/2, i.e. kλ/4; on a torus
//! each direction of a ring carries, per link, Σ_{d=1}^{k/2−1} d + (k/2)/2 = k²/8 hops per
//! source, at λ/k — kλ/8 — provided the k/2-apart pairs go half each way. (With 1/(N − 1)
//! and no self-traffic the bound would be 4/k · (N − 1)/N: 6 % lower at k = 4.)
//!
//! Transpose ((x, y) → (y, x)), mesh, XY routing: the flow from (x, y) runs along row y
//! from column x to column y, then along column y from row y to row x. The +x link from
//! column c to c + 1 of row y carries the sources x ≤ c < y: c + 1 of them, most (y) at
//! c = y − 1, so the worst row y = k − 1 gives γ = k − 1; the y-links mirror this. So
//! λ_sat = 1/(k − 1). Torus: in row y the k − 1 flows converge on column y from both sides,
//! at forward distances 1 … k − 1; the link into column y from the −x side carries those at
//! distances 1 … k/2 − 1 and half of the k/2 one: γ = (k − 1)/2, λ_sat = 2/(k − 1) (the
//! columns diverge from row y alike).
//!
//! Nearest neighbour (a quarter of each node's traffic to each of (x ± 1 mod k, y),
//! (x, y ± 1 mod k)): on a torus every directional link carries exactly one one-hop flow,
//! γ = 1/4, λ_sat = 4. On a mesh the wrap-around neighbour of an edge node lies across its
//! row (column): every +x link of a row carries one one-hop flow (λ/4) plus the flow from
//! column 0 to column k − 1 (λ/4), likewise −x, ±y: γ = 1/2, λ_sat = 2.
//!
//! A router that got any of this wrong shows: uniform random must fall exactly as 1/k and be
//! twice as high on the torus (no wrap-around links, or one direction only, gives the mesh's
//! number or less); ties sent one way round load one direction's links (k + 2)/k as much
//! (uniform torus 8/(k + 2), 20 % low at k = 8); YX or shared bidirectional links change
//! transpose and nearest neighbour by a factor of 2 or more.

use super::detailed::chip;
use elk_sim::detailed::traffic::{saturation, traffic_usage, Traffic};
use elk_sim::detailed::Network;

const TOLERANCE: f64 = 0.02;
const SIZES: [usize; 3] = [4, 8, 16];

/// A k × k mesh or torus with 1-byte/cycle links.
fn grid(topology: &str, k: usize) -> Network {
    let size = format!("width = {k}\nheight = {k}");
    Network::new(&chip(topology, (k * k) as u64, &size, 1, 0.0), 1, 1.0)
}

/// The channel-load bound (module docs): saturation per node, in links.
fn bound(traffic: Traffic, torus: bool, k: usize) -> f64 {
    let k = k as f64;
    let wrap = if torus { 2.0 } else { 1.0 };
    wrap * match traffic {
        Traffic::UniformRandom => 4.0 / k,
        Traffic::Transpose => 1.0 / (k - 1.0),
        Traffic::NearestNeighbour => 2.0,
    }
}

/// (topology, k, pattern, measured, bound) for all 18 cases.
fn table() -> Vec<(&'static str, usize, Traffic, f64, f64)> {
    let mut rows = Vec::new();
    for topology in ["mesh", "torus"] {
        for k in SIZES {
            let net = grid(topology, k);
            for traffic in Traffic::ALL {
                let measured = saturation(&net, traffic).unwrap().per_node_links;
                rows.push((
                    topology,
                    k,
                    traffic,
                    measured,
                    bound(traffic, topology == "torus", k),
                ));
            }
        }
    }
    rows
}

#[test]
fn saturation_matches_the_channel_load_bounds() {
    // `cargo test --release -p elk-sim --test simulator noc_saturation -- --nocapture`
    // prints the table of docs/detailed.md.
    let rows = table();
    println!("| topology | k | traffic | measured (links/node) | bound | error |");
    println!("|---|---:|---|---:|---:|---:|");
    let mut wrong = Vec::new();
    for &(topology, k, traffic, measured, bound) in &rows {
        let error = measured / bound - 1.0;
        println!(
            "| {topology} | {k} | {} | {measured:.4} | {bound:.4} | {:+.2} % |",
            traffic.name(),
            100.0 * error
        );
        if error.abs() > TOLERANCE {
            wrong.push(format!(
                "{topology} k={k} {}: {measured} vs {bound}",
                traffic.name()
            ));
        }
    }
    assert_eq!(rows.len(), 18);
    assert!(wrong.is_empty(), "off the bound by > 2 %: {wrong:#?}");
}

#[test]
fn uniform_random_falls_as_one_over_k_and_the_torus_doubles_it() {
    let measured = |topology: &str, k: usize| {
        saturation(&grid(topology, k), Traffic::UniformRandom)
            .unwrap()
            .per_node_links
    };
    let close = |a: f64, b: f64| (a / b - 1.0).abs() <= TOLERANCE;
    for topology in ["mesh", "torus"] {
        let at4 = measured(topology, 4);
        for k in [8, 16] {
            let at_k = measured(topology, k);
            assert!(
                close(at_k * k as f64, at4 * 4.0),
                "{topology}: {at4} at 4, {at_k} at {k}"
            );
        }
    }
    for k in SIZES {
        let (mesh, torus) = (measured("mesh", k), measured("torus", k));
        assert!(
            close(torus, 2.0 * mesh),
            "k={k}: mesh {mesh}, torus {torus}"
        );
    }
}

#[test]
fn the_bottleneck_is_where_the_derivation_puts_it() {
    // Uniform random on an 8 × 8 mesh: a link across the middle (column 3 → 4, or row 3 → 4)
    // carries kλ/4 = 2λ.
    let net = grid("mesh", 8);
    let loads = |traffic| {
        let mut load = vec![0.0; net.noc_resources];
        for u in traffic_usage(&net, traffic).unwrap() {
            for (r, w) in u {
                load[r] += w;
            }
        }
        load
    };
    let uniform = loads(Traffic::UniformRandom);
    let middle = net.names.iter().position(|n| n == "(3,0)+x").unwrap();
    assert!((uniform[middle] - 2.0).abs() < 1e-9, "{}", uniform[middle]);
    // Transpose: row 7's +x link into column 7 carries the flows of columns 0 … 6, and three
    // mirror images of it (column 7 down from row 7, row 0 into column 0, column 0 up from
    // row 0) as many; every other link fewer.
    let transpose = loads(Traffic::Transpose);
    let hottest = ["(6,7)+x", "(7,7)-y", "(1,0)-x", "(0,0)+y"];
    for (r, name) in net.names.iter().enumerate().take(net.noc_resources) {
        let expected = hottest.contains(&name.as_str());
        assert_eq!(transpose[r] == 7.0, expected, "{name}: {}", transpose[r]);
        assert!(transpose[r] <= 7.0, "{name}: {}", transpose[r]);
    }
    let sat = saturation(&net, Traffic::Transpose).unwrap();
    assert!(
        hottest.contains(&sat.bottleneck.as_str()),
        "{}",
        sat.bottleneck
    );
}

#[test]
fn patterns_that_need_a_grid_say_so() {
    let rect = Network::new(&chip("mesh", 8, "width = 4\nheight = 2", 1, 0.0), 1, 1.0);
    let err = saturation(&rect, Traffic::Transpose).unwrap_err();
    assert!(err.0.contains("square"), "{err}");
    let a2a = Network::new(&chip("all-to-all", 8, "", 1, 0.0), 1, 1.0);
    assert!(saturation(&a2a, Traffic::UniformRandom).is_err());
}
