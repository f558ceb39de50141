//! Integration tests of elk-reports: reports name their command and label their axes; a
//! method without a schedule is said so in tables and figures; figures carry the certified
//! bound and stay legible. The results they draw come from elk-app's sweeps.
#![allow(clippy::unwrap_used)] // a test that fails should panic with the value it got

use elk_app::grid::Grid;
use elk_app::sweep::{read_results, run_sweep};
use elk_reports::report::{report, Header, IDEAL};
use inputs::{dir, grid_of, mk2_with_sram, TINY};

#[path = "reports/bounds.rs"]
mod bounds;
#[path = "reports/figures.rs"]
mod figures;
// The grids and chip files elk-app's sweep tests use.
#[path = "../../app/tests/app/inputs.rs"]
mod inputs;
#[path = "reports/model_files.rs"]
mod model_files;

/// A report's files as text (SVG figures: every file is).
fn texts(files: elk_reports::report::Files) -> Vec<(String, String)> {
    files
        .into_iter()
        .map(|(name, body)| (name, String::from_utf8(body).unwrap()))
        .collect()
}

#[test]
fn a_report_names_its_command_and_labels_its_axes_with_units() {
    let grid = Grid::from_toml("tiny", TINY).unwrap();
    let out = dir("tiny").join("tiny.jsonl");
    run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    let results: Vec<_> = read_results(&out).unwrap().into_values().collect();
    let header = Header {
        command: "elk-opt sweep tiny.toml".into(),
        inputs: "tiny.toml".into(),
        date: "2026-11-29".into(),
        style: Default::default(),
        plan_cache: None,
    };
    let files = texts(report(&results, "tiny", &header).unwrap());
    assert_eq!(files[0].0, "README.md");
    assert!(files[0].1.contains("`elk-opt sweep tiny.toml`") && files[0].1.contains("2026-11-29"));
    let svgs: Vec<_> = files.iter().filter(|f| f.0.ends_with(".svg")).collect();
    assert_eq!(svgs.len(), 2, "one plot per batch");
    for (_, svg) in svgs {
        assert!(svg.contains("HBM bandwidth (TB/s)") && svg.contains("latency (ms)"));
    }
}

#[test]
fn methods_without_a_schedule_store_status_and_reason() {
    use elk_app::cell::MethodStatus;
    let d = dir("status");
    std::fs::write(d.join("chip.toml"), mk2_with_sram(6144)).unwrap();
    let grid_file = d.join("g.toml");
    std::fs::write(&grid_file, grid_of(&["chip.toml"], "\"basic\", \"static\"")).unwrap();
    let grid = Grid::from_file(&grid_file).unwrap();
    let out = d.join("s.jsonl");
    let summary = run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    assert_eq!(summary.failed, 0, "a method without a schedule is a result");
    let text = std::fs::read_to_string(&out).unwrap();
    let r = &read_results(&out).unwrap()[&0];
    let basic = &r.methods[0];
    assert_eq!(basic.status, Some(MethodStatus::Scheduled));
    assert!(basic.makespan_ms.is_some() && basic.reason.is_none());
    let stat = &r.methods[1];
    assert_eq!(stat.status, Some(MethodStatus::NoSchedule));
    assert!(stat.makespan_ms.is_none());
    let reason = stat.reason.as_deref().unwrap();
    assert!(reason.contains("l0.ffn.up: no option with hot"), "{reason}");
    assert!(
        text.contains("\"status\":\"no-schedule\",\"reason\":\"operator "),
        "{text}"
    );
    let header = Header {
        command: "x".into(),
        inputs: "x".into(),
        date: "2026-01-01".into(),
        style: Default::default(),
        plan_cache: None,
    };
    let results: Vec<_> = read_results(&out).unwrap().into_values().collect();
    let md = &texts(report(&results, "new", &header).unwrap())[0].1;
    assert!(
        md.contains("| static | no schedule found | operator l0.ffn.up: no option"),
        "{md}"
    );

    // Lines written before status was recorded still read, and still report.
    let old = text.replace("\"status\":\"scheduled\",", "").replace(
        &format!("\"status\":\"no-schedule\",\"reason\":{reason:?},"),
        "",
    );
    assert!(!old.contains("status"), "{old}");
    let old_file = d.join("old.jsonl");
    std::fs::write(&old_file, &old).unwrap();
    let results: Vec<_> = read_results(&old_file).unwrap().into_values().collect();
    assert_eq!(results[0].methods[1].status, None);
    let md = &texts(report(&results, "old", &header).unwrap())[0].1;
    assert!(
        md.contains("| static | no schedule (not recorded why) |"),
        "{md}"
    );
}

