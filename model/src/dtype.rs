//! Element types: one for the weights, one for the KV cache, one for the activations
//! (`--dtype`). Bytes follow from them (a tensor's `dtype_bytes`), and so do plan footprints
//! and HBM time; cost models say which they price ([`crate::cost::for_chip_with`]).
//!
//! ```
//! use elk_model::dtype::{Dtype, Dtypes};
//! let d = Dtypes::parse("w8a16").unwrap();
//! assert_eq!((d.weights, d.kv, d.activations), (Dtype::Int8, Dtype::Fp16, Dtype::Fp16));
//! assert_eq!(d.weights.bytes(), 1);
//! assert_eq!(Dtypes::parse("fp16").unwrap(), Dtypes::default());
//! ```

use serde::{Deserialize, Serialize};

/// One element type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// IEEE single precision, 4 bytes.
    Fp32,
    /// IEEE half precision, 2 bytes (the default).
    #[default]
    Fp16,
    /// bfloat16, 2 bytes.
    Bf16,
    /// 8-bit float (E4M3/E5M2: the cost models do not tell them apart), 1 byte.
    Fp8,
    /// 8-bit integer, 1 byte.
    Int8,
}

impl Dtype {
    /// Every dtype, in the order error messages list them.
    pub const ALL: [Dtype; 5] = [
        Dtype::Fp16,
        Dtype::Bf16,
        Dtype::Fp8,
        Dtype::Int8,
        Dtype::Fp32,
    ];

    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::Fp32 => 4,
            Dtype::Fp16 | Dtype::Bf16 => 2,
            Dtype::Fp8 | Dtype::Int8 => 1,
        }
    }

    /// The lower-case name (`fp16`).
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Fp16 => "fp16",
            Dtype::Bf16 => "bf16",
            Dtype::Fp8 => "fp8",
            Dtype::Int8 => "int8",
        }
    }

    fn named(s: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// The dtype called `s` (`fp8`), as [`Dtype::as_str`] names it.
    pub fn parse_name(s: &str) -> Option<Dtype> {
        Dtype::named(s)
    }

    /// The dtype of a bit count in the mixed forms: 32 fp32, 16 fp16, 8 int8 (`w8a16` is
    /// the usual name of int8 weight-only quantisation; name fp8 as `fp8`).
    fn of_bits(bits: &str) -> Option<Dtype> {
        match bits {
            "32" => Some(Dtype::Fp32),
            "16" => Some(Dtype::Fp16),
            "8" => Some(Dtype::Int8),
            _ => None,
        }
    }
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The element types of one graph: weights (parameters), KV cache and activations
/// (everything else, graph inputs included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Dtypes {
    /// Model parameters.
    pub weights: Dtype,
    /// The attention key/value cache of a decode step.
    pub kv: Dtype,
    /// Computed values and graph inputs.
    pub activations: Dtype,
}

/// What `--dtype` accepts, for error messages.
pub const ACCEPTED: &str = "fp16, bf16, fp8, int8, fp32 (all tensors), wXaY (weights X bits, KV \
                            and activations Y bits, e.g. w8a16) or wXkvYaZ, with bits 32, 16 or 8 \
                            (16: fp16, 8: int8)";

impl Dtypes {
    /// Every tensor of type `d`.
    pub fn all(d: Dtype) -> Dtypes {
        Dtypes {
            weights: d,
            kv: d,
            activations: d,
        }
    }

    /// fp16 everywhere (the default, printed nowhere).
    pub fn is_default(&self) -> bool {
        *self == Dtypes::default()
    }

