//! Resident experts (docs/moe.md, "Resident experts"): a resident expert is never loaded and
//! its SRAM is reserved; the oracle stays at or below a resident policy on every step;
//! resident-auto is never worse than the better of load-all and on-demand on the routing it
//! was chosen for; resident-N is refused when its experts cannot fit.

use elk_app::moe::{run, MoeSpec};
use elk_model::build::{InstanceMemo, InstanceOptions};
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::load_policy::{share_per_core, Policy, ResidentSet, Slot, StepInstances};
use elk_model::routing::Routing;
use elk_model::zoo::{self, ZooParams};
use elk_stage::units::OpId;

fn spec(model: &str, layers: usize, batch: u64, routing: Routing, policies: &[&str]) -> MoeSpec {
    let mut params = ZooParams::new(Mode::Decode, batch, 256);
    params.layers = Some(layers);
    let experts = zoo::find(model).unwrap().moe().unwrap().experts;
    MoeSpec {
        params,
        chip: ChipSpec::preset("ipu-mk2").unwrap(),
        opts: InstanceOptions::default(),
        routing,
        steps: 6,
        seed: 3,
        policies: policies
            .iter()
            .map(|p| Policy::parse_for(p, experts).unwrap())
            .collect(),
        methods: vec!["elk-dyn".into()],
    }
}

#[test]
fn a_resident_expert_is_never_loaded_and_its_sram_is_reserved() {
    let model = zoo::find("olmoe-1b-7b").unwrap();
    let moe = *model.moe().unwrap();
    let mut params = ZooParams::new(Mode::Decode, 2, 256);
    params.layers = Some(1);
    // Two tokens, k = 8: experts 0..16 have tokens, the other 48 are idle.
    let counts = Routing::Balanced
        .sample(&moe, 1, 2, 0, 0)
        .unwrap()
        .counts(64);
    let chip = ChipSpec::preset("ipu-mk2").unwrap();
    let memo = InstanceMemo::new(&chip, &InstanceOptions::default());
    let si = StepInstances::build(model, &params, &counts, &memo).unwrap();
    let ranking = vec![Routing::Balanced.ranking(&moe, 0)];
    // Expert 3 has tokens, expert 40 has none.
    let set = ResidentSet::new(1, 64, &[(0, 3), (0, 40)], Policy::LoadAll);
    let plain = si.instance(&Policy::LoadAll, &ranking);
    let kept = si.instance_with(&Policy::ResidentAuto, &ranking, Some(&set));
    // One expert's gate/up and down weights, each spread evenly over the 1,472 cores.
    let share = share_per_core(2048 * 2 * 1024 * 2, 1472) + share_per_core(1024 * 2048 * 2, 1472);
    assert_eq!(si.expert_share(), share);
    assert_eq!(si.reserved_bytes(&set), 2 * share);
    assert_eq!(kept.sram_bytes.0, plain.sram_bytes.0 - 2 * share);
    let mut seen = [0; 2];
    // The operators with the expert's weights (an activation's small load stays).
    let weights = |j: usize| {
        let name = &plain.ops[j].name;
        name.ends_with(".gate_up") || name.ends_with(".down")
    };
    for (j, slot) in si.slots().iter().enumerate() {
        match *slot {
            Slot::Expert { expert: 3, .. } if weights(j) => {
                seen[0] += 1;
                assert!(!kept.is_load(OpId(j)), "{}", kept.ops[j].name);
                let (a, b) = (&plain.ops[j].options[0], &kept.ops[j].options[0]);
                assert!(b.hot.0 < a.hot.0 && b.exec_cycles == a.exec_cycles);
            }
            Slot::Idle { expert: 40, .. } => {
                seen[1] += 1;
                assert!(plain.is_load(OpId(j)) && !kept.is_load(OpId(j)));
            }
            // Every other expert keeps its load under the rest's policy (load-all).
            Slot::Expert { .. } | Slot::Idle { .. } => {
                assert_eq!(plain.is_load(OpId(j)), kept.is_load(OpId(j)));
            }
            _ => {}
        }
    }
    assert_eq!(seen, [2, 2], "two weight operators of each resident expert");
    assert_eq!(
        si.experts_loaded(&Policy::ResidentAuto, &ranking, Some(&set)),
        62
    );
    assert_eq!(si.experts_loaded(&Policy::LoadAll, &ranking, None), 64);
}

