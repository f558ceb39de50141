//! Values that parse and validate but are almost surely a unit slip (`clock_hz = 1.5` meant
//! as GHz, `bandwidth_bytes_per_s = 8` meant as TB/s): warnings, not errors, since a toy chip
//! may want them.

use super::{ChipSpec, CostModelSpec};

/// (key, value, lowest plausible value, that value for people, an example in the key's unit).
type Floor = (&'static str, f64, f64, &'static str, &'static str);

impl ChipSpec {
    /// One line per implausible value, naming `file` and the key.
    pub fn warnings(&self, file: &str) -> Vec<String> {
        let mut floors: Vec<Floor> = vec![
            ("clock_hz", self.clock_hz, 1e6, "1 MHz", "1.5 GHz is 1.5e9"),
            (
                "sram_bytes_per_core",
                self.sram_bytes_per_core as f64,
                1024.0,
                "1 KiB",
                "624 KiB is 638976",
            ),
            (
                "hbm.bandwidth_bytes_per_s",
                self.hbm.bandwidth_bytes_per_s,
                1e9,
                "1 GB/s",
                "8 TB/s is 8.0e12",
            ),
            (
                "noc.injection_bytes_per_s_per_core",
                self.noc.injection_bytes_per_s_per_core,
                1e6,
                "1 MB/s",
                "64 GB/s is 64.0e9",
            ),
            (
                "noc.link_bytes_per_s",
                self.noc.link_bytes_per_s,
                1e6,
                "1 MB/s",
                "64 GB/s is 64.0e9",
            ),
        ];
        if let CostModelSpec::Roofline {
            peak_flops_per_s_per_core,
            noc_bytes_per_s_per_core,
            ..
        } = &self.cost_model
        {
            floors.push((
                "cost_model.peak_flops_per_s_per_core",
                *peak_flops_per_s_per_core,
                1e6,
                "1 MFLOP/s",
                "1 TFLOP/s is 1.0e12",
            ));
            floors.push((
                "cost_model.noc_bytes_per_s_per_core",
                *noc_bytes_per_s_per_core,
                1e6,
                "1 MB/s",
                "64 GB/s is 64.0e9",
            ));
        }
        let mut out: Vec<String> = floors
            .into_iter()
            .filter(|(_, v, floor, _, _)| v < floor)
            .map(|(key, v, _, floor, example)| {
                format!(
                    "{file}: key '{key}' = {v} is below {floor}: is the unit right? ({example})"
                )
            })
            .collect();
        if self.clock_hz > 1e11 {
            out.push(format!(
                "{file}: key 'clock_hz' = {} is above 100 GHz: is the unit right? (1.5 GHz is 1.5e9)",
                self.clock_hz
            ));
        }
        if let CostModelSpec::IpuMk2 {
            inter_chip_comm_factor,
            ..
        } = &self.cost_model
        {
            if *inter_chip_comm_factor < 1.0 {
                out.push(format!(
                    "{file}: key 'cost_model.inter_chip_comm_factor' = {inter_chip_comm_factor} \
                     is below 1: inter-chip communication would be cheaper than on one die"
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::chip::{ChipSpec, PRESETS};

    #[test]
    fn unit_slips_warn_and_presets_do_not() {
        for (name, _) in PRESETS {
            let chip = ChipSpec::preset(name).unwrap();
            assert_eq!(chip.warnings(name), Vec::<String>::new());
        }
        let mut chip = ChipSpec::preset("ipu-mk2").unwrap();
        chip.clock_hz = 1.5;
        chip.hbm.bandwidth_bytes_per_s = 8.0;
        chip.sram_bytes_per_core = 624;
        let w = chip.warnings("my.toml");
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(
            w[0],
            "my.toml: key 'clock_hz' = 1.5 is below 1 MHz: is the unit right? (1.5 GHz is 1.5e9)"
        );
        assert!(w[1].starts_with("my.toml: key 'sram_bytes_per_core' = 624 is below 1 KiB"));
        assert!(w[2].starts_with("my.toml: key 'hbm.bandwidth_bytes_per_s' = 8 is below 1 GB/s"));
    }
}
