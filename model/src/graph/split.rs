//! Column chunks of an output operator whose weight a chip cannot hold (docs/chips.md,
//! "Weights larger than the chip"). The stage model preloads an operator's whole weight into
//! SRAM before it runs; an LM head of 128k tokens (1 GB in bf16) does not fit a Tensix chip's
//! 96 MB. A matmul that streams its weight from DRAM (as Tenstorrent's does) is the same as
//! the matmul cut into column chunks, each preloaded and run in turn: that is what this pass
//! builds, for operators outside the repeated layers whose output no operator reads.

use super::{Graph, OpKind, Residency, Role};

/// One operator the pass cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitOp {
    /// The operator's name (`lm_head`).
    pub op: String,
    /// Bytes of its weight.
    pub weight_bytes: u64,
    /// Chunks it became (`lm_head.c0`, …).
    pub chunks: usize,
    /// Bytes of the largest chunk's weight.
    pub chunk_bytes: u64,
}

/// Columns of a chunk are whole 32-column tiles (a Tensix tile; harmless elsewhere).
const COLUMN_GRAIN: u64 = 32;

impl Graph {
    /// Cuts every matmul of the prologue or epilogue whose output no operator reads and
    /// whose HBM weight exceeds `over_bytes` into the fewest column chunks (whole 32-column
    /// tiles) of at most `max_bytes` each; returns what it cut. A chunk `lm_head.cI` computes
    /// columns of the output from the same input and its own slice of the weight
    /// (`lm_head.w.cI`), so FLOPs and weight bytes are unchanged.
    pub fn split_wide_outputs(&mut self, over_bytes: u64, max_bytes: u64) -> Vec<SplitOp> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.ops.len() {
            match self.column_split(i, over_bytes, max_bytes) {
                Some((dim, cols)) => {
                    let split = self.cut(i, dim, cols);
                    i += split.chunks;
                    out.push(split);
                }
                None => i += 1,
            }
        }
        out
    }

    /// The output dimension to cut operator `i` along and the columns per chunk, when the
    /// operator qualifies.
    fn column_split(&self, i: usize, over_bytes: u64, max_bytes: u64) -> Option<(usize, u64)> {
        let op = &self.ops[i];
        let l = &self.layers;
        let in_layers = i >= l.prologue && i < l.prologue + l.ops_per_layer * l.layers;
        let structured = l.layers > 0 && l.total() == self.ops.len();
        if op.kind != OpKind::MatMul || in_layers || !structured || op.tensors.len() != 3 {
            return None;
        }
        let weight = &op.tensors[2];
        let bytes = weight.bytes().0;
        if weight.role != Role::Weight || weight.residency != Residency::Hbm || bytes <= over_bytes
        {
            return None;
        }
        let read = self.ops[i + 1..]
            .iter()
            .any(|o| o.inputs().iter().any(|t| t.producer == Some(i)));
        if read {
            return None;
        }
        // An output dimension the weight has and the other input has not: its columns.
        let dim = (0..op.dims.len()).find(|&d| {
            op.tensors[0].axes.iter().any(|a| a == &[d])
                && weight.axes.iter().any(|a| a == &[d])
                && !op.tensors[1].axes.iter().any(|a| a.contains(&d))
        })?;
        let extent = op.dims[dim];
        let per_column = bytes / extent;
        let grains = extent.div_ceil(COLUMN_GRAIN);
        let max_grains = (max_bytes / (per_column * COLUMN_GRAIN).max(1)).max(1);
        let chunks = grains.div_ceil(max_grains);
        (chunks > 1).then(|| (dim, grains.div_ceil(chunks) * COLUMN_GRAIN))
    }

    /// Replaces operator `i` by its column chunks of `cols` along `dim`.
    fn cut(&mut self, i: usize, dim: usize, cols: u64) -> SplitOp {
        let op = self.ops.remove(i);
        let extent = op.dims[dim];
        let starts: Vec<u64> = (0..extent).step_by(cols as usize).collect();
        let chunks = starts.len();
        let mut chunk_bytes = 0;
        for (c, &start) in starts.iter().enumerate() {
            let width = cols.min(extent - start);
            let mut chunk = op.clone();
            chunk.name = format!("{}.c{c}", op.name);
            chunk.dims[dim] = width;
            for (v, t) in chunk.tensors.iter_mut().enumerate() {
                for (a, axis) in t.axes.iter().enumerate() {
                    if axis == &[dim] {
                        t.shape[a] = width;
                    }
                }
                if v == 0 || v == 2 {
                    t.source = format!("{}.c{c}", t.source);
                }
            }
            chunk_bytes = chunk_bytes.max(chunk.tensors[2].bytes().0);
            self.ops.insert(i + c, chunk);
        }
        // Later operators' producers move by the chunks added; the chunks sit in the prologue
        // or epilogue, whichever held the operator.
        let added = chunks - 1;
        for later in &mut self.ops[i + chunks..] {
            for t in &mut later.tensors {
                if let Some(p) = t.producer.as_mut().filter(|p| **p > i) {
                    *p += added;
                }
            }
        }
        if i < self.layers.prologue {
            self.layers.prologue += added;
        } else {
            self.layers.epilogue += added;
        }
        SplitOp {
            op: op.name,
            weight_bytes: op.tensors[2].bytes().0,
            chunks,
            chunk_bytes,
        }
    }
}
