//! Layout facts read back from the SVG of report figures: no text runs over a bar, the
//! legend stands outside the data, absent values are drawn as "×", integer axes have
//! integer ticks, and a grid over two chips draws one panel per chip (or is refused when it
//! cannot be drawn honestly).
//!
//! Text boxes are estimated from the SVG (plotters writes x, y, the anchor, `dy` and the
//! font size): width 0.62 em per character (DejaVu Sans averages about 0.55 em, so the
//! estimate errs on the large side, which makes the test stricter), height 1 em around the
//! anchor as `dy` places it; a `rotate(270, x, y)` transform turns the box about (x, y).

use super::{header, texts};
use elk_app::cell::{CellResult, MethodResult, MethodStatus};
use elk_app::grid::Cell;
use elk_reports::report::report;

/// An axis-aligned box: (x0, y0, x1, y1).
pub(super) type Bbox = (f64, f64, f64, f64);

fn attr(tag: &str, name: &str) -> Option<String> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(tag[at..].split('"').next()?.to_string())
}

fn num(tag: &str, name: &str) -> f64 {
    attr(tag, name).unwrap().parse().unwrap()
}

/// Every `<text>` of `svg`: its content and estimated box.
pub(super) fn text_boxes(svg: &str) -> Vec<(String, Bbox)> {
    svg.split("<text ")
        .skip(1)
        .map(|t| {
            let open = t.split('>').next().unwrap();
            let content = t[open.len() + 1..].split("</text>").next().unwrap().trim();
            let content = content.replace("&apos;", "'").replace("&amp;", "&");
            // A space before the first attribute, as before every other.
            let tag = &format!(" {open}");
            let (x, y, size) = (num(tag, "x"), num(tag, "y"), num(tag, "font-size"));
            let w = 0.62 * size * content.chars().count() as f64;
            let (a, b) = match attr(tag, "text-anchor").as_deref() {
                Some("middle") => (-w / 2.0, w / 2.0),
                Some("end") => (-w, 0.0),
                _ => (0.0, w),
            };
            let (c, d) = match attr(tag, "dy").as_deref() {
                Some("0.76em") => (0.0, size),
                Some("-0.5ex") => (-size, 0.0),
                _ => (-0.5 * size, 0.5 * size),
            };
            let rotated = attr(tag, "transform").is_some_and(|t| t.starts_with("rotate(270"));
            let bbox = if rotated {
                (x + c, y - b, x + d, y - a)
            } else {
                (x + a, y + c, x + b, y + d)
            };
            (content, bbox)
        })
        .collect()
}

/// Every `<rect>`: fill, stroke and box.
pub(super) fn rects(svg: &str) -> Vec<(String, String, Bbox)> {
    svg.split("<rect ")
        .skip(1)
        .map(|r| {
            let tag = &format!(" {}", r.split("/>").next().unwrap());
            let (x, y) = (num(tag, "x"), num(tag, "y"));
            let (w, h) = (num(tag, "width"), num(tag, "height"));
            (
                attr(tag, "fill").unwrap(),
                attr(tag, "stroke").unwrap(),
                (x, y, x + w, y + h),
            )
        })
        .collect()
}

/// The legend box: the white rectangle that is not the background.
pub(super) fn legend(svg: &str) -> Bbox {
    let all = rects(svg);
    let background = all[0].2;
    all.iter()
        .find(|r| r.0 == "#FFFFFF" && r.2 != background)
        .unwrap()
        .2
}

pub(super) fn inside(b: Bbox, outer: Bbox) -> bool {
    b.0 >= outer.0 && b.1 >= outer.1 && b.2 <= outer.2 && b.3 <= outer.3
}

/// The data bars: coloured rectangles outside the legend (its swatches are inside).
pub(super) fn data_bars(svg: &str) -> Vec<Bbox> {
    let legend = legend(svg);
    rects(svg)
        .into_iter()
        .filter(|r| r.0 != "#FFFFFF" && !inside(r.2, legend))
        .map(|r| r.2)
        .collect()
}

