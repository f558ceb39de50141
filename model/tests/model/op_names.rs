//! Operator names are unique in every generated graph, and every input's producer runs before
//! its consumer: traces, `plans --op`, the load policies and a DataFrame's groupby key
//! operators by name, and the producer links are made by name (`link_producers`), so a name
//! given twice links a consumer to the wrong operator. Qwen2-MoE's shared-expert gate once
//! shared its name with the gated FFN's gate slice (the review's ux-3 #12): the slice's
//! consumers were linked to the sigmoid gate's matmul, which runs after them.

use elk_model::graph::{Graph, Mode};
use elk_model::zoo::{self, hf, ExpertTokens, ZooModel, ZooParams};
use std::collections::BTreeMap;

/// The names used more than once, and the inputs whose producer does not run before them.
fn faults(g: &Graph) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for op in &g.ops {
        *seen.entry(op.name.as_str()).or_default() += 1;
    }
    let mut out: Vec<String> = seen
        .iter()
        .filter(|(_, &n)| n > 1)
        .map(|(name, n)| format!("{}: {name} names {n} operators", g.name))
        .collect();
    for (i, op) in g.ops.iter().enumerate() {
        for t in op.inputs() {
            if t.producer.is_some_and(|p| p >= i) {
                out.push(format!(
                    "{}: {} reads {} from operator {:?}, which does not run before it",
                    g.name, op.name, t.source, t.producer
                ));
            }
        }
    }
    out
}

/// Every mode the model builds in, two layers (names repeat per layer, not across).
fn graphs(m: &ZooModel) -> Vec<Graph> {
    let modes: &[Mode] = if m.supports_decode() {
        &[Mode::Decode, Mode::Prefill, Mode::Training]
    } else {
        &[Mode::Prefill, Mode::Training]
    };
    modes
        .iter()
        .map(|&mode| {
            let mut p = ZooParams::new(mode, 2, 16);
            p.layers = Some(2);
            m.build(&p).unwrap()
        })
        .collect()
}

/// Every zoo model, every Hugging Face fixture and the example model files.
fn models() -> Vec<ZooModel> {
    let mut out: Vec<ZooModel> = zoo::models().to_vec();
    let dir = format!("{}/tests/fixtures/hf", env!("CARGO_MANIFEST_DIR"));
    let mut fixtures: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.join("config.json"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 7, "{fixtures:?}");
    for path in fixtures {
        let text = std::fs::read_to_string(&path).unwrap();
        out.push(hf::read(&path.display().to_string(), &text).unwrap().model);
    }
    out.extend(super::example_models::all());
    out
}

#[test]
fn every_operator_name_is_unique_and_produced_before_it_is_read() {
    let mut faults_found = Vec::new();
    let mut checked = 0;
    for m in models() {
        for g in graphs(&m) {
            faults_found.extend(faults(&g));
            checked += 1;
        }
    }
    assert!(checked >= 3 * 26, "{checked} graphs");
    assert!(faults_found.is_empty(), "{}", faults_found.join("\n"));
}

#[test]
fn the_load_policies_graphs_have_unique_names_too() {
    // A step's graph in which every expert has tokens (the policies' slot graph, whose idle
    // experts get a phantom token) and one in which a single expert has them all.
    for name in ["mixtral-8x7b", "qwen3-30b-a3b", "olmoe-1b-7b"] {
        let m = zoo::find(name).unwrap();
        let moe = m.moe().unwrap();
        let mut p = ZooParams::new(Mode::Decode, moe.experts, 64);
        p.layers = Some(2);
        let every = ExpertTokens::new(vec![vec![moe.top_k; moe.experts as usize]; 2]);
        let g = m.build_routed(&p, Some(&every)).unwrap();
        assert_eq!(faults(&g), Vec::<String>::new());
        p.batch = 1;
        let mut one = vec![0; moe.experts as usize];
        one[..moe.top_k as usize].fill(1);
        let g = m
            .build_routed(&p, Some(&ExpertTokens::new(vec![one; 2])))
            .unwrap();
        assert_eq!(faults(&g), Vec::<String>::new());
    }
}

#[test]
fn parallel_sets_keep_every_operator_once_and_every_dependence() {
    // docs/core-groups.md §CG-1 on every graph above: the steps hold each operator once,
    // after everything it depends on, and no member of a set depends on another member.
    use elk_model::parallel::{dependences, steps, Step};
    let (mut graphs_checked, mut sets) = (0, 0);
    for m in models() {
        for g in graphs(&m) {
            let deps = dependences(&g);
            let work: Vec<f64> = g.ops.iter().map(|o| o.flops().0 as f64 + 1.0).collect();
            let mut done = vec![false; g.ops.len()];
            for step in steps(&deps, &work) {
                let members = match step {
                    Step::Op(i) => vec![vec![i]],
                    Step::Set(members) => {
                        sets += 1;
                        assert!(members.len() >= 2, "{}", g.name);
                        members
                    }
                };
                let member_of = |o: usize| members.iter().position(|m| m.contains(&o));
                for (k, member) in members.iter().enumerate() {
                    for &o in member {
                        for &d in &deps[o] {
                            let same = member_of(d) == Some(k);
                            assert!(
                                done[d] || same,
                                "{}: {} runs before {} or beside it",
                                g.name,
                                g.ops[o].name,
                                g.ops[d].name
                            );
                        }
                    }
                }
                for o in members.into_iter().flatten() {
                    assert!(!done[o], "{}: {} twice", g.name, g.ops[o].name);
                    done[o] = true;
                }
            }
            assert!(
                done.iter().all(|&d| d),
                "{}: an operator is missing",
                g.name
            );
            graphs_checked += 1;
        }
    }
    assert!(
        graphs_checked >= 3 * 26 && sets > 0,
        "{graphs_checked} graphs, {sets} sets"
    );
}

#[test]
fn readers_of_a_free_gradient_concat_wait_for_its_parts() {
    // No operator produces `{value}.grad` when it is the concat of slices' gradients: its
    // readers must wait for the parts (`after`), or parallel sets would run them early.
    let mut readers = 0;
    for m in models() {
        let mut p = ZooParams::new(Mode::Training, 2, 16);
        p.layers = Some(2);
        let Ok(g) = m.build(&p) else { continue };
        let index = g.producers_by_source();
        for (i, op) in g.ops.iter().enumerate() {
            let free = op
                .inputs()
                .iter()
                .any(|t| t.source.ends_with(".grad") && !index.contains_key(t.source.as_str()));
            if !free {
                continue;
            }
            readers += 1;
            assert!(
                !op.after.is_empty(),
                "{}: {} waits for nothing",
                g.name,
                op.name
            );
            for w in &op.after {
                let p = index.get(w.as_str());
                assert!(
                    p.is_some_and(|&p| p < i),
                    "{}: {} waits for {w}",
                    g.name,
                    op.name
                );
            }
        }
    }
    assert!(readers > 0, "no free gradient concat in any training graph");
}
