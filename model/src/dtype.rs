//! Element types: one for the weights, one for the KV cache, one for the activations
//! (`--dtype`). Bytes follow from them (a tensor's `dtype_bytes`, a [`DtypeBytes`]), and so do
//! plan footprints and HBM time; cost models say which they price
//! ([`crate::cost::for_chip_with`]).
//!
//! Block floating point (`bfp8`, `bfp4`, Tenstorrent's weight formats) stores 16 elements
//! with one shared 8-bit exponent, so an element takes a fraction of a byte more than its
//! mantissa: [`DtypeBytes`] counts sixteenths of a byte, exactly.
//!
//! ```
//! use elk_model::dtype::{Dtype, DtypeBytes, Dtypes};
//! let d = Dtypes::parse("w8a16").unwrap();
//! assert_eq!((d.weights, d.kv, d.activations), (Dtype::Int8, Dtype::Fp16, Dtype::Fp16));
//! assert_eq!(d.weights.bytes(), DtypeBytes::whole(1));
//! assert_eq!(Dtypes::parse("fp16").unwrap(), Dtypes::default());
//! // A 32 × 32 tile of bfp8: 1024 mantissa bytes and 64 exponent bytes.
//! assert_eq!(Dtype::Bfp8.bytes().of(32 * 32), 1088);
//! ```

use serde::{Deserialize, Serialize};

/// Bytes per element of a dtype, exactly: a count of sixteenths of a byte (fp16 is 32/16,
/// bfp8 17/16, bfp4 9/16). Whole sizes behave as the plain byte counts they replace: they
/// print, hash-compare and serialise as the integer (`2`); a fractional size serialises as
/// its decimal (`1.0625`, exact in binary), and a file may give any multiple of 1/16.
/// Tensor sizes ([`DtypeBytes::of`]) round up to a whole byte per tensor (or per tile).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DtypeBytes(u64);

impl DtypeBytes {
    /// `bytes` whole bytes per element.
    pub const fn whole(bytes: u64) -> DtypeBytes {
        DtypeBytes(bytes * 16)
    }

    /// `n` sixteenths of a byte per element.
    pub const fn sixteenths(n: u64) -> DtypeBytes {
        DtypeBytes(n)
    }

    /// The size in sixteenths of a byte.
    pub const fn in_sixteenths(self) -> u64 {
        self.0
    }

    /// The size when it is a whole number of bytes.
    pub const fn as_whole(self) -> Option<u64> {
        if self.0 % 16 == 0 {
            Some(self.0 / 16)
        } else {
            None
        }
    }

    /// The size as a float, for cost formulas (exact: a multiple of 1/16).
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / 16.0
    }

    /// Bytes of `elements` elements, rounded up to a whole byte: `elements × bytes` for a
    /// whole size (the same product as before fractional sizes existed), else
    /// ⌈elements × sixteenths / 16⌉.
    pub fn of(self, elements: u64) -> u64 {
        match self.as_whole() {
            Some(b) => elements * b,
            None => {
                let sixteenths = u128::from(elements) * u128::from(self.0);
                u64::try_from(sixteenths.div_ceil(16)).unwrap_or(u64::MAX)
            }
        }
    }
}

impl std::fmt::Debug for DtypeBytes {
    /// `2` for a whole size, `17/16` otherwise.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::fmt::Display for DtypeBytes {
    /// `2` for a whole size, `17/16` otherwise.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.as_whole() {
            Some(b) => write!(f, "{b}"),
            None => write!(f, "{}/16", self.0),
        }
    }
}

impl Serialize for DtypeBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.as_whole() {
            Some(b) => s.serialize_u64(b),
            None => s.serialize_f64(self.as_f64()),
        }
    }
}

