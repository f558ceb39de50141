//! Study `moe`: how does static (inductive, ahead-of-time) preloading cope with run-time
//! expert choice, and would a hybrid of precomputed plans and a run-time choice close the gap?
//! (docs/moe.md.)
//!
//! Mixtral-8x7B (8 experts, top-2) and Qwen3-30B-A3B (128 fine-grained experts, top-8),
//! decode at batches 1, 8 and 64, under uniform and Zipf-skewed routing, on ipu-pod4 and
//! ipu-mk2. Every policy is scheduled per sampled step (the best judged heuristic) and set
//! against the oracle, which knows the step's routing, and the step's certified bound. One
//! figure per model and chip, one panel per routing: each policy's mean makespan with the
//! steps' p50 to p99, the bound as a band.

use super::{OnStep, Steps};
use crate::cell::{routed_rows, CellResult};
use crate::error::Result;
use crate::finding::Finding;
use crate::moe::{run_with_bound, MoeReport, MoeSpec, StepBound};
use crate::plot::facets;
use crate::report::{routing_panels, Files, Header};
use elk_model::build::InstanceOptions;
use elk_model::chip::ChipSpec;
use elk_model::graph::Mode;
use elk_model::load_policy::Policy;
use elk_model::routing::Routing;
use elk_model::zoo::{self, ZooParams};

const MODELS: [&str; 2] = ["mixtral-8x7b", "qwen3-30b-a3b"];
const CHIPS: [&str; 2] = ["ipu-pod4", "ipu-mk2"];
const BATCHES: [u64; 3] = [1, 8, 64];
const ROUTINGS: [&str; 2] = ["uniform", "zipf:1.2"];
/// Steps per configuration (seed 1): enough for the mean within about 1 % here (the
/// per-step spread is in the JSON of `elk-opt moe`), few enough for `make reports`. At
/// batch 64 nearly every expert has tokens in every step, so 4 steps say as much.
fn steps_for(batch: u64) -> usize {
    if batch >= 64 {
        4
    } else {
        10
    }
}
const KV: u64 = 2048;

/// One configuration's run.
struct Cell {
    model: &'static str,
    chip: &'static str,
    routing: &'static str,
    batch: u64,
    report: MoeReport,
}

/// The policies of a model with top-k routing: load-all, on-demand, the hybrid with k and 2k
/// predicted experts per layer, and the oracle.
fn policies(top_k: u64) -> Vec<Policy> {
    vec![
        Policy::LoadAll,
        Policy::OnDemand,
        Policy::Predicted(top_k as usize),
        Policy::Predicted(2 * top_k as usize),
        Policy::Oracle,
    ]
}

/// Runs the study, each configuration a step of `progress`.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let total = MODELS.len() * CHIPS.len() * ROUTINGS.len() * BATCHES.len();
    let steps = Steps::new(total, progress);
    let mut cells = Vec::with_capacity(total);
    for model_name in MODELS {
        let model = zoo::find(model_name)?;
        let top_k = model.moe().map_or(1, |m| m.top_k);
        for chip_name in CHIPS {
            let chip = ChipSpec::preset(chip_name)?;
            for routing in ROUTINGS {
                for batch in BATCHES {
                    let what = format!("{model_name} on {chip_name}, {routing}, B{batch}");
                    steps.starting(&what);
                    let spec = MoeSpec {
                        params: ZooParams::new(Mode::Decode, batch, KV),
                        chip: chip.clone(),
                        opts: InstanceOptions {
                            plan_cache: header.plan_cache.clone(),
                            load_order: elk_stage::instance::LoadOrder::Named(
                                elk_stage::instance::NamedOrder::Free,
                            ),
                            // Every step with and without parallel sets.
                            parallel: true,
                            ..InstanceOptions::default()
                        },
                        routing: Routing::parse(routing)?,
                        steps: steps_for(batch),
                        seed: 1,
                        policies: policies(top_k),
                        methods: crate::moe::DEFAULT_METHODS.map(String::from).to_vec(),
                    };
                    let report = run_with_bound(model, &spec, StepBound::Strongest, &|_| {})?;
                    steps.finished(&what);
                    cells.push(Cell {
                        model: model_name,
                        chip: chip_name,
                        routing,
                        batch,
                        report,
                    });
                }
            }
        }
    }
    write(header, &cells)
}