/// Overlap of two boxes (more than half a pixel each way).
fn overlaps(a: Bbox, b: Bbox) -> bool {
    a.0 < b.2 - 0.5 && b.0 < a.2 - 0.5 && a.1 < b.3 - 0.5 && b.1 < a.3 - 0.5
}

fn union(boxes: &[Bbox]) -> Bbox {
    boxes.iter().fold(
        (
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NEG_INFINITY,
        ),
        |u, b| (u.0.min(b.0), u.1.min(b.1), u.2.max(b.2), u.3.max(b.3)),
    )
}

/// The points of every `<polyline>` outside the legend (data lines and grid lines).
fn line_points(svg: &str) -> Vec<(f64, f64)> {
    let legend = legend(svg);
    polylines(svg)
        .into_iter()
        .flatten()
        .filter(|(x, y)| !inside((*x, *y, *x, *y), legend))
        .collect()
}

pub(super) fn method(name: &str, ms: Option<f64>) -> MethodResult {
    MethodResult {
        status: Some(if ms.is_some() {
            MethodStatus::Scheduled
        } else {
            MethodStatus::Infeasible
        }),
        reason: ms
            .is_none()
            .then(|| "operator l0.qk: no option fits SRAM".into()),
        makespan_ms: ms,
        ..MethodResult::named(name)
    }
}

/// A result of `figure` for `cell`: Basic, Static (infeasible when `static_ms` is None),
/// Elk-Full and Ideal.
pub(super) fn result(
    figure: &str,
    cell: Cell,
    basic: f64,
    static_ms: Option<f64>,
    full: f64,
) -> CellResult {
    CellResult {
        figure: figure.into(),
        cell,
        ops: 10,
        ideal_ms: Some(full * 0.9),
        methods: vec![
            method("basic", Some(basic)),
            method("static", static_ms),
            method("elk-full", Some(full)),
        ],
        bound: None,
        ideal_unreachable: None,
        error: None,
        does_not_fit: false,
    }
}

/// A Fig-17-like grid: two models × two batches × two KV lengths, Basic a decade and more
/// slower than the rest, Static infeasible in two cells.
pub(super) fn fig17_like() -> Vec<CellResult> {
    let mut out = Vec::new();
    for (m, model) in ["llama2-13b", "opt-30b"].iter().enumerate() {
        for batch in [16, 64] {
            for kv in [2048, 4096] {
                let mut cell = Cell::decode(model, batch, kv);
                cell.index = out.len();
                let f = (1 + m) as f64 * batch as f64 / 16.0 * kv as f64 / 2048.0;
                let static_ms = (batch != 64 || kv != 4096).then_some(9.0 * f);
                out.push(result("bars", cell, 740.0 * f, static_ms, 6.0 * f));
            }
        }
    }
    out
}

#[test]
fn no_text_runs_over_a_bar_and_the_legend_stands_outside_the_data() {
    let results = fig17_like();
    let files = texts(report(&results, "layout", &header()).unwrap());
    for stem in ["latency", "pct_of_ideal"] {
        let svg = &files
            .iter()
            .find(|f| f.0 == format!("{stem}.svg"))
            .unwrap()
            .1;
        let bars = data_bars(svg);
        // 8 configurations × 3 methods (+ Ideal in the latency figure), 2 absent.
        let expected = if stem == "latency" {
            8 * 4 - 2
        } else {
            8 * 3 - 2
        };
        assert_eq!(bars.len(), expected, "{stem}");
        for (text, tb) in text_boxes(svg) {
            for b in &bars {
                assert!(
                    !overlaps(tb, *b),
                    "{stem}: text '{text}' {tb:?} over bar {b:?}"
                );
            }
        }
        let legend = legend(svg);
        assert!(
            !overlaps(legend, union(&bars)),
            "{stem}: legend over the bars"
        );
        // The groups are labelled once each, the model left out of the category labels.
        let labels: Vec<String> = text_boxes(svg).into_iter().map(|t| t.0).collect();
        for model in ["llama2-13b", "opt-30b"] {
            assert_eq!(labels.iter().filter(|l| *l == model).count(), 1, "{stem}");
        }
        assert_eq!(labels.iter().filter(|l| *l == "B16 KV2048").count(), 2);
    }
}

