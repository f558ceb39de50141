//! Integer keys that also accept a float written as a whole number: TOML users write
//! `sram_bytes_per_core = 1.0e6`, and that is exactly 1,000,000. A float with a fraction
//! (`1.5e0`) is an error; the TOML error names the key and its line.

use serde::de::{self, Deserializer, Unexpected, Visitor};
use serde::Deserialize;

/// A `u64` written as an integer or as an exactly whole float.
struct Whole(u64);

impl<'de> Deserialize<'de> for Whole {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Whole, D::Error> {
        d.deserialize_any(WholeVisitor).map(Whole)
    }
}

struct WholeVisitor;

impl Visitor<'_> for WholeVisitor {
    type Value = u64;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        // The word serde prints for a plain u64, so messages stay as they were.
        f.write_str("u64")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
        u64::try_from(v).map_err(|_| E::invalid_value(Unexpected::Signed(v), &self))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
        // 2^64 is exactly representable; every whole float below it converts exactly.
        if (0.0..18_446_744_073_709_551_616.0).contains(&v) {
            if v.fract() == 0.0 {
                return Ok(v as u64);
            }
            return Err(E::custom(format_args!(
                "{v} is not a whole number (an integer key: 1.0e6 is fine when whole)"
            )));
        }
        Err(E::invalid_value(Unexpected::Float(v), &self))
    }
}

/// A whole `u64`.
pub(super) fn u64<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Whole::deserialize(d).map(|w| w.0)
}

/// A whole `u64`, present (absent keys take the field's `default`).
pub(super) fn some<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    u64(d).map(Some)
}

/// A list of whole `u64`s.
pub(super) fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    Vec::<Whole>::deserialize(d).map(|v| v.into_iter().map(|w| w.0).collect())
}
