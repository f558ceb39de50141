//! Writing output files atomically: a temporary file in the same directory, then a rename, so
//! an interrupted or failed run never leaves a half-written file or clobbers a good one.

use anyhow::Context;
use std::path::Path;

/// Writes `contents` to `path` atomically.
pub fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
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
