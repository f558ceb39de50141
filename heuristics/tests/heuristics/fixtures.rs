//! Locating the repository's test fixtures.

use std::path::PathBuf;

/// The reference artifact's run of `model` (`bert-base`, `llama2-7` or `opt-6.7`): its
/// instance and converted schedules, in `tests/fixtures/reference/` at the repository root
/// (origin: `tests/fixtures/README.md`).
pub fn reference_run(model: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/reference")
        .join(model)
}
