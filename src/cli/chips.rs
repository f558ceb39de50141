//! `elk-opt chips list|show|template`.

use clap::Subcommand;
use elk_model::build::noc_distribution_explained;
use elk_model::chip::{ChipSpec, CostModelSpec, LoadedChip, Topology, PRESETS};
use elk_model::cost::{peak_flops_per_s, Fidelity};
use elk_stage::units::si;

#[derive(Subcommand, Debug)]
pub enum ChipsCmd {
    /// List the chip presets.
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Show a preset or a chip TOML file, as TOML (keys the file leaves out are marked
    /// "(default)"), with the bandwidths that decide performance.
    Show {
        /// Preset name or path to a TOML file.
        chip: String,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
    /// Print a commented chip TOML with every key, to start a chip from:
    /// `elk-opt chips template --topology mesh > my.toml`.
    Template {
        /// The NoC of the template (its values come from a preset of that topology).
        #[arg(long, value_enum, default_value = "all-to-all")]
        topology: Topology,
    },
}

/// Prints each warning on stderr.
pub fn warn(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

pub fn run(cmd: ChipsCmd) -> anyhow::Result<()> {
    match cmd {
        ChipsCmd::List { json } => {
            let chips = PRESETS
                .iter()
                .map(|(name, _)| ChipSpec::preset(name))
                .collect::<Result<Vec<_>, _>>()?;
            if json {
                return super::json::print_json("chips-list", &super::json::no_config(), &chips);
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
                    super::json::value_name(c.noc.topology),
                    c.cost_model.name()
                );
            }
            Ok(())
        }
        ChipsCmd::Show { chip, json } => {
            let loaded = LoadedChip::load(&chip)?;
            warn(&loaded.warnings);
            let c = &loaded.spec;
            if json {
                let config = serde_json::json!({ "chip": chip });
                return super::json::print_json("chips-show", &config, c);
            }
            println!("# {}", c.description);
            println!(
                "# SRAM total {}, NoC aggregate {} (cores × injection)",
                si(c.total_sram_bytes() as f64, "B"),
                si(c.noc_bytes_per_s(), "B/s")
            );
            println!(
                "# HBM distribution over the NoC (B_NoC,dist): {}",
                noc_distribution_explained(c)
            );
            if let Some(a) = elk_model::chip::advice::distribution_advice(c) {
                println!("# {}", a.describe(c));
            }
            if let Some(w) = super::chip_choice::slow_distribution_warning(c, None) {
                eprintln!("warning: {w}");
            }
            if let CostModelSpec::IpuMk2 {
                cores_per_chip,
                inter_chip_comm_factor,
            } = &c.cost_model
            {
                let factor = c.cost_model.comm_factor(c.cores);
                if factor == 1.0 {
                    println!(
                        "# inter-chip penalty: none (cores {} ≤ cores_per_chip {cores_per_chip})",
                        c.cores
                    );
                } else {
                    println!(
                        "# inter-chip penalty: communication × {inter_chip_comm_factor} (cores {} > \
                         cores_per_chip {cores_per_chip})",
                        c.cores
                    );
                }
            }
            let peaks: Vec<String> = [Fidelity::LoFi, Fidelity::HiFi2, Fidelity::HiFi4]
                .into_iter()
                .filter_map(|f| {
                    let (ideal, sustained) = peak_flops_per_s(c, f)?;
                    Some(format!(
                        "{f} {} ({} sustained)",
                        si(ideal, "FLOP/s"),
                        si(sustained, "FLOP/s")
                    ))
                })
                .collect();
            if !peaks.is_empty() {
                println!("# matrix engines, all cores: {}", peaks.join(", "));
            }
            if c.has_dram_readers() {
                let counts: Vec<String> = c
                    .dram_reader_choices()
                    .into_iter()
                    .map(|k| {
                        format!(
                            "{k} ({} compute cores, {})",
                            c.cores - k,
                            si(c.dram_rate_with_readers(k), "B/s")
                        )
                    })
                    .collect();
                println!(
                    "# DRAM-reader cores (--dram-readers; none without the flag): {}",
                    counts.join(", ")
                );
            }
            if !loaded.defaulted.is_empty() {
                println!("# (default): not in the file; the default value shown is used");
            }
            print!("{}", loaded.to_toml_marked());
            Ok(())
        }
        ChipsCmd::Template { topology } => {
            print!("{}", elk_model::chip::template(topology)?);
            Ok(())
        }
    }
}
