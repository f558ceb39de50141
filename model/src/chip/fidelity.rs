//! The math fidelity of a Tensix core's matrix engine, as a chip file names it
//! (`cost_model.math_fidelity`).

/// The matrix engine's precision: how many passes over the mantissa bits one product takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fidelity {
    /// One pass (bfp4 weights, Tenstorrent's choice for MLPs in performance mode).
    LoFi,
    /// Two passes (bfp8 weights).
    HiFi2,
    /// Three passes.
    HiFi3,
    /// Four passes (bf16 and wider: full precision).
    HiFi4,
}

impl Fidelity {
    /// Passes of the matrix engine per product.
    pub fn passes(self) -> f64 {
        match self {
            Fidelity::LoFi => 1.0,
            Fidelity::HiFi2 => 2.0,
            Fidelity::HiFi3 => 3.0,
            Fidelity::HiFi4 => 4.0,
        }
    }

    /// The lower-case name (`hifi2`), as chip files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Fidelity::LoFi => "lofi",
            Fidelity::HiFi2 => "hifi2",
            Fidelity::HiFi3 => "hifi3",
            Fidelity::HiFi4 => "hifi4",
        }
    }
}

impl std::fmt::Display for Fidelity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a chip file asks of the fidelity: one for every matmul, or `auto`, each matmul's by
/// its narrowest input ([`crate::cost::fidelity_for`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum MathFidelity {
    /// Each matmul by its narrowest input, as Tenstorrent's model configurations pick it.
    #[default]
    Auto,
    /// See [`Fidelity::LoFi`].
    LoFi,
    /// See [`Fidelity::HiFi2`].
    HiFi2,
    /// See [`Fidelity::HiFi3`].
    HiFi3,
    /// See [`Fidelity::HiFi4`].
    HiFi4,
}

impl MathFidelity {
    /// The fidelity of every matmul, or `None` for `auto`.
    pub fn fixed(self) -> Option<Fidelity> {
        match self {
            MathFidelity::Auto => None,
            MathFidelity::LoFi => Some(Fidelity::LoFi),
            MathFidelity::HiFi2 => Some(Fidelity::HiFi2),
            MathFidelity::HiFi3 => Some(Fidelity::HiFi3),
            MathFidelity::HiFi4 => Some(Fidelity::HiFi4),
        }
    }
}
