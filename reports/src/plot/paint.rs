//! What each series is painted with: its method's colour, the same in every figure, and, for
//! the variants of one method in one chart (Elk-Dyn with and without π, with its depth
//! capped), a lighter or darker shade of that colour and, on bars, a hatch, so variants are
//! told apart in colour, in grey print and in the legend while still reading as one method.

use super::series::{Marks, Series};
use plotters::prelude::*;

/// Colours a reader can tell apart, printed or colour-blind (Okabe and Ito's palette, with
/// its yellow left out: it vanishes on white). The first four are the methods'.
pub(super) const COLOURS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];

/// Each method's colour, the same in every figure (longest names first, so "elk-full" is
/// not taken for another method's name inside it).
const METHOD_COLOURS: [(&str, usize); 4] =
    [("elk-full", 3), ("elk-dyn", 2), ("static", 1), ("basic", 0)];

/// The reference (Ideal).
const REFERENCE: RGBColor = RGBColor(0, 0, 0);

/// A certified lower bound: grey, apart from every method's colour and the reference's black.
const BOUND: RGBColor = RGBColor(110, 110, 110);

/// The band a bound spans: a light grey that keeps the lines over it legible.
pub(super) const BAND: RGBColor = RGBColor(221, 221, 221);

/// Whether series `name` is about `method`: the method's name as a word of it ("elk-full",
/// "elk-full, C distributed", "llama2-13b elk-full"), not as part of a longer name
/// ("elk-full-greedy" is another method, with a colour of its own).
fn names_method(name: &str, method: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c == '-' || c.is_alphanumeric());
    name.match_indices(method).any(|(at, _)| {
        !part(name[..at].chars().next_back()) && !part(name[at + method.len()..].chars().next())
    })
}

/// The method a series is about: its name and its colour's index.
fn method_of(name: &str) -> Option<(&'static str, usize)> {
    let name = name.to_lowercase();
    METHOD_COLOURS
        .iter()
        .find(|(m, _)| names_method(&name, m))
        .copied()
}

/// The family a series belongs to: its method, or, for a series that names none, its name
/// up to the first ", " ("elk-dyn-greedy, no trades" is a variant of "elk-dyn-greedy").
fn family(name: &str) -> String {
    match method_of(name) {
        Some((m, _)) => m.to_string(),
        None => name.split(", ").next().unwrap_or(name).to_lowercase(),
    }
}

/// A pattern over a bar's fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hatch {
    /// The fill alone.
    Solid,
    /// Rising diagonals (/).
    Up,
    /// Falling diagonals (\).
    Down,
    /// Both diagonals.
    Cross,
    /// Horizontal lines.
    Level,
    /// Vertical lines.
    Upright,
}

/// How one series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Paint {
    /// Its fill or line colour.
    pub colour: RGBColor,
    /// Its bars' pattern (lines tell variants apart by dash and marker instead).
    pub hatch: Hatch,
    /// The colour of the pattern's lines: dark on a light shade, white on a dark one.
    pub ink: RGBColor,
}

