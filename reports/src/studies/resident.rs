//! Study `resident`'s report: which experts of a DeepSeek-class model should stay in SRAM
//! across decode steps, how many pay off, and how far the choice is from an oracle that knows
//! the routing (docs/moe.md, "Resident experts"). From the runs `elk_app::studies::resident`
//! makes, a table per model and chip and two figures per model: each policy's mean makespan
//! against the batch (one panel per chip), and resident-auto's calibration, the makespan
//! against the number of resident experts (one panel per chip, one line per batch).

use crate::finding::Finding;
use crate::plot::{facets, Panel, Series};
use crate::report::{routing_panels, Files, Header};
use elk_app::cell::{steps_bound, CellResult};
use elk_app::moe::{MoeReport, ResidentReport};
use elk_app::studies::resident::{
    steps_for, Run, BATCHES, BIG_SRAM, CHIPS, GROUPED, KV, MODELS, SRAM_SCALE, UNGROUPED,
};
use elk_app::studies::OnStep;
use elk_app::Result;

/// Runs the study, each configuration a step of `progress`, and writes its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let runs = elk_app::studies::resident::run(header.plan_cache.as_ref(), progress)?;
    write(header, &runs)
}

/// A run as a sweep's MoE cell, so its policies are drawn as a sweep's MoE figures are.
fn as_cell(c: &Run) -> CellResult {
    super::moe::moe_cell((c.model, c.chip, c.routing), (c.batch, KV), &c.report)
}

/// resident-auto's set in `r`.
fn auto(r: &MoeReport) -> Option<&ResidentReport> {
    r.resident.iter().find(|x| x.policy == "resident-auto")
}

/// The report, the figures and the finding of the runs.
fn write(header: &Header, cells: &[Run]) -> Result<Files> {
    let mut md = header
        .markdown("Study: resident experts — which experts stay in SRAM, and how many pay off");
    md.push_str(&format!(
        "Each configuration samples {} decode steps ({} at batch 64; KV {KV}, seed 1) of the \
         model's routing: DeepSeek-V3's own group-limited routing (`--routing {GROUPED}`, \
         docs/moe.md), and for DeepSeek-V2-Lite, whose router has no groups, \
         `--routing {UNGROUPED}`. In each step \
         every policy's instance is scheduled by Elk-Dyn and judged by the simulator. \
         **load-all** preloads every expert, **on-demand** loads an expert after its layer's \
         router ran, **predicted-k** preloads the k experts a predictor ranks first per layer, \
         **resident-auto** keeps a set of experts in SRAM across steps (never reloaded, their \
         SRAM reserved for the run) and loads the others as load-all or on-demand, both chosen \
         by the makespan on 4 calibration steps apart from the run's; the **oracle** knows the \
         step's routing (and may keep resident-auto's experts as it does), never above any \
         policy on any step. The chips: ipu-pod4, and `{BIG_SRAM}`, the same chip with \
         {SRAM_SCALE}× the SRAM per core (hypothetical: a chip whose SRAM holds a sizeable \
         share of a layer's experts). Weights are fp16 on both: the chips' cost model (ipu-mk2's) \
         prices fp16 and fp32 only, so DeepSeek-V3's published fp8 would have to be priced as \
         fp16 anyway, and its experts take twice the bytes they take on a chip that runs \
         fp8. In the tables 'vs oracle' is the mean over steps of makespan / oracle − 1; the \
         certified bound is the mean of the steps' bounds (each the \
         lowest bound of the oracle's instances, below every policy of that step). Expert \
         parallelism is not in this study: resident experts with parallel sets are not \
         modelled yet (study `moe` has the policies with it).\n\n",
        steps_for(1),
        steps_for(64)
    ));
    let mut files = Vec::new();
    for (i, model) in MODELS.iter().enumerate() {
        md.push_str(&format!("## {model}\n\n"));
        for chip in CHIPS {
            let rows: Vec<&Run> = cells
                .iter()
                .filter(|c| c.model == *model && c.chip == chip)
                .collect();
            table(chip, &rows, &mut md);
        }
        policies_figure(
            model,
            cells,
            (header, &format!("resident-{i}")),
            &mut md,
            &mut files,
        )?;
        count_figure(
            model,
            cells,
            (header, &format!("resident-count-{i}")),
            &mut md,
            &mut files,
        )?;
    }
    md.push_str(&what_it_shows(cells));
    files.insert(0, ("README.md".into(), md.into_bytes()));
    files.push(finding(cells).file());
    Ok(files)
}

