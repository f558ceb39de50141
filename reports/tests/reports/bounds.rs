//! Figures carry the certificate: the certified lower bound drawn beside the methods and
//! labelled as one, Elk's ideal labelled as no bound, and MoE cells drawn one panel per
//! routing with their spread over the steps and their bound's band.

use super::figures::{
    data_bars, fig17_like, legend, method, polylines, rects, text_boxes, two_chips, Bbox,
};
use super::{header, texts};
use elk_app::cell::{CellBound, CellResult};
use elk_app::grid::Cell;
use elk_reports::report::{report, IDEAL};

/// The bound's grey (plot/paint.rs) and its band's.
const BOUND: &str = "#6E6E6E";
const BAND: &str = "#DDDDDD";

fn bound(ms: f64, source: &str) -> Option<CellBound> {
    Some(CellBound {
        bound_ms: ms,
        source: source.into(),
        min_ms: None,
        max_ms: None,
    })
}

/// The polylines of `svg` stroked in `colour`, outside the legend.
fn stroked(svg: &str, colour: &str) -> Vec<Vec<(f64, f64)>> {
    let legend = legend(svg);
    let lines: Vec<&str> = svg
        .split("<polyline ")
        .skip(1)
        .map(|p| p.split("/>").next().unwrap())
        .collect();
    polylines(svg)
        .into_iter()
        .zip(lines)
        .filter(|(_, tag)| tag.contains(&format!("stroke=\"{colour}\"")))
        .map(|(points, _)| points)
        .filter(|points| points.iter().all(|p| p.0 < legend.0))
        .collect()
}

#[test]
fn a_line_figure_draws_the_certified_bound_and_calls_ideal_no_bound() {
    let mut results = two_chips();
    // Elk-Full at 20/hbm, Ideal 0.9 of it: the bound 0.95 of it, between the two.
    for r in &mut results {
        let b = 0.95 * r.methods[2].makespan_ms.unwrap();
        r.bound = bound(b, "segment relaxation");
        for m in &mut r.methods {
            m.gap_le_pct = m.makespan_ms.map(|t| 100.0 * (t - b) / b);
        }
    }
    let files = texts(report(&results, "bounds", &header()).unwrap());
    let svg = &files.iter().find(|f| f.0 == "vs-hbm-0.svg").unwrap().1;
    let labels: Vec<String> = text_boxes(svg).into_iter().map(|t| t.0).collect();
    for want in ["certified lower bound (segment relaxation)", IDEAL] {
        assert!(labels.iter().any(|l| l == want), "{want}: {labels:?}");
    }
    assert!(!labels.iter().any(|l| l == "ideal"), "{labels:?}");
    // Its CSV rows are the bounds, exactly, each with its note and source.
    let csv = &files.iter().find(|f| f.0 == "vs-hbm-0.csv").unwrap().1;
    let rows: Vec<&str> = csv
        .lines()
        .filter(|l| l.starts_with("certified lower bound"))
        .collect();
    assert_eq!(rows.len(), 4, "{csv}");
    for (row, r) in rows.iter().zip(&results) {
        let b = r.bound.as_ref().unwrap().bound_ms;
        assert!(
            row.contains(&format!(",{b},certified lower bound; segment relaxation,")),
            "{row}"
        );
    }
    // Drawn as one grey line through four points, each at its value on the y axis (read
    // off two tick labels; to the pixel).
    let line = stroked(svg, BOUND);
    assert_eq!(line.len(), 1, "{svg}");
    assert_eq!(line[0].len(), 4);
    let tick = |label: &str| {
        let b = text_boxes(svg)
            .into_iter()
            .find(|t| t.0 == label)
            .unwrap()
            .1;
        (b.1 + b.3) / 2.0
    };
    let (zero, five) = (tick("0"), tick("5"));
    for (p, r) in line[0].iter().zip(&results) {
        let v = r.bound.as_ref().unwrap().bound_ms;
        let want = zero + (five - zero) * v / 5.0;
        assert!(
            (p.1 - want).abs() <= 1.5,
            "{v} ms drawn at y {} for {want}",
            p.1
        );
    }
    // The README's table has the bound, and says what the grey line is.
    let md = &files[0].1;
    assert!(md.contains("| certified bound ms |"), "{md}");
    assert!(md.contains("certified lower bound in grey"), "{md}");
    // The headline is the largest certified gap, not a ratio of nothing.
    let finding = &files.iter().find(|f| f.0 == "finding.json").unwrap().1;
    assert!(
        finding.contains("\"number\": \"≤ 5.26 % (elk-full's largest certified gap"),
        "{finding}"
    );
}

#[test]
fn a_bar_figure_draws_the_bound_as_a_rule_across_each_configuration() {
    let mut results = fig17_like();
    for r in &mut results {
        let full = r.methods[2].makespan_ms.unwrap();
        r.bound = bound(0.95 * full, "roofline");
    }
    let files = texts(report(&results, "bars", &header()).unwrap());
    let svg = &files.iter().find(|f| f.0 == "latency.svg").unwrap().1;
    // The bound takes no bar: 8 configurations × 3 methods and Ideal, 2 absent, as without.
    assert_eq!(data_bars(svg).len(), 8 * 4 - 2);
    let rules = stroked(svg, BOUND);
    assert_eq!(rules.len(), 8, "one rule per configuration");
    // Each rule is level and spans its configuration's bars, on top of Elk-Full's bar.
    let full_bars: Vec<Bbox> = rects(svg)
        .into_iter()
        .filter(|r| r.0 == "#CC79A7")
        .map(|r| r.2)
        .filter(|b| b.2 - b.0 != 20.0)
        .collect();
    assert_eq!(full_bars.len(), 8);
    for (rule, bar) in rules.iter().zip(&full_bars) {
        assert_eq!(rule[0].1, rule[1].1, "{rule:?}");
        assert!(rule[0].0 < bar.0 && bar.2 < rule[1].0, "{rule:?} {bar:?}");
        assert!(
            bar.1 < rule[0].1,
            "the bar reaches above its bound: {rule:?} {bar:?}"
        );
    }
    let labels: Vec<String> = text_boxes(svg).into_iter().map(|t| t.0).collect();
    assert!(labels
        .iter()
        .any(|l| l == "certified lower bound (roofline)"));
    assert!(labels.iter().any(|l| l == IDEAL));
}

