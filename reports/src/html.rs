//! A report as one self-contained HTML page (`--html`): the README's Markdown converted to
//! HTML, every figure it links inlined (SVG as markup, PNG as a `data:` URI), the numbers of
//! each figure (its CSV) as a table beside it, and where the page came from (the tool's version
//! and the command's `--json` envelope). One file that can be mailed or archived, and opens
//! with no network and no other file: no external CSS, script, font or image, and a
//! Content-Security-Policy that forbids fetching any, so a slip would show as a broken figure
//! rather than a silent download.
//!
//! The Markdown is parsed by pulldown-cmark (CommonMark with pipe tables, the parser rustdoc
//! and mdBook use); the HTML writer over its events is ours (module `markdown`), because the
//! page inlines figures, never links to the network and escapes text as it always has.
//!
//! ```
//! let files = vec![
//!     ("README.md".to_string(), b"# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![f](f.svg)\n".to_vec()),
//!     ("f.svg".to_string(), b"<svg width=\"10\" height=\"10\"></svg>".to_vec()),
//! ];
//! let page = elk_reports::html::page(&files, &elk_reports::html::Provenance {
//!     tool: "elk-opt 0.1.0",
//!     envelope: "{}",
//! });
//! assert!(page.contains("<table>") && page.contains("<svg role=\"img\""));
//! ```

mod markdown;

use markdown::{escape, Blocks};

/// The page's file name, beside the report's README.md.
pub const PAGE: &str = "report.html";

/// Where a page came from, printed at its end.
#[derive(Clone, Copy, Debug)]
pub struct Provenance<'a> {
    /// The tool and its version (`elk-opt 0.1.0`).
    pub tool: &'a str,
    /// The command's `--json` envelope without its results (schema, tool version, config),
    /// as JSON text: the inputs that made the report, in the form scripts already read.
    pub envelope: &'a str,
}

