//! A figure's series from a report's cells: one per method, then the references a reader
//! needs to judge them: Elk's Ideal (a figure, not a bound), the cell's certified lower bound
//! (no schedule is faster), and for MoE cells the spread of the steps behind each mean.

use super::dims;
use super::values::{result_of, why_absent};
use crate::plot::{Absent, Marks, Series, SpreadEnds};
use elk_app::cell::{CellResult, MethodResult};

/// Elk's Ideal in a figure's legend and CSV: it sits below the methods like a bound, and is
/// none (the certified bound is drawn beside it when the cells have one).
pub const IDEAL: &str = "Elk's ideal (not a bound)";

/// The MoE policy every other is measured against: the reference of an MoE figure.
const ORACLE: &str = "oracle";

/// A figure's series and marks, and which series is Ideal.
pub(super) struct MethodSeries {
    pub series: Vec<Series>,
    pub marks: Marks,
    /// Elk's Ideal, when drawn.
    pub ideal: Option<usize>,
}

/// Every grid dimension of each of `rows` as a CSV column (the chip included), so a figure's
/// data says which cell each point is, whatever the figure's title and panels show.
pub(super) fn cell_context(rows: &[&CellResult]) -> Vec<(String, Vec<String>)> {
    dims::csv_dims(rows)
        .iter()
        .map(|d| {
            (
                d.column().to_string(),
                rows.iter().map(|r| d.raw(&r.cell)).collect(),
            )
        })
        .collect()
}

/// The bound's legend name: "certified lower bound (segment relaxation)", its source, or
/// "(per point: roofline or segment relaxation)" when the points' differ (each point's is in
/// the CSV). None: no cell has a bound.
pub(super) fn bound_name(rows: &[&CellResult]) -> Option<String> {
    let sources = rows
        .iter()
        .filter_map(|r| r.bound.as_ref())
        .map(|b| b.source.as_str());
    sources_named(sources).map(|s| format!("certified lower bound ({s})"))
}

/// What proved the bounds of several points, in a few words: the one source, or "per point:
/// roofline or stage relaxation" when they differ. An MoE cell whose steps have different
/// bounds names each with its count ("stage relaxation on 7 of 10 steps, roofline on 3 of 10
/// steps", [`elk_app::cell::steps_bound`]); only the sources' names are kept here (the CSV
/// has each point's). None: no point has a bound.
pub(crate) fn sources_named<'a>(sources: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for name in sources
        .into_iter()
        .flat_map(elk_app::cell::bound_source_names)
    {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        many => Some(format!("per point: {}", many.join(" or "))),
    }
}

/// Why a cell has no value of a reference series: it does not fit the chip, or `why`.
fn missing(why: &'static str) -> impl Fn(&CellResult) -> &'static str {
    move |r| if r.does_not_fit { "does not fit" } else { why }
}

/// A series of one value per row (`value`), at `x`, with an [`Absent`] labelled `why` for
/// each row without one.
fn per_row(
    name: &str,
    rows: &[&CellResult],
    x: &dyn Fn(usize, &CellResult) -> f64,
    value: impl Fn(&CellResult) -> Option<f64>,
    why: impl Fn(&CellResult) -> &'static str,
    (s, marks): (usize, &mut Marks),
) -> Series {
    let mut points = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let v = value(r);
        if v.is_none() {
            marks.absent.push(Absent {
                series: s,
                point: i,
                label: why(r).into(),
            });
        }
        points.push((x(i, r), v));
    }
    Series {
        name: name.into(),
        points,
    }
}