/// One chip's table: a row per batch, a column per policy, resident-auto's set, the bound.
fn table(chip: &str, rows: &[&Run], md: &mut String) {
    let Some(first) = rows.first() else {
        return;
    };
    let names: Vec<&str> = first
        .report
        .summary
        .iter()
        .map(|s| s.policy.as_str())
        .collect();
    let sources: Vec<String> = rows.iter().map(|c| steps_bound(&c.report).source).collect();
    let source =
        crate::report::sources_named(sources.iter().map(String::as_str)).unwrap_or_default();
    md.push_str(&format!(
        "On {chip}.\n\n| batch | experts with tokens / layer | {} | resident-auto keeps | \
         certified bound ms ({source}) |\n|---|---|{}---|---|\n",
        names
            .iter()
            .map(|n| format!("{n}: ms (vs oracle)"))
            .collect::<Vec<_>>()
            .join(" | "),
        "---|".repeat(names.len())
    ));
    for c in rows {
        let cols: Vec<String> = c
            .report
            .summary
            .iter()
            .map(|s| format!("{:.4} ({:+.2} %)", s.mean_ms, s.mean_vs_oracle_pct))
            .collect();
        let kept = auto(&c.report).map_or("-".to_string(), |a| {
            format!(
                "{} of {} experts, {:.1} % of SRAM, the others {}",
                a.experts, a.of_experts, a.sram_pct, a.rest
            )
        });
        md.push_str(&format!(
            "| {} | {:.2} | {} | {kept} | {:.4} |\n",
            c.batch,
            c.report.mean_touched_experts_per_layer,
            cols.join(" | "),
            steps_bound(&c.report).bound_ms,
        ));
    }
    md.push('\n');
}

/// Each policy's mean makespan against the batch, one panel per chip.
fn policies_figure(
    model: &str,
    cells: &[Run],
    (header, stem): (&Header, &str),
    md: &mut String,
    files: &mut Files,
) -> Result<()> {
    let mut panels = Vec::new();
    let mut methods: Vec<String> = Vec::new();
    for chip in CHIPS {
        let shown: Vec<CellResult> = cells
            .iter()
            .filter(|c| c.model == model && c.chip == chip)
            .map(as_cell)
            .collect();
        let Some(first) = shown.first() else {
            continue;
        };
        if methods.is_empty() {
            methods = first.methods.iter().map(|m| m.method.clone()).collect();
        }
        let refs: Vec<&CellResult> = shown.iter().collect();
        for mut p in routing_panels(
            &methods,
            &refs,
            |_, r| r.cell.batch as f64,
            |m| m.makespan_ms,
            true,
        ) {
            p.marks.log_x = true;
            p.title = chip.to_string();
            panels.push(p);
        }
    }
    if panels.is_empty() {
        return Ok(());
    }
    let fig = facets(
        &format!("{model} decode KV{KV}: a decode step under each policy"),
        "batch (sequences = tokens routed per layer)",
        "makespan per decode step (ms)",
        &panels,
        &header.style,
    )?;
    files.extend(fig.files(stem));
    md.push_str(&format!("![{model}: the policies]({stem}.svg)\n\n"));
    Ok(())
}

