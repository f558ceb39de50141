//! Figures with plotters: SVG by default, PNG on request ([`Format`]), each with a CSV of
//! exactly the numbers it plots ([`Figure::files`]). The DejaVu Sans font ships in
//! `reports/assets/` and is registered here, so no system font is needed, and SVG and PNG
//! share one layout.
//!
//! Every report and study draws through this module, so every figure follows one set of
//! conventions:
//! - one colour per method in every figure (Okabe and Ito's colour-blind-safe palette, its
//!   yellow left out), Elk's Ideal in black as a reference: an outlined bar, a dashed line;
//! - lines differ in dash pattern and point shape too, so series that coincide stay visible,
//!   and the legend says which series coincide;
//! - the legend stands in its own column beside the plot, never over data;
//! - category labels read upwards and end below the axis; categories that belong together
//!   (a model's configurations) are grouped, with separators and a group label;
//! - a value a series lacks (a method without a schedule) is an "×" on the axis in the
//!   series' colour, never a missing bar or point, which a reader would take for 0 or for a
//!   plotting failure; the legend and a footnote under the plot say why;
//! - ticks at round numbers without a spurious ".0", at the swept values on a swept axis,
//!   and a log axis where positive values span decades (`plot::axis`);
//! - every axis has a description with its unit; values are plotted as measured.

mod axis;
mod bars;
mod figure;
mod lines;

pub use bars::{bars, bars_marked};
pub use figure::{relink, Figure, Format, Style};
pub use lines::{cdf, lines, lines_marked};

use crate::error::{ReportError, Result};
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

fn err(name: &str, e: impl std::fmt::Display) -> ReportError {
    ReportError::Plot {
        name: name.into(),
        detail: e.to_string(),
    }
}

/// One series of a chart.
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
    /// Bars: runs of consecutive categories that belong together (a model's
    /// configurations), as (label, number of categories); drawn with a separator between
    /// runs and the label below their category labels. Empty: no groups.
    pub groups: Vec<(String, usize)>,
    /// Bars: the spread of the samples behind a bar (a median's min and max), drawn as a
    /// whisker with caps.
    pub spread: Vec<Spread>,
    /// Lines: each series is a distribution function, drawn as steps (a CDF).
    pub steps: bool,
    /// Lines: a log x axis (the x values are all positive).
    pub log_x: bool,
}

/// The spread of the samples behind one bar.
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

/// Colours a reader can tell apart, printed or colour-blind (Okabe and Ito's palette, with
/// its yellow left out: it vanishes on white). The first four are the methods'.
const COLOURS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];

/// Each method's colour, the same in every figure (longest names first, so "elk-full" is
/// not taken for another method's name inside it).
const METHOD_COLOURS: [(&str, usize); 4] =
    [("elk-full", 3), ("elk-dyn", 2), ("static", 1), ("basic", 0)];

/// The reference (Ideal).
const REFERENCE: RGBColor = RGBColor(0, 0, 0);

/// Whether series `name` is about `method`: the method's name as a word of it ("elk-full",
/// "elk-full, C distributed", "llama2-13b elk-full"), not as part of a longer name
/// ("elk-full-greedy" is another method, with a colour of its own).
fn names_method(name: &str, method: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c == '-' || c.is_alphanumeric());
    name.match_indices(method).any(|(at, _)| {
        !part(name[..at].chars().next_back()) && !part(name[at + method.len()..].chars().next())
    })
}

