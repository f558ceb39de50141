//! Grouped bar charts: one group of bars per category, one bar per series.

use super::axis::Scale;
use super::draw::{draw_axes, draw_hatch, draw_ticks, font, text_width, Chart, INK};
use super::figure::{data_csv, Figure, Style, LABEL_FONT};
use super::frame::{figure, Drawn, Frame, Plot};
use super::paint::paints;
use super::series::{Absent, Marks, Series};
use elk_app::Result;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

/// A bar chart's contents and layout, drawn the same on every backend.
struct Bars<'a> {
    frame: Frame<'a>,
    categories: &'a [String],
    series: &'a [Series],
    y_desc: &'a str,
    marks: &'a Marks,
    label_h: u32,
    scale: Scale,
}

/// Grouped bars with [`Marks`]: absent values as "×" on the axis with a footnote that says
/// why, the reference series as outlined black bars, the bound series as a grey rule across
/// each category's bars, groups of categories with separators and labels. The legend sits beside the plot, never over a bar; a log axis when the values
/// span decades, unless they are a percentage; a method's variants in shades and hatches of
/// its colour.
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
            .chain(marks.spread.iter().flat_map(|s| [s.lo, s.hi]))
    };
    let scale = Scale::for_quantity(y_desc, values());
    let ymax = values().fold(f64::NEG_INFINITY, f64::max);
    let ymin = values().fold(f64::INFINITY, f64::min);
    let (ymin, ymax) = if ymin.is_finite() {
        (ymin, ymax)
    } else {
        (0.0, 1.0)
    };
    let at = |a: &Absent| {
        let c = categories.get(a.point).cloned().unwrap_or_default();
        match group_of(&marks.groups, a.point) {
            Some(g) => format!("{g} {c}"),
            None => c,
        }
    };
    let mut frame = Frame::new(title, style, (series, marks), false, at, 24);
    // Labels stand below the axis, as deep as the longest one, then the group labels, then
    // the footnotes.
    let label_h = categories
        .iter()
        .map(|c| text_width(c, style.px(LABEL_FONT)))
        .max()
        .unwrap_or(0)
        + style.zu(20);
    let group_h = if marks.groups.is_empty() {
        0
    } else {
        style.px(26)
    };
    frame.legend_at = (style.z(4), style.z(12));
    frame.x_label_h = label_h + group_h;
    frame.y_label_w = style.px(90);
    frame.x_range = (-0.5, categories.len() as f64 - 0.5);
    frame.y_range = scale.range(ymin, ymax);
    // 60 px per category, more when it holds many bars (12 px each), so a hatch shows.
    let per_category = (12 * series.len() as u32).max(60);
    let size = frame.size(
        style.zu(120 + per_category * categories.len().max(4) as u32),
        style.zu(440) + label_h + group_h,
    );
    let csv = crate::csv_text::write(data_csv(
        Some(categories),
        "category",
        y_desc,
        series,
        marks,
    ));
    let bars = Bars {
        frame,
        categories,
        series,
        y_desc,
        marks,
        label_h,
        scale,
    };
    figure(&bars.frame, &bars, size, csv)
}

