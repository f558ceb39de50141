//! The drawing every figure type shares: the font, text sizes and colours, bars with their
//! hatches, lines with their dash patterns, point markers, axes, ticks and footnotes.

use super::figure::Style;
use super::paint::{self, Paint};
use super::series::{Absent, Marks, Series};
use elk_app::AppError;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::Once;

static FONT: Once = Once::new();

pub(super) fn font() {
    FONT.call_once(|| {
        // The bytes are a valid TTF shipped with the crate; a failure here is a build error.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            include_bytes!("../../assets/DejaVuSans.ttf"),
        );
    });
}

pub(super) fn err(name: &str, e: impl std::fmt::Display) -> AppError {
    AppError::Plot {
        name: name.into(),
        detail: e.to_string(),
    }
}

/// The text colour of marker labels.
pub(super) const INK: RGBColor = RGBColor(51, 51, 51);

/// Light grid lines.
pub(super) const GRID: RGBColor = RGBColor(222, 222, 222);

pub(super) const TITLE_FONT: u32 = 20;
pub(super) const TICK_FONT: u32 = 14;
pub(super) const NOTE_FONT: u32 = 12;
/// Height of a footnote line, px at the default text size.
pub(super) const NOTE_ROW: u32 = 17;

/// The width of `text` in device pixels at `size`.
pub(super) fn text_width(text: &str, size: u32) -> u32 {
    let mut scratch = String::new();
    let probe = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
    let style = TextStyle::from(("sans-serif", size).into_font());
    probe.estimate_text_size(text, &style).map_or(0, |s| s.0)
}
/// Line `s`'s dash pattern (dash, gap) in px; None: solid.
pub(super) fn dashes(s: usize) -> Option<(u32, u32)> {
    [None, Some((9, 5)), Some((3, 4)), Some((16, 5))][s % 4]
}

/// The reference line's dash pattern.
pub(super) const REFERENCE_DASH: (u32, u32) = (6, 6);

/// Draws `points` as a line of series `s`: solid, or its dash pattern.
pub(super) fn draw_path<DB: DrawingBackend, CT: CoordTranslate>(
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
pub(super) fn draw_bar<DB: DrawingBackend>(
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
pub(super) fn draw_hatch<DB: DrawingBackend>(
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
pub(super) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The mesh without plotters' own ticks (ours are drawn by [`draw_ticks`]): axes, their
/// descriptions, nothing else.
pub(super) fn draw_axes<DB: DrawingBackend>(
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
pub(super) fn draw_ticks<DB: DrawingBackend>(
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
pub(super) fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
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
pub(super) fn absent_notes(
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
pub(super) fn draw_notes<DB: DrawingBackend>(
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