#[test]
fn absent_values_are_crosses_with_a_footnote_and_decades_get_a_log_axis() {
    let results = fig17_like();
    let files = texts(report(&results, "absent", &header()).unwrap());
    let svg = &files.iter().find(|f| f.0 == "latency.svg").unwrap().1;
    // Two "×" in the plot (two lines each), one in the legend.
    assert_eq!(svg.matches("<line ").count(), 2 * 3, "{svg}");
    let labels: Vec<String> = text_boxes(svg).into_iter().map(|t| t.0).collect();
    assert!(
        labels.contains(
            &"× static: infeasible at llama2-13b B64 KV4096, opt-30b B64 KV4096".to_string()
        ),
        "{labels:?}"
    );
    // Basic's 740 ms and more beside Elk's 6 ms: a log axis with decade ticks.
    assert!(
        labels.iter().any(|l| l == "latency (ms) (log scale)"),
        "{labels:?}"
    );
    for tick in ["1", "10", "100", "1000"] {
        assert!(labels.iter().any(|l| l == tick), "{tick}: {labels:?}");
    }
    // No paper figure beside a grid that is not the paper's.
    assert!(!files[0].1.contains("94"), "{}", files[0].1);
}

/// A vs-hbm grid of two chips × four HBM values.
pub(super) fn two_chips() -> Vec<CellResult> {
    let mut out = Vec::new();
    for chip in ["ipu-mk2", "mychip.toml"] {
        for hbm in [2.0, 4.0, 8.0, 16.0] {
            let mut cell = Cell::decode("llama2-7b", 16, 4096);
            cell.chip = chip.into();
            cell.hbm_tbps = Some(hbm);
            cell.index = out.len();
            let slow = if chip == "ipu-mk2" { 1.0 } else { 3.0 };
            out.push(result(
                "vs-hbm",
                cell,
                40.0 * slow / hbm,
                Some(30.0 / hbm),
                20.0 * slow / hbm,
            ));
        }
    }
    out
}

#[test]
fn a_two_chip_grid_draws_one_panel_per_chip_with_integer_ticks() {
    let results = two_chips();
    let files = texts(report(&results, "two chips", &header()).unwrap());
    let svgs: Vec<&(String, String)> = files.iter().filter(|f| f.0.ends_with(".svg")).collect();
    assert_eq!(svgs.len(), 2, "one panel per chip");
    for (chip, (name, svg)) in ["ipu-mk2", "mychip.toml"].iter().zip(&svgs) {
        let labels: Vec<String> = text_boxes(svg).into_iter().map(|t| t.0).collect();
        // The title names the chip and what the panel holds fixed.
        assert!(
            labels[0].contains(&format!("on {chip}")) && labels[0].contains("B16 KV4096"),
            "{name}: {}",
            labels[0]
        );
        // Ticks at the swept values, as integers.
        for tick in ["2", "4", "8", "16"] {
            assert!(
                labels.iter().any(|l| l == tick),
                "{name}: {tick}: {labels:?}"
            );
        }
        assert!(
            !labels.iter().any(|l| l.ends_with(".0")),
            "{name}: a fractional tick: {labels:?}"
        );
        // Four points per method: the CSV has no other chip's rows.
        let csv = &files
            .iter()
            .find(|f| f.0 == name.replace(".svg", ".csv"))
            .unwrap()
            .1;
        assert_eq!(csv.lines().filter(|l| l.starts_with("basic,")).count(), 4);
        // The legend stands beside every line.
        let legend = legend(svg);
        for p in line_points(svg) {
            assert!(
                !inside((p.0, p.1, p.0, p.1), legend),
                "{name}: {p:?} in the legend"
            );
        }
        let mut points = line_points(svg);
        points.retain(|p| p.0 < legend.0);
        assert!(!points.is_empty());
    }
    // The table has one section per chip, no row twice.
    let md = &files[0].1;
    assert_eq!(md.matches("## llama2-7b on ").count(), 2, "{md}");
}

