//! Chip specifications (SPEC §2.2): strict TOML (unknown keys are errors), with the unit of
//! every number in its key. Presets are TOML files shipped in `model/chips/`, so every preset
//! is also an example of the format.

use crate::error::{ModelError, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub mod advice;
mod dram_readers;
mod fidelity;
pub mod keys;
pub mod network;
mod overrides;
mod plausible;
pub mod region;
mod template;
mod whole;

pub use fidelity::{Fidelity, MathFidelity};
pub use overrides::{describe_keys, ChipOverrides};
pub use template::template;

/// A chip: cores with private SRAM, a NoC, HBM, and the cost model that prices operators.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipSpec {
    /// Short name (`ipu-pod4`).
    pub name: String,
    /// One line for tables.
    #[serde(default)]
    pub description: String,
    /// Number of cores.
    #[serde(deserialize_with = "whole::u64")]
    pub cores: u64,
    /// SRAM per core in bytes.
    #[serde(deserialize_with = "whole::u64")]
    pub sram_bytes_per_core: u64,
    /// Core clock in Hz.
    pub clock_hz: f64,
    /// Off-chip memory.
    pub hbm: HbmSpec,
    /// On-chip network.
    pub noc: NocSpec,
    /// How operators are priced.
    pub cost_model: CostModelSpec,
}

/// Off-chip memory (HBM or DRAM).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HbmSpec {
    /// Total bandwidth in bytes/s (decimal units).
    pub bandwidth_bytes_per_s: f64,
    /// Number of controllers sharing the bandwidth equally.
    #[serde(deserialize_with = "whole::u64")]
    pub controllers: u64,
    /// Where the controllers attach.
    pub placement: Placement,
    /// Cores the controllers attach to, for `placement = "explicit"`.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "whole::list"
    )]
    pub controller_cores: Vec<u64>,
    /// Bytes per cycle one DRAM-reader core streams from its bank: with it, some cores may
    /// only read weights for the others ([`ChipSpec::with_dram_readers`], docs/chips.md,
    /// "DRAM-reader cores").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader_bytes_per_cycle: Option<f64>,
    /// Bytes/s the compute cores get when they read DRAM themselves, without reader cores
    /// (at most `bandwidth_bytes_per_s`, the rate with readers beside their banks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleaved_bytes_per_s: Option<f64>,
}

/// Where HBM controllers attach to the NoC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Spread evenly along the mesh edges (evenly over core ids for all-to-all).
    #[cfg_attr(
        feature = "clap",
        value(help = "Spread along the mesh edges (evenly over core ids for all-to-all)")
    )]
    Edges,
    /// One controller at core 0 broadcasting to all: the Elk paper's emulation.
    #[cfg_attr(
        feature = "clap",
        value(help = "One controller at core 0 broadcasting: the Elk paper's emulation")
    )]
    SingleCore,
    /// At the cores listed in `controller_cores` (a chip file's, not a command-line choice).
    #[cfg_attr(feature = "clap", value(skip))]
    Explicit,
}

/// NoC topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Topology {
    /// Every core reaches every other in one hop (IPU exchange).
    #[cfg_attr(
        feature = "clap",
        value(help = "Every core reaches every other in one hop")
    )]
    AllToAll,
    /// 2-D mesh of width × height cores.
    #[cfg_attr(
        feature = "clap",
        value(help = "2-D mesh (needs --width, --height unless the chip has them)")
    )]
    Mesh,
    /// 2-D torus of width × height cores.
    #[cfg_attr(feature = "clap", value(help = "2-D torus"))]
    Torus,
}

/// On-chip network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NocSpec {
    /// Topology.
    pub topology: Topology,
    /// Mesh/torus width in cores.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::some"
    )]
    pub width: Option<u64>,
    /// Mesh/torus height in cores.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "whole::some"
    )]
    pub height: Option<u64>,
    /// Bytes/s one core can inject into the NoC.
    pub injection_bytes_per_s_per_core: f64,
    /// Bytes/s of one link.
    pub link_bytes_per_s: f64,
    /// Latency of one hop in cycles.
    pub hop_latency_cycles: f64,
}

