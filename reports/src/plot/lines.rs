//! Line charts: y against x for each series.

use super::axis::{x_ticks, Scale};
use super::draw::{
    dashes, draw_axes, draw_marker, draw_path, draw_ticks, font, Chart, REFERENCE_DASH,
};
use super::figure::{data_csv, Figure, Style};
use super::frame::{figure, Drawn, Frame, Plot};
use super::paint::{palette, BAND};
use super::series::{Absent, Marks, Series};
use elk_app::Result;
use plotters::coord::Shift;
use plotters::prelude::*;

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

/// A line chart's contents and layout, drawn the same on every backend.
struct Lines<'a> {
    frame: Frame<'a>,
    body: LineBody<'a>,
}

/// What one line chart (or one panel of a faceted figure) draws, on which axes.
pub(super) struct LineBody<'a> {
    /// The axes' descriptions as given (the scale adds "(log scale)"); empty: none drawn.
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub series: &'a [Series],
    pub marks: &'a Marks,
    pub axes: Axes,
}

/// The scales and ranges (axis coordinates) of a line chart's axes.
#[derive(Clone, Copy)]
pub(super) struct Axes {
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub x_range: (f64, f64),
    pub y_range: (f64, f64),
}

impl Axes {
    /// Axes holding every point of `charts` (each chart's series and marks: its spreads and
    /// its bound's band too), y described by `y_desc`: a log x axis when the first chart's
    /// marks ask for one; a log y axis when the values span decades, unless they are a
    /// percentage or a distribution's fractions; linear y from zero.
    pub(super) fn of(charts: &[(&[Series], &Marks)], y_desc: &str) -> Axes {
        let marks = charts.first().map_or(&Marks::default(), |c| c.1).clone();
        let x_scale = if marks.log_x {
            Scale::Log
        } else {
            Scale::Linear
        };
        let ys: Vec<f64> = charts
            .iter()
            .flat_map(|(series, m)| {
                let points = series
                    .iter()
                    .flat_map(|s| s.points.iter().filter_map(|p| p.1));
                let spreads = m.spread.iter().flat_map(|s| [s.lo, s.hi]);
                let band = m.bound_band.iter().flat_map(|b| [b.1, b.2]);
                points.chain(spreads).chain(band).collect::<Vec<_>>()
            })
            .collect();
        let xs: Vec<f64> = charts
            .iter()
            .flat_map(|(series, _)| series.iter().flat_map(|s| s.points.iter()))
            .map(|p| x_scale.at(p.0))
            .collect();
        let (xmin, xmax) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, x| {
            (a.0.min(*x), a.1.max(*x))
        });
        let (xmin, xmax) = if xmin.is_finite() && xmax > xmin {
            (xmin, xmax)
        } else {
            (0.0, 1.0)
        };
        // A distribution function's fractions stay on a linear axis.
        let y_scale = if marks.steps {
            Scale::Linear
        } else {
            Scale::for_quantity(y_desc, ys.iter().copied())
        };
        let ymax = ys.iter().copied().fold(0.0f64, f64::max);
        let ymin = ys.iter().copied().fold(f64::INFINITY, f64::min);
        let ymin = if ymin.is_finite() { ymin } else { 0.0 };
        let y_range = match y_scale {
            // From zero, as before: a latency axis that starts elsewhere exaggerates.
            Scale::Linear => y_scale.range(ymin.min(0.0), ymax),
            Scale::Log => y_scale.range(ymin, ymax),
        };
        let pad = (xmax - xmin) * 0.05;
        Axes {
            x_scale,
            y_scale,
            x_range: (xmin - pad, xmax + pad),
            y_range,
        }
    }
}

/// Where an absent point of `series` stands, for a footnote: "x_desc = x".
pub(super) fn absent_at(series: &[Series], x_desc: &str, a: &Absent) -> String {
    series
        .get(a.series)
        .and_then(|s| s.points.get(a.point))
        .map_or(String::new(), |p| {
            format!("{} = {}", x_desc, super::axis::number(p.0))
        })
}

