//! Writing output files atomically: a temporary file in the same directory, then a rename, so
//! an interrupted or failed run never leaves a half-written file or clobbers a good one.

use elk_stage::instance::Instance;
use elk_stage::schedule::Schedule;
use std::path::Path;

/// Writes `schedule` to `path` atomically, stamped with `inst`'s name and content hash so
/// `simulate` can tell when it is given another instance.
pub fn write_schedule(path: &Path, inst: &Instance, schedule: &Schedule) -> anyhow::Result<()> {
    let mut s = schedule.clone();
    s.stamp(inst);
    write_atomic(path, &s.to_json()?)
}

/// Writes `contents` to `path` atomically.
pub fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    write_atomic_bytes(path, contents.as_bytes())
}

/// Writes `contents` (text, or a PNG figure) to `path` atomically
/// ([`elk_stage::error::write_atomic`]).
pub fn write_atomic_bytes(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    Ok(elk_stage::error::write_atomic(path, contents)?)
}
