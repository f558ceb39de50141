//! The Markdown the reports write, to HTML: ATX headings, paragraphs, `-`/`*`/`1.` lists
//! (one level; indented lines continue an item), `>` quotes, pipe tables (with `:---:`
//! alignment), fenced code, and inline code spans, `**bold**`, `\` escapes, links and images.
//! Anything else is text, escaped. Single `*`/`_` emphasis is left out on purpose: report text
//! holds `T*` and `pct_of_ideal`, which emphasis rules would mangle.
//!
//! An image is a figure of the report, drawn inline (see [`Blocks::figure`]); a link or image
//! to another site is printed as text, so the page never points at the network.

use crate::plot::csv_fields;
use std::collections::{BTreeMap, BTreeSet};

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
        let lines: Vec<&str> = md.lines().collect();
        let mut out = String::new();
        let mut para: Vec<&str> = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            let line = lines[i];
            let t = line.trim();
            let is_table =
                t.starts_with('|') && lines.get(i + 1).is_some_and(|n| aligns(n).is_some());
            let starts_block = is_table
                || t.is_empty()
                || t.starts_with("```")
                || heading(t).is_some()
                || item(t).is_some()
                || t.starts_with('>')
                || lone_image(t).is_some();
            if starts_block && !para.is_empty() {
                let text = para.join("\n");
                out.push_str(&format!("<p>{}</p>\n", self.inline(&text)));
                para.clear();
            }
            if t.is_empty() {
                i += 1;
            } else if t.starts_with("```") {
                let end = lines[i + 1..]
                    .iter()
                    .position(|l| l.trim_start().starts_with("```"))
                    .map_or(lines.len(), |p| i + 1 + p);
                let mut code = String::new();
                for l in &lines[i + 1..end] {
                    code.push_str(l);
                    code.push('\n');
                }
                out.push_str(&format!("<pre><code>{}</code></pre>\n", escape(&code)));
                i = end + 1;
            } else if let Some((level, text)) = heading(t) {
                let id = self.id(text);
                out.push_str(&format!(
                    "<h{level} id=\"{id}\">{}</h{level}>\n",
                    self.inline(text)
                ));
                i += 1;
            } else if let Some((ordered, _)) = item(t) {
                i = self.list(&lines, i, ordered, &mut out);
            } else if t.starts_with('>') {
                let mut quoted = Vec::new();
                while let Some(q) = lines.get(i).and_then(|l| l.trim().strip_prefix('>')) {
                    quoted.push(q.strip_prefix(' ').unwrap_or(q));
                    i += 1;
                }
                out.push_str(&format!(
                    "<blockquote><p>{}</p></blockquote>\n",
                    self.inline(&quoted.join("\n"))
                ));
            } else if let Some((alt, target)) = lone_image(t) {
                out.push_str(&self.figure(alt, target));
                i += 1;
            } else if is_table {
                i = self.table(&lines, i, &mut out);
            } else {
                para.push(t);
                i += 1;
            }
        }
        if !para.is_empty() {
            out.push_str(&format!("<p>{}</p>\n", self.inline(&para.join("\n"))));
        }
        out
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

    /// The list starting at line `i` (items of one kind; indented lines continue an item);
    /// returns the line after it.
    fn list(&mut self, lines: &[&str], mut i: usize, ordered: bool, out: &mut String) -> usize {
        let mut items: Vec<Vec<&str>> = Vec::new();
        while let Some(line) = lines.get(i) {
            let t = line.trim();
            match item(t) {
                Some((o, text)) if o == ordered => items.push(vec![text]),
                Some(_) => break,
                None if !t.is_empty() && line.starts_with([' ', '\t']) && !items.is_empty() => {
                    if let Some(last) = items.last_mut() {
                        last.push(t);
                    }
                }
                None => break,
            }
            i += 1;
        }
        let tag = if ordered { "ol" } else { "ul" };
        out.push_str(&format!("<{tag}>\n"));
        for it in items {
            out.push_str(&format!("<li>{}</li>\n", self.inline(&it.join("\n"))));
        }
        out.push_str(&format!("</{tag}>\n"));
        i
    }

    /// The pipe table starting at line `i` (header, alignment row, body rows); returns the
    /// line after it.
    fn table(&mut self, lines: &[&str], mut i: usize, out: &mut String) -> usize {
        let header = cells(lines[i]);
        let aligns = aligns(lines[i + 1]).unwrap_or_default();
        i += 2;
        let style = |c: usize| match aligns.get(c).copied().flatten() {
            Some(a) => format!(" style=\"text-align:{a}\""),
            None => String::new(),
        };
        out.push_str("<div class=\"scroll\"><table>\n<thead>\n<tr>");
        for (c, h) in header.iter().enumerate() {
            out.push_str(&format!("<th{}>{}</th>", style(c), self.inline(h)));
        }
        out.push_str("</tr>\n</thead>\n<tbody>\n");
        while let Some(row) = lines.get(i).filter(|l| l.trim().starts_with('|')) {
            out.push_str("<tr>");
            for (c, cell) in cells(row).iter().enumerate() {
                out.push_str(&format!("<td{}>{}</td>", style(c), self.inline(cell)));
            }
            out.push_str("</tr>\n");
            i += 1;
        }
        out.push_str("</tbody>\n</table></div>\n");
        i
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
                super::base64(bytes)
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

    /// Inline Markdown of one block's text, escaped.
    fn inline(&mut self, s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            if c == '\\' {
                if let Some(p) = rest[1..].chars().next().filter(char::is_ascii_punctuation) {
                    out.push_str(&escape(&p.to_string()));
                    rest = &rest[1 + p.len_utf8()..];
                    continue;
                }
            } else if c == '`' {
                let ticks = rest.len() - rest.trim_start_matches('`').len();
                let fence = &rest[..ticks];
                if let Some(end) = rest[ticks..].find(fence) {
                    let code = rest[ticks..ticks + end].trim();
                    out.push_str(&format!("<code>{}</code>", escape(code)));
                    rest = &rest[2 * ticks + end..];
                    continue;
                }
            } else if let Some(inner) = rest.strip_prefix("**") {
                if let Some(end) = inner.find("**").filter(|&e| e > 0) {
                    let bold = self.inline(&inner[..end]);
                    out.push_str(&format!("<strong>{bold}</strong>"));
                    rest = &inner[end + 2..];
                    continue;
                }
            } else if c == '!' || c == '[' {
                let bang = usize::from(c == '!');
                if let Some((text, target, len)) = link(&rest[bang..]) {
                    if bang == 1 {
                        out.push_str(&self.image(text, target));
                    } else if is_remote(target) {
                        out.push_str(&format!("{} ({})", self.inline(text), escape(target)));
                    } else {
                        out.push_str(&format!(
                            "<a href=\"{}\">{}</a>",
                            escape(target),
                            self.inline(text)
                        ));
                    }
                    rest = &rest[bang + len..];
                    continue;
                }
            }
            out.push_str(&escape(&c.to_string()));
            rest = &rest[c.len_utf8()..];
        }
        out
    }
}

