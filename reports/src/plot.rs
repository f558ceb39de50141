//! SVG plots with plotters (SVG backend; the DejaVu Sans font ships in `reports/assets/` and
//! is registered here, so no system font is needed). Every axis has a description with its
//! unit; values are plotted as measured.

use crate::error::{ReportError, Result};
use plotters::prelude::*;
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

/// Grouped bars: one group per category, one bar per series.
pub fn bars(title: &str, categories: &[String], series: &[Series], y_desc: &str) -> Result<String> {
    font();
    let ymax = series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|p| p.1))
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let ymin = series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|p| p.1))
        .fold(0.0f64, f64::min);
    let mut svg = String::new();
    {
        let width = (160 + 70 * categories.len().max(4)) as u32;
        let root = SVGBackend::with_string(&mut svg, (width, 520)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(title, e))?;
        let n = categories.len() as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(90)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5f64..n - 0.5, ymin * 1.15..ymax * 1.15)
            .map_err(|e| err(title, e))?;
        let labels = categories.to_vec();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(categories.len().max(1))
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_label_style(
                ("sans-serif", 11)
                    .into_font()
                    .transform(FontTransform::Rotate90),
            )
            .y_desc(y_desc)
            .y_label_style(("sans-serif", 12))
            .draw()
            .map_err(|e| err(title, e))?;
        let k = series.len().max(1) as f64;
        let w = 0.8 / k;
        for (s, ser) in series.iter().enumerate() {
            let color = Palette99::pick(s).to_rgba();
            let off = -0.4 + w * s as f64;
            chart
                .draw_series(ser.points.iter().enumerate().filter_map(|(i, p)| {
                    p.1.map(|v| {
                        let x0 = i as f64 + off;
                        Rectangle::new([(x0, 0.0), (x0 + w * 0.9, v)], color.filled())
                    })
                }))
                .map_err(|e| err(title, e))?
                .label(ser.name.clone())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled())
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .border_style(BLACK)
            .background_style(WHITE.mix(0.9))
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(|e| err(title, e))?;
        root.present().map_err(|e| err(title, e))?;
    }
    Ok(svg)
}

/// Lines with points: y against x for each series.
pub fn lines(title: &str, x_desc: &str, y_desc: &str, series: &[Series]) -> Result<String> {
    font();
    let pts = || {
        series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.1.map(|y| (p.0, y))))
    };
    let (xmin, xmax) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| {
        (a.0.min(p.0), a.1.max(p.0))
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
        let root = SVGBackend::with_string(&mut svg, (760, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(title, e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(xmin - pad..xmax + pad, 0f64..ymax * 1.15)
            .map_err(|e| err(title, e))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(|e| err(title, e))?;
        for (s, ser) in series.iter().enumerate() {
            let color = Palette99::pick(s).to_rgba();
            let data: Vec<(f64, f64)> = ser
                .points
                .iter()
                .filter_map(|p| p.1.map(|y| (p.0, y)))
                .collect();
            chart
                .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))
                .map_err(|e| err(title, e))?
                .label(ser.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2))
                });
            chart
                .draw_series(data.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| err(title, e))?;
        }
        // The legend where the curves are not: upper right when they fall, upper left when
        // they rise.
        let rising = series
            .iter()
            .filter_map(|s| {
                let ys: Vec<f64> = s.points.iter().filter_map(|p| p.1).collect();
                Some(ys.last()? - ys.first()?)
            })
            .sum::<f64>()
            > 0.0;
        chart
            .configure_series_labels()
            .position(if rising {
                SeriesLabelPosition::UpperLeft
            } else {
                SeriesLabelPosition::UpperRight
            })
            .border_style(BLACK)
            .background_style(WHITE.mix(0.9))
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(|e| err(title, e))?;
        root.present().map_err(|e| err(title, e))?;
    }
    Ok(svg)
}
