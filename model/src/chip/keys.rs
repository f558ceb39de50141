//! Every key of a chip TOML in one table ([`KEYS`]): its unit, its default and what it means.
//! The same table reports all missing keys at once, marks the defaulted ones in
//! `chips show`, comments the template, and is what docs/chips.md documents (a test checks
//! that the doc lists every key).

/// When a key applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Always.
    Always,
    /// With `noc.topology = "mesh"` or `"torus"` (and only then).
    Grid,
    /// With `hbm.placement = "explicit"` (and only then).
    Explicit,
    /// With one of these `cost_model.kind`s.
    Kinds(&'static [&'static str]),
    /// On any chip that offers what it describes; absent, the chip does not (never reported
    /// as missing or defaulted).
    Optional,
}

/// One key of a chip TOML.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipKey {
    /// `table.key`, or `key` at the top level.
    pub path: &'static str,
    /// Unit or type of the value.
    pub unit: &'static str,
    /// The value used when the key is absent; `None`: required where it applies.
    pub default: Option<&'static str>,
    /// When the key applies.
    pub applies: Applies,
    /// What it means, for people.
    pub meaning: &'static str,
}

const fn key(
    path: &'static str,
    unit: &'static str,
    applies: Applies,
    meaning: &'static str,
) -> ChipKey {
    ChipKey {
        path,
        unit,
        default: None,
        applies,
        meaning,
    }
}

