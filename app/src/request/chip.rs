//! The chip of a request: a preset or a chip TOML file, with its overrides.

use super::error::{RequestError, Result};
use super::notice::Notice;
use crate::compare::ChipLabel;
use elk_model::chip::{describe_keys, ChipOverrides, ChipSpec, LoadedChip};
use elk_model::provenance::chip_ref;
use elk_stage::instance::ChipRef;
use serde::Serialize;

/// The chip of the built-in default, and of replays of instances that record none.
pub const DEFAULT_CHIP: &str = "ipu-pod4";

/// A chip as asked for: `--chip` with `--hbm-tbps`, and (from Python's `Chip(**keys)`) any
/// key of a chip file set as a TOML file would set it.
#[derive(Clone, Debug, PartialEq)]
pub struct ChipRequest {
    /// A preset's name or a chip TOML file's path, as given.
    pub given: String,
    /// `--hbm-tbps`: the HBM bandwidth, TB/s (decimal).
    pub hbm_tbps: Option<f64>,
    /// Other keys of a chip file, in the order given (`sram_bytes_per_core`,
    /// `noc.link_bytes_per_s`, … as [`elk_model::chip::keys::resolve`] names them).
    pub keys: Vec<(String, toml::Value)>,
    /// `--dram-readers K|auto`: cores that only stream weights from DRAM
    /// ([`ChipSpec::with_dram_readers`]); `None` is none.
    pub dram_readers: Option<DramReaders>,
}

/// `--dram-readers`: how many cores only stream weights from DRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DramReaders {
    /// This many.
    Count(u64),
    /// Every count the chip offers ([`ChipSpec::dram_reader_choices`]): only `compare` tries
    /// them ([`crate::compare::run::run_reader_counts`]); a chip resolved for one instance refuses it.
    Auto,
}

impl DramReaders {
    /// The count, if one is given.
    pub fn count(self) -> Option<u64> {
        match self {
            DramReaders::Count(k) => Some(k),
            DramReaders::Auto => None,
        }
    }
}

impl Default for ChipRequest {
    /// [`DEFAULT_CHIP`] as it is.
    fn default() -> Self {
        ChipRequest::named(DEFAULT_CHIP)
    }
}

/// A chip as resolved: the spec with the overrides applied and what instances record of it.
#[derive(Clone, Debug)]
pub struct ChosenChip {
    /// The chip as used.
    pub spec: ChipSpec,
    /// What an instance built on it records (name, file, HBM override, hash).
    pub record: ChipRef,
}

impl ChipRequest {
    /// A preset or file as it is.
    pub fn named(given: &str) -> ChipRequest {
        ChipRequest {
            given: given.to_string(),
            hbm_tbps: None,
            keys: Vec::new(),
            dram_readers: None,
        }
    }

    /// A preset or file with `--hbm-tbps`.
    pub fn with_hbm(given: &str, hbm_tbps: Option<f64>) -> ChipRequest {
        ChipRequest {
            hbm_tbps,
            ..ChipRequest::named(given)
        }
    }

    /// Reads the chip and applies the overrides; implausible values are warned about through
    /// `notice`. A non-positive bandwidth, an unknown key or a bad value is refused, naming it.
    /// `--dram-readers auto` is refused: an instance is built on one count (only `compare`
    /// tries every count, [`ChipRequest::each_reader_count`]).
    pub fn resolve(&self, notice: &mut dyn Notice) -> Result<ChosenChip> {
        let spec = self.before_readers(notice)?;
        let readers = match self.dram_readers {
            None => 0,
            Some(DramReaders::Count(k)) => k,
            Some(DramReaders::Auto) => {
                return Err(RequestError::refused(format!(
                    "--dram-readers auto: only `compare` tries every count; give one ({} here: {})",
                    self.given,
                    spec.dram_reader_choices_listed()
                )))
            }
        };
        self.chosen(spec, readers)
    }

    /// The chip with each count of DRAM-reader cores worth comparing (`[0]` when it has no
    /// reader rate; [`ChipSpec::dram_reader_choices`]), read once: what `compare
    /// --dram-readers auto` tries, with each count.
    pub fn each_reader_count(&self, notice: &mut dyn Notice) -> Result<Vec<(u64, ChosenChip)>> {
        let spec = self.before_readers(notice)?;
        spec.dram_reader_choices()
            .into_iter()
            .map(|k| Ok((k, self.chosen(spec.clone(), k)?)))
            .collect()
    }

