//! Study `order-pruning`'s report: Elk-Full tries only block permutations with displacement
//! ≤ 4 (at most 128 orders). How much does that leave on the table? Against the exact
//! free-order optimum, and against every block permutation where their number is small
//! enough, from the rows `elk_app::studies::order_pruning` computes.

use super::budget::budget_paragraph;
use crate::finding::Finding;
use crate::plot::{bars, Series};
use crate::report::{Files, Header};
use elk_app::studies::order_pruning::{Row, BUDGET};
use elk_app::studies::{summary, OnStep};
use elk_app::Result;

/// Runs the study, each layer a step of `progress`, and writes its report.
pub fn run(header: &Header, progress: &OnStep<'_>) -> Result<Files> {
    let rows = elk_app::studies::order_pruning::run(header.plan_cache.as_ref(), progress)?;
    write(header, &rows)
}

/// The report of the study's rows.
fn write(header: &Header, rows: &[Row]) -> Result<Files> {
    let mut md =
        header.markdown("Study: Elk-Full's pruned preload orders vs all orders and the optimum");
    let cut: Vec<&str> = rows
        .iter()
        .filter(|r| r.cut_by_time)
        .map(|r| r.name.as_str())
        .collect();
    md.push_str(&format!("On whole first layers of llama2-7b and llama2-13b at (B8, KV512, 4 TB/s) and (B32, KV2048, 16 TB/s) on ipu-pod4 (free load order): Elk-Dyn (execution order only), Elk-Full as the artifact runs it (block permutations, displacement ≤ 4, ≤ 256 orders, each under delay-comp and delay-load), every distinct block permutation (when at most 40,320), and the exact free-order optimum (MILP, warm-started from the best heuristic schedule or its LP re-timing, as in the gap study; '-' where optimality was not proven within the budget, with the certified bound in the last column). Gaps in % of the optimum.\n\n{budget}| instance | block orders | Elk-Dyn | Elk-Full | all block orders | optimum | Elk-Full gap % | all-orders gap % | certified bound | Elk-Full gap ≤ % (vs bound) |\n|---|---|---|---|---|---|---|---|---|---|\n", budget = budget_paragraph("order-pruning", BUDGET, &cut)));
    let (mut g_full, mut g_all, mut g_dyn) = (Vec::new(), Vec::new(), Vec::new());
    for r in rows {
        let cell = |v: Option<f64>| v.map_or("-".into(), |t| format!("{t:.1}"));
        let gap = |v: Option<f64>| v.zip(r.optimum).map(|(t, x)| 100.0 * (t - x) / x);
        if let Some(g) = gap(r.full) {
            g_full.push(g);
        }
        if let Some(g) = gap(r.exhaustive) {
            g_all.push(g);
        }
        if let Some(g) = gap(r.dyn_t) {
            g_dyn.push(g);
        }
        md.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} |\n",
            r.name,
            r.orders,
            cell(r.dyn_t),
            cell(r.full),
            cell(r.exhaustive),
            cell(r.optimum),
            gap(r.full).map_or("-".into(), |g| format!("{g:.2}")),
            gap(r.exhaustive).map_or("-".into(), |g| format!("{g:.2}")),
            r.bound,
            r.full.map_or("-".into(), |t| format!(
                "{:.2}",
                100.0 * (t - r.bound) / r.bound
            ))
        ));
    }
    let stats = [
        ("Elk-Dyn", summary(&g_dyn)),
        ("Elk-Full", summary(&g_full)),
        ("all block orders", summary(&g_all)),
    ];
    md.push_str("\n| method | instances | median gap % | p90 % | max % |\n|---|---|---|---|---|\n");
    let counts = [g_dyn.len(), g_full.len(), g_all.len()];
    for ((name, (m, p, x)), n) in stats.iter().zip(counts) {
        if n == 0 {
            md.push_str(&format!("| {name} | 0 | - | - | - |\n"));
        } else {
            md.push_str(&format!("| {name} | {n} | {m:.2} | {p:.2} | {x:.2} |\n"));
        }
    }
    let categories: Vec<String> = stats.iter().map(|s| s.0.to_string()).collect();
    let series: Vec<Series> = ["median", "p90", "max"]
        .iter()
        .enumerate()
        .map(|(k, name)| Series {
            name: name.to_string(),
            points: stats
                .iter()
                .enumerate()
                .map(|(i, s)| (i as f64, Some([s.1 .0, s.1 .1, s.1 .2][k])))
                .collect(),
        })
        .collect();
    let [svg, csv] = bars(
        "Order pruning: gap to the free-order optimum (first layers, decode on ipu-pod4; B8 \
         KV512 at 4 TB/s and B32 KV2048 at 16 TB/s)",
        &categories,
        &series,
        "gap to optimum (%)",
        &header.style,
    )?
    .files("orders");
    md.push_str("\n![orders](orders.svg)\n");
    let same = rows
        .iter()
        .filter(|r| {
            r.full
                .zip(r.exhaustive)
                .is_some_and(|(f, a)| f <= a * (1.0 + 1e-9))
        })
        .count();
    let with_all = rows.iter().filter(|r| r.exhaustive.is_some()).count();
    let describe = |(name, (m, _, x)): &(&str, (f64, f64, f64)), n: usize| {
        if n == 0 {
            format!("{name}: no proven optimum")
        } else {
            format!("{name} median {m:.2} %, max {x:.2} % ({n} proven)")
        }
    };
    let gaps: Vec<String> = stats
        .iter()
        .zip(counts)
        .map(|(s, n)| describe(s, n))
        .collect();
    let finding = Finding {
        question: "Does pruning preload orders (displacement ≤ 4) lose anything?".into(),
        finding: format!(
            "On {} whole layers, Elk-Full's pruned orders reach the best of every block order on {same} of the {with_all} where all orders were tried. Gaps to the free-order optimum: {}.",
            rows.len(),
            gaps.join("; ")
        ),
        number: format!("{same} of {with_all} equal"),
    };
    Ok(vec![
        ("README.md".into(), md.into_bytes()),
        svg,
        csv,
        finding.file(),
    ])
}