#[test]
fn results_that_cannot_be_drawn_honestly_are_refused() {
    // Two figure types in one file.
    let mut mixed = two_chips();
    mixed[0].figure = "bars".into();
    let e = report(&mixed, "mixed", &header()).unwrap_err().to_string();
    assert!(e.contains("mix figure types"), "{e}");
    // A vs-hbm figure whose cells set no HBM bandwidth.
    let mut no_x = two_chips();
    for r in &mut no_x {
        r.cell.hbm_tbps = None;
    }
    no_x.truncate(1);
    let e = report(&no_x, "no x", &header()).unwrap_err().to_string();
    assert!(e.contains("does not set"), "{e}");
    // The same cell twice (results merged from two runs).
    let mut twice = fig17_like();
    let again = twice[0].clone();
    twice.push(again);
    let e = report(&twice, "twice", &header()).unwrap_err().to_string();
    assert!(
        e.contains("two results are both 'llama2-13b B16 KV2048'"),
        "{e}"
    );
}

#[test]
fn distributions_are_cdfs_and_spreads_are_whiskers_outside_the_legend() {
    use elk_reports::plot::{bars_marked, cdf, Marks, Series, Spread, Style};
    let style = Style::default();
    let samples = vec![
        (
            "elk-full, real layer windows".to_string(),
            vec![0.0, 0.0, 0.4, 1.2, 3.0],
        ),
        ("basic, real layer windows".to_string(), vec![2.0, 5.0, 9.5]),
    ];
    let fig = cdf("Gap", "gap to optimum (%)", &samples, &style).unwrap();
    let svg = fig.svg();
    // Each sample a step curve ending at fraction 1, its size in the legend.
    assert!(
        fig.csv()
            .contains("\"elk-full, real layer windows (5 instances)\",3,1,"),
        "{}",
        fig.csv()
    );
    let labels: Vec<String> = text_boxes(svg).into_iter().map(|t| t.0).collect();
    assert!(labels.contains(&"basic, real layer windows (3 instances)".to_string()));
    let legend = legend(svg);
    let curve: Vec<(f64, f64)> = line_points(svg);
    assert!(curve.iter().all(|p| !inside((p.0, p.1, p.0, p.1), legend)));
    std::fs::write(super::dir("cdf").join("cdf.svg"), svg).unwrap();

    let series = vec![Series {
        name: "±10 % noise: median, min–max".into(),
        points: vec![(0.0, Some(1.0)), (1.0, Some(0.5))],
    }];
    let marks = Marks {
        spread: vec![
            Spread {
                series: 0,
                point: 0,
                lo: -0.5,
                hi: 4.0,
            },
            Spread {
                series: 0,
                point: 1,
                lo: 0.0,
                hi: 2.0,
            },
        ],
        ..Marks::default()
    };
    let cats = ["basic".to_string(), "elk-full".into()];
    let fig = bars_marked("Noise", &cats, &series, "degradation (%)", &marks, &style).unwrap();
    let svg = fig.svg();
    std::fs::write(super::dir("spread").join("spread.svg"), svg).unwrap();
    // Three strokes per whisker (the bar and two caps), in ink, reaching the largest sample
    // (4 %), above the bar's top (1 %).
    let whiskers = svg
        .matches("stroke=\"#333333\" stroke-width=\"1\" points=")
        .count();
    assert!(whiskers >= 6, "{svg}");
    assert!(fig.csv().contains("min -0.5 max 4"), "{}", fig.csv());
    let bars = data_bars(svg);
    assert_eq!(bars.len(), 2);
    assert!(!overlaps(legend_of(svg), union(&bars)));
}

fn legend_of(svg: &str) -> Bbox {
    legend(svg)
}

