//! MoE load policies: the oracle is never above a policy and its bound never above the
//! oracle, on every sampled step; expert bytes follow the routing; the distinct experts per
//! layer under uniform routing agree with E·(1 − (1 − k/E)^n); a release is real.

use elk_app::moe::{run, MoeSpec};
use elk_model::build::InstanceOptions;
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::load_policy::{Policy, Slot, StepInstances};
use elk_model::routing::Routing;
use elk_model::zoo::{self, ZooParams};
use elk_stage::units::OpId;

fn spec(layers: usize, batch: u64, routing: Routing, steps: usize) -> MoeSpec {
    let mut params = ZooParams::new(Mode::Decode, batch, 256);
    params.layers = Some(layers);
    MoeSpec {
        params,
        chip: ChipSpec::preset("ipu-mk2").unwrap(),
        opts: InstanceOptions::default(),
        routing,
        steps,
        seed: 7,
        policies: vec![
            Policy::LoadAll,
            Policy::OnDemand,
            Policy::Predicted(2),
            Policy::Oracle,
        ],
        methods: vec!["elk-dyn".into(), "basic".into()],
    }
}

#[test]
fn the_oracle_is_below_every_policy_and_above_its_bound_on_every_step() {
    let model = zoo::find("mixtral-8x7b").unwrap();
    for routing in [Routing::Uniform, Routing::Zipf { s: 1.5 }] {
        let s = spec(2, 3, routing.clone(), 12);
        let r = run(model, &s, &|_| {}).unwrap();
        assert_eq!(r.steps.len(), 12);
        let expert = 3 * 4096 * 14336 * 2u64;
        for st in &r.steps {
            let oracle = st.policies.last().unwrap();
            assert_eq!(oracle.policy, "oracle");
            assert!(
                st.bound_ms <= oracle.makespan_ms * (1.0 + 1e-9),
                "{routing:?} {st:?}"
            );
            for p in &st.policies {
                assert!(
                    oracle.makespan_ms <= p.makespan_ms * (1.0 + 1e-12),
                    "{routing:?} step {}: oracle {} above {} {}",
                    st.index,
                    oracle.makespan_ms,
                    p.policy,
                    p.makespan_ms
                );
                assert_eq!(p.expert_bytes, p.loaded_experts as u64 * expert);
            }
            // Load-all loads every expert of both layers; on-demand and the oracle exactly
            // those with tokens; predicted-2 those plus its predicted idle ones.
            assert_eq!(st.policies[0].loaded_experts, 16);
            assert_eq!(st.policies[1].loaded_experts, st.touched_experts);
            assert_eq!(oracle.loaded_experts, st.touched_experts);
            assert!(st.policies[2].loaded_experts >= st.touched_experts);
            assert!(st.policies[2].loaded_experts <= st.touched_experts + 4);
        }
    }
}

#[test]
fn distinct_experts_follow_the_closed_form_under_uniform_routing() {
    // E = 64, k = 8, n = 6 tokens: E·(1 − (1 − k/E)^n) = 35.28 experts per layer; the sample
    // mean of 8 layers × 40 steps is within 4 standard errors of it.
    let moe = *zoo::find("olmoe-1b-7b").unwrap().moe().unwrap();
    let (layers, steps, n) = (8usize, 40u64, 6u64);
    let mut per_layer = Vec::new();
    for step in 0..steps {
        let r = Routing::Uniform.sample(&moe, layers, n, 11, step).unwrap();
        let c = r.counts(moe.experts);
        for l in 0..layers {
            per_layer.push(c.layer(l).iter().filter(|&&x| x > 0).count() as f64);
        }
    }
    let m = per_layer.iter().sum::<f64>() / per_layer.len() as f64;
    let var = per_layer.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (per_layer.len() - 1) as f64;
    let se = (var / per_layer.len() as f64).sqrt();
    let want = 64.0 * (1.0 - (1.0f64 - 8.0 / 64.0).powi(6));
    assert!((m - want).abs() < 4.0 * se, "{m} vs {want} (se {se})");
    assert!((want - 35.277).abs() < 0.001, "{want}");
}