/// Every key, in file order.
pub const KEYS: [ChipKey; 33] = [
    key(
        "name",
        "text",
        Applies::Always,
        "short name, shown in tables and instance names",
    ),
    ChipKey {
        default: Some("\"\""),
        ..key(
            "description",
            "text",
            Applies::Always,
            "one line for tables",
        )
    },
    key(
        "cores",
        "count (integer)",
        Applies::Always,
        "number of cores",
    ),
    key(
        "sram_bytes_per_core",
        "bytes (integer)",
        Applies::Always,
        "private SRAM of one core",
    ),
    key("clock_hz", "Hz", Applies::Always, "core clock"),
    key(
        "hbm.bandwidth_bytes_per_s",
        "bytes/s (decimal)",
        Applies::Always,
        "total off-chip bandwidth, shared equally by the controllers",
    ),
    key(
        "hbm.controllers",
        "count (integer)",
        Applies::Always,
        "number of HBM controllers",
    ),
    key(
        "hbm.placement",
        "\"edges\" | \"single-core\" | \"explicit\"",
        Applies::Always,
        "where the controllers attach: spread along the mesh edges (evenly over core ids for \
         all-to-all), one controller at core 0 broadcasting, or at controller_cores",
    ),
    key(
        "hbm.controller_cores",
        "list of core ids (integers)",
        Applies::Explicit,
        "the core each controller attaches to; only with placement = \"explicit\"",
    ),
    ChipKey {
        default: Some("none (no reader cores)"),
        ..key(
            "hbm.reader_bytes_per_cycle",
            "bytes/cycle",
            Applies::Optional,
            "what one DRAM-reader core streams from its bank; with it, reader cores that only \
             fetch weights for the others are a choice (--dram-readers)",
        )
    },
    ChipKey {
        default: Some("none"),
        ..key(
            "hbm.interleaved_bytes_per_s",
            "bytes/s",
            Applies::Optional,
            "the DRAM rate compute cores get reading it themselves, without reader cores; \
             required with reader_bytes_per_cycle",
        )
    },
    key(
        "noc.topology",
        "\"all-to-all\" | \"mesh\" | \"torus\"",
        Applies::Always,
        "on-chip network: every core one hop from every other (IPU exchange), or a 2-D grid",
    ),
    key(
        "noc.width",
        "cores (integer)",
        Applies::Grid,
        "grid width; only for mesh and torus, width × height = cores",
    ),
    key(
        "noc.height",
        "cores (integer)",
        Applies::Grid,
        "grid height; only for mesh and torus",
    ),
    key(
        "noc.injection_bytes_per_s_per_core",
        "bytes/s",
        Applies::Always,
        "what one core can send into the NoC; cores × this bounds HBM distribution",
    ),
    key(
        "noc.link_bytes_per_s",
        "bytes/s",
        Applies::Always,
        "one link; on a mesh (torus) each controller feeds 3 (4) links, which bounds HBM \
         distribution",
    ),
    key(
        "noc.hop_latency_cycles",
        "cycles",
        Applies::Always,
        "latency of one hop (detailed simulator)",
    ),
    key(
        "cost_model.kind",
        "\"ipu-mk2\" | \"roofline\" | \"tensix\"",
        Applies::Always,
        "how operators are priced: the IPU-Mk2's measured constants (SPEC §3), a roofline \
         from peak compute and NoC rate, or Tenstorrent's Tensix cores (tile products at a math \
         fidelity, fitted to published microbenchmarks)",
    ),
    ChipKey {
        default: Some("1472"),
        ..key(
            "cost_model.cores_per_chip",
            "cores (integer)",
            Applies::Kinds(&["ipu-mk2"]),
            "cores of one die; a chip with more cores pays inter_chip_comm_factor",
        )
    },
    ChipKey {
        default: Some("1.25"),
        ..key(
            "cost_model.inter_chip_comm_factor",
            "factor",
            Applies::Kinds(&["ipu-mk2"]),
            "factor on communication cycles (sync, shifts, shuffles) when cores > cores_per_chip",
        )
    },
    key(
        "cost_model.peak_flops_per_s_per_core",
        "FLOP/s",
        Applies::Kinds(&["roofline"]),
        "peak compute of one core",
    ),
    key(
        "cost_model.noc_bytes_per_s_per_core",
        "bytes/s",
        Applies::Kinds(&["roofline", "tensix"]),
        "NoC rate of one core when pricing an operator's shifts (usually \
         noc.injection_bytes_per_s_per_core)",
    ),
    key(
        "cost_model.sync_latency_cycles",
        "cycles",
        Applies::Kinds(&["roofline", "tensix"]),
        "cost of one synchronisation between cores",
    ),
    ChipKey {
        default: Some("1.0"),
        ..key(
            "cost_model.fp32_speedup_x",
            "factor",
            Applies::Kinds(&["roofline"]),
            "compute throughput with fp32 activations relative to fp16 (peak_flops_per_s_per_core \
             is fp16's); 1.0: fp16's rate",
        )
    },
    ChipKey {
        default: Some("1.0"),
        ..key(
            "cost_model.bf16_speedup_x",
            "factor",
            Applies::Kinds(&["roofline"]),
            "the same for bf16 activations",
        )
    },
    ChipKey {
        default: Some("1.0"),
        ..key(
            "cost_model.fp8_speedup_x",
            "factor",
            Applies::Kinds(&["roofline"]),
            "the same for fp8 activations",
        )
    },
    ChipKey {
        default: Some("1.0"),
        ..key(
            "cost_model.int8_speedup_x",
            "factor",
            Applies::Kinds(&["roofline"]),
            "the same for int8 activations",
        )
    },
    ChipKey {
        default: Some("\"auto\""),
        ..key(
            "cost_model.math_fidelity",
            "\"auto\" | \"lofi\" | \"hifi2\" | \"hifi3\" | \"hifi4\"",
            Applies::Kinds(&["tensix"]),
            "the matrix engine's passes per product (1 to 4) for every matmul; auto: each matmul \
             by its narrowest input, 4-bit block floats at lofi, 8-bit types at hifi2, 16-bit \
             and wider at hifi4",
        )
    },
    ChipKey {
        default: Some("16"),
        ..key(
            "cost_model.lofi_tile_cycles",
            "cycles",
            Applies::Kinds(&["tensix"]),
            "cycles of one 32x32x32 tile product at lofi on an ideal engine (8x16 by 16x16 per \
             cycle: 16)",
        )
    },
    key(
        "cost_model.matmul_efficiency_pct",
        "percent",
        Applies::Kinds(&["tensix"]),
        "percent of the ideal tile rate a core sustains in a large matmul (fitted)",
    ),
    key(
        "cost_model.unpack_bytes_per_cycle",
        "bytes/cycle",
        Applies::Kinds(&["tensix"]),
        "input-tile bytes the unpacker feeds the matrix engine per cycle: a tile product takes at \
         least its two input tiles' bytes over this (fitted)",
    ),
    key(
        "cost_model.vector_tile_cycles",
        "cycles",
        Applies::Kinds(&["tensix"]),
        "cycles of one 32x32 tile of an elementwise, unary, softmax or reduction step",
    ),
    key(
        "cost_model.op_overhead_cycles",
        "cycles",
        Applies::Kinds(&["tensix"]),
        "fixed cycles of every operator: launch and first-tile latency (fitted)",
    ),
];