/// A run's report (`report`: without or with parallel sets) as a sweep's MoE cell: its
/// policies' rows and its certified bound, so the study's figures are drawn as a sweep's MoE
/// figures are.
fn as_cell(c: &Cell, report: &MoeReport) -> CellResult {
    let mut cell = crate::grid::Cell::decode(c.model, c.batch, KV);
    cell.chip = c.chip.into();
    cell.routing = Some(c.routing.into());
    let (methods, bound) = routed_rows(report, true);
    CellResult {
        figure: "vs-batch".into(),
        cell,
        ops: 0,
        ideal_ms: None,
        methods,
        bound,
        ideal_unreachable: None,
        error: None,
        does_not_fit: false,
    }
}

/// The report, the figures and the finding of the runs.
fn write(header: &Header, cells: &[Cell]) -> Result<Files> {
    let mut md = header.markdown("Study: MoE — static preloading against run-time expert choice");
    md.push_str(&format!(
        "Each configuration samples {} decode steps ({} at batch 64, where nearly every expert \
         has tokens in every step; KV {KV}, seed 1) of the routing; in \
         each step every policy's instance is scheduled by Elk-Dyn and judged by the \
         simulator (docs/moe.md). Policies: **load-all** preloads every expert (what a static \
         compiler must do without knowing the routing); **on-demand** loads an expert only \
         after its layer's router ran; **predicted-m** preloads the m experts a predictor \
         ranks first per layer (under uniform routing: any m, under Zipf: the m most popular) \
         and loads the others on demand — a hybrid of plans precomputed for the predicted \
         experts and a run-time choice for the rest; **oracle** knows the step's routing (a \
         lower bound for every online policy, never above any policy on any step). Each \
         step also has a certified lower bound: the strongest bound of the oracle's instance \
         (the segment relaxation where the step's layers repeat, else the roofline; sampled \
         routings give every layer its own token counts, so here it is the roofline), below \
         every policy of that step. In the tables, 'vs oracle' is the mean over steps of \
         makespan / oracle − 1; 'experts' the experts loaded per layer; GB the expert weight \
         loaded per step; the certified bound is the mean of the steps' bounds, their lowest \
         and highest in parentheses. The figures draw each policy's mean makespan per step \
         against the batch, one panel per routing, with a whisker from the steps' median to \
         their 99th percentile; the oracle is the black dashed line and the bound the grey \
         line over the band of the steps' bounds. Every step also runs with expert \
         parallelism (`elk-opt moe --expert-parallel`, docs/core-groups.md): the experts with \
         tokens, and the shared expert, side by side, each on its own group of cores sized for \
         the step's tokens; each model and chip has a second section for it, where a policy's \
         '×' is its speed-up over its own run without sets.\n\n",
        steps_for(1),
        steps_for(64)
    ));
    let mut files = Vec::new();
    let pairs = MODELS
        .iter()
        .flat_map(|m| CHIPS.iter().map(move |c| (*m, *c)));
    for (figure, (model, chip)) in pairs.enumerate() {
        for sets in [false, true] {
            let stem = match sets {
                false => format!("moe-{figure}"),
                true => format!("moe-ep-{figure}"),
            };
            section(
                model,
                chip,
                sets,
                cells,
                (header, &stem),
                &mut md,
                &mut files,
            )?;
        }
    }
    md.push_str(&what_it_shows(cells));
    files.insert(0, ("README.md".into(), md.into_bytes()));
    files.push(finding(cells).file());
    Ok(files)
}

/// The report of `c` without parallel sets, or with them (`sets`).
fn report_of(c: &Cell, sets: bool) -> &MoeReport {
    match (&c.report.expert_parallel, sets) {
        (Some(with), true) => with,
        _ => &c.report,
    }
}