#[test]
fn on_demand_loads_wait_for_their_router_and_idle_experts_load_only_under_load_all() {
    let model = zoo::find("mixtral-8x7b").unwrap();
    let mut params = ZooParams::new(Mode::Decode, 1, 256);
    params.layers = Some(1);
    let moe = *model.moe().unwrap();
    let counts = Routing::Balanced
        .sample(&moe, 1, 1, 0, 0)
        .unwrap()
        .counts(8);
    let chip = ChipSpec::preset("ipu-mk2").unwrap();
    let memo = elk_model::build::InstanceMemo::new(&chip, &InstanceOptions::default());
    let si = StepInstances::build(model, &params, &counts, &memo).unwrap();
    let ranking = vec![Routing::Balanced.ranking(&moe, 0)];
    let wait = si
        .slots()
        .iter()
        .position(|s| matches!(s, Slot::Wait { .. }))
        .unwrap();
    let on_demand = si.instance(&Policy::OnDemand, &ranking);
    let load_all = si.instance(&Policy::LoadAll, &ranking);
    let oracle = si.instance(&Policy::Oracle, &ranking);
    let mut idle = 0;
    for (j, slot) in si.slots().iter().enumerate() {
        match slot {
            Slot::Expert { .. } if on_demand.is_load(OpId(j)) => {
                // The wait operator runs in stage wait + 1: the first stage after the router.
                assert_eq!(on_demand.window_start(OpId(j)).index(), wait + 1);
                assert_eq!(oracle.window_start(OpId(j)).index(), 0);
            }
            Slot::Idle { .. } => {
                idle += 1;
                assert!(load_all.is_load(OpId(j)));
                assert!(!oracle.is_load(OpId(j)) && !on_demand.is_load(OpId(j)));
                assert_eq!(load_all.ops[j].options[0].exec_cycles.get(), 0.0);
            }
            _ => {}
        }
    }
    // Balanced routing of one token: experts 0 and 1 have it, 6 experts × 2 weights idle.
    assert_eq!(idle, 12);
    assert_eq!(si.touched(), 2);
}

#[test]
fn a_grid_with_routings_runs_the_policies_per_cell() {
    use elk_app::grid::Grid;
    let text = r#"figure = "vs-hbm"
models = ["mixtral-8x7b"]
batches = [2]
kvs = [128]
chips = ["ipu-mk2"]
hbm_tbps = [4.0, 8.0]
methods = ["elk-dyn"]
routings = ["uniform", "zipf:1.5"]
moe_steps = 3
"#;
    let grid = Grid::from_toml("g.toml", text).unwrap();
    let cells = grid.cells();
    assert_eq!(cells.len(), 4);
    assert_eq!(cells[1].routing.as_deref(), Some("zipf:1.5"));
    assert!(cells[0].key().ends_with("|routing uniform"));
    let moe = elk_app::cell::MoeCell {
        steps: 3,
        policies: vec!["on-demand".into()],
    };
    let chip = ChipSpec::preset("ipu-mk2").unwrap();
    let model = zoo::find("mixtral-8x7b").unwrap();
    let run = |bound| {
        let how = elk_app::cell::CellRun {
            methods: grid.methods.clone(),
            bound,
            moe: moe.clone(),
            plan_cache: None,
        };
        elk_app::cell::run_cell_with("vs-hbm", &cells[0], model, chip.clone(), &how)
    };
    let r = run(false);
    assert_eq!(r.error, None);
    let names: Vec<&str> = r.methods.iter().map(|m| m.method.as_str()).collect();
    assert_eq!(
        names,
        ["on-demand", "oracle"],
        "policies only, the oracle added"
    );
    assert_eq!(r.ideal_ms, None);
    let (d, o) = (&r.methods[0], &r.methods[1]);
    assert!(o.makespan_ms.unwrap() <= d.makespan_ms.unwrap());
    // Without `bound = true` no bound and no gaps, as in a dense cell.
    assert!(r.bound.is_none() && d.gap_le_pct.is_none());
    // The spread over the steps: p50 ≤ p99; with 3 steps p99 is the slowest, so no mean is
    // above it.
    for m in &r.methods {
        assert!(m.p50_ms.unwrap() <= m.p99_ms.unwrap(), "{m:?}");
        assert!(
            m.makespan_ms.unwrap() <= m.p99_ms.unwrap() * (1.0 + 1e-12),
            "{m:?}"
        );
    }
    // A cell without a routing keeps its old key and runs the methods.
    let plain = Grid::from_toml(
        "g.toml",
        &text.replace(
            "routings = [\"uniform\", \"zipf:1.5\"]\nmoe_steps = 3\n",
            "",
        ),
    )
    .unwrap();
    assert!(
        plain.cells()[0].key().ends_with("|coresNone"),
        "{}",
        plain.cells()[0].key()
    );
}