/// The key at `path`.
pub fn find(path: &str) -> Option<&'static ChipKey> {
    KEYS.iter().find(|k| k.path == path)
}

/// The key a name stands for, as Python's `Chip(**keys)` names them: the path
/// (`noc.link_bytes_per_s`), the path with `_` for the dot (`noc_link_bytes_per_s`,
/// `hbm_controllers`), or the key alone (`link_bytes_per_s`, `sram_bytes_per_core`; no two
/// keys share a last part).
pub fn resolve(name: &str) -> Option<&'static ChipKey> {
    find(name)
        .or_else(|| KEYS.iter().find(|k| k.path.replace('.', "_") == name))
        .or_else(|| KEYS.iter().find(|k| split(k.path).1 == name))
}

/// Whether the key takes a decimal number (an integer given for it is taken as one).
pub(super) fn is_decimal(k: &ChipKey) -> bool {
    !(k.unit.contains("integer")
        || k.unit.starts_with('"')
        || k.unit == "text"
        || k.unit.starts_with("list"))
}

/// `table.key` → (`Some(table)`, key); `key` → (`None`, key).
pub(super) fn split(path: &str) -> (Option<&str>, &str) {
    match path.split_once('.') {
        Some((t, k)) => (Some(t), k),
        None => (None, path),
    }
}

/// The value at `path` in a parsed document, if present.
pub(super) fn get<'a>(doc: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    match split(path) {
        (Some(t), k) => doc.get(t)?.as_table()?.get(k),
        (None, k) => doc.get(k),
    }
}

/// Whether `k` applies to the document (as far as the document says).
fn applies(doc: &toml::Table, k: &ChipKey) -> bool {
    let str_at = |p: &str| get(doc, p).and_then(toml::Value::as_str);
    match k.applies {
        Applies::Always => true,
        Applies::Grid => matches!(str_at("noc.topology"), Some("mesh" | "torus")),
        Applies::Explicit => str_at("hbm.placement") == Some("explicit"),
        Applies::Kinds(kinds) => str_at("cost_model.kind").is_some_and(|k| kinds.contains(&k)),
        Applies::Optional => get(doc, k.path).is_some(),
    }
}

/// Every required key the document lacks, in file order; a missing table is one entry
/// (`table [noc] with topology, …`), not one per key.
pub(super) fn missing(doc: &toml::Table) -> Vec<String> {
    let mut out = Vec::new();
    let mut missing_tables: Vec<&str> = Vec::new();
    for k in KEYS.iter().filter(|k| k.default.is_none()) {
        let (table, name) = split(k.path);
        if let Some(t) = table {
            match doc.get(t) {
                None => {
                    if !missing_tables.contains(&t) {
                        missing_tables.push(t);
                        let keys: Vec<&str> = KEYS
                            .iter()
                            .filter(|k| k.default.is_none() && k.applies == Applies::Always)
                            .filter_map(|k| k.path.strip_prefix(t)?.strip_prefix('.'))
                            .collect();
                        out.push(format!("table [{t}] with {}", keys.join(", ")));
                    }
                    continue;
                }
                // Not a table: the type error is reported by the parser.
                Some(v) if !v.is_table() => continue,
                Some(_) => {}
            }
        }
        if applies(doc, k) && get(doc, k.path).is_none() {
            out.push(match table {
                Some(t) => format!("{t}.{name}"),
                None => name.to_string(),
            });
        }
    }
    out
}

/// The keys with a default that apply to the document and are absent from it.
pub(super) fn defaulted(doc: &toml::Table) -> Vec<&'static str> {
    KEYS.iter()
        .filter(|k| k.default.is_some() && applies(doc, k) && get(doc, k.path).is_none())
        .map(|k| k.path)
        .collect()
}

