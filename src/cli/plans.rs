//! `elk-opt plans`: every operator's plan statistics, or one operator's option table.

use super::source::GraphSource;
use clap::Args;
use elk_model::plan::{plan_graph_cached, OptionEntry};
use serde::Serialize;
use std::time::Instant;

/// Which graph, which chip, which operator.
#[derive(Args, Debug)]
pub struct PlansArgs {
    #[command(flatten)]
    graph: GraphSource,
    /// Chip preset or TOML file.
    #[arg(long, default_value = super::chip_choice::DEFAULT_CHIP)]
    chip: String,
    /// Override the chip's HBM bandwidth, TB/s (decimal); the header shows it.
    #[arg(long, allow_negative_numbers = true)]
    hbm_tbps: Option<f64>,
    /// Print the full option table of this operator (name as in `models show`).
    #[arg(long)]
    op: Option<String>,
    /// Print the time spent (graph, plan tables).
    #[arg(long)]
    timings: bool,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct OpRow<'a> {
    index: usize,
    name: &'a str,
    kind: &'a str,
    plans: u64,
    spatial: usize,
    pareto: usize,
    table_entries: usize,
    options: usize,
    pruned: usize,
    c_min_bytes: u64,
    hbm_bytes: u64,
    min_hot_bytes: u64,
    best_exec_cycles: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    option_table: Option<Vec<OptionJson>>,
}

/// One option of `--op`'s table, with the unit of every number.
#[derive(Serialize)]
struct OptionJson {
    cold_bytes: u64,
    hot_bytes: u64,
    comp_cycles: f64,
    /// Communication, warm-up included.
    comm_cycles: f64,
    warm_up_cycles: f64,
    /// Broadcast ratio ρ = cold · cores / HBM bytes (dimensionless; cold / c_min when every
    /// option runs on the whole chip; 1 without HBM data).
    rho: f64,
    /// Cores it runs on: the chip's, or a smaller group's (clean rules, docs/plans.md).
    cores: u64,
}

impl OptionJson {
    fn new(o: &OptionEntry, chip_cores: u64) -> OptionJson {
        OptionJson {
            cold_bytes: o.cold,
            hot_bytes: o.hot,
            comp_cycles: o.comp,
            comm_cycles: o.comm,
            warm_up_cycles: o.warm_up,
            rho: o.rho,
            cores: o.cores.unwrap_or(chip_cores),
        }
    }
}

/// `plans --json`: the inputs.
#[derive(Serialize)]
struct Config<'a> {
    #[serde(flatten)]
    graph: elk_app::request::GraphConfig,
    chip: &'a str,
    hbm_tbps: Option<f64>,
    op: Option<&'a str>,
    timings: bool,
}

#[derive(Serialize)]
struct Timings {
    graph_s: f64,
    plans_s: f64,
    unique_shapes: usize,
    /// Tables read from the plan cache (the rest were enumerated).
    from_cache_shapes: usize,
    /// Tables enumerated.
    enumerated_shapes: usize,
    /// Cache entries found corrupted or foreign and rebuilt.
    cache_rejected_shapes: usize,
    /// Plans (spatial × temporal) enumerated for the enumerated shapes.
    enumerated_plans: u64,
    /// Of those, plans that fit in SRAM.
    fitting_plans: u64,
    /// Fitting plans priced in full.
    costed_plans: u64,
    /// Fitting plans skipped by their lower bound (docs/plans.md, "Skipping plans").
    skipped_plans: u64,
}

#[derive(Serialize)]
struct Output<'a> {
    graph: &'a str,
    chip: &'a str,
    cost_model: &'a str,
    sram_bytes_per_core: u64,
    cores: u64,
    /// `clean` (SPEC §3: operators may run on core groups) or `reference` (the artifact's).
    plan_rules: &'static str,
    ops: Vec<OpRow<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timings: Option<Timings>,
}

