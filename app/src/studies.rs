//! The studies' runs (SPEC §7): what each reviewer's question computes, as values —
//! [`gap`] (the gap and ideal studies' corpus), [`gap_whole`], [`hbm_emulation`],
//! [`order_pruning`], [`cost_noise`], [`ablation`], [`replay_fidelity`], [`moe`], [`resident`],
//! [`measured`] — over the
//! shared instances of [`corpus`], with the progress they tell ([`Step`]) and the summary
//! statistic they share ([`summary`]). Their reports (Markdown, figures, findings) are
//! `elk_reports::studies`, which runs each one through here.

pub mod ablation;
pub mod budget;
pub mod corpus;
pub mod cost_noise;
pub mod gap;
pub mod gap_whole;
pub mod hbm_emulation;
pub mod measured;
pub mod moe;
pub mod order_pruning;
pub mod replay_fidelity;
pub mod resident;

use std::sync::atomic::{AtomicUsize, Ordering};

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
