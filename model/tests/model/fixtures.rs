//! Locating the repository's test fixtures.

use std::path::PathBuf;

/// `tests/fixtures/` at the repository root: the reference artifact's graphs (`models/`) and
/// its converted runs (`reference/`), listed with their origin in its README.md.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}
