//! `--html` on `report` and `sweep --report`: `report.html` beside README.md, one
//! self-contained page with every figure inlined once, listed by `--json`, the same bytes on a
//! rerun. (That a browser draws it: `browser.rs`, run by `make test-browser`.)

use super::common::{elk_in, envelope, scratch};
use std::path::{Path, PathBuf};

/// A checked-in sweep result (24 cells, two figures): a report of it takes well under a second.
pub fn fig17() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results/fig17.jsonl")
}

/// `elk-opt report RESULTS -o OUT --html EXTRA… --json` in `dir`, checked to succeed; the
/// files `--json` lists.
pub fn html_report(dir: &Path, results: &Path, out: &str, extra: &[&str]) -> Vec<String> {
    let results = results.to_string_lossy();
    let mut args = vec!["report", &results, "-o", out, "--html", "--json"];
    args.extend_from_slice(extra);
    let run = elk_in(dir, &args);
    assert!(
        run.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    envelope(&run.stdout)["results"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

/// The report's figure files (`.svg` / `.png`).
pub fn figures(files: &[String]) -> Vec<&String> {
    files
        .iter()
        .filter(|f| f.ends_with(".svg") || f.ends_with(".png"))
        .collect()
}

#[test]
fn report_html_inlines_every_figure_once_and_references_nothing_outside() {
    let d = scratch("html-page");
    let files = html_report(&d, &fig17(), "svg", &[]);
    assert_eq!(files.last().map(String::as_str), Some("report.html"));
    let page = std::fs::read_to_string(d.join("svg/report.html")).unwrap();
    let svgs = figures(&files);
    assert!(!svgs.is_empty());
    assert_eq!(page.matches("<svg").count(), svgs.len(), "{files:?}");
    for f in &svgs {
        // The figure's own drawing (everything after its `<svg` tag name), once.
        let svg = std::fs::read_to_string(d.join("svg").join(f)).unwrap();
        let body = &svg[svg.find("<svg").unwrap() + 4..];
        assert_eq!(page.matches(body.trim_end()).count(), 1, "{f}");
    }
    let readme = std::fs::read_to_string(d.join("svg/README.md")).unwrap();
    assert!(readme.contains("![latency](latency.svg)"));
    // Tables, the config envelope and the tool version.
    assert!(page.contains("<table>") && page.contains("<th>configuration</th>"));
    assert!(page.contains("&quot;schema&quot;: &quot;elk-opt/report/1&quot;"));
    assert!(page.contains(concat!("elk-opt ", env!("CARGO_PKG_VERSION"))));
    for attr in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "href=\"//",
        "<link",
        "<script",
    ] {
        assert!(!page.contains(attr), "{attr}");
    }
    // A rerun writes the same bytes.
    html_report(&d, &fig17(), "svg", &[]);
    assert_eq!(
        std::fs::read_to_string(d.join("svg/report.html")).unwrap(),
        page
    );
    // PNG figures are data: URIs.
    let files = html_report(&d, &fig17(), "png", &["--format", "png"]);
    let page = std::fs::read_to_string(d.join("png/report.html")).unwrap();
    assert_eq!(
        page.matches("<img alt=").count(),
        figures(&files).len(),
        "{files:?}"
    );
    assert_eq!(page.matches("src=\"data:image/png;base64,").count(), 2);
    assert!(!page.contains("<svg"));
}

#[test]
fn sweep_report_html_writes_the_page_with_the_sweep_config() {
    let d = scratch("html-sweep");
    let grid = "figure = \"bars\"\nmodels = [\"bert-base\"]\nbatches = [8]\nkvs = [128]\nmethods = [\"basic\"]\n";
    std::fs::write(d.join("g.toml"), grid).unwrap();
    let args = [
        "sweep", "g.toml", "-o", "r.jsonl", "--report", "rep", "--html",
    ];
    let out = elk_in(&d, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("page -> rep/report.html"), "{err}");
    let page = std::fs::read_to_string(d.join("rep/report.html")).unwrap();
    assert!(page.contains("&quot;schema&quot;: &quot;elk-opt/sweep/1&quot;"));
    assert!(
        page.contains("&quot;grid&quot;: &quot;g.toml&quot;"),
        "{page}"
    );
    assert_eq!(page.matches("<svg").count(), 2);
    // Without --html there is no page.
    let out = elk_in(&d, &["report", "r.jsonl", "-o", "plain"]);
    assert!(out.status.success());
    assert!(d.join("plain/README.md").exists() && !d.join("plain/report.html").exists());
}
