//! The stage model with a phased NoC row: what the paced detailed replay shows the SPEC §4
//! row leaves out, as a second analytic evaluation beside the judge's (issue 17, item 2).
//!
//! SPEC §4 bounds a stage's NoC time by `comm(o_k) + Σ_j w[j][k]·ν_j ≤ d_k`, a capacity row:
//! it lets the loads' distribution use the NoC at any time in the stage. But the executing
//! operator computes for comp = exec − comm cycles and then shifts for comm, and during the
//! compute phase the loads can move at most comp cycles of HBM work (HBM runs at rate ≤ 1)
//! and at most comp cycles of NoC time. Let x_j ≤ `w[j][k]` be the HBM work of load j done
//! during the compute phase, with
//!
//! ```text
//!     Σ_j x_j ≤ comp,    Σ_j ν_j·x_j ≤ comp.
//! ```
//!
//! Everything else, Σ_j ν_j·(`w[j][k]` − x_j) of NoC time, shares the links with the shifts
//! after the compute phase, so
//!
//! ```text
//!     d_k ≥ comp + comm + Σ_j ν_j·w[j][k] − X,    X = max Σ_j ν_j·x_j over those x,
//! ```
//!
//! which implies SPEC's row (X ≤ comp) and is tighter whenever the loads' NoC time exceeds
//! what fits beside the HBM-limited compute phase: a stage whose HBM is busy throughout
//! (Σ w = d) cannot leave the NoC to the shifts. X is a fractional knapsack: fill x in
//! decreasing ν up to Σ x = comp, then cap the value at comp.
//!
//! Measured on Llama2-13B decode B32 KV2048 (ipu-pod4, 16 TB/s): the phased makespan of
//! Elk-Full is +7.60 % over the stage model's, and the paced replay is within 0.05 % of it
//! (docs/detailed.md, "Is the stage model achievable?"). The judge uses this row for
//! instances that record `"noc_row": "phased"` (`elk-opt instance --noc-row phased`); by
//! default it stays SPEC §4's model, in which the reference artifact states its schedules
//! and claims, and this evaluation says how far a makespan is from what the chip achieves.

use elk_stage::instance::{Instance, NocRow};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

/// The makespan of `s` with the phased NoC row, whatever row `inst` records (the judge's own
/// evaluation, [`crate::evaluate_in`]).
pub fn phased_makespan(inst: &Instance, s: &Schedule) -> Cycles {
    crate::evaluate_in(inst, s, NocRow::Phased, &mut crate::trace::NoTrace).makespan_cycles
}

/// The makespans of `s` under (SPEC §4's row, the phased row), given `judged`, the judge's
/// own makespan in the row `inst` records: only the other row is evaluated.
pub fn both_rows(inst: &Instance, s: &Schedule, judged: Cycles) -> (Cycles, Cycles) {
    let other = |row| crate::evaluate_in(inst, s, row, &mut crate::trace::NoTrace).makespan_cycles;
    match inst.noc_row {
        NocRow::Phased => (other(NocRow::Spec), judged),
        NocRow::Spec => (judged, other(NocRow::Phased)),
    }
}

/// The phased row's right-hand side for a stage whose operator takes `exec` cycles (`comm` of
/// them shifting) and whose loads are (HBM work, ν): `exec + Σ_j ν_j·w_j − X`.
pub fn phased_row(exec: f64, comm: f64, loads: &[(f64, f64)]) -> f64 {
    // Most stages have no load or one: the same arithmetic without [`beside_compute`]'s
    // two lists (they were most of a `moe` step's allocations). Bit for bit the general
    // path's: a sum of one term is that term.
    match *loads {
        [] => return exec,
        [(w, nu)] => {
            let comp = (exec - comm).max(0.0);
            let mut y = w.min(comp).max(0.0);
            let noc = y * nu;
            if noc > comp && noc > 0.0 {
                y *= comp / noc;
            }
            return exec + w * nu - y * nu;
        }
        _ => {}
    }
    let y = beside_compute((exec - comm).max(0.0), loads);
    let noc: f64 = loads.iter().map(|l| l.0 * l.1).sum();
    let absorbed: f64 = y.iter().zip(loads).map(|(y, l)| y * l.1).sum();
    exec + noc - absorbed
}

