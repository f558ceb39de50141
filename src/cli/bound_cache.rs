//! The segment relaxation's bound of `compare --bound segment` (and so of the main job), kept
//! beside the plan tables (`$XDG_CACHE_HOME/elk-opt/bounds`, not with `--no-cache`): it costs
//! seconds on a 13B model and depends only on the instance and the solver's code, so the
//! second run on the same model and chip reads it. An entry holds the bound's bits, so a hit
//! prints the same bytes as the computation it replaces; one that does not match its key
//! (another instance, other solver code, a corrupted file) is computed again.

use elk_solver::segments::{fingerprint, SegmentBound};
use elk_stage::instance::Instance;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The entry's format.
const FORMAT: &str = "elk-bound/2";

/// One cached bound: what `compare` prints of it, floats as their bits.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
#[serde(deny_unknown_fields)]
struct Entry {
    format: String,
    /// The instance's content hash and the solver's fingerprint.
    key: String,
    /// `None`: the relaxation does not apply (fewer than two layers).
    bound: Option<Found>,
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
#[serde(deny_unknown_fields)]
struct Found {
    bound_cycles_bits: u64,
    coupled_cycles_bits: Option<u64>,
    price_bits: Option<u64>,
    segments: usize,
    distinct: usize,
    layers_per_segment: usize,
    lp_only: bool,
}

fn key(inst: &Instance) -> String {
    format!("{} {}", inst.content_hash(), fingerprint())
}

fn path(inst: &Instance) -> Option<PathBuf> {
    let cache = super::plan_cache::get()?;
    let name = elk_stage::hash::of_json(&key(inst)).replace("fnv1a64:", "");
    Some(cache.dir().join("bounds").join(format!("{name}.json")))
}

/// The cached bound of `inst`, or `compute()`'s, then cached. A bound whose price search ran
/// into its time limit (`limit_s`) is returned but not kept: another run may do better.
pub fn segment_bound(
    inst: &Instance,
    limit_s: f64,
    compute: impl FnOnce() -> anyhow::Result<Option<SegmentBound>>,
) -> anyhow::Result<Option<SegmentBound>> {
    let file = path(inst);
    let key = key(inst);
    if let Some(entry) = file
        .as_ref()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|t| serde_json::from_str::<Entry>(&t).ok())
        .filter(|e| e.format == FORMAT && e.key == key)
    {
        return Ok(entry.bound.map(|b| SegmentBound {
            bound_cycles: f64::from_bits(b.bound_cycles_bits),
            coupled_cycles: b.coupled_cycles_bits.map(f64::from_bits),
            price: b.price_bits.map(f64::from_bits),
            segments: b.segments,
            distinct: b.distinct,
            layers_per_segment: b.layers_per_segment,
            lp_only: b.lp_only,
            prices: Vec::new(),
            seconds: 0.0,
        }));
    }
    let found = compute()?;
    let complete = found.as_ref().is_none_or(|b| b.seconds < 0.9 * limit_s);
    if let (Some(file), true) = (file, complete) {
        let entry = Entry {
            format: FORMAT.into(),
            key,
            bound: found.as_ref().map(|b| Found {
                bound_cycles_bits: b.bound_cycles.to_bits(),
                coupled_cycles_bits: b.coupled_cycles.map(f64::to_bits),
                price_bits: b.price.map(f64::to_bits),
                segments: b.segments,
                distinct: b.distinct,
                layers_per_segment: b.layers_per_segment,
                lp_only: b.lp_only,
            }),
        };
        let written = file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(anyhow::Error::from)
            .and_then(|()| super::output::write_atomic(&file, &serde_json::to_string(&entry)?));
        if let Err(e) = written {
            eprintln!("warning: bound cache not updated: {e:#} (pass --no-cache to skip it)");
        }
    }
    Ok(found)
}
