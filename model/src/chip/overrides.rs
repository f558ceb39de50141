//! Overriding a few fields of a chip (the detailed replay's flags, a sweep cell's variant,
//! `--hbm-tbps`) or any of its keys by name (Python's `Chip(**keys)`, [`ChipSpec::with_keys`]),
//! and validating the result as strictly as a TOML file.

use super::keys::{self, Applies, ChipKey, KEYS};
use super::{ChipSpec, Placement, Topology};
use crate::error::{ModelError, Result};

/// What may be overridden on a chip; `None` keeps the chip's value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChipOverrides {
    /// Names the overridden chip in errors, in place of a file name
    /// (`(--chip with overrides)`).
    pub file: String,
    /// HBM bandwidth in TB/s (decimal). On a chip with DRAM-reader rates (docs/chips.md,
    /// "DRAM-reader cores") the interleaved and per-reader rates scale with it, so each keeps
    /// its share of the peak.
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
            self.scale_dram_to(tbps * 1e12);
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

impl ChipSpec {
    /// Sets the saturated DRAM rate to `bytes_per_s`. The interleaved rate and the per-reader
    /// rate, when the chip has them, scale by the same factor: without that they would still
    /// cap every DRAM read at their old values and the new peak would change nothing.
    fn scale_dram_to(&mut self, bytes_per_s: f64) {
        let factor = bytes_per_s / self.hbm.bandwidth_bytes_per_s;
        self.hbm.bandwidth_bytes_per_s = bytes_per_s;
        if let Some(rate) = self.hbm.interleaved_bytes_per_s.as_mut() {
            *rate *= factor;
        }
        if let Some(rate) = self.hbm.reader_bytes_per_cycle.as_mut() {
            *rate *= factor;
        }
    }
}

/// The keys whose change moves the controllers: explicit controller cores are dropped
/// unless given too.
const MOVES_CONTROLLERS: [&str; 6] = [
    "cores",
    "noc.topology",
    "noc.width",
    "noc.height",
    "hbm.controllers",
    "hbm.placement",
];

impl ChipSpec {
    /// The chip with `keys` set, each named as [`keys::resolve`] takes it, read back as the
    /// chip's TOML file with those lines changed would be: typed as the key's unit, every
    /// check of a chip file, errors naming `file` and the key. An integer given for a
    /// decimal key is taken as one. As [`ChipSpec::with_overrides`] does, a change of the
    /// cores, the grid, the controllers or their placement drops explicit controller cores
    /// (an `explicit` placement becomes `edges`) unless `hbm.controller_cores` is given;
    /// `noc.topology = "all-to-all"` drops the width and height unless they are given; and a
    /// new `cost_model.kind` drops the other kind's keys (the new kind's required keys must
    /// then be given).
    pub fn with_keys(&self, file: &str, keys: &[(String, toml::Value)]) -> Result<ChipSpec> {
        let bad = |detail: String| ModelError::Chip {
            file: file.into(),
            detail,
        };
        let mut doc: toml::Table = toml::from_str(&self.to_toml())
            .map_err(|e| bad(format!("the chip as TOML: {}", e.message())))?;
        let mut given: Vec<&'static str> = Vec::new();
        for (name, value) in keys {
            let k = keys::resolve(name).ok_or_else(|| {
                bad(format!(
                    "unknown key '{name}' (every key: docs/chips.md or `elk-opt chips template`)"
                ))
            })?;
            if given.contains(&k.path) {
                return Err(bad(format!("key '{}' is given twice", k.path)));
            }
            given.push(k.path);
            let value = typed(k, value).map_err(|e| bad(format!("key '{}': {e}", k.path)))?;
            set(&mut doc, k.path, Some(value));
        }
        let has = |p: &str| given.contains(&p);
        let text_at = |doc: &toml::Table, p: &str| {
            keys::get(doc, p)
                .and_then(toml::Value::as_str)
                .map(str::to_string)
        };
        if has("noc.topology") && text_at(&doc, "noc.topology").as_deref() == Some("all-to-all") {
            for p in ["noc.width", "noc.height"].into_iter().filter(|p| !has(p)) {
                set(&mut doc, p, None);
            }
        }
        if MOVES_CONTROLLERS.iter().any(|p| has(p)) && !has("hbm.controller_cores") {
            set(&mut doc, "hbm.controller_cores", None);
            if !has("hbm.placement")
                && text_at(&doc, "hbm.placement").as_deref() == Some("explicit")
            {
                set(&mut doc, "hbm.placement", Some("edges".into()));
            }
        }
        if has("cost_model.kind") {
            let kind = text_at(&doc, "cost_model.kind").unwrap_or_default();
            for k in &KEYS {
                if matches!(k.applies, Applies::Kinds(ks) if !ks.contains(&kind.as_str()))
                    && !has(k.path)
                {
                    set(&mut doc, k.path, None);
                }
            }
        }
        let text = toml::to_string(&doc).map_err(|e| bad(format!("the chip as TOML: {e}")))?;
        ChipSpec::from_toml_str(file, &text)
    }
}