#[test]
fn a_bar_too_short_to_see_has_its_value_printed_clear_of_the_other_bars() {
    use elk_reports::plot::{bars, Series, Style};
    // Replay fidelity: greedy and paced replays several % off the model, the phased model
    // within a few hundredths of a % (some exactly: no log axis for them).
    let n = 24;
    let series: Vec<Series> = [(8.0, 0.5), (5.0, 0.3), (0.0, 0.01)]
        .iter()
        .enumerate()
        .map(|(s, (base, step))| Series {
            name: ["greedy replay", "paced replay", "paced vs phased"][s].into(),
            points: (0..n)
                .map(|i| (i as f64, Some(base + step * (i % 5) as f64)))
                .collect(),
        })
        .collect();
    let cats: Vec<String> = (0..n).map(|i| format!("llama2-13b B{i} KV2048")).collect();
    let fig = bars(
        "Fidelity",
        &cats,
        &series,
        "replay − model (%)",
        &Style::default(),
    )
    .unwrap();
    let svg = fig.svg();
    std::fs::write(super::dir("short").join("short.svg"), svg).unwrap();
    let texts = text_boxes(svg);
    assert_eq!(texts.iter().filter(|t| t.0 == "0.040").count(), 4, "{svg}");
    assert_eq!(texts.iter().filter(|t| t.0 == "0.020").count(), 5, "{svg}");
    let bars = data_bars(svg);
    assert_eq!(bars.len(), 3 * n);
    for (text, tb) in &texts {
        for b in &bars {
            assert!(!overlaps(*tb, *b), "text '{text}' {tb:?} over bar {b:?}");
        }
    }
}

#[test]
fn a_distribution_spanning_decades_gets_a_log_x_axis_with_zeros_at_its_floor() {
    use elk_reports::plot::{cdf, Style};
    let style = Style::default();
    // The gap study's shape: optimal instances (0 %), small gaps, and Basic's 1385 %.
    let samples = vec![
        ("elk-full".to_string(), vec![0.0, 0.04, 0.8, 3.0]),
        ("basic".to_string(), vec![6.0, 90.0, 1385.5]),
    ];
    let fig = cdf("Gap", "gap to optimum (%)", &samples, &style).unwrap();
    let labels: Vec<String> = text_boxes(fig.svg()).into_iter().map(|t| t.0).collect();
    assert!(
        labels
            .iter()
            .any(|l| l == "gap to optimum (%); below 0.01 drawn at it (log scale)"),
        "{labels:?}"
    );
    // Decade ticks, from the floor's decade to Basic's.
    for t in ["0.01", "1", "100", "1000"] {
        assert!(labels.iter().any(|l| l == t), "tick {t}: {labels:?}");
    }
    // The plotted numbers: the zero at the floor, the rest as they are.
    let csv = fig.csv();
    assert!(csv.contains("\nelk-full (4 instances),0.01,0.25,"), "{csv}");
    assert!(csv.contains("\nbasic (3 instances),1385.5,1,"), "{csv}");
    // Samples within a decade keep a linear axis.
    let narrow = vec![("elk-full".to_string(), vec![0.0, 0.4, 1.2, 3.0])];
    let fig = cdf("Gap", "gap to optimum (%)", &narrow, &style).unwrap();
    let labels: Vec<String> = text_boxes(fig.svg()).into_iter().map(|t| t.0).collect();
    assert!(
        labels.iter().any(|l| l == "gap to optimum (%)"),
        "{labels:?}"
    );
}

