//! Figures with plotters: SVG by default, PNG on request ([`Format`]), each with a CSV of
//! exactly the numbers it plots ([`Figure::files`]). The DejaVu Sans font ships in
//! `reports/assets/` and is registered in `plot/draw.rs`, so no system font is needed, and SVG
//! and PNG share one layout. This file only names the parts: the figure types (`bars`, `lines`,
//! `facets`), what a chart draws (`series`), the shared drawing (`draw`, `paint`, `axis`,
//! `legend`, `frame`) and the figure's files (`figure`).
//!
//! Every report and study draws through this module, so every figure follows one set of
//! conventions:
//! - one colour per method in every figure (Okabe and Ito's colour-blind-safe palette, its
//!   yellow left out), Elk's Ideal in black as a reference: an outlined bar, a dashed line;
//! - a certified lower bound in grey, never in a method's colour: a solid line without
//!   markers (over a light grey band where it spans a range), a rule across each bar group;
//! - the spread of the samples behind a point or bar as a whisker with caps (min to max, or
//!   median to 99th percentile: [`SpreadEnds`]);
//! - variants of one method in one chart ("elk-dyn, no π", "elk-dyn, depth ≤ 1") get
//!   lighter and darker shades of its colour and, on bars, hatches, in the legend too
//!   (`plot::paint`);
//! - lines differ in dash pattern and point shape too, so series that coincide stay visible,
//!   and the legend says which series coincide;
//! - the legend stands in its own column beside the plot, never over data;
//! - category labels read upwards and end below the axis; categories that belong together
//!   (a model's configurations) are grouped, with separators and a group label;
//! - a value a series lacks (a method without a schedule) is an "×" on the axis in the
//!   series' colour, never a missing bar or point, which a reader would take for 0 or for a
//!   plotting failure; the legend and a footnote under the plot say why;
//! - ticks at round numbers without a spurious ".0", at the swept values on a swept axis,
//!   and a log axis where positive values span decades, except for a percentage, which
//!   stays linear (`plot::axis`);
//! - every axis has a description with its unit; values are plotted as measured.

mod axis;
mod bars;
mod draw;
mod facets;
mod figure;
mod frame;
mod legend;
mod lines;
mod paint;
mod series;

pub use bars::{bars, bars_marked};
pub use facets::{facets, Panel};
pub use figure::{relink, Figure, Format, Style};
pub use lines::{cdf, lines, lines_marked};
pub use series::{Absent, Marks, Series, Spread, SpreadEnds};

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
