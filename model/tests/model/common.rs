//! Locating `../shared` beside the repository.

use std::path::PathBuf;

/// `../shared` relative to the repository root; panics with a clear message when missing.
pub fn shared() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let shared = root.join("../shared");
    assert!(
        shared.join("models").is_dir(),
        "these tests need ../shared (with models/ and reference/) beside the repository root {}",
        root.display()
    );
    shared
}
