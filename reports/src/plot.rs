//! Figures with plotters: SVG by default, PNG on request ([`Format`]), each with a CSV of
//! exactly the numbers it plots ([`Figure::files`]). The DejaVu Sans font ships in
//! `reports/assets/` and is registered here, so no system font is needed, and SVG and PNG
//! share one layout. Every axis has a description with its unit; values are plotted as
//! measured. A value a series lacks (a method without a schedule) is drawn as an "×" at zero
//! with a short label ([`Absent`]), never as a missing bar or point, which a reader would take
//! for 0 or for a plotting failure; the legend says what "×" means.

mod figure;

pub use figure::{relink, Figure, Format, Style};

use crate::error::{ReportError, Result};
use figure::{data_csv, LABEL_FONT};
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
pub fn bars(
    title: &str,
    categories: &[String],
    series: &[Series],
    y_desc: &str,
    style: &Style,
) -> Result<Figure> {
    bars_marked(title, categories, series, y_desc, &Marks::default(), style)
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

/// The width of `text` in device pixels at `size`.
fn text_width(text: &str, size: u32) -> u32 {
    let mut scratch = String::new();
    let probe = SVGBackend::with_string(&mut scratch, (10, 10)).into_drawing_area();
    let style = TextStyle::from(("sans-serif", size).into_font());
    probe.estimate_text_size(text, &style).map_or(0, |s| s.0)
}
const LEGEND_ROW: i32 = 22;

/// The legend box's size in device pixels.
fn legend_size(rows: &[(String, usize, Swatch)], style: &Style) -> (i32, i32) {
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

/// Draws the legend box with its top left corner at `at` in `area`: a swatch and a label per
/// row, on white, so it reads over grid lines.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    at: (i32, i32),
    rows: &[(String, usize, Swatch)],
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
    let frame: ShapeStyle = if style.stroke(1) > 1 {
        BLACK.stroke_width(style.stroke(1))
    } else {
        BLACK.into()
    };
    area.draw(&Rectangle::new([(x0, y0), (x0 + w, y0 + h)], frame))
        .map_err(e)?;
    for (k, (label, s, swatch)) in rows.iter().enumerate() {
        let (x, y) = (x0 + z(10), y0 + z(6) + row * k as i32 + row / 2);
        let c = colour(*s);
        let box_at = [(x, y - z(6)), (x + z(20), y + z(6))];
        let wide = style.stroke(2);
        match swatch {
            Swatch::Bar => area.draw(&Rectangle::new(box_at, c.filled())),
            Swatch::Outline => area.draw(&Rectangle::new(box_at, c.stroke_width(wide))),
            Swatch::Line => area
                .draw(&PathElement::new(
                    vec![(x, y), (x + z(20), y)],
                    c.stroke_width(wide),
                ))
                .and_then(|()| draw_marker(area, *s, (x + z(10), y), c, style)),
            Swatch::Dashed => area.draw(&plotters::element::DashedPathElement::new(
                vec![(x, y), (x + z(20), y)],
                style.zu(6),
                style.zu(3),
                c.stroke_width(wide),
            )),
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

/// A bar chart's contents and layout, drawn the same on every backend.
struct Bars<'a> {
    title: &'a str,
    categories: &'a [String],
    series: &'a [Series],
    y_desc: &'a str,
    marks: &'a Marks,
    style: &'a Style,
    rows: Vec<(String, usize, Swatch)>,
    label_h: u32,
    legend_w: u32,
    y_range: (f64, f64),
}

/// Grouped bars with [`Marks`]: absent values as labelled "×" at zero, the reference series
/// as outlined bars. The legend sits beside the plot, never over a bar.
pub fn bars_marked(
    title: &str,
    categories: &[String],
    series: &[Series],
    y_desc: &str,
    marks: &Marks,
    style: &Style,
) -> Result<Figure> {
    font();
    let values = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.1))
    };
    let ymax = values().fold(0.0f64, f64::max).max(1e-9);
    let ymin = values().fold(0.0f64, f64::min);
    let rows = legend_rows(series, marks, false);
    // The legend column is as wide as its longest label; labels stand below the axis, as
    // deep as the longest one.
    let label_h = categories
        .iter()
        .map(|c| text_width(c, style.px(LABEL_FONT)))
        .max()
        .unwrap_or(0)
        + style.zu(20);
    let legend_w = legend_size(&rows, style).0 as u32 + style.zu(24);
    // The title spans the whole figure, which is at least as wide as the title (unless the
    // style fixes the width).
    let title_w = text_width(title, style.px(TITLE_FONT)) + style.zu(40);
    let layout_w = (style.zu(120 + 60 * categories.len().max(4) as u32) + legend_w).max(title_w);
    let (width, height) = style.size(layout_w, style.zu(440) + label_h);
    let (width, legend_w) = fit(width, legend_w, style);
    let bars = Bars {
        title,
        categories,
        series,
        y_desc,
        marks,
        style,
        rows,
        label_h,
        legend_w,
        y_range: (ymin * 1.15, ymax * 1.15),
    };
    let image = render(title, (width, height), style, |canvas| match canvas {
        Canvas::Svg(root) => draw_bars(&root, &bars),
        Canvas::Png(root) => draw_bars(&root, &bars),
    })?;
    let csv = data_csv(Some(categories), "category", y_desc, series, marks);
    Ok(Figure {
        image,
        format: style.format,
        csv,
    })
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

fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    b: &Bars<'_>,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let style = b.style;
    let (plot_area, legend_area) = frame(root, b.title, b.legend_w, style)?;
    let n = b.categories.len() as f64;
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(style.zu(12))
        .x_label_area_size(b.label_h)
        .y_label_area_size(style.px(90))
        .build_cartesian_2d(-0.5f64..n - 0.5, b.y_range.0..b.y_range.1)
        .map_err(|e| e.to_string())?;
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .max_light_lines(0)
        .x_labels(0)
        .y_desc(b.y_desc)
        .axis_desc_style(("sans-serif", style.px(15)))
        .y_label_style(("sans-serif", style.px(14)));
    zoom_lines(&mut mesh, style);
    mesh.draw().map_err(|e| e.to_string())?;
    // Category labels read upwards and end at their tick, so none runs into the plot.
    let upward = TextStyle::from(("sans-serif", style.px(LABEL_FONT)).into_font())
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (i, c) in b.categories.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64, b.y_range.0));
        root.draw_text(c, &upward, (x, y + style.z(8))).map_err(e)?;
    }
    let k = b.series.len().max(1) as f64;
    let w = 0.8 / k;
    let left = |s: usize, i: usize| i as f64 - 0.4 + w * s as f64;
    for (s, ser) in b.series.iter().enumerate() {
        let paint = if b.marks.reference == Some(s) {
            colour(s).stroke_width(style.stroke(2))
        } else {
            colour(s).filled()
        };
        chart
            .draw_series(ser.points.iter().enumerate().filter_map(|(i, p)| {
                p.1.map(|v| Rectangle::new([(left(s, i), 0.0), (left(s, i) + w * 0.9, v)], paint))
            }))
            .map_err(|e| e.to_string())?;
    }
    let marker_font = ("sans-serif", style.px(12))
        .into_font()
        .color(&INK)
        .transform(FontTransform::Rotate270)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for a in &b.marks.absent {
        let x = left(a.series, a.point) + w * 0.45;
        let marker = EmptyElement::at((x, 0.0))
            + Cross::new(
                (0, -style.z(6)),
                style.zu(4),
                colour(a.series).stroke_width(style.stroke(2)),
            )
            + Text::new(a.label.clone(), (0, -style.z(14)), marker_font.clone());
        chart.plotting_area().draw(&marker).map_err(e)?;
    }
    draw_legend(&legend_area, (style.z(4), style.z(12)), &b.rows, style)?;
    root.present().map_err(e)?;
    Ok(())
}

