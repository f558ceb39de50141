//! DRAM-reader cores (docs/chips.md, "DRAM-reader cores"): `k` cores that only stream weights
//! from DRAM into the other cores' SRAM and compute nothing, as Tenstorrent's prefetcher and
//! DRAM-sharded matmuls place one reader beside each DRAM bank.
//!
//! Why it is a choice: compute cores that read DRAM themselves get the interleaved rate
//! (`hbm.interleaved_bytes_per_s`, 190 GB/s on a Wormhole), while readers beside their banks
//! reach the saturated one (`hbm.bandwidth_bytes_per_s`, 267 GB/s) at the price of their cores
//! and their SRAM. A chip with readers is a chip with fewer compute cores and another DRAM
//! rate, so every method, the simulator and every bound run on it unchanged; a chip whose
//! file gives no reader rate has no choice to make.

use super::{ChipSpec, Placement, Topology};
use crate::error::{ModelError, Result};

impl ChipSpec {
    /// Whether the number of DRAM-reader cores is a choice on this chip (its file gives
    /// `hbm.reader_bytes_per_cycle` and `hbm.interleaved_bytes_per_s`).
    pub fn has_dram_readers(&self) -> bool {
        self.hbm.reader_bytes_per_cycle.is_some()
    }

    /// The reader counts worth comparing: none, then on a mesh or torus whole grid columns
    /// (compute keeps a rectangular grid) up to the first count with a reader per controller
    /// (a reader reads its own bank: more add nothing); on an all-to-all chip, none and one
    /// per controller. `[0]` when the chip has no reader rate.
    pub fn dram_reader_choices(&self) -> Vec<u64> {
        if !self.has_dram_readers() {
            return vec![0];
        }
        let controllers = self.hbm.controllers;
        match (self.noc.width, self.noc.height) {
            (Some(width), Some(height)) => (0..width)
                .map(|columns| columns * height)
                .take_while(|&k| k == 0 || k - height < controllers)
                .collect(),
            _ => [0, controllers]
                .into_iter()
                .filter(|&k| k < self.cores)
                .collect(),
        }
    }

    /// [`ChipSpec::dram_reader_choices`] as refusals list them: "0, 8, 16".
    pub fn dram_reader_choices_listed(&self) -> String {
        list(&self.dram_reader_choices())
    }

    /// The DRAM rate with `readers` reader cores, bytes/s: the interleaved rate without
    /// any, else one reader rate per reader up to one per controller, at most the saturated
    /// bandwidth. The chip's own bandwidth when it has no reader rate.
    pub fn dram_rate_with_readers(&self, readers: u64) -> f64 {
        let peak = self.hbm.bandwidth_bytes_per_s;
        match (
            self.hbm.reader_bytes_per_cycle,
            self.hbm.interleaved_bytes_per_s,
        ) {
            (Some(_), Some(interleaved)) if readers == 0 => interleaved.min(peak),
            (Some(per_cycle), _) => {
                let streaming = readers.min(self.hbm.controllers) as f64;
                (streaming * per_cycle * self.clock_hz).min(peak)
            }
            _ => peak,
        }
    }