#[test]
fn grid_moe_keys_are_checked() {
    use elk_app::grid::Grid;
    let base = "figure = \"bars\"\nmodels = [\"MODEL\"]\nbatches = [2]\nkvs = [128]\n";
    let err = |model: &str, extra: &str| {
        Grid::from_toml(
            "g.toml",
            &format!("{}{extra}", base.replace("MODEL", model)),
        )
        .unwrap_err()
        .to_string()
    };
    let e = err("llama2-7b", "routings = [\"uniform\"]\n");
    assert!(e.contains("entry 'llama2-7b' has no experts"), "{e}");
    let e = err("mixtral-8x7b", "routings = [\"skewed\"]\n");
    assert!(e.contains("key 'routings': entry 'skewed'"), "{e}");
    let e = err("mixtral-8x7b", "policies = [\"on-demand\"]\n");
    assert!(e.contains("key 'policies': applies to MoE cells"), "{e}");
    let e = err(
        "mixtral-8x7b",
        "routings = [\"uniform\"]\nnoc_scale = [2.0]\n",
    );
    assert!(e.contains("not with `routings`"), "{e}");
}

/// A hybrid that predicts every expert is load-all: the grid refuses it before any cell
/// runs, naming the model (issue 45: bad input fails before any cell).
#[test]
fn a_grid_refuses_a_prediction_of_every_expert_before_any_cell() {
    let grid = |policy: &str| {
        elk_app::grid::Grid::from_toml(
            "g.toml",
            &format!(
                "figure = \"vs-hbm\"\nmodels = [\"mixtral-8x7b\"]\nbatches = [2]\nkvs = [128]\n\
                 routings = [\"uniform\"]\npolicies = [\"{policy}\"]\n"
            ),
        )
    };
    let err = grid("predicted-8").unwrap_err().to_string();
    assert!(
        err.contains("g.toml") && err.contains("'policies'") && err.contains("mixtral-8x7b"),
        "{err}"
    );
    assert!(err.contains("give predicted-M with M < 8"), "{err}");
    assert!(grid("predicted-7").is_ok());
}

#[test]
fn with_parallel_sets_the_experts_with_tokens_run_side_by_side_and_idle_ones_stay_out() {
    let model = zoo::find("mixtral-8x7b").unwrap();
    let mut params = ZooParams::new(Mode::Decode, 3, 256);
    params.layers = Some(1);
    let moe = *model.moe().unwrap();
    // Three tokens, top-2: between two and six experts have tokens, the rest are idle.
    let counts = Routing::Zipf { s: 1.5 }
        .sample(&moe, 1, 3, 5, 0)
        .unwrap()
        .counts(8);
    let touched: Vec<usize> = (0..8).filter(|&e| counts.layer(0)[e] > 0).collect();
    assert!(touched.len() >= 2 && touched.len() < 8, "{touched:?}");
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let opts = InstanceOptions {
        parallel: true,
        ..InstanceOptions::default()
    };
    let memo = elk_model::build::InstanceMemo::new(&chip, &opts);
    let si = StepInstances::build(model, &params, &counts, &memo).unwrap();
    let ranking = vec![Routing::Zipf { s: 1.5 }.ranking(&moe, 0)];
    let on_demand = si.instance(&Policy::OnDemand, &ranking);
    let oracle = si.instance(&Policy::Oracle, &ranking);
    assert_eq!(on_demand.format, "elk-instance/2");
    assert!(
        on_demand.name.contains(", expert-parallel, policy"),
        "{}",
        on_demand.name
    );
    let wait = si
        .slots()
        .iter()
        .position(|s| matches!(s, Slot::Wait { .. }))
        .unwrap();
    // The experts in sets: exactly those with tokens, each in one set (each graph
    // operator's expert, from the step's graph).
    let graph = model.build_routed(&params, Some(&counts)).unwrap();
    let expert_of: std::collections::HashMap<&str, usize> = graph
        .ops
        .iter()
        .filter_map(|o| o.expert().map(|(_, e)| (o.name.as_str(), e)))
        .collect();
    let mut in_sets = Vec::new();
    for (j, slot) in si.slots().iter().enumerate() {
        let Slot::Set { .. } = slot else { continue };
        let experts: Vec<usize> = on_demand.ops[j]
            .graph_ops()
            .iter()
            .filter_map(|n| expert_of.get(n).copied())
            .collect();
        if experts.is_empty() {
            continue;
        }
        in_sets.extend(experts);
        // Its load waits for the router on demand, not for the oracle.
        assert!(on_demand.is_load(OpId(j)));
        assert_eq!(on_demand.window_start(OpId(j)).index(), wait + 1);
        assert_eq!(oracle.window_start(OpId(j)).index(), 0);
    }
    in_sets.sort();
    in_sets.dedup();
    assert_eq!(in_sets, touched);
    // Idle experts are operators of their own, loaded by load-all only.
    let load_all = si.instance(&Policy::LoadAll, &ranking);
    let idle = si
        .slots()
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Slot::Idle { .. }))
        .map(|(j, _)| j)
        .collect::<Vec<_>>();
    assert_eq!(idle.len(), 2 * (8 - touched.len()));
    for j in idle {
        assert!(load_all.ops[j].parallel.is_none());
        assert!(load_all.is_load(OpId(j)) && !oracle.is_load(OpId(j)));
    }
}

