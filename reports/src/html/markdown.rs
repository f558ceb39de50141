//! The README's Markdown to HTML. pulldown-cmark parses it (CommonMark with pipe tables);
//! the writer here turns its events into HTML, because a report's page differs from plain
//! CommonMark output where it matters to a report:
//! - an image is a figure of the report, drawn inline (see [`Blocks::figure`]); a paragraph
//!   that is one image becomes a `<figure>` with its caption and its numbers;
//! - a link or image to another site is printed as text, and so is raw HTML, so the page
//!   never points at the network and the Markdown adds no element of its own;
//! - every heading gets a unique id, and a table scrolls inside `<div class="scroll">`;
//! - single `*`/`_` emphasis is printed as written: report text holds `T*` and
//!   `pct_of_ideal`, which emphasis rules would mangle; `**bold**` is bold;
//! - text is escaped with [`escape`], quotes included, as everywhere on the page.

use pulldown_cmark::{Alignment, Event, Options, Parser, Tag, TagEnd};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// `s` with `& < > " '` escaped: safe as element text and inside a quoted attribute.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as an HTML id: lower-case letters and digits, runs of anything else one `-`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// A target outside the report (another site, or a scheme such as `data:`), never linked.
fn is_remote(target: &str) -> bool {
    target.starts_with("//") || target.contains(':')
}

/// The converter's state over one README: the report's files (for figures), the figures
/// drawn so far (each is drawn once) and the heading ids given (each is unique).
pub struct Blocks<'a> {
    files: BTreeMap<&'a str, &'a [u8]>,
    order: Vec<&'a str>,
    drawn: BTreeSet<String>,
    ids: BTreeSet<String>,
}

