//! One class of operators that takes most of a step: the warning a reader needs before
//! publishing a number that measures, say, norm reductions rather than weight loading
//! (docs/plans.md, "When one operator class dominates").
//!
//! A class is the operators of one shape, recognised in the instance itself (identical option
//! lists and HBM loads, [`Instance::op_classes`]: what identical plan tables give), so it works
//! on `--instance` files too. Its time is a lower bound: Σ of its operators' fastest executions, which every
//! schedule pays at least (each stage lasts at least its operator's execution, SPEC §4). Its
//! share is that over the best schedule's makespan, so "at least X % of the step" is true of
//! the best schedule, whatever options it chose.

use elk_stage::instance::Instance;
use elk_stage::units::Cycles;

/// Above this share of the step, a class is worth a warning.
pub const DOMINANT_SHARE: f64 = 0.5;

/// A class of identical operators and the least time it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Dominant {
    /// The class's operator names with what differs replaced by `*` (`*.norm.sqsum`).
    pub pattern: String,
    /// Its operators.
    pub ops: usize,
    /// Σ of their fastest executions.
    pub cycles: Cycles,
    /// `cycles` over the makespan.
    pub share: f64,
}

impl Dominant {
    /// The one-line warning (no `warning:` prefix), times in ms at `clock_hz`.
    pub fn warning(&self, clock_hz: f64, makespan: Cycles) -> String {
        let ms = |c: Cycles| c.get() / clock_hz * 1e3;
        let one = self.ops == 1;
        let (which, verb, their, them) = if one {
            ("1 operator".to_string(), "takes", "its", "it")
        } else {
            (
                format!("{} operators of one shape", self.ops),
                "take",
                "their",
                "them",
            )
        };
        format!(
            "{which} ({pattern}) {verb} at least {share:.0} % of the step: {cycles:.4} of {makespan:.4} ms executing even at {their} fastest options, so this result measures {them} more than the rest of the model (docs/plans.md, \"When one operator class dominates\")",
            pattern = self.pattern,
            share = 100.0 * self.share,
            cycles = ms(self.cycles),
            makespan = ms(makespan)
        )
    }
}

/// The class whose fastest executions take the largest share of `makespan`, when that share
/// exceeds [`DOMINANT_SHARE`].
pub fn dominant_class(inst: &Instance, makespan: Cycles) -> Option<Dominant> {
    if makespan.get() <= 0.0 {
        return None;
    }
    let classes_of = inst.op_classes();
    let mut classes: Vec<(Vec<&str>, f64)> =
        vec![(Vec::new(), 0.0); classes_of.iter().max().map_or(0, |m| m + 1)];
    for (op, &class) in inst.ops.iter().zip(&classes_of) {
        let fastest = op
            .options
            .iter()
            .map(|o| o.exec_cycles.get())
            .fold(f64::INFINITY, f64::min);
        if !fastest.is_finite() {
            continue;
        }
        classes[class].0.push(&op.name);
        classes[class].1 += fastest;
    }
    let (names, cycles) = classes
        .into_iter()
        .filter(|c| !c.0.is_empty())
        .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(&a.0)))?;
    let share = cycles / makespan.get();
    (share > DOMINANT_SHARE).then(|| Dominant {
        pattern: pattern(&names),
        ops: names.len(),
        cycles: Cycles(cycles),
        share,
    })
}

/// The dot-separated components the names share at their end, behind `*.` when they differ
/// before it (`l0.attn.norm.sqsum`, `l1.ffn.norm.sqsum` → `*.norm.sqsum`).
fn pattern(names: &[&str]) -> String {
    let Some(first) = names.first() else {
        return String::new();
    };
    let parts: Vec<&str> = first.split('.').collect();
    let mut common = parts.len();
    for name in &names[1..] {
        let other: Vec<&str> = name.split('.').collect();
        let same = parts
            .iter()
            .rev()
            .zip(other.iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        common = common.min(same);
    }
    let tail = parts[parts.len() - common..].join(".");
    match (common == parts.len() && names.len() == 1, tail.is_empty()) {
        (true, _) => tail,
        (false, true) => format!("{first}, …"),
        (false, false) => format!("*.{tail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use elk_stage::corpus;

    #[test]
    fn patterns_keep_the_shared_ending() {
        assert_eq!(
            pattern(&[
                "l0.attn.norm.sqsum",
                "l1.ffn.norm.sqsum",
                "final_norm.sqsum"
            ]),
            "*.sqsum"
        );
        assert_eq!(
            pattern(&["l0.attn.norm.sqsum", "l1.attn.norm.sqsum"]),
            "*.attn.norm.sqsum"
        );
        assert_eq!(pattern(&["lm_head"]), "lm_head");
        assert_eq!(pattern(&["a.x", "b.y"]), "a.x, …");
    }

    #[test]
    fn a_class_over_half_the_step_is_named_and_one_below_is_not() {
        let mut inst = corpus::random_instance(3, &corpus::RandomSpec::tiny(6, 3));
        // Make ops 1, 3 and 5 identical and slow: 3 × 1,000 cycles of fastest execution.
        let slow = inst.ops[1].clone();
        for (i, name) in [
            (1, "l0.norm.sqsum"),
            (3, "l1.norm.sqsum"),
            (5, "l2.norm.sqsum"),
        ] {
            inst.ops[i] = slow.clone();
            inst.ops[i].name = name.into();
            for o in inst.ops[i].options_mut() {
                o.exec_cycles = Cycles(1_000.0 + o.exec_cycles.get());
            }
        }
        let fastest: f64 = (1..6)
            .step_by(2)
            .map(|i| {
                inst.ops[i]
                    .options
                    .iter()
                    .map(|o| o.exec_cycles.get())
                    .fold(f64::INFINITY, f64::min)
            })
            .sum();
        let d = dominant_class(&inst, Cycles(fastest / 0.6)).expect("60 % of the step");
        assert_eq!((d.pattern.as_str(), d.ops), ("*.norm.sqsum", 3));
        assert!((d.share - 0.6).abs() < 1e-12);
        assert_eq!(dominant_class(&inst, Cycles(fastest / 0.4)), None);
    }
}