#[test]
fn a_run_with_parallel_sets_reports_both_and_keeps_the_oracle_below_each_policy() {
    // ipu-pod4: faster with sets; ipu-mk2 at batch 1: two experts do not fit side by side
    // beside load-all's resident ones, so there policies keep their schedules without sets.
    let model = zoo::find("mixtral-8x7b").unwrap();
    let mut s = spec(2, 8, Routing::Uniform, 3);
    s.chip = ChipSpec::preset("ipu-pod4").unwrap();
    s.opts.parallel = true;
    let r = run(model, &s, &|_| {}).unwrap();
    let with = r.expert_parallel.as_ref().expect("the run with sets");
    assert!(with.expert_parallel.is_none());
    for report in [&r, with.as_ref()] {
        for st in &report.steps {
            let oracle = st.policies.last().unwrap();
            assert!(st.bound_ms <= oracle.makespan_ms * (1.0 + 1e-9), "{st:?}");
            for p in &st.policies {
                assert!(
                    oracle.makespan_ms <= p.makespan_ms * (1.0 + 1e-12),
                    "{st:?}"
                );
            }
        }
    }
    // The same steps: the same experts with tokens and bytes loaded, other makespans.
    for (a, b) in r.steps.iter().zip(&with.steps) {
        assert_eq!(a.touched_experts, b.touched_experts);
        for (p, q) in a.policies.iter().zip(&b.policies) {
            assert_eq!((&p.policy, p.expert_bytes), (&q.policy, q.expert_bytes));
            // Each policy keeps the faster of its two schedules: never slower with sets.
            assert!(q.makespan_ms <= p.makespan_ms, "{p:?} {q:?}");
        }
        assert!(b.bound_ms <= a.bound_ms);
    }
    assert_ne!(r.summary[0].mean_ms, with.summary[0].mean_ms);
    let mut s = spec(2, 1, Routing::Uniform, 2);
    s.opts.parallel = true;
    let r = run(model, &s, &|_| {}).unwrap();
    let with = r.expert_parallel.as_ref().unwrap();
    assert!(
        with.steps[0].policies[0].method.ends_with(" without sets"),
        "{:?}",
        with.steps[0]
    );
}

#[test]
fn a_routed_grid_cell_with_expert_parallel_is_the_union_and_never_slower() {
    use elk_app::grid::Grid;
    let text = r#"figure = "bars"
models = ["mixtral-8x7b"]
batches = [8]
kvs = [128]
chips = ["ipu-pod4"]
methods = ["elk-dyn"]
routings = ["uniform"]
expert_parallel = [false, true]
moe_steps = 2
"#;
    let grid = Grid::from_toml("g.toml", text).unwrap();
    let cells = grid.cells();
    assert_eq!(cells.len(), 2);
    assert!(!cells[0].expert_parallel && cells[1].expert_parallel);
    let moe = elk_app::cell::MoeCell {
        steps: 2,
        policies: vec!["on-demand".into()],
    };
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let model = zoo::find("mixtral-8x7b").unwrap();
    let how = elk_app::cell::CellRun {
        methods: grid.methods.clone(),
        bound: true,
        moe,
        plan_cache: None,
    };
    let run = |cell| elk_app::cell::run_cell_with("bars", cell, model, chip.clone(), &how);
    let (plain, sets) = (run(&cells[0]), run(&cells[1]));
    assert_eq!((plain.error.clone(), sets.error.clone()), (None, None));
    let bound = sets.bound.as_ref().unwrap().bound_ms;
    assert!(bound <= plain.bound.as_ref().unwrap().bound_ms);
    for (a, b) in plain.methods.iter().zip(&sets.methods) {
        assert_eq!(a.method, b.method);
        assert!(a.parallel_sets.is_none(), "{a:?}");
        let (x, y) = (a.makespan_ms.unwrap(), b.makespan_ms.unwrap());
        assert!(y <= x && y >= bound, "{a:?} {b:?}");
        // Mixtral at batch 8 on ipu-pod4 is faster with its experts side by side.
        assert_eq!(b.parallel_sets, Some(true), "{b:?}");
    }
}
