//! The certified gap, shared by the CLI's `gap`, `solve --exact` and `compare --layer-exact`
//! and by the Python package: every heuristic, then the exact backend warm-started from the
//! best of them, and each one's distance from the optimum (or from the best proven lower
//! bound). [`gap_report`] is the whole of `elk-opt gap --json`'s results and [`solve_exact`]
//! those of `solve --exact --json`, so the CLI and Python's `gap()`/`solve(exact=True)` are
//! one computation; the callers only say where the worker process runs
//! ([`elk_solver::WorkerCommand`]: the CLI's own `exact-worker`, Python's interpreter) and show
//! the progress.
//!
//! The run is in `gap/report.rs` ([`gap_report`], [`solve_exact`], [`run_exact`]), the exact
//! solver's settings and the progress it tells in `gap/settings.rs`, the summary's JSON shapes
//! and words in `gap/summary.rs`, the coupled segment LP that comes first in
//! `gap/first_bound.rs`, the union of two instances in `gap/union.rs`, and `compare
//! --layer-exact`'s section in `gap/layer.rs`; this file only names them.
//!
//! ```
//! use elk_app::gap::{gap_report, ExactSettings};
//! let inst = elk_stage::corpus::random_instance(7, &elk_stage::corpus::RandomSpec::tiny(4, 2));
//! // In this process (no worker), the MILP within 5 s.
//! let report = gap_report(&inst, &ExactSettings::milp_within(5.0), true, None, &|_| {}).unwrap();
//! assert_eq!(report.rows[0].method, "basic");
//! // Every gap is measured against the same reference, and none is negative.
//! assert!(report.rows.iter().all(|r| r.gap_pct.is_none_or(|g| g >= -1e-9)));
//! ```

mod first_bound;
mod layer;
mod report;
mod settings;
mod summary;
mod union;

pub use first_bound::{CoupledStatus, COUPLED_SHARE_WHOLE_MODEL, COUPLED_SHARE_WITH_BACKEND};
pub use layer::{layer_section, layer_section_union, LayerSection, LAYER};
pub use report::{gap_report, run_exact, solve_exact, GapReference, GapReport, GapRow};
pub use settings::{ExactSettings, GapStep, WORKER_GRACE, WORK_LIMIT_POSITIVE};
pub use summary::{
    bound_name, status_word, ExactSummary, ImprovementJson, ModelJson, OptionsKept, PhaseJson,
    SearchJson, UnionPart,
};
pub use union::{gap_union, solve_exact_union, ExactUnion};
