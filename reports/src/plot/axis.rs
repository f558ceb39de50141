//! Axis scales and ticks, chosen by the figure module for every figure, so no caller picks
//! them: a log axis where positive values span decades (but never for a percentage), ticks
//! at round numbers printed without a spurious ".0", and, on a swept quantity with few
//! values, ticks exactly at those values (HBM 4, 6, … 16 TB/s; 2, 4, 8, 16 controllers),
//! never 4.0, 5.5, ….

/// How values map to the axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scale {
    /// Linear.
    Linear,
    /// log10: the axis coordinate of v is log10(v).
    Log,
}

/// Positive values whose largest is at least this many times the smallest are drawn on a
/// log axis: on a linear one the small ones are flat lines at the bottom (Fig 17's Basic at
/// 740 ms beside Elk's 20 ms).
pub(super) const DECADES: f64 = 30.0;

impl Scale {
    /// The scale for `values`: log when every value is positive and they span [`DECADES`].
    pub(super) fn for_values(values: impl Iterator<Item = f64> + Clone) -> Scale {
        let positive = values.clone().all(|v| v > 0.0);
        let (lo, hi) = values.fold((f64::INFINITY, 0.0f64), |a, v| (a.0.min(v), a.1.max(v)));
        if positive && lo.is_finite() && hi / lo >= DECADES {
            Scale::Log
        } else {
            Scale::Linear
        }
    }

    /// The scale of an axis described by `desc` (its unit in it) for `values`: linear
    /// whatever the values for a percentage ([`is_percent`]), whose scale a reader knows
    /// (0 to 100, the reference at 100 or at 0), so a value ten times another looks ten
    /// times as large; else [`Scale::for_values`] (a latency spanning decades gets a log
    /// axis).
    pub(super) fn for_quantity(desc: &str, values: impl Iterator<Item = f64> + Clone) -> Scale {
        if is_percent(desc) {
            Scale::Linear
        } else {
            Scale::for_values(values)
        }
    }

    /// An axis description as the axis prints it: " (log scale)" added on a log axis.
    pub(super) fn described(self, desc: &str) -> String {
        match self {
            Scale::Log => format!("{desc} (log scale)"),
            Scale::Linear => desc.to_string(),
        }
    }

    /// The axis coordinate of `v`.
    pub(super) fn at(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        }
    }

    /// The axis range (in axis coordinates) for values in `lo..=hi`, from zero on a linear
    /// axis (so bar lengths compare), from the decade below `lo` on a log axis, with room
    /// above the largest value.
    pub(super) fn range(self, lo: f64, hi: f64) -> (f64, f64) {
        match self {
            Scale::Linear => {
                let hi = hi.max(1e-9);
                (lo.min(0.0) * 1.15, hi * 1.15)
            }
            Scale::Log => (lo.log10().floor(), (hi * 1.6).log10()),
        }
    }

    /// The ticks of an axis over `range` (axis coordinates): (coordinate, label).
    pub(super) fn ticks(self, range: (f64, f64)) -> Vec<(f64, String)> {
        match self {
            Scale::Linear => linear_ticks(range),
            Scale::Log => {
                let decades = range.1 - range.0;
                let steps: &[f64] = if decades <= 2.5 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                let mut out = Vec::new();
                let mut k = range.0.floor() as i32;
                while f64::from(k) <= range.1 {
                    for s in steps {
                        let v = s * 10f64.powi(k);
                        let at = v.log10();
                        if at >= range.0 - 1e-9 && at <= range.1 + 1e-9 {
                            out.push((at, number(v)));
                        }
                    }
                    k += 1;
                }
                out
            }
        }
    }
}

/// Whether an axis description gives its quantity in percent: it starts with "%" ("% of
/// Ideal (…)") or its unit, in the last parentheses, is "%", "% of …" or "%, …" ("gap (%)",
/// "replay − model (% of the model)", "above the oracle (%, mean of the steps)").
pub(super) fn is_percent(desc: &str) -> bool {
    let desc = desc.trim();
    let unit = desc
        .rfind('(')
        .map(|at| desc[at + 1..].trim_end_matches(')').trim());
    desc.starts_with('%')
        || unit.is_some_and(|u| u == "%" || u.starts_with("% ") || u.starts_with("%,"))
}