/// Draws the bars, their labels, groups, spreads and "×" marks.
impl Plot for Bars<'_> {
    fn plot<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        chart: &mut Chart<'_, DB>,
    ) -> Drawn {
        let b = self;
        let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let style = b.frame.style;
        draw_axes(chart, "", &b.scale.described(b.y_desc), style)?;
        draw_ticks(root, chart, &[], &b.scale.ticks(b.frame.y_range), style)?;
        let base = b.frame.y_range.0.max(0.0).min(b.frame.y_range.1);
        let base = match b.scale {
            Scale::Log => b.frame.y_range.0,
            Scale::Linear => base,
        };
        // Category labels read upwards and end at their tick, so none runs into the plot.
        let upward = TextStyle::from(("sans-serif", style.px(LABEL_FONT)).into_font())
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center));
        let (_, axis_y) = chart.backend_coord(&(0.0, b.frame.y_range.0));
        for (i, c) in b.categories.iter().enumerate() {
            let (x, _) = chart.backend_coord(&(i as f64, b.frame.y_range.0));
            root.draw_text(c, &upward, (x, axis_y + style.z(8)))
                .map_err(e)?;
        }
        draw_groups(root, chart, b, axis_y)?;
        let paints = paints(b.series, b.marks);
        let colours: Vec<RGBColor> = paints.iter().map(|p| p.colour).collect();
        // Every series but the bound has a bar slot in each category.
        let slots: Vec<usize> = (0..b.series.len())
            .scan(0, |next, s| {
                let slot = *next;
                *next += usize::from(b.marks.bound != Some(s));
                Some(slot)
            })
            .collect();
        let k = (b.series.len() - usize::from(b.marks.bound.is_some())).max(1) as f64;
        let w = 0.8 / k;
        let left = |s: usize, i: usize| i as f64 - 0.4 + w * slots[s] as f64;
        let corners = |s: usize, i: usize, v: f64| {
            [(left(s, i), base), (left(s, i) + w * 0.9, b.scale.at(v))]
        };
        for (s, ser) in b.series.iter().enumerate() {
            if b.marks.bound == Some(s) {
                continue;
            }
            let paint = if b.marks.reference == Some(s) {
                colours[s].stroke_width(style.stroke(2))
            } else {
                colours[s].filled()
            };
            chart
                .draw_series(
                    ser.points
                        .iter()
                        .enumerate()
                        .filter_map(|(i, p)| p.1.map(|v| Rectangle::new(corners(s, i, v), paint))),
                )
                .map_err(|e| e.to_string())?;
            // A variant's hatch over its fill.
            for (i, p) in ser.points.iter().enumerate() {
                let Some(v) = p.1 else { continue };
                let at = corners(s, i, v).map(|at| chart.backend_coord(&at));
                draw_hatch(root, at, &paints[s], style).map_err(e)?;
            }
        }
        // A bar too short to see (under 3 % of the axis) has its value printed above it, in its
        // own column, so it never reads as a missing value.
        let span = b.frame.y_range.1 - b.frame.y_range.0;
        let small = TextStyle::from(("sans-serif", style.px(10)).into_font())
            .color(&INK)
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (s, ser) in b.series.iter().enumerate() {
            for (i, p) in ser.points.iter().enumerate() {
                let Some(v) = p.1 else { continue };
                let top = b.scale.at(v);
                let bound = b.marks.bound == Some(s);
                if bound || (top - base).abs() >= 0.03 * span || b.scale == Scale::Log {
                    continue;
                }
                let x = left(s, i) + w * 0.45;
                let (px, py) = chart.backend_coord(&(x, top.max(base)));
                root.draw_text(&short_number(v), &small, (px, py - style.z(3)))
                    .map_err(e)?;
            }
        }
        // The bound across each category's bars, over them: no bar reaches below it.
        if let Some(s) = b.marks.bound {
            let rule = colours[s].stroke_width(style.stroke(2));
            for (i, p) in b.series[s].points.iter().enumerate() {
                let Some(v) = p.1 else { continue };
                let y = b.scale.at(v);
                let path = vec![(i as f64 - 0.45, y), (i as f64 + 0.45, y)];
                chart
                    .plotting_area()
                    .draw(&PathElement::new(path, rule))
                    .map_err(e)?;
            }
        }
        for sp in &b.marks.spread {
            let x = left(sp.series, sp.point) + w * 0.45;
            let (lo, hi) = (b.scale.at(sp.lo), b.scale.at(sp.hi));
            let ink = INK.stroke_width(style.stroke(1));
            let cap = w * 0.2;
            for path in [
                vec![(x, lo), (x, hi)],
                vec![(x - cap, lo), (x + cap, lo)],
                vec![(x - cap, hi), (x + cap, hi)],
            ] {
                chart
                    .plotting_area()
                    .draw(&PathElement::new(path, ink))
                    .map_err(e)?;
            }
        }
        // An "×" on the axis where a bar is absent, in its series' colour; why is in the
        // footnote, not in the plot, where a label would run over the neighbouring bars.
        for a in &b.marks.absent {
            let x = left(a.series, a.point) + w * 0.45;
            let marker = EmptyElement::at((x, base))
                + Cross::new(
                    (0, -style.z(6)),
                    style.zu(4),
                    colours
                        .get(a.series)
                        .copied()
                        .unwrap_or(INK)
                        .stroke_width(style.stroke(2)),
                );
            chart.plotting_area().draw(&marker).map_err(e)?;
        }
        Ok(())
    }
}

/// The label of the group that category `i` is in.
fn group_of(groups: &[(String, usize)], i: usize) -> Option<&str> {
    let mut end = 0;
    for (label, count) in groups {
        end += count;
        if i < end {
            return Some(label);
        }
    }
    None
}

/// Separators between groups of categories, across the plot, and each group's label
/// centred under its category labels.
fn draw_groups<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &super::draw::Chart<'_, DB>,
    b: &Bars<'_>,
    axis_y: i32,
) -> std::result::Result<(), String> {
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let style = b.frame.style;
    let font = ("sans-serif", style.px(15))
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    let rule = INK.stroke_width(style.stroke(1));
    let mut first = 0usize;
    for (g, (label, count)) in b.marks.groups.iter().enumerate() {
        let (lo, hi) = (first as f64 - 0.5, (first + count) as f64 - 0.5);
        if g > 0 {
            chart
                .plotting_area()
                .draw(&PathElement::new(
                    vec![(lo, b.frame.y_range.0), (lo, b.frame.y_range.1)],
                    rule,
                ))
                .map_err(e)?;
        }
        let (x0, _) = chart.backend_coord(&(lo, b.frame.y_range.0));
        let (x1, _) = chart.backend_coord(&(hi, b.frame.y_range.0));
        let y = axis_y + b.label_h as i32 + style.z(2);
        root.draw(&PathElement::new(
            vec![(x0 + style.z(4), y), (x1 - style.z(4), y)],
            rule,
        ))
        .map_err(e)?;
        root.draw_text(label, &font, ((x0 + x1) / 2, y + style.z(4)))
            .map_err(e)?;
        first += count;
    }
    Ok(())
}

/// A value printed beside a bar: two significant digits (0.043, 1.2, -0.0071).
fn short_number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = (1 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}
