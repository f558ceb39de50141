//! Overriding a few fields of a chip (the detailed replay's flags, a sweep cell's variant,
//! `--hbm-tbps`) and validating the result as strictly as a TOML file.

use super::{ChipSpec, Placement, Topology};
use crate::error::Result;

/// What may be overridden on a chip; `None` keeps the chip's value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChipOverrides {
    /// Names the overridden chip in errors, in place of a file name
    /// (`(--chip with overrides)`).
    pub file: String,
    /// HBM bandwidth in TB/s (decimal).
    pub hbm_tbps: Option<f64>,
    /// Number of cores.
    pub cores: Option<u64>,
    /// NoC topology; `AllToAll` drops the mesh dimensions (a `width`/`height` given here is
    /// still applied, and then rejected).
    pub topology: Option<Topology>,
    /// Mesh/torus width in cores.
    pub width: Option<u64>,
    /// Mesh/torus height in cores.
    pub height: Option<u64>,
    /// Number of HBM controllers.
    pub controllers: Option<u64>,
    /// Controller placement.
    pub placement: Option<Placement>,
}

impl ChipSpec {
    /// The chip with `overrides` applied, validated like a TOML file (errors name
    /// `overrides.file`). Explicit controller cores are dropped, since they would not fit
    /// the overridden chip: an `explicit` placement becomes `edges`.
    pub fn with_overrides(mut self, overrides: &ChipOverrides) -> Result<ChipSpec> {
        if let Some(tbps) = overrides.hbm_tbps {
            self.hbm.bandwidth_bytes_per_s = tbps * 1e12;
        }
        if let Some(c) = overrides.cores {
            self.cores = c;
        }
        if let Some(t) = overrides.topology {
            self.noc.topology = t;
            if t == Topology::AllToAll {
                self.noc.width = None;
                self.noc.height = None;
            }
        }
        if overrides.width.is_some() {
            self.noc.width = overrides.width;
        }
        if overrides.height.is_some() {
            self.noc.height = overrides.height;
        }
        if let Some(c) = overrides.controllers {
            self.hbm.controllers = c;
        }
        if let Some(p) = overrides.placement {
            self.hbm.placement = p;
        }
        self.hbm.controller_cores.clear();
        if self.hbm.placement == Placement::Explicit {
            self.hbm.placement = Placement::Edges;
        }
        self.validate(&overrides.file)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_apply_and_match_a_toml_round_trip() {
        let overrides = ChipOverrides {
            file: "(test)".into(),
            hbm_tbps: Some(8.0),
            topology: Some(Topology::Mesh),
            width: Some(92),
            height: Some(64),
            controllers: Some(4),
            placement: Some(Placement::Edges),
            ..ChipOverrides::default()
        };
        let chip = ChipSpec::preset("ipu-pod4")
            .unwrap()
            .with_overrides(&overrides)
            .unwrap();
        assert_eq!(chip.hbm.bandwidth_bytes_per_s, 8e12);
        assert_eq!(chip.noc.topology, Topology::Mesh);
        assert_eq!((chip.noc.width, chip.noc.height), (Some(92), Some(64)));
        assert_eq!(chip.hbm.controllers, 4);
        let again = ChipSpec::from_toml_str("rt", &chip.to_toml()).unwrap();
        assert_eq!(again, chip);
        let flat = ChipSpec::preset("sn40l-like")
            .unwrap()
            .with_overrides(&ChipOverrides {
                topology: Some(Topology::AllToAll),
                ..ChipOverrides::default()
            })
            .unwrap();
        assert_eq!((flat.noc.width, flat.noc.height), (None, None));
    }

    #[test]
    fn overrides_that_break_the_chip_are_rejected_with_its_message() {
        let base = ChipSpec::preset("ipu-pod4").unwrap();
        let err = base
            .clone()
            .with_overrides(&ChipOverrides {
                file: "(--chip with overrides)".into(),
                topology: Some(Topology::Mesh),
                width: Some(10),
                height: Some(10),
                ..ChipOverrides::default()
            })
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "(--chip with overrides): key 'noc.width'/'noc.height': 10 x 10 = 100 but cores = 5888"
        );
        let err = base
            .with_overrides(&ChipOverrides {
                file: "chip of cell 3".into(),
                hbm_tbps: Some(-1.0),
                ..ChipOverrides::default()
            })
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("chip of cell 3: key 'hbm.bandwidth_bytes_per_s': must be a positive"),
            "{err}"
        );
    }
}