/// Lines with [`Marks`]: absent values as "×" on the x axis with a footnote saying why, the
/// reference series dashed black without point markers, the bound grey (over its band); each
/// other series its own dash pattern and point shape, with whiskers where it has a spread;
/// ticks at the swept x values; a log y axis when the values span decades, unless they are
/// a percentage.
pub fn lines_marked(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    marks: &Marks,
    style: &Style,
) -> Result<Figure> {
    font();
    let axes = Axes::of(&[(series, marks)], y_desc);
    // The legend stands beside the plot, never over a curve.
    let at = |a: &Absent| absent_at(series, x_desc, a);
    let mut frame = Frame::new(title, style, (series, marks), true, at, 16);
    frame.x_label_h = style.px(55);
    frame.y_label_w = style.px(85);
    frame.x_range = axes.x_range;
    frame.y_range = axes.y_range;
    let size = frame.size(style.zu(760), style.zu(520));
    let csv = crate::csv_text::write(data_csv(None, x_desc, y_desc, series, marks));
    let chart = Lines {
        frame,
        body: LineBody {
            x_desc,
            y_desc,
            series,
            marks,
            axes,
        },
    };
    figure(&chart.frame, &chart, size, csv)
}

impl Plot for Lines<'_> {
    fn plot<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &mut Chart<'_, DB>,
    ) -> Drawn {
        self.body.draw(root, chart, self.frame.style)
    }
}

impl LineBody<'_> {
    /// Draws the axes, the ticks, the bound's band and line, the lines with their markers and
    /// whiskers, and the "×" marks.
    pub(super) fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &mut Chart<'_, DB>,
        style: &Style,
    ) -> Drawn {
        let l = self;
        let ax = l.axes;
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let x_desc = if l.x_desc.is_empty() {
            String::new()
        } else {
            ax.x_scale.described(l.x_desc)
        };
        let y_desc = if l.y_desc.is_empty() {
            String::new()
        } else {
            ax.y_scale.described(l.y_desc)
        };
        draw_axes(chart, &x_desc, &y_desc, style)?;
        let xs: Vec<f64> = l
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        // Sample values are no swept quantity: a distribution's x axis gets round numbers.
        let x_ticks = if l.marks.steps {
            ax.x_scale.ticks(ax.x_range)
        } else {
            x_ticks(&xs, ax.x_range, ax.x_scale)
        };
        draw_ticks(root, chart, &x_ticks, &ax.y_scale.ticks(ax.y_range), style)?;
        let colours = palette(l.series, l.marks);
        let wide = style.stroke(2);
        let at = |x: f64, y: f64| (ax.x_scale.at(x), ax.y_scale.at(y));
        // The bound's band first, under everything.
        if let Some(b) = l.marks.bound.and_then(|b| l.series.get(b)) {
            let band: Vec<(f64, f64, f64)> = l
                .marks
                .bound_band
                .iter()
                .filter_map(|(i, lo, hi)| b.points.get(*i).map(|p| (p.0, *lo, *hi)))
                .collect();
            let outline: Vec<(f64, f64)> = band
                .iter()
                .map(|p| at(p.0, p.2))
                .chain(band.iter().rev().map(|p| at(p.0, p.1)))
                .collect();
            if band.len() > 1 {
                chart
                    .plotting_area()
                    .draw(&Polygon::new(outline, BAND.filled()))
                    .map_err(e)?;
            }
            // A band of one point (or a point where it is flat) is a short bar.
            for (x, lo, hi) in &band {
                let (px, _) = chart.backend_coord(&at(*x, *lo));
                let (_, py_lo) = chart.backend_coord(&at(*x, *lo));
                let (_, py_hi) = chart.backend_coord(&at(*x, *hi));
                let half = style.z(5);
                root.draw(&Rectangle::new(
                    [(px - half, py_hi), (px + half, py_lo)],
                    BAND.filled(),
                ))
                .map_err(e)?;
            }
        }
        // The reference and the bound next, so the methods' lines and markers stay on top.
        let special = |s: usize| l.marks.reference == Some(s) || l.marks.bound == Some(s);
        let order = (0..l.series.len())
            .filter(|s| special(*s))
            .chain((0..l.series.len()).filter(|s| !special(*s)));
        for s in order {
            let Some(ser) = l.series.get(s) else {
                continue;
            };
            let c = colours[s];
            let data: Vec<(f64, f64)> = ser
                .points
                .iter()
                .filter_map(|p| p.1.map(|y| at(p.0, y)))
                .collect();
            // A CDF rises at each sample: flat to it, then up.
            let path: Vec<(f64, f64)> = if l.marks.steps {
                let mut at = (ax.x_range.0, 0.0);
                let mut out = vec![at];
                for p in &data {
                    out.push((p.0, at.1));
                    out.push(*p);
                    at = *p;
                }
                out.push((ax.x_range.1, at.1));
                out
            } else {
                data.clone()
            };
            let dash = if l.marks.reference == Some(s) {
                Some(REFERENCE_DASH)
            } else if l.marks.bound == Some(s) {
                None
            } else {
                dashes(s)
            };
            draw_path(
                chart.plotting_area(),
                path,
                dash,
                c.stroke_width(wide),
                style,
            )
            .map_err(e)?;
            if !special(s) {
                for at in data {
                    draw_marker(chart.plotting_area(), s, at, c, style).map_err(e)?;
                }
            }
        }
        // Whiskers over the markers, in each series' colour, with caps a few px wide.
        for sp in &l.marks.spread {
            let Some(p) = l.series.get(sp.series).and_then(|s| s.points.get(sp.point)) else {
                continue;
            };
            let (px, lo) = chart.backend_coord(&at(p.0, sp.lo));
            let (_, hi) = chart.backend_coord(&at(p.0, sp.hi));
            let ink = colours[sp.series].stroke_width(style.stroke(1));
            let cap = style.z(4);
            for path in [
                vec![(px, lo), (px, hi)],
                vec![(px - cap, lo), (px + cap, lo)],
                vec![(px - cap, hi), (px + cap, hi)],
            ] {
                root.draw(&PathElement::new(path, ink)).map_err(e)?;
            }
        }
        // An "×" on the x axis where a point is absent, in the series' colour; several at one x
        // stack upwards. Why is in the footnote.
        let mut stacked: Vec<f64> = Vec::new();
        for a in &l.marks.absent {
            let Some(&(x, _)) = l.series.get(a.series).and_then(|s| s.points.get(a.point)) else {
                continue;
            };
            let k = stacked.iter().filter(|sx| **sx == x).count() as i32;
            stacked.push(x);
            let marker = EmptyElement::at((ax.x_scale.at(x), ax.y_range.0))
                + Cross::new(
                    (0, -style.z(8) - style.z(12) * k),
                    style.zu(4),
                    colours[a.series].stroke_width(wide),
                );
            chart.plotting_area().draw(&marker).map_err(e)?;
        }
        Ok(())
    }
}

