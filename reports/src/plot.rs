//! Figures with plotters: SVG by default, PNG on request ([`Format`]), each with a CSV of
//! exactly the numbers it plots ([`Figure::files`]). The DejaVu Sans font ships in
//! `reports/assets/` and is registered here, so no system font is needed, and SVG and PNG
//! share one layout.
//!
//! Every report and study draws through this module, so every figure follows one set of
//! conventions:
//! - one colour per method in every figure (Okabe and Ito's colour-blind-safe palette, its
//!   yellow left out), Elk's Ideal in black as a reference: an outlined bar, a dashed line;
//! - a certified lower bound in grey, never in a method's colour: a solid line without
//!   markers (over a light grey band where it spans a range), a rule across each bar group;
//! - the spread of the samples behind a point or bar as a whisker with caps (min to max, or
//!   median to 99th percentile: [`SpreadEnds`]);
//! - variants of one method in one chart ("elk-dyn, no π", "elk-dyn, depth ≤ 1") get
//!   lighter and darker shades of its colour and, on bars, hatches, in the legend too
//!   (`plot::paint`);
//! - lines differ in dash pattern and point shape too, so series that coincide stay visible,
//!   and the legend says which series coincide;
//! - the legend stands in its own column beside the plot, never over data;
//! - category labels read upwards and end below the axis; categories that belong together
//!   (a model's configurations) are grouped, with separators and a group label;
//! - a value a series lacks (a method without a schedule) is an "×" on the axis in the
//!   series' colour, never a missing bar or point, which a reader would take for 0 or for a
//!   plotting failure; the legend and a footnote under the plot say why;
//! - ticks at round numbers without a spurious ".0", at the swept values on a swept axis,
//!   and a log axis where positive values span decades, except for a percentage, which
//!   stays linear (`plot::axis`);
//! - every axis has a description with its unit; values are plotted as measured.

mod axis;
mod bars;
mod facets;
mod figure;
mod frame;
mod legend;
mod lines;
mod paint;

pub use bars::{bars, bars_marked};
pub use facets::{facets, Panel};
pub use figure::{relink, Figure, Format, Style};
pub use lines::{cdf, lines, lines_marked};

use elk_app::AppError;
use frame::{drawn, figure, frame, Drawing, Drawn, Frame, Plot, MAX_NOTES};
use legend::draw_legend;
use paint::{paints, palette, Paint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::Once;

static FONT: Once = Once::new();

fn font() {
    FONT.call_once(|| {
        // The bytes are a valid TTF shipped with the crate; a failure here is a build error.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            include_bytes!("../assets/DejaVuSans.ttf"),
        );
    });
}

fn err(name: &str, e: impl std::fmt::Display) -> AppError {
    AppError::Plot {
        name: name.into(),
        detail: e.to_string(),
    }
}

/// One series of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label. A method's name in it (`elk-full`, `static`, …) gives the series that
    /// method's colour in every figure.
    pub name: String,
    /// Values (bars: one per category, None = missing; lines: (x, y) points).
    pub points: Vec<(f64, Option<f64>)>,
}

/// A point a series has no value for, and why: drawn as an "×" on the axis, the reason in
/// the legend and in a footnote.
#[derive(Clone, Debug, PartialEq)]
pub struct Absent {
    /// The series (index into the chart's series).
    pub series: usize,
    /// The point (index into that series' points; its value is None).
    pub point: usize,
    /// A few words: "no schedule", "infeasible".
    pub label: String,
}

/// What a chart draws besides its series.
#[derive(Clone, Debug, Default)]
pub struct Marks {
    /// Values the series lack, each drawn as an "×".
    pub absent: Vec<Absent>,
    /// A series that is a reference figure, not a method (Elk's Ideal): an outlined bar, a
    /// dashed line.
    pub reference: Option<usize>,
    /// A series that is a certified lower bound on the others' values (a cell's proven
    /// bound): a grey solid line without markers, a grey rule across each bar group.
    pub bound: Option<usize>,
    /// Lines: the range the bound spans at some of its points, as (point, lowest, highest)
    /// (an MoE cell's steps each have a bound; the point is their mean): a light grey band.
    pub bound_band: Vec<(usize, f64, f64)>,
    /// Bars: runs of consecutive categories that belong together (a model's
    /// configurations), as (label, number of categories); drawn with a separator between
    /// runs and the label below their category labels. Empty: no groups.
    pub groups: Vec<(String, usize)>,
    /// The spread of the samples behind a bar or a point, drawn as a whisker with caps.
    pub spread: Vec<Spread>,
    /// What a spread's ends are.
    pub spread_ends: SpreadEnds,
    /// Lines: each series is a distribution function, drawn as steps (a CDF).
    pub steps: bool,
    /// Lines: a log x axis (the x values are all positive).
    pub log_x: bool,
    /// Notes on single points, written in the figure's CSV (series, point, note): e.g. that
    /// Ideal is out of reach on that point's chip.
    pub point_notes: Vec<(usize, usize, String)>,
    /// Columns the figure's CSV adds after its own (name, one value per point index): what
    /// each point is, e.g. the model and chip of a sweep's cell.
    pub context: Vec<(String, Vec<String>)>,
}