impl<'de> Deserialize<'de> for DtypeBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DtypeBytes, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = DtypeBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "bytes per element: a whole number or a multiple of 1/16 (bfp8: 1.0625)",
                )
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<DtypeBytes, E> {
                v.checked_mul(16)
                    .map(DtypeBytes)
                    .ok_or_else(|| E::invalid_value(serde::de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<DtypeBytes, E> {
                match u64::try_from(v) {
                    Ok(v) => self.visit_u64(v),
                    Err(_) => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<DtypeBytes, E> {
                let n = v * 16.0;
                // Below 2^53 every multiple of 1/16 is exact, so `n` is whole only for those.
                if v >= 0.0 && n.fract() == 0.0 && n < 9_007_199_254_740_992.0 {
                    Ok(DtypeBytes(n as u64))
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Float(v), &self))
                }
            }
        }
        d.deserialize_u64(Visitor)
    }
}

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
    /// Tenstorrent's block float 8 (`Bfp8_b`): blocks of 16 elements sharing one 8-bit
    /// exponent, each element a sign and 7-bit mantissa byte: 17 bytes per 16 elements,
    /// 17/16 byte each (a 32 × 32 tile: 1024 + 64 = 1088 bytes). Weights and KV cache only.
    Bfp8,
    /// Tenstorrent's block float 4 (`Bfp4_b`): the same blocks with a sign and 3-bit
    /// mantissa per element: 9 bytes per 16 elements, 9/16 byte each (a 32 × 32 tile:
    /// 512 + 64 = 576 bytes). Weights and KV cache only.
    Bfp4,
}

impl Dtype {
    /// Every dtype, in the order error messages list them.
    pub const ALL: [Dtype; 7] = [
        Dtype::Fp16,
        Dtype::Bf16,
        Dtype::Fp8,
        Dtype::Int8,
        Dtype::Fp32,
        Dtype::Bfp8,
        Dtype::Bfp4,
    ];

    /// Bytes per element, exact (block floats' shared exponents included).
    pub fn bytes(self) -> DtypeBytes {
        match self {
            Dtype::Fp32 => DtypeBytes::whole(4),
            Dtype::Fp16 | Dtype::Bf16 => DtypeBytes::whole(2),
            Dtype::Fp8 | Dtype::Int8 => DtypeBytes::whole(1),
            Dtype::Bfp8 => DtypeBytes::sixteenths(17),
            Dtype::Bfp4 => DtypeBytes::sixteenths(9),
        }
    }

    /// Whether it is a block floating-point type (`bfp8`, `bfp4`): stored for weights and the
    /// KV cache, never computed in (no cost model prices activations in it).
    pub fn is_block(self) -> bool {
        matches!(self, Dtype::Bfp8 | Dtype::Bfp4)
    }

    /// The lower-case name (`fp16`).
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Fp32 => "fp32",
            Dtype::Fp16 => "fp16",
            Dtype::Bf16 => "bf16",
            Dtype::Fp8 => "fp8",
            Dtype::Int8 => "int8",
            Dtype::Bfp8 => "bfp8",
            Dtype::Bfp4 => "bfp4",
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

