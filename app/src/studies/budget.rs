//! An exact solve's budget in a study: solver work (`--work-limit`), so the same study gives
//! the same numbers on any machine (docs/exact.md, "Reproducible certificates"), with a hard
//! time stop on top. A solve the time stops first depends on the machine's speed; its row
//! says so.

use elk_solver::WorkUnit;

/// Work units with a hard time stop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ExactBudget {
    /// Units of solver work (`--work-limit`): nodes on an instance the MILP builds, window
    /// MILPs on a model too large for it.
    pub work: u64,
    /// What a unit is.
    pub unit: WorkUnit,
    /// Wall-clock seconds, a hard stop.
    pub seconds: f64,
}

impl ExactBudget {
    /// The budget as reports state it: "5000 branch-and-bound nodes (a hard stop at 60 s)".
    pub fn describe(&self) -> String {
        format!(
            "{} {} (a hard stop at {:.0} s)",
            self.work,
            self.unit.plural(),
            self.seconds
        )
    }
}
