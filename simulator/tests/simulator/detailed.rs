//! The detailed simulator: hand-worked network cases, an SRAM overflow at the right time,
//! agreement with the analytic model where nothing contends, and determinism.

use super::by_hand::{inst, w};
use elk_model::chip::ChipSpec;
use elk_sim::detailed::fair::max_min_rates;
use elk_sim::detailed::{
    simulate_detailed, simulate_detailed_with, DetailedConfig, HbmLayout, LoadPolicy, Network,
};
use elk_stage::instance::{Instance, LoadOrder, NamedOrder};
use elk_stage::schedule::{fill_load_work, Schedule, Work};
use elk_stage::units::{Cycles, Stage};

/// A chip from TOML: `topology` with its size, 1 GB/s = 1 byte/cycle at a 1 GHz clock.
pub(super) fn chip(
    topology: &str,
    cores: u64,
    size: &str,
    controllers: u64,
    latency: f64,
) -> ChipSpec {
    let text = format!(
        r#"name = "test"
description = "hand-worked"
cores = {cores}
sram_bytes_per_core = 1000
clock_hz = 1e9
[hbm]
bandwidth_bytes_per_s = 4e9
controllers = {controllers}
placement = "edges"
[noc]
topology = "{topology}"
{size}
injection_bytes_per_s_per_core = 1e9
link_bytes_per_s = 1e9
hop_latency_cycles = {latency}
[cost_model]
kind = "roofline"
peak_flops_per_s_per_core = 1e9
noc_bytes_per_s_per_core = 1e9
sync_latency_cycles = 0.0
"#
    );
    ChipSpec::from_toml_str("test.toml", &text).unwrap()
}

#[test]
fn one_transfer_over_k_hops() {
    // 4 × 1 mesh: core 0 → core 3 crosses 3 links eastwards, each at 1 byte/cycle.
    let net = Network::new(&chip("mesh", 4, "width = 4\nheight = 1", 1, 2.0), 1, 4.0);
    let (usage, hops) = net.unicast(0, 3);
    assert_eq!(hops, 3);
    let names: Vec<&str> = usage.iter().map(|&(r, _)| net.names[r].as_str()).collect();
    assert_eq!(names, ["(0,0)+x", "(1,0)+x", "(2,0)+x"]);
    let rate = max_min_rates(&net.capacity, &[(&usage, None)])[0];
    assert_eq!(rate, 1.0);
    // 100 bytes: 100 cycles of transfer plus 3 hops × 2 cycles of latency.
    assert_eq!(100.0 / rate + hops as f64 * 2.0, 106.0);
}

#[test]
fn two_flows_sharing_a_link_get_half_each() {
    // 0 → 2 and 1 → 3 on a 4 × 1 mesh share the link (1,0)+x.
    let net = Network::new(&chip("mesh", 4, "width = 4\nheight = 1", 1, 0.0), 1, 4.0);
    let (a, b) = (net.unicast(0, 2).0, net.unicast(1, 3).0);
    let rates = max_min_rates(&net.capacity, &[(&a, None), (&b, None)]);
    assert_eq!(rates, vec![0.5, 0.5]);
}

#[test]
fn a_torus_sends_half_each_way_round_when_both_are_as_short() {
    // 4 × 1 torus: core 0 → core 2 is 2 hops either way; core 0 → core 3 is 1 hop west.
    let net = Network::new(&chip("torus", 4, "width = 4\nheight = 1", 1, 0.0), 1, 4.0);
    let named = |(usage, hops): (Vec<(usize, f64)>, usize)| {
        let links: Vec<(&str, f64)> = usage
            .iter()
            .map(|&(r, w)| (net.names[r].as_str(), w))
            .collect();
        (links, hops)
    };
    assert_eq!(
        named(net.unicast(0, 2)),
        (
            vec![
                ("(0,0)+x", 0.5),
                ("(0,0)-x", 0.5),
                ("(1,0)+x", 0.5),
                ("(3,0)-x", 0.5)
            ],
            2
        )
    );
    assert_eq!(named(net.unicast(0, 3)), (vec![("(0,0)-x", 1.0)], 1));
}

