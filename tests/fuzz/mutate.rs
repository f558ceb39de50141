//! Mutations of a seed text: replace, delete, duplicate or insert bytes, truncate.

use proptest::prelude::*;

/// One edit at a position (taken modulo the text length).
#[derive(Clone, Debug)]
pub enum Edit {
    Replace(usize, u8),
    Delete(usize, usize),
    Duplicate(usize, usize),
    Insert(usize, u8),
    Truncate(usize),
}

/// Bytes that matter to the parsers, and any byte.
fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        prop::sample::select(b"{}[]\",:0123456789-.eE+ \n=abcdxyz_|#*(){}".to_vec()),
        any::<u8>(),
    ]
}

/// Between 1 and 6 edits.
pub fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let edit = prop_oneof![
        (any::<usize>(), byte()).prop_map(|(p, b)| Edit::Replace(p, b)),
        (any::<usize>(), 1usize..24).prop_map(|(p, n)| Edit::Delete(p, n)),
        (any::<usize>(), 1usize..24).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        (any::<usize>(), byte()).prop_map(|(p, b)| Edit::Insert(p, b)),
        any::<usize>().prop_map(Edit::Truncate),
    ];
    prop::collection::vec(edit, 1..6)
}

/// Applies the edits to `seed` (as bytes; invalid UTF-8 is replaced).
pub fn apply(seed: &str, edits: &[Edit]) -> String {
    String::from_utf8_lossy(&apply_bytes(seed.as_bytes(), edits)).into_owned()
}

/// Applies the edits to a binary `seed` (ONNX files).
pub fn apply_bytes(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for e in edits {
        let len = b.len().max(1);
        match *e {
            Edit::Replace(p, x) => {
                if !b.is_empty() {
                    b[p % len] = x;
                }
            }
            Edit::Delete(p, n) => {
                let s = p % len;
                let end = (s + n).min(b.len());
                if s < end {
                    b.drain(s..end);
                }
            }
            Edit::Duplicate(p, n) => {
                let s = p % len;
                let end = (s + n).min(b.len());
                if s < end {
                    let piece = b[s..end].to_vec();
                    b.splice(end..end, piece);
                }
            }
            Edit::Insert(p, x) => b.insert(p % (b.len() + 1), x),
            Edit::Truncate(p) => b.truncate(p % len),
        }
    }
    b
}

/// The same edits as byte replacements inside the first `window` bytes. In an exported
/// ONNX file the nodes come first and the weights' data after, and a change of length
/// anywhere breaks the enclosing messages' lengths at once; replacements keep them and so
/// reach the node walk.
pub fn focus(edits: &[Edit], window: usize) -> Vec<Edit> {
    let w = window.max(1);
    edits
        .iter()
        .map(|e| match *e {
            Edit::Replace(p, x) | Edit::Insert(p, x) => Edit::Replace(p % w, x),
            Edit::Delete(p, n) | Edit::Duplicate(p, n) => Edit::Replace(p % w, n as u8),
            Edit::Truncate(p) => Edit::Replace(p % w, 0),
        })
        .collect()
}