/// The HBM work of each load (same order as `loads`, (work, ν)) done beside a compute phase
/// of `comp` cycles so that it absorbs the most NoC time, X: filled in decreasing ν up to
/// Σ y = comp, then scaled down if its NoC time Σ ν·y exceeds comp. (The exact encodings' y
/// columns take these values in a starting solution.)
pub fn beside_compute(comp: f64, loads: &[(f64, f64)]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..loads.len()).collect();
    order.sort_by(|&a, &b| {
        loads[b]
            .1
            .total_cmp(&loads[a].1)
            .then(loads[b].0.total_cmp(&loads[a].0))
            .then(a.cmp(&b))
    });
    let mut y = vec![0.0; loads.len()];
    let mut room = comp;
    for i in order {
        y[i] = loads[i].0.min(room).max(0.0);
        room -= y[i];
    }
    let noc: f64 = y.iter().zip(loads).map(|(y, l)| y * l.1).sum();
    if noc > comp && noc > 0.0 {
        let scale = comp / noc;
        y.iter_mut().for_each(|v| *v *= scale);
    }
    y
}

#[cfg(test)]
mod tests {
    use super::{beside_compute, phased_row};

    #[test]
    fn the_short_paths_give_the_general_paths_bits() {
        let general = |exec: f64, comm: f64, loads: &[(f64, f64)]| {
            let y = beside_compute((exec - comm).max(0.0), loads);
            let noc: f64 = loads.iter().map(|l| l.0 * l.1).sum();
            let absorbed: f64 = y.iter().zip(loads).map(|(y, l)| y * l.1).sum();
            exec + noc - absorbed
        };
        let mut rng = elk_stage::corpus::Rng::new(11);
        for _ in 0..2000 {
            let exec = rng.real(0.0, 500.0);
            let comm = rng.real(0.0, exec + 1.0);
            let load = (
                rng.real(0.0, 700.0),
                [0.0, 0.3, 1.0, 2.5][rng.range(0, 3) as usize],
            );
            for loads in [&[][..], &[load][..]] {
                assert_eq!(
                    phased_row(exec, comm, loads).to_bits(),
                    general(exec, comm, loads).to_bits(),
                    "exec {exec}, comm {comm}, loads {loads:?}"
                );
            }
        }
    }

    #[test]
    fn an_hbm_bound_stage_pushes_its_distribution_into_the_shift() {
        // Llama2-13B's l0.attn.norm.var stage: exec 348 (comm 147.5), one load of 348 HBM
        // cycles at ν = 0.463. SPEC's rows give 348; the compute phase absorbs 200.5·0.463
        // of NoC time, the remaining 68.3 extends the shift.
        let d = phased_row(348.0, 147.5, &[(348.0, 0.463)]);
        assert!((d - (348.0 + 0.463 * (348.0 - 200.5))).abs() < 1e-9, "{d}");
    }

    #[test]
    fn loads_that_fit_beside_the_compute_phase_cost_nothing() {
        assert_eq!(phased_row(1000.0, 100.0, &[(500.0, 0.5)]), 1000.0);
        // …and a NoC-bound stage gives SPEC's row (ν > 1: the compute phase's NoC binds).
        let d = phased_row(100.0, 50.0, &[(80.0, 2.0)]);
        assert_eq!(d, 50.0 + 160.0);
    }

    #[test]
    fn higher_nu_loads_go_into_the_compute_phase_first() {
        // comp = 100: all of the ν = 0.9 load (100) fits, absorbing 90; the ν = 0.1 load's
        // 10 remains: 200 + (90 + 10) − 90 = 210 > SPEC's max(200, 100 + 100, 200).
        let d = phased_row(200.0, 100.0, &[(100.0, 0.1), (100.0, 0.9)]);
        assert!((d - 210.0).abs() < 1e-9, "{d}");
    }
}