/// Routed MoE cells: two routings × two HBM bandwidths, the policies with their spread over
/// the steps and the bound with the range of the steps' bounds.
fn moe_cells() -> Vec<CellResult> {
    let mut out = Vec::new();
    for hbm in [4.0, 16.0] {
        for routing in ["uniform", "zipf:1.2"] {
            let mut cell = Cell::decode("mixtral-8x7b", 8, 2048);
            cell.hbm_tbps = Some(hbm);
            cell.routing = Some(routing.into());
            cell.index = out.len();
            let scale = 16.0 / hbm;
            let methods = [("load-all", 14.0), ("on-demand", 13.0), ("oracle", 12.0)]
                .iter()
                .map(|(name, ms)| {
                    let mut m = method(name, Some(ms * scale));
                    m.p50_ms = Some(0.99 * ms * scale);
                    m.p99_ms = Some(1.05 * ms * scale);
                    m
                })
                .collect();
            out.push(CellResult {
                figure: "vs-hbm".into(),
                cell,
                ops: 0,
                ideal_ms: None,
                methods,
                bound: Some(CellBound {
                    bound_ms: 11.0 * scale,
                    source: "roofline".into(),
                    min_ms: Some(10.5 * scale),
                    max_ms: Some(11.5 * scale),
                }),
                ideal_unreachable: None,
                error: None,
                does_not_fit: false,
            });
        }
    }
    out
}

#[test]
fn moe_panels_whose_bounds_differ_share_one_bound_legend() {
    // Under one routing the steps' bound is the roofline, under the other the stage
    // relaxation on some steps and the roofline on the rest: the panels still draw one
    // series, named for both sources (the counts stay in the CSV).
    let mut results = moe_cells();
    for r in &mut results {
        if r.cell.routing.as_deref() == Some("zipf:1.2") {
            r.bound.as_mut().unwrap().source =
                "stage relaxation on 7 of 10 steps, roofline on 3 of 10 steps".into();
        }
    }
    let files = texts(report(&results, "moe", &header()).unwrap());
    let svg = &files.iter().find(|f| f.0.ends_with(".svg")).unwrap().1;
    let labels: Vec<String> = text_boxes(svg).into_iter().map(|t| t.0).collect();
    let want = "certified lower bound (per point: roofline or stage relaxation)";
    assert_eq!(
        labels.iter().filter(|l| *l == want).count(),
        1,
        "{labels:?}"
    );
}

#[test]
fn moe_cells_are_one_figure_with_a_panel_per_routing_spread_and_band() {
    let results = moe_cells();
    let files = texts(report(&results, "moe", &header()).unwrap());
    let svgs: Vec<_> = files.iter().filter(|f| f.0.ends_with(".svg")).collect();
    assert_eq!(svgs.len(), 1, "one figure holds both routings");
    let svg = &svgs[0].1;
    let labels: Vec<String> = text_boxes(svg).into_iter().map(|t| t.0).collect();
    for want in [
        "routing uniform",
        "routing zipf:1.2",
        "certified lower bound (roofline)",
        "point: mean; whisker: p50 to p99",
    ] {
        assert_eq!(
            labels.iter().filter(|l| *l == want).count(),
            1,
            "{want}: {labels:?}"
        );
    }
    // The oracle is the black dashed reference; no Ideal in an MoE figure.
    assert!(!labels.iter().any(|l| l == IDEAL), "{labels:?}");
    let csv = &files.iter().find(|f| f.0 == "vs-hbm-0.csv").unwrap().1;
    assert!(
        csv.contains("routing uniform,oracle,4,48,reference; p50 "),
        "{csv}"
    );
    // A band per panel, its edges at the steps' lowest and highest bound; whiskers in each
    // policy's colour, three strokes each (the bar and two caps): 3 policies × 2 points ×
    // 2 panels.
    let bands = svg
        .matches(&format!("<polygon opacity=\"1\" fill=\"{BAND}\""))
        .count();
    assert_eq!(bands, 2, "{svg}");
    let whisker_strokes = svg.matches("stroke-width=\"1\" points=").count();
    assert!(whisker_strokes >= 3 * 3 * 2 * 2, "{whisker_strokes}");
    // The CSV: a panel column first, the spread and the band in the notes.
    assert!(
        csv.starts_with("panel,series,HBM bandwidth (TB/s),latency (ms),note"),
        "{csv}"
    );
    assert!(
        csv.contains("routing zipf:1.2,load-all,16,14,p50 13.86 p99 14.700000000000001,"),
        "{csv}"
    );
    assert!(
        csv.contains(
            "routing uniform,certified lower bound (roofline),4,44,certified lower bound; range 42 to 46; roofline,"
        ),
        "{csv}"
    );
    // The table names the routing of every row and says the values are means.
    let md = &files[0].1;
    assert!(
        md.contains("| routing | HBM bandwidth (TB/s) | load-all mean ms |"),
        "{md}"
    );
}