/// One series per method over `rows` (point `i` at `x(i, row)`), and an [`Absent`] for each
/// row where a method has no value. With `latency` (the value is a makespan): each MoE
/// cell's p50 to p99 over its steps as a whisker (the point is their mean), the oracle as the
/// reference; then Elk's Ideal as the reference series, and the certified bound (with the
/// range of the steps' bounds as a band).
pub(super) fn method_series(
    methods: &[String],
    rows: &[&CellResult],
    x: impl Fn(usize, &CellResult) -> f64,
    value: impl Fn(&MethodResult) -> Option<f64>,
    latency: bool,
) -> MethodSeries {
    let mut marks = Marks {
        context: cell_context(rows),
        ..Marks::default()
    };
    let mut series = Vec::new();
    for (s, name) in methods.iter().enumerate() {
        let ser = per_row(
            name,
            rows,
            &x,
            |r| result_of(r, name).and_then(&value),
            |r| why_absent(r, result_of(r, name)),
            (s, &mut marks),
        );
        series.push(ser);
        if !latency {
            continue;
        }
        for (i, r) in rows.iter().enumerate() {
            let m = result_of(r, name);
            if let Some((lo, hi)) = m.and_then(|m| m.p50_ms.zip(m.p99_ms)) {
                marks.spread_ends = SpreadEnds::P50P99;
                marks.spread.push(crate::plot::Spread {
                    series: s,
                    point: i,
                    lo,
                    hi,
                });
            }
        }
    }
    let mut ideal = None;
    // Routed MoE cells have no Ideal (docs/moe.md): no series of crosses for them; their
    // reference is the oracle.
    if latency && rows.iter().any(|r| r.ideal_ms.is_some()) {
        let s = series.len();
        let ser = per_row(
            IDEAL,
            rows,
            &x,
            |r| r.ideal_ms,
            missing("no Ideal figure"),
            (s, &mut marks),
        );
        series.push(ser);
        marks.reference = Some(s);
        ideal = Some(s);
    } else if latency && rows.iter().any(|r| r.cell.routing.is_some()) {
        marks.reference = methods.iter().position(|m| m == ORACLE);
    }
    if let Some(name) = bound_name(rows).filter(|_| latency) {
        let s = series.len();
        let ser = per_row(
            &name,
            rows,
            &x,
            |r| r.bound.as_ref().map(|b| b.bound_ms),
            missing("no bound"),
            (s, &mut marks),
        );
        series.push(ser);
        marks.bound = Some(s);
        for (i, r) in rows.iter().enumerate() {
            if let Some(b) = &r.bound {
                marks.point_notes.push((s, i, b.source.clone()));
                if let Some((lo, hi)) = b.min_ms.zip(b.max_ms) {
                    marks.bound_band.push((i, lo, hi));
                }
            }
        }
    }
    MethodSeries {
        series,
        marks,
        ideal,
    }
}

/// Where Ideal is out of reach among `rows` (a NoC-bound chip): a note on each such point of
/// series `ideal` for the figure's CSV, a line in the README naming the points (`at(i)`),
/// and the suffix for the figure's title ("" when Ideal is reachable everywhere, or not
/// drawn).
pub(super) fn unreachable_ideal(
    rows: &[&CellResult],
    (marks, ideal): (&mut Marks, Option<usize>),
    at: &dyn Fn(usize) -> String,
    md: &mut String,
) -> String {
    let unreachable: Vec<(usize, &str)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.ideal_unreachable.as_deref().map(|w| (i, w)))
        .collect();
    let (Some((_, why)), Some(ideal)) = (unreachable.first(), ideal) else {
        return String::new();
    };
    let points: Vec<String> = unreachable.iter().map(|(i, _)| at(*i)).collect();
    md.push_str(&format!(
        "\n{why}; at {}, Ideal is no target.\n",
        points.join(", ")
    ));
    for (i, why) in &unreachable {
        marks.point_notes.push((ideal, *i, why.to_string()));
    }
    if unreachable.len() == rows.len() {
        " (Ideal unreachable: NoC-bound)".into()
    } else {
        format!(
            " (Ideal unreachable at {} of {} points: NoC-bound)",
            unreachable.len(),
            rows.len()
        )
    }
}