/// `c` moved towards white (`t` > 0) or black (`t` < 0) by |t|.
fn shade(c: RGBColor, t: f64) -> RGBColor {
    let to = if t >= 0.0 { 255.0 } else { 0.0 };
    let t = t.abs();
    let mix = |v: u8| (f64::from(v) + (to - f64::from(v)) * t).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// The shade and pattern of a method's `k`-th variant (k ≥ 1; the method itself is 0 and
/// keeps its colour): darker and lighter in turn, each with its own pattern, so no two
/// variants of up to six share a fill; darker first, as a light line is faint on white.
fn variant(base: RGBColor, k: usize) -> Paint {
    const LOOKS: [(f64, Hatch); 5] = [
        (-0.35, Hatch::Down),
        (0.45, Hatch::Up),
        (0.7, Hatch::Cross),
        (-0.6, Hatch::Level),
        (0.2, Hatch::Upright),
    ];
    let (t, hatch) = LOOKS[(k - 1) % LOOKS.len()];
    Paint {
        colour: shade(base, t),
        hatch,
        ink: if t > 0.0 { shade(base, -0.45) } else { WHITE },
    }
}

/// Every series' paint: the reference black, the bound grey; a method its own colour; any
/// other series the palette's next colour that no method of this chart uses (the non-method
/// colours first, then the others with the most distinct hues first: orange, sky blue,
/// green, purple before blue and vermillion, which look like orange and sky blue), one per
/// family. Within a family, the series named exactly as the family (else the first) keeps
/// the colour, the others are its variants.
pub(super) fn paints(series: &[Series], marks: &Marks) -> Vec<Paint> {
    let taken: Vec<usize> = series
        .iter()
        .filter_map(|s| method_of(&s.name).map(|m| m.1))
        .collect();
    // Other series take the colours no method owns first, so they are not read as one.
    let mut free = [4, 5, 2, 3, 0, 1]
        .into_iter()
        .filter(|c| !taken.contains(c))
        .cycle();
    // (family, colour, its base series, variants so far).
    let mut families: Vec<(String, RGBColor, usize, usize)> = Vec::new();
    let names: Vec<String> = series.iter().map(|s| family(&s.name)).collect();
    for (s, ser) in series.iter().enumerate() {
        let special = marks.reference == Some(s) || marks.bound == Some(s);
        if special || families.iter().any(|f| f.0 == names[s]) {
            continue;
        }
        let colour = match method_of(&ser.name) {
            Some((_, c)) => COLOURS[c],
            None => COLOURS[free.next().unwrap_or(s % COLOURS.len())],
        };
        let base = (s..series.len())
            .find(|&o| {
                marks.reference != Some(o)
                    && marks.bound != Some(o)
                    && names[o] == names[s]
                    && series[o].name.to_lowercase() == names[s]
            })
            .unwrap_or(s);
        families.push((names[s].clone(), colour, base, 0));
    }
    let solid = |colour| Paint {
        colour,
        hatch: Hatch::Solid,
        ink: colour,
    };
    (0..series.len())
        .map(|s| {
            if marks.reference == Some(s) {
                return solid(REFERENCE);
            }
            if marks.bound == Some(s) {
                return solid(BOUND);
            }
            match families.iter_mut().find(|f| f.0 == names[s]) {
                Some(f) if f.2 == s => solid(f.1),
                Some(f) => {
                    f.3 += 1;
                    variant(f.1, f.3)
                }
                None => solid(COLOURS[s % COLOURS.len()]),
            }
        })
        .collect()
}

/// Every series' colour ([`paints`]).
pub(super) fn palette(series: &[Series], marks: &Marks) -> Vec<RGBColor> {
    paints(series, marks)
        .into_iter()
        .map(|p| p.colour)
        .collect()
}

/// The lines of `hatch` over the box from `(x0, y0)` to `(x1, y1)` (device pixels, y down),
/// `gap` apart, each clipped to the box; the diagonals are anchored to the canvas, so the
/// pattern lines up across neighbouring bars.
pub(super) fn hatch_lines(
    hatch: Hatch,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    gap: i32,
) -> Vec<[(i32, i32); 2]> {
    let (x0, x1) = (x0.min(x1), x0.max(x1));
    let (y0, y1) = (y0.min(y1), y0.max(y1));
    let gap = gap.max(2);
    let first = |lo: i32| lo.div_euclid(gap) * gap + gap;
    let mut out = Vec::new();
    // x + y = c: from bottom left to top right.
    let up = |out: &mut Vec<[(i32, i32); 2]>| {
        let mut c = first(x0 + y0);
        while c < x1 + y1 {
            let (a, b) = ((c - y1).max(x0), (c - y0).min(x1));
            if a < b {
                out.push([(a, c - a), (b, c - b)]);
            }
            c += gap;
        }
    };
    // x − y = c: from top left to bottom right.
    let down = |out: &mut Vec<[(i32, i32); 2]>| {
        let mut c = first(x0 - y1);
        while c < x1 - y0 {
            let (a, b) = ((c + y0).max(x0), (c + y1).min(x1));
            if a < b {
                out.push([(a, a - c), (b, b - c)]);
            }
            c += gap;
        }
    };
    match hatch {
        Hatch::Solid => {}
        Hatch::Up => up(&mut out),
        Hatch::Down => down(&mut out),
        Hatch::Cross => {
            up(&mut out);
            down(&mut out);
        }
        Hatch::Level => {
            let mut y = first(y0);
            while y < y1 {
                out.push([(x0, y), (x1, y)]);
                y += gap;
            }
        }
        Hatch::Upright => {
            let mut x = first(x0);
            while x < x1 {
                out.push([(x, y0), (x, y1)]);
                x += gap;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(names: &[&str]) -> Vec<Paint> {
        let series: Vec<Series> = names
            .iter()
            .map(|n| Series {
                name: n.to_string(),
                points: Vec::new(),
            })
            .collect();
        paints(&series, &Marks::default())
    }

    #[test]
    fn a_method_has_one_colour_in_every_figure_and_other_methods_their_own() {
        let a = named(&["basic", "elk-full"]);
        let b = named(&["elk-full-greedy", "llama2-13b elk-full"]);
        assert_eq!(a[1].colour, COLOURS[3]);
        assert_eq!(b[1].colour, COLOURS[3]);
        assert_ne!(b[0].colour, COLOURS[3]);
        assert_eq!(a[0].colour, named(&["static", "basic"])[1].colour);
    }

    #[test]
    fn variants_of_a_method_get_distinct_shades_and_hatches_of_its_colour() {
        let p = named(&[
            "elk-full",
            "elk-dyn, no π",
            "elk-dyn",
            "elk-dyn, depth ≤ 1",
            "elk-dyn, depth ≤ 2",
            "elk-dyn, depth ≤ 4",
            "elk-dyn-greedy",
            "elk-dyn-greedy, no trades",
        ]);
        // The series named as the method keeps its colour, solid, wherever it stands.
        assert_eq!(p[2].colour, COLOURS[2]);
        assert_eq!(p[2].hatch, Hatch::Solid);
        assert_eq!(p[0].colour, COLOURS[3]);
        // Its four variants: pairwise distinct fills and patterns, none the plain colour.
        let dyn_variants = [1, 3, 4, 5];
        for (i, &a) in dyn_variants.iter().enumerate() {
            assert_ne!(p[a].colour, COLOURS[2]);
            assert_ne!(p[a].hatch, Hatch::Solid);
            for &b in &dyn_variants[i + 1..] {
                assert_ne!(p[a].colour, p[b].colour, "{a} {b}");
                assert_ne!(p[a].hatch, p[b].hatch, "{a} {b}");
            }
            // A shade of green: the green channel leads.
            let c = p[a].colour;
            assert!(c.1 > c.0 && c.1 > c.2, "{c:?}");
        }
        // A series that names no method has variants too.
        assert_eq!(p[6].hatch, Hatch::Solid);
        assert_ne!(p[7].hatch, Hatch::Solid);
        assert_ne!(p[6].colour, p[7].colour);
    }

    #[test]
    fn hatch_lines_stay_inside_their_box() {
        for hatch in [
            Hatch::Up,
            Hatch::Down,
            Hatch::Cross,
            Hatch::Level,
            Hatch::Upright,
        ] {
            let lines = hatch_lines(hatch, (10, 100), (40, 20), 6);
            assert!(lines.len() >= 4, "{hatch:?}");
            for l in lines {
                for (x, y) in l {
                    assert!(
                        (10..=40).contains(&x) && (20..=100).contains(&y),
                        "{hatch:?}"
                    );
                }
            }
        }
        assert!(hatch_lines(Hatch::Solid, (0, 0), (9, 9), 3).is_empty());
    }
}