/// One model and chip, without or with parallel sets: a table per routing and a figure.
fn section(
    model: &str,
    chip: &str,
    sets: bool,
    cells: &[Cell],
    (header, stem): (&Header, &str),
    md: &mut String,
    files: &mut Files,
) -> Result<()> {
    let with = if sets {
        ", experts side by side (expert parallelism)"
    } else {
        ""
    };
    md.push_str(&format!("## {model} on {chip}{with}\n\n"));
    let mut shown: Vec<CellResult> = Vec::new();
    for routing in ROUTINGS {
        let rows: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.model == model && c.chip == chip && c.routing == routing)
            .collect();
        if rows.is_empty() {
            continue;
        }
        table(routing, &rows, sets, md);
        shown.extend(rows.iter().map(|c| as_cell(c, report_of(c, sets))));
    }
    let Some(first) = shown.first() else {
        return Ok(());
    };
    let methods: Vec<String> = first.methods.iter().map(|m| m.method.clone()).collect();
    let refs: Vec<&CellResult> = shown.iter().collect();
    let mut panels = routing_panels(
        &methods,
        &refs,
        |_, r| r.cell.batch as f64,
        |m| m.makespan_ms,
        true,
    );
    for p in &mut panels {
        p.marks.log_x = true;
    }
    let fig = facets(
        &format!("{model} decode KV{KV} on {chip}{with}: a decode step under each load policy"),
        "batch (sequences = tokens routed per layer)",
        "makespan per decode step (ms)",
        &panels,
        &header.style,
    )?;
    files.extend(fig.files(stem));
    md.push_str(&format!("![{model} on {chip}{with}]({stem}.svg)\n\n"));
    Ok(())
}