    /// Parses `fp16`, `bf16`, `fp8`, `int8`, `fp32` (every tensor) or the mixed forms
    /// `wXaY` (KV as the activations) and `wXkvYaZ`, with X, Y, Z one of 32, 16, 8.
    pub fn parse(s: &str) -> Result<Dtypes, String> {
        let bad = || format!("--dtype '{s}': expected {ACCEPTED}");
        if let Some(d) = Dtype::named(s) {
            return Ok(Dtypes::all(d));
        }
        let rest = s.strip_prefix('w').ok_or_else(bad)?;
        let (w, rest) = rest.split_once(['k', 'a']).ok_or_else(bad)?;
        let (kv, a) = if let Some(kv_a) = rest.strip_prefix('v') {
            // `wXkvYaZ`: the split was at the `k`.
            if s.as_bytes()[1 + w.len()] != b'k' {
                return Err(bad());
            }
            kv_a.split_once('a').ok_or_else(bad)?
        } else {
            if s.as_bytes()[1 + w.len()] != b'a' {
                return Err(bad());
            }
            (rest, rest)
        };
        let bits = |b: &str| Dtype::of_bits(b).ok_or_else(bad);
        Ok(Dtypes {
            weights: bits(w)?,
            kv: bits(kv)?,
            activations: bits(a)?,
        })
    }

    /// The dtypes that appear, each once: what a cost model must price.
    pub fn distinct(&self) -> Vec<Dtype> {
        let mut v = vec![self.weights];
        for d in [self.kv, self.activations] {
            if !v.contains(&d) {
                v.push(d);
            }
        }
        v
    }
}

impl std::fmt::Display for Dtypes {
    /// `fp16` when all are equal; otherwise `w8a16` or `w8kv8a16` when each is 32, 16
    /// (fp16) or 8 (int8) bits, else `w=fp8,kv=fp16,a=bf16`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Dtypes {
            weights: w,
            kv,
            activations: a,
        } = *self;
        if w == kv && kv == a {
            return write!(f, "{w}");
        }
        let bits = |d: Dtype| match d {
            Dtype::Fp32 | Dtype::Fp16 | Dtype::Int8 => Some(d.bytes() * 8),
            Dtype::Bf16 | Dtype::Fp8 => None,
        };
        match (bits(w), bits(kv), bits(a)) {
            (Some(w), Some(kv), Some(a)) if kv == a => write!(f, "w{w}a{a}"),
            (Some(w), Some(kv), Some(a)) => write!(f, "w{w}kv{kv}a{a}"),
            _ => write!(f, "w={w},kv={kv},a={a}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        for d in Dtype::ALL {
            assert_eq!(Dtypes::parse(d.as_str()), Ok(Dtypes::all(d)));
        }
        let w8a16 = Dtypes::parse("w8a16").unwrap();
        assert_eq!(w8a16.weights, Dtype::Int8);
        assert_eq!((w8a16.kv, w8a16.activations), (Dtype::Fp16, Dtype::Fp16));
        let mixed = Dtypes::parse("w8kv8a16").unwrap();
        assert_eq!(
            (mixed.weights, mixed.kv, mixed.activations),
            (Dtype::Int8, Dtype::Int8, Dtype::Fp16)
        );
        assert_eq!(Dtypes::parse("w16a16"), Ok(Dtypes::default()));
        assert_eq!(Dtypes::parse("w32a16").unwrap().weights.bytes(), 4);
    }

    #[test]
    fn prints_what_it_parses() {
        for s in [
            "fp16",
            "bf16",
            "fp8",
            "int8",
            "fp32",
            "w8a16",
            "w8kv8a16",
            "w16kv8a16",
        ] {
            assert_eq!(Dtypes::parse(s).unwrap().to_string(), s);
        }
        let odd = Dtypes {
            weights: Dtype::Fp8,
            ..Dtypes::all(Dtype::Bf16)
        };
        assert_eq!(odd.to_string(), "w=fp8,kv=bf16,a=bf16");
    }

    #[test]
    fn refuses_other_strings_naming_the_flag_and_the_forms() {
        for s in [
            "",
            "fp4",
            "FP16",
            "w4a16",
            "w8",
            "w8a",
            "wa16",
            "w8a16x",
            "w8kv16",
            "w8kva16",
            "w8av16a16",
            "w8k16a16",
            "a16w8",
            "float16",
        ] {
            let e = Dtypes::parse(s).unwrap_err();
            assert!(
                e.starts_with(&format!("--dtype '{s}': expected fp16, bf16")),
                "{e}"
            );
            assert!(e.contains("wXaY") && !e.contains('\n'), "{e}");
        }
    }
}