/// What the two ends of every [`Spread`] of a chart are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpreadEnds {
    /// The smallest and the largest sample (the bar or point: their median).
    #[default]
    MinMax,
    /// The median and the 99th percentile (nearest rank) of the samples; the point is their
    /// mean (an MoE cell's steps).
    P50P99,
}

impl SpreadEnds {
    /// The names of the two ends, as the CSV's note gives them.
    pub(super) fn names(self) -> (&'static str, &'static str) {
        match self {
            SpreadEnds::MinMax => ("min", "max"),
            SpreadEnds::P50P99 => ("p50", "p99"),
        }
    }

    /// The legend's line for a line chart's whiskers.
    fn legend(self) -> &'static str {
        match self {
            SpreadEnds::MinMax => "whisker: min to max of the samples",
            SpreadEnds::P50P99 => "point: mean; whisker: p50 to p99",
        }
    }
}

/// The spread of the samples behind one bar or point.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    /// The series (index into the chart's series).
    pub series: usize,
    /// The point (index into that series' points).
    pub point: usize,
    /// The smallest sample.
    pub lo: f64,
    /// The largest sample.
    pub hi: f64,
}

impl Marks {
    /// The legend's line for the "×" markers (None: nothing is absent).
    fn legend(&self) -> Option<String> {
        let mut labels: Vec<&str> = Vec::new();
        for a in &self.absent {
            if !labels.contains(&a.label.as_str()) {
                labels.push(&a.label);
            }
        }
        (!labels.is_empty()).then(|| format!("× no value: {}", labels.join(" / ")))
    }
}

/// The text colour of marker labels.
const INK: RGBColor = RGBColor(51, 51, 51);

/// Light grid lines.
const GRID: RGBColor = RGBColor(222, 222, 222);

const TITLE_FONT: u32 = 20;
const TICK_FONT: u32 = 14;
const NOTE_FONT: u32 = 12;
/// Height of a footnote line, px at the default text size.
const NOTE_ROW: u32 = 17;

/// The width of `text` in device pixels at `size`.
fn text_width(text: &str, size: u32) -> u32 {
    let mut scratch = String::new();
    let probe = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
    let style = TextStyle::from(("sans-serif", size).into_font());
    probe.estimate_text_size(text, &style).map_or(0, |s| s.0)
}
/// Line `s`'s dash pattern (dash, gap) in px; None: solid.
fn dashes(s: usize) -> Option<(u32, u32)> {
    [None, Some((9, 5)), Some((3, 4)), Some((16, 5))][s % 4]
}

/// The reference line's dash pattern.
const REFERENCE_DASH: (u32, u32) = (6, 6);

/// Draws `points` as a line of series `s`: solid, or its dash pattern.
fn draw_path<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    points: Vec<CT::From>,
    dash: Option<(u32, u32)>,
    paint: ShapeStyle,
    style: &Style,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    CT::From: Clone,
{
    match dash {
        None => area.draw(&PathElement::new(points, paint)),
        Some((d, g)) => area.draw(&plotters::element::DashedPathElement::new(
            points,
            style.zu(d),
            style.zu(g),
            paint,
        )),
    }
}

/// Draws a bar from corner to corner (device pixels) in `paint`: its fill, then its hatch.
fn draw_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    corners: [(i32, i32); 2],
    paint: &Paint,
    style: &Style,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    area.draw(&Rectangle::new(corners, paint.colour.filled()))?;
    draw_hatch(area, corners, paint, style)
}