#[test]
fn controller_broadcast_on_a_4x4_mesh() {
    // One controller at core 0 delivering to all 16 cores (ρ = 1, unicast, x then y): the
    // first east link carries the bytes of the 12 cores with x ≥ 1, the first north link
    // those of the 3 cores above (0,0).
    let net = Network::new(&chip("mesh", 16, "width = 4\nheight = 4", 1, 0.0), 1, 4.0);
    let (usage, hops) = net.distribution(0, 1.0);
    let weight = |name: &str| {
        usage
            .iter()
            .find(|&&(r, _)| net.names[r] == name)
            .map_or(0.0, |e| e.1)
    };
    assert_eq!(weight("(0,0)+x"), 12.0 / 16.0);
    assert_eq!(weight("(0,0)+y"), 3.0 / 16.0);
    assert_eq!(weight("(3,0)+y"), 3.0 / 16.0);
    assert_eq!(weight("(1,1)+x"), 0.0);
    // Mean hops from a corner of a 4 × 4 mesh: (0+1+2+3)·2·4/16 = 3.
    assert_eq!(hops, 3.0);
    // The multicast emulation: a link carries a byte once if any destination lies beyond.
    let grouped = net.compress(&[0], &[]);
    let bcast = |rho: f64| {
        let u = grouped.broadcast(0, rho);
        u.iter()
            .find(|&&(g, _)| grouped.names[g].0 == "(0,0)+x")
            .map_or(0.0, |e| e.1)
    };
    assert_eq!(bcast(1.0), 0.75);
    assert_eq!(bcast(16.0), 1.0);
}

/// A valid schedule with these options that loads each operator's data in the stage before
/// it runs (operator j runs in stage j + 1: its load starts in stage j).
fn one_stage_ahead(inst: &Instance, options: Vec<usize>) -> Schedule {
    let loads = inst.loads();
    let starts: Vec<Stage> = loads.iter().map(|&j| Stage(j.index())).collect();
    let work = fill_load_work(inst, &options, &loads, &starts).unwrap();
    let mut s = schedule(inst, work);
    s.options = options;
    assert_eq!(elk_sim::validate(inst, &s), vec![]);
    s
}

fn schedule(inst: &Instance, work: Vec<Work>) -> Schedule {
    Schedule::new(
        inst,
        "hand",
        vec![0; inst.ops.len()],
        inst.loads(),
        work,
        Cycles::ZERO,
    )
}

#[test]
fn memory_overflow_is_detected_at_the_right_time() {
    // op0 loads for 100 cycles in the prologue; op1's load (cold 60) may start in stage 0
    // too, so it starts right after, at t = 100, when op0 starts with hot 50: 110 > 100.
    // (H, exec, comm, ν, cold, hot)
    let inst = inst(
        &[
            (100.0, 80.0, 0.0, 0.0, 10, 50),
            (50.0, 80.0, 0.0, 0.0, 60, 60),
        ],
        100,
    );
    let s = schedule(&inst, vec![w(0, 0, 100.0), w(1, 0, 50.0)]);
    let c = chip("all-to-all", 4, "", 1, 0.0);
    // The HBM delivers H cycles of bytes in H cycles: B_HBM = 4 bytes/cycle here.
    let greedy = DetailedConfig {
        loads: LoadPolicy::Greedy,
        ..DetailedConfig::from_chip(&c)
    };
    let r = simulate_detailed(&inst, &s, &c, &greedy).unwrap();
    let o = r.overflow.unwrap();
    assert_eq!(
        (o.time_cycles, o.op.as_str(), o.used, o.sram),
        (100.0, "op1", 110, 100)
    );
    // Greedy, op0 starts once its own load is in: op1's load (50) runs under op0 (80), op1
    // runs after op0: 100 + 80 + 80.
    assert_eq!(r.makespan_cycles, Cycles(260.0));
    // Paced (the default), the prologue ends when its planned work (both loads, 150) is
    // done, as in the stage model: op0 starts at 150, with op1's cold bytes resident.
    let r = simulate_detailed(&inst, &s, &c, &DetailedConfig::from_chip(&c)).unwrap();
    let o = r.overflow.unwrap();
    assert_eq!((o.time_cycles, o.op.as_str()), (150.0, "op0"));
    assert_eq!(r.makespan_cycles, Cycles(150.0 + 80.0 + 80.0));
    assert_eq!(
        r.makespan_cycles,
        elk_sim::evaluate(&inst, &s).makespan_cycles
    );
}

