//! The reviewers' questions (SPEC §7), one command each (`elk-opt study NAME`), each writing a
//! Markdown report (with its command, inputs and date) and SVG plots:
//! [`gap`] (its whole-model part alone: [`gap_whole`]), [`ideal`], [`hbm_emulation`], [`order_pruning`], [`cost_noise`], [`ablation`],
//! [`replay_fidelity`], [`moe`].

pub mod ablation;
pub mod corpus;
pub mod cost_noise;
pub mod gap;
pub mod gap_whole;
pub mod hbm_emulation;
pub mod ideal;
pub mod moe;
pub mod order_pruning;
pub mod replay_fidelity;

use crate::error::Result;
use crate::report::{Files, Header};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Names of the studies.
pub const STUDIES: [&str; 9] = [
    "gap",
    "gap-whole",
    "ideal",
    "hbm-emulation",
    "order-pruning",
    "cost-noise",
    "ablation",
    "replay-fidelity",
    "moe",
];

/// How far a study is, for a progress display: `done` of `total` steps finished, and what
/// runs now (in the parallel studies, `gap` and `ideal`: what just finished).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step<'a> {
    /// Steps finished.
    pub done: usize,
    /// Steps in all (0 while the study prepares its inputs).
    pub total: usize,
    /// What runs now, e.g. "llama2-13b @ 12 TB/s: heuristic 4/7: elk-full".
    pub what: &'a str,
}

/// A study's progress callback. The parallel studies call it from rayon's threads; it only
/// watches, so a study's files are the same with or without one.
pub type OnStep<'a> = dyn Fn(Step<'_>) + Sync + 'a;

/// Counts a study's finished steps and tells its callback (from any thread).
pub struct Steps<'a> {
    done: AtomicUsize,
    total: usize,
    progress: &'a OnStep<'a>,
}

impl<'a> Steps<'a> {
    /// `total` steps, none done yet.
    pub fn new(total: usize, progress: &'a OnStep<'a>) -> Steps<'a> {
        Steps {
            done: AtomicUsize::new(0),
            total,
            progress,
        }
    }

    /// `what` starts (the count is unchanged).
    pub fn starting(&self, what: &str) {
        (self.progress)(Step {
            done: self.done.load(Ordering::Relaxed),
            total: self.total,
            what,
        });
    }

    /// A step is done; `what` says which (or what comes next).
    pub fn finished(&self, what: &str) {
        self.skipped(1, what);
    }

    /// `n` steps are done (or will not run: they count as done).
    pub fn skipped(&self, n: usize, what: &str) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        (self.progress)(Step {
            done,
            total: self.total,
            what,
        });
    }
}

/// Runs a study by name (None: no such study).
pub fn run(name: &str, header: &Header) -> Option<Result<Files>> {
    run_with(name, header, &|_| {})
}

/// [`run`], telling `progress` each step as it happens (the files are the same).
pub fn run_with(name: &str, header: &Header, progress: &OnStep<'_>) -> Option<Result<Files>> {
    let files = match name {
        "gap" => gap::run(header, progress),
        "gap-whole" => gap_whole::run(header, progress),
        "ideal" => ideal::run(header, progress),
        "hbm-emulation" => hbm_emulation::run(header, progress),
        "order-pruning" => order_pruning::run(header, progress),
        "cost-noise" => cost_noise::run(header, progress),
        "ablation" => ablation::run(header, progress),
        "replay-fidelity" => replay_fidelity::run(header, progress),
        "moe" => moe::run(header, progress),
        _ => return None,
    };
    // The studies link their figures as SVG; PNG figures are linked as such.
    Some(files.map(|mut f| {
        crate::plot::relink(&mut f);
        f
    }))
}

/// (median, p90, max) of values (empty: zeros). The median of an even count is the mean of
/// the two middle values (it was the upper one, which made "median" of two gaps their
/// maximum); p90 is the value at rank round(0.9·(n − 1)) of the sorted values.
pub fn summary(values: &[f64]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let p90 = v[((n - 1) as f64 * 0.9).round() as usize];
    (median, p90, v[n - 1])
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(summary(&[6.43, 0.32]), (3.375, 6.43, 6.43));
        assert_eq!(summary(&[3.0, 1.0, 2.0]), (2.0, 3.0, 3.0));
        assert_eq!(summary(&[4.0, 1.0, 3.0, 2.0]).0, 2.5);
        // p90 of 0..=10 is 9 (rank 9 of 11).
        let v: Vec<f64> = (0..=10).map(f64::from).collect();
        assert_eq!(summary(&v), (5.0, 9.0, 10.0));
        assert_eq!(summary(&[]), (0.0, 0.0, 0.0));
    }
}