/// The distribution of each named sample as a CDF (steps up at each value, fraction of the
/// sample on y), one series per sample; a method's name in a sample's name gives it that
/// method's colour.
pub fn cdf(
    title: &str,
    x_desc: &str,
    samples: &[(String, Vec<f64>)],
    style: &Style,
) -> Result<Figure> {
    // Samples spanning decades (a gap of 1385 % beside gaps of 0.2 %) go on a log x axis,
    // where the smallest are not squeezed into one line; zeros and values below the decade
    // of the smallest positive sample are drawn at that decade, and the axis says so.
    let finite = || {
        samples
            .iter()
            .flat_map(|s| s.1.iter().copied())
            .filter(|v| v.is_finite())
    };
    let lo = finite().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let hi = finite().fold(0.0f64, f64::max);
    let floor =
        (lo.is_finite() && hi / lo >= super::axis::DECADES).then(|| 10f64.powf(lo.log10().floor()));
    let x_desc = match floor {
        Some(f) => format!("{x_desc}; below {} drawn at it", super::axis::number(f)),
        None => x_desc.to_string(),
    };
    let series: Vec<Series> = samples
        .iter()
        .map(|(name, values)| {
            let mut v: Vec<f64> = values
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .map(|v| floor.map_or(v, |f| v.max(f)))
                .collect();
            v.sort_by(f64::total_cmp);
            let n = v.len() as f64;
            Series {
                name: format!("{name} ({} instances)", v.len()),
                points: v
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (*x, Some((i + 1) as f64 / n)))
                    .collect(),
            }
        })
        .collect();
    let marks = Marks {
        steps: true,
        log_x: floor.is_some(),
        ..Marks::default()
    };
    lines_marked(
        title,
        &x_desc,
        "fraction of instances (≤ x)",
        &series,
        &marks,
        style,
    )
}