/// `value` as key `k` takes it, or what is wrong with it.
fn typed(k: &ChipKey, value: &toml::Value) -> std::result::Result<toml::Value, String> {
    use toml::Value as V;
    let wrong = || format!("expected {}, got {value}", k.unit);
    let choices: Vec<&str> = k.unit.split(" | ").map(|c| c.trim_matches('"')).collect();
    match value {
        V::Integer(i) if keys::is_decimal(k) => Ok(V::Float(*i as f64)),
        V::Float(_) if keys::is_decimal(k) => Ok(value.clone()),
        V::Integer(i) if k.unit.contains("(integer)") && *i >= 0 => Ok(value.clone()),
        V::Float(f) if k.unit.contains("(integer)") && *f >= 0.0 && f.fract() == 0.0 => {
            Ok(V::Integer(*f as i64))
        }
        V::String(_) if k.unit == "text" => Ok(value.clone()),
        V::String(s) if k.unit.starts_with('"') => {
            if choices.contains(&s.as_str()) {
                Ok(value.clone())
            } else {
                Err(format!("'{s}': one of {}", choices.join(", ")))
            }
        }
        V::Array(a) if k.unit.starts_with("list") => {
            if a.iter().all(|v| v.as_integer().is_some_and(|i| i >= 0)) {
                Ok(value.clone())
            } else {
                Err(wrong())
            }
        }
        _ => Err(wrong()),
    }
}

/// Sets (or, with `None`, removes) the key at `path`, making its table if need be.
fn set(doc: &mut toml::Table, path: &str, value: Option<toml::Value>) {
    let (table, key) = keys::split(path);
    let target = match table {
        None => doc,
        Some(t) => {
            let entry = doc
                .entry(t)
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            match entry.as_table_mut() {
                Some(t) => t,
                None => return,
            }
        }
    };
    match value {
        Some(v) => {
            target.insert(key.to_string(), v);
        }
        None => {
            target.remove(key);
        }
    }
}

/// `cores=1472, topology=torus`: keys as given, for a chip's name (text unquoted).
pub fn describe_keys(keys: &[(String, toml::Value)]) -> String {
    keys.iter()
        .map(|(k, v)| match v {
            toml::Value::String(s) => format!("{k}={s}"),
            v => format!("{k}={v}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
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

    fn keys(pairs: &[(&str, toml::Value)]) -> Vec<(String, toml::Value)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    /// Setting keys by name gives the chip a TOML file with those lines changed gives.
    #[test]
    fn keys_set_by_name_equal_the_edited_toml_file() {
        let base = ChipSpec::preset("sn40l-like").unwrap();
        let set = base
            .with_keys(
                "(test)",
                &keys(&[
                    ("sram_bytes_per_core", 262144.into()),
                    ("clock_hz", 2_000_000_000.into()),
                    ("noc_link_bytes_per_s", 1.5e10.into()),
                    ("cost_model.sync_latency_cycles", 40.0.into()),
                ]),
            )
            .unwrap();
        let mut edited = base.clone();
        edited.sram_bytes_per_core = 262144;
        edited.clock_hz = 2e9;
        edited.noc.link_bytes_per_s = 1.5e10;
        match &mut edited.cost_model {
            super::super::CostModelSpec::Roofline {
                sync_latency_cycles,
                ..
            } => *sync_latency_cycles = 40.0,
            other => panic!("{other:?}"),
        }
        assert_eq!(set, edited);
        // The six keys with_overrides takes give the chip it gives.
        let by_keys = base
            .with_keys(
                "(test)",
                &keys(&[("topology", "torus".into()), ("hbm_controllers", 8.into())]),
            )
            .unwrap();
        let by_overrides = base
            .with_overrides(&ChipOverrides {
                topology: Some(Topology::Torus),
                controllers: Some(8),
                ..ChipOverrides::default()
            })
            .unwrap();
        assert_eq!(by_keys, by_overrides);
    }

    #[test]
    fn bad_keys_and_values_are_refused_naming_the_key() {
        let base = ChipSpec::preset("ipu-pod4").unwrap();
        let err = |pairs: &[(&str, toml::Value)]| {
            base.with_keys("pod with x", &keys(pairs))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(&[("sram_per_core", 1.into())]),
            "pod with x: unknown key 'sram_per_core' (every key: docs/chips.md or `elk-opt \
             chips template`)"
        );
        assert_eq!(
            err(&[("cores", 1.5.into())]),
            "pod with x: key 'cores': expected count (integer), got 1.5"
        );
        assert_eq!(
            err(&[("placement", "corners".into())]),
            "pod with x: key 'hbm.placement': 'corners': one of edges, single-core, explicit"
        );
        assert_eq!(
            err(&[("clock_hz", (-1).into())]),
            "pod with x: key 'clock_hz': must be a positive number, got -1"
        );
        assert_eq!(
            err(&[("width", 4.into()), ("noc.width", 4.into())]),
            "pod with x: key 'noc.width' is given twice"
        );
        // A new cost-model kind needs its own keys, as a file does.
        assert!(err(&[("cost_model.kind", "roofline".into())])
            .contains("missing keys: cost_model.peak_flops_per_s_per_core"));
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