/// Styles for a page read on screen and printed: system fonts only (a web font would be a
/// download), wide tables and figures scroll or shrink instead of widening the page.
const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;line-height:1.45;color:#222;background:#fff;margin:0}
main{max-width:1200px;margin:0 auto;padding:1em 2em 3em}
h1{font-size:1.7em;border-bottom:2px solid #ddd;padding-bottom:.2em}
h2{font-size:1.35em;border-bottom:1px solid #eee;padding-bottom:.15em;margin-top:1.6em}
code{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:.92em;background:#f4f4f4;padding:0 .2em;border-radius:3px}
pre{background:#f4f4f4;padding:.6em .8em;overflow-x:auto}
pre code{background:none;padding:0}
.scroll{overflow-x:auto;margin:.8em 0}
table{border-collapse:collapse;font-size:.88em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
th{background:#f0f0f0}
tr:nth-child(even) td{background:#fafafa}
figure{margin:1.2em 0}
figure svg,figure img{max-width:100%;height:auto;display:block;border:1px solid #eee}
figcaption{font-size:.9em;color:#555;margin-top:.3em}
details{margin:.4em 0 1em}
summary{cursor:pointer;color:#555;font-size:.9em}
.missing{color:#b00}
#provenance{margin-top:2.5em;font-size:.92em}
";

/// The report `files` (README.md first, as [`crate::report::Files`]) as one HTML page: the
/// README converted, each figure it links inlined once where it is linked (figures it does
/// not link follow at the end, so none is lost), then [`Provenance`] and the list of the
/// report's files. The same files give the same bytes.
pub fn page(files: &[(String, Vec<u8>)], provenance: &Provenance<'_>) -> String {
    let readme = files
        .iter()
        .find(|(n, _)| n == "README.md")
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    let mut blocks = Blocks::new(files);
    let body = blocks.convert(&readme);
    let title = readme
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .unwrap_or("elk-opt report")
        .trim();
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    // No network: nothing may be fetched; styles are inline, images are data: URIs.
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str(&format!(
        "<meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n",
        escape(provenance.tool),
        escape(title)
    ));
    out.push_str(&body);
    let rest = blocks.unlinked();
    if !rest.is_empty() {
        out.push_str("<h2>Figures not linked in the text</h2>\n");
        out.push_str(&rest);
    }
    out.push_str("<section id=\"provenance\">\n<h2>Provenance</h2>\n");
    out.push_str(&format!(
        "<p>Written by {} from the report's files below. The command's <code>--json</code> envelope (its results are this report):</p>\n<pre><code>{}</code></pre>\n",
        escape(provenance.tool),
        escape(provenance.envelope.trim_end())
    ));
    out.push_str("<p>Files of the report, beside this page:</p>\n<ul>\n");
    for (name, bytes) in files {
        out.push_str(&format!(
            "<li><code>{}</code> ({} bytes)</li>\n",
            escape(name),
            bytes.len()
        ));
    }
    out.push_str("</ul>\n</section>\n</main>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROV: Provenance<'static> = Provenance {
        tool: "elk-opt 0.1.0",
        envelope: "{\n  \"schema\": \"elk-opt/report/1\"\n}",
    };

    fn svg(label: &str) -> Vec<u8> {
        format!("<svg width=\"100\" height=\"50\" viewBox=\"0 0 100 50\" xmlns=\"http://www.w3.org/2000/svg\">\n<text x=\"1\" y=\"9\">{label}</text>\n</svg>\n").into_bytes()
    }

    fn files(readme: &str) -> Vec<(String, Vec<u8>)> {
        vec![
            ("README.md".into(), readme.as_bytes().to_vec()),
            ("a.svg".into(), svg("figure A")),
            (
                "a.csv".into(),
                b"series,category,latency (ms),note\nbasic,\"B8, S128\",1.5,\n".to_vec(),
            ),
            ("b.svg".into(), svg("figure B")),
            ("finding.json".into(), b"{}".to_vec()),
        ]
    }

    const README: &str = "# Sweep <x> & \"y\"\n\n- command: `elk-opt report r.jsonl -o out --html`\n- inputs: r.jsonl\n\nSome **bold** text, a link to [the gap study](../gap/README.md), and a [remote one](https://example.com/x).\n\n## Latency (ms)\n\n| configuration | basic | static |\n|---|---:|---|\n| bert B8 <S128> | 1.5000 | no schedule |\n| a `x\\|y` b | 2 | 3 |\n\n![latency A](a.svg)\n\ntext\nwrapped\n\n![B](b.svg)\n\n```\nlet a = 1 < 2;\n```\n";

    #[test]
    fn a_pipe_table_becomes_a_table_with_its_header_alignment_and_cells() {
        let p = page(&files(README), &PROV);
        assert!(p.contains("<table>\n<thead>\n<tr><th>configuration</th><th style=\"text-align:right\">basic</th><th>static</th></tr>\n</thead>"), "{p}");
        assert!(p.contains("<tr><td>bert B8 &lt;S128&gt;</td><td style=\"text-align:right\">1.5000</td><td>no schedule</td></tr>"), "{p}");
        // An escaped `|` inside a code span does not split the cell (GFM).
        assert!(p.contains("<td>a <code>x|y</code> b</td>"), "{p}");
        // The figure's CSV is its numbers table, quoted fields read back whole.
        assert!(p.contains("<td>B8, S128</td>"), "{p}");
    }

    #[test]
    fn every_linked_figure_is_inlined_exactly_once_where_it_is_linked() {
        let p = page(&files(README), &PROV);
        assert_eq!(p.matches("<svg").count(), 2, "{p}");
        assert_eq!(p.matches("figure A").count(), 1);
        assert_eq!(p.matches("figure B").count(), 1);
        let (a, b) = (p.find("figure A").unwrap(), p.find("figure B").unwrap());
        assert!(
            p.find("<h2 id=\"latency-ms\">").unwrap() < a
                && a < p.find("wrapped").unwrap()
                && p.find("wrapped").unwrap() < b
        );
        assert!(
            p.contains("<figure id=\"fig-a\">") && p.contains("<figcaption>latency A</figcaption>")
        );
        assert!(!p.contains("Figures not linked"));
        // Linked twice: drawn once, the second link points at it.
        let twice = README.replace("![B](b.svg)", "![B](b.svg) and ![A again](a.svg)");
        let p = page(&files(&twice), &PROV);
        assert_eq!(p.matches("figure A").count(), 1);
        assert!(p.contains("<a href=\"#fig-a\">A again</a>"), "{p}");
    }

    #[test]
    fn a_figure_the_text_does_not_link_follows_at_the_end_and_a_missing_one_says_so() {
        let p = page(&files("# T\n\n![A](a.svg)\n\n![gone](gone.svg)\n"), &PROV);
        assert_eq!(p.matches("<svg").count(), 2);
        let end = p.find("Figures not linked in the text").unwrap();
        assert!(p.find("figure B").unwrap() > end && p.find("figure A").unwrap() < end);
        assert!(
            p.contains("<span class=\"missing\">[figure gone.svg is not in the report]</span>"),
            "{p}"
        );
    }

    #[test]
    fn text_is_escaped_everywhere() {
        let p = page(&files(README), &PROV);
        assert!(p.contains("<title>Sweep &lt;x&gt; &amp; &quot;y&quot;</title>"));
        assert!(
            p.contains("<h1 id=\"sweep-x-y\">Sweep &lt;x&gt; &amp; &quot;y&quot;</h1>"),
            "{p}"
        );
        assert!(
            p.contains("<pre><code>let a = 1 &lt; 2;\n</code></pre>"),
            "{p}"
        );
        assert!(p.contains("&quot;schema&quot;: &quot;elk-opt/report/1&quot;"));
        assert!(!p.contains("<x>") && !p.contains("<S128>"));
    }

    #[test]
    fn the_page_references_nothing_on_the_network() {
        let p = page(&files(README), &PROV);
        for attr in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "url("] {
            assert!(!p.contains(attr), "{attr}: {p}");
        }
        // A remote link is printed, not linked.
        assert!(p.contains("remote one (https://example.com/x)"), "{p}");
        assert!(p.contains("<a href=\"../gap/README.md\">the gap study</a>"));
        assert!(p.contains("default-src 'none'"));
    }

    #[test]
    fn markdown_blocks_lists_paragraphs_and_inline_forms() {
        let p = page(&files(README), &PROV);
        assert!(p.contains("<ul>\n<li>command: <code>elk-opt report r.jsonl -o out --html</code></li>\n<li>inputs: r.jsonl</li>\n</ul>"), "{p}");
        assert!(p.contains("<p>text\nwrapped</p>"), "{p}");
        assert!(p.contains("Some <strong>bold</strong> text"));
        let p = page(
            &files("1. one\n2. two\n   more\n\n> quoted `c`\n\na \\| b ** c\n"),
            &PROV,
        );
        assert!(
            p.contains("<ol>\n<li>one</li>\n<li>two\nmore</li>\n</ol>"),
            "{p}"
        );
        assert!(
            p.contains("<blockquote><p>quoted <code>c</code></p></blockquote>"),
            "{p}"
        );
        assert!(p.contains("<p>a | b ** c</p>"), "{p}");
    }

    #[test]
    fn png_figures_are_data_uris() {
        let mut f = files("# T\n\n![A](a.png)\n");
        f[1] = ("a.png".into(), b"\x89PNG-bytes".to_vec());
        f.remove(3);
        let p = page(&f, &PROV);
        assert!(
            p.contains(&format!(
                "<img alt=\"A\" src=\"data:image/png;base64,{}\">",
                markdown::base64(b"\x89PNG-bytes")
            )),
            "{p}"
        );
        assert_eq!(p.matches("<img").count(), 1);
    }

    #[test]
    fn the_same_files_give_the_same_bytes() {
        assert_eq!(page(&files(README), &PROV), page(&files(README), &PROV));
    }
}