impl<'a> Blocks<'a> {
    /// A converter for the README of `files`.
    pub fn new(files: &'a [(String, Vec<u8>)]) -> Blocks<'a> {
        Blocks {
            files: files
                .iter()
                .map(|(n, b)| (n.as_str(), b.as_slice()))
                .collect(),
            order: files.iter().map(|(n, _)| n.as_str()).collect(),
            drawn: BTreeSet::new(),
            ids: BTreeSet::new(),
        }
    }

    /// The HTML of the Markdown `md`.
    pub fn convert(&mut self, md: &str) -> String {
        let events: Vec<(Event<'_>, Range<usize>)> = Parser::new_ext(md, Options::ENABLE_TABLES)
            .into_offset_iter()
            .collect();
        let mut w = Writer::default();
        let mut i = 0;
        while i < events.len() {
            let (event, range) = &events[i];
            let source = &md[range.clone()];
            match event {
                Event::Start(Tag::Paragraph) => match lone_image(&events[i..]) {
                    Some((alt, target, len)) => {
                        w.out.push_str(&self.figure(&alt, target));
                        i += len - 1;
                    }
                    None => w.out.push_str("<p>"),
                },
                Event::Start(Tag::Image { dest_url, .. }) => {
                    let (alt, len) = alt_text(&events[i..]);
                    w.out.push_str(&self.image(&alt, dest_url));
                    i += len - 1;
                }
                Event::Start(Tag::Heading { level, .. }) => {
                    let id = self.id(heading_text(source));
                    w.out.push_str(&format!("<{level} id=\"{id}\">"));
                }
                Event::Start(Tag::Link { dest_url, .. }) if is_remote(dest_url) => {
                    w.links.push(Some(dest_url.to_string()));
                }
                Event::Start(Tag::Link { dest_url, .. }) => {
                    w.out
                        .push_str(&format!("<a href=\"{}\">", escape(dest_url)));
                    w.links.push(None);
                }
                _ => w.event(event, source),
            }
            i += 1;
        }
        w.out
    }

    /// The figures of the report the text has not drawn, in file order.
    pub fn unlinked(&mut self) -> String {
        let rest: Vec<&str> = self
            .order
            .iter()
            .copied()
            .filter(|n| (n.ends_with(".svg") || n.ends_with(".png")) && !self.drawn.contains(*n))
            .collect();
        rest.into_iter().map(|n| self.figure(n, n)).collect()
    }

    /// A unique id for a heading `text`.
    fn id(&mut self, text: &str) -> String {
        let base = match slug(text) {
            s if s.is_empty() => "section".to_string(),
            s => s,
        };
        let mut id = base.clone();
        let mut n = 2;
        while !self.ids.insert(id.clone()) {
            id = format!("{base}-{n}");
            n += 1;
        }
        id
    }

    /// The figure `target` as a block: the image inlined, `alt` as its caption, and its
    /// numbers (the CSV beside it) as a folded table. A figure drawn before is a link to it.
    fn figure(&mut self, alt: &str, target: &str) -> String {
        let image = self.image(alt, target);
        if !image.starts_with("<svg") && !image.starts_with("<img") {
            return format!("<p>{image}</p>\n");
        }
        let stem = target.rsplit_once('.').map_or(target, |(s, _)| s);
        let numbers = self
            .files
            .get(format!("{stem}.csv").as_str())
            .map(|csv| csv_table(&String::from_utf8_lossy(csv), &format!("{stem}.csv")))
            .unwrap_or_default();
        format!(
            "<figure id=\"fig-{}\">\n{image}\n<figcaption>{}</figcaption>\n{numbers}</figure>\n",
            slug(stem),
            escape(alt)
        )
    }

    /// The image `target` inline: its SVG markup or a PNG `data:` URI the first time, a link
    /// to that figure after, or a note when the report has no such file.
    fn image(&mut self, alt: &str, target: &str) -> String {
        let stem = target.rsplit_once('.').map_or(target, |(s, _)| s);
        let bytes = match self.files.get(target) {
            Some(b) if !is_remote(target) => *b,
            _ => {
                return format!(
                    "<span class=\"missing\">[figure {} is not in the report]</span>",
                    escape(target)
                )
            }
        };
        if !self.drawn.insert(target.to_string()) {
            return format!("<a href=\"#fig-{}\">{}</a>", slug(stem), escape(alt));
        }
        if target.ends_with(".png") {
            return format!(
                "<img alt=\"{}\" src=\"data:image/png;base64,{}\">",
                escape(alt),
                base64(bytes)
            );
        }
        let text = String::from_utf8_lossy(bytes);
        // Inline SVG is the `<svg>` element itself: an XML prolog or doctype is dropped.
        let svg = text.find("<svg").map_or("", |at| &text[at..]).trim_end();
        match svg.strip_prefix("<svg") {
            Some(rest) => format!("<svg role=\"img\" aria-label=\"{}\"{rest}", escape(alt)),
            None => format!(
                "<span class=\"missing\">[figure {} is not an SVG]</span>",
                escape(target)
            ),
        }
    }
}

/// The HTML writer's state within one README: open tables, links and emphasis.
#[derive(Default)]
struct Writer {
    out: String,
    /// The open table's column alignments, whether its header row is open, and the column.
    aligns: Vec<Alignment>,
    in_head: bool,
    column: usize,
    /// Open links: the target of a remote one (printed after its text), None for a local one.
    links: Vec<Option<String>>,
    /// Open emphasis, as written (`*`, `_`, `__`), or None for `**` (bold).
    marks: Vec<Option<String>>,
    /// Open block quotes: their paragraphs close on the same line.
    quotes: usize,
}

impl Writer {
    /// Writes `event`, whose Markdown is `source` (figures and links are the caller's).
    fn event(&mut self, event: &Event<'_>, source: &str) {
        let out = &mut self.out;
        match event {
            Event::Start(tag) => match tag {
                Tag::Paragraph | Tag::HtmlBlock => out.push_str("<p>"),
                Tag::BlockQuote(_) => {
                    self.quotes += 1;
                    out.push_str("<blockquote>");
                }
                Tag::CodeBlock(_) => out.push_str("<pre><code>"),
                Tag::List(Some(_)) => out.push_str("<ol>\n"),
                Tag::List(None) => out.push_str("<ul>\n"),
                Tag::Item => out.push_str("<li>"),
                Tag::Table(aligns) => {
                    self.aligns.clone_from(aligns);
                    out.push_str("<div class=\"scroll\"><table>\n");
                }
                Tag::TableHead => {
                    self.in_head = true;
                    self.column = 0;
                    out.push_str("<thead>\n<tr>");
                }
                Tag::TableRow => {
                    self.column = 0;
                    out.push_str("<tr>");
                }
                Tag::TableCell => {
                    let cell = if self.in_head { "th" } else { "td" };
                    let style = match self.aligns.get(self.column) {
                        Some(Alignment::Left) => " style=\"text-align:left\"",
                        Some(Alignment::Center) => " style=\"text-align:center\"",
                        Some(Alignment::Right) => " style=\"text-align:right\"",
                        Some(Alignment::None) | None => "",
                    };
                    out.push_str(&format!("<{cell}{style}>"));
                }
                Tag::Strong if source.starts_with("**") => {
                    self.marks.push(None);
                    out.push_str("<strong>");
                }
                Tag::Emphasis | Tag::Strong => {
                    let mark = if matches!(tag, Tag::Strong) {
                        &source[..2]
                    } else {
                        &source[..1]
                    };
                    out.push_str(&escape(mark));
                    self.marks.push(Some(mark.to_string()));
                }
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Paragraph if self.quotes > 0 => out.push_str("</p>"),
                TagEnd::Paragraph => out.push_str("</p>\n"),
                TagEnd::HtmlBlock => {
                    out.truncate(out.trim_end_matches('\n').len());
                    out.push_str("</p>\n");
                }
                TagEnd::Heading(level) => out.push_str(&format!("</{level}>\n")),
                TagEnd::BlockQuote(_) => {
                    self.quotes -= 1;
                    out.push_str("</blockquote>\n");
                }
                TagEnd::CodeBlock => out.push_str("</code></pre>\n"),
                TagEnd::List(true) => out.push_str("</ol>\n"),
                TagEnd::List(false) => out.push_str("</ul>\n"),
                TagEnd::Item => out.push_str("</li>\n"),
                TagEnd::TableHead => {
                    self.in_head = false;
                    out.push_str("</tr>\n</thead>\n<tbody>\n");
                }
                TagEnd::TableRow => out.push_str("</tr>\n"),
                TagEnd::TableCell => {
                    self.column += 1;
                    out.push_str(if self.in_head { "</th>" } else { "</td>" });
                }
                TagEnd::Table => out.push_str("</tbody>\n</table></div>\n"),
                TagEnd::Emphasis | TagEnd::Strong => match self.marks.pop().flatten() {
                    Some(mark) => out.push_str(&escape(&mark)),
                    None => out.push_str("</strong>"),
                },
                TagEnd::Link => match self.links.pop().flatten() {
                    Some(target) => out.push_str(&format!(" ({})", escape(&target))),
                    None => out.push_str("</a>"),
                },
                _ => {}
            },
            Event::Text(t) | Event::Html(t) | Event::InlineHtml(t) => out.push_str(&escape(t)),
            Event::Code(t) => out.push_str(&format!("<code>{}</code>", escape(t))),
            Event::SoftBreak => out.push('\n'),
            // A backslash before a line break stays, as it was written.
            Event::HardBreak if source.starts_with('\\') => out.push_str("\\\n"),
            Event::HardBreak => out.push('\n'),
            Event::Rule => out.push_str(&format!("<p>{}</p>\n", escape(source.trim()))),
            _ => out.push_str(&escape(source)),
        }
    }
}

/// The text of a heading whose Markdown is `source` (`## text`), for its id.
fn heading_text(source: &str) -> &str {
    let line = source.lines().next().unwrap_or("").trim();
    line.trim_start_matches('#').trim()
}

/// The plain text of the image starting `events` (its alt text), and the events it spans.
fn alt_text(events: &[(Event<'_>, Range<usize>)]) -> (String, usize) {
    let mut alt = String::new();
    for (k, (e, _)) in events.iter().enumerate() {
        match e {
            Event::End(TagEnd::Image) => return (alt, k + 1),
            Event::Text(t) | Event::Code(t) => alt.push_str(t),
            _ => {}
        }
    }
    (alt, events.len())
}

/// A paragraph starting `events` that is one image and nothing else: its alt text, its
/// target and the events the paragraph spans.
fn lone_image<'e>(events: &'e [(Event<'_>, Range<usize>)]) -> Option<(String, &'e str, usize)> {
    let Some((Event::Start(Tag::Image { dest_url, .. }), _)) = events.get(1) else {
        return None;
    };
    let (alt, len) = alt_text(&events[1..]);
    matches!(
        events.get(1 + len),
        Some((Event::End(TagEnd::Paragraph), _))
    )
    .then(|| (alt, dest_url.as_ref(), len + 2))
}

/// A figure's CSV as a folded table (`name` in its summary).
fn csv_table(csv: &str, name: &str) -> String {
    let mut rows = crate::csv_text::read(csv).into_iter();
    let Some(header) = rows.next() else {
        return String::new();
    };
    let mut out = format!(
        "<details><summary>Numbers plotted ({})</summary><div class=\"scroll\"><table>\n<thead>\n<tr>",
        escape(name)
    );
    for h in header {
        out.push_str(&format!("<th>{}</th>", escape(&h)));
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for f in row {
            out.push_str(&format!("<td>{}</td>", escape(&f)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div></details>\n");
    out
}

/// RFC 4648 base64 (with padding), for PNG figures as `data:` URIs.
pub(super) fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_heading_texts() {
        assert_eq!(slug("Latency (ms)"), "latency-ms");
        assert_eq!(slug("pct_of_ideal"), "pct-of-ideal");
        assert_eq!(heading_text("## Worst cases\n"), "Worst cases");
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc, "{raw}");
        }
    }
}
