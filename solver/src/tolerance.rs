//! The tolerances within which two makespans count as equal: a backend's objective and the
//! simulator's (solver feasibility tolerances), a schedule and a proven bound (the MILP's
//! relative gap). Shared by the exact solve and the window search.

/// The relative difference between a backend's objective and the simulator's makespan that
/// solver tolerances explain (HiGHS's feasibility tolerances are 1e-7 per row on rows of
/// ~1e6 cycles); above it the mismatch is reported as a bug.
pub const OBJECTIVE_TOLERANCE: f64 = 1e-5;

/// Relative tolerance within which a makespan meets a proven lower bound and is therefore
/// optimal (whichever method found it). HiGHS is run with a relative gap of 1e-9.
pub const MEETS_BOUND: f64 = 1e-9;

use elk_stage::units::Cycles;

/// `t` meets the proven lower bound `bound`: the schedule is optimal.
pub fn meets_bound(t: Cycles, bound: Cycles) -> bool {
    t <= bound * (1.0 + MEETS_BOUND)
}
