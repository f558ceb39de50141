//! Writing output files atomically: a temporary file in the same directory, then a rename, so
//! an interrupted or failed run never leaves a half-written file or clobbers a good one.

use anyhow::Context;
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

/// Writes `contents` (text, or a PNG figure) to `path` atomically.
pub fn write_atomic_bytes(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, contents).with_context(|| format!("{}: cannot write", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: cannot replace", path.display())
    })
}