/// The cost model and its parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CostModelSpec {
    /// The IPU-Mk2 model of SPEC §3 (reference constants).
    IpuMk2 {
        /// Cores of one die; a chip with more cores is several dies, and its communication
        /// pays `inter_chip_comm_factor`. A single die (cores ≤ this) pays nothing.
        #[serde(default = "default_cores_per_chip", deserialize_with = "whole::u64")]
        cores_per_chip: u64,
        /// Factor on communication cycles when the chip has more cores than one die.
        #[serde(default = "default_inter_chip_factor")]
        inter_chip_comm_factor: f64,
    },
    /// A generic roofline: peak compute and NoC rate per core plus a sync latency.
    Roofline {
        /// Peak FLOP/s of one core.
        peak_flops_per_s_per_core: f64,
        /// NoC bytes/s of one core for shifts.
        noc_bytes_per_s_per_core: f64,
        /// Cycles of one synchronisation.
        sync_latency_cycles: f64,
        /// Compute throughput with fp32 activations relative to fp16 (`peak_flops…` is
        /// fp16's); 1: fp16's rate.
        #[serde(default = "one")]
        fp32_speedup_x: f64,
        /// The same for bf16.
        #[serde(default = "one")]
        bf16_speedup_x: f64,
        /// The same for fp8.
        #[serde(default = "one")]
        fp8_speedup_x: f64,
        /// The same for int8.
        #[serde(default = "one")]
        int8_speedup_x: f64,
    },
    /// Tenstorrent's Tensix cores: tile products on the matrix engine at a math fidelity,
    /// constants fitted to published microbenchmarks (docs/chips.md, "Tensix cost model").
    Tensix {
        /// The matrix engine's fidelity for every matmul, or `auto`: each by its narrowest
        /// input's dtype ([`crate::cost::fidelity_for`]), as Tenstorrent's model
        /// configurations pick it.
        #[serde(default)]
        math_fidelity: MathFidelity,
        /// Cycles of one 32×32×32 tile product at LoFi on an ideal engine (16).
        #[serde(default = "default_lofi_tile_cycles")]
        lofi_tile_cycles: f64,
        /// Percent of the ideal tile rate a core sustains inside a large matmul (fitted).
        matmul_efficiency_pct: f64,
        /// Input-tile bytes the unpacker feeds the matrix engine per cycle (fitted).
        unpack_bytes_per_cycle: f64,
        /// Cycles of one 32×32 tile of an elementwise, unary, softmax or reduction step.
        vector_tile_cycles: f64,
        /// Fixed cycles of every operator (fitted: launch and first-tile latency).
        op_overhead_cycles: f64,
        /// NoC bytes/s of one core for shifts and reductions.
        noc_bytes_per_s_per_core: f64,
        /// Cycles of one synchronisation between cores.
        sync_latency_cycles: f64,
    },
}

fn default_lofi_tile_cycles() -> f64 {
    16.0
}

fn one() -> f64 {
    1.0
}

fn default_cores_per_chip() -> u64 {
    1472
}

fn default_inter_chip_factor() -> f64 {
    1.25
}

