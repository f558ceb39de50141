//! Unit newtypes that cross crate boundaries. Numbers carry their unit in the type and are
//! converted to human units only when printed.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign};

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
        impl Sum for $t {
            fn sum<I: Iterator<Item = $t>>(iter: I) -> $t {
                $t(iter.map(|x| x.0).sum())
            }
        }
    };
}
additive!(Bytes);
additive!(Flops);

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
}
