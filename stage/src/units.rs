//! Unit newtypes that cross crate boundaries. Numbers carry their unit in the type and are
//! converted to human units only when printed (or by [`Cycles::ms`] at the edge).
//!
//! All of them are `#[serde(transparent)]`: a file holds the bare number, exactly as before
//! the types existed.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// A number of bytes.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// A number of floating-point operations (a multiply-add counts as two).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Flops(pub u64);

/// A duration in clock cycles of the chip (fractional: stage durations are fluid).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Cycles(pub f64);

macro_rules! additive {
    ($t:ident) => {
        impl Add for $t {
            type Output = $t;
            fn add(self, rhs: $t) -> $t {
                $t(self.0 + rhs.0)
            }
        }
        impl AddAssign for $t {
            fn add_assign(&mut self, rhs: $t) {
                self.0 += rhs.0;
            }
        }
        impl Sub for $t {
            type Output = $t;
            fn sub(self, rhs: $t) -> $t {
                $t(self.0 - rhs.0)
            }
        }
        impl SubAssign for $t {
            fn sub_assign(&mut self, rhs: $t) {
                self.0 -= rhs.0;
            }
        }
        impl Sum for $t {
            fn sum<I: Iterator<Item = $t>>(iter: I) -> $t {
                $t(iter.map(|x| x.0).sum())
            }
        }
        impl<'a> Sum<&'a $t> for $t {
            fn sum<I: Iterator<Item = &'a $t>>(iter: I) -> $t {
                $t(iter.map(|x| x.0).sum())
            }
        }
    };
}
additive!(Bytes);
additive!(Flops);
additive!(Cycles);

impl Bytes {
    /// The bare count.
    #[inline]
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl Cycles {
    /// No time.
    pub const ZERO: Cycles = Cycles(0.0);

    /// The bare number of cycles (for arithmetic inside an engine; never pass it on).
    #[inline]
    pub const fn get(self) -> f64 {
        self.0
    }

    /// The larger of two durations (NaN-free inputs assumed, as `f64::max`).
    #[inline]
    pub fn max(self, other: Cycles) -> Cycles {
        Cycles(self.0.max(other.0))
    }

    /// The smaller of two durations.
    #[inline]
    pub fn min(self, other: Cycles) -> Cycles {
        Cycles(self.0.min(other.0))
    }

    /// `f64::total_cmp` on the cycle counts (a total order for sorting).
    #[inline]
    pub fn total_cmp(&self, other: &Cycles) -> Ordering {
        self.0.total_cmp(&other.0)
    }

    /// Milliseconds at `clock_hz`.
    pub fn ms(self, clock_hz: f64) -> f64 {
        self.0 / clock_hz * 1e3
    }

    /// Finite (not NaN, not infinite).
    #[inline]
    pub fn is_finite(self) -> bool {
        self.0.is_finite()
    }

    /// The absolute value.
    #[inline]
    pub fn abs(self) -> Cycles {
        Cycles(self.0.abs())
    }
}

impl Mul<f64> for Cycles {
    type Output = Cycles;
    fn mul(self, rhs: f64) -> Cycles {
        Cycles(self.0 * rhs)
    }
}

impl Div<f64> for Cycles {
    type Output = Cycles;
    fn div(self, rhs: f64) -> Cycles {
        Cycles(self.0 / rhs)
    }
}

impl MulAssign<f64> for Cycles {
    fn mul_assign(&mut self, rhs: f64) {
        self.0 *= rhs;
    }
}

impl DivAssign<f64> for Cycles {
    fn div_assign(&mut self, rhs: f64) {
        self.0 /= rhs;
    }
}

/// A ratio of two durations is a plain number.
impl Div for Cycles {
    type Output = f64;
    fn div(self, rhs: Cycles) -> f64 {
        self.0 / rhs.0
    }
}

impl Neg for Cycles {
    type Output = Cycles;
    fn neg(self) -> Cycles {
        Cycles(-self.0)
    }
}

/// Formats `value` with an SI prefix (k, M, G, T, P) and `unit`, three significant digits.
pub fn si(value: f64, unit: &str) -> String {
    const PREFIXES: [(f64, &str); 5] =
        [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, prefix) in PREFIXES {
        if value.abs() >= scale {
            return format!("{:.3} {prefix}{unit}", value / scale);
        }
    }
    format!("{value:.0} {unit}")
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&si(self.0 as f64, "B"))
    }
}

impl fmt::Display for Flops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&si(self.0 as f64, "FLOP"))
    }
}

/// `1234.5 cycles` (one decimal, as the reports print cycles).
impl fmt::Display for Cycles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1} cycles", self.0)
    }
}

/// An operator: its index in the instance's execution order.
///
/// A `usize` inside so that it indexes `Instance::ops` directly (`inst.ops[j.index()]`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct OpId(pub usize);

impl OpId {
    /// The index into `Instance::ops`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0
    }
}

impl fmt::Display for OpId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op {}", self.0)
    }
}

/// A stage of the stage model (SPEC §4): stage 0 is the prologue (loads only); stage k ≥ 1
/// executes operator k − 1. This off-by-one lives here and nowhere else.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Stage(pub usize);

impl Stage {
    /// The prologue: loads before any operator runs.
    pub const PROLOGUE: Stage = Stage(0);

    /// The stage in which `op` executes.
    #[inline]
    pub const fn of_op(op: OpId) -> Stage {
        Stage(op.0 + 1)
    }

    /// The operator this stage executes (none in the prologue).
    #[inline]
    pub const fn executing(self) -> Option<OpId> {
        match self.0 {
            0 => None,
            k => Some(OpId(k - 1)),
        }
    }

    /// The index into per-stage tables of length `ops + 1`.
    #[inline]
    pub const fn index(self) -> usize {
        self.0
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stage {}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn si_prefixes() {
        assert_eq!(si(1_500.0, "B"), "1.500 kB");
        assert_eq!(si(13.0e9, "B"), "13.000 GB");
        assert_eq!(si(12.0, "B"), "12 B");
        assert_eq!(Bytes(3) + Bytes(4), Bytes(7));
    }

    #[test]
    fn a_stage_executes_the_operator_before_it() {
        assert_eq!(Stage::of_op(OpId(0)), Stage(1));
        assert_eq!(Stage(1).executing(), Some(OpId(0)));
        assert_eq!(Stage::PROLOGUE.executing(), None);
        assert_eq!(Stage::of_op(OpId(6)).executing(), Some(OpId(6)));
    }

    #[test]
    fn cycles_serialise_as_bare_numbers() {
        let v = (OpId(3), Stage(2), Cycles(12.5));
        assert_eq!(serde_json::to_string(&v).unwrap(), "[3,2,12.5]");
        assert_eq!(Cycles(30.0) / Cycles(60.0), 0.5);
        assert_eq!(format!("{}", Cycles(1234.56)), "1234.6 cycles");
    }
}
