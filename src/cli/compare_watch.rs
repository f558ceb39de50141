//! What `compare` shows on stderr while it runs: a bar over the methods (one per instance
//! with `--expert-parallel`), a spinner over the stage relaxation's LP (`--bound stage`, the
//! default, and `segment`), one over the coupled segment LP (`--bound segment`) and
//! one over the layer's exact solve (`--layer-exact`).

use super::progress::{bar, ExactProgress};
use elk_app::bound::{Coupled, Staged, COUPLED_LIMIT, STAGE_LIMIT};
use elk_app::compare::run::CompareWatch;
use elk_app::gap::GapStep;
use elk_solver::segments::SegmentStep;
use elk_stage::instance::Instance;
use elk_stage::units::Cycles;
use indicatif::ProgressBar;
use std::cell::{Cell, RefCell};

/// The CLI's [`CompareWatch`].
#[derive(Default)]
pub struct Bars {
    methods: RefCell<Option<ProgressBar>>,
    spinner: RefCell<Option<ExactProgress>>,
    /// The roofline of the instance whose coupled LP runs: the bound its steps show at least.
    roofline: Cell<Cycles>,
}

impl Bars {
    /// Starts a spinner with `message`.
    fn spin(&self, message: &str) {
        *self.spinner.borrow_mut() = Some(ExactProgress::start(message));
    }

    /// Clears the spinner.
    fn stop(&self) {
        if let Some(p) = self.spinner.borrow_mut().take() {
            p.finish();
        }
    }
}

impl CompareWatch for Bars {
    fn reader_count(&self, readers: u64) {
        eprintln!("--dram-readers {readers}:");
    }

    fn method(&self, _sets: Option<bool>, k: usize, n: usize, name: &str) {
        let mut methods = self.methods.borrow_mut();
        if k > n {
            if let Some(b) = methods.take() {
                b.finish_and_clear();
            }
            return;
        }
        let b = methods.get_or_insert_with(|| bar(n as u64, "methods"));
        b.set_position(k as u64 - 1);
        b.set_message(name.to_string());
    }

    fn coupled_started(&self, inst: &Instance) {
        self.roofline.set(elk_solver::bounds::roofline(inst).best());
        self.spin(&format!(
            "segment relaxation: the coupled LP (limit {} s)",
            COUPLED_LIMIT.as_secs()
        ));
    }

    fn coupled_step(&self, inst: &Instance, step: &SegmentStep) {
        let roof = self.roofline.get();
        if let Some(p) = self.spinner.borrow().as_ref() {
            p.exact(
                "segment relaxation (the coupled LP)",
                inst,
                &elk_solver::ExactEvent::Segment {
                    step: *step,
                    incumbent: None,
                    bound: step.best_bound.map_or(roof, |b| b.max(roof)),
                },
            );
        }
    }

    fn coupled_finished(&self, found: &Coupled) {
        self.stop();
        if let Some(e) = &found.write_error {
            eprintln!("warning: bound cache not updated: {e} (pass --no-cache to skip it)");
        }
    }

    fn stage_started(&self, inst: &Instance) {
        self.spin(&format!(
            "stage relaxation: one LP over {} stages (limit {} s)",
            inst.ops.len() + 1,
            STAGE_LIMIT.as_secs()
        ));
    }

    fn stage_finished(&self, _found: &Staged) {
        self.stop();
    }

    fn layer_started(&self) {
        self.spin("heuristics");
    }

    fn layer_step(&self, layer: &Instance, step: GapStep<'_>) {
        if let Some(p) = self.spinner.borrow().as_ref() {
            super::exact::show(p, layer, step);
        }
    }

    fn layer_finished(&self) {
        self.stop();
    }
}
