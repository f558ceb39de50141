//! The stage relaxation (docs/exact.md, "The stage relaxation") against proven optima: on
//! the layered chains of `segments` and on random tiny instances, with SPEC §4's NoC row and
//! with the phased one, its bound never exceeds the optimum, and it beats the roofline on
//! some, so a bound that forgot a stage's max (a sum of resources) would fail the count.

use crate::segments::{layered, optimum};
use elk_solver::bounds::{roofline, stage_bound_with, CLASS_SPREAD};
use elk_stage::corpus::{random_instance, RandomSpec};
use elk_stage::instance::{Instance, NocRow};
use std::time::Duration;

fn with_row(inst: Instance, phased: bool) -> Instance {
    Instance {
        noc_row: if phased { NocRow::Phased } else { NocRow::Spec },
        ..inst
    }
}

/// `inst` with every preload window dropped, the instance's and the operators' own.
fn without_windows(inst: &Instance) -> Instance {
    let mut open = inst.clone();
    open.preload_window = None;
    for op in &mut open.ops {
        op.preload_window = None;
    }
    open
}

/// The stage bound of `inst` with ν classes spanning `spread` (∞: one class), cycles.
fn bound(inst: &Instance, spread: f64) -> f64 {
    stage_bound_with(inst, Duration::from_secs(60), spread)
        .unwrap()
        .unwrap()
        .bound_cycles
}

#[test]
fn stage_bounds_stay_below_proven_optima_and_beat_the_roofline() {
    let (mut checked, mut above_roofline, mut above_one_class, mut sram_lifts) = (0, 0, 0, 0);
    let mut window_lifts = 0;
    let chains = (0..40).map(layered);
    let tiny =
        (0..60).map(|seed| random_instance(seed, &RandomSpec::tiny(2 + (seed % 3) as usize, 3)));
    for inst in chains.chain(tiny) {
        for phased in [false, true] {
            let inst = with_row(inst.clone(), phased);
            let name = format!("{} (phased: {phased})", inst.name);
            let Some(t) = optimum(&inst) else { continue };
            checked += 1;
            let s = bound(&inst, f64::INFINITY);
            assert!(
                s <= t.get() * (1.0 + 1e-9),
                "{name}: stage bound {s} above the optimum {t}"
            );
            above_roofline += usize::from(s > roofline(&inst).best().get() * (1.0 + 1e-6));
            // Its SRAM rows count: the same instance with SRAM to spare bounds no higher.
            let spare = Instance {
                sram_bytes: elk_stage::units::Bytes(1 << 40),
                ..inst.clone()
            };
            let free = bound(&spare, f64::INFINITY);
            assert!(
                free <= s * (1.0 + 1e-9),
                "{name}: {free} with spare SRAM above {s}"
            );
            sram_lifts += usize::from(s > free * (1.0 + 1e-6));
            // Its window rows count: the same instance without windows bounds no higher.
            let open = without_windows(&inst);
            if open != inst {
                let unwindowed = bound(&open, f64::INFINITY);
                assert!(
                    unwindowed <= s * (1.0 + 1e-9),
                    "{name}: {unwindowed} without windows above {s}"
                );
                window_lifts += usize::from(s > unwindowed * (1.0 + 1e-6));
            }
            // With ν classes: still below the optimum, and never below one class.
            let c = bound(&inst, CLASS_SPREAD);
            assert!(
                c <= t.get() * (1.0 + 1e-9),
                "{name}: stage bound with ν classes {c} above the optimum {t}"
            );
            assert!(
                c >= s * (1.0 - 1e-6),
                "{name}: classes {c} below one class {s}"
            );
            above_one_class += usize::from(c > s * (1.0 + 1e-6));
        }
    }
    assert!(checked >= 150, "only {checked} feasible instances");
    assert!(
        above_roofline >= 3,
        "the stage bound beat the roofline on only {above_roofline} of {checked}"
    );
    assert!(
        sram_lifts >= 5,
        "the SRAM rows lifted the bound on only {sram_lifts} of {checked}"
    );
    assert!(
        window_lifts >= 5,
        "the window rows lifted the bound on only {window_lifts} of {checked}"
    );
    assert!(
        above_one_class >= 10,
        "ν classes beat one class on only {above_one_class} of {checked}"
    );
    eprintln!(
        "{checked} instances: stage bound above the roofline on {above_roofline}, above \
         the bound with spare SRAM on {sram_lifts}, above the bound without windows on \
         {window_lifts}, with ν classes above one class on {above_one_class}"
    );
}
