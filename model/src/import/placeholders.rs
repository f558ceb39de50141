//! Substituting the placeholder extents of the reference files (SPEC §2.1.2): 99 is the batch,
//! 66 the sequence length, 6534 = 99·66 and k·99 = k·batch.
//!
//! In a decode step the sequence placeholder means either the query length (1) or the key
//! length (the KV cache length S); which one depends on the axis, see [`SeqRole`].

use crate::graph::Mode;

const BATCH: u64 = 99;
const SEQ: u64 = 66;

/// Which length a sequence placeholder stands for on a given axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeqRole {
    /// The tokens being processed: 1 in decode, S in prefill.
    Query,
    /// The tokens attended over: always S.
    Key,
}

/// The values the placeholders take.
#[derive(Clone, Copy, Debug)]
pub struct Placeholders {
    /// Batch size B.
    pub batch: u64,
    /// S: the KV length in decode, the sequence length in prefill.
    pub seq: u64,
    /// Decode, prefill, forward-batch or training.
    pub mode: Mode,
}

impl Placeholders {
    /// Whether `raw` is (or contains) the sequence placeholder.
    pub fn is_seq(raw: u64) -> bool {
        raw == SEQ || raw == BATCH * SEQ
    }

    /// Whether `raw` is (or is a multiple of) the batch placeholder.
    pub fn has_batch(raw: u64) -> bool {
        raw % BATCH == 0
    }

    fn query_len(&self) -> u64 {
        match self.mode {
            Mode::Decode => 1,
            Mode::Prefill | Mode::ForwardBatch | Mode::Training => self.seq,
        }
    }

    /// The real extent of a raw extent on an axis whose sequence role is `role`.
    pub fn extent(&self, raw: u64, role: SeqRole) -> u64 {
        let seq = match role {
            SeqRole::Query => self.query_len(),
            SeqRole::Key => self.seq,
        };
        if raw == SEQ {
            seq
        } else if raw == BATCH * SEQ {
            self.batch * seq
        } else if raw % BATCH == 0 {
            raw / BATCH * self.batch
        } else {
            raw
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_and_prefill_substitution() {
        let d = Placeholders {
            batch: 8,
            seq: 512,
            mode: Mode::Decode,
        };
        assert_eq!(d.extent(99, SeqRole::Query), 8);
        assert_eq!(d.extent(66, SeqRole::Query), 1);
        assert_eq!(d.extent(66, SeqRole::Key), 512);
        assert_eq!(d.extent(6534, SeqRole::Query), 8);
        assert_eq!(d.extent(3960, SeqRole::Query), 320);
        assert_eq!(d.extent(768, SeqRole::Query), 768);
        let p = Placeholders {
            batch: 2,
            seq: 128,
            mode: Mode::Prefill,
        };
        assert_eq!(p.extent(66, SeqRole::Query), 128);
        assert_eq!(p.extent(6534, SeqRole::Query), 256);
    }
}