/// `text` (TOML as [`super::ChipSpec::to_toml`] writes it) with `note(key)` added to every
/// `key = value` line: before it as its own comment line(s) when `above`, else at its end.
pub(super) fn annotate(
    text: &str,
    above: bool,
    note: impl Fn(&'static ChipKey) -> Option<String>,
) -> String {
    let mut table = String::new();
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(t) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            table = t.trim().to_string();
        }
        let note = trimmed
            .split_once('=')
            .filter(|_| !trimmed.starts_with('#'))
            .map(|(k, _)| match table.as_str() {
                "" => k.trim().to_string(),
                t => format!("{t}.{}", k.trim()),
            })
            .and_then(|path| find(&path))
            .and_then(&note);
        match note {
            Some(n) if above => {
                for l in n.lines() {
                    out.push_str(&format!("# {l}\n"));
                }
                out.push_str(line);
            }
            Some(n) => out.push_str(&format!("{line}  # {n}")),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// `text` with large floats in exponent form (`1.325e9`, not `1325000000.0`), as people
/// write them; the values are unchanged (Rust prints the shortest exact form).
pub(super) fn readable_floats(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let rewritten = line.split_once(" = ").and_then(|(k, v)| {
            let x: f64 = v.parse().ok().filter(|_| v.contains('.'))?;
            (x.abs() >= 1e5 && x.is_finite()).then(|| format!("{k} = {x:e}"))
        });
        out.push_str(rewritten.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chip::{ChipSpec, Placement, Topology, PRESETS};

    /// Every key of the struct is in the table and every key of the table in the struct:
    /// chips that use every optional key, of both cost-model kinds, written out.
    #[test]
    fn the_table_lists_exactly_the_struct_s_keys() {
        let mut mesh = ChipSpec::preset("sn40l-like").unwrap();
        mesh.hbm.placement = Placement::Explicit;
        mesh.hbm.controller_cores = (0..mesh.hbm.controllers).collect();
        let mut ipu = ChipSpec::preset("ipu-mk2").unwrap();
        ipu.noc.topology = Topology::Torus;
        let tensix = ChipSpec::preset("wormhole-n150").unwrap();
        let mut written: Vec<String> = Vec::new();
        for chip in [mesh, ipu, tensix] {
            let doc: toml::Table = toml::from_str(&chip.to_toml()).unwrap();
            for (k, v) in &doc {
                match v.as_table() {
                    Some(t) => written.extend(t.keys().map(|k2| format!("{k}.{k2}"))),
                    None => written.push(k.clone()),
                }
            }
        }
        for w in &written {
            assert!(find(w).is_some(), "{w} is not in KEYS");
        }
        for k in &KEYS {
            assert!(
                written.iter().any(|w| w == k.path),
                "{} is not written",
                k.path
            );
        }
    }

    #[test]
    fn every_key_resolves_by_path_underscored_path_and_last_part() {
        for k in &KEYS {
            let last = split(k.path).1;
            for name in [
                k.path.to_string(),
                k.path.replace('.', "_"),
                last.to_string(),
            ] {
                assert_eq!(resolve(&name).map(|r| r.path), Some(k.path), "{name}");
            }
        }
        assert_eq!(
            resolve("hbm_controllers").map(|k| k.path),
            Some("hbm.controllers")
        );
        assert_eq!(resolve("sram_per_core"), None);
    }

    #[test]
    fn readable_floats_keep_every_value() {
        for (name, _) in PRESETS {
            let chip = ChipSpec::preset(name).unwrap();
            let text = readable_floats(&chip.to_toml());
            assert!(!text.contains("000000.0"), "{text}");
            assert_eq!(ChipSpec::from_toml_str(name, &text).unwrap(), chip);
        }
        assert!(readable_floats("clock_hz = 1325000000.0\n").contains("= 1.325e9"));
    }

    #[test]
    fn docs_chips_md_lists_every_key() {
        let doc = include_str!("../../../docs/chips.md");
        for k in &KEYS {
            assert!(
                doc.contains(&format!("`{}`", k.path)),
                "docs/chips.md does not list `{}`",
                k.path
            );
        }
    }

    #[test]
    fn presets_write_every_key_that_applies() {
        for (name, text) in PRESETS {
            let doc: toml::Table = toml::from_str(text).unwrap();
            assert_eq!(defaulted(&doc), Vec::<&str>::new(), "{name}");
            assert!(missing(&doc).is_empty(), "{name}");
        }
    }
}
