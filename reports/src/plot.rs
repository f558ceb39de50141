//! SVG plots with plotters (SVG backend; the DejaVu Sans font ships in `reports/assets/` and
//! is registered here, so no system font is needed). Every axis has a description with its
//! unit; values are plotted as measured. A value a series lacks (a method without a schedule)
//! is drawn as an "×" at zero with a short label ([`Absent`]), never as a missing bar or point,
//! which a reader would take for 0 or for a plotting failure; the legend says what "×" means.

use crate::error::{ReportError, Result};
use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

type Svg<'a> = SVGBackend<'a>;
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

fn err(name: &str, e: impl std::fmt::Display) -> ReportError {
    ReportError::Plot {
        name: name.into(),
        detail: e.to_string(),
    }
}

/// One series of a chart.
pub struct Series {
    /// Legend label.
    pub name: String,
    /// Values (bars: one per category, None = missing; lines: (x, y) points).
    pub points: Vec<(f64, Option<f64>)>,
}

/// A point a series has no value for, and why: drawn as an "×" at zero with `label`.
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
    /// Values the series lack, each drawn as a labelled "×".
    pub absent: Vec<Absent>,
    /// A series that is a reference figure, not a method (Elk's Ideal): an outlined bar, a
    /// dashed line.
    pub reference: Option<usize>,
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
        (!labels.is_empty()).then(|| format!("× at 0: {}", labels.join(" / ")))
    }
}

/// Colours a reader can tell apart, printed or colour-blind (Okabe and Ito's palette, with
/// its yellow left out: it vanishes on white).
const COLOURS: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

fn colour(s: usize) -> RGBColor {
    COLOURS[s % COLOURS.len()]
}

/// The text colour of marker labels.
const INK: RGBColor = RGBColor(51, 51, 51);

/// Grouped bars: one group per category, one bar per series.
pub fn bars(title: &str, categories: &[String], series: &[Series], y_desc: &str) -> Result<String> {
    bars_marked(title, categories, series, y_desc, &Marks::default())
}

/// How a legend row shows its series.
#[derive(Clone, Copy, PartialEq)]
enum Swatch {
    /// A filled bar.
    Bar,
    /// An outlined bar (the reference).
    Outline,
    /// A line with the series' point shape.
    Line,
    /// A dashed line (the reference).
    Dashed,
    /// The "×" of absent values.
    Cross,
}

/// Legend rows: label, series index and swatch; the "×" line last when anything is absent.
fn legend_rows(series: &[Series], marks: &Marks, lines: bool) -> Vec<(String, usize, Swatch)> {
    let mut rows: Vec<(String, usize, Swatch)> = series
        .iter()
        .enumerate()
        .map(|(s, ser)| {
            let swatch = match (lines, marks.reference == Some(s)) {
                (false, false) => Swatch::Bar,
                (false, true) => Swatch::Outline,
                (true, false) => Swatch::Line,
                (true, true) => Swatch::Dashed,
            };
            (ser.name.clone(), s, swatch)
        })
        .collect();
    if let Some(l) = marks.legend() {
        rows.push((l, 0, Swatch::Cross));
    }
    rows
}

const LEGEND_FONT: u32 = 14;
const TITLE_FONT: u32 = 20;
const LABEL_FONT: u32 = 14;

/// The width of `text` in pixels at `size`.
fn text_width(area: &DrawingArea<Svg<'_>, Shift>, text: &str, size: u32) -> u32 {
    let style = TextStyle::from(("sans-serif", size).into_font());
    area.estimate_text_size(text, &style).map_or(0, |s| s.0)
}
const LEGEND_ROW: i32 = 22;

/// The legend box's size in pixels.
fn legend_size(area: &DrawingArea<Svg<'_>, Shift>, rows: &[(String, usize, Swatch)]) -> (i32, i32) {
    let width = rows
        .iter()
        .map(|r| text_width(area, &r.0, LEGEND_FONT) as i32)
        .max()
        .unwrap_or(0)
        + 52;
    (width, 12 + LEGEND_ROW * rows.len() as i32)
}

