//! Progress on stderr for work that takes over a second. indicatif draws nothing when stderr
//! is not a terminal, so piped output and CI logs stay clean, and stdout is never touched.
//! Long runs say where they are, not only that they run: the exact solve reports its phases
//! and the segment relaxation's price search ([`elk_solver::ExactEvent`]), a study its steps
//! ([`elk_app::studies::Step`]).

use elk_solver::ExactEvent;
use elk_stage::instance::Instance;
use indicatif::{ProgressBar, ProgressStyle};
use std::time::Duration;

/// A style from `template`, or indicatif's default `fallback` should the template not parse.
fn style(template: &str, fallback: fn() -> ProgressStyle) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| fallback())
}

/// A spinner with a message, ticking until finished. The elapsed time comes first, so a
/// long message cut at the terminal's width never hides it.
pub fn spinner(message: String) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    pb.set_style(style(
        "{spinner} [{elapsed}] {wide_msg}",
        ProgressStyle::default_spinner,
    ));
    pb.set_message(message);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// A bar over `len` steps.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    let template = format!("{{bar:30}} {{pos}}/{{len}} {what}: {{msg}} [{{elapsed}}, ETA {{eta}}]");
    pb.set_style(style(&template, ProgressStyle::default_bar));
    pb
}

/// The spinner of `solve --exact`, `gap` and the layer of `compare --layer-exact`: the
/// heuristics one by one ("heuristics 3/10: elk-full"), then each phase of the exact solve
/// as the worker reports it, with the incumbent, the bound and the gap known then.
pub struct ExactProgress {
    pb: ProgressBar,
    /// What every message is about, before it (`--expert-parallel`: which instance).
    prefix: std::cell::Cell<&'static str>,
}

impl ExactProgress {
    /// Starts the spinner with `message`.
    pub fn start(message: &str) -> ExactProgress {
        ExactProgress {
            pb: spinner(message.into()),
            prefix: std::cell::Cell::new(""),
        }
    }

    /// `--expert-parallel`: the messages from now on are about the instance with parallel
    /// sets (`true`) or the one without.
    pub fn on_instance(&self, parallel_sets: bool) {
        self.prefix.set(if parallel_sets {
            "with parallel sets: "
        } else {
            "without parallel sets: "
        });
    }

    /// Heuristic `k` of `n`, `name`, starts.
    pub fn heuristic(&self, k: usize, n: usize, name: &str) {
        let prefix = self.prefix.get();
        self.pb
            .set_message(format!("{prefix}heuristics {k}/{n}: {name}"));
    }

    /// The exact solve, `label` (backend and limit), reported `e` on `inst`. Drawn at once,
    /// past indicatif's rate limit (20 draws a second after a burst, which the heuristics'
    /// lines may have spent): a solve tells tens of events (phases, incumbents, segment
    /// problems), and each is shown however short its phase, on a fast machine as on a
    /// loaded one.
    pub fn exact(&self, label: &str, inst: &Instance, e: &ExactEvent) {
        let prefix = self.prefix.get();
        self.pb
            .set_message(format!("{prefix}{label}: {}", e.describe(inst)));
        self.pb.force_draw();
    }

    /// Prints `message` as a warning on stderr, above the spinner.
    pub fn warn(&self, message: &str) {
        self.pb.suspend(|| eprintln!("warning: {message}"));
    }

    /// Shows `message` (before the first event arrives).
    pub fn say(&self, message: String) {
        self.pb
            .set_message(format!("{}{message}", self.prefix.get()));
    }

    /// Clears the line (before anything is printed on stdout).
    pub fn finish(&self) {
        self.pb.finish_and_clear();
    }
}

/// An early return (an error) clears the line too.
impl Drop for ExactProgress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The bar of `study NAME`: its steps done of all and what runs now, e.g. "study
/// hbm-emulation 3/20 (ETA 1s): llama2-13b on ipu-pod4: basic, detailed, C = 8".
pub fn study_bar(name: &str) -> ProgressBar {
    let pb = ProgressBar::new(0);
    let template = format!(
        "{{spinner}} [{{elapsed}}] study {name} {{pos}}/{{len}} (ETA {{eta}}): {{wide_msg}}"
    );
    pb.set_style(style(&template, ProgressStyle::default_spinner));
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}