/// Every `<polyline>` of `svg` as its points.
pub(super) fn polylines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline ")
        .skip(1)
        .map(|p| {
            let pts = attr(&format!(" {}", p.split("/>").next().unwrap()), "points").unwrap();
            pts.split_whitespace()
                .map(|xy| {
                    let (x, y) = xy.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// How many polylines lie wholly inside `b` (a bar's hatch).
fn hatch_in(lines: &[Vec<(f64, f64)>], b: Bbox) -> usize {
    let grown = (b.0 - 0.5, b.1 - 0.5, b.2 + 0.5, b.3 + 0.5);
    lines
        .iter()
        .filter(|l| l.iter().all(|p| inside((p.0, p.1, p.0, p.1), grown)))
        .count()
}

#[test]
fn variants_of_one_method_differ_in_shade_and_hatch_in_the_plot_and_the_legend() {
    use elk_reports::plot::{bars, Series, Style};
    // The ablation study's series: five Elk-Dyn variants, two of the greedy allocator.
    let names = [
        "elk-full",
        "elk-dyn",
        "elk-dyn, no π",
        "elk-dyn, depth ≤ 1",
        "elk-dyn, depth ≤ 2",
        "elk-dyn, depth ≤ 4",
        "elk-dyn-greedy",
        "elk-dyn-greedy, no trades",
    ];
    let cats = [
        "llama2-13b".to_string(),
        "gemma2-27b".into(),
        "llama2-70b".into(),
    ];
    let series: Vec<Series> = names
        .iter()
        .enumerate()
        .map(|(s, n)| Series {
            name: n.to_string(),
            points: (0..3)
                .map(|i| (i as f64, Some(8.0 + s as f64 + 3.0 * i as f64)))
                .collect(),
        })
        .collect();
    let fig = bars(
        "Ablation",
        &cats,
        &series,
        "latency (ms)",
        &Style::default(),
    )
    .unwrap();
    let svg = fig.svg();
    std::fs::write(super::dir("variants").join("variants.svg"), svg).unwrap();
    let legend = legend(svg);
    let all = rects(svg);
    let plotted: Vec<&(String, String, Bbox)> = all
        .iter()
        .filter(|r| r.0 != "#FFFFFF" && !inside(r.2, legend))
        .collect();
    assert_eq!(plotted.len(), names.len() * cats.len());
    // One fill per series, on all its bars; no two series share one.
    let fills: Vec<&str> = plotted.chunks(3).map(|c| c[0].0.as_str()).collect();
    for (s, chunk) in plotted.chunks(3).enumerate() {
        assert!(chunk.iter().all(|r| r.0 == fills[s]), "{}", names[s]);
    }
    for a in 0..fills.len() {
        for b in a + 1..fills.len() {
            assert_ne!(fills[a], fills[b], "{} and {}", names[a], names[b]);
        }
    }
    // Each method keeps its colour of every figure: Elk-Full pink, Elk-Dyn green.
    assert_eq!((fills[0], fills[1]), ("#CC79A7", "#009E73"));
    // The legend's swatches in the series' fills, in order.
    let swatches: Vec<&(String, String, Bbox)> = all
        .iter()
        .filter(|r| r.0 != "#FFFFFF" && r.0 != "none" && inside(r.2, legend))
        .collect();
    assert_eq!(
        swatches.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        fills
    );
    // The variants are hatched, on their bars and their swatches; the methods are not.
    let lines = polylines(svg);
    for (s, name) in names.iter().enumerate() {
        let variant = name.contains(", ");
        let on_swatch = hatch_in(&lines, swatches[s].2);
        assert_eq!(on_swatch > 0, variant, "{name}: {on_swatch} hatch lines");
        for bar in plotted.chunks(3).nth(s).unwrap() {
            assert_eq!(hatch_in(&lines, bar.2) > 2, variant, "{name}");
        }
    }
}

#[test]
fn a_percentage_stays_on_a_linear_axis_while_latencies_spanning_decades_go_log() {
    // Basic under 1 % of Ideal beside Elk-Full at 90 %: two decades apart.
    let results = fig17_like();
    let files = texts(report(&results, "pct", &header()).unwrap());
    let svg = &files.iter().find(|f| f.0 == "pct_of_ideal.svg").unwrap().1;
    let labels = text_boxes(svg);
    assert!(
        !labels.iter().any(|t| t.0.contains("log scale")),
        "{labels:?}"
    );
    // Round linear ticks from 0 to 100, evenly spaced; no decades (1, 10, 100 alone).
    let y_of = |tick: &str| {
        let b = labels.iter().find(|t| t.0 == tick).unwrap().1;
        (b.1 + b.3) / 2.0
    };
    let ys: Vec<f64> = ["0", "20", "40", "60", "80", "100"]
        .iter()
        .map(|t| y_of(t))
        .collect();
    for w in ys.windows(3) {
        assert!(((w[0] - w[1]) - (w[1] - w[2])).abs() < 0.5, "{ys:?}");
    }
    assert!(
        !labels.iter().any(|t| t.0 == "10" || t.0 == "1"),
        "{labels:?}"
    );
    // The latencies of the same cells do span decades, and keep their log axis.
    let latency = &files.iter().find(|f| f.0 == "latency.svg").unwrap().1;
    assert!(latency.contains("latency (ms) (log scale)"));
}
