//! Locating the repository's test fixtures.

use std::path::PathBuf;

/// `file` of the reference artifact's bert-base run, in `tests/fixtures/reference/bert-base/`
/// at the repository root (origin: `tests/fixtures/README.md`).
pub fn bert_base(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/reference/bert-base")
        .join(file)
}
