//! Which NoC row bounds a stage's duration. SPEC §4's row is a capacity row: the loads'
//! distribution may use the NoC at any time in the stage. The phased row also knows that
//! the executing operator computes before it shifts and that beside its compute phase the
//! loads move at most that phase's length of HBM work, so the rest of their NoC time shares
//! the links with the shifts (`elk_sim::phased`, docs/detailed.md "Is the stage model
//! achievable?"): the paced detailed replay agrees with it within 0.83 % on the Fig-17 grid,
//! where SPEC §4's row is up to 8.7 % optimistic. An instance records its row; files without
//! the field (every file before it existed, the reference artifact's) use SPEC §4's.

use serde::{Deserialize, Serialize};

/// The NoC row of an instance's stage model. (The phased row comes first: it is the one the
/// command line lists first and builds by default.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum NocRow {
    /// SPEC §4's row and also `d_k ≥ exec(o_k) + Σ_j ν_j·w[j][k] − X_k`, X_k the most NoC
    /// time the compute phase absorbs (at most comp(o_k) of HBM work and of NoC time).
    #[cfg_attr(
        feature = "clap",
        value(
            help = "The phased row (the default): loads beside an operator's compute phase move \
                    at most its length of HBM work; what the paced detailed replay measures \
                    (docs/detailed.md)"
        )
    )]
    Phased,
    /// SPEC §4: `d_k ≥ comm(o_k) + Σ_j w[j][k]·ν_j`.
    #[default]
    #[cfg_attr(
        feature = "clap",
        value(help = "SPEC §4's capacity row, the reference artifact's")
    )]
    Spec,
}

impl NocRow {
    /// SPEC §4's row (what files without the field mean).
    pub fn is_spec(&self) -> bool {
        *self == NocRow::Spec
    }

    /// Its name in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            NocRow::Spec => "spec",
            NocRow::Phased => "phased",
        }
    }
}
