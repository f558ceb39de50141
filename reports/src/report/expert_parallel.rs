//! A grid's `expert_parallel` axis (docs/core-groups.md): what parallel sets save, per
//! configuration, as a section of the report and as its finding.

use crate::finding::Finding;
use elk_app::cell::CellResult;
use elk_app::grid::Cell;

/// The best makespan of a cell's methods, ms.
fn best(r: &CellResult) -> Option<f64> {
    r.methods
        .iter()
        .filter_map(|m| m.makespan_ms)
        .min_by(f64::total_cmp)
}

/// The configuration of `c` without its `expert_parallel` setting, as a label.
fn configuration(c: &Cell) -> String {
    let mut s = format!("{} {} B{} on {}", c.model, c.mode, c.batch, c.chip);
    if let Some(h) = c.hbm_tbps {
        s.push_str(&format!(" @ {h} TB/s"));
    }
    s
}

/// When `results` hold cells with and without parallel sets for the same configuration: a
/// Markdown section (each pair's best makespans and speedup) appended to `md`, and the
/// finding (the largest speedup, the median, how many configurations kept schedules without
/// sets). `None` without such pairs.
pub(super) fn section(results: &[&CellResult], md: &mut String) -> Option<Finding> {
    let mut pairs: Vec<(String, f64, f64, usize)> = Vec::new();
    for r in results.iter().filter(|r| r.cell.expert_parallel) {
        let without = Cell {
            expert_parallel: false,
            index: r.cell.index,
            ..r.cell.clone()
        };
        let Some(plain) = results.iter().find(|p| {
            !p.cell.expert_parallel
                && Cell {
                    index: r.cell.index,
                    ..p.cell.clone()
                } == without
        }) else {
            continue;
        };
        if let (Some(a), Some(b)) = (best(plain), best(r)) {
            let kept = r
                .methods
                .iter()
                .filter(|m| m.parallel_sets == Some(false) && m.makespan_ms.is_some())
                .count();
            pairs.push((configuration(&r.cell), a, b, kept));
        }
    }
    if pairs.is_empty() {
        return None;
    }
    md.push_str("## Parallel sets (`expert_parallel`)\n\nThe best method's makespan without and with parallel sets (docs/core-groups.md; a `true` cell keeps each method's faster schedule of the instances with and without sets, so it is never slower):\n\n| configuration | without sets, ms | with, ms | speedup | methods faster without sets |\n|---|---|---|---|---|\n");
    for (name, a, b, kept) in &pairs {
        md.push_str(&format!(
            "| {name} | {a:.4} | {b:.4} | {:.2}× | {kept} |\n",
            a / b
        ));
    }
    md.push('\n');
    let mut speedups: Vec<f64> = pairs.iter().map(|(_, a, b, _)| a / b).collect();
    speedups.sort_by(f64::total_cmp);
    let median = speedups[speedups.len() / 2];
    let (top, a, b, _) = pairs
        .iter()
        .max_by(|x, y| (x.1 / x.2).total_cmp(&(y.1 / y.2)))?;
    let unchanged = pairs.iter().filter(|p| p.1 / p.2 < 1.01).count();
    Some(Finding {
        question: "how much do operators side by side on core groups save?".into(),
        finding: format!(
            "Parallel sets make the best schedule up to {:.2}× faster ({top}: {a:.4} → {b:.4} ms); the median over the {} configurations is {median:.2}×, and {unchanged} gain less than 1 % (weights, not per-operator overheads, dominate there).",
            a / b,
            pairs.len()
        ),
        number: format!("{:.2}× (best method, largest speedup)", a / b),
    })
}