/// Every series' colour: the reference black, a method its own, any other series the
/// palette's next colour that no method of this chart uses (the non-method colours first).
fn palette(series: &[Series], marks: &Marks) -> Vec<RGBColor> {
    let method = |name: &str| {
        let name = name.to_lowercase();
        METHOD_COLOURS
            .iter()
            .find(|(m, _)| names_method(&name, m))
            .map(|m| m.1)
    };
    let taken: Vec<usize> = series.iter().filter_map(|s| method(&s.name)).collect();
    // Other series take the colours no method owns first, so they are not read as one.
    let mut free = [4, 5, 0, 1, 2, 3]
        .into_iter()
        .filter(|c| !taken.contains(c))
        .cycle();
    series
        .iter()
        .enumerate()
        .map(|(s, ser)| {
            if marks.reference == Some(s) {
                REFERENCE
            } else if let Some(c) = method(&ser.name) {
                COLOURS[c]
            } else {
                COLOURS[free.next().unwrap_or(s % COLOURS.len())]
            }
        })
        .collect()
}

/// The text colour of marker labels.
const INK: RGBColor = RGBColor(51, 51, 51);

/// Light grid lines.
const GRID: RGBColor = RGBColor(222, 222, 222);

/// How a legend row shows its series.
#[derive(Clone, Copy, PartialEq)]
enum Swatch {
    /// A filled bar.
    Bar,
    /// An outlined bar (the reference).
    Outline,
    /// A line with the series' dash pattern and point shape.
    Line,
    /// A dashed line (the reference).
    Dashed,
    /// The "×" of absent values.
    Cross,
}

/// A legend row: label, series index (its marker and dashes), swatch, colour.
type Row = (String, usize, Swatch, RGBColor);

/// Legend rows: one per series; the "×" line last when anything is absent. A line that
/// coincides with an earlier series says so, as it hides it.
fn legend_rows(series: &[Series], marks: &Marks, lines: bool) -> Vec<Row> {
    let colours = palette(series, marks);
    let mut rows: Vec<Row> = series
        .iter()
        .enumerate()
        .map(|(s, ser)| {
            let swatch = match (lines, marks.reference == Some(s)) {
                (false, false) => Swatch::Bar,
                (false, true) => Swatch::Outline,
                (true, false) => Swatch::Line,
                (true, true) => Swatch::Dashed,
            };
            let mut name = ser.name.clone();
            let same = series[..s]
                .iter()
                .find(|o| o.points == ser.points && ser.points.iter().any(|p| p.1.is_some()));
            if let (true, Some(o)) = (lines, same) {
                name.push_str(&format!(" (= {})", o.name));
            }
            (name, s, swatch, colours[s])
        })
        .collect();
    if let Some(l) = marks.legend() {
        rows.push((l, 0, Swatch::Cross, INK));
    }
    rows
}

const LEGEND_FONT: u32 = 14;
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
const LEGEND_ROW: i32 = 22;

/// The legend box's size in device pixels.
fn legend_size(rows: &[Row], style: &Style) -> (i32, i32) {
    let width = rows
        .iter()
        .map(|r| text_width(&r.0, style.px(LEGEND_FONT)) as i32)
        .max()
        .unwrap_or(0)
        + style.z(52);
    (
        width,
        style.z(12) + style.len(LEGEND_ROW) * rows.len() as i32,
    )
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

/// Draws the legend box with its top left corner at `at` in `area`: a swatch and a label per
/// row, on white, so it reads over grid lines.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    rows: &[Row],
    style: &Style,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let text = ("sans-serif", style.px(LEGEND_FONT))
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let (w, h) = legend_size(rows, style);
    let row = style.len(LEGEND_ROW);
    let z = |v| style.z(v);
    let (x0, y0) = at;
    area.draw(&Rectangle::new(
        [(x0, y0), (x0 + w, y0 + h)],
        WHITE.filled(),
    ))
    .map_err(e)?;
    // The frame in grey ink, apart from the black of the reference's outlined bars.
    let frame: ShapeStyle = INK.stroke_width(style.stroke(1));
    area.draw(&Rectangle::new([(x0, y0), (x0 + w, y0 + h)], frame))
        .map_err(e)?;
    for (k, (label, s, swatch, c)) in rows.iter().enumerate() {
        let (x, y) = (x0 + z(10), y0 + z(6) + row * k as i32 + row / 2);
        let c = *c;
        let box_at = [(x, y - z(6)), (x + z(20), y + z(6))];
        let wide = style.stroke(2);
        let stroke = vec![(x - z(2), y), (x + z(22), y)];
        match swatch {
            Swatch::Bar => area.draw(&Rectangle::new(box_at, c.filled())),
            Swatch::Outline => area.draw(&Rectangle::new(box_at, c.stroke_width(wide))),
            Swatch::Line => draw_path(area, stroke, dashes(*s), c.stroke_width(wide), style)
                .and_then(|()| draw_marker(area, *s, (x + z(10), y), c, style)),
            Swatch::Dashed => draw_path(
                area,
                stroke,
                Some(REFERENCE_DASH),
                c.stroke_width(wide),
                style,
            ),
            Swatch::Cross => area.draw(&Cross::new(
                (x + z(10), y),
                style.zu(5),
                INK.stroke_width(wide),
            )),
        }
        .map_err(e)?;
        area.draw_text(label, &text, (x + z(30), y)).map_err(e)?;
    }
    Ok(())
}

