//! What elk-opt needs of HiGHS beyond the `highs` crate, behind a safe API: the MIP solver's
//! progress while it runs ([`solve_watched`]: its incumbent, bound and nodes, from HiGHS's
//! callback), a stop after a number of simplex iterations that the MIP checks at the root too
//! (through the same callback's interrupt), and 64-bit info values ([`int64_info`]:
//! `mip_node_count`, which the `highs` crate's `int_info_value` cannot read).
//!
//! This is the workspace's one crate with `unsafe` code: three C calls of the HiGHS C API
//! (`Highs_setCallback`, `Highs_startCallback`, `Highs_getInt64InfoValue`) and the
//! callback's reads and one write of HiGHS's data, each with the argument for its soundness
//! beside it.

use highs::{HighsStatus, Model, SolvedModel};
use highs_sys::{HighsCallbackDataIn, HighsCallbackDataOut};
use std::ffi::{c_char, c_int, c_void, CStr};

/// Where a MIP solve is, as HiGHS tells it between nodes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MipProgress {
    /// Seconds HiGHS has run.
    pub running_time_s: f64,
    /// Branch-and-bound nodes so far.
    pub nodes: i64,
    /// Simplex iterations of every LP so far.
    pub lp_iterations: i64,
    /// The best solution's objective (infinite: none yet).
    pub primal_bound: f64,
    /// The proven lower bound on the objective (minimisation).
    pub dual_bound: f64,
    /// HiGHS's relative gap.
    pub gap: f64,
}

/// What the callback owns while HiGHS runs.
struct Watcher<'a> {
    on: &'a mut dyn FnMut(&MipProgress),
    last: Option<MipProgress>,
    /// Interrupt at the first check with at least this many simplex iterations.
    stop_after: Option<i64>,
    /// The simplex iterations at the latest callback.
    iterations: i64,
    /// The interrupt was asked for.
    interrupted: bool,
}

/// What [`solve_watched`] saw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Watched {
    /// The progress last told (`None`: HiGHS told none, e.g. an LP, or a MIP solved in
    /// presolve).
    pub last: Option<MipProgress>,
    /// The solve was interrupted because its simplex iterations reached the limit given
    /// (HiGHS then reports `ReachedInterrupt`).
    pub stopped_by_iterations: bool,
    /// The simplex iterations HiGHS had done at its latest callback (0: none came).
    pub iterations: i64,
}

