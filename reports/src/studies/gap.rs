//! Study `gap`'s report: how far Basic, Static, Elk-Dyn and Elk-Full are from the exact
//! optimum, on real sub-instances and random instances (optimum proven by the MILP), from the
//! rows `elk_app::studies::gap` computes. Whole models are [`super::gap_whole`], a report of
//! its own.

use super::budget::{budget_paragraph, cut_by_time};
use crate::finding::Finding;
use crate::plot::cdf;
use crate::report::{Files, Header};
use elk_app::studies::gap::{is_random, Row, BUDGET, FULL, METHODS};
use elk_app::studies::{summary, OnStep};
use elk_app::Result;

fn gap(t: f64, reference: f64) -> f64 {
    100.0 * (t - reference) / reference
}

/// Why a heuristic loses on a row: operators with another option, loads started elsewhere.
fn explain(row: &Row, m: usize) -> String {
    let (Some(h), Some(x)) = (&row.schedules[m], &row.exact_schedule) else {
        return String::new();
    };
    let options = h
        .options
        .iter()
        .zip(&x.options)
        .filter(|(a, b)| a != b)
        .count();
    let start = |s: &elk_stage::schedule::Schedule| {
        let mut st = std::collections::BTreeMap::new();
        for w in &s.load_work {
            let e = st.entry(w.op).or_insert(w.stage);
            *e = (*e).min(w.stage);
        }
        st
    };
    let (sh, sx) = (start(h), start(x));
    let earlier = sx
        .iter()
        .filter(|(j, k)| sh.get(j).is_some_and(|kh| kh > k))
        .count();
    let later = sx
        .iter()
        .filter(|(j, k)| sh.get(j).is_some_and(|kh| kh < k))
        .count();
    format!(
        "{options} of {} operators take another option; the optimum starts {earlier} loads earlier and {later} later",
        row.ops
    )
}

/// A row's exact outcome with the nodes it took: "optimal (212 nodes)", "infeasible (proven)
/// (0 nodes)", "bound 1003.2 (5000 nodes)", marked when the time stop cut it.
fn status(r: &Row) -> String {
    let outcome = if r.optimal {
        "optimal".to_string()
    } else if r.infeasible {
        "infeasible (proven)".to_string()
    } else {
        format!("bound {:.1}", r.bound)
    };
    match r.work {
        Some(w) => format!(
            "{outcome} ({} nodes{})",
            w.used.map_or("?".into(), |n| n.to_string()),
            if w.cut_by_time { ", cut by time" } else { "" }
        ),
        None => outcome,
    }
}

