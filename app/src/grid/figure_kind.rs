//! The figure types a grid may name (`figure = "…"` in its TOML, SPEC §7), as one enum: the
//! grid's check, the report's choice of layout and the line figures' swept quantity all
//! match on it, so a new figure type is a compile error wherever it needs a decision, not a
//! string that silently falls through to the bars. It lives with the grid, which parses it;
//! the report only reads it.

/// A figure type of a grid, and so the layout of its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureKind {
    /// `bars` (Fig 17): latency per configuration and method.
    Bars,
    /// `breakdown` (Fig 18/20): where the time goes, utilisation, TFLOP/s.
    Breakdown,
    /// `vs-hbm` (Fig 19/21): latency against the HBM bandwidth.
    VsHbm,
    /// `vs-noc` (Fig 22): latency against the NoC bandwidth.
    VsNoc,
    /// `vs-cores` (Fig 23): latency against the core count.
    VsCores,
    /// `training` (Fig 24): TFLOP/s against compute speed.
    Training,
}

impl FigureKind {
    /// Every figure type, in the order the grid's error message lists them.
    pub const ALL: [FigureKind; 6] = [
        FigureKind::Bars,
        FigureKind::Breakdown,
        FigureKind::VsHbm,
        FigureKind::VsNoc,
        FigureKind::VsCores,
        FigureKind::Training,
    ];

    /// The name a grid file and a results file give it.
    pub fn name(self) -> &'static str {
        match self {
            FigureKind::Bars => "bars",
            FigureKind::Breakdown => "breakdown",
            FigureKind::VsHbm => "vs-hbm",
            FigureKind::VsNoc => "vs-noc",
            FigureKind::VsCores => "vs-cores",
            FigureKind::Training => "training",
        }
    }

    /// The figure type named `name`, if any.
    pub fn parse(name: &str) -> Option<FigureKind> {
        FigureKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in FigureKind::ALL {
            assert_eq!(FigureKind::parse(k.name()), Some(k));
        }
        assert_eq!(FigureKind::parse("pie"), None);
    }
}