    /// `spec` (the chip before readers) with `readers` reader cores, and its record.
    fn chosen(&self, spec: ChipSpec, readers: u64) -> Result<ChosenChip> {
        let spec = spec.with_dram_readers(readers, &self.given)?;
        let record = chip_ref(&spec, &self.given, self.hbm_tbps);
        Ok(ChosenChip { spec, record })
    }

    /// The chip with its overrides, before DRAM-reader cores are chosen.
    fn before_readers(&self, notice: &mut dyn Notice) -> Result<ChipSpec> {
        let loaded = LoadedChip::load(&self.given)?;
        let mut spec = loaded.spec;
        if self.keys.is_empty() {
            loaded.warnings.into_iter().for_each(|w| notice.warn(w));
        }
        if let Some(tbps) = self.hbm_tbps {
            if !(tbps.is_finite() && tbps > 0.0) {
                return Err(RequestError::refused(format!(
                    "--hbm-tbps {tbps}: must be positive"
                )));
            }
            spec = spec.with_overrides(&ChipOverrides {
                file: format!("{} with --hbm-tbps", self.given),
                hbm_tbps: Some(tbps),
                ..ChipOverrides::default()
            })?;
        }
        if !self.keys.is_empty() {
            let described = describe_keys(&self.keys);
            let file = format!("{} with {described}", self.given);
            spec = spec.with_keys(&file, &self.keys)?;
            // Warned about as the chip is used: the file's own values may have been replaced.
            spec.warnings(&file)
                .into_iter()
                .for_each(|w| notice.warn(w));
            // The name gains the overrides (so instance names say so) unless it is one of them.
            if !self.keys.iter().any(|(k, _)| k == "name") {
                spec.name = format!("{} ({described})", spec.name);
            }
        }
        Ok(spec)
    }
}

impl ChosenChip {
    /// Its name with the HBM override: `ipu-pod4 @ 8 TB/s HBM`.
    pub fn label(&self) -> String {
        self.record.label()
    }

    /// The chip as headers and `--json` label it ([`crate::compare::ChipLabel`]).
    pub fn as_label(&self) -> ChipLabel<'_> {
        ChipLabel {
            spec: &self.spec,
            record: &self.record,
        }
    }

    /// Its name with its HBM bandwidth, overridden or not: `ipu-pod4 @ 16 TB/s HBM`.
    pub fn label_with_hbm(&self) -> String {
        self.as_label().label_with_hbm()
    }

    /// How the user named the chip: the TOML file given, else the preset's name (what
    /// `elk-opt chips show` takes).
    pub fn given(&self) -> &str {
        self.as_label().given()
    }

    /// The spec named by its label, so instance names and headers show the override.
    pub fn named(&self) -> ChipSpec {
        let mut c = self.spec.clone();
        c.name = self.label();
        c
    }
}

/// Chip keys as one JSON object, in the order given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KeysInOrder(pub(crate) Vec<(String, toml::Value)>);

impl KeysInOrder {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for KeysInOrder {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Collected;

    /// Reading the chip once gives each count the chip (and record) that resolving that
    /// count on its own gives; `auto` is refused by `resolve`, naming the counts.
    #[test]
    fn each_reader_count_is_each_count_resolved_alone() {
        let auto = ChipRequest {
            dram_readers: Some(DramReaders::Auto),
            ..ChipRequest::with_hbm("wormhole-n150", Some(0.534))
        };
        let each = auto.each_reader_count(&mut Collected::default()).unwrap();
        assert_eq!(each.iter().map(|(k, _)| *k).collect::<Vec<_>>(), [0, 8, 16]);
        for (k, chip) in each {
            let alone = ChipRequest {
                dram_readers: Some(DramReaders::Count(k)),
                ..auto.clone()
            }
            .resolve(&mut Collected::default())
            .unwrap();
            assert_eq!(chip.spec, alone.spec, "{k}");
            assert_eq!(chip.record, alone.record, "{k}");
        }
        let refused = auto.resolve(&mut Collected::default()).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("give one (wormhole-n150 here: 0, 8, 16)"),
            "{refused}"
        );
    }
}
