//! Plan skipping leaves every table as it was: each zoo model's tables (one layer, decode B32
//! KV2048, prefill for vision models; on ipu-pod4 and ipu-mk2) hash to the digests recorded
//! before skipping existed (`plan_digests.txt`). The tables include the plan counts, the
//! front, the cold sizes and every option with its cycles, so a plan wrongly skipped or a
//! record lost changes a digest.

use elk_model::chip::ChipSpec;
use elk_model::cost::for_chip;
use elk_model::plan::plan_graph;
use elk_model::zoo::models;
use std::collections::BTreeMap;

fn recorded() -> BTreeMap<(String, String), String> {
    include_str!("plan_digests.txt")
        .lines()
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
    let recorded = recorded();
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