/// Runs the study and writes its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let rows = elk_app::studies::gap::run(header.plan_cache.as_ref(), progress)?;
    let mut md = header.markdown("Study: optimality gap of the heuristics");
    md.push_str("Gap = 100·(T − T*)/T* with T* the exact optimum (MILP, proven, warm-started from the best heuristic schedule or its LP re-timing, elk-dyn+retime or elk-full+retime, as `elk-opt gap` does). Corpus: 16-operator windows of the first layer of llama2-7b, llama2-13b, opt-1.3b, gemma2-27b and bert-base at (B8, KV512, 4 TB/s) and (B32, KV2048, 16 TB/s) on ipu-pod4, free load order; and 20 random instances (6–10 operators, 1–4 options, tight SRAM).\n\n");
    md.push_str(&budget_paragraph("gap", BUDGET, &cut_by_time(&rows)));
    let proven: Vec<&Row> = rows.iter().filter(|r| r.optimal).collect();
    let infeasible = rows.iter().filter(|r| r.infeasible).count();
    md.push_str(&format!(
        "{} instances, {} proven optimal, {infeasible} proven to have no schedule at all (the \
         rest, if any, are left out of the gaps below).\n\n",
        rows.len(),
        proven.len()
    ));
    // Each method over the proven instances it schedules (Static has no schedule on some);
    // the figure over the instances every method schedules, so its bars compare.
    let gaps_over = |rows: &[&Row], m: usize| -> Vec<f64> {
        rows.iter()
            .filter_map(|r| r.heuristic[m].zip(r.exact).map(|(h, x)| gap(h, x)))
            .collect()
    };
    let unscheduled: Vec<String> = METHODS
        .iter()
        .enumerate()
        .filter_map(|(m, name)| {
            let missing: Vec<&str> = proven
                .iter()
                .filter(|r| r.heuristic[m].is_none())
                .map(|r| r.name.as_str())
                .collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "{name} has no schedule on {} ({})",
                    missing.len(),
                    missing.join(", ")
                )
            })
        })
        .collect();
    md.push_str("Each method over the proven instances it schedules");
    if unscheduled.is_empty() {
        md.push_str(" (every method schedules every one):\n\n");
    } else {
        md.push_str(&format!(
            " (so the counts differ: {}):\n\n",
            unscheduled.join("; ")
        ));
    }
    md.push_str("| method | instances | median gap % | p90 % | max % | instances optimal (gap < 0.01%) |\n|---|---|---|---|---|---|\n");
    let mut stats = Vec::new();
    let mut at_optimum = Vec::new();
    for (m, name) in METHODS.iter().enumerate() {
        let gaps = gaps_over(&proven, m);
        let (med, p90, max) = summary(&gaps);
        let at_opt = gaps.iter().filter(|g| **g < 0.01).count();
        md.push_str(&format!(
            "| {name} | {} | {med:.2} | {p90:.2} | {max:.2} | {at_opt} |\n",
            gaps.len()
        ));
        stats.push((med, p90, max, gaps.len()));
        at_optimum.push((at_opt, gaps.len()));
    }
    let common: Vec<&Row> = proven
        .iter()
        .copied()
        .filter(|r| r.heuristic.iter().all(Option::is_some))
        .collect();
    let common_stats: Vec<(f64, f64, f64)> = (0..METHODS.len())
        .map(|m| summary(&gaps_over(&common, m)))
        .collect();
    md.push_str(&format!(
        "\nOver the {} proven instances where every method has a schedule (the figures, real layer windows apart from random instances):\n\n| method | median gap % | p90 % | max % |\n|---|---|---|---|\n",
        common.len()
    ));
    for (name, (med, p90, max)) in METHODS.iter().zip(&common_stats) {
        md.push_str(&format!("| {name} | {med:.2} | {p90:.2} | {max:.2} |\n"));
    }
    // The distributions, real layers apart from random instances (whose worst cases are
    // of another kind), over the instances every method schedules, so the curves compare.
    let mut figures = Vec::new();
    for (stem, group, real) in [
        ("gaps-real", "real layer windows", true),
        ("gaps-random", "random instances", false),
    ] {
        let rows: Vec<&Row> = common
            .iter()
            .copied()
            .filter(|r| is_random(&r.name) != real)
            .collect();
        let samples: Vec<(String, Vec<f64>)> = METHODS
            .iter()
            .enumerate()
            .map(|(m, name)| (name.to_string(), gaps_over(&rows, m)))
            .collect();
        let figure = cdf(
            &format!(
                "Gap to the optimum, {group}: {} instances every method schedules",
                rows.len()
            ),
            "gap to optimum (%)",
            &samples,
            &header.style,
        )?;
        figures.extend(figure.files(stem));
        md.push_str(&format!("\n![gaps, {group}]({stem}.svg)\n"));
    }
    md.push_str("\n## Worst cases (Elk-Full)\n\n| instance | Elk-Full cycles | optimum cycles | gap % | what differs |\n|---|---|---|---|---|\n");
    let full = FULL;
    let mut worst: Vec<&&Row> = proven
        .iter()
        .filter(|r| r.heuristic[full].is_some())
        .collect();
    worst.sort_by(|a, b| {
        let g = |r: &Row| gap(r.heuristic[full].unwrap_or(0.0), r.exact.unwrap_or(1.0));
        g(b).total_cmp(&g(a)).then(a.name.cmp(&b.name))
    });
    for r in worst.iter().take(5) {
        let (h, x) = (r.heuristic[full].unwrap_or(0.0), r.exact.unwrap_or(1.0));
        md.push_str(&format!(
            "| {} | {h:.1} | {x:.1} | {:.2} | {} |\n",
            r.name,
            gap(h, x),
            explain(r, full)
        ));
    }
    md.push_str("\n## Every instance\n\n| instance | ops | basic | static | elk-dyn | elk-full | optimum | status |\n|---|---|---|---|---|---|---|---|\n");
    for r in &rows {
        let cell = |v: Option<f64>| v.map_or("-".into(), |t| format!("{t:.1}"));
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.name,
            r.ops,
            cell(r.heuristic[0]),
            cell(r.heuristic[1]),
            cell(r.heuristic[2]),
            cell(r.heuristic[3]),
            cell(r.exact),
            status(r)
        ));
    }
    // The whole-model part takes ≈ 60 min on 2 cores, so it is a report of its own.
    md.push_str("\n## Whole models\n\nCertified gaps of Llama2-13B and Llama2-70B at HBM 4–16 TB/s: [`study gap-whole`](../gap-whole/README.md).\n");
    let (med, p90, max, _) = stats[FULL];
    let (at_opt, n) = at_optimum[FULL];
    let others: Vec<String> = METHODS
        .iter()
        .zip(&stats)
        .enumerate()
        .filter(|(k, _)| *k != FULL)
        .map(|(_, (m, s))| {
            format!(
                "{m} median {:.2} %, max {:.2} % (on the {} it schedules)",
                s.0, s.2, s.3
            )
        })
        .collect();
    let finding = Finding {
        question: "Is Elk optimal? (gap to the exact optimum)".into(),
        finding: format!(
            "On {} of {} sub-instances proven optimal by the MILP, {} (as the artifact runs it) has a gap to the optimum of median {med:.2} %, p90 {p90:.2} %, max {max:.2} %, and is optimal on {at_opt} of {n}; {}. Whole models: see gap-whole.",
            proven.len(),
            rows.len(),
            METHODS[FULL],
            others.join("; ")
        ),
        number: format!("median {med:.1} %, max {max:.1} %"),
    };
    let mut files = vec![("README.md".into(), md.into_bytes())];
    files.extend(figures);
    files.push(finding.file());
    Ok(files)
}