/// `# text` … `###### text`: the level and the text.
fn heading(t: &str) -> Option<(usize, &str)> {
    let level = t.len() - t.trim_start_matches('#').len();
    let text = t[level..].strip_prefix(' ')?;
    (1..=6).contains(&level).then(|| (level, text.trim()))
}

/// A list item `- x`, `* x` or `12. x`: ordered or not, and the text.
fn item(t: &str) -> Option<(bool, &str)> {
    if let Some(text) = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")) {
        return Some((false, text));
    }
    let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let text = t[digits..].strip_prefix(". ")?;
    (digits > 0).then_some((true, text))
}

/// `[text](target)` at the start of `s`: text, target and the length taken.
fn link(s: &str) -> Option<(&str, &str, usize)> {
    let inner = s.strip_prefix('[')?;
    let close = inner.find("](")?;
    let after = &inner[close + 2..];
    let end = after.find(')')?;
    Some((
        &inner[..close],
        after[..end].trim(),
        1 + close + 2 + end + 1,
    ))
}

/// A line that is one image and nothing else: its alt text and target.
fn lone_image(t: &str) -> Option<(&str, &str)> {
    let (alt, target, len) = link(t.strip_prefix('!')?)?;
    (len + 1 == t.len()).then_some((alt, target))
}

/// The cells of a table row `| a | b |`, trimmed; a `|` inside a code span or escaped as
/// `\|` stays in its cell.
fn cells(row: &str) -> Vec<String> {
    let t = row.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t
        .strip_suffix('|')
        .filter(|s| !s.ends_with('\\'))
        .unwrap_or(t);
    let mut out = Vec::new();
    let mut cell = String::new();
    let mut in_code = false;
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                in_code = !in_code;
                cell.push(c);
            }
            '\\' if chars.peek() == Some(&'|') => {
                cell.push_str("\\|");
                chars.next();
            }
            '|' if !in_code => out.push(std::mem::take(&mut cell).trim().to_string()),
            c => cell.push(c),
        }
    }
    out.push(cell.trim().to_string());
    out
}

/// The alignment row `|---|:---:|---:|` of a table: each column's `text-align` (None: the
/// default); None when the line is not an alignment row.
fn aligns(line: &str) -> Option<Vec<Option<&'static str>>> {
    let t = line.trim();
    if !t.starts_with('|') {
        return None;
    }
    cells(t)
        .iter()
        .map(|c| {
            let dashes = c.trim_matches(':');
            if dashes.is_empty() || !dashes.chars().all(|ch| ch == '-') {
                return None;
            }
            Some(match (c.starts_with(':'), c.ends_with(':')) {
                (true, true) => Some("center"),
                (false, true) => Some("right"),
                (true, false) => Some("left"),
                (false, false) => None,
            })
        })
        .collect()
}

/// A figure's CSV as a folded table (`name` in its summary). The report's CSVs hold no line
/// breaks inside fields, so one line is one row.
fn csv_table(csv: &str, name: &str) -> String {
    let mut rows = csv.lines().filter(|l| !l.is_empty()).map(csv_fields);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_headings_and_rows() {
        assert_eq!(slug("Latency (ms)"), "latency-ms");
        assert_eq!(slug("pct_of_ideal"), "pct-of-ideal");
        assert_eq!(heading("## Worst cases"), Some((2, "Worst cases")));
        assert_eq!(heading("#x"), None);
        assert_eq!(item("12. x"), Some((true, "x")));
        assert_eq!(item("1.5 ms"), None);
        assert_eq!(cells("| a | `b|c` | d \\| e |"), ["a", "`b|c`", "d \\| e"]);
        assert_eq!(
            aligns("|---|:-:|--:|"),
            Some(vec![None, Some("center"), Some("right")])
        );
        assert_eq!(aligns("| a | b |"), None);
        assert_eq!(
            csv_fields("a,\"b, \"\"c\"\"\",,d"),
            ["a", "b, \"c\"", "", "d"]
        );
    }
}