/// Static schedules BERT-base on ipu-mk2 and finds no schedule with 6 KiB of SRAM.
fn static_with_and_without_a_schedule(name: &str) -> Vec<elk_app::cell::CellResult> {
    let d = dir(name);
    std::fs::write(d.join("chip.toml"), mk2_with_sram(6144)).unwrap();
    let grid_file = d.join("g.toml");
    let text = grid_of(&["ipu-mk2", "chip.toml"], "\"basic\", \"static\"");
    std::fs::write(&grid_file, text).unwrap();
    let grid = Grid::from_file(&grid_file).unwrap();
    let out = d.join("s.jsonl");
    run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    let results: Vec<_> = read_results(&out).unwrap().into_values().collect();
    assert!(results[0].methods.iter().all(|m| m.makespan_ms.is_some()));
    assert!(results[1].methods[0].makespan_ms.is_some());
    assert!(results[1].methods[1].makespan_ms.is_none());
    results
}

fn header() -> Header {
    Header {
        command: "x".into(),
        inputs: "x".into(),
        date: "2026-01-01".into(),
        style: Default::default(),
        plan_cache: None,
    }
}

#[test]
fn a_method_without_a_schedule_is_drawn_as_a_cross_with_a_footnote() {
    let results = static_with_and_without_a_schedule("marker");
    let files = texts(report(&results, "marker", &header()).unwrap());
    let svg = &files.iter().find(|f| f.0 == "latency.svg").unwrap().1;
    // One marker (Static on the small chip; two lines, the legend's "×" two more), the
    // legend says what it means and the footnote where and why.
    assert_eq!(svg.matches("<line ").count(), 4, "{svg}");
    assert!(svg.contains(">\n× no value: no schedule\n</text>"), "{svg}");
    assert!(
        svg.contains(">\n× static: no schedule at bert-base on chip.toml\n</text>"),
        "{svg}"
    );
    // The table says why too, never a bare "-".
    let md = &files[0].1;
    assert!(
        md.contains("| bert-base on chip.toml | ") && md.contains(" | no schedule | "),
        "{md}"
    );
}

#[test]
fn means_of_pct_of_ideal_are_over_the_cells_every_method_schedules() {
    let results = static_with_and_without_a_schedule("means");
    let md = &texts(report(&results, "means", &header()).unwrap())[0].1;
    let pct = |cell: usize, m: usize| {
        let r = &results[cell];
        100.0 * r.ideal_ms.unwrap() / r.methods[m].makespan_ms.unwrap()
    };
    let common = format!(
        "Mean % of Ideal over the 1 of 2 configurations where every method has a schedule: basic {:.1} %, static {:.1} %",
        pct(0, 0),
        pct(0, 1)
    );
    assert!(md.contains(&common), "{md}");
    assert!(
        md.contains("Excluded: bert-base on chip.toml (static: no schedule)."),
        "{md}"
    );
    // Each method's own mean is still there, labelled as such.
    let own = format!(
        "Each method's mean over the configurations it schedules (different cells per method, so not comparable across methods): basic {:.1} % (2 cells), static {:.1} % (1 cells).",
        (pct(0, 0) + pct(1, 0)) / 2.0,
        pct(0, 1)
    );
    assert!(md.contains(&own), "{md}");
}

/// The rows of a figure's CSV (header first).
fn csv_rows(csv: &str) -> Vec<Vec<String>> {
    elk_reports::csv_text::read(csv)
}

