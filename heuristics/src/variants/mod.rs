//! Named variants: elk-opt's own algorithms that differ from the reference artifact's, kept
//! under their own names so the paper's algorithm, the code behind its numbers and our
//! changes can be told apart (`compare` reports them beside the faithful methods).
//!
//! - `basic-fill`, `static-fill`: Basic and Static with the stage model's forward fill (loads
//!   as early as they fit) instead of the artifact's backward timeline;
//! - `elk-dyn-greedy`, `elk-full-greedy`: a stage-by-stage backward pass with the paper's
//!   greedy cost-aware allocator (trading resident cold layouts by marginal time per byte),
//!   which the artifact never runs.

pub mod basic_fill;
pub mod elk_dyn_greedy;
pub mod elk_full_greedy;
pub mod static_fill;