/// Called by HiGHS at the callbacks [`solve_watched`] starts.
///
/// SAFETY (of the dereferences inside): HiGHS passes `data_out` valid for this call (it may be
/// null for callback types without data, which is checked), and `user_data` is the pointer
/// [`solve_watched`] gave `Highs_setCallback`: a `Watcher` on its stack that outlives the solve,
/// since the callback is removed before `solve_watched` returns. HiGHS calls back on the thread
/// that called `Highs_run` (these models run with one thread), so the `&mut` is unique.
///
/// `data_in`, when not null, is HiGHS's input for this call, valid for it; only an interrupt
/// callback reads `user_interrupt` back.
unsafe extern "C" fn trampoline(
    kind: c_int,
    _message: *const c_char,
    data_out: *const HighsCallbackDataOut,
    data_in: *mut HighsCallbackDataIn,
    user_data: *mut c_void,
) {
    if data_out.is_null() || user_data.is_null() {
        return;
    }
    // SAFETY: see the function's comment.
    let (out, watcher) = unsafe { (&*data_out, &mut *(user_data as *mut Watcher<'_>)) };
    watcher.iterations = watcher.iterations.max(out.mip_total_lp_iterations);
    let over = watcher
        .stop_after
        .is_some_and(|cap| out.mip_total_lp_iterations >= cap);
    if over && kind == highs_sys::kHighsCallbackMipInterrupt as c_int && !data_in.is_null() {
        // SAFETY: `data_in` is HiGHS's input for this interrupt callback (see above).
        unsafe { (*data_in).user_interrupt = 1 };
        watcher.interrupted = true;
    }
    let now = MipProgress {
        running_time_s: out.running_time,
        nodes: out.mip_node_count,
        lp_iterations: out.mip_total_lp_iterations,
        primal_bound: out.mip_primal_bound,
        dual_bound: out.mip_dual_bound,
        gap: out.mip_gap,
    };
    // Told when the incumbent or the bound moves: the interrupt check runs at every node.
    let moved = watcher.last.is_none_or(|l| {
        l.primal_bound.to_bits() != now.primal_bound.to_bits()
            || l.dual_bound.to_bits() != now.dual_bound.to_bits()
    });
    if moved {
        watcher.last = Some(now);
        (watcher.on)(&now);
    }
}

/// Solves `model`, calling `on` whenever HiGHS's incumbent or dual bound moves during a MIP
/// solve (between nodes, and at each improving solution). Nothing `on` does changes the
/// solve: it only reads what HiGHS reports.
///
/// With `stop_after_iterations`, a MIP solve is interrupted at HiGHS's first interrupt check
/// with at least that many simplex iterations in all (root included: HiGHS checks between
/// its root's cut rounds and heuristics, and between nodes, not inside one LP). On one
/// thread the checks fall at the same iterations every run, so the stop is the same on every
/// machine. Returns the solved model and what was seen.
pub fn solve_watched(
    mut model: Model,
    on: &mut dyn FnMut(&MipProgress),
    stop_after_iterations: Option<u64>,
) -> Result<(SolvedModel, Watched), HighsStatus> {
    let mut watcher = Watcher {
        on,
        last: None,
        stop_after: stop_after_iterations.map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
        interrupted: false,
        iterations: 0,
    };
    let highs = model.as_mut_ptr();
    let user_data = &mut watcher as *mut Watcher<'_> as *mut c_void;
    // SAFETY: `highs` is the live HiGHS instance `model` owns; `trampoline` has the C type
    // HiGHS expects, and `user_data` points to `watcher`, which lives until the callback is
    // removed below (on every path: `try_solve` returns, it does not unwind through C).
    unsafe {
        highs_sys::Highs_setCallback(highs, Some(trampoline), user_data);
        for kind in [
            highs_sys::kHighsCallbackMipInterrupt,
            highs_sys::kHighsCallbackMipImprovingSolution,
        ] {
            highs_sys::Highs_startCallback(highs, kind);
        }
    }
    let solved = model.try_solve();
    let remove = |ptr: *mut c_void| {
        // SAFETY: `ptr` is the live HiGHS instance the solve ran on; a null callback with null
        // data removes ours, so HiGHS keeps no pointer to `watcher`.
        unsafe {
            highs_sys::Highs_setCallback(ptr, None, std::ptr::null_mut());
        }
    };
    match solved {
        Ok(mut s) => {
            remove(s.as_mut_ptr());
            let watched = Watched {
                last: watcher.last,
                stopped_by_iterations: watcher.interrupted,
                iterations: watcher.iterations,
            };
            Ok((s, watched))
        }
        Err(e) => Err(e),
    }
}

/// A 64-bit info value of a solved model (`mip_node_count`, `mip_total_lp_iterations`):
/// `None` when HiGHS does not know the name or it is not a 64-bit value.
pub fn int64_info(model: &SolvedModel, name: &CStr) -> Option<i64> {
    let mut value: i64 = 0;
    // SAFETY: `model.as_ptr()` is a live HiGHS instance, `name` a NUL-terminated string, and
    // `value` a valid i64 for HiGHS to write; HiGHS reads neither after the call.
    let status =
        unsafe { highs_sys::Highs_getInt64InfoValue(model.as_ptr(), name.as_ptr(), &mut value) };
    (status == highs_sys::kHighsStatusOk).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use highs::{RowProblem, Sense};

    /// A small knapsack that needs branching: maximise Σ v·x with Σ w·x ≤ cap, x binary.
    fn knapsack() -> Model {
        let mut p = RowProblem::default();
        let items: Vec<(f64, f64)> = (0..30)
            .map(|i| ((13 * i % 17 + 5) as f64, (7 * i % 11 + 3) as f64))
            .collect();
        let cols: Vec<_> = items
            .iter()
            .map(|&(v, _)| p.add_integer_column(-v, 0..=1))
            .collect();
        p.add_row(..=40.0, cols.iter().zip(&items).map(|(&c, &(_, w))| (c, w)));
        let mut m = p.optimise(Sense::Minimise);
        m.make_quiet();
        m.set_option("threads", 1);
        m
    }

    #[test]
    fn progress_is_told_as_the_bounds_move_and_the_result_is_unchanged() {
        let mut told = Vec::new();
        let (solved, watched) = solve_watched(knapsack(), &mut |p| told.push(*p), None).unwrap();
        let plain = knapsack().solve();
        assert_eq!(solved.objective_value(), plain.objective_value());
        assert!(!told.is_empty(), "HiGHS told nothing");
        assert_eq!(watched.last, told.last().copied());
        assert!(!watched.stopped_by_iterations);
        // The incumbent only improves and the bound only rises.
        for w in told.windows(2) {
            assert!(w[1].primal_bound <= w[0].primal_bound, "{w:?}");
            assert!(w[1].dual_bound >= w[0].dual_bound - 1e-9, "{w:?}");
        }
        let nodes = int64_info(&solved, c"mip_node_count").unwrap();
        assert!(nodes >= 1, "{nodes}");
        assert!(int64_info(&solved, c"no_such_info").is_none());
    }

    /// A knapsack with four weight rows (a one-row knapsack's LPs need no simplex
    /// iterations), so its LPs iterate.
    fn multi_knapsack() -> Model {
        let mut p = RowProblem::default();
        let cols: Vec<_> = (0..40)
            .map(|i| p.add_integer_column(-((17 * i % 23 + 5) as f64), 0..=1))
            .collect();
        for r in 0..4 {
            let weights = cols
                .iter()
                .enumerate()
                .map(|(i, &c)| (c, ((7 * i + 11 * r) % 13 + 2) as f64));
            p.add_row(..=60.0 + 5.0 * r as f64, weights);
        }
        let mut m = p.optimise(Sense::Minimise);
        m.make_quiet();
        m.set_option("threads", 1);
        m
    }

    #[test]
    fn an_iteration_limit_interrupts_the_mip_at_the_same_point_every_run() {
        use highs::HighsModelStatus;
        let (full, seen) = solve_watched(multi_knapsack(), &mut |_| {}, None).unwrap();
        let total = seen.iterations;
        assert!(total > 2, "{total}");
        let stopped = || {
            let (s, watched) = solve_watched(multi_knapsack(), &mut |_| {}, Some(1)).unwrap();
            (
                s.status(),
                watched.stopped_by_iterations,
                watched.iterations,
            )
        };
        let (status, by_iterations, iterations) = stopped();
        assert_eq!(status, HighsModelStatus::ReachedInterrupt);
        assert!(by_iterations);
        assert!(iterations < total, "{iterations} of {total}");
        assert_eq!(stopped(), (status, by_iterations, iterations));
        // A limit the solve never reaches changes nothing.
        let (s, watched) = solve_watched(multi_knapsack(), &mut |_| {}, Some(1 << 40)).unwrap();
        assert_eq!(s.objective_value(), full.objective_value());
        assert!(!watched.stopped_by_iterations);
    }
}
