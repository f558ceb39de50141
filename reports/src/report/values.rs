//! What a report says of its cells and methods: row and category labels, a method's value
//! or, where it has none, why, and what every row shares (for a title).

use super::dims::{Dim, Dims};
use elk_app::cell::{CellResult, MethodResult, MethodStatus};
use elk_app::grid::Cell;

/// Row and category labels of `rows`: every dimension that varies among them.
pub(super) fn labels(rows: &[&CellResult]) -> Vec<String> {
    let dims = Dims::of(rows);
    rows.iter().map(|r| dims.label(&r.cell, &[])).collect()
}

/// A cell's full name (every dimension but the defaults), for lists of failed cells.
pub(super) fn label(c: &Cell) -> String {
    Dims::of(&[]).constant(c, &[])
}

pub(super) fn fmt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

pub(super) fn methods_of(results: &[&CellResult]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for r in results {
        for m in &r.methods {
            if !names.contains(&m.method) {
                names.push(m.method.clone());
            }
        }
    }
    names
}

pub(super) fn result_of<'a>(r: &'a CellResult, method: &str) -> Option<&'a MethodResult> {
    r.methods.iter().find(|m| m.method == method)
}

pub(super) fn ms(r: &CellResult, method: &str) -> Option<f64> {
    result_of(r, method).and_then(|m| m.makespan_ms)
}

/// Why a method has no value in a cell, in a few words: printed in its table cell and beside
/// its "×" in a figure, so a missing value never reads as 0 or as a plotting failure.
pub(super) fn why_absent(r: &CellResult, method: Option<&MethodResult>) -> &'static str {
    if r.does_not_fit {
        return "does not fit";
    }
    match method {
        None => "not run",
        Some(m) if m.makespan_ms.is_some() => "not measured",
        Some(m) => match m.status {
            Some(MethodStatus::Infeasible) => "infeasible",
            Some(MethodStatus::Scheduled) => "not evaluated",
            Some(MethodStatus::NoSchedule) | None => "no schedule",
        },
    }
}

/// A table cell: the value, or why there is none.
pub(super) fn value_or_why(
    r: &CellResult,
    method: &str,
    value: impl Fn(&MethodResult) -> Option<f64>,
    digits: usize,
) -> String {
    let m = result_of(r, method);
    match m.and_then(&value) {
        Some(v) => format!("{v:.digits$}"),
        None => why_absent(r, m).into(),
    }
}

/// What every row shares, for a figure's title: " (decode KV4096 on ipu-pod4, HBM 16 TB/s)".
pub(super) fn shared(rows: &[&CellResult], skip: &[Dim]) -> String {
    let c = rows
        .first()
        .map(|r| Dims::of(rows).constant(&r.cell, skip))
        .unwrap_or_default();
    if c.is_empty() {
        String::new()
    } else {
        format!(": {c}")
    }
}

/// The method a headline quotes: Elk-Full when the grid ran it, else the last method.
pub(super) fn headline_method(methods: &[String]) -> Option<&String> {
    methods
        .iter()
        .find(|m| m.as_str() == "elk-full")
        .or(methods.last())
}