impl CostModelSpec {
    /// The cost model's name.
    pub fn name(&self) -> &'static str {
        match self {
            CostModelSpec::IpuMk2 { .. } => "ipu-mk2",
            CostModelSpec::Roofline { .. } => "roofline",
            CostModelSpec::Tensix { .. } => "tensix",
        }
    }

    /// The roofline's compute throughput with activations of dtype `d` relative to fp16's
    /// (its `<dtype>_speedup_x` key); 1 for fp16 and for the IPU model, and 1 for the block
    /// floats, which no graph computes in (`--dtype` refuses bfp8 and bfp4 activations).
    pub fn speedup(&self, d: crate::dtype::Dtype) -> f64 {
        use crate::dtype::Dtype;
        match (self, d) {
            (
                CostModelSpec::Roofline {
                    fp32_speedup_x,
                    bf16_speedup_x,
                    fp8_speedup_x,
                    int8_speedup_x,
                    ..
                },
                d,
            ) => match d {
                Dtype::Fp16 => 1.0,
                Dtype::Fp32 => *fp32_speedup_x,
                Dtype::Bf16 => *bf16_speedup_x,
                Dtype::Fp8 => *fp8_speedup_x,
                Dtype::Int8 => *int8_speedup_x,
                Dtype::Bfp8 | Dtype::Bfp4 => 1.0,
            },
            (CostModelSpec::IpuMk2 { .. } | CostModelSpec::Tensix { .. }, _) => 1.0,
        }
    }

    /// A Tensix model's values in range: positive rates and cycles, an efficiency in (0, 100] %,
    /// launch and sync cycles ≥ 0; the error names the key.
    fn check_tensix(&self) -> std::result::Result<(), String> {
        let CostModelSpec::Tensix {
            lofi_tile_cycles,
            matmul_efficiency_pct,
            unpack_bytes_per_cycle,
            vector_tile_cycles,
            op_overhead_cycles,
            noc_bytes_per_s_per_core,
            sync_latency_cycles,
            ..
        } = self
        else {
            return Ok(());
        };
        let positive = [
            ("lofi_tile_cycles", *lofi_tile_cycles),
            ("unpack_bytes_per_cycle", *unpack_bytes_per_cycle),
            ("vector_tile_cycles", *vector_tile_cycles),
            ("noc_bytes_per_s_per_core", *noc_bytes_per_s_per_core),
        ];
        let at_least_zero = [
            ("op_overhead_cycles", *op_overhead_cycles),
            ("sync_latency_cycles", *sync_latency_cycles),
        ];
        if let Some((k, v)) = positive.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
            return Err(format!(
                "key 'cost_model.{k}': must be a positive number, got {v}"
            ));
        }
        if let Some((k, v)) = at_least_zero
            .iter()
            .find(|(_, v)| !(v.is_finite() && *v >= 0.0))
        {
            return Err(format!("key 'cost_model.{k}': must be ≥ 0, got {v}"));
        }
        if !(*matmul_efficiency_pct > 0.0 && *matmul_efficiency_pct <= 100.0) {
            return Err(format!(
                "key 'cost_model.matmul_efficiency_pct': must be in (0, 100], got \
                 {matmul_efficiency_pct}"
            ));
        }
        Ok(())
    }

    /// The factor on communication cycles for a chip of `cores`: the IPU model's inter-chip
    /// penalty when `cores` exceeds one die, 1 otherwise.
    pub fn comm_factor(&self, cores: u64) -> f64 {
        match self {
            CostModelSpec::IpuMk2 {
                cores_per_chip,
                inter_chip_comm_factor,
            } if cores > *cores_per_chip => *inter_chip_comm_factor,
            _ => 1.0,
        }
    }
}