pub fn run(a: PlansArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let chip = super::chip_choice::load(&a.chip, a.hbm_tbps)?.named();
    let graph = a.graph.load()?;
    let graph_s = start.elapsed().as_secs_f64();
    let cache = super::plan_cache::get();
    let model = elk_model::cost::for_chip_with(&chip, &graph.dtypes)?;
    let plans = plan_graph_cached(&graph, &chip, model.as_ref(), cache.as_ref())?;
    super::plan_cache::warn_on_write_error(&plans.cache);
    let plans_s = start.elapsed().as_secs_f64() - graph_s;
    if let Some(name) = &a.op {
        if !graph.ops.iter().any(|o| &o.name == name) {
            return Err(super::flags::Usage(format!(
                "--op {name}: no operator of that name in {}",
                graph.name
            ))
            .into());
        }
    }
    let rows: Vec<OpRow> = graph
        .ops
        .iter()
        .enumerate()
        .filter(|(_, o)| a.op.as_ref().is_none_or(|n| &o.name == n))
        .map(|(i, o)| {
            let t = plans.table(i);
            OpRow {
                index: i,
                name: &o.name,
                kind: o.kind.as_str(),
                plans: t.plans,
                spatial: t.spatial,
                pareto: t.front.len(),
                table_entries: t.table.len(),
                options: t.options.len(),
                pruned: t.pruned(),
                c_min_bytes: t.c_min,
                hbm_bytes: t.hbm_bytes(chip.cores),
                min_hot_bytes: t.min_hot(),
                best_exec_cycles: t.best_exec(),
                option_table: a.op.as_ref().map(|_| {
                    t.options
                        .iter()
                        .map(|o| OptionJson::new(o, chip.cores))
                        .collect()
                }),
            }
        })
        .collect();
    let timings = a.timings.then_some(Timings {
        graph_s,
        plans_s,
        unique_shapes: plans.unique.len(),
        from_cache_shapes: plans.cache.hits,
        enumerated_shapes: plans.cache.built,
        cache_rejected_shapes: plans.cache.rejected,
        enumerated_plans: plans.enumeration.plans,
        fitting_plans: plans.enumeration.fitting,
        costed_plans: plans.enumeration.costed,
        skipped_plans: plans.enumeration.skipped,
    });
    let out = Output {
        graph: &graph.name,
        chip: &chip.name,
        cost_model: chip.cost_model.name(),
        sram_bytes_per_core: chip.sram_bytes_per_core,
        cores: chip.cores,
        plan_rules: graph.plan_rules.name(),
        ops: rows,
        timings,
    };
    if a.json {
        let config = Config {
            graph: a.graph.required()?.config(&a.graph.shape.shape()),
            chip: &a.chip,
            hbm_tbps: a.hbm_tbps,
            op: a.op.as_deref(),
            timings: a.timings,
        };
        return super::json::print_json("plans", &config, &out);
    }
    print_table(&out);
    Ok(())
}

fn print_table(out: &Output) {
    println!(
        "{} on {} ({} cores, {} B SRAM/core, cost model {}, {} plan rules)",
        out.graph, out.chip, out.cores, out.sram_bytes_per_core, out.cost_model, out.plan_rules
    );
    println!(
        "{:>5}  {:<28} {:>9} {:>6} {:>7} {:>9} {:>11} {:>11} {:>14}",
        "#",
        "operator",
        "plans",
        "pareto",
        "options",
        "pruned",
        "c_min B",
        "min hot B",
        "best exec cyc"
    );
    for r in &out.ops {
        println!(
            "{:>5}  {:<28} {:>9} {:>6} {:>7} {:>9} {:>11} {:>11} {:>14.1}",
            r.index,
            r.name,
            r.plans,
            r.pareto,
            r.options,
            r.pruned,
            r.c_min_bytes,
            r.min_hot_bytes,
            r.best_exec_cycles
        );
        if let Some(table) = &r.option_table {
            println!(
                "       {:>10} {:>10} {:>14} {:>14} {:>12} {:>7} {:>6}",
                "cold B", "hot B", "comp cyc", "comm cyc", "warm-up cyc", "rho", "cores"
            );
            for o in table {
                println!(
                    "       {:>10} {:>10} {:>14.2} {:>14.2} {:>12.2} {:>7.3} {:>6}",
                    o.cold_bytes,
                    o.hot_bytes,
                    o.comp_cycles,
                    o.comm_cycles,
                    o.warm_up_cycles,
                    o.rho,
                    o.cores
                );
            }
        }
    }
    if let Some(t) = &out.timings {
        println!(
            "timings: graph {:.3} s, plan tables {:.3} s ({} unique operator shapes: {} from the plan cache, {} enumerated{})",
            t.graph_s,
            t.plans_s,
            t.unique_shapes,
            t.from_cache_shapes,
            t.enumerated_shapes,
            if t.cache_rejected_shapes > 0 {
                format!(", {} cache entries rejected and rebuilt", t.cache_rejected_shapes)
            } else {
                String::new()
            }
        );
        if t.enumerated_shapes > 0 {
            println!(
                "enumeration: {} plans, {} fit in SRAM: {} costed, {} skipped by their bound ({:.1} % of the fitting)",
                t.enumerated_plans,
                t.fitting_plans,
                t.costed_plans,
                t.skipped_plans,
                100.0 * t.skipped_plans as f64 / t.fitting_plans.max(1) as f64
            );
        }
    }
}