/// The data bars of `svg` in `colour` (filled, or outlined for the reference) as pixel
/// heights, in drawing order; the legend's 20 × 12 swatch is left out.
fn bar_heights(svg: &str, colour: &str, outlined: bool) -> Vec<f64> {
    let paint = if outlined {
        format!("fill=\"none\" stroke=\"{colour}\"")
    } else {
        format!("fill=\"{colour}\" stroke=\"none\"")
    };
    let attr = |rect: &str, name: &str| -> f64 {
        let at = rect.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        rect[at..].split('"').next().unwrap().parse().unwrap()
    };
    svg.split("<rect ")
        .skip(1)
        .map(|r| r.split("/>").next().unwrap())
        .filter(|r| r.contains(&paint))
        .filter(|r| !(attr(r, "width") == 20.0 && attr(r, "height") == 12.0))
        .map(|r| attr(r, "height"))
        .collect()
}

#[test]
fn every_figure_has_a_csv_of_exactly_its_plotted_numbers() {
    let results = static_with_and_without_a_schedule("csv");
    let files = texts(report(&results, "csv", &header()).unwrap());
    let file = |name: &str| &files.iter().find(|f| f.0 == name).unwrap().1;
    // Every figure has its CSV, and only figures have one.
    let stems = |ext: &str| -> Vec<String> {
        let mut v: Vec<String> = files
            .iter()
            .filter_map(|f| f.0.strip_suffix(ext).map(str::to_string))
            .collect();
        v.sort();
        v
    };
    assert_eq!(stems(".svg"), stems(".csv"));
    assert_eq!(stems(".svg"), ["latency", "pct_of_ideal"]);

    let rows = csv_rows(file("latency.csv"));
    // The plotted columns, then every grid dimension of the point's cell (the chip too).
    assert_eq!(
        rows[0],
        [
            "series",
            "category",
            "latency (ms)",
            "note",
            "model",
            "mode",
            "batch",
            "kv",
            "chip",
            "hbm_tbps",
            "noc_scale",
            "compute_scale",
            "topology",
            "cores"
        ]
    );
    for (k, row) in rows[1..].iter().enumerate() {
        let cell = &results[k % results.len()].cell;
        assert_eq!(row[8], cell.chip, "{row:?}");
        assert_eq!(row[4], cell.model, "{row:?}");
    }
    let rows: Vec<Vec<String>> = rows.iter().map(|r| r[..4].to_vec()).collect();
    let labels = ["bert-base on ipu-mk2", "bert-base on chip.toml"];
    // One row per series and configuration: each method's makespan, then Ideal, exactly as
    // measured (a number that reads back to the same f64), or empty with why.
    let mut expected = Vec::new();
    for (m, name) in ["basic", "static"].iter().enumerate() {
        for (r, label) in results.iter().zip(labels) {
            let (y, note) = match r.methods[m].makespan_ms {
                Some(v) => (v.to_string(), String::new()),
                None => (String::new(), "absent: no schedule".to_string()),
            };
            expected.push(vec![name.to_string(), label.into(), y, note]);
        }
    }
    for (r, label) in results.iter().zip(labels) {
        let y = r.ideal_ms.unwrap().to_string();
        expected.push(vec![IDEAL.into(), label.into(), y, "reference".into()]);
    }
    assert_eq!(rows[1..], expected[..]);

    // The SVG draws those numbers: per series as many bars as the CSV has values, each as
    // tall as its value on one common scale (to the pixel).
    let svg = file("latency.svg");
    let drawn: Vec<Vec<f64>> = [("#0072B2", false), ("#D55E00", false), ("#000000", true)]
        .iter()
        .map(|(c, o)| bar_heights(svg, c, *o))
        .collect();
    let values: Vec<Vec<f64>> = ["basic", "static", IDEAL]
        .iter()
        .map(|s| {
            rows.iter()
                .filter(|r| r[0] == *s && !r[2].is_empty())
                .map(|r| r[2].parse().unwrap())
                .collect()
        })
        .collect();
    let counts = |v: &[Vec<f64>]| v.iter().map(Vec::len).collect::<Vec<_>>();
    assert_eq!(counts(&drawn), counts(&values), "{svg}");
    assert_eq!(counts(&values), [2, 1, 2]);
    let (h_max, v_max) = drawn
        .iter()
        .flatten()
        .zip(values.iter().flatten())
        .fold((0.0f64, 0.0f64), |a, (h, v)| (a.0.max(*h), a.1.max(*v)));
    for (h, v) in drawn.iter().flatten().zip(values.iter().flatten()) {
        assert!(
            (h - v * h_max / v_max).abs() <= 1.5,
            "bar {h} px for {v} ms"
        );
    }
}

