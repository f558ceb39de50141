//! Study `moe`'s report: how does static (inductive, ahead-of-time) preloading cope with
//! run-time expert choice, and would a hybrid of precomputed plans and a run-time choice close
//! the gap? (docs/moe.md.) From the runs `elk_app::studies::moe` makes (Mixtral-8x7B and
//! Qwen3-30B-A3B, decode at batches 1, 8 and 64, uniform and Zipf-skewed routing, ipu-pod4
//! and ipu-mk2), a table per routing and one figure per model and chip, one panel per
//! routing: each policy's mean makespan with the steps' p50 to p99, the bound as a band.

use crate::finding::Finding;
use crate::plot::facets;
use crate::report::{routing_panels, Files, Header};
use elk_app::cell::{routed_rows, steps_bound, CellResult};
use elk_app::moe::MoeReport;
use elk_app::studies::moe::{steps_for, Run, CHIPS, KV, MODELS, ROUTINGS};
use elk_app::studies::OnStep;
use elk_app::Result;

/// Runs the study, each configuration a step of `progress`, and writes its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let runs = elk_app::studies::moe::run(header.plan_cache.as_ref(), progress)?;
    write(header, &runs)
}

/// A run's report (`report`: without or with parallel sets) as a sweep's MoE cell: its
/// policies' rows and its certified bound, so the study's figures are drawn as a sweep's MoE
/// figures are.
fn as_cell(c: &Run, report: &MoeReport) -> CellResult {
    moe_cell((c.model, c.chip, c.routing), (c.batch, KV), report)
}

/// The decode run of (model, chip, routing) at (batch, KV length) whose policies did
/// `report`, as a sweep's MoE cell (study `resident` draws its runs so too).
pub(super) fn moe_cell(
    (model, chip, routing): (&str, &str, &str),
    (batch, kv): (u64, u64),
    report: &MoeReport,
) -> CellResult {
    let mut cell = elk_app::grid::Cell::decode(model, batch, kv);
    cell.chip = chip.into();
    cell.routing = Some(routing.into());
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
fn write(header: &Header, cells: &[Run]) -> Result<Files> {
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
         (the best of the stage relaxation, one LP over the stages that needs no repeated \
         layers, the segment relaxation where the step's layers repeat, and the roofline; \
         sampled routings give every layer its own token counts, so here it is the stage \
         relaxation where that beats the roofline, and it is not tried above 10,000 \
         operators; docs/exact.md), below every policy of that step. In the tables, 'vs oracle' is the mean over steps of \
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
fn report_of(c: &Run, sets: bool) -> &MoeReport {
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
    cells: &[Run],
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
        let rows: Vec<&Run> = cells
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
fn table(routing: &str, rows: &[&Run], sets: bool, md: &mut String) {
    let first = report_of(rows[0], sets);
    let names: Vec<&str> = first.summary.iter().map(|s| s.policy.as_str()).collect();
    let sources: Vec<String> = rows
        .iter()
        .map(|c| steps_bound(report_of(c, sets)).source)
        .collect();
    let source =
        crate::report::sources_named(sources.iter().map(String::as_str)).unwrap_or_default();
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
        let bound = steps_bound(report);
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
fn worst(cells: &[Run]) -> Option<(&Run, f64, f64, f64)> {
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

fn what_it_shows(cells: &[Run]) -> String {
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
fn oracle_without_with(c: &Run) -> Option<(f64, f64)> {
    let oracle = |r: &MoeReport| r.summary.last().map(|x| x.mean_ms);
    Some((
        oracle(&c.report)?,
        oracle(c.report.expert_parallel.as_deref()?)?,
    ))
}

/// The largest mean excess over the oracle among `policy`'s rows (a name, or `predicted-`
/// for every hybrid), without and with parallel sets (`sets`), and the configuration.
fn excess_over_oracle<'a>(cells: &'a [Run], policy: &str, sets: bool) -> Option<(f64, &'a Run)> {
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
fn excess_text(found: Option<(f64, &Run)>) -> String {
    found.map_or("-".into(), |(pct, c)| {
        format!(
            "{pct:+.2} % ({} on {}, {}, B{})",
            c.model, c.chip, c.routing, c.batch
        )
    })
}

/// What running the experts side by side changes: the speed-up of each model's oracle, and
/// how far the policies are from it with sets against without.
fn expert_parallel_shows(cells: &[Run]) -> String {
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
fn what_it_does_not_model(cells: &[Run]) -> String {
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
fn at_batch_64(cells: &[Run]) -> (f64, f64) {
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

fn finding(cells: &[Run]) -> Finding {
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
