//! What a figure is drawn as ([`Style`], [`Format`]) and what it leaves in a report
//! ([`Figure`]: the image and a CSV of exactly its numbers).

use super::series::{Marks, Series};
use elk_app::{AppError, Result};

/// The image format of figures. SVG is the default; PNG is drawn by plotters' bitmap backend
/// with the same font and layout. PDF is left out: the pure-Rust path (svg2pdf 0.13) pulls
/// 107 crates and took 497 s to build here (docs/sweeps.md, "Figures").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics (the default).
    #[default]
    Svg,
    /// A bitmap at `dpi` pixels per inch: a figure of W px (CSS px, 96 per inch) is
    /// W × dpi / 96 pixels wide, and the PNG records the resolution.
    Png {
        /// Pixels per inch (96: one pixel per px).
        dpi: u32,
    },
}

impl Format {
    /// The format named `name` (`svg`, `png`), PNG at `dpi` (None: 96).
    pub fn parse(name: &str, dpi: Option<u32>) -> Result<Format> {
        let bad = |detail: String| AppError::Plot {
            name: "--format".into(),
            detail,
        };
        match (name, dpi) {
            ("svg", None) => Ok(Format::Svg),
            ("svg", Some(_)) => Err(bad("a DPI is for PNG figures (--format png)".into())),
            ("png", dpi) => Ok(Format::Png {
                dpi: dpi.unwrap_or(96),
            }),
            _ => Err(bad(format!(
                "'{name}' is not a figure format: expected svg or png (PDF is not built in: \
                 convert the SVG, e.g. with rsvg-convert -f pdf)"
            ))),
        }
    }

    /// The file extension (`svg`, `png`).
    pub fn ext(&self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png { .. } => "png",
        }
    }
}

/// How a figure is drawn: its format, size and text size. The default lets the layout choose
/// the size (wide enough for every category and the legend) and draws labels at 14 px.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    /// Width in px (None: as wide as the content needs).
    pub width: Option<u32>,
    /// Height in px (None: the layout's).
    pub height: Option<u32>,
    /// Size of axis labels and legend text in px (None: 14); titles, axis descriptions and
    /// the space for labels scale with it.
    pub font_size: Option<u32>,
    /// SVG or PNG.
    pub format: Format,
}

/// Label size in px when the style sets none.
pub(super) const LABEL_FONT: u32 = 14;

impl Style {
    /// Device pixels per px: 1 for SVG, dpi / 96 for PNG.
    fn zoom(&self) -> f64 {
        match self.format {
            Format::Svg => 1.0,
            Format::Png { dpi } => f64::from(dpi) / 96.0,
        }
    }

    /// `base` (a text size, or a length tied to text, in px at the default 14 px labels) in
    /// device pixels at this style's font size.
    pub(super) fn px(&self, base: u32) -> u32 {
        let f = f64::from(self.font_size.unwrap_or(LABEL_FONT)) / f64::from(LABEL_FONT);
        (f64::from(base) * f * self.zoom()).round().max(1.0) as u32
    }

    /// [`Style::px`] as a signed length.
    pub(super) fn len(&self, base: i32) -> i32 {
        self.px(base.max(0) as u32) as i32
    }

    /// A length of the drawing (margins, strokes, markers) in device pixels.
    pub(super) fn z(&self, v: i32) -> i32 {
        (f64::from(v) * self.zoom()).round() as i32
    }

    /// [`Style::z`] for sizes.
    pub(super) fn zu(&self, v: u32) -> u32 {
        (f64::from(v) * self.zoom()).round().max(1.0) as u32
    }

    /// A stroke `w` px wide.
    pub(super) fn stroke(&self, w: u32) -> u32 {
        self.zu(w)
    }

    /// The figure's width and height in device pixels: the style's, or the layout's.
    pub(super) fn size(&self, layout_w: u32, layout_h: u32) -> (u32, u32) {
        (
            self.width.map_or(layout_w, |w| self.zu(w)),
            self.height.map_or(layout_h, |h| self.zu(h)),
        )
    }
}

/// A drawn figure: the image (SVG or PNG) and, beside it, a CSV of exactly the numbers it
/// plots. Its only way into a report is [`Figure::files`], which gives both, so no figure
/// goes without its numbers.
#[derive(Clone, Debug)]
pub struct Figure {
    pub(super) image: Vec<u8>,
    pub(super) format: Format,
    pub(super) csv: String,
}