fn unknown_chip(name: &str) -> ModelError {
    ModelError::Unknown {
        what: "chip",
        name: name.into(),
        known: PRESETS
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A chip as read from a file or preset, with what `chips show` says about it.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedChip {
    /// The chip.
    pub spec: ChipSpec,
    /// Keys absent from the file that took their default ([`keys::KEYS`] paths).
    pub defaulted: Vec<&'static str>,
    /// Implausible values ([`ChipSpec::warnings`]), one line each.
    pub warnings: Vec<String>,
}

impl LoadedChip {
    /// A preset name, or else a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<LoadedChip> {
        if let Some((name, text)) = PRESETS.iter().find(|(n, _)| *n == name_or_path) {
            return LoadedChip::from_toml_str(&format!("preset {name}"), text);
        }
        let path = Path::new(name_or_path);
        if !path.exists() && !name_or_path.ends_with(".toml") {
            return Err(unknown_chip(name_or_path));
        }
        let text = crate::error::read_file(path)?;
        LoadedChip::from_toml_str(name_or_path, &text)
    }

    /// The chip as TOML, each key that took its default marked `# (default)`.
    pub fn to_toml_marked(&self) -> String {
        keys::annotate(&keys::readable_floats(&self.spec.to_toml()), false, |k| {
            self.defaulted
                .contains(&k.path)
                .then(|| "(default)".to_string())
        })
    }

    /// Parses and validates a chip TOML; `file` names it in errors. Every missing key is
    /// reported at once.
    pub fn from_toml_str(file: &str, text: &str) -> Result<LoadedChip> {
        let bad = |detail: String| ModelError::Chip {
            file: file.into(),
            detail,
        };
        let doc = text.parse::<toml::Table>();
        let spec: ChipSpec = match toml::from_str(text) {
            Ok(spec) => spec,
            Err(e) => {
                let missing = doc.as_ref().map(keys::missing).unwrap_or_default();
                if e.message().starts_with("missing field") && !missing.is_empty() {
                    let s = if missing.len() == 1 { "" } else { "s" };
                    return Err(bad(format!(
                        "missing key{s}: {} (every key: docs/chips.md or `elk-opt chips template`)",
                        missing.join(", ")
                    )));
                }
                return Err(bad(crate::error::toml_error_line(text, &e)));
            }
        };
        spec.validate(file)?;
        Ok(LoadedChip {
            defaulted: doc.as_ref().map(keys::defaulted).unwrap_or_default(),
            warnings: spec.warnings(file),
            spec,
        })
    }
}

/// The preset chips: (name, TOML text).
pub const PRESETS: [(&str, &str); 6] = [
    ("ipu-mk2", include_str!("../chips/ipu-mk2.toml")),
    ("ipu-pod4", include_str!("../chips/ipu-pod4.toml")),
    (
        "tt-blackhole-like",
        include_str!("../chips/tt-blackhole-like.toml"),
    ),
    ("sn40l-like", include_str!("../chips/sn40l-like.toml")),
    ("wormhole-n150", include_str!("../chips/wormhole-n150.toml")),
    (
        "blackhole-p150",
        include_str!("../chips/blackhole-p150.toml"),
    ),
];

impl ChipSpec {
    /// A preset by name.
    pub fn preset(name: &str) -> Result<ChipSpec> {
        let (_, text) = PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| unknown_chip(name))?;
        ChipSpec::from_toml_str(&format!("preset {name}"), text)
    }

    /// A preset name, or else a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<ChipSpec> {
        LoadedChip::load(name_or_path).map(|c| c.spec)
    }

    /// Parses and validates a chip TOML; `file` names it in errors.
    pub fn from_toml_str(file: &str, text: &str) -> Result<ChipSpec> {
        LoadedChip::from_toml_str(file, text).map(|c| c.spec)
    }

    /// Checks what TOML parsing cannot: positive rates and counts, mesh dimensions that
    /// multiply to the core count, controller placement; `file` names the chip in errors.
    pub fn validate(&self, file: &str) -> Result<()> {
        self.check().map_err(|detail| ModelError::Chip {
            file: file.into(),
            detail,
        })
    }

    fn check(&self) -> std::result::Result<(), String> {
        let positive = [
            ("cores", self.cores as f64),
            ("sram_bytes_per_core", self.sram_bytes_per_core as f64),
            ("clock_hz", self.clock_hz),
            ("hbm.bandwidth_bytes_per_s", self.hbm.bandwidth_bytes_per_s),
            ("hbm.controllers", self.hbm.controllers as f64),
            (
                "noc.injection_bytes_per_s_per_core",
                self.noc.injection_bytes_per_s_per_core,
            ),
            ("noc.link_bytes_per_s", self.noc.link_bytes_per_s),
        ];
        for (key, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("key '{key}': must be a positive number, got {v}"));
            }
        }
        if !(self.noc.hop_latency_cycles.is_finite() && self.noc.hop_latency_cycles >= 0.0) {
            return Err("key 'noc.hop_latency_cycles': must be ≥ 0".into());
        }
        match (self.noc.topology, self.noc.width, self.noc.height) {
            (Topology::AllToAll, None, None) => {}
            (Topology::AllToAll, _, _) => {
                return Err("key 'noc.width'/'noc.height': only for mesh and torus".into())
            }
            (_, Some(w), Some(h)) if w * h == self.cores => {}
            (_, Some(w), Some(h)) => {
                return Err(format!(
                    "key 'noc.width'/'noc.height': {w} x {h} = {} but cores = {}",
                    w * h,
                    self.cores
                ))
            }
            _ => return Err("key 'noc.width'/'noc.height': required for mesh and torus".into()),
        }
        match self.hbm.placement {
            Placement::Explicit => {
                if self.hbm.controller_cores.len() as u64 != self.hbm.controllers {
                    return Err(format!(
                        "key 'hbm.controller_cores': lists {} cores for {} controllers",
                        self.hbm.controller_cores.len(),
                        self.hbm.controllers
                    ));
                }
                if let Some(c) = self.hbm.controller_cores.iter().find(|&&c| c >= self.cores) {
                    return Err(format!("key 'hbm.controller_cores': core {c} ≥ cores"));
                }
            }
            Placement::SingleCore if self.hbm.controllers != 1 => {
                return Err("key 'hbm.controllers': single-core placement needs 1".into())
            }
            _ if !self.hbm.controller_cores.is_empty() => {
                return Err("key 'hbm.controller_cores': only with placement = \"explicit\"".into())
            }
            _ => {}
        }
        if let CostModelSpec::Roofline {
            peak_flops_per_s_per_core,
            noc_bytes_per_s_per_core,
            sync_latency_cycles,
            ..
        } = &self.cost_model
        {
            for d in crate::dtype::Dtype::ALL {
                let s = self.cost_model.speedup(d);
                if !(s.is_finite() && s > 0.0) {
                    return Err(format!(
                        "key 'cost_model.{d}_speedup_x': must be a positive number, got {s}"
                    ));
                }
            }
            if [*peak_flops_per_s_per_core, *noc_bytes_per_s_per_core]
                .iter()
                .any(|v| v.is_nan() || *v <= 0.0)
            {
                return Err("key 'cost_model': roofline rates must be positive".into());
            }
            if sync_latency_cycles.is_nan() || *sync_latency_cycles < 0.0 {
                return Err("key 'cost_model.sync_latency_cycles': must be ≥ 0".into());
            }
        }
        if let CostModelSpec::Tensix { .. } = &self.cost_model {
            self.cost_model.check_tensix()?;
        }
        self.check_dram_readers()?;
        if let CostModelSpec::IpuMk2 {
            cores_per_chip,
            inter_chip_comm_factor,
        } = &self.cost_model
        {
            if *cores_per_chip == 0 {
                return Err("key 'cost_model.cores_per_chip': must be ≥ 1".into());
            }
            if !(inter_chip_comm_factor.is_finite() && *inter_chip_comm_factor > 0.0) {
                return Err(format!(
                    "key 'cost_model.inter_chip_comm_factor': must be a positive number, got \
                     {inter_chip_comm_factor}"
                ));
            }
        }
        Ok(())
    }

    /// Total SRAM in bytes.
    pub fn total_sram_bytes(&self) -> u64 {
        self.cores * self.sram_bytes_per_core
    }

    /// Aggregate NoC injection bandwidth in bytes/s.
    pub fn noc_bytes_per_s(&self) -> f64 {
        self.noc.injection_bytes_per_s_per_core * self.cores as f64
    }

    /// The spec as TOML (round-trips through [`ChipSpec::from_toml_str`]).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_round_trip() {
        for (name, _) in PRESETS {
            let chip = ChipSpec::preset(name).unwrap();
            assert_eq!(chip.name, name);
            let again = ChipSpec::from_toml_str("rt", &chip.to_toml()).unwrap();
            assert_eq!(again, chip);
        }
        let pod = ChipSpec::preset("ipu-pod4").unwrap();
        assert_eq!(pod.cores, 5888);
        assert_eq!(pod.sram_bytes_per_core, 624 * 1024);
    }

    #[test]
    fn unknown_key_and_bad_value_name_the_key() {
        let text = ChipSpec::preset("ipu-mk2")
            .unwrap()
            .to_toml()
            .replace("cores = 1472", "coress = 1472");
        let err = ChipSpec::from_toml_str("x.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x.toml: line "), "{err}");
        assert!(err.contains("coress"), "{err}");
        let text = include_str!("../chips/ipu-mk2.toml")
            .replace("clock_hz = 1.325e9", "clock_hz = \"fast\"");
        let err = ChipSpec::from_toml_str("y.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("key 'clock_hz'"), "{err}");
        let text = include_str!("../chips/ipu-mk2.toml")
            .replace("kind = \"ipu-mk2\"", "kind = \"ipu-mk2\"\nfoo = 1");
        let err = ChipSpec::from_toml_str("z.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("foo"), "{err}");
    }

    #[test]
    fn every_missing_key_is_reported_at_once() {
        // The reviewer's first try: the keys they knew, nothing else.
        let text = "name = \"mine\"\ncores = 2048\nsram_bytes_per_core = 1048576\n\
                    clock_hz = 1.5e9\n[hbm]\nbandwidth_bytes_per_s = 8e12\n\
                    [noc]\ntopology = \"mesh\"\nlink_bytes_per_s = 64e9\n";
        let err = ChipSpec::from_toml_str("mine.toml", text)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "mine.toml: missing keys: hbm.controllers, hbm.placement, noc.width, noc.height, \
             noc.injection_bytes_per_s_per_core, noc.hop_latency_cycles, table [cost_model] \
             with kind (every key: docs/chips.md or `elk-opt chips template`)"
        );
        // A missing table is not blamed on line 1's key.
        let text = include_str!("../chips/sn40l-like.toml");
        let cut = &text[..text.find("[cost_model]").unwrap()];
        let err = ChipSpec::from_toml_str("m.toml", cut)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "m.toml: missing key: table [cost_model] with kind (every key: docs/chips.md or \
             `elk-opt chips template`)"
        );
        // The keys of the kind given.
        let text = text.replace("sync_latency_cycles = 100.0\n", "");
        let text = text.replace(
            "peak_flops_per_s_per_core = 613.0e9 # ~638 TFLOP/s bf16 over 1,040 cores\n",
            "",
        );
        let err = ChipSpec::from_toml_str("r.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "r.toml: missing keys: cost_model.peak_flops_per_s_per_core, \
                 cost_model.sync_latency_cycles ("
            ),
            "{err}"
        );
    }

    #[test]
    fn integer_keys_take_whole_floats_and_refuse_fractions() {
        let text = include_str!("../chips/sn40l-like.toml")
            .replace(
                "sram_bytes_per_core = 524288",
                "sram_bytes_per_core = 1.0e6",
            )
            .replace("cores = 1040", "cores = 1.04e3")
            .replace("width = 40", "width = 40.0")
            .replace("controllers = 8", "controllers = 8.0");
        let chip = ChipSpec::from_toml_str("f.toml", &text).unwrap();
        assert_eq!(
            (
                chip.sram_bytes_per_core,
                chip.cores,
                chip.noc.width,
                chip.hbm.controllers
            ),
            (1_000_000, 1040, Some(40), 8)
        );
        let text = include_str!("../chips/sn40l-like.toml")
            .replace("controllers = 8", "controllers = 1.5e0");
        let err = ChipSpec::from_toml_str("f.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("f.toml: line 11: key 'controllers': 1.5 is not a whole number"),
            "{err}"
        );
        let text = include_str!("../chips/ipu-mk2.toml")
            .replace("cores_per_chip = 1472", "cores_per_chip = 14.5");
        let err = ChipSpec::from_toml_str("c.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("14.5 is not a whole number"), "{err}");
    }

    #[test]
    fn the_inter_chip_penalty_is_a_visible_key_and_one_die_pays_none() {
        let mk2 = ChipSpec::preset("ipu-mk2").unwrap();
        let pod = ChipSpec::preset("ipu-pod4").unwrap();
        assert_eq!(mk2.cost_model.comm_factor(mk2.cores), 1.0);
        assert_eq!(pod.cost_model.comm_factor(pod.cores), 1.25);
        // A single die of 2,048 cores, written as one: no penalty.
        let text = include_str!("../chips/ipu-mk2.toml")
            .replace("cores = 1472", "cores = 2048")
            .replace("cores_per_chip = 1472", "cores_per_chip = 2048");
        let one_die = ChipSpec::from_toml_str("d.toml", &text).unwrap();
        assert_eq!(one_die.cost_model.comm_factor(one_die.cores), 1.0);
        // Left out, the defaults apply and are reported as such.
        let text = include_str!("../chips/ipu-mk2.toml")
            .replace("cores = 1472", "cores = 2048")
            .replace("cores_per_chip = 1472", "")
            .replace("inter_chip_comm_factor = 1.25", "");
        let loaded = LoadedChip::from_toml_str("d.toml", &text).unwrap();
        assert_eq!(
            loaded.defaulted,
            [
                "cost_model.cores_per_chip",
                "cost_model.inter_chip_comm_factor"
            ]
        );
        assert_eq!(loaded.spec.cost_model.comm_factor(2048), 1.25);
        let marked = loaded.to_toml_marked();
        assert!(
            marked.contains("cores_per_chip = 1472  # (default)\n"),
            "{marked}"
        );
        assert!(
            marked.contains("inter_chip_comm_factor = 1.25  # (default)\n"),
            "{marked}"
        );
        assert!(marked.contains("\ncores = 2048\n"), "{marked}");
        assert_eq!(ChipSpec::from_toml_str("rt", &marked).unwrap(), loaded.spec);
    }

    #[test]
    fn mesh_dimensions_must_match_cores() {
        let text = include_str!("../chips/sn40l-like.toml").replace("width = 40", "width = 41");
        let err = ChipSpec::from_toml_str("m.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("noc.width"), "{err}");
    }
}