/// Round-number ticks (1, 2 or 5 × 10^k apart, 4 to 10 of them) over `range`.
fn linear_ticks((lo, hi): (f64, f64)) -> Vec<(f64, String)> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 8.0)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .map(|k| {
            let v = k as f64 * step;
            // Rounded to the step's digits, so 0.30000000000000004 prints 0.3.
            let digits = (-step.log10().floor()).max(0.0) as i32;
            let p = 10f64.powi(digits);
            let v = (v * p).round() / p;
            (v, number(v))
        })
        .collect()
}

/// Ticks exactly at the data's x values when there are few of them (a swept quantity: the
/// batches that were run, 1, 8 and 64, on a log axis too), else round numbers or decades;
/// `range` is in axis coordinates.
pub(super) fn x_ticks(xs: &[f64], range: (f64, f64), scale: Scale) -> Vec<(f64, String)> {
    let mut distinct: Vec<f64> = xs
        .iter()
        .copied()
        .filter(|x| x.is_finite() && (scale == Scale::Linear || *x > 0.0))
        .collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if !distinct.is_empty() && distinct.len() <= 12 {
        distinct
            .into_iter()
            .map(|x| (scale.at(x), number(x)))
            .collect()
    } else {
        scale.ticks(range)
    }
}

/// A number as a reader writes it: integers without ".0", others in their shortest form.
pub(super) fn number(v: f64) -> String {
    if v == v.round() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v}");
        if s.len() > 8 {
            format!("{v:.3}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        } else {
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_axes_get_integer_ticks_and_swept_values_are_the_ticks() {
        let labels = |t: Vec<(f64, String)>| t.into_iter().map(|t| t.1).collect::<Vec<_>>();
        assert_eq!(
            labels(x_ticks(
                &[2.0, 4.0, 8.0, 16.0, 2.0],
                (1.3, 16.7),
                Scale::Linear
            )),
            ["2", "4", "8", "16"]
        );
        assert_eq!(
            labels(x_ticks(&[0.75, 1.0, 1.25], (0.7, 1.3), Scale::Linear)),
            ["0.75", "1", "1.25"]
        );
        for t in linear_ticks((0.0, 17.3)) {
            assert!(!t.1.contains('.'), "{t:?}");
        }
        assert_eq!(
            labels(linear_ticks((0.0, 0.9))),
            ["0", "0.2", "0.4", "0.6", "0.8"]
        );
        // On a log axis: at the batches that were run, where log10 puts them.
        let log = x_ticks(&[1.0, 8.0, 64.0, 8.0], (-0.1, 1.9), Scale::Log);
        assert_eq!(labels(log.clone()), ["1", "8", "64"]);
        assert!((log[1].0 - 8f64.log10()).abs() < 1e-12, "{log:?}");
    }

    #[test]
    fn values_spanning_decades_get_a_log_axis_with_decade_ticks() {
        let v = [740.0, 20.0, 5.0];
        let s = Scale::for_values(v.iter().copied());
        assert_eq!(s, Scale::Log);
        let r = s.range(5.0, 740.0);
        let t: Vec<String> = s.ticks(r).into_iter().map(|t| t.1).collect();
        assert_eq!(t, ["1", "10", "100", "1000"]);
        assert_eq!(Scale::for_values([1.0, 2.0].into_iter()), Scale::Linear);
        assert_eq!(Scale::for_values([0.0, 200.0].into_iter()), Scale::Linear);
    }

    #[test]
    fn percentages_stay_linear_however_far_they_spread_and_latencies_do_not() {
        let v = [3.0, 91.5, 45.0];
        for desc in [
            "% of Ideal (Ideal's latency / the method's)",
            "certified gap to the optimum, at most (%)",
            "replay − model (% of the model)",
            "degradation (% of true-cost plan)",
            "makespan above the oracle's (%, mean of the steps)",
        ] {
            assert!(is_percent(desc), "{desc}");
            assert_eq!(Scale::for_quantity(desc, v.iter().copied()), Scale::Linear);
        }
        for desc in ["latency (ms)", "latency (ms, detailed simulator)", "cores"] {
            assert!(!is_percent(desc), "{desc}");
            assert_eq!(Scale::for_quantity(desc, v.iter().copied()), Scale::Log);
        }
        // Linear from zero with round ticks, no decade labels.
        let r = Scale::Linear.range(3.0, 91.5);
        let t: Vec<String> = Scale::Linear.ticks(r).into_iter().map(|t| t.1).collect();
        assert_eq!(t, ["0", "20", "40", "60", "80", "100"]);
    }
}
