//! What elk-opt needs of HiGHS beyond the `highs` crate, behind a safe API: the MIP solver's
//! progress while it runs ([`solve_watched`]: its incumbent, bound and nodes, from HiGHS's
//! callback) and 64-bit info values ([`int64_info`]: `mip_node_count`, which the `highs`
//! crate's `int_info_value` cannot read).
//!
//! This is the workspace's one crate with `unsafe` code: three C calls of the HiGHS C API
//! (`Highs_setCallback`, `Highs_startCallback`, `Highs_getInt64InfoValue`), each with the
//! argument for its soundness beside it.

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
}

/// Called by HiGHS at the callbacks [`solve_watched`] starts.
///
/// SAFETY (of the dereferences inside): HiGHS passes `data_out` valid for this call (it may be
/// null for callback types without data, which is checked), and `user_data` is the pointer
/// [`solve_watched`] gave `Highs_setCallback`: a `Watcher` on its stack that outlives the solve,
/// since the callback is removed before `solve_watched` returns. HiGHS calls back on the thread
/// that called `Highs_run` (these models run with one thread), so the `&mut` is unique.
unsafe extern "C" fn trampoline(
    _kind: c_int,
    _message: *const c_char,
    data_out: *const HighsCallbackDataOut,
    _data_in: *mut HighsCallbackDataIn,
    user_data: *mut c_void,
) {
    if data_out.is_null() || user_data.is_null() {
        return;
    }
    // SAFETY: see the function's comment.
    let (out, watcher) = unsafe { (&*data_out, &mut *(user_data as *mut Watcher<'_>)) };
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
/// solve (between nodes, and at each improving solution). Nothing it does changes the
/// solve: it only reads what HiGHS reports. Returns the solved model with the progress last
/// told (`None`: HiGHS told none, e.g. an LP, or a MIP solved in presolve).
pub fn solve_watched(
    mut model: Model,
    on: &mut dyn FnMut(&MipProgress),
) -> Result<(SolvedModel, Option<MipProgress>), HighsStatus> {
    let mut watcher = Watcher { on, last: None };
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
            Ok((s, watcher.last))
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
        let (solved, last) = solve_watched(knapsack(), &mut |p| told.push(*p)).unwrap();
        let plain = knapsack().solve();
        assert_eq!(solved.objective_value(), plain.objective_value());
        assert!(!told.is_empty(), "HiGHS told nothing");
        assert_eq!(last, told.last().copied());
        // The incumbent only improves and the bound only rises.
        for w in told.windows(2) {
            assert!(w[1].primal_bound <= w[0].primal_bound, "{w:?}");
            assert!(w[1].dual_bound >= w[0].dual_bound - 1e-9, "{w:?}");
        }
        let nodes = int64_info(&solved, c"mip_node_count").unwrap();
        assert!(nodes >= 1, "{nodes}");
        assert!(int64_info(&solved, c"no_such_info").is_none());
    }
}