/// Draws `paint`'s hatch (if any) over the box from corner to corner (device pixels), its
/// lines 5 px apart whatever the box's size, so bars and legend swatches match; a pixel in
/// from the edges, so no stroke's end stands out of the fill.
fn draw_hatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    [a, b]: [(i32, i32); 2],
    paint: &Paint,
    style: &Style,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let ink = paint.ink.stroke_width(style.stroke(1));
    let inset = style.z(1);
    let a_in = (a.0.min(b.0) + inset, a.1.min(b.1) + inset);
    let b_in = (a.0.max(b.0) - inset, a.1.max(b.1) - inset);
    if a_in.0 >= b_in.0 || a_in.1 >= b_in.1 {
        return Ok(());
    }
    for line in paint::hatch_lines(paint.hatch, a_in, b_in, style.z(5)) {
        area.draw(&PathElement::new(line.to_vec(), ink))?;
    }
    Ok(())
}

/// A chart on linear axis coordinates (a log axis is drawn as log10 of the values).
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The mesh without plotters' own ticks (ours are drawn by [`draw_ticks`]): axes, their
/// descriptions, nothing else.
fn draw_axes<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    x_desc: &str,
    y_desc: &str,
    style: &Style,
) -> std::result::Result<(), String> {
    let mut mesh = chart.configure_mesh();
    mesh.disable_mesh()
        .x_labels(0)
        .y_labels(0)
        .y_desc(y_desc)
        .axis_desc_style(("sans-serif", style.px(15)));
    if !x_desc.is_empty() {
        mesh.x_desc(x_desc);
    }
    if style.stroke(1) > 1 {
        mesh.axis_style(BLACK.stroke_width(style.stroke(1)));
    }
    mesh.draw().map_err(|e| e.to_string())
}

/// Grid lines and labelled tick marks at `y_ticks` (and `x_ticks`, when given), in axis
/// coordinates; labels beside the axes, outside the plot.
fn draw_ticks<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart<'_, DB>,
    x_ticks: &[(f64, String)],
    y_ticks: &[(f64, String)],
    style: &Style,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (xr, yr) = (chart.x_range(), chart.y_range());
    let grid = GRID.stroke_width(style.stroke(1));
    let tick = BLACK.stroke_width(style.stroke(1));
    let font = |h, v| {
        ("sans-serif", style.px(TICK_FONT))
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(h, v))
    };
    for (y, label) in y_ticks {
        chart
            .plotting_area()
            .draw(&PathElement::new(vec![(xr.start, *y), (xr.end, *y)], grid))
            .map_err(e)?;
        let (px, py) = chart.backend_coord(&(xr.start, *y));
        root.draw(&PathElement::new(
            vec![(px - style.z(5), py), (px, py)],
            tick,
        ))
        .map_err(e)?;
        root.draw_text(
            label,
            &font(HPos::Right, VPos::Center),
            (px - style.z(8), py),
        )
        .map_err(e)?;
    }
    for (x, label) in x_ticks {
        let (px, py) = chart.backend_coord(&(*x, yr.start));
        root.draw(&PathElement::new(
            vec![(px, py), (px, py + style.z(5))],
            tick,
        ))
        .map_err(e)?;
        root.draw_text(label, &font(HPos::Center, VPos::Top), (px, py + style.z(8)))
            .map_err(e)?;
    }
    Ok(())
}

/// Draws the point marker of series `s` at `at` on `area`: each series its own shape (disc,
/// triangle, square, diamond, ring), filled for even series and open for odd ones, so a
/// marker drawn over another's still shows it.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    s: usize,
    at: CT::From,
    c: RGBColor,
    style: &Style,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let e = EmptyElement::at(at);
    let paint = if s % 2 == 0 {
        c.filled()
    } else {
        c.stroke_width(style.stroke(2))
    };
    let (r4, r5) = (style.z(4), style.z(5));
    match s % 5 {
        0 => area.draw(&(e + Circle::new((0, 0), r4 as u32, paint))),
        1 => area.draw(&(e + TriangleMarker::new((0, 0), r5 as u32, paint))),
        2 => area.draw(&(e + Rectangle::new([(-r4, -r4), (r4, r4)], paint))),
        3 => area.draw(&(e + Polygon::new(vec![(0, -r5), (r5, 0), (0, r5), (-r5, 0)], paint))),
        _ => area.draw(&(e + Circle::new((0, 0), r5 as u32, c.stroke_width(style.stroke(2))))),
    }
}

