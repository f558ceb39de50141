//! `clap::ValueEnum` for [`LoadPolicy`] (the `clap` feature): the command line's
//! `--loads paced|greedy` takes the policy itself, by [`LoadPolicy::name`]. Written out (not
//! derived on the enum) so the feature stays out of `detailed/`'s files.

use crate::detailed::LoadPolicy;
use clap::builder::PossibleValue;

impl clap::ValueEnum for LoadPolicy {
    fn value_variants<'a>() -> &'a [Self] {
        &[LoadPolicy::Paced, LoadPolicy::Greedy]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            LoadPolicy::Paced => {
                "Each stage's loads rate-limited to the schedule's planned work (docs/detailed.md)"
            }
            LoadPolicy::Greedy => "Loads as fast as HBM and links allow",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}
