//! Where an instance came from: the chip it was built for, as instance files record it
//! ([`elk_stage::instance::ChipRef`]), so the detailed replay can pick that chip and warn
//! when it is given another.

use crate::chip::{ChipSpec, PRESETS};
use elk_stage::instance::ChipRef;

/// `fnv1a64:…` of `chip` as used: its JSON with the name and description left out, so a
/// renamed copy of a preset hashes like the preset, and any change to a number does not.
pub fn chip_hash(chip: &ChipSpec) -> String {
    let mut c = chip.clone();
    c.name.clear();
    c.description.clear();
    elk_stage::hash::of_json(&c)
}

/// The record of `chip` (overrides applied), given on the command line as `given` (a preset
/// name or a TOML path) with the HBM override `hbm_tbps`.
pub fn chip_ref(chip: &ChipSpec, given: &str, hbm_tbps: Option<f64>) -> ChipRef {
    ChipRef {
        name: chip.name.clone(),
        file: (!is_preset(given)).then(|| given.to_string()),
        hbm_tbps,
        hash: chip_hash(chip),
    }
}

/// `name` is a preset's name.
pub fn is_preset(name: &str) -> bool {
    PRESETS.iter().any(|(n, _)| *n == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chip::ChipOverrides;

    #[test]
    fn the_chip_hash_sees_numbers_not_names() {
        let pod = ChipSpec::preset("ipu-pod4").unwrap();
        let mut renamed = pod.clone();
        renamed.name = "my copy".into();
        renamed.description = "mine".into();
        assert_eq!(chip_hash(&renamed), chip_hash(&pod));
        let fast = pod
            .clone()
            .with_overrides(&ChipOverrides {
                hbm_tbps: Some(8.0),
                ..ChipOverrides::default()
            })
            .unwrap();
        assert_ne!(chip_hash(&fast), chip_hash(&pod));
        assert_ne!(
            chip_hash(&ChipSpec::preset("ipu-mk2").unwrap()),
            chip_hash(&pod)
        );
        let r = chip_ref(&fast, "ipu-pod4", Some(8.0));
        assert_eq!(
            (r.name.as_str(), r.file.as_deref(), r.hbm_tbps),
            ("ipu-pod4", None, Some(8.0))
        );
        assert_eq!(r.label(), "ipu-pod4 @ 8 TB/s HBM");
        assert_eq!(
            chip_ref(&pod, "chips/pod.toml", None).file.as_deref(),
            Some("chips/pod.toml")
        );
    }
}