/// Draws the legend box with its top left corner at `at` in `area`: a swatch and a label per
/// row, on white, so it reads over grid lines.
fn draw_legend(
    area: &DrawingArea<Svg<'_>, Shift>,
    at: (i32, i32),
    rows: &[(String, usize, Swatch)],
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
    let text = ("sans-serif", LEGEND_FONT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let (w, h) = legend_size(area, rows);
    let (x0, y0) = at;
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + w, y0 + h)],
        WHITE.filled(),
    ))
    .map_err(e)?;
    area.draw(&Rectangle::new([(x0, y0), (x0 + w, y0 + h)], BLACK))
        .map_err(e)?;
    for (k, (label, s, swatch)) in rows.iter().enumerate() {
        let (x, y) = (x0 + 10, y0 + 6 + LEGEND_ROW * k as i32 + LEGEND_ROW / 2);
        let c = colour(*s);
        let box_at = [(x, y - 6), (x + 20, y + 6)];
        match swatch {
            Swatch::Bar => area.draw(&Rectangle::new(box_at, c.filled())),
            Swatch::Outline => area.draw(&Rectangle::new(box_at, c.stroke_width(2))),
            Swatch::Line => area
                .draw(&PathElement::new(
                    vec![(x, y), (x + 20, y)],
                    c.stroke_width(2),
                ))
                .and_then(|()| draw_marker(area, *s, (x + 10, y), c)),
            Swatch::Dashed => area.draw(&plotters::element::DashedPathElement::new(
                vec![(x, y), (x + 20, y)],
                6,
                3,
                c.stroke_width(2),
            )),
            Swatch::Cross => area.draw(&Cross::new((x + 10, y), 5, INK.stroke_width(2))),
        }
        .map_err(e)?;
        area.draw_text(label, &text, (x + 30, y)).map_err(e)?;
    }
    Ok(())
}

/// Grouped bars with [`Marks`]: absent values as labelled "×" at zero, the reference series
/// as outlined bars. The legend sits beside the plot, never over a bar.
pub fn bars_marked(
    title: &str,
    categories: &[String],
    series: &[Series],
    y_desc: &str,
    marks: &Marks,
) -> Result<String> {
    font();
    let values = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.1))
    };
    let ymax = values().fold(0.0f64, f64::max).max(1e-9);
    let ymin = values().fold(0.0f64, f64::min);
    let rows = legend_rows(series, marks, false);
    let mut svg = String::new();
    {
        // The legend column is as wide as its longest label; labels stand below the axis,
        // as deep as the longest one.
        let mut scratch = String::new();
        let probe = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let label_h = categories
            .iter()
            .map(|c| text_width(&probe, c, LABEL_FONT))
            .max()
            .unwrap_or(0)
            + 20;
        let legend_w = legend_size(&probe, &rows).0 as u32 + 24;
        // The title spans the whole figure, which is at least as wide as the title.
        let title_w = text_width(&probe, title, TITLE_FONT) + 40;
        let width = (120 + 60 * categories.len().max(4) as u32 + legend_w).max(title_w);
        let root = SVGBackend::with_string(&mut svg, (width, 440 + label_h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(title, e))?;
        let body = root
            .titled(title, ("sans-serif", TITLE_FONT))
            .map_err(|e| err(title, e))?;
        let (plot_area, legend_area) = body.split_horizontally(width - legend_w);
        let n = categories.len() as f64;
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(label_h)
            .y_label_area_size(90)
            .build_cartesian_2d(-0.5f64..n - 0.5, ymin * 1.15..ymax * 1.15)
            .map_err(|e| err(title, e))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .max_light_lines(0)
            .x_labels(0)
            .y_desc(y_desc)
            .axis_desc_style(("sans-serif", 15))
            .y_label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(title, e))?;
        // Category labels read upwards and end at their tick, so none runs into the plot.
        let upward = TextStyle::from(("sans-serif", LABEL_FONT).into_font())
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center));
        let y_axis = ymin * 1.15;
        for (i, c) in categories.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64, y_axis));
            root.draw_text(c, &upward, (x, y + 8))
                .map_err(|e| err(title, e))?;
        }
        let k = series.len().max(1) as f64;
        let w = 0.8 / k;
        let left = |s: usize, i: usize| i as f64 - 0.4 + w * s as f64;
        for (s, ser) in series.iter().enumerate() {
            let style = if marks.reference == Some(s) {
                colour(s).stroke_width(2)
            } else {
                colour(s).filled()
            };
            chart
                .draw_series(ser.points.iter().enumerate().filter_map(|(i, p)| {
                    p.1.map(|v| {
                        Rectangle::new([(left(s, i), 0.0), (left(s, i) + w * 0.9, v)], style)
                    })
                }))
                .map_err(|e| err(title, e))?;
        }
        let marker_font = ("sans-serif", 12)
            .into_font()
            .color(&INK)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for a in &marks.absent {
            let x = left(a.series, a.point) + w * 0.45;
            let marker = EmptyElement::at((x, 0.0))
                + Cross::new((0, -6), 4, colour(a.series).stroke_width(2))
                + Text::new(a.label.clone(), (0, -14), marker_font.clone());
            chart
                .plotting_area()
                .draw(&marker)
                .map_err(|e| err(title, e))?;
        }
        draw_legend(&legend_area, (4, 12), &rows).map_err(|e| err(title, e))?;
        root.present().map_err(|e| err(title, e))?;
    }
    Ok(svg)
}

/// Lines with points: y against x for each series.
pub fn lines(title: &str, x_desc: &str, y_desc: &str, series: &[Series]) -> Result<String> {
    lines_marked(title, x_desc, y_desc, series, &Marks::default())
}