#[test]
fn paced_loads_send_each_stage_its_planned_work_and_no_more() {
    // op2's load (40 HBM cycles, ν = 1) is planned half in stage 1 (under op0) and half in
    // stage 2 (under op1). Each operator computes 30 then shifts 70 (exec 100, comm 70) on
    // the ejection ports the loads use too. Paced: 20 cycles of load per stage, done within
    // the compute phase, so the shifts run alone and every stage takes 100. Greedy: the
    // whole load runs in stage 1; its last 10 cycles meet op0's shift and slow it.
    // (H, exec, comm, ν, cold, hot)
    let inst = inst(
        &[
            (0.0, 100.0, 70.0, 0.0, 0, 10),
            (0.0, 100.0, 70.0, 0.0, 0, 10),
            (40.0, 100.0, 70.0, 1.0, 10, 10),
        ],
        1000,
    );
    let s = schedule(&inst, vec![w(2, 1, 20.0), w(2, 2, 20.0)]);
    assert_eq!(elk_sim::validate(&inst, &s), vec![]);
    let c = chip("all-to-all", 4, "", 1, 0.0);
    let paced = simulate_detailed(&inst, &s, &c, &DetailedConfig::from_chip(&c)).unwrap();
    assert_eq!(paced.makespan_cycles, Cycles(300.0));
    assert_eq!(
        paced.makespan_cycles,
        elk_sim::evaluate(&inst, &s).makespan_cycles
    );
    let greedy = DetailedConfig {
        loads: LoadPolicy::Greedy,
        ..DetailedConfig::from_chip(&c)
    };
    let greedy = simulate_detailed(&inst, &s, &c, &greedy).unwrap();
    assert!(
        greedy.makespan_cycles.get() > 305.0,
        "greedy {}",
        greedy.makespan_cycles
    );
}

