//! An instance file: the stage model ([`Instance`]) and, optionally, the chip it was built
//! for ([`ChipRef`]). The chip is provenance, not part of the stage model: a schedule is
//! valid for the stage model whatever chip it came from, so [`Instance::content_hash`] leaves
//! it out; the detailed replay reads it to pick its chip.

use super::{Instance, InstanceOp, LoadOrder, NocRow};
use crate::error::{Result, StageError};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// The chip an instance was built for: `"chip": {"name": …, "hash": …}` in the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipRef {
    /// The chip's name (a preset's, or the `name` key of a chip TOML).
    pub name: String,
    /// The chip TOML it was read from, as given on the command line (absent for a preset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The HBM bandwidth override (`--hbm-tbps`) applied to it, TB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hbm_tbps: Option<f64>,
    /// `fnv1a64:…` of the chip as used (overrides applied; its name and description left
    /// out).
    pub hash: String,
}

/// An instance file's content.
#[derive(Clone, Debug, PartialEq)]
pub struct InstanceFile {
    /// The stage model.
    pub instance: Instance,
    /// The chip it was built for, when the file records it.
    pub chip: Option<ChipRef>,
}

/// The file layout: [`Instance`]'s fields with `chip` before `ops` (so it is near the top
/// of the file).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Repr {
    format: String,
    name: String,
    sram_bytes: Bytes,
    clock_hz: f64,
    load_order: LoadOrder,
    preload_window: Option<u32>,
    #[serde(default)]
    noc_row: NocRow,
    #[serde(default)]
    chip: Option<ChipRef>,
    ops: Vec<InstanceOp>,
}

#[derive(Serialize)]
struct ReprRef<'a> {
    format: &'a str,
    name: &'a str,
    sram_bytes: Bytes,
    clock_hz: f64,
    load_order: LoadOrder,
    preload_window: Option<u32>,
    #[serde(skip_serializing_if = "NocRow::is_spec")]
    noc_row: NocRow,
    #[serde(skip_serializing_if = "Option::is_none")]
    chip: Option<&'a ChipRef>,
    ops: &'a [InstanceOp],
}

impl InstanceFile {
    /// Parses an instance file's text; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<InstanceFile> {
        let r: Repr = serde_json::from_str(text).map_err(|e| StageError::Json {
            file: file.into(),
            detail: e.to_string(),
        })?;
        let instance = Instance {
            format: r.format,
            name: r.name,
            sram_bytes: r.sram_bytes,
            clock_hz: r.clock_hz,
            load_order: r.load_order,
            preload_window: r.preload_window,
            noc_row: r.noc_row,
            ops: r.ops,
        };
        instance.check(file)?;
        if let Some(c) = &r.chip {
            c.check(file)?;
        }
        Ok(InstanceFile {
            instance,
            chip: r.chip,
        })
    }

    /// Reads an instance file.
    pub fn read(path: &std::path::Path) -> Result<InstanceFile> {
        let text = crate::error::read_file(path)?;
        InstanceFile::from_json(&path.display().to_string(), &text)
    }

    /// The file text (compact JSON, shortest-exact f64); without a chip, the same bytes as
    /// [`Instance::to_json`].
    pub fn to_json(&self) -> Result<String> {
        // Destructured so that a new field of `Instance` cannot be forgotten here.
        let Instance {
            format,
            name,
            sram_bytes,
            clock_hz,
            load_order,
            preload_window,
            noc_row,
            ops,
        } = &self.instance;
        let r = ReprRef {
            format,
            name,
            sram_bytes: *sram_bytes,
            clock_hz: *clock_hz,
            load_order: *load_order,
            preload_window: *preload_window,
            noc_row: *noc_row,
            chip: self.chip.as_ref(),
            ops,
        };
        serde_json::to_string(&r).map_err(|e| StageError::Json {
            file: name.clone(),
            detail: format!("cannot encode: {e}"),
        })
    }
}

impl ChipRef {
    /// Checks the record's form; `file` names the instance file in errors.
    pub fn check(&self, file: &str) -> Result<()> {
        let bad = |detail: String| StageError::Rule {
            file: file.into(),
            what: "instance",
            detail,
        };
        if !crate::hash::is_well_formed(&self.hash) {
            return Err(bad(format!(
                "chip.hash '{}': expected {}<16 hex digits>",
                self.hash,
                crate::hash::PREFIX
            )));
        }
        if let Some(t) = self.hbm_tbps {
            if !(t.is_finite() && t > 0.0) {
                return Err(bad(format!("chip.hbm_tbps {t}: must be positive")));
            }
        }
        Ok(())
    }

    /// The chip's name with its override, as instance names and headers print it:
    /// `ipu-pod4 @ 8 TB/s HBM`.
    pub fn label(&self) -> String {
        label(&self.name, self.hbm_tbps)
    }
}

/// `name`, and ` @ T TB/s HBM` when the HBM bandwidth was overridden to `hbm_tbps`.
pub fn label(name: &str, hbm_tbps: Option<f64>) -> String {
    match hbm_tbps {
        Some(t) => format!("{name} @ {t} TB/s HBM"),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instance::OpOption;
    use crate::units::Cycles;

    fn inst() -> Instance {
        Instance::builder("t", Bytes(10), 1e9)
            .op("a", Cycles(5.0), vec![OpOption::new(1, 2, 10.0, 0.0, 0.0)])
            .build()
            .unwrap()
    }

    #[test]
    fn a_file_without_a_chip_is_the_instance_alone() {
        let f = InstanceFile {
            instance: inst(),
            chip: None,
        };
        assert_eq!(f.to_json().unwrap(), inst().to_json().unwrap());
        let again = InstanceFile::from_json("t", &f.to_json().unwrap()).unwrap();
        assert_eq!(again, f);
    }

    #[test]
    fn the_chip_round_trips_and_is_checked() {
        let chip = ChipRef {
            name: "my2048".into(),
            file: Some("chips/my.toml".into()),
            hbm_tbps: Some(8.0),
            hash: "fnv1a64:0123456789abcdef".into(),
        };
        let f = InstanceFile {
            instance: inst(),
            chip: Some(chip.clone()),
        };
        let text = f.to_json().unwrap();
        assert!(text.contains(r#""preload_window":null,"chip":{"name":"my2048","#));
        assert_eq!(InstanceFile::from_json("t", &text).unwrap(), f);
        // The instance alone reads the file too, and the chip does not change the hash.
        let alone = Instance::from_json("t", &text).unwrap();
        assert_eq!(alone.content_hash(), inst().content_hash());
        assert_eq!(chip.label(), "my2048 @ 8 TB/s HBM");
        let bad = text.replace("0123456789abcdef", "xyz");
        let err = InstanceFile::from_json("f.json", &bad)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "f.json: invalid instance: chip.hash 'fnv1a64:xyz': expected fnv1a64:<16 hex digits>"
        );
        let unknown = text.replace(r#""hbm_tbps""#, r#""hbm""#);
        let err = InstanceFile::from_json("f.json", &unknown)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `hbm`"), "{err}");
    }
}
