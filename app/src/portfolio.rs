//! The one portfolio runner: run these methods on this instance, judge each by the simulator,
//! keep the best, and say one way why a method has no schedule. `compare`'s heuristics (and
//! so `gap`'s warm start), the MoE steps and the sweep cells all run their methods through it.
//!
//! One failure policy: a method *error* (an invalid schedule included, [`elk_sim::run_judged`])
//! stops the run and is returned with the runs before it, never a blank result; a method that
//! finds *no schedule* is a run like any other, whose [`Run::failure`] says why.

use elk_sim::Judged;
use elk_stage::instance::Instance;
use elk_stage::method::{Budget, Method, MethodError, Outcome};
use elk_stage::schedule::Schedule;
use elk_stage::units::Cycles;

/// One method's judged run.
#[derive(Clone, Debug)]
pub struct Run {
    /// The method's name.
    pub method: String,
    /// What it returned, judged.
    pub judged: Judged,
}

impl Run {
    /// Why it has no schedule (`no schedule`, with the method's reason when it gave one), or
    /// `None` when it has one.
    pub fn failure(&self) -> Option<String> {
        if self.judged.makespan().is_some() {
            return None;
        }
        Some(match &self.judged.solved.outcome {
            Outcome::Unknown { reason } | Outcome::Infeasible { reason } => {
                format!("no schedule: {reason}")
            }
            _ => "no schedule".into(),
        })
    }
}

/// Methods run on one instance, in order.
#[derive(Clone, Debug, Default)]
pub struct Portfolio {
    /// Each method's run, in the order given.
    pub runs: Vec<Run>,
}

/// A method failed: the runs before it, and its error.
#[derive(Debug)]
pub struct Stopped {
    /// The runs that finished before the error.
    pub done: Portfolio,
    /// The method's error.
    pub error: MethodError,
}

impl From<Stopped> for MethodError {
    fn from(s: Stopped) -> MethodError {
        s.error
    }
}

impl Portfolio {
    /// Runs each of `methods` on `inst` in order with the default budget, calling
    /// `starting(k, name)` before the k-th (0-based).
    pub fn run<'m>(
        inst: &Instance,
        methods: impl IntoIterator<Item = &'m dyn Method>,
        starting: &mut dyn FnMut(usize, &str),
    ) -> Result<Portfolio, Stopped> {
        let mut done = Portfolio::default();
        for (k, m) in methods.into_iter().enumerate() {
            starting(k, m.name());
            match elk_sim::run_judged(inst, m, &Budget::default()) {
                Ok(judged) => done.runs.push(Run {
                    method: m.name().to_string(),
                    judged,
                }),
                Err(error) => return Err(Stopped { done, error }),
            }
        }
        Ok(done)
    }

    /// The fastest judged schedule, the first of equals: its run's index, the schedule and
    /// its makespan.
    pub fn best(&self) -> Option<(usize, &Schedule, Cycles)> {
        let mut best: Option<(usize, &Schedule, Cycles)> = None;
        for (k, r) in self.runs.iter().enumerate() {
            if let (Some(s), Some(t)) = (r.judged.schedule(), r.judged.makespan()) {
                if best.is_none_or(|b| t < b.2) {
                    best = Some((k, s, t));
                }
            }
        }
        best
    }

    /// `method: no schedule[: why]` for each method without one, in order.
    pub fn failures(&self) -> Vec<String> {
        self.runs
            .iter()
            .filter_map(|r| r.failure().map(|why| format!("{}: {why}", r.method)))
            .collect()
    }

    /// The run of `method`, if it ran.
    pub fn of(&self, method: &str) -> Option<&Run> {
        self.runs.iter().find(|r| r.method == method)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_is_the_fastest_judged_and_failures_say_why() {
        let inst = elk_stage::corpus::no_schedule_fits();
        let methods: Vec<_> = ["basic", "elk-dyn-greedy"]
            .iter()
            .map(|m| elk_heuristics::by_name(m).unwrap())
            .collect();
        let mut started = Vec::new();
        let p = Portfolio::run(&inst, methods.iter().map(|m| m.as_ref()), &mut |k, n| {
            started.push(format!("{k}:{n}"))
        })
        .unwrap();
        assert_eq!(started, ["0:basic", "1:elk-dyn-greedy"]);
        assert!(p.best().is_none());
        let failures = p.failures();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(
            failures[0].starts_with("basic: no schedule: "),
            "{failures:?}"
        );
        // The best is the fastest whichever order the methods run in, and the first of
        // equals; some seed of the studies' corpus tells the two methods apart.
        let names = ["basic", "elk-full"];
        let mut apart = 0;
        for seed in 0..20 {
            let inst =
                elk_stage::corpus::random_instance(seed, &elk_stage::corpus::RandomSpec::study());
            let methods: Vec<_> = names
                .iter()
                .map(|m| elk_heuristics::by_name(m).unwrap())
                .collect();
            let p =
                Portfolio::run(&inst, methods.iter().map(|m| m.as_ref()), &mut |_, _| {}).unwrap();
            let q = Portfolio::run(
                &inst,
                methods.iter().rev().map(|m| m.as_ref()),
                &mut |_, _| {},
            )
            .unwrap();
            let times: Vec<Cycles> = p.runs.iter().filter_map(|r| r.judged.makespan()).collect();
            let Some(&fastest) = times.iter().min_by(|a, b| a.get().total_cmp(&b.get())) else {
                continue;
            };
            let (k, _, t) = p.best().unwrap();
            assert_eq!((t, q.best().unwrap().2), (fastest, fastest), "seed {seed}");
            assert_eq!(p.runs[k].judged.makespan(), Some(t));
            assert!(p.runs[..k].iter().all(|r| r.judged.makespan() != Some(t)));
            if times.len() == 2 && times[0] != times[1] {
                apart += 1;
            }
        }
        assert!(apart > 0, "no seed tells basic and elk-full apart");
    }
}
