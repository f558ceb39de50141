//! Plan skipping leaves every table as it was: each zoo model's tables (one layer, decode B32
//! KV2048, prefill for vision models; on ipu-pod4 and ipu-mk2) hash to the digests recorded
//! before skipping existed (`plan_digests.txt`). The tables include the plan counts, the
//! front, the cold sizes and every option with its cycles, so a plan wrongly skipped or a
//! record lost changes a digest. The zoo uses SPEC §3's rules; the second test covers the
//! reference rules on the artifact's own graphs.

use elk_model::chip::ChipSpec;
use elk_model::cost::for_chip;
use elk_model::graph::Mode;
use elk_model::import::{import_file, Compat, ImportOptions};
use elk_model::plan::plan_graph;
use elk_model::zoo::models;
use std::collections::BTreeMap;

fn recorded(text: &str) -> BTreeMap<(String, String), String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 3, "plan_digests.txt: bad line {l:?}");
            ((f[0].to_string(), f[1].to_string()), f[2].to_string())
        })
        .collect()
}

#[test]
fn every_zoo_table_is_as_before_plan_skipping() {
    let recorded = recorded(include_str!("plan_digests.txt"));
    let mut checked = 0;
    let mut skipped = 0;
    for chip_name in ["ipu-pod4", "ipu-mk2"] {
        let chip = ChipSpec::preset(chip_name).unwrap();
        for model in models() {
            let graph = model.one_layer().unwrap();
            let key = (chip_name.to_string(), model.name.clone());
            let Some(want) = recorded.get(&key) else {
                panic!(
                    "{chip_name} {}: no recorded digest; add the plan_digest line to plan_digests.txt",
                    model.name
                );
            };
            let got = match plan_graph(&graph, &chip, for_chip(&chip).as_ref()) {
                Ok(p) => {
                    skipped += p.enumeration.skipped;
                    p.tables_digest()
                        .trim_start_matches(elk_stage::hash::PREFIX)
                        .to_string()
                }
                Err(_) => "-".to_string(),
            };
            assert_eq!(&got, want, "{chip_name} {}: tables changed", model.name);
            checked += 1;
        }
    }
    assert_eq!(checked, recorded.len(), "a recorded model left the zoo");
    // The check means something only if plans were in fact skipped.
    assert!(skipped > 0, "no plan was skipped");
}

/// The reference artifact's rules keep superseded front plans (the zoo's SPEC rules do not):
/// its own graphs, imported as it reads them, plan to the tables recorded before skipping.
#[test]
fn every_reference_graph_table_is_as_before_plan_skipping() {
    let recorded = recorded(include_str!("plan_digests_reference.txt"));
    let models = crate::fixtures::fixtures().join("models");
    for ((chip_name, model), want) in &recorded {
        let chip = ChipSpec::preset(chip_name).unwrap();
        let mut opts = ImportOptions::new(Mode::Decode, 8, 512);
        opts.compat = Compat::Reference;
        let graph = import_file(&models.join(format!("{model}.json")), &opts).unwrap();
        assert!(graph.plan_rules.superseded_front_plans, "{model}");
        let got = match plan_graph(&graph, &chip, for_chip(&chip).as_ref()) {
            Ok(p) => p
                .tables_digest()
                .trim_start_matches(elk_stage::hash::PREFIX)
                .to_string(),
            Err(_) => "-".to_string(),
        };
        assert_eq!(&got, want, "{chip_name} {model}: tables changed");
    }
    assert_eq!(recorded.len(), 24);
}