#[test]
fn the_oracle_stays_below_resident_policies_on_every_step() {
    let s = spec(
        "olmoe-1b-7b",
        2,
        4,
        Routing::Zipf { s: 1.2 },
        &["on-demand", "resident-40", "resident-auto", "oracle"],
    );
    let r = run(zoo::find("olmoe-1b-7b").unwrap(), &s, &|_| {}).unwrap();
    assert_eq!(r.resident.len(), 2);
    assert_eq!(r.resident[0].experts, 40);
    assert_eq!(r.resident[0].rest, "on-demand");
    for st in &r.steps {
        let oracle = st.policies.last().unwrap();
        assert!(st.bound_ms <= oracle.makespan_ms * (1.0 + 1e-9), "{st:?}");
        for p in &st.policies {
            assert!(
                oracle.makespan_ms <= p.makespan_ms * (1.0 + 1e-12),
                "step {}: oracle {} above {} {}",
                st.index,
                oracle.makespan_ms,
                p.policy,
                p.makespan_ms
            );
        }
        // A resident expert is never loaded: resident-40 loads fewer experts than on-demand
        // whenever one of its 40 has tokens.
        assert!(st.policies[1].loaded_experts <= st.policies[0].loaded_experts);
    }
}

#[test]
fn resident_auto_is_never_worse_than_load_all_or_on_demand_on_its_routing() {
    // The balanced routing is the same every step: the calibration steps are the run's.
    for (model, batch) in [("mixtral-8x7b", 1), ("olmoe-1b-7b", 4)] {
        let s = spec(
            model,
            2,
            batch,
            Routing::Balanced,
            &["load-all", "on-demand", "resident-auto", "oracle"],
        );
        let r = run(zoo::find(model).unwrap(), &s, &|_| {}).unwrap();
        let mean = |i: usize| r.summary[i].mean_ms;
        assert!(
            mean(2) <= mean(0).min(mean(1)) * (1.0 + 1e-12),
            "{model}: resident-auto {} vs load-all {} and on-demand {}",
            mean(2),
            mean(0),
            mean(1)
        );
        let chosen = &r.resident[0];
        let c = chosen.calibration.as_ref().unwrap();
        assert_eq!(c.steps, 1);
        // Its candidates with no expert resident are load-all and on-demand themselves.
        let zero = |rest: &str| {
            c.candidates
                .iter()
                .find(|k| k.rest == rest && k.experts == 0)
                .and_then(|k| k.mean_ms)
                .unwrap()
        };
        assert!((zero("load-all") - mean(0)).abs() < 1e-9, "{model}");
        assert!((zero("on-demand") - mean(1)).abs() < 1e-9, "{model}");
        assert!(chosen.experts <= c.max_experts);
    }
}

#[test]
fn too_many_resident_experts_are_refused_naming_how_many_fit() {
    let model = zoo::find("mixtral-8x7b").unwrap();
    let s = spec(
        model.name.as_str(),
        2,
        1,
        Routing::Uniform,
        &["resident-15"],
    );
    let e = run(model, &s, &|_| {}).unwrap_err().to_string();
    assert!(
        e.starts_with("policy 'resident-15': 15 resident experts reserve "),
        "{e}"
    );
    assert!(e.contains("at most "), "{e}");
    let s = spec(
        model.name.as_str(),
        2,
        1,
        Routing::Uniform,
        &["resident-17"],
    );
    let e = run(model, &s, &|_| {}).unwrap_err().to_string();
    assert!(
        e.contains("the run has 16 routed experts (2 layers × 8)"),
        "{e}"
    );
}

#[test]
fn resident_policies_parse_and_refuse_what_they_cannot_be() {
    assert_eq!(
        Policy::parse("resident-auto").unwrap(),
        Policy::ResidentAuto
    );
    assert_eq!(
        Policy::parse("resident-12").unwrap(),
        Policy::ResidentTop(12)
    );
    assert_eq!(Policy::ResidentTop(12).name(), "resident-12");
    for bad in ["resident-0", "resident-", "resident-x"] {
        let e = Policy::parse(bad).unwrap_err().to_string();
        assert!(e.contains("resident-N (N ≥ 1"), "{e}");
    }
    let mut s = spec("olmoe-1b-7b", 1, 1, Routing::Uniform, &["resident-auto"]);
    s.opts.parallel = true;
    let inputs = elk_app::moe::MoeInputs {
        params: s.params,
        chip: s.chip,
        opts: s.opts,
        routing: "uniform".into(),
        steps: 1,
        seed: 1,
        policies: vec!["resident-auto".into()],
        methods: vec!["elk-dyn".into()],
    };
    let moe = *zoo::find("olmoe-1b-7b").unwrap().moe().unwrap();
    let e = MoeSpec::new(&moe, inputs).unwrap_err().to_string();
    assert!(
        e.contains("resident experts with --expert-parallel are not modelled"),
        "{e}"
    );
}