/// resident-auto's calibration: per batch, the better of its two rests' mean makespan for
/// each number of resident experts, as a change from none resident (%), one panel per chip.
fn count_figure(
    model: &str,
    cells: &[Run],
    (header, stem): (&Header, &str),
    md: &mut String,
    files: &mut Files,
) -> Result<()> {
    let mut panels = Vec::new();
    for chip in CHIPS {
        let series: Vec<Series> = BATCHES
            .iter()
            .filter_map(|&b| {
                let c = cells
                    .iter()
                    .find(|c| c.model == model && c.chip == chip && c.batch == b)?;
                let cal = auto(&c.report)?.calibration.as_ref()?;
                let mut counts: Vec<usize> = cal.candidates.iter().map(|k| k.experts).collect();
                counts.sort_unstable();
                counts.dedup();
                let best = |n: usize| {
                    cal.candidates
                        .iter()
                        .filter(|k| k.experts == n)
                        .filter_map(|k| k.mean_ms)
                        .fold(f64::INFINITY, f64::min)
                };
                let none = best(0);
                Some(Series {
                    name: format!("batch {b}"),
                    points: counts
                        .iter()
                        .map(|&n| {
                            let v = best(n);
                            // The same seven points in every panel: n = 0, N/16 … N.
                            let x = (100.0 * n as f64 / cal.max_experts.max(1) as f64).round();
                            (x, v.is_finite().then(|| 100.0 * (v / none - 1.0)))
                        })
                        .collect(),
                })
            })
            .collect();
        if series.len() == BATCHES.len() {
            panels.push(Panel {
                title: chip.to_string(),
                series,
                marks: Default::default(),
            });
        }
    }
    if panels.is_empty() {
        return Ok(());
    }
    let fig = facets(
        &format!("{model}: how many resident experts pay off (resident-auto's calibration)"),
        "experts resident (% of the most that fit beside the schedule)",
        "mean makespan vs none resident (%)",
        &panels,
        &header.style,
    )?;
    files.extend(fig.files(stem));
    md.push_str(&format!(
        "![{model}: makespan against resident experts]({stem}.svg)\n\nEach line is one batch: \
         the better of load-all and on-demand for the others, at each number of resident \
         experts resident-auto tried (as a share of the most that fit, listed below), as a \
         change from none resident, on its calibration steps.\n\n"
    ));
    Ok(())
}

/// The best saving of resident-auto over the better of load-all and on-demand (the run's
/// means), and where.
fn best_saving(cells: &[Run]) -> Option<(&Run, f64)> {
    cells
        .iter()
        .filter_map(|c| {
            let s = &c.report.summary;
            let mean = |p: &str| s.iter().find(|x| x.policy == p).map(|x| x.mean_ms);
            let base = mean("load-all")?.min(mean("on-demand")?);
            Some((c, 100.0 * (1.0 - mean("resident-auto")? / base)))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

/// What the study shows, in numbers.
fn what_it_shows(cells: &[Run]) -> String {
    let Some((c, saving)) = best_saving(cells) else {
        return String::new();
    };
    let kept = auto(&c.report).map_or(String::new(), |a| {
        format!(
            " by keeping {} of {} experts ({:.1} % of the SRAM), the others {}",
            a.experts, a.of_experts, a.sram_pct, a.rest
        )
    });
    let mut room = String::new();
    for c in cells.iter().filter(|c| c.batch == BATCHES[0]) {
        let Some((a, cal)) = auto(&c.report).and_then(|a| Some((a, a.calibration.as_ref()?)))
        else {
            continue;
        };
        room.push_str(&format!(
            "- {} on {}: an expert reserves {:.2} % of each core's SRAM, so at most {} of its \
             {} experts fit ({:.2} %); resident-auto kept {}.\n",
            c.model,
            c.chip,
            cal.expert_sram_pct,
            cal.max_experts,
            a.of_experts,
            100.0 * cal.max_experts as f64 / a.of_experts.max(1) as f64,
            a.experts,
        ));
    }
    format!(
        "## What it shows\n\nResident experts pay off most for {} on {} at batch {}: \
         resident-auto is {saving:.2} % faster than the better of load-all and on-demand{kept}. \
         The gains are small because the SRAM holds few experts beside what the schedule \
         needs:\n\n{room}\nOn-demand loading already hides most of an expert's load behind \
         the layer's other work, so keeping a small share resident saves little; the count \
         figures show where more residents stop paying, when the SRAM they take leaves the \
         schedule too little room to preload.\n\n",
        c.model, c.chip, c.batch
    )
}

fn finding(cells: &[Run]) -> Finding {
    let question = "Which experts should stay in SRAM across decode steps, and how many pay off?";
    let Some((c, saving)) = best_saving(cells) else {
        return Finding {
            question: question.into(),
            finding: "no configuration ran".into(),
            number: "-".into(),
        };
    };
    Finding {
        question: question.into(),
        finding: format!(
            "Keeping the experts resident-auto chooses is at best {saving:.2} % faster than the \
             better of load-all and on-demand ({} on {}, B{}).",
            c.model, c.chip, c.batch
        ),
        number: format!("{saving:.2} % (resident-auto vs the better of load-all and on-demand)"),
    }
}