/// Footnote lines for absent values: per reason and places, the series that lack a value
/// there ("× basic, static: no schedule at a, b"); at most `max` lines, the last saying how
/// many more there are.
fn absent_notes(
    series: &[Series],
    marks: &Marks,
    at: impl Fn(&Absent) -> String,
    max: usize,
) -> Vec<String> {
    // (series, reason) → places.
    let mut by_series: Vec<(usize, &str, Vec<String>)> = Vec::new();
    for a in &marks.absent {
        match by_series
            .iter_mut()
            .find(|n| n.0 == a.series && n.1 == a.label)
        {
            Some(n) => n.2.push(at(a)),
            None => by_series.push((a.series, &a.label, vec![at(a)])),
        }
    }
    // (reason, places) → series.
    let mut notes: Vec<(&str, Vec<String>, Vec<&str>)> = Vec::new();
    for (s, reason, places) in by_series {
        let name = series.get(s).map_or("", |s| s.name.as_str());
        match notes.iter_mut().find(|n| n.0 == reason && n.1 == places) {
            Some(n) => n.2.push(name),
            None => notes.push((reason, places, vec![name])),
        }
    }
    let mut lines: Vec<String> = notes
        .into_iter()
        .map(|(reason, places, names)| {
            let shown = places
                .iter()
                .take(6)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            let more = if places.len() > 6 {
                format!(" and {} more", places.len() - 6)
            } else {
                String::new()
            };
            format!("× {}: {reason} at {shown}{more}", names.join(", "))
        })
        .collect();
    if lines.len() > max {
        let rest = lines.len() - (max - 1);
        lines.truncate(max - 1);
        lines.push(format!("… {rest} more (every value is in the CSV)"));
    }
    lines
}

/// Draws footnote `lines` from `at` (left, top) downwards.
fn draw_notes<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    lines: &[String],
    style: &Style,
) -> std::result::Result<(), String> {
    let font = ("sans-serif", style.px(NOTE_FONT))
        .into_font()
        .color(&INK)
        .pos(Pos::new(HPos::Left, VPos::Top));
    for (k, line) in lines.iter().enumerate() {
        let y = at.1 + style.len(NOTE_ROW as i32) * k as i32;
        root.draw_text(line, &font, (at.0, y))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csv_quotes_labels_and_says_why_a_value_is_absent() {
        let series = [
            Series {
                name: "a, the \"first\"".into(),
                points: vec![(0.0, Some(1.5)), (1.0, None)],
            },
            Series {
                name: "ideal".into(),
                points: vec![(0.0, Some(0.1)), (1.0, Some(2e-7))],
            },
        ];
        let marks = Marks {
            absent: vec![Absent {
                series: 0,
                point: 1,
                label: "no schedule".into(),
            }],
            reference: Some(1),
            ..Marks::default()
        };
        let cats = ["x".to_string(), "y, z".to_string()];
        let figure = bars_marked(
            "t",
            &cats,
            &series,
            "latency (ms)",
            &marks,
            &Style::default(),
        );
        assert_eq!(
            figure.unwrap().csv(),
            "series,category,latency (ms),note\n\
             \"a, the \"\"first\"\"\",x,1.5,\n\
             \"a, the \"\"first\"\"\",\"y, z\",,absent: no schedule\n\
             ideal,x,0.1,reference\n\
             ideal,\"y, z\",0.0000002,reference\n"
        );
    }

    #[test]
    fn a_style_sets_the_size_and_scales_the_text() {
        let series = [Series {
            name: "m".into(),
            points: vec![(1.0, Some(2.0)), (2.0, Some(3.0))],
        }];
        let style = Style {
            width: Some(640),
            height: Some(400),
            font_size: Some(28),
            ..Style::default()
        };
        let svg = lines("t", "x (s)", "y (ms)", &series, &style).unwrap();
        assert!(
            svg.svg().contains("width=\"640\" height=\"400\""),
            "{}",
            svg.svg()
        );
        let plain = lines("t", "x (s)", "y (ms)", &series, &Style::default()).unwrap();
        // Every text (the title first) twice as large at 28 px as at the default 14 px.
        let sizes = |svg: &str| -> Vec<f64> {
            svg.split("font-size=\"")
                .skip(1)
                .map(|s| s.split('"').next().unwrap().parse().unwrap())
                .collect()
        };
        let (big, small) = (sizes(svg.svg()), sizes(plain.svg()));
        assert_eq!(big.len(), small.len());
        for (b, s) in big.iter().zip(&small) {
            assert!((b / s - 2.0).abs() < 0.08, "{b} vs {s}");
        }
        assert_eq!(svg.csv(), plain.csv());
    }
}