    /// The chip the compute cores see with `readers` DRAM-reader cores: that many fewer cores
    /// (whole grid columns on a mesh or torus, taken from its width), the DRAM rate of
    /// [`ChipSpec::dram_rate_with_readers`], the reader keys dropped (the choice is made) and,
    /// with readers, a name that says how many. Controllers listed by core are placed along
    /// the edges again, as overrides do. Refused, naming `file`, on a chip without a reader
    /// rate (unless `readers` is 0: the chip as it is), for a count that is not whole columns,
    /// or one that leaves no core to compute.
    pub fn with_dram_readers(mut self, readers: u64, file: &str) -> Result<ChipSpec> {
        if !self.has_dram_readers() {
            if readers == 0 {
                return Ok(self);
            }
            return Err(refused(
                file,
                format!(
                    "{readers} DRAM-reader cores: chip '{}' gives no hbm.reader_bytes_per_cycle \
                     (docs/chips.md, \"DRAM-reader cores\")",
                    self.name
                ),
            ));
        }
        let choices = self.dram_reader_choices();
        if readers >= self.cores {
            return Err(refused(
                file,
                format!(
                    "{readers} DRAM-reader cores leave none of the {} cores to compute",
                    self.cores
                ),
            ));
        }
        let rate = self.dram_rate_with_readers(readers);
        if let (Some(width), Some(height)) = (self.noc.width, self.noc.height) {
            if readers % height != 0 {
                return Err(refused(
                    file,
                    format!(
                        "{readers} DRAM-reader cores: readers take whole columns of the {width}x\
                         {height} grid, so a multiple of {height} (worth trying: {})",
                        list(&choices)
                    ),
                ));
            }
            self.noc.width = Some(width - readers / height);
        }
        self.cores -= readers;
        self.hbm.bandwidth_bytes_per_s = rate;
        self.hbm.reader_bytes_per_cycle = None;
        self.hbm.interleaved_bytes_per_s = None;
        if readers > 0 {
            self.name = format!("{} ({readers} DRAM readers)", self.name);
            self.description = format!(
                "{} — {readers} of its cores are DRAM readers: {} compute",
                self.description, self.cores
            );
            if self.hbm.placement == Placement::Explicit {
                self.hbm.placement = Placement::Edges;
                self.hbm.controller_cores.clear();
            }
        }
        debug_assert!(self.noc.topology == Topology::AllToAll || self.noc.width.is_some());
        self.validate(file)?;
        Ok(self)
    }

    /// Checks the reader keys: both or neither, positive, the interleaved rate at most the
    /// saturated bandwidth.
    pub(super) fn check_dram_readers(&self) -> std::result::Result<(), String> {
        match (
            self.hbm.reader_bytes_per_cycle,
            self.hbm.interleaved_bytes_per_s,
        ) {
            (None, None) => Ok(()),
            (Some(r), Some(i)) => {
                for (key, v) in [
                    ("hbm.reader_bytes_per_cycle", r),
                    ("hbm.interleaved_bytes_per_s", i),
                ] {
                    if !(v.is_finite() && v > 0.0) {
                        return Err(format!("key '{key}': must be a positive number, got {v}"));
                    }
                }
                if i > self.hbm.bandwidth_bytes_per_s {
                    return Err(format!(
                        "key 'hbm.interleaved_bytes_per_s': {i} is above \
                         hbm.bandwidth_bytes_per_s ({}), the rate with readers beside their banks",
                        self.hbm.bandwidth_bytes_per_s
                    ));
                }
                Ok(())
            }
            (Some(_), None) => Err("key 'hbm.interleaved_bytes_per_s': required with \
                                    hbm.reader_bytes_per_cycle (the rate without readers)"
                .into()),
            (None, Some(_)) => Err("key 'hbm.reader_bytes_per_cycle': required with \
                                    hbm.interleaved_bytes_per_s (the rate of one reader core)"
                .into()),
        }
    }
}

fn refused(file: &str, detail: String) -> ModelError {
    ModelError::Chip {
        file: file.into(),
        detail,
    }
}