/// Axis and grid lines as wide as the zoom (a PNG above 96 dpi): plotters' defaults, one
/// pixel, would vanish.
fn zoom_lines<DB: DrawingBackend>(
    mesh: &mut plotters::chart::MeshStyle<
        '_,
        '_,
        plotters::coord::types::RangedCoordf64,
        plotters::coord::types::RangedCoordf64,
        DB,
    >,
    style: &Style,
) {
    if style.stroke(1) > 1 {
        mesh.axis_style(BLACK.stroke_width(style.stroke(1)))
            .bold_line_style(BLACK.mix(0.2).stroke_width(style.stroke(1)));
    }
}

/// Lines with points: y against x for each series.
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    style: &Style,
) -> Result<Figure> {
    lines_marked(title, x_desc, y_desc, series, &Marks::default(), style)
}

/// Draws the point marker of series `s` at `at` on `area`: each series its own shape (disc,
/// triangle, square, diamond, ring), so overlapping lines stay apart.
fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    s: usize,
    at: CT::From,
    c: RGBColor,
    style: &Style,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let e = EmptyElement::at(at);
    let fill = c.filled();
    let (r4, r5) = (style.z(4), style.z(5));
    match s % 5 {
        0 => area.draw(&(e + Circle::new((0, 0), r4 as u32, fill))),
        1 => area.draw(&(e + TriangleMarker::new((0, 0), r5 as u32, fill))),
        2 => area.draw(&(e + Rectangle::new([(-r4, -r4), (r4, r4)], fill))),
        3 => area.draw(&(e + Polygon::new(vec![(0, -r5), (r5, 0), (0, r5), (-r5, 0)], fill))),
        _ => area.draw(&(e + Circle::new((0, 0), r4 as u32, c.stroke_width(style.stroke(2))))),
    }
}