impl Figure {
    /// The SVG (empty for a PNG figure).
    pub fn svg(&self) -> &str {
        match self.format {
            Format::Svg => std::str::from_utf8(&self.image).unwrap_or(""),
            Format::Png { .. } => "",
        }
    }

    /// The image file's bytes (SVG text or PNG).
    pub fn image(&self) -> &[u8] {
        &self.image
    }

    /// The CSV: a header naming the series, x (or category) and y columns with their units,
    /// then one row per plotted point, in the series' order; a value the figure marks as
    /// absent has an empty y and its label in `note`.
    pub fn csv(&self) -> &str {
        &self.csv
    }

    /// The report files `STEM.svg` (or `STEM.png`) and `STEM.csv`.
    pub fn files(self, stem: &str) -> [(String, Vec<u8>); 2] {
        [
            (format!("{stem}.{}", self.format.ext()), self.image),
            (format!("{stem}.csv"), self.csv.into_bytes()),
        ]
    }
}

/// Encodes an RGB buffer as a PNG that records `dpi`.
pub(super) fn png(
    rgb: &[u8],
    (w, h): (u32, u32),
    dpi: u32,
) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let per_metre = (f64::from(dpi) / 0.0254).round() as u32;
        enc.set_pixel_dims(Some(png::PixelDimensions {
            xppu: per_metre,
            yppu: per_metre,
            unit: png::Unit::Meter,
        }));
        let mut writer = enc.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(rgb).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// The CSV records of a chart: `series,X,Y,note`, X being `category` for bars (`categories`) or the
/// x axis description for lines (None), every number as Rust prints an f64 (shortest
/// round-trip form), so it reads back to the plotted value exactly.
pub(super) fn data_csv(
    categories: Option<&[String]>,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    marks: &Marks,
) -> Vec<Vec<String>> {
    let mut header = vec!["series".into(), x_desc.into(), y_desc.into(), "note".into()];
    header.extend(marks.context.iter().map(|(name, _)| name.clone()));
    let mut records = vec![header];
    for (s, ser) in series.iter().enumerate() {
        for (i, (x, y)) in ser.points.iter().enumerate() {
            let x = match categories {
                Some(c) => c.get(i).cloned().unwrap_or_default(),
                None => x.to_string(),
            };
            let y = y.map_or_else(String::new, |y| y.to_string());
            let mut notes: Vec<String> = Vec::new();
            if marks.reference == Some(s) {
                notes.push("reference".into());
            }
            if marks.bound == Some(s) {
                notes.push("certified lower bound".into());
                if let Some((_, lo, hi)) = marks.bound_band.iter().find(|b| b.0 == i) {
                    notes.push(format!("range {lo} to {hi}"));
                }
            }
            if let Some(a) = marks.absent.iter().find(|a| a.series == s && a.point == i) {
                notes.push(format!("absent: {}", a.label));
            }
            if let Some(sp) = marks.spread.iter().find(|p| p.series == s && p.point == i) {
                let (lo, hi) = marks.spread_ends.names();
                notes.push(format!("{lo} {} {hi} {}", sp.lo, sp.hi));
            }
            notes.extend(
                marks
                    .point_notes
                    .iter()
                    .filter(|(series, point, _)| (*series, *point) == (s, i))
                    .map(|(_, _, n)| n.clone()),
            );
            let mut record = vec![ser.name.clone(), x, y, notes.join("; ")];
            record.extend(
                marks
                    .context
                    .iter()
                    .map(|(_, values)| values.get(i).cloned().unwrap_or_default()),
            );
            records.push(record);
        }
    }
    records
}

/// Report files that link `STEM.svg` link `STEM.png` when the figure is a PNG: the Markdown
/// is written with SVG links, the figures decide their format.
pub fn relink(files: &mut [(String, Vec<u8>)]) {
    let pngs: Vec<String> = files
        .iter()
        .filter_map(|(n, _)| n.strip_suffix(".png").map(str::to_string))
        .collect();
    if pngs.is_empty() {
        return;
    }
    for (name, body) in files.iter_mut().filter(|(n, _)| n.ends_with(".md")) {
        let _ = name;
        let mut text = String::from_utf8_lossy(body).into_owned();
        for stem in &pngs {
            text = text.replace(&format!("]({stem}.svg)"), &format!("]({stem}.png)"));
        }
        *body = text.into_bytes();
    }
}
