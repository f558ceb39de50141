//! Chip specifications (SPEC §2.2): strict TOML (unknown keys are errors), with the unit of
//! every number in its key. Presets are TOML files shipped in `model/chips/`, so every preset
//! is also an example of the format.

use crate::error::{ModelError, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

mod overrides;

pub use overrides::ChipOverrides;

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
    pub cores: u64,
    /// SRAM per core in bytes.
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
    pub controllers: u64,
    /// Where the controllers attach.
    pub placement: Placement,
    /// Cores the controllers attach to, for `placement = "explicit"`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub controller_cores: Vec<u64>,
}

/// Where HBM controllers attach to the NoC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Spread evenly along the mesh edges (evenly over core ids for all-to-all).
    Edges,
    /// One controller at core 0 broadcasting to all: the Elk paper's emulation.
    SingleCore,
    /// At the cores listed in `controller_cores`.
    Explicit,
}

/// NoC topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topology {
    /// Every core reaches every other in one hop (IPU exchange).
    AllToAll,
    /// 2-D mesh of width × height cores.
    Mesh,
    /// 2-D torus of width × height cores.
    Torus,
}

/// On-chip network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NocSpec {
    /// Topology.
    pub topology: Topology,
    /// Mesh/torus width in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u64>,
    /// Mesh/torus height in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
        /// Cores of one chip; communication above this is inter-chip.
        #[serde(default = "default_cores_per_chip")]
        cores_per_chip: u64,
        /// Factor on communication cycles when the chip has more cores than one chip.
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
    },
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
        }
    }
}

/// The preset chips: (name, TOML text).
pub const PRESETS: [(&str, &str); 4] = [
    ("ipu-mk2", include_str!("../chips/ipu-mk2.toml")),
    ("ipu-pod4", include_str!("../chips/ipu-pod4.toml")),
    (
        "tt-blackhole-like",
        include_str!("../chips/tt-blackhole-like.toml"),
    ),
    ("sn40l-like", include_str!("../chips/sn40l-like.toml")),
];

impl ChipSpec {
    /// A preset by name.
    pub fn preset(name: &str) -> Result<ChipSpec> {
        let (_, text) =
            PRESETS
                .iter()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| ModelError::Unknown {
                    what: "chip",
                    name: name.into(),
                    known: PRESETS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
        ChipSpec::from_toml_str(&format!("preset {name}"), text)
    }

    /// A preset name, or else a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<ChipSpec> {
        if PRESETS.iter().any(|(n, _)| *n == name_or_path) {
            return ChipSpec::preset(name_or_path);
        }
        let path = Path::new(name_or_path);
        if !path.exists() && !name_or_path.ends_with(".toml") {
            return ChipSpec::preset(name_or_path);
        }
        let text = crate::error::read_file(path)?;
        ChipSpec::from_toml_str(name_or_path, &text)
    }

    /// Parses and validates a chip TOML; `file` names it in errors.
    pub fn from_toml_str(file: &str, text: &str) -> Result<ChipSpec> {
        let chip: ChipSpec = toml::from_str(text).map_err(|e| ModelError::Chip {
            file: file.into(),
            detail: crate::error::toml_error_line(text, &e),
        })?;
        chip.validate(file)?;
        Ok(chip)
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
        } = &self.cost_model
        {
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
    fn mesh_dimensions_must_match_cores() {
        let text = include_str!("../chips/sn40l-like.toml").replace("width = 40", "width = 41");
        let err = ChipSpec::from_toml_str("m.toml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("noc.width"), "{err}");
    }
}
