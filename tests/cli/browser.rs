//! `--html` pages in a real browser (headless chromium): the page loads, its DOM holds every
//! figure's `<svg>` (or `<img>`), each figure is laid out with a size, and in a screenshot of
//! the page each figure's box is drawn (many colours, the plots' first series colour), not
//! blank. Ignored by `cargo test` (CI has no browser); `make test-browser` installs Debian's
//! chromium and runs them with `--ignored`, and there a missing browser fails, never passes.

use super::common::scratch;
use super::html_page::{fig17, figures, html_report};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The page's layout width in the browser, px.
const WIDTH: u32 = 1280;

/// The first colour of every plot's palette (Okabe and Ito's blue): the first series' bars and
/// lines, which every report figure has and nothing else on the page uses.
const SERIES_BLUE: [u8; 3] = [0, 114, 178];

/// A page that loads `PAGE` in a frame as wide as the screenshot and writes, once it has
/// loaded, the geometry of every figure as JSON into `#out` (read back with --dump-dom). The
/// report page itself has no script (its policy forbids one); this frame is the test's.
const PROBE: &str = r#"<!DOCTYPE html>
<html><body style="margin:0">
<pre id="out">not loaded</pre>
<iframe id="f" src="PAGE" style="width:WIDTHpx;height:30000px;border:0;display:block"></iframe>
<script>
window.addEventListener('load', function () {
  var out = document.getElementById('out');
  try {
    var d = document.getElementById('f').contentDocument;
    var figs = [];
    d.querySelectorAll('figure').forEach(function (fig) {
      var e = fig.querySelector('svg, img');
      if (!e) { figs.push({id: fig.id, tag: '', x: 0, y: 0, w: 0, h: 0, drawn: false}); return; }
      var r = e.getBoundingClientRect();
      var drawn = e.tagName === 'IMG' ? (e.complete && e.naturalWidth > 0) : e.childElementCount > 0;
      figs.push({id: fig.id, tag: e.tagName.toLowerCase(), x: r.left, y: r.top, w: r.width, h: r.height, drawn: drawn});
    });
    var main = d.querySelector('main').getBoundingClientRect();
    out.textContent = JSON.stringify({title: d.title, height: Math.ceil(main.bottom), figures: figs});
  } catch (err) { out.textContent = 'error: ' + err; }
});
</script>
</body></html>
"#;

/// Headless chromium: `$CHROMIUM`, else the first of chromium, chromium-browser, google-chrome
/// on PATH; a clear failure when there is none.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return p;
            }
        }
    }
    panic!(
        "headless chromium not found ($CHROMIUM, or chromium / chromium-browser / google-chrome \
         on PATH): `make test-browser` installs Debian's chromium; these tests never pass \
         without a browser"
    );
}

/// Runs chromium headless on `url` with `args` (its profile in `dir`), killed after 90 s;
/// its stdout. Its output goes to files, so a large DOM cannot fill a pipe and stall it.
fn browse(dir: &Path, url: &str, args: &[&str]) -> String {
    let (out, err) = (dir.join("chromium.out"), dir.join("chromium.err"));
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--allow-file-access-from-files",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(args)
        .arg(url)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} {url}: no answer in 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(status.success(), "chromium {args:?} {url}: {stderr}");
    std::fs::read_to_string(&out).unwrap()
}

fn url(path: &Path) -> String {
    format!("file://{}", path.canonicalize().unwrap().display())
}

/// A decoded screenshot: width, height and RGB pixels.
struct Shot {
    w: usize,
    h: usize,
    rgb: Vec<[u8; 3]>,
}

fn decode(path: &Path) -> Shot {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "{}", path.display());
    let n = info.color_type.samples();
    assert!(n >= 3, "{}: {:?}", path.display(), info.color_type);
    let rgb = buf[..info.buffer_size()]
        .chunks(n)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    Shot {
        w: info.width as usize,
        h: info.height as usize,
        rgb,
    }
}

/// In the box (x, y, w, h) of `shot`: how many distinct colours, how many pixels are not
/// white, and how many are the plots' first series colour (within a small tolerance).
fn inspect(shot: &Shot, (x, y, w, h): (usize, usize, usize, usize)) -> (usize, usize, usize) {
    let mut colours = std::collections::BTreeSet::new();
    let (mut ink, mut blue) = (0, 0);
    for row in y..(y + h).min(shot.h) {
        for col in x..(x + w).min(shot.w) {
            let p = shot.rgb[row * shot.w + col];
            colours.insert(p);
            ink += usize::from(p != [255, 255, 255]);
            let near = p
                .iter()
                .zip(SERIES_BLUE)
                .all(|(a, b)| (i32::from(*a) - i32::from(b)).abs() <= 24);
            blue += usize::from(near);
        }
    }
    (colours.len(), ink, blue)
}

