//! The legend: a row per series, its swatch drawn as the series is (bar, outline, line with
//! its dashes and marker, the bound's grey line and band, a whisker, the "×" of absent
//! values), in a box of its own beside the plot.

use super::draw::{dashes, draw_bar, draw_marker, draw_path, text_width, INK, REFERENCE_DASH};
use super::figure::Style;
use super::paint::{self, paints, Hatch, Paint};
use super::series::{Marks, Series};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// How a legend row shows its series.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Swatch {
    /// A filled bar.
    Bar,
    /// An outlined bar (the reference).
    Outline,
    /// A line with the series' dash pattern and point shape.
    Line,
    /// A dashed line (the reference).
    Dashed,
    /// A grey line, over a light grey box when the bound spans a band.
    Bound {
        /// Whether the bound has a band.
        band: bool,
    },
    /// A whisker with caps (a line chart's spreads).
    Whisker,
    /// The "×" of absent values.
    Cross,
}

/// A legend row: label, series index (its marker and dashes), swatch, paint (a variant's
/// shade and hatch, so the legend tells variants apart as the bars do).
pub(super) type Row = (String, usize, Swatch, Paint);

/// Legend rows: one per series; the "×" line last when anything is absent. A line that
/// coincides with an earlier series says so, as it hides it.
pub(super) fn legend_rows(series: &[Series], marks: &Marks, lines: bool) -> Vec<Row> {
    let paint = paints(series, marks);
    let mut rows: Vec<Row> = series
        .iter()
        .enumerate()
        .map(|(s, ser)| {
            let swatch = match (lines, marks.reference == Some(s)) {
                _ if marks.bound == Some(s) => Swatch::Bound {
                    band: lines && !marks.bound_band.is_empty(),
                },
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
            (name, s, swatch, paint[s])
        })
        .collect();
    let ink = Paint {
        colour: INK,
        hatch: Hatch::Solid,
        ink: INK,
    };
    if lines && !marks.spread.is_empty() {
        rows.push((marks.spread_ends.legend().into(), 0, Swatch::Whisker, ink));
    }
    if let Some(l) = marks.legend() {
        rows.push((l, 0, Swatch::Cross, ink));
    }
    rows
}

const LEGEND_FONT: u32 = 14;

const LEGEND_ROW: i32 = 22;

/// The legend box's size in device pixels.
pub(super) fn legend_size(rows: &[Row], style: &Style) -> (i32, i32) {
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
pub(super) fn draw_legend<DB: DrawingBackend>(
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
    for (k, (label, s, swatch, paint)) in rows.iter().enumerate() {
        let (x, y) = (x0 + z(10), y0 + z(6) + row * k as i32 + row / 2);
        let c = paint.colour;
        let box_at = [(x, y - z(6)), (x + z(20), y + z(6))];
        let wide = style.stroke(2);
        let stroke = vec![(x - z(2), y), (x + z(22), y)];
        match swatch {
            Swatch::Bar => draw_bar(area, box_at, paint, style),
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
            Swatch::Bound { band } => {
                let band = band.then(|| Rectangle::new(box_at, paint::BAND.filled()));
                band.map_or(Ok(()), |b| area.draw(&b))
                    .and_then(|()| draw_path(area, stroke, None, c.stroke_width(wide), style))
            }
            Swatch::Whisker => {
                let (x, top, bottom) = (x + z(10), y - z(7), y + z(7));
                let ink = INK.stroke_width(style.stroke(1));
                [
                    vec![(x, top), (x, bottom)],
                    vec![(x - z(4), top), (x + z(4), top)],
                    vec![(x - z(4), bottom), (x + z(4), bottom)],
                ]
                .into_iter()
                .try_for_each(|path| area.draw(&PathElement::new(path, ink)))
            }
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
