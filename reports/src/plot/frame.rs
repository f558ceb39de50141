//! The frame every chart is drawn in, and the road from a drawing to a figure's bytes: the
//! title on top, the legend column beside the plot, the footnotes under the x labels
//! ([`Frame`]), one chart or several panels drawn on either backend ([`Drawing`]) and
//! rendered as SVG or PNG ([`drawn`]). Apart from `plot.rs` because it is the layout that
//! every chart type shares, while `plot.rs` holds the marks drawn inside it.

use super::draw::{
    absent_notes, draw_notes, err, text_width, Chart, NOTE_FONT, NOTE_ROW, TITLE_FONT,
};
use super::figure::{Figure, Format, Style};
use super::legend::{draw_legend, legend_rows, legend_size, Row};
use super::series::{Absent, Marks, Series};
use elk_app::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

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
            super::figure::png(&rgb, size, dpi).map_err(|e| err(title, e))
        }
    }
}

/// At most this many footnote lines under a chart.
pub(super) const MAX_NOTES: usize = 6;

/// What a chart's drawing returns: nothing, or what went wrong.
pub(super) type Drawn = std::result::Result<(), String>;

/// The frame every chart is drawn in: the title on top, the legend column beside the plot,
/// the axes' label areas and the footnotes under the x labels.
pub(super) struct Frame<'a> {
    pub(super) title: &'a str,
    pub(super) style: &'a Style,
    /// The legend column's width, device pixels.
    pub(super) legend_w: u32,
    /// The legend box's top left corner in its column.
    pub(super) legend_at: (i32, i32),
    pub(super) rows: Vec<Row>,
    pub(super) notes: Vec<String>,
    /// Depth of the x labels (and group labels) under the axis; the footnotes go below.
    pub(super) x_label_h: u32,
    /// Width of the y labels and description.
    pub(super) y_label_w: u32,
    /// The axes' ranges, in axis coordinates.
    pub(super) x_range: (f64, f64),
    pub(super) y_range: (f64, f64),
}

impl<'a> Frame<'a> {
    /// The frame of a chart of `series` with `marks`: a legend row per series (line
    /// swatches for `lines`), a footnote per reason a value is absent (`at` names its
    /// place), a legend column `pad` px wider than its box. The chart sets the label areas
    /// and the axes' ranges.
    pub(super) fn new(
        title: &'a str,
        style: &'a Style,
        (series, marks): (&[Series], &Marks),
        lines: bool,
        at: impl Fn(&Absent) -> String,
        pad: u32,
    ) -> Frame<'a> {
        let rows = legend_rows(series, marks, lines);
        let notes = absent_notes(series, marks, at, MAX_NOTES);
        Frame {
            title,
            style,
            legend_w: legend_size(&rows, style).0 as u32 + style.zu(pad),
            legend_at: (0, style.z(12)),
            rows,
            notes,
            x_label_h: 0,
            y_label_w: 0,
            x_range: (0.0, 1.0),
            y_range: (0.0, 1.0),
        }
    }

    /// The figure's size, for a plot `plot_w` wide and `plot_h` high with its labels: the
    /// legend column beside it, the footnotes below, at least as wide as the title and the
    /// footnotes; or the style's size, the legend column narrowed to fit it.
    pub(super) fn size(&mut self, plot_w: u32, plot_h: u32) -> (u32, u32) {
        let style = self.style;
        let title_w = text_width(self.title, style.px(TITLE_FONT)) + style.zu(40);
        let notes_w = self
            .notes
            .iter()
            .map(|n| text_width(n, style.px(NOTE_FONT)) + style.zu(120))
            .max()
            .unwrap_or(0);
        let notes_h = style.px(NOTE_ROW) * self.notes.len() as u32;
        let layout_w = (plot_w + self.legend_w).max(title_w).max(notes_w);
        let (width, height) = style.size(layout_w, plot_h + notes_h);
        let (width, legend_w) = fit(width, self.legend_w, style);
        self.legend_w = legend_w;
        (width, height)
    }
}

/// A chart type (bars, lines): what it draws in its frame.
pub(super) trait Plot {
    /// Draws the axes' descriptions, the ticks and the data on `chart` (labels outside the
    /// plot on `root`).
    fn plot<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &mut Chart<'_, DB>,
    ) -> Drawn;
}

/// A whole figure's drawing on any backend: one chart in its frame, or panels.
pub(super) trait Drawing {
    /// The frame: title, style, legend, footnotes.
    fn frame(&self) -> &Frame<'_>;
    /// Draws everything on `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn;
}

/// One chart `p` in its frame.
struct Single<'a, P> {
    frame: &'a Frame<'a>,
    plot: &'a P,
}

impl<P: Plot> Drawing for Single<'_, P> {
    fn frame(&self) -> &Frame<'_> {
        self.frame
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        draw_chart(root, self.frame, self.plot)
    }
}

/// Draws chart `p` in `frame` on a `size` canvas of the style's format: the figure, with
/// `csv`.
pub(super) fn figure(
    frame: &Frame<'_>,
    p: &impl Plot,
    size: (u32, u32),
    csv: String,
) -> Result<Figure> {
    drawn(&Single { frame, plot: p }, size, csv)
}

/// Draws `d` on a `size` canvas of its style's format: the figure, with `csv`.
pub(super) fn drawn(d: &impl Drawing, size: (u32, u32), csv: String) -> Result<Figure> {
    let frame = d.frame();
    let image = render(frame.title, size, frame.style, |canvas| match canvas {
        Canvas::Svg(root) => d.draw(&root),
        Canvas::Png(root) => d.draw(&root),
    })?;
    Ok(Figure {
        image,
        format: frame.style.format,
        csv,
    })
}

/// Draws chart `p` in frame `f`: title, axes, the plot, footnotes under the x labels, the
/// legend beside.
fn draw_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    f: &Frame<'_>,
    p: &impl Plot,
) -> Drawn {
    let style = f.style;
    let (plot_area, legend_area) = frame(root, f.title, f.legend_w, style)?;
    let notes_h = style.px(NOTE_ROW) * f.notes.len() as u32;
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(style.zu(12))
        .x_label_area_size(f.x_label_h + notes_h)
        .y_label_area_size(f.y_label_w)
        .build_cartesian_2d(f.x_range.0..f.x_range.1, f.y_range.0..f.y_range.1)
        .map_err(|e| e.to_string())?;
    p.plot(root, &mut chart)?;
    let (left_x, axis_y) = chart.backend_coord(&(f.x_range.0, f.y_range.0));
    draw_notes(root, (left_x, axis_y + f.x_label_h as i32), &f.notes, style)?;
    draw_legend(&legend_area, f.legend_at, &f.rows, style)?;
    root.present().map_err(|e| e.to_string())
}

/// A figure's drawing area on one of the backends.
enum Canvas<'a> {
    Svg(DrawingArea<SVGBackend<'a>, Shift>),
    Png(DrawingArea<BitMapBackend<'a>, Shift>),
}

/// A white figure with its title on top: the areas of the plot and of the legend column
/// (`legend_w` wide) below the title.
type Areas<DB> = (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>);

pub(super) fn frame<DB: DrawingBackend>(
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