    /// The inverse of [`Dtype::of_bits`]: the bit count naming it in `wXaY`, if any.
    fn bits(self) -> Option<u32> {
        match self {
            Dtype::Fp32 => Some(32),
            Dtype::Fp16 => Some(16),
            Dtype::Int8 => Some(8),
            Dtype::Bf16 | Dtype::Fp8 | Dtype::Bfp8 | Dtype::Bfp4 => None,
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
    /// The dense FFNs' weights when they differ from the other weights (Tenstorrent's
    /// performance mode: bfp4 MLPs beside bfp8 attention); `None`: `weights`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ffn: Option<Dtype>,
}

/// What `--dtype` accepts, for error messages.
pub const ACCEPTED: &str = "fp16, bf16, fp8, int8, fp32 (all tensors), wXaY (weights X bits, KV \
                            and activations Y bits, e.g. w8a16) or wXkvYaZ, with bits 32, 16 or 8 \
                            (16: fp16, 8: int8), or w=DTYPE,kv=DTYPE,a=DTYPE (e.g. \
                            w=bfp8,kv=bf16,a=bf16; bfp8 and bfp4 for weights and KV only), with \
                            ffn=DTYPE after w= for the dense FFNs' weights (e.g. \
                            w=bfp8,ffn=bfp4,kv=bfp8,a=bf16)";

impl Dtypes {
    /// Every tensor of type `d`.
    pub fn all(d: Dtype) -> Dtypes {
        Dtypes {
            weights: d,
            kv: d,
            activations: d,
            ffn: None,
        }
    }

    /// fp16 everywhere (the default, printed nowhere).
    pub fn is_default(&self) -> bool {
        *self == Dtypes::default()
    }

    /// Parses `fp16`, `bf16`, `fp8`, `int8`, `fp32` (every tensor), the mixed forms `wXaY`
    /// (KV as the activations) and `wXkvYaZ`, with X, Y, Z one of 32, 16, 8, or
    /// `w=DTYPE,kv=DTYPE,a=DTYPE` (what [`Dtypes`]' `Display` prints when the bit forms do
    /// not fit). Block floats (`bfp8`, `bfp4`) are refused for the activations: no cost model
    /// prices compute in them.
    pub fn parse(s: &str) -> Result<Dtypes, String> {
        let d = Dtypes::parse_form(s)?;
        if d.activations.is_block() {
            return Err(format!(
                "--dtype '{s}': activations in {} are not modelled (block floating point is \
                 for weights and the KV cache, e.g. w={},kv=bf16,a=bf16)",
                d.activations, d.activations
            ));
        }
        Ok(d)
    }

    fn parse_form(s: &str) -> Result<Dtypes, String> {
        let bad = || format!("--dtype '{s}': expected {ACCEPTED}");
        if let Some(d) = Dtype::named(s) {
            return Ok(Dtypes::all(d));
        }
        if s.contains('=') {
            let mut parts = s.split(',').peekable();
            let named = |p: Option<&str>, key: &str| {
                p.and_then(|p| p.strip_prefix(key))
                    .and_then(Dtype::named)
                    .ok_or_else(bad)
            };
            let weights = named(parts.next(), "w=")?;
            let ffn = match parts.peek().filter(|p| p.starts_with("ffn=")) {
                Some(_) => Some(named(parts.next(), "ffn=")?),
                None => None,
            };
            let d = Dtypes {
                weights,
                kv: named(parts.next(), "kv=")?,
                activations: named(parts.next(), "a=")?,
                ffn,
            };
            return match parts.next() {
                None => Ok(d),
                Some(_) => Err(bad()),
            };
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
            ffn: None,
        })
    }

    /// The dtypes that appear, each once: what a cost model must price.
    pub fn distinct(&self) -> Vec<Dtype> {
        let mut v = vec![self.weights];
        for d in self.ffn.into_iter().chain([self.kv, self.activations]) {
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
            ffn,
        } = *self;
        if let Some(ffn) = ffn {
            return write!(f, "w={w},ffn={ffn},kv={kv},a={a}");
        }
        if w == kv && kv == a {
            return write!(f, "{w}");
        }
        match (w.bits(), kv.bits(), a.bits()) {
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
        for d in Dtype::ALL.into_iter().filter(|d| !d.is_block()) {
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
        assert_eq!(
            Dtypes::parse("w32a16").unwrap().weights.bytes(),
            DtypeBytes::whole(4)
        );
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
        assert_eq!(Dtypes::parse("w=fp8,kv=bf16,a=bf16"), Ok(odd));
    }

    /// Every triple whose activations are not a block float prints to a string that parses
    /// back to it; bfp weights and KV print in the `w=…,kv=…,a=…` form.
    #[test]
    fn every_accepted_triple_round_trips_through_display() {
        let mut n = 0;
        for weights in Dtype::ALL {
            for kv in Dtype::ALL {
                for activations in Dtype::ALL.into_iter().filter(|d| !d.is_block()) {
                    let d = Dtypes {
                        weights,
                        kv,
                        activations,
                        ffn: None,
                    };
                    assert_eq!(Dtypes::parse(&d.to_string()), Ok(d), "{d}");
                    let ffn = Dtypes {
                        ffn: Some(Dtype::Bfp4),
                        ..d
                    };
                    assert_eq!(Dtypes::parse(&ffn.to_string()), Ok(ffn), "{ffn}");
                    n += 1;
                }
            }
        }
        assert_eq!(n, 7 * 7 * 5);
        let bfp = Dtypes::parse("w=bfp8,kv=bf16,a=bf16").unwrap();
        assert_eq!(
            (bfp.weights, bfp.kv, bfp.activations),
            (Dtype::Bfp8, Dtype::Bf16, Dtype::Bf16)
        );
        assert_eq!(bfp.to_string(), "w=bfp8,kv=bf16,a=bf16");
        let kv4 = Dtypes {
            kv: Dtype::Bfp4,
            ..Dtypes::default()
        };
        assert_eq!(kv4.to_string(), "w=fp16,kv=bfp4,a=fp16");
        // Tenstorrent's performance mode: bfp4 FFNs, the other weights and the KV in bfp8.
        let perf = Dtypes::parse("w=bfp8,ffn=bfp4,kv=bfp8,a=bf16").unwrap();
        assert_eq!(
            (perf.weights, perf.ffn, perf.kv, perf.activations),
            (Dtype::Bfp8, Some(Dtype::Bfp4), Dtype::Bfp8, Dtype::Bf16)
        );
        assert!(Dtypes::parse("w=bfp8,kv=bfp8,ffn=bfp4,a=bf16").is_err());
    }

    #[test]
    fn block_float_activations_are_refused_in_one_line() {
        for (s, d) in [
            ("bfp8", "bfp8"),
            ("bfp4", "bfp4"),
            ("w=bfp8,kv=bfp8,a=bfp8", "bfp8"),
            ("w=fp16,kv=fp16,a=bfp4", "bfp4"),
        ] {
            assert_eq!(
                Dtypes::parse(s).unwrap_err(),
                format!(
                    "--dtype '{s}': activations in {d} are not modelled (block floating point \
                     is for weights and the KV cache, e.g. w={d},kv=bf16,a=bf16)"
                )
            );
        }
    }

    #[test]
    fn block_floats_are_sixteenths_of_a_byte_exactly() {
        // tt-metal's tiles: 32 × 32 elements, 64 blocks of 16 sharing one exponent byte.
        assert_eq!(Dtype::Bfp8.bytes().of(32 * 32), 1024 + 64);
        assert_eq!(Dtype::Bfp4.bytes().of(32 * 32), 512 + 64);
        assert_eq!(Dtype::Bfp8.bytes().of(4096 * 4096), 17_825_792);
        assert_eq!(Dtype::Bfp4.bytes().of(4096 * 4096), 9_437_184);
        // A fraction of a byte rounds up, once per tensor.
        assert_eq!(Dtype::Bfp8.bytes().of(1), 2);
        assert_eq!(Dtype::Bfp4.bytes().of(1), 1);
        assert_eq!(Dtype::Bfp4.bytes().of(17), 10); // 153/16 = 9.5625
        assert_eq!(Dtype::Bfp8.bytes().of(0), 0);
        // Whole sizes are the plain product, and name themselves as integers.
        assert_eq!(Dtype::Fp16.bytes().of(3), 6);
        assert_eq!(Dtype::Fp32.bytes().as_whole(), Some(4));
        assert_eq!(Dtype::Bfp8.bytes().as_whole(), None);
        assert_eq!(Dtype::Bfp8.bytes().as_f64(), 1.0625);
        assert_eq!(Dtype::Bfp4.bytes().as_f64(), 0.5625);
        assert_eq!(format!("{:?}", Dtype::Fp16.bytes()), "2");
        assert_eq!(format!("{:?}", Dtype::Bfp8.bytes()), "17/16");
        // No overflow in the fractional path: u128 inside, saturating.
        assert_eq!(Dtype::Bfp8.bytes().of(u64::MAX), u64::MAX);
    }

    /// Whole sizes are the integers files always held; fractional ones their decimal; a
    /// size that is no multiple of 1/16, or negative, is refused.
    #[test]
    fn sizes_serialise_as_before_and_fractions_as_decimals() {
        let json = |b: DtypeBytes| serde_json::to_string(&b).unwrap();
        assert_eq!(json(DtypeBytes::whole(2)), "2");
        assert_eq!(json(DtypeBytes::whole(0)), "0");
        assert_eq!(json(Dtype::Bfp8.bytes()), "1.0625");
        assert_eq!(json(Dtype::Bfp4.bytes()), "0.5625");
        let parse = |s: &str| serde_json::from_str::<DtypeBytes>(s);
        for d in Dtype::ALL {
            assert_eq!(parse(&json(d.bytes())).unwrap(), d.bytes(), "{d}");
        }
        assert_eq!(parse("2").unwrap(), DtypeBytes::whole(2));
        assert_eq!(parse("2.0").unwrap(), DtypeBytes::whole(2));
        assert_eq!(parse("1.5").unwrap(), DtypeBytes::sixteenths(24));
        for bad in ["-1", "1.1", "-0.5", "\"2\"", "1e300"] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("multiple of 1/16") || e.contains("invalid type"),
                "{bad}: {e}"
            );
        }
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
            "w=bfp8",
            "w=bfp8,kv=bf16",
            "w=bfp8,kv=bf16,a=bf16,",
            "w=bfp8,a=bf16,kv=bf16",
            "kv=bf16,w=bfp8,a=bf16",
            "w=bfp16,kv=bf16,a=bf16",
            "w=bfp8 ,kv=bf16,a=bf16",
            "wbfp8a16",
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
