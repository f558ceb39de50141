//! `elk-opt chips template`: a chip TOML with every key written out and explained, valid as
//! printed, so a new chip starts from something that parses.

use super::keys::{annotate, get, readable_floats, Applies, ChipKey, KEYS};
use super::{ChipSpec, Topology};
use crate::error::Result;

/// The preset a template for `topology` takes its values from.
fn base(topology: Topology) -> &'static str {
    match topology {
        Topology::AllToAll => "ipu-mk2",
        Topology::Mesh => "sn40l-like",
        Topology::Torus => "tt-blackhole-like",
    }
}

/// `unit, default: meaning` for a key's comment.
fn explain(k: &ChipKey) -> String {
    let default = k
        .default
        .map_or(String::new(), |d| format!(", default {d}"));
    format!("{} ({}{default}): {}", k.path, k.unit, k.meaning)
}

/// The value of a key in bytes, bytes/s or Hz read in the unit people use, for the comment
/// above it (`4.000 TB/s` above `4e12`; `624 KiB` for a whole number of KiB).
fn reading(k: &ChipKey, v: &toml::Value) -> Option<String> {
    let x = v.as_float().or_else(|| v.as_integer().map(|i| i as f64))?;
    let unit = k.unit.split(' ').next().unwrap_or("");
    Some(match unit {
        "bytes/s" => elk_stage::units::si(x, "B/s"),
        "Hz" => elk_stage::units::si(x, "Hz"),
        "FLOP/s" => elk_stage::units::si(x, "FLOP/s"),
        "bytes" if x >= 1024.0 && x % 1024.0 == 0.0 => format!("{} KiB", x / 1024.0),
        "bytes" => elk_stage::units::si(x, "B"),
        _ => return None,
    })
}

/// A commented chip TOML for `topology`, with the values of a preset of that topology.
pub fn template(topology: Topology) -> Result<String> {
    let name = base(topology);
    let mut chip = ChipSpec::preset(name)?;
    chip.name = "my-chip".into();
    chip.description = format!("My chip (from the {name} template)");
    let kind = chip.cost_model.name();
    let flag = match topology {
        Topology::AllToAll => "all-to-all",
        Topology::Mesh => "mesh",
        Topology::Torus => "torus",
    };
    let mut out = format!(
        "# A chip for elk-opt, made by `elk-opt chips template --topology {flag}`, with the values\n\
         # of the preset {name}. Edit the values, then check with `elk-opt chips show FILE`.\n\
         # Every key is written out; units are in the key names. Reference: docs/chips.md.\n\n"
    );
    let text = readable_floats(&chip.to_toml());
    let doc: toml::Table = toml::from_str(&text)
        .map_err(|e| crate::error::ModelError::Invalid(format!("the {name} template: {e}")))?;
    out.push_str(&annotate(&text, true, |k| {
        let here = get(&doc, k.path).and_then(|v| reading(k, v));
        Some(match here {
            Some(h) => format!("{} (here {h})", explain(k)),
            None => explain(k),
        })
    }));
    for other_kind in ["ipu-mk2", "roofline", "tensix"]
        .into_iter()
        .filter(|&k| k != kind)
    {
        let other: Vec<&ChipKey> = KEYS
            .iter()
            .filter(|k| matches!(k.applies, Applies::Kinds(ks) if ks.contains(&other_kind)))
            .collect();
        out.push_str(&format!(
            "\n# With kind = \"{other_kind}\" instead, [cost_model] takes these keys (and kind):\n"
        ));
        for k in other {
            out.push_str(&format!("#   {}\n", explain(k)));
        }
    }
    out.push_str(
        "# Other choices: noc.topology \"mesh\" and \"torus\" need width and height; \
         hbm.placement = \"explicit\" needs controller_cores.\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chip::LoadedChip;

    #[test]
    fn a_rate_size_or_clock_is_read_out_above_its_own_value() {
        // Each such comment reads the value below it, not another chip's example.
        for topology in [Topology::AllToAll, Topology::Mesh, Topology::Torus] {
            let text = template(topology).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let mut read = 0;
            for (i, l) in lines.iter().enumerate() {
                let Some((key, value)) = l.split_once(" = ") else {
                    continue;
                };
                let Ok(x) = value.parse::<f64>() else {
                    continue;
                };
                let unit = match key {
                    "bandwidth_bytes_per_s"
                    | "injection_bytes_per_s_per_core"
                    | "link_bytes_per_s" => "B/s",
                    "clock_hz" => "Hz",
                    _ => continue,
                };
                let want = format!("(here {})", elk_stage::units::si(x, unit));
                assert!(lines[i - 1].ends_with(&want), "{}\n{l}", lines[i - 1]);
                read += 1;
            }
            assert_eq!(read, 4, "{text}");
        }
    }

    #[test]
    fn every_template_parses_back_to_a_valid_chip_with_every_key_written() {
        for topology in [Topology::AllToAll, Topology::Mesh, Topology::Torus] {
            let text = template(topology).unwrap();
            let loaded = LoadedChip::from_toml_str("template", &text).unwrap();
            assert_eq!(loaded.spec.noc.topology, topology);
            assert_eq!(loaded.spec.name, "my-chip");
            assert!(loaded.defaulted.is_empty(), "{:?}", loaded.defaulted);
            assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
            // A comment above every key line.
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                if l.contains(" = ") && !l.starts_with('#') {
                    assert!(lines[i - 1].starts_with("# "), "{l}: no comment above");
                }
            }
        }
        let mesh = template(Topology::Mesh).unwrap();
        assert!(
            mesh.contains("controllers (here 2.000 TB/s)\nbandwidth_bytes_per_s = 2e12\n"),
            "{mesh}"
        );
        assert!(
            mesh.contains("# noc.width (cores (integer)): grid width"),
            "{mesh}"
        );
        assert!(mesh.contains("#   cost_model.cores_per_chip (cores (integer), default 1472)"));
    }
}