fn list(counts: &[u64]) -> String {
    counts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n150() -> ChipSpec {
        ChipSpec::preset("wormhole-n150").unwrap()
    }

    #[test]
    fn wormhole_tries_none_one_and_two_columns() {
        // 8x8 grid, 12 banks: one column (8 readers) is short of a reader per bank, two
        // columns (16) have one for each of the 12; a third would add nothing.
        assert_eq!(n150().dram_reader_choices(), vec![0, 8, 16]);
        let p150 = ChipSpec::preset("blackhole-p150").unwrap();
        // 13x10, 8 banks: one column of 10 already holds a reader per bank.
        assert_eq!(p150.dram_reader_choices(), vec![0, 10]);
        assert_eq!(
            ChipSpec::preset("ipu-pod4").unwrap().dram_reader_choices(),
            vec![0]
        );
    }

    #[test]
    fn readers_trade_cores_for_dram_rate() {
        let chip = n150();
        let none = chip.clone().with_dram_readers(0, "t").unwrap();
        assert_eq!(none.cores, 64);
        assert_eq!(none.hbm.bandwidth_bytes_per_s, 190e9);
        assert_eq!(none.name, "wormhole-n150");
        // 8 readers at 22 B/cycle and 1 GHz: 176 GB/s, below the interleaved rate.
        let one = chip.clone().with_dram_readers(8, "t").unwrap();
        assert_eq!((one.cores, one.noc.width), (56, Some(7)));
        assert_eq!(one.hbm.bandwidth_bytes_per_s, 176e9);
        // 12 of 16 stream (one per bank): 264 GB/s, under the saturated 267.
        let two = chip.clone().with_dram_readers(16, "t").unwrap();
        assert_eq!((two.cores, two.noc.width), (48, Some(6)));
        assert_eq!(two.hbm.bandwidth_bytes_per_s, 264e9);
        assert_eq!(two.name, "wormhole-n150 (16 DRAM readers)");
        assert!(!two.has_dram_readers());
        assert_eq!(two.total_sram_bytes(), 48 * chip.sram_bytes_per_core);
    }

    #[test]
    fn bad_counts_are_refused_naming_the_chip() {
        let err = |k: u64| {
            n150()
                .with_dram_readers(k, "n150.toml")
                .unwrap_err()
                .to_string()
        };
        assert!(
            err(12).contains("a multiple of 8 (worth trying: 0, 8, 16)"),
            "{}",
            err(12)
        );
        assert!(
            err(64).contains("leave none of the 64 cores"),
            "{}",
            err(64)
        );
        let pod = ChipSpec::preset("ipu-pod4").unwrap();
        let e = pod
            .clone()
            .with_dram_readers(4, "pod")
            .unwrap_err()
            .to_string();
        assert!(e.contains("gives no hbm.reader_bytes_per_cycle"), "{e}");
        assert_eq!(pod.clone().with_dram_readers(0, "pod").unwrap(), pod);
    }

    #[test]
    fn the_keys_go_together_and_the_interleaved_rate_is_at_most_the_peak() {
        let mut chip = n150();
        chip.hbm.interleaved_bytes_per_s = None;
        let e = chip.validate("f").unwrap_err().to_string();
        assert!(e.contains("'hbm.interleaved_bytes_per_s': required"), "{e}");
        let mut chip = n150();
        chip.hbm.interleaved_bytes_per_s = Some(300e9);
        let e = chip.validate("f").unwrap_err().to_string();
        assert!(e.contains("above hbm.bandwidth_bytes_per_s"), "{e}");
        let mut chip = n150();
        chip.hbm.reader_bytes_per_cycle = Some(0.0);
        let e = chip.validate("f").unwrap_err().to_string();
        assert!(
            e.contains("'hbm.reader_bytes_per_cycle': must be a positive"),
            "{e}"
        );
    }

    #[test]
    fn an_hbm_override_moves_the_rates_readers_and_interleaving_reach() {
        use crate::chip::ChipOverrides;
        // --hbm-tbps 0.534 doubles the saturated 267 GB/s: with it the interleaved rate and
        // the readers' rate double too, else they would still cap every read at the old rate.
        let doubled = n150()
            .with_overrides(&ChipOverrides {
                hbm_tbps: Some(0.534),
                ..ChipOverrides::default()
            })
            .unwrap();
        let rate = |k: u64| {
            doubled
                .clone()
                .with_dram_readers(k, "t")
                .unwrap()
                .hbm
                .bandwidth_bytes_per_s
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-3 * b;
        assert!(close(rate(0), 380e9), "{}", rate(0));
        assert!(close(rate(8), 352e9), "{}", rate(8));
        assert!(close(rate(16), 528e9), "{}", rate(16));
    }
}
