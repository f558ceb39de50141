//! `elk-opt chips list|show`.

use clap::Subcommand;
use elk_model::chip::{ChipSpec, PRESETS};
use elk_stage::units::si;

#[derive(Subcommand, Debug)]
pub enum ChipsCmd {
    /// List the chip presets.
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Show a preset or a chip TOML file.
    Show {
        /// Preset name or path to a TOML file.
        chip: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: ChipsCmd) -> anyhow::Result<()> {
    match cmd {
        ChipsCmd::List { json } => {
            let chips = PRESETS
                .iter()
                .map(|(name, _)| ChipSpec::preset(name))
                .collect::<Result<Vec<_>, _>>()?;
            if json {
                return crate::cli::print_json(&chips);
            }
            println!(
                "{:<18} {:>6} {:>11} {:>11} {:>12} {:<10} {:<9}",
                "chip", "cores", "SRAM/core", "SRAM total", "HBM", "NoC", "cost"
            );
            for c in chips {
                println!(
                    "{:<18} {:>6} {:>11} {:>11} {:>12} {:<10} {:<9}",
                    c.name,
                    c.cores,
                    si(c.sram_bytes_per_core as f64, "B"),
                    si(c.total_sram_bytes() as f64, "B"),
                    si(c.hbm.bandwidth_bytes_per_s, "B/s"),
                    format!("{:?}", c.noc.topology).to_lowercase(),
                    c.cost_model.name()
                );
            }
            Ok(())
        }
        ChipsCmd::Show { chip, json } => {
            let c = ChipSpec::load(&chip)?;
            if json {
                return crate::cli::print_json(&c);
            }
            println!("# {}", c.description);
            println!(
                "# SRAM total {}, NoC aggregate {}",
                si(c.total_sram_bytes() as f64, "B"),
                si(c.noc_bytes_per_s(), "B/s")
            );
            print!("{}", c.to_toml());
            Ok(())
        }
    }
}