/// A figure `width` device pixels wide and its legend column: the legend keeps its width
/// while the plot keeps at least 200 px; in a narrower figure the legend gets what is left.
fn fit(width: u32, legend_w: u32, style: &Style) -> (u32, u32) {
    let width = width.max(style.zu(240));
    (width, legend_w.min(width - style.zu(200)))
}

/// Draws `draw` on a `size` canvas of the style's format: the SVG text or the PNG bytes.
fn render(
    title: &str,
    size: (u32, u32),
    style: &Style,
    draw: impl FnOnce(Canvas<'_>) -> std::result::Result<(), String>,
) -> Result<Vec<u8>> {
    match style.format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
                draw(Canvas::Svg(root)).map_err(|e| err(title, e))?;
            }
            Ok(svg.into_bytes())
        }
        Format::Png { dpi } => {
            let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
                draw(Canvas::Png(root)).map_err(|e| err(title, e))?;
            }
            figure::png(&rgb, size, dpi).map_err(|e| err(title, e))
        }
    }
}

/// A figure's drawing area on one of the backends.
enum Canvas<'a> {
    Svg(DrawingArea<SVGBackend<'a>, Shift>),
    Png(DrawingArea<BitMapBackend<'a>, Shift>),
}

/// A white figure with its title on top: the areas of the plot and of the legend column
/// (`legend_w` wide) below the title.
type Areas<DB> = (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>);

fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    legend_w: u32,
    style: &Style,
) -> std::result::Result<Areas<DB>, String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let (width, _) = root.dim_in_pixel();
    root.fill(&WHITE).map_err(e)?;
    // plotters sets the title 5 px below the top whatever its size: zoomed, so is the gap.
    let body = root
        .margin(style.z(5) - 5, 0, 0, 0)
        .titled(title, ("sans-serif", style.px(TITLE_FONT)))
        .map_err(e)?;
    Ok(body.split_horizontally(width - legend_w))
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
    fn a_method_has_one_colour_in_every_figure_and_variants_their_own() {
        let named = |names: &[&str]| -> Vec<RGBColor> {
            let series: Vec<Series> = names
                .iter()
                .map(|n| Series {
                    name: n.to_string(),
                    points: Vec::new(),
                })
                .collect();
            palette(&series, &Marks::default())
        };
        let a = named(&["basic", "elk-full"]);
        let b = named(&[
            "elk-full, single broadcast",
            "llama2-13b elk-full",
            "elk-full-greedy",
        ]);
        assert_eq!(a[1], COLOURS[3]);
        assert_eq!(b[0], COLOURS[3]);
        assert_eq!(b[1], COLOURS[3]);
        assert_ne!(b[2], COLOURS[3]);
        assert_eq!(a[0], named(&["static", "basic"])[1]);
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