/// One routing's table, without or with parallel sets (`sets`): a row per batch, a column
/// per policy, the certified bound last; with sets, each policy's speed-up over its run
/// without them.
fn table(routing: &str, rows: &[&Cell], sets: bool, md: &mut String) {
    let first = report_of(rows[0], sets);
    let names: Vec<&str> = first.summary.iter().map(|s| s.policy.as_str()).collect();
    let source = crate::cell::steps_bound(first).source;
    let columns = if sets {
        "ms (vs oracle, × faster than without)"
    } else {
        "ms (vs oracle, experts, GB)"
    };
    md.push_str(&format!(
        "Routing {routing}.\n\n| batch | experts with tokens / layer | {} | certified bound ms ({source}) |\n|---|---|{}---|\n",
        names
            .iter()
            .map(|n| format!("{n}: {columns}"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(names.len())
    ));
    for c in rows {
        let report = report_of(c, sets);
        let bound = crate::cell::steps_bound(report);
        let cols: Vec<String> = report
            .summary
            .iter()
            .zip(&c.report.summary)
            .map(|(s, without)| {
                if sets {
                    format!(
                        "{:.4} ({:+.2} %, {:.2}×)",
                        s.mean_ms,
                        s.mean_vs_oracle_pct,
                        without.mean_ms / s.mean_ms
                    )
                } else {
                    format!(
                        "{:.4} ({:+.2} %, {:.1}, {:.2})",
                        s.mean_ms,
                        s.mean_vs_oracle_pct,
                        s.mean_experts_per_layer,
                        s.mean_expert_bytes / 1e9
                    )
                }
            })
            .collect();
        md.push_str(&format!(
            "| {} | {:.2} | {} | {:.4} ({:.4}–{:.4}) |\n",
            c.batch,
            report.mean_touched_experts_per_layer,
            cols.join(" | "),
            bound.bound_ms,
            bound.min_ms.unwrap_or(f64::NAN),
            bound.max_ms.unwrap_or(f64::NAN),
        ));
    }
    md.push('\n');
}

/// The worst configuration for static preloading, and how much the hybrid recovers there.
fn worst(cells: &[Cell]) -> Option<(&Cell, f64, f64, f64)> {
    cells
        .iter()
        .map(|c| {
            let s = &c.report.summary;
            let load_all = s.first().map_or(0.0, |x| x.mean_vs_oracle_pct);
            let on_demand = s.get(1).map_or(0.0, |x| x.mean_vs_oracle_pct);
            let hybrid = s
                .iter()
                .filter(|x| x.policy.starts_with("predicted-"))
                .map(|x| x.mean_vs_oracle_pct)
                .fold(f64::INFINITY, f64::min);
            (c, load_all, on_demand, hybrid)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

fn what_it_shows(cells: &[Cell]) -> String {
    let mut s = String::from("## What it shows\n\n");
    if let Some((c, load_all, on_demand, hybrid)) = worst(cells) {
        s.push_str(&format!(
            "- Static preloading costs most at small batches, where few experts receive \
             tokens: worst here {} on {} ({}, B{}), load-all {load_all:+.2} % above the \
             oracle, on-demand {on_demand:+.2} %, the best hybrid {hybrid:+.2} %.\n",
            c.model, c.chip, c.routing, c.batch
        ));
    }
    let (preload_big, demand_big) = at_batch_64(cells);
    s.push_str(&format!(
        "- At batch 64 nearly every expert receives tokens in every layer: the preloading \
         policies (load-all, predicted-m) are within {preload_big:.2} % of the oracle, while \
         on-demand still pays the router's wait in every layer (up to {demand_big:.2} %).\n"
    ));
    s.push_str(
        "- On-demand loading pays the router's wait in every layer; preloading the predicted \
         experts hides it when the prediction is right (Zipf) and wastes HBM when it is not \
         (uniform). Each number is the mean of the sampled steps; `elk-opt moe --json` gives \
         every step.\n",
    );
    s.push_str(&expert_parallel_shows(cells));
    s.push_str(&what_it_does_not_model(cells));
    s
}

/// The oracle's mean step without and with parallel sets in `c`.
fn oracle_without_with(c: &Cell) -> Option<(f64, f64)> {
    let oracle = |r: &MoeReport| r.summary.last().map(|x| x.mean_ms);
    Some((
        oracle(&c.report)?,
        oracle(c.report.expert_parallel.as_deref()?)?,
    ))
}

/// The largest mean excess over the oracle among `policy`'s rows (a name, or `predicted-`
/// for every hybrid), without and with parallel sets (`sets`), and the configuration.
fn excess_over_oracle<'a>(cells: &'a [Cell], policy: &str, sets: bool) -> Option<(f64, &'a Cell)> {
    cells
        .iter()
        .flat_map(|c| {
            report_of(c, sets)
                .summary
                .iter()
                .filter(|x| x.policy.starts_with(policy))
                .map(move |x| (x.mean_vs_oracle_pct, c))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// `+12.34 % (model on chip, routing, Bn)` of [`excess_over_oracle`].
fn excess_text(found: Option<(f64, &Cell)>) -> String {
    found.map_or("-".into(), |(pct, c)| {
        format!(
            "{pct:+.2} % ({} on {}, {}, B{})",
            c.model, c.chip, c.routing, c.batch
        )
    })
}

/// What running the experts side by side changes: the speed-up of each model's oracle, and
/// how far the policies are from it with sets against without.
fn expert_parallel_shows(cells: &[Cell]) -> String {
    let mut s = String::new();
    for model in MODELS {
        let best = cells
            .iter()
            .filter(|c| c.model == model)
            .filter_map(|c| oracle_without_with(c).map(|(a, b)| (c, a, b)))
            .max_by(|x, y| (x.1 / x.2).total_cmp(&(y.1 / y.2)));
        let Some((c, without, with)) = best else {
            continue;
        };
        let b8 = cells
            .iter()
            .find(|c| {
                c.model == model && c.chip == "ipu-pod4" && c.routing == "uniform" && c.batch == 8
            })
            .and_then(oracle_without_with);
        s.push_str(&format!(
            "- Expert parallelism (the experts with tokens side by side, each on its own group \
             of cores): {model}'s oracle step is at most {:.2}× faster ({} on {}, B{}: \
             {without:.4} → {with:.4} ms){}.\n",
            without / with,
            c.routing,
            c.chip,
            c.batch,
            b8.map_or(String::new(), |(a, b)| format!(
                "; at B8 on ipu-pod4 (uniform) {a:.4} → {b:.4} ms ({:.2}×)",
                a / b
            )),
        ));
    }
    let excess = |policy: &str, sets: bool| excess_text(excess_over_oracle(cells, policy, sets));
    s.push_str(&format!(
        "- Once the per-expert overhead is gone the load policies matter more, not less. The \
         largest mean excess over the oracle, without → with sets: load-all {} → {}; \
         on-demand {} → {}; the hybrids {} → {}. With sets a layer's experts load as one set, \
         released after the router when any of them is not predicted, so a hybrid rarely \
         preloads more than on-demand does; where sets do not fit beside the resident experts \
         (Mixtral on ipu-mk2 at B1) each policy keeps its schedule without them \
         (docs/core-groups.md, CG-6).\n",
        excess("load-all", false),
        excess("load-all", true),
        excess("on-demand", false),
        excess("on-demand", true),
        excess("predicted-", false),
        excess("predicted-", true),
    ));
    s
}

/// What the numbers leave out, and where one class of operators takes most of a step (the
/// runs' own warnings), so the differences above are read as what they measure.
fn what_it_does_not_model(cells: &[Cell]) -> String {
    let mut s = String::from(
        "\n## What it does not model\n\n\
         - Without sets, operators run one after another, each on the whole chip or on a \
         group of its cores (docs/plans.md, \"Core groups\"): a fine-grained model such as \
         Qwen3-30B-A3B (128 experts of width 768, 8 per token) pays one operator's fixed \
         costs per active expert in every layer, so its steps are long and its policies close \
         together. With sets (docs/core-groups.md) a set's groups are sized for the step's \
         tokens whatever the policy, and its load is one load: a predicted expert is not \
         preloaded apart from the set's unpredicted ones.\n\
         - Each step is a fresh instance: no expert stays in SRAM from one step to the next.\n",
    );
    let warned: Vec<String> = cells
        .iter()
        .flat_map(|c| {
            c.report.warnings.iter().map(move |w| {
                format!(
                    "- {} on {}, {}, B{}: {w}\n",
                    c.model, c.chip, c.routing, c.batch
                )
            })
        })
        .collect();
    if warned.is_empty() {
        s.push_str(
            "- No configuration has one class of operators taking more than half of the \
             oracle's step (the warning `elk-opt moe` prints when one does).\n",
        );
    } else {
        s.push_str("- Where one class of operators takes more than half of the oracle's step:\n");
        warned.iter().for_each(|w| s.push_str(&format!("  {w}")));
    }
    s
}

/// At batch 64: the largest excess over the oracle of the preloading policies (load-all and
/// the hybrids), and of on-demand.
fn at_batch_64(cells: &[Cell]) -> (f64, f64) {
    let big = cells.iter().filter(|c| c.batch == 64);
    let mut preload: f64 = 0.0;
    let mut demand: f64 = 0.0;
    for c in big {
        for x in &c.report.summary {
            match x.policy.as_str() {
                "on-demand" => demand = demand.max(x.mean_vs_oracle_pct),
                "oracle" => {}
                _ => preload = preload.max(x.mean_vs_oracle_pct),
            }
        }
    }
    (preload, demand)
}

fn finding(cells: &[Cell]) -> Finding {
    let Some((c, load_all, on_demand, hybrid)) = worst(cells) else {
        return Finding {
            question: "How does static preloading cope with run-time expert choice (MoE)?".into(),
            finding: "no configuration ran".into(),
            number: "-".into(),
        };
    };
    Finding {
        question: "How does static preloading cope with run-time expert choice (MoE)?".into(),
        finding: format!(
            "Preloading every expert is at worst {load_all:.2} % slower than an oracle that \
             knows the routing ({} on {}, {}, B{}); loading on demand is {on_demand:.2} % and \
             the best hybrid (predicted experts preloaded, the rest on demand) {hybrid:.2} % \
             slower there. At batch 64 every expert is used: the preloading policies are within \
             {:.2} % of the oracle, on-demand up to {:.2} % (the router's wait). With the \
             experts side by side on groups of cores the oracle's step is up to {:.2}× faster \
             and on-demand is up to {:.2} % above it.",
            c.model,
            c.chip,
            c.routing,
            c.batch,
            at_batch_64(cells).0,
            at_batch_64(cells).1,
            cells
                .iter()
                .filter_map(oracle_without_with)
                .map(|(a, b)| a / b)
                .fold(0.0, f64::max),
            excess_over_oracle(cells, "on-demand", true).map_or(0.0, |e| e.0),
        ),
        number: format!("{load_all:.2} % (load-all vs oracle, worst configuration)"),
    }
}