/// Makes a `report --html` page of fig17's results (`extra` flags), and checks it in chromium:
/// the DOM, every figure's layout, and the screenshot of every figure. Returns the screenshot.
fn check_in_browser(tag: &str, extra: &[&str]) -> PathBuf {
    let d = scratch(&format!("browser-{tag}"));
    let files = html_report(&d, &fig17(), "page", extra);
    let figs = figures(&files);
    let page = d.join("page/report.html");
    let svg_files = figs.iter().filter(|f| f.ends_with(".svg")).count();
    let png_files = figs.len() - svg_files;

    // 1. The page loads and the DOM chromium built has every figure.
    let dom = browse(&d, &url(&page), &["--dump-dom"]);
    assert_eq!(dom.matches("<svg").count(), svg_files, "{dom}");
    assert_eq!(dom.matches("<img").count(), png_files, "{dom}");
    assert_eq!(dom.matches("<figure id=").count(), figs.len(), "{dom}");
    assert!(dom.contains("<title>Report of "), "{dom}");

    // 2. Each figure is laid out with a size, its drawing (or image) loaded.
    let probe = d.join("probe.html");
    let html = PROBE
        .replace("PAGE", "page/report.html")
        .replace("WIDTH", &WIDTH.to_string());
    std::fs::write(&probe, html).unwrap();
    let dom = browse(&d, &url(&probe), &["--dump-dom"]);
    let json = dom
        .split_once("<pre id=\"out\">")
        .and_then(|(_, rest)| rest.split_once("</pre>"))
        .map(|(j, _)| {
            j.replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
        })
        .unwrap_or_default();
    let geometry: serde_json::Value =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: the probe said {json:?}"));
    let placed = geometry["figures"].as_array().unwrap();
    assert_eq!(placed.len(), figs.len(), "{geometry}");
    let height = geometry["height"].as_f64().unwrap() as u32;

    // 3. A screenshot of the whole page: each figure's box is drawn.
    let shot_path = d.join(format!("{tag}.png"));
    browse(
        &d,
        &url(&page),
        &[
            &format!("--window-size={WIDTH},{height}"),
            &format!("--screenshot={}", shot_path.display()),
        ],
    );
    let shot = decode(&shot_path);
    assert_eq!(shot.w, WIDTH as usize, "device pixels = CSS px");
    let (colours, ink, _) = inspect(&shot, (0, 0, shot.w, shot.h));
    assert!(
        colours > 16 && ink > shot.w * shot.h / 50,
        "blank page: {colours} colours, {ink} inked pixels"
    );
    for f in placed {
        let px = |k: &str| f[k].as_f64().unwrap().max(0.0).round() as usize;
        let (x, y, w, h) = (px("x"), px("y"), px("w"), px("h"));
        assert!(f["drawn"].as_bool().unwrap() && w > 100 && h > 100, "{f}");
        assert!(y + h <= shot.h, "{f}: below the screenshot ({} px)", shot.h);
        let (colours, ink, blue) = inspect(&shot, (x, y, w, h));
        eprintln!(
            "{}: {w}×{h} px at ({x}, {y}): {colours} colours, {ink} inked pixels, {blue} of \
             the first series' colour",
            f["id"]
        );
        // A drawn plot: text and antialiasing give many colours, bars or lines cover a few
        // per cent of the box, and the first series is in its colour.
        assert!(colours > 16, "{f}: {colours} colours");
        assert!(ink > w * h / 100, "{f}: {ink} inked pixels of {}", w * h);
        assert!(blue > 50, "{f}: {blue} pixels of the first series' colour");
    }
    // The browser profile is tens of files; the page and its screenshot stay to be looked at.
    let _ = std::fs::remove_dir_all(d.join("profile"));
    shot_path
}

#[test]
#[ignore = "needs headless chromium: make test-browser"]
fn an_svg_report_page_renders_every_figure_in_chromium() {
    let shot = check_in_browser("svg", &[]);
    eprintln!("screenshot: {}", shot.display());
}

#[test]
#[ignore = "needs headless chromium: make test-browser"]
fn a_png_report_page_renders_every_figure_in_chromium() {
    let shot = check_in_browser("png", &["--format", "png"]);
    eprintln!("screenshot: {}", shot.display());
}
