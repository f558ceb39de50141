//! Grids with `bound = true`: the "Certified gaps" table and `gaps.csv`.

use super::dims;
use super::header::Files;
use super::values::{labels, methods_of, value_or_why};
use elk_app::cell::CellResult;

/// Grids with `bound = true`: each cell's certified bound and every method's gap to it, as a
/// table and as `gaps.csv` (one row per cell and method, every grid dimension a column).
pub(super) fn certified_gaps(rows: &[&CellResult], md: &mut String, files: &mut Files) {
    let bounded: Vec<&CellResult> = rows.iter().copied().filter(|r| r.bound.is_some()).collect();
    if bounded.is_empty() {
        return;
    }
    let methods = methods_of(&bounded);
    // MoE cells: a bound per sampled step; the cell's is their mean, beside their range.
    let ranged = bounded
        .iter()
        .any(|r| r.bound.as_ref().is_some_and(|b| b.min_ms.is_some()));
    md.push_str("\n## Certified gaps\n\nEach method's gap ≤ % to the cell's certified lower bound (the best of the segment relaxation's LP bound, the stage relaxation's and the roofline's; docs/exact.md): at least that close to the optimum. Data: [gaps.csv](gaps.csv).");
    if ranged {
        md.push_str(" An MoE cell (with a routing) has a bound per sampled step, of the oracle's instance, which bounds every policy of that step; its makespans and its bound are means over the steps (the steps' lowest and highest bound in parentheses), so its gap bounds the mean makespan's distance to the mean optimum.");
    }
    md.push_str("\n\n| configuration | bound ms | bound |");
    for m in &methods {
        md.push_str(&format!(" {m} gap ≤ % |"));
    }
    md.push_str(&format!(
        "\n|---|---|---|{}\n",
        "---|".repeat(methods.len())
    ));
    let names = labels(&bounded);
    let csv_dims = dims::csv_dims(&bounded);
    let mut csv: Vec<Vec<String>> = Vec::new();
    let mut header: Vec<String> = csv_dims.iter().map(|d| d.column().into()).collect();
    header.extend(
        [
            "method",
            "makespan_ms",
            "bound_ms",
            "bound_source",
            "gap_le_pct",
        ]
        .map(String::from),
    );
    if ranged {
        header.extend(["bound_min_ms", "bound_max_ms"].map(String::from));
    }
    csv.push(header);
    for (r, name) in bounded.iter().zip(&names) {
        let Some(b) = &r.bound else { continue };
        let range = match b.min_ms.zip(b.max_ms) {
            Some((lo, hi)) => format!(" ({lo:.4}–{hi:.4})"),
            None => String::new(),
        };
        md.push_str(&format!(
            "| {name} | {:.4}{range} | {} |",
            b.bound_ms, b.source
        ));
        for m in &methods {
            md.push_str(&format!(" {} |", value_or_why(r, m, |x| x.gap_le_pct, 2)));
        }
        md.push('\n');
        let dims: Vec<String> = csv_dims.iter().map(|d| d.raw(&r.cell)).collect();
        let number = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        for m in &r.methods {
            let mut record = dims.clone();
            record.extend([
                m.method.clone(),
                number(m.makespan_ms),
                b.bound_ms.to_string(),
                b.source.clone(),
                number(m.gap_le_pct),
            ]);
            if ranged {
                record.extend([number(b.min_ms), number(b.max_ms)]);
            }
            csv.push(record);
        }
    }
    files.push(("gaps.csv".into(), crate::csv_text::write(csv).into_bytes()));
}