/// Draws the point marker of series `s` at `at` on `area`: each series its own shape (disc,
/// triangle, square, diamond, ring), so overlapping lines stay apart.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    s: usize,
    at: CT::From,
    c: RGBColor,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let e = EmptyElement::at(at);
    let fill = c.filled();
    match s % 5 {
        0 => area.draw(&(e + Circle::new((0, 0), 4, fill))),
        1 => area.draw(&(e + TriangleMarker::new((0, 0), 5, fill))),
        2 => area.draw(&(e + Rectangle::new([(-4, -4), (4, 4)], fill))),
        3 => area.draw(&(e + Polygon::new(vec![(0, -5), (5, 0), (0, 5), (-5, 0)], fill))),
        _ => area.draw(&(e + Circle::new((0, 0), 4, c.stroke_width(2)))),
    }
}

/// Lines with [`Marks`]: absent values as labelled "×" at zero (the label names the series),
/// the reference series dashed without point markers; each series its own point shape.
pub fn lines_marked(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    marks: &Marks,
) -> Result<String> {
    font();
    let pts = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.1.map(|y| (p.0, y))))
    };
    let xs = || series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (xmin, xmax) = xs().fold((f64::INFINITY, f64::NEG_INFINITY), |a, x| {
        (a.0.min(x), a.1.max(x))
    });
    let ymax = pts().fold(0.0f64, |a, p| a.max(p.1)).max(1e-9);
    let (xmin, xmax) = if xmin.is_finite() && xmax > xmin {
        (xmin, xmax)
    } else {
        (0.0, 1.0)
    };
    let pad = (xmax - xmin) * 0.05;
    let mut svg = String::new();
    {
        // The legend stands beside the plot, never over a curve.
        let rows = legend_rows(series, marks, true);
        let mut scratch = String::new();
        let probe = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
        let legend_w = legend_size(&probe, &rows).0 as u32 + 16;
        let title_w = text_width(&probe, title, TITLE_FONT) + 40;
        let width = (760 + legend_w).max(title_w);
        let root = SVGBackend::with_string(&mut svg, (width, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(title, e))?;
        let body = root
            .titled(title, ("sans-serif", TITLE_FONT))
            .map_err(|e| err(title, e))?;
        let (plot_area, legend_area) = body.split_horizontally(width - legend_w);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(55)
            .y_label_area_size(85)
            .build_cartesian_2d(xmin - pad..xmax + pad, 0f64..ymax * 1.15)
            .map_err(|e| err(title, e))?;
        chart
            .configure_mesh()
            .max_light_lines(0)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .axis_desc_style(("sans-serif", 15))
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| err(title, e))?;
        for (s, ser) in series.iter().enumerate() {
            let c = colour(s);
            let data: Vec<(f64, f64)> = ser
                .points
                .iter()
                .filter_map(|p| p.1.map(|y| (p.0, y)))
                .collect();
            if marks.reference == Some(s) {
                chart
                    .draw_series(DashedLineSeries::new(data, 8, 5, c.stroke_width(2)))
                    .map_err(|e| err(title, e))?;
                continue;
            }
            chart
                .draw_series(LineSeries::new(data.clone(), c.stroke_width(2)))
                .map_err(|e| err(title, e))?;
            for at in data {
                draw_marker(chart.plotting_area(), s, at, c).map_err(|e| err(title, e))?;
            }
        }
        draw_absent_on_lines(&mut chart, series, marks).map_err(|e| err(title, e))?;
        draw_legend(&legend_area, (0, 12), &rows).map_err(|e| err(title, e))?;
        root.present().map_err(|e| err(title, e))?;
    }
    Ok(svg)
}

type LineChart<'a, 'b> = ChartContext<
    'a,
    Svg<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Absent points of a line chart: an "×" at (x, 0) in the series' colour and "name: why"
/// beside it; several at one x stack upwards. Labels in the right half of the chart read
/// leftwards, so none runs off the plot.
fn draw_absent_on_lines(
    chart: &mut LineChart<'_, '_>,
    series: &[Series],
    marks: &Marks,
) -> std::result::Result<(), String> {
    let x_mid = {
        let r = chart.x_range();
        (r.start + r.end) / 2.0
    };
    let mut stacked: Vec<(f64, i32)> = Vec::new();
    for a in &marks.absent {
        let Some(&(x, _)) = series.get(a.series).and_then(|s| s.points.get(a.point)) else {
            continue;
        };
        let k = stacked.iter().filter(|(sx, _)| *sx == x).count() as i32;
        stacked.push((x, k));
        let dy = -8 - 16 * k;
        let (h, dx) = if x > x_mid {
            (HPos::Right, -9)
        } else {
            (HPos::Left, 9)
        };
        let text = ("sans-serif", 12)
            .into_font()
            .color(&INK)
            .pos(Pos::new(h, VPos::Center));
        let name = series.get(a.series).map_or("", |s| s.name.as_str());
        let marker = EmptyElement::at((x, 0.0))
            + Cross::new((0, dy), 4, colour(a.series).stroke_width(2))
            + Text::new(format!("{name}: {}", a.label), (dx, dy), text);
        chart
            .plotting_area()
            .draw(&marker)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
