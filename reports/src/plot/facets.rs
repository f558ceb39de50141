//! Faceted line figures: panels side by side on one y scale, one legend for all, each
//! panel one value of a dimension (an MoE routing), so series that would share one crowded
//! chart are told apart by panel rather than by near-identical colours.

use super::draw::{absent_notes, draw_notes, font, NOTE_ROW};
use super::figure::{data_csv, Figure, Style};
use super::frame::{frame, Drawing, Drawn, Frame, MAX_NOTES};
use super::legend::draw_legend;
use super::lines::{absent_at, Axes, LineBody};
use super::series::{Marks, Series};
use elk_app::{AppError, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

/// One panel of a faceted figure.
#[derive(Clone, Debug)]
pub struct Panel {
    /// What sets it apart ("routing zipf:1.2"), printed above it.
    pub title: String,
    /// Its series: the same names in the same order in every panel (one legend names them).
    pub series: Vec<Series>,
    /// Their marks (a reference or a bound at the same index in every panel).
    pub marks: Marks,
}

/// The panels in their frame.
struct Facets<'a> {
    frame: Frame<'a>,
    panels: &'a [Panel],
    bodies: Vec<LineBody<'a>>,
}

/// Line panels side by side on one y scale (a faceted figure): each panel drawn as
/// [`super::lines_marked`] draws a chart, one legend beside them all, the footnotes of every
/// panel under them (each naming its panel), and a CSV whose first column is the panel.
/// Refused: no panel, or panels whose series differ in names or order.
pub fn facets(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    panels: &[Panel],
    style: &Style,
) -> Result<Figure> {
    font();
    let refuse = |detail: &str| AppError::Plot {
        name: title.into(),
        detail: detail.into(),
    };
    let Some(first) = panels.first() else {
        return Err(refuse("a faceted figure needs at least one panel"));
    };
    let names = |p: &Panel| p.series.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    if panels.iter().any(|p| names(p) != names(first)) {
        return Err(refuse(
            "every panel of a faceted figure has the same series, in one order",
        ));
    }
    let charts: Vec<(&[Series], &Marks)> = panels
        .iter()
        .map(|p| (p.series.as_slice(), &p.marks))
        .collect();
    let axes = Axes::of(&charts, y_desc);
    // One legend for every panel: what any panel lacks or spreads, it names.
    let mut legend = first.marks.clone();
    legend.absent = panels.iter().flat_map(|p| p.marks.absent.clone()).collect();
    legend.spread = panels.iter().flat_map(|p| p.marks.spread.clone()).collect();
    let mut frame = Frame::new(
        title,
        style,
        (&first.series, &legend),
        true,
        |_| "".into(),
        16,
    );
    frame.notes = panels
        .iter()
        .flat_map(|p| {
            let at = |a: &_| format!("{}, {}", p.title, absent_at(&p.series, x_desc, a));
            absent_notes(&p.series, &p.marks, at, MAX_NOTES)
        })
        .collect();
    if frame.notes.len() > MAX_NOTES {
        let more = frame.notes.len() - (MAX_NOTES - 1);
        frame.notes.truncate(MAX_NOTES - 1);
        frame
            .notes
            .push(format!("… {more} more (every value is in the CSV)"));
    }
    frame.x_label_h = style.px(55);
    frame.y_label_w = style.px(85);
    let per_panel = style.zu(380);
    let size = frame.size(per_panel * panels.len() as u32, style.zu(520));
    // One table: the first panel's header with a `panel` column, then every panel's rows.
    let mut records: Vec<Vec<String>> = Vec::new();
    for (k, p) in panels.iter().enumerate() {
        let data = data_csv(None, x_desc, y_desc, &p.series, &p.marks);
        for (i, mut record) in data.into_iter().enumerate() {
            match (i, k) {
                (0, 0) => record.insert(0, "panel".into()),
                (0, _) => continue,
                _ => record.insert(0, p.title.clone()),
            }
            records.push(record);
        }
    }
    let csv = crate::csv_text::write(records);
    let bodies = panels
        .iter()
        .enumerate()
        .map(|(k, p)| LineBody {
            x_desc,
            // The y axis is described once, beside the first panel.
            y_desc: if k == 0 { y_desc } else { "" },
            series: &p.series,
            marks: &p.marks,
            axes,
        })
        .collect();
    let facets = Facets {
        frame,
        panels,
        bodies,
    };
    super::frame::drawn(&facets, size, csv)
}

impl Drawing for Facets<'_> {
    fn frame(&self) -> &Frame<'_> {
        &self.frame
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Drawn {
        let f = &self.frame;
        let style = f.style;
        let (plot_area, legend_area) = frame(root, f.title, f.legend_w, style)?;
        let notes_h = style.px(NOTE_ROW) * f.notes.len() as u32;
        let areas = plot_area.split_evenly((1, self.panels.len()));
        let mut notes_at = (0, 0);
        for (k, ((area, body), panel)) in
            areas.iter().zip(&self.bodies).zip(self.panels).enumerate()
        {
            let ax = body.axes;
            let mut chart = ChartBuilder::on(area)
                .margin(style.zu(12))
                .caption(&panel.title, ("sans-serif", style.px(16)))
                .x_label_area_size(f.x_label_h + notes_h)
                .y_label_area_size(f.y_label_w)
                .build_cartesian_2d(ax.x_range.0..ax.x_range.1, ax.y_range.0..ax.y_range.1)
                .map_err(|e| e.to_string())?;
            body.draw(root, &mut chart, style)?;
            if k == 0 {
                let (x, y) = chart.backend_coord(&(ax.x_range.0, ax.y_range.0));
                notes_at = (x, y + f.x_label_h as i32);
            }
        }
        draw_notes(root, notes_at, &f.notes, style)?;
        draw_legend(&legend_area, f.legend_at, &f.rows, style)?;
        root.present().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(title: &str, names: &[&str]) -> Panel {
        Panel {
            title: title.into(),
            series: names
                .iter()
                .enumerate()
                .map(|(k, n)| Series {
                    name: n.to_string(),
                    points: vec![(1.0, Some(2.0 + k as f64)), (8.0, Some(3.0))],
                })
                .collect(),
            marks: Marks::default(),
        }
    }

    #[test]
    fn panels_share_one_legend_and_the_csv_names_each_row_s_panel() {
        let style = Style::default();
        let panels = [panel("a, b", &["x", "y"]), panel("c", &["x", "y"])];
        let fig = facets("t", "batch", "ms (ms)", &panels, &style).unwrap();
        let csv: Vec<&str> = fig.csv().lines().collect();
        assert_eq!(csv[0], "panel,series,batch,ms (ms),note");
        assert_eq!(csv[1], "\"a, b\",x,1,2,");
        assert_eq!(csv[5], "c,x,1,2,");
        assert_eq!(csv.len(), 1 + 2 * 4);
        // Each series once in the legend, each panel's title once.
        for text in ["\nx\n", "\ny\n", "\na, b\n", "\nc\n"] {
            assert_eq!(fig.svg().matches(text).count(), 1, "{text:?}");
        }
        let other = [panel("a", &["x", "y"]), panel("c", &["y", "x"])];
        let err = facets("t", "batch", "ms", &other, &style).unwrap_err();
        assert!(err.to_string().contains("same series"), "{err}");
        assert!(facets("t", "batch", "ms", &[], &style).is_err());
    }
}
