//! `elk-heuristics`: the heuristic methods of SPEC §5 behind [`elk_stage::method::Method`].
//! As the reference artifact runs them, on its backward timeline (`timeline.rs`): [`Basic`] (double
//! buffering), [`StaticSplit`] (one SRAM split for all operators), [`ElkDyn`] (inductive
//! scheduling), [`ElkFull`] (Elk-Dyn over preload-order permutations); elk-opt's named
//! [`variants`] (forward fill, the paper's greedy allocator); and Elk's [`ideal()`] figure (not
//! a method: not a schedule, not a bound). Every makespan is the simulator's. [`NAMES`],
//! [`VARIANTS`], [`SET_VARIANTS`] and [`by_name`] are the one registry the CLI, grids and
//! studies read. Every method sizes a parallel set's groups by work ([`sizing`]) but the
//! searching variant of [`SET_VARIANTS`].
//!
//! The example runs the forward-fill Basic variant (`basic-fill`): each operator on its
//! fastest option that fits.
//!
//! ```
//! use elk_stage::instance::{Instance, OpOption};
//! use elk_stage::method::{Budget, Method};
//! use elk_stage::units::{Bytes, Cycles};
//! let inst = Instance::builder("doc", Bytes(100), 1e9)
//!     .op("a", Cycles(50.0), vec![OpOption::new(10, 40, 80.0, 0.0, 0.0)])
//!     .op("b", Cycles(50.0), vec![OpOption::new(10, 20, 90.0, 0.0, 0.0), OpOption::new(30, 60, 60.0, 0.0, 0.0)])
//!     .build()
//!     .unwrap();
//! let solved = elk_heuristics::BasicFill.schedule(&inst, &Budget::default()).unwrap();
//! let s = solved.outcome.schedule().unwrap();
//! // a loads in the prologue (50); b's cold must fit beside a's hot 40: b takes its fast
//! // option (cold 30 + hot 40 = 70 ≤ 100) and loads under a (50 ≤ 80); T = 50 + 80 + 60.
//! assert_eq!(s.options, [0, 1]);
//! assert_eq!(s.makespan_cycles, Cycles(190.0));
//! ```
#![deny(missing_docs)]

mod basic;
mod common;
mod elk_dyn;
mod elk_full;
mod ideal;
pub mod orders;
pub mod sizing;
mod static_split;
mod timeline;
pub mod variants;

pub use basic::Basic;
pub use elk_dyn::ElkDyn;
pub use elk_full::ElkFull;
pub use ideal::{ideal, IdealReport};
pub use sizing::Sizing;
pub use static_split::StaticSplit;
pub use variants::basic_fill::BasicFill;
pub use variants::elk_dyn_greedy::{max_depth, ElkDynGreedy};
pub use variants::elk_full_greedy::ElkFullGreedy;
pub use variants::static_fill::StaticFill;

use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

/// The heuristics faithful to the reference artifact, by their command-line names, in
/// comparison order: the one list.
pub const NAMES: [&str; 4] = ["basic", "static", "elk-dyn", "elk-full"];

/// elk-opt's named variants (see [`variants`]), in comparison order.
pub const VARIANTS: [&str; 4] = [
    "basic-fill",
    "static-fill",
    "elk-dyn-greedy",
    "elk-full-greedy",
];

/// elk-opt's variants that differ from a method of [`NAMES`] or [`VARIANTS`] only on
/// instances with parallel sets, each with that method: `elk-full-groups`, Elk-Full searching
/// a set's group sizes instead of sizing them by work (docs/core-groups.md §CG-2.6). On an
/// instance without sets it makes that method's schedule, so `compare` runs it only on
/// instances with sets ([`runs_on`]).
pub const SET_VARIANTS: [(&str, &str); 1] = [("elk-full-groups", "elk-full")];

/// Every registered heuristic: [`NAMES`], [`VARIANTS`], then [`SET_VARIANTS`].
pub fn all_names() -> impl Iterator<Item = &'static str> {
    NAMES
        .into_iter()
        .chain(VARIANTS)
        .chain(SET_VARIANTS.map(|(v, _)| v))
}

/// Whether heuristic `name` tells anything of `inst` that another does not: every one but a
/// [`SET_VARIANTS`] on an instance without parallel sets (it repeats its method there).
pub fn runs_on(name: &str, inst: &Instance) -> bool {
    !SET_VARIANTS.iter().any(|(v, _)| *v == name) || inst.ops.iter().any(|o| o.parallel.is_some())
}

/// The method a [`SET_VARIANTS`] name equals on instances without sets (`None` for any other
/// name).
pub fn without_sets(name: &str) -> Option<&'static str> {
    SET_VARIANTS
        .iter()
        .find(|(v, _)| *v == name)
        .map(|&(_, m)| m)
}

/// A heuristic by name (one of [`all_names`], with its defaults).
pub fn by_name(name: &str) -> Option<Box<dyn Method>> {
    Some(match name {
        "basic" => Box::new(Basic),
        "static" => Box::new(StaticSplit),
        "elk-dyn" => Box::new(ElkDyn::default()),
        "elk-full" => Box::new(ElkFull::default()),
        "basic-fill" => Box::new(BasicFill),
        "static-fill" => Box::new(StaticFill),
        "elk-dyn-greedy" => Box::new(ElkDynGreedy::default()),
        "elk-full-greedy" => Box::new(ElkFullGreedy::default()),
        "elk-full-groups" => Box::new(ElkFull::searching_groups()),
        _ => return None,
    })
}

/// `m`'s schedule of `inst` and the simulator's makespan of it (`None`: no schedule found).
/// An invalid schedule is an internal error, never a silent "none".
pub fn judged(inst: &Instance, m: &dyn Method) -> Result<Option<(Schedule, Cycles)>, MethodError> {
    let run = elk_sim::run_judged(inst, m, &Budget::default())?;
    Ok(run.judged())
}

/// The best schedule of every heuristic (the warm start of the exact methods).
pub fn best(inst: &Instance) -> Result<Option<(Schedule, Cycles)>, MethodError> {
    let mut best: Option<(Schedule, Cycles)> = None;
    for name in all_names().filter(|n| runs_on(n, inst)) {
        let Some(m) = by_name(name) else { continue };
        if let Some((s, t)) = judged(inst, m.as_ref())? {
            if best.as_ref().is_none_or(|(_, b)| t < *b) {
                best = Some((s, t));
            }
        }
    }
    Ok(best)
}
