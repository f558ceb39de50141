//! What a chart draws: its [`Series`] and their [`Marks`] (absent values, a reference, a
//! bound and its band, groups of categories, the spread of the samples behind a value).

/// One series of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label. A method's name in it (`elk-full`, `static`, …) gives the series that
    /// method's colour in every figure.
    pub name: String,
    /// Values (bars: one per category, None = missing; lines: (x, y) points).
    pub points: Vec<(f64, Option<f64>)>,
}

/// A point a series has no value for, and why: drawn as an "×" on the axis, the reason in
/// the legend and in a footnote.
#[derive(Clone, Debug, PartialEq)]
pub struct Absent {
    /// The series (index into the chart's series).
    pub series: usize,
    /// The point (index into that series' points; its value is None).
    pub point: usize,
    /// A few words: "no schedule", "infeasible".
    pub label: String,
}

/// What a chart draws besides its series.
#[derive(Clone, Debug, Default)]
pub struct Marks {
    /// Values the series lack, each drawn as an "×".
    pub absent: Vec<Absent>,
    /// A series that is a reference figure, not a method (Elk's Ideal): an outlined bar, a
    /// dashed line.
    pub reference: Option<usize>,
    /// A series that is a certified lower bound on the others' values (a cell's proven
    /// bound): a grey solid line without markers, a grey rule across each bar group.
    pub bound: Option<usize>,
    /// Lines: the range the bound spans at some of its points, as (point, lowest, highest)
    /// (an MoE cell's steps each have a bound; the point is their mean): a light grey band.
    pub bound_band: Vec<(usize, f64, f64)>,
    /// Bars: runs of consecutive categories that belong together (a model's
    /// configurations), as (label, number of categories); drawn with a separator between
    /// runs and the label below their category labels. Empty: no groups.
    pub groups: Vec<(String, usize)>,
    /// The spread of the samples behind a bar or a point, drawn as a whisker with caps.
    pub spread: Vec<Spread>,
    /// What a spread's ends are.
    pub spread_ends: SpreadEnds,
    /// Lines: each series is a distribution function, drawn as steps (a CDF).
    pub steps: bool,
    /// Lines: a log x axis (the x values are all positive).
    pub log_x: bool,
    /// Notes on single points, written in the figure's CSV (series, point, note): e.g. that
    /// Ideal is out of reach on that point's chip.
    pub point_notes: Vec<(usize, usize, String)>,
    /// Columns the figure's CSV adds after its own (name, one value per point index): what
    /// each point is, e.g. the model and chip of a sweep's cell.
    pub context: Vec<(String, Vec<String>)>,
}

/// What the two ends of every [`Spread`] of a chart are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SpreadEnds {
    /// The smallest and the largest sample (the bar or point: their median).
    #[default]
    MinMax,
    /// The median and the 99th percentile (nearest rank) of the samples; the point is their
    /// mean (an MoE cell's steps).
    P50P99,
}

impl SpreadEnds {
    /// The names of the two ends, as the CSV's note gives them.
    pub(super) fn names(self) -> (&'static str, &'static str) {
        match self {
            SpreadEnds::MinMax => ("min", "max"),
            SpreadEnds::P50P99 => ("p50", "p99"),
        }
    }

    /// The legend's line for a line chart's whiskers.
    pub(super) fn legend(self) -> &'static str {
        match self {
            SpreadEnds::MinMax => "whisker: min to max of the samples",
            SpreadEnds::P50P99 => "point: mean; whisker: p50 to p99",
        }
    }
}

/// The spread of the samples behind one bar or point.
#[derive(Clone, Debug, PartialEq)]
pub struct Spread {
    /// The series (index into the chart's series).
    pub series: usize,
    /// The point (index into that series' points).
    pub point: usize,
    /// The smallest sample.
    pub lo: f64,
    /// The largest sample.
    pub hi: f64,
}

impl Marks {
    /// The legend's line for the "×" markers (None: nothing is absent).
    pub(super) fn legend(&self) -> Option<String> {
        let mut labels: Vec<&str> = Vec::new();
        for a in &self.absent {
            if !labels.contains(&a.label.as_str()) {
                labels.push(&a.label);
            }
        }
        (!labels.is_empty()).then(|| format!("× no value: {}", labels.join(" / ")))
    }
}