#[test]
fn agrees_with_the_analytic_model_when_nothing_contends() {
    // Loads never overlap execution (all in the prologue) or run under compute with no NoC
    // traffic: the detailed makespan equals the analytic one.
    let c = chip("all-to-all", 4, "", 2, 0.0);
    let mut compared = 0;
    for sram in [1000, 130] {
        let inst = inst(
            &[
                (100.0, 80.0, 0.0, 0.0, 10, 50),
                (50.0, 120.0, 0.0, 0.0, 30, 60),
                (0.0, 30.0, 0.0, 0.0, 0, 40),
                (70.0, 50.0, 0.0, 0.0, 20, 70),
            ],
            sram,
        );
        let loads = inst.loads();
        for starts in [vec![0, 0, 0], vec![0, 0, 2], vec![0, 1, 3]] {
            let start: Vec<Stage> = starts.iter().copied().map(Stage).collect();
            let work = fill_load_work(&inst, &[0; 4], &loads, &start).unwrap();
            let s = schedule(&inst, work);
            if !elk_sim::validate(&inst, &s).is_empty() {
                continue;
            }
            let analytic = elk_sim::evaluate(&inst, &s).makespan_cycles;
            let detailed = simulate_detailed(&inst, &s, &c, &DetailedConfig::from_chip(&c))
                .unwrap()
                .makespan_cycles;
            assert!(
                (detailed - analytic).abs() <= analytic * 0.01,
                "starts {starts:?}: detailed {detailed} vs analytic {analytic}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 4, "only {compared} valid schedules compared");
}

#[test]
fn agrees_on_a_real_layer_with_ample_links_and_is_deterministic() {
    // Llama2-13B's first 20 operators on ipu-pod4 with zero hop latency; the schedule loads
    // each operator's data in the stage before it (double buffering).
    use elk_model::build::{build_instance, InstanceOptions, OpRange};
    use elk_model::graph::Mode;
    let mut pod = ChipSpec::preset("ipu-pod4").unwrap();
    pod.noc.hop_latency_cycles = 0.0;
    let mut params = elk_model::zoo::ZooParams::new(Mode::Decode, 32, 2048);
    params.layers = Some(1);
    let graph = elk_model::zoo::build("llama2-13b", &params).unwrap();
    let opts = InstanceOptions {
        range: OpRange::Ops(0..20),
        load_order: LoadOrder::Named(NamedOrder::Fixed),
        ..InstanceOptions::default()
    };
    let inst = build_instance(&graph, &pod, &opts).unwrap();
    // The option with the least NoC traffic per operator, loads one stage ahead.
    let options: Vec<usize> = inst
        .ops
        .iter()
        .map(|o| {
            (0..o.options.len())
                .min_by(|&a, &b| {
                    o.options[a]
                        .noc_per_hbm
                        .total_cmp(&o.options[b].noc_per_hbm)
                        .then(o.options[a].cold.cmp(&o.options[b].cold))
                })
                .unwrap()
        })
        .collect();
    let s = one_stage_ahead(&inst, options);
    let cfg = DetailedConfig::from_chip(&pod);
    let analytic = elk_sim::evaluate(&inst, &s).makespan_cycles;
    let r = simulate_detailed(&inst, &s, &pod, &cfg).unwrap();
    assert!(
        (r.makespan_cycles - analytic).abs() <= analytic * 0.01,
        "detailed {} vs analytic {analytic}",
        r.makespan_cycles
    );
    let again = simulate_detailed(&inst, &s, &pod, &cfg).unwrap();
    assert_eq!(format!("{r:?}"), format!("{again:?}"));
    // The paper's emulation is one configuration of the same replay.
    let single = DetailedConfig {
        layout: HbmLayout::SingleBroadcast(0),
        ..cfg.clone()
    };
    assert!(simulate_detailed(&inst, &s, &pod, &single).is_ok());
}

#[test]
fn mesh_distribution_bandwidth_is_the_hottest_links_share() {
    // One controller at (0,0) of a 4 × 4 mesh: x-first routes put 12/16 of its bytes on
    // (0,0)+x, the hottest link, so B_NoC,dist = link rate / 0.75 — not "3 links".
    let c = chip("mesh", 16, "width = 4\nheight = 4", 1, 0.0);
    let b = elk_model::chip::network::distribution_bytes_per_s(&c).unwrap();
    assert!((b - 1e9 / 0.75).abs() < 1e-3, "{b}");
    assert_eq!(elk_model::build::noc_distribution_bytes_per_s(&c), b);
    // All-to-all has no such bound.
    let a = chip("all-to-all", 16, "", 1, 0.0);
    assert_eq!(elk_model::chip::network::distribution_bytes_per_s(&a), None);
}

#[test]
fn analytic_and_paced_replay_agree_on_a_mesh_chip() {
    // sn40l-like (40 × 26 mesh, 8 controllers at the edges), two Llama2-7B layers, loads
    // one stage ahead: HBM data is NoC-bound, and the stage model's B_NoC,dist must be the
    // one the replay's links deliver (within 5 %; measured +0.01 %).
    use elk_model::build::{build_instance, InstanceOptions};
    use elk_model::graph::Mode;
    let mesh = ChipSpec::preset("sn40l-like").unwrap();
    let mut params = elk_model::zoo::ZooParams::new(Mode::Decode, 8, 512);
    params.layers = Some(2);
    let graph = elk_model::zoo::build("llama2-7b", &params).unwrap();
    let opts = InstanceOptions {
        load_order: LoadOrder::Named(NamedOrder::Fixed),
        ..InstanceOptions::default()
    };
    let inst = build_instance(&graph, &mesh, &opts).unwrap();
    let options: Vec<usize> = inst
        .ops
        .iter()
        .map(|o| {
            (0..o.options.len())
                .min_by(|&a, &b| o.options[a].cold.cmp(&o.options[b].cold))
                .unwrap()
        })
        .collect();
    let s = one_stage_ahead(&inst, options);
    let analytic = elk_sim::evaluate(&inst, &s).makespan_cycles;
    let mut trace = Slices::default();
    let r = simulate_detailed_with(
        &inst,
        &s,
        &mesh,
        &DetailedConfig::from_chip(&mesh),
        &mut trace,
    )
    .unwrap();
    trace.assert_no_partial_overlaps();
    let off = (r.makespan_cycles - analytic) / analytic;
    assert!(
        off.abs() <= 0.05,
        "paced {} vs analytic {analytic}: {:+.2} %",
        r.makespan_cycles,
        100.0 * off
    );
}

/// A trace sink that keeps every slice, to check the tracks.
#[derive(Default)]
struct Slices(Vec<elk_sim::trace::TraceEvent>);

impl elk_sim::trace::TraceSink for Slices {
    fn event(&mut self, e: &elk_sim::trace::TraceEvent) {
        self.0.push(e.clone());
    }
}

impl Slices {
    /// On every track, each slice ends before the next one starts (a trace viewer draws
    /// partially overlapping slices on one track wrongly).
    fn assert_no_partial_overlaps(&self) {
        let mut tracks: Vec<_> = self.0.iter().map(|e| format!("{:?}", e.track)).collect();
        tracks.sort();
        tracks.dedup();
        assert!(tracks.len() >= 4, "tracks {tracks:?}");
        for track in tracks {
            let mut slices: Vec<_> = self
                .0
                .iter()
                .filter(|e| format!("{:?}", e.track) == track)
                .collect();
            slices.sort_by(|a, b| a.start_cycles.total_cmp(&b.start_cycles));
            for w in slices.windows(2) {
                let end = w[0].start_cycles + w[0].cycles;
                assert!(
                    end <= w[1].start_cycles + 1e-6 * end.max(1.0),
                    "{track}: {} ends at {end}, after {} starts at {}",
                    w[0].name,
                    w[1].name,
                    w[1].start_cycles
                );
            }
        }
    }
}