#[test]
fn line_figures_have_a_csv_with_the_swept_quantity_and_units() {
    let grid = Grid::from_toml("tiny", TINY).unwrap();
    let out = dir("lines-csv").join("r.jsonl");
    run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    let results: Vec<_> = read_results(&out).unwrap().into_values().collect();
    let files = texts(report(&results, "tiny", &header()).unwrap());
    let csvs: Vec<_> = files.iter().filter(|f| f.0.ends_with(".csv")).collect();
    assert_eq!(csvs.len(), 2, "one per plot");
    for (name, csv) in csvs {
        let rows = csv_rows(csv);
        assert_eq!(
            rows[0][..5],
            [
                "series",
                "HBM bandwidth (TB/s)",
                "latency (ms)",
                "note",
                "model"
            ],
            "{name}"
        );
        // The swept quantity is a column of its own too, equal to the x value.
        let hbm = rows[0].iter().position(|h| h == "hbm_tbps").unwrap();
        assert!(rows[1..].iter().all(|r| r[hbm] == r[1]), "{name}");
        // basic and Ideal at 4 and 16 TB/s.
        let xs: Vec<(&str, &str)> = rows[1..]
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str()))
            .collect();
        assert_eq!(
            xs,
            [("basic", "4"), ("basic", "16"), (IDEAL, "4"), (IDEAL, "16")]
        );
        // The figure's group (its title, linked in the README) names the batch.
        let svg = name.replace(".csv", ".svg");
        let md = &files[0].1;
        let link = md.find(&format!("]({svg})")).unwrap();
        let group = &md[md[..link].rfind("![").unwrap()..link];
        let batch: u64 = if group.contains(" B8 ") { 8 } else { 16 };
        assert!(group.contains(&format!(" B{batch} ")), "{group}");
        for r in &rows[1..] {
            let cell = results
                .iter()
                .find(|c| c.cell.batch == batch && c.cell.hbm_tbps == Some(r[1].parse().unwrap()))
                .unwrap();
            let want = if r[0] == "basic" {
                cell.methods[0].makespan_ms
            } else {
                cell.ideal_ms
            };
            assert_eq!(r[2].parse::<f64>().ok(), want, "{name}: {r:?}");
        }
    }
}

#[test]
fn a_training_figure_says_which_mode_its_throughput_is_of() {
    let text = r#"figure = "training"
models = ["bert-base"]
modes = ["forward-batch", "training"]
batches = [1]
kvs = [32]
compute_scale = [1.0]
methods = ["basic"]
"#;
    let grid = Grid::from_toml("training", text).unwrap();
    let out = dir("training-modes").join("r.jsonl");
    run_sweep(&grid, &out, None, None, &|_, _| {}).unwrap();
    let results: Vec<_> = read_results(&out).unwrap().into_values().collect();
    assert!(results.iter().all(|r| r.error.is_none()), "{results:?}");
    let makespan_ms = |mode: &str| {
        let r = results.iter().find(|r| r.cell.mode == mode).unwrap();
        r.methods[0].makespan_ms.unwrap()
    };
    // The step takes longer than its forward pass.
    assert!(makespan_ms("training") > 2.0 * makespan_ms("forward-batch"));
    let files = texts(report(&results, "training", &header()).unwrap());
    let md = &files[0].1;
    assert!(
        md.contains("Mode forward-batch: the forward pass of a training batch alone"),
        "{md}"
    );
    assert!(md.contains("Mode training: the whole step"), "{md}");
    // One panel per mode, each heading naming it; the length is a sequence length (these
    // modes have no KV cache), in headings, titles and figures alike.
    assert!(md.contains("## bert-base forward-batch (B1 seq32 "), "{md}");
    assert!(md.contains("## bert-base training (B1 seq32 "), "{md}");
    for (name, text) in &files {
        assert!(!text.contains("KV"), "{name}: {text}");
    }
    let svgs: Vec<_> = files.iter().filter(|f| f.0.ends_with(".svg")).collect();
    assert_eq!(svgs.len(), 2);
    for (name, svg) in svgs {
        assert!(svg.contains(" (B1 seq32 on "), "{name}: {svg}");
    }
}
