//! Content hashes: 64-bit FNV-1a over a value's compact JSON, written `fnv1a64:<16 hex>`.
//!
//! The JSON is the one serde writes for the value (fields in declaration order, f64 printed
//! shortest round-trip), so the hash depends on the parsed content only, not on the layout
//! of the file it was read from. FNV-1a is not cryptographic: it tells files apart, it does
//! not defend against someone forging a collision.

use serde::Serialize;

/// The prefix of every hash this crate prints.
pub const PREFIX: &str = "fnv1a64:";

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// A running 64-bit FNV-1a hash; an [`std::io::Write`] sink, so JSON streams into it
/// without being built as a string.
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a64(u64);

impl Default for Fnv1a64 {
    fn default() -> Fnv1a64 {
        Fnv1a64(OFFSET)
    }
}

impl Fnv1a64 {
    /// Feeds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(PRIME);
        }
    }

    /// The hash so far, as `fnv1a64:<16 hex digits>`.
    pub fn finish(&self) -> String {
        format!("{PREFIX}{:016x}", self.0)
    }
}

impl std::io::Write for Fnv1a64 {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The hash of `value`'s compact JSON. A value serde cannot encode (a map with non-string
/// keys, say) hashes what was written before the failure; the types hashed here have none.
pub fn of_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut h = Fnv1a64::default();
    // Writing into the hasher cannot fail; encoding the plain data types hashed here cannot
    // either.
    let _ = serde_json::to_writer(&mut h, value);
    h.finish()
}

/// `s` has the form of a hash printed by this module (`fnv1a64:` and 16 lowercase hex
/// digits).
pub fn is_well_formed(s: &str) -> bool {
    s.strip_prefix(PREFIX).is_some_and(|hex| {
        hex.len() == 16
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_fnv1a_vectors() {
        // From the FNV reference test suite (draft-eastlake-fnv).
        let hash = |s: &str| {
            let mut h = Fnv1a64::default();
            h.update(s.as_bytes());
            h.finish()
        };
        assert_eq!(hash(""), "fnv1a64:cbf29ce484222325");
        assert_eq!(hash("a"), "fnv1a64:af63dc4c8601ec8c");
        assert_eq!(hash("foobar"), "fnv1a64:85944171f73967e8");
    }

    #[test]
    fn json_hash_and_form() {
        assert_eq!(of_json(&"a"), {
            let mut h = Fnv1a64::default();
            h.update(b"\"a\"");
            h.finish()
        });
        assert!(is_well_formed("fnv1a64:0123456789abcdef"));
        for bad in [
            "fnv1a64:0123456789ABCDEF",
            "fnv1a64:0123",
            "sha256:0123456789abcdef",
            "",
        ] {
            assert!(!is_well_formed(bad), "{bad}");
        }
    }
}
