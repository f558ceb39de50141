//! Figures: `--format`, `--width`, `--height`, `--dpi` and `--font-size` on `report`, `study`
//! and `sweep --report`; every figure has its CSV; an unknown format is one line, exit 2,
//! before any work runs; a two-chip sweep reports one panel per chip, and results a figure
//! cannot show honestly are refused.

use super::common::{elk_in, envelope, scratch};

const GRID: &str = "figure = \"bars\"\nmodels = [\"bert-base\"]\nbatches = [8]\nkvs = [128]\nmethods = [\"basic\"]\n";

/// (width, height, pixels per metre) of a PNG file, from its IHDR and pHYs chunks.
fn png_size(bytes: &[u8]) -> (u32, u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    let phys = bytes.windows(4).position(|w| w == b"pHYs").unwrap();
    (be(16), be(20), be(phys + 4))
}

#[test]
fn report_writes_png_figures_at_the_chosen_size_and_dpi_with_their_csvs() {
    let d = scratch("figures-png");
    std::fs::write(d.join("g.toml"), GRID).unwrap();
    let out = elk_in(&d, &["sweep", "g.toml", "-o", "r.jsonl"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let args = [
        "report",
        "r.jsonl",
        "-o",
        "png",
        "--format",
        "png",
        "--dpi",
        "192",
        "--width",
        "800",
        "--height",
        "500",
        "--font-size",
        "16",
        "--json",
    ];
    let out = elk_in(&d, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = &envelope(&out.stdout)["results"]["files"];
    let names: Vec<&str> = files
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "README.md",
            "latency.png",
            "latency.csv",
            "pct_of_ideal.png",
            "pct_of_ideal.csv",
            "finding.json"
        ]
    );
    for stem in ["latency", "pct_of_ideal"] {
        let png = std::fs::read(d.join(format!("png/{stem}.png"))).unwrap();
        // 800 × 500 px at 192 dpi: twice the pixels, and the PNG says 192 dpi (7559 px/m).
        assert_eq!(png_size(&png), (1600, 1000, 7559), "{stem}");
        assert!(!d.join(format!("png/{stem}.svg")).exists());
    }
    let md = std::fs::read_to_string(d.join("png/README.md")).unwrap();
    assert!(
        md.contains("![latency](latency.png)") && !md.contains(".svg)"),
        "{md}"
    );
    // The CSV is the same whatever the image format.
    let out = elk_in(&d, &["report", "r.jsonl", "-o", "svg"]);
    assert!(out.status.success());
    for stem in ["latency", "pct_of_ideal"] {
        let csv = |dir: &str| std::fs::read_to_string(d.join(format!("{dir}/{stem}.csv"))).unwrap();
        assert_eq!(csv("png"), csv("svg"), "{stem}");
        assert!(csv("svg").starts_with("series,category,"), "{stem}");
    }
}

#[test]
fn an_unknown_format_is_one_line_and_exit_2_before_any_work() {
    let d = scratch("figures-bad");
    std::fs::write(d.join("g.toml"), GRID).unwrap();
    let cases: [&[&str]; 4] = [
        &["report", "r.jsonl", "-o", "out", "--format", "pdf"],
        // A study refuses before it runs (gap would take minutes).
        &["study", "gap", "-o", "out", "--format", "tiff"],
        &[
            "sweep", "g.toml", "-o", "r.jsonl", "--report", "out", "--format", "jpg",
        ],
        &["report", "r.jsonl", "-o", "out", "--dpi", "300"],
    ];
    for args in cases {
        let out = elk_in(&d, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        let format = args[args.len() - 1];
        let expected = if args.contains(&"--dpi") {
            "error: --format svg: a DPI is for PNG figures (--format png)".to_string()
        } else {
            format!(
                "error: --format {format}: '{format}' is not a figure format: expected svg or \
                 png (PDF is not built in: convert the SVG, e.g. with rsvg-convert -f pdf)"
            )
        };
        assert_eq!(err.trim_end(), expected, "{args:?}");
        assert!(
            !d.join("out").exists() && !d.join("r.jsonl").exists(),
            "{args:?}"
        );
    }
}

#[test]
fn a_two_chip_sweep_reports_one_panel_per_chip_and_a_grid_it_cannot_draw_is_refused() {
    let d = scratch("figures-chips");
    let grid = "figure = \"vs-hbm\"\nmodels = [\"bert-base\"]\nbatches = [8]\nkvs = [128]\nchips = [\"ipu-mk2\", \"ipu-pod4\"]\nhbm_tbps = [4.0, 16.0]\nmethods = [\"basic\"]\n";
    std::fs::write(d.join("g.toml"), grid).unwrap();
    let out = elk_in(&d, &["sweep", "g.toml", "-o", "r.jsonl", "--report", "rep"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One figure per chip, titled by it, with that chip's two points per series only.
    for (n, chip) in ["ipu-mk2", "ipu-pod4"].iter().enumerate() {
        let svg = std::fs::read_to_string(d.join(format!("rep/vs-hbm-{n}.svg"))).unwrap();
        assert!(
            svg.contains(&format!("bert-base on {chip} (decode B8 KV128)")),
            "{svg}"
        );
        let csv = std::fs::read_to_string(d.join(format!("rep/vs-hbm-{n}.csv"))).unwrap();
        assert_eq!(
            csv.lines().filter(|l| l.starts_with("basic,")).count(),
            2,
            "{csv}"
        );
    }
    assert!(!d.join("rep/vs-hbm-2.svg").exists());
    // The same cells as a vs-cores figure: the grid sets no core counts, so there is
    // nothing to plot them against. Refused: one line, exit 2, no report.
    let text = std::fs::read_to_string(d.join("r.jsonl")).unwrap();
    std::fs::write(
        d.join("cores.jsonl"),
        text.replace("\"figure\":\"vs-hbm\"", "\"figure\":\"vs-cores\""),
    )
    .unwrap();
    let out = elk_in(&d, &["report", "cores.jsonl", "-o", "refused"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: report (vs-cores): cannot draw these results honestly: 'vs-cores' plots against cores"),
        "{err}"
    );
    assert!(!d.join("refused").exists());
}