/// A line chart's contents and layout, drawn the same on every backend.
struct Lines<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    series: &'a [Series],
    marks: &'a Marks,
    style: &'a Style,
    rows: Vec<(String, usize, Swatch)>,
    legend_w: u32,
    x_range: (f64, f64),
    y_max: f64,
}

/// Lines with [`Marks`]: absent values as labelled "×" at zero (the label names the series),
/// the reference series dashed without point markers; each series its own point shape.
pub fn lines_marked(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    marks: &Marks,
    style: &Style,
) -> Result<Figure> {
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
    // The legend stands beside the plot, never over a curve.
    let rows = legend_rows(series, marks, true);
    let legend_w = legend_size(&rows, style).0 as u32 + style.zu(16);
    let title_w = text_width(title, style.px(TITLE_FONT)) + style.zu(40);
    let layout_w = (style.zu(760) + legend_w).max(title_w);
    let (width, height) = style.size(layout_w, style.zu(520));
    let (width, legend_w) = fit(width, legend_w, style);
    let chart = Lines {
        title,
        x_desc,
        y_desc,
        series,
        marks,
        style,
        rows,
        legend_w,
        x_range: (xmin - pad, xmax + pad),
        y_max: ymax * 1.15,
    };
    let image = render(title, (width, height), style, |canvas| match canvas {
        Canvas::Svg(root) => draw_lines(&root, &chart),
        Canvas::Png(root) => draw_lines(&root, &chart),
    })?;
    let csv = data_csv(None, x_desc, y_desc, series, marks);
    Ok(Figure {
        image,
        format: style.format,
        csv,
    })
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    l: &Lines<'_>,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let style = l.style;
    let (plot_area, legend_area) = frame(root, l.title, l.legend_w, style)?;
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(style.zu(12))
        .x_label_area_size(style.px(55))
        .y_label_area_size(style.px(85))
        .build_cartesian_2d(l.x_range.0..l.x_range.1, 0f64..l.y_max)
        .map_err(|e| e.to_string())?;
    let mut mesh = chart.configure_mesh();
    mesh.max_light_lines(0)
        .x_desc(l.x_desc)
        .y_desc(l.y_desc)
        .axis_desc_style(("sans-serif", style.px(15)))
        .label_style(("sans-serif", style.px(14)));
    zoom_lines(&mut mesh, style);
    mesh.draw().map_err(|e| e.to_string())?;
    let wide = style.stroke(2);
    for (s, ser) in l.series.iter().enumerate() {
        let c = colour(s);
        let data: Vec<(f64, f64)> = ser
            .points
            .iter()
            .filter_map(|p| p.1.map(|y| (p.0, y)))
            .collect();
        if l.marks.reference == Some(s) {
            chart
                .draw_series(DashedLineSeries::new(
                    data,
                    style.zu(8),
                    style.zu(5),
                    c.stroke_width(wide),
                ))
                .map_err(|e| e.to_string())?;
            continue;
        }
        chart
            .draw_series(LineSeries::new(data.clone(), c.stroke_width(wide)))
            .map_err(|e| e.to_string())?;
        for at in data {
            draw_marker(chart.plotting_area(), s, at, c, style).map_err(e)?;
        }
    }
    draw_absent_on_lines(&mut chart, l.series, l.marks, style)?;
    draw_legend(&legend_area, (0, style.z(12)), &l.rows, style)?;
    root.present().map_err(e)?;
    Ok(())
}

type LineChart<'a, 'b, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// Absent points of a line chart: an "×" at (x, 0) in the series' colour and "name: why"
/// beside it; several at one x stack upwards. Labels in the right half of the chart read
/// leftwards, so none runs off the plot.
fn draw_absent_on_lines<DB: DrawingBackend>(
    chart: &mut LineChart<'_, '_, DB>,
    series: &[Series],
    marks: &Marks,
    style: &Style,
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
        let dy = -style.len(8) - style.len(16) * k;
        let (h, dx) = if x > x_mid {
            (HPos::Right, -style.z(9))
        } else {
            (HPos::Left, style.z(9))
        };
        let text = ("sans-serif", style.px(12))
            .into_font()
            .color(&INK)
            .pos(Pos::new(h, VPos::Center));
        let name = series.get(a.series).map_or("", |s| s.name.as_str());
        let marker = EmptyElement::at((x, 0.0))
            + Cross::new(
                (0, dy),
                style.zu(4),
                colour(a.series).stroke_width(style.stroke(2)),
            )
            + Text::new(format!("{name}: {}", a.label), (dx, dy), text);
        chart
            .plotting_area()
            .draw(&marker)
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
