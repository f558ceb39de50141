//! The chip a command works on: `--chip` (a preset or a TOML file) with `--hbm-tbps`, the
//! label names and headers print (`ipu-pod4 @ 8 TB/s HBM`), and the record instance files
//! keep of it; for `simulate --detailed`, the chip the instance records.

use elk_app::request::{ChipRequest, ChosenChip};
use elk_model::chip::ChipSpec;
use elk_model::provenance::is_preset;
use elk_stage::instance::ChipRef;

pub use elk_app::request::DEFAULT_CHIP;

/// A chip as chosen on the command line (`--chip` with `--hbm-tbps`), resolved.
pub type Chip = ChosenChip;

/// `--chip given` with `--hbm-tbps` (a non-positive bandwidth is a usage error), its
/// warnings on stderr.
pub fn load(given: &str, hbm_tbps: Option<f64>) -> anyhow::Result<Chip> {
    ChipRequest::with_hbm(given, hbm_tbps)
        .resolve(&mut super::notice::Stderr::default())
        .map_err(super::notice::cli_error)
}

/// The chip of a detailed replay: `--chip` when given (with a warning when it is not the
/// chip the instance records), else the recorded chip (its preset, or its TOML file if that
/// is still there), else the default with a warning. `--hbm-tbps` overrides the recorded
/// bandwidth too.
pub fn for_replay(
    given: Option<&str>,
    hbm_tbps: Option<f64>,
    recorded: Option<&ChipRef>,
) -> anyhow::Result<Chip> {
    let warn = |w: String| eprintln!("warning: {}", elk_stage::error::one_line(&w));
    match (given, recorded) {
        (Some(g), recorded) => {
            let chip = load(g, hbm_tbps)?;
            if let Some(r) = recorded {
                if r.name != chip.record.name {
                    warn(format!(
                        "--chip {g} is '{}', but the instance was built for '{}'; the replay \
                         uses --chip (leave it out to use the instance's chip)",
                        chip.label(),
                        r.label()
                    ));
                } else if r.hash != chip.record.hash {
                    warn(format!(
                        "--chip {g} ({}, {}) differs from the chip the instance was built for \
                         ({}, {})",
                        chip.label(),
                        chip.record.hash,
                        r.label(),
                        r.hash
                    ));
                }
            }
            Ok(chip)
        }
        (None, Some(r)) => {
            let source = match &r.file {
                Some(f) if std::path::Path::new(f).exists() => f.as_str(),
                _ if is_preset(&r.name) => r.name.as_str(),
                Some(f) => {
                    return super::flags::Usage::err(format!(
                        "the instance was built for chip '{}' from {f}, which is not found from \
                         here: give it with --chip",
                        r.label()
                    ))
                }
                None => {
                    return super::flags::Usage::err(format!(
                        "the instance was built for chip '{}' ({}), which is not a preset: give \
                         its TOML file with --chip",
                        r.label(),
                        r.hash
                    ))
                }
            };
            let chip = load(source, hbm_tbps.or(r.hbm_tbps))?;
            if chip.record.hash != r.hash {
                if hbm_tbps.is_some() && hbm_tbps != r.hbm_tbps {
                    warn(format!(
                        "the instance was built for {}; the replay uses {}",
                        r.label(),
                        chip.label()
                    ));
                } else {
                    warn(format!(
                        "chip {source} has changed since the instance was built ({}, now {}); \
                         the replay uses it as it is now",
                        r.hash, chip.record.hash
                    ));
                }
            }
            Ok(chip)
        }
        (None, None) => {
            warn(format!(
                "the instance does not record its chip; the replay uses {DEFAULT_CHIP} (give \
                 --chip)"
            ));
            load(DEFAULT_CHIP, hbm_tbps)
        }
    }
}

/// B_NoC,dist and the HBM bandwidth of a spec, when the first is below the second.
pub fn distribution_below_hbm(spec: &ChipSpec) -> Option<(f64, f64)> {
    elk_app::compare::distribution_below_hbm(spec)
}

/// The warning `chips show` and `instance` print for a chip whose NoC cannot distribute HBM
/// data as fast as the HBM delivers it (a mesh or torus whose links are too slow for its HBM),
/// with what to raise; `show` is how the user named the chip (a preset or the TOML file they
/// gave), for the `chips show` command it points to (`None`: this is `chips show`).
pub fn slow_distribution_warning(spec: &ChipSpec, show: Option<&str>) -> Option<String> {
    use elk_stage::units::si;
    let (dist, hbm) = distribution_below_hbm(spec)?;
    let advice = elk_model::chip::advice::distribution_advice(spec)
        .map_or(String::new(), |a| format!("; {}", a.describe(spec)));
    Some(format!(
        "{}: the NoC distributes HBM data at most at {} (B_NoC,dist), {:.0} % of the HBM's {}: \
         every load is NoC-bound, so the HBM's bandwidth cannot be used{advice}{}",
        spec.name,
        si(dist, "B/s"),
        100.0 * dist / hbm,
        si(hbm, "B/s"),
        show.map_or(String::new(), |given| format!(
            " (`elk-opt chips show {given}`)"
        ))
    ))
}
