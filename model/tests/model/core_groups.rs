//! Operators on groups of cores (clean rules) and gathers that hold the rows they read:
//! docs/plans.md, "Core groups" and "Gathers".

use elk_model::chip::ChipSpec;
use elk_model::cost::for_chip;
use elk_model::graph::{Graph, Mode};
use elk_model::plan::{plan_graph, PlanRules, PlanTable};
use elk_model::zoo::{ZooModel, ZooParams};
use elk_model::ModelError;

fn one_layer(model: &str, batch: u64, rules: PlanRules) -> Graph {
    let mut params = ZooParams::new(Mode::Decode, batch, 2048);
    params.layers = Some(1);
    let mut g = ZooModel::load(model).unwrap().build(&params).unwrap();
    g.plan_rules = rules;
    g
}

/// `g` with only the operators named (planning is per operator shape).
fn only(mut g: Graph, names: &[&str]) -> Graph {
    g.ops.retain(|o| names.contains(&o.name.as_str()));
    assert_eq!(g.ops.len(), names.len());
    g
}

fn table_of<'a>(g: &Graph, plans: &'a elk_model::plan::GraphPlans, name: &str) -> &'a PlanTable {
    let i = g.ops.iter().position(|o| o.name == name).unwrap();
    plans.table(i)
}

/// The whole chip's rules without the artifact's other departures: what core groups alone
/// change.
fn whole_chip() -> PlanRules {
    PlanRules {
        whole_chip_only: true,
        ..PlanRules::SPEC
    }
}

/// Mistral-7B's RMSNorm sum of squares at batch 1 ([1, 4096] → [1]) on ipu-pod4: on the
/// whole chip it needs ≥ 1,367 cores and 203k cycles to gather their partial sums; on a
/// group it is two orders of magnitude faster, and the group is named on the option.
#[test]
fn a_batch_1_norm_reduction_runs_on_a_small_group() {
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let cost = for_chip(&chip);
    let name = "l0.attn.norm.sqsum";
    let ops = [name, "l0.ffn.gate_up"];
    let g = only(one_layer("mistral-7b", 1, PlanRules::SPEC), &ops);
    let grouped = plan_graph(&g, &chip, cost.as_ref()).unwrap();
    let t = table_of(&g, &grouped, name);
    let w = only(one_layer("mistral-7b", 1, whole_chip()), &ops);
    let whole = plan_graph(&w, &chip, cost.as_ref()).unwrap();
    let tw = table_of(&w, &whole, name);
    assert!(tw.options.iter().all(|o| o.cores.is_none()));
    assert!(tw.best_exec() > 200_000.0, "whole chip: {}", tw.best_exec());
    assert!(
        t.best_exec() < tw.best_exec() / 50.0,
        "groups: {}",
        t.best_exec()
    );
    let fastest = t
        .options
        .iter()
        .min_by(|a, b| a.exec().total_cmp(&b.exec()))
        .unwrap();
    let cores = fastest.cores.expect("the fastest option runs on a group");
    assert!(cores < 64, "{cores} cores");
    // Every option of the group's table: a group of the ladder, below the chip.
    let ladder = elk_model::plan::spatial::groups(chip.cores);
    for o in t.options.iter() {
        if let Some(c) = o.cores {
            assert!(ladder.contains(&c) && c < chip.cores, "{c}");
        }
    }
    // Operators that gain nothing keep the whole chip's table: the big MatMuls.
    assert_eq!(
        table_of(&g, &grouped, "l0.ffn.gate_up").options,
        table_of(&w, &whole, "l0.ffn.gate_up").options
    );
}

/// HBM bytes are the fewest any layout holds over the cores it runs on, and ρ = cold · N / H
/// is ≥ 1 and, with every option on the whole chip, cold / c_min exactly.
#[test]
fn hbm_bytes_and_broadcast_ratios_count_the_group() {
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let cost = for_chip(&chip);
    let mut checked_groups = 0;
    for batch in [1, 32] {
        let g = one_layer("qwen3-30b-a3b", batch, PlanRules::SPEC);
        let plans = plan_graph(&g, &chip, cost.as_ref()).unwrap();
        for (_, first, t) in &plans.unique {
            let h = t.hbm_bytes(chip.cores);
            // Every layout holds all of the operator's HBM data over its cores: no fewer bytes
            // than the data (a fact about the graph, not the formula).
            assert!(
                h >= g.ops[*first].hbm_bytes().0,
                "{}: {h} B",
                g.ops[*first].name
            );
            for o in &t.table {
                let cores = o.cores.unwrap_or(chip.cores);
                assert!(o.cold * cores >= h);
                if h > 0 {
                    assert!(o.rho >= 1.0, "ρ {}", o.rho);
                    assert_eq!(o.rho, (o.cold * chip.cores) as f64 / h as f64);
                    if t.table.iter().all(|e| e.cores.is_none()) {
                        assert_eq!(h, t.c_min * chip.cores);
                        assert_eq!(o.rho, o.cold as f64 / t.c_min as f64);
                    }
                } else {
                    assert_eq!(o.rho, 1.0);
                }
                checked_groups += usize::from(o.cores.is_some() && h > 0);
            }
        }
    }
    // The MoE router and the norms' weights give grouped options with HBM data.
    assert!(
        checked_groups > 0,
        "no grouped option with HBM data was checked"
    );
}

/// An embedding lookup plans the rows it reads: its cold tile over the chip holds about a
/// batch of rows, not the 262-MB table; the artifact's rules hold the table.
#[test]
fn a_gather_holds_only_the_rows_it_reads() {
    let chip = ChipSpec::preset("ipu-pod4").unwrap();
    let cost = for_chip(&chip);
    let name = "embed.tokens.gather";
    for batch in [1u64, 32] {
        let g = only(one_layer("mistral-7b", batch, PlanRules::SPEC), &[name]);
        let op = &g.ops[0];
        // The rows (fp16, 4,096 wide) and the token ids.
        let rows = batch * 4096 * 2;
        assert_eq!(op.hbm_bytes().0, rows + 2 * batch);
        let plans = plan_graph(&g, &chip, cost.as_ref()).unwrap();
        let h = table_of(&g, &plans, name).hbm_bytes(chip.cores);
        // Padding over 5,888 cores: at most 3 × the rows at batch 1 (4,096 elements on
        // 5,888 cores leaves cores idle), under 1.5 × at batch 32.
        assert!(
            h >= rows && h <= 3 * rows,
            "batch {batch}: {h} B for {rows} B of rows"
        );
        let mut table = g.clone();
        table.plan_rules.gather_holds_table = true;
        let plans = plan_graph(&table, &chip, cost.as_ref()).unwrap();
        let whole = table_of(&table, &plans, name).hbm_bytes(chip.cores);
        assert!(whole >= 32_000 * 4096 * 2, "table rules: {whole} B");
    }
}

/// An operator no plan fits names the tensor: Mistral-7B's gate/up weight (235 MB) on a chip
/// with 140 × 1.5 MiB of SRAM.
#[test]
fn no_plan_fits_names_the_tensor() {
    let chip = ChipSpec::preset("tt-blackhole-like").unwrap();
    let g = one_layer("mistral-7b", 1, PlanRules::SPEC);
    let err = plan_graph(&g, &chip, for_chip(&chip).as_ref()).unwrap_err();
    assert!(matches!(err, ModelError::NoPlanFits { .. }));
    let text = err.to_string();
    assert!(
        text.contains("l0.ffn.gate_up") && text.contains("HBM input 'l0.ffn.wgu' alone needs"),
        "{text}"
    );
    assert!(!text.contains('\n'));
}
