//! Line charts: y against x for each series.

use super::axis::{x_ticks, Scale};
use super::figure::data_csv;
use super::{
    dashes, draw_axes, draw_marker, draw_path, draw_ticks, figure, font, palette, Absent, Chart,
    Drawn, Figure, Frame, Marks, Plot, Series, Style, REFERENCE_DASH,
};
use crate::error::Result;
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
    x_desc: &'a str,
    y_desc: &'a str,
    series: &'a [Series],
    marks: &'a Marks,
    x_scale: Scale,
    scale: Scale,
}

/// Lines with [`Marks`]: absent values as "×" on the x axis with a footnote saying why, the
/// reference series dashed black without point markers; each other series its own dash
/// pattern and point shape; ticks at the swept x values; a log y axis when the values span
/// decades, unless they are a percentage.
pub fn lines_marked(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    marks: &Marks,
    style: &Style,
) -> Result<Figure> {
    font();
    let ys = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.1))
    };
    let x_scale = if marks.log_x {
        Scale::Log
    } else {
        Scale::Linear
    };
    let xs = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| x_scale.at(p.0)))
    };
    let (xmin, xmax) = xs().fold((f64::INFINITY, f64::NEG_INFINITY), |a, x| {
        (a.0.min(x), a.1.max(x))
    });
    let (xmin, xmax) = if xmin.is_finite() && xmax > xmin {
        (xmin, xmax)
    } else {
        (0.0, 1.0)
    };
    // A distribution function's fractions stay on a linear axis.
    let scale = if marks.steps {
        Scale::Linear
    } else {
        Scale::for_quantity(y_desc, ys())
    };
    let ymax = ys().fold(0.0f64, f64::max);
    let ymin = ys().fold(f64::INFINITY, f64::min);
    let ymin = if ymin.is_finite() { ymin } else { 0.0 };
    let y_range = match scale {
        // From zero, as before: a latency axis that starts elsewhere exaggerates.
        Scale::Linear => scale.range(ymin.min(0.0), ymax),
        Scale::Log => scale.range(ymin, ymax),
    };
    let pad = (xmax - xmin) * 0.05;
    // The legend stands beside the plot, never over a curve.
    let at = |a: &Absent| {
        series
            .get(a.series)
            .and_then(|s| s.points.get(a.point))
            .map_or(String::new(), |p| {
                format!("{} = {}", x_desc, super::axis::number(p.0))
            })
    };
    let mut frame = Frame::new(title, style, (series, marks), true, at, 16);
    frame.x_label_h = style.px(55);
    frame.y_label_w = style.px(85);
    frame.x_range = (xmin - pad, xmax + pad);
    frame.y_range = y_range;
    let size = frame.size(style.zu(760), style.zu(520));
    let csv = data_csv(None, x_desc, y_desc, series, marks);
    let chart = Lines {
        frame,
        x_desc,
        y_desc,
        series,
        marks,
        x_scale,
        scale,
    };
    figure(&chart.frame, &chart, size, csv)
}

/// Draws the lines, their markers and "×" marks.
impl Plot for Lines<'_> {
    fn plot<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &mut Chart<'_, DB>,
    ) -> Drawn {
        let l = self;
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let style = l.frame.style;
        let x_desc = l.x_scale.described(l.x_desc);
        draw_axes(chart, &x_desc, &l.scale.described(l.y_desc), style)?;
        let xs: Vec<f64> = l
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        // Sample values are no swept quantity: a distribution's x axis gets round numbers.
        let x_ticks = if l.marks.steps || l.x_scale == Scale::Log {
            l.x_scale.ticks(l.frame.x_range)
        } else {
            x_ticks(&xs, l.frame.x_range)
        };
        draw_ticks(
            root,
            chart,
            &x_ticks,
            &l.scale.ticks(l.frame.y_range),
            style,
        )?;
        let colours = palette(l.series, l.marks);
        let wide = style.stroke(2);
        // The reference first, so the methods' lines and markers stay on top of it.
        let order = l
            .marks
            .reference
            .into_iter()
            .chain((0..l.series.len()).filter(|s| l.marks.reference != Some(*s)));
        for s in order {
            let Some(ser) = l.series.get(s) else {
                continue;
            };
            let c = colours[s];
            let data: Vec<(f64, f64)> = ser
                .points
                .iter()
                .filter_map(|p| p.1.map(|y| (l.x_scale.at(p.0), l.scale.at(y))))
                .collect();
            let reference = l.marks.reference == Some(s);
            // A CDF rises at each sample: flat to it, then up.
            let path: Vec<(f64, f64)> = if l.marks.steps {
                let mut at = (l.frame.x_range.0, 0.0);
                let mut out = vec![at];
                for p in &data {
                    out.push((p.0, at.1));
                    out.push(*p);
                    at = *p;
                }
                out.push((l.frame.x_range.1, at.1));
                out
            } else {
                data.clone()
            };
            let dash = if reference {
                Some(REFERENCE_DASH)
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
            if !reference {
                for at in data {
                    draw_marker(chart.plotting_area(), s, at, c, style).map_err(e)?;
                }
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
            let marker = EmptyElement::at((x, l.frame.y_range.0))
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
